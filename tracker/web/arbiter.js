// Arbiter dashboard: enter, correct and void results over the websocket,
// see what was rejected and why, what is missing, and the projections.
//
// The token is asked for once per tab and kept in sessionStorage; it only
// ever travels inside websocket messages (never in a URL or the page).

import {
  CODE_WORDS, LiveFeed, RESULT_WORDS, STATUS_WORDS, el, fill, fmt, isBye, shortName, tournamentFromPath,
} from "/static/live.js";

const TOKEN_KEY = "tracker-arbiter-token";
const tournament = tournamentFromPath();
const $ = (id) => document.getElementById(id);
const form = $("entry");

let feed = null;
let payload = null;
let projection = null;
let playersKey = "";
const pending = new Map();     // event id → {event, text, onAck?, onReject?}
let schedule = [];             // schedule[r - 1]: the [white, black] pairs of round r (the server's "schedule")
let notices = [];              // the server's recent rejections, shared by every arbiter device
const recent = new Map();      // "R:W-B" → {result, state: "sending"|"done", until, undoing}
const UNDO_MS = 6000;          // how long an entry can be undone from its row

// -- token ------------------------------------------------------------------------

function showGate(message) {
  if (feed) feed.stop();
  feed = null;
  $("gate").hidden = false;
  $("dash").hidden = true;
  $("signout").hidden = true;
  $("status").hidden = true;
  fill($("gate-msg"), message || "");
  $("token").focus();
}

function start(token) {
  $("gate").hidden = true;
  $("dash").hidden = false;
  $("signout").hidden = false;
  $("status").hidden = false;
  feed = new LiveFeed(tournament, { onSnapshot: onStandings, onUpdate: onStandings, onMessage, onStatus }, { token });
  window.trackerFeed = feed.start();
}

$("gate-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = $("token");
  const token = input.value.trim();
  input.value = "";
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  start(token);
});

$("signout").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showGate("Token forgotten.");
});

function refused(reason) {
  sessionStorage.removeItem(TOKEN_KEY);
  showGate(`The tracker refused this token (${reason}). Enter the arbiter token again.`);
}

// -- names and games --------------------------------------------------------------

function rowOf(startNo) {
  return payload?.standings.find((r) => r.start_no === startNo);
}

function who(startNo) {
  const row = rowOf(startNo);
  return row ? `${startNo} ${row.name}` : `player ${startNo}`;
}

const GAME_CODES = {
  "1/0": "1-0", "=/=": "1/2-1/2", "0/1": "0-1", "+/-": "+-", "-/+": "-+", "-/-": "--",
  "W/L": "1-0", "D/D": "1/2-1/2", "L/W": "0-1",
};

/** The game of round r where `white` had White, from the rows: {white, black, result} or null. */
function recordedGame(round, white, black) {
  const w = rowOf(white), b = rowOf(black);
  if (!w || !b) return null;
  const we = w.results.find((x) => x[0] === round && x[1] === black && x[2] === "w");
  const be = b.results.find((x) => x[0] === round && x[1] === white);
  if (!we || !be) return null;
  return { white, black, result: GAME_CODES[`${we[3]}/${be[3]}`] || `${we[3]}/${be[3]}` };
}

function entryOf(startNo, round) {
  return rowOf(startNo)?.results.find((x) => x[0] === round) || null;
}

function gamesOfRound(round) {
  const games = [], byes = [];
  for (const row of payload.standings) {
    const e = row.results.find((x) => x[0] === round);
    if (!e) continue;
    if (isBye(e)) byes.push({ player: row.start_no, code: e[3] });
    else if (e[2] === "w") games.push(recordedGame(round, row.start_no, e[1]));
  }
  games.sort((a, b) => a.white - b.white);
  return { games: games.filter(Boolean), byes };
}

function describeEvent(e) {
  switch (e.type) {
    case "result_recorded": return `Round ${e.round}: ${who(e.white)} – ${who(e.black)} ${RESULT_WORDS[e.result] || e.result}`;
    case "result_corrected": return `Correction, round ${e.round}: ${who(e.white)} – ${who(e.black)} now ${RESULT_WORDS[e.result] || e.result}`;
    case "result_voided": return `Void, round ${e.round}: ${who(e.white)} – ${who(e.black)}`;
    case "bye_recorded": return `Round ${e.round}: ${who(e.player)} ${e.kind} bye`;
    case "player_withdrawn": return `${who(e.player)} withdraws${e.reason ? ` (${e.reason})` : ""}`;
    case "tournament_opened": return `Opening of ${e.tournament}${e.players ? ` with ${e.players} players` : ""}`;
    default: return e.type || "event";
  }
}

// -- the form ---------------------------------------------------------------------

const action = () => form.elements.action.value;
const num = (id) => parseInt($(id).value, 10);

function syncForm() {
  const a = action();
  const kinds = { record: ["game", "result"], correct: ["game", "result"], void: ["game"], bye: ["bye"], withdraw: ["withdraw"] }[a];
  for (const label of form.querySelectorAll("[data-for]")) {
    label.hidden = !label.dataset.for.split(" ").some((k) => kinds.includes(k));
  }
  fill($("send"), { record: "Record result", correct: "Correct result", void: "Void result", bye: "Record bye", withdraw: "Withdraw player" }[a]);
  precheck();
  renderRound();
}

function options(select, items, keep) {
  const before = keep ? select.value : null;
  fill(select, items.map(([value, text]) => el("option", { value }, text)));
  if (before !== null && items.some(([v]) => String(v) === before)) select.value = before;
}

function buildSelects() {
  const key = JSON.stringify([payload.rounds, payload.standings.map((r) => [r.start_no, r.name])]);
  if (key === playersKey) return;
  const first = playersKey === "";
  playersKey = key;
  const players = [...payload.standings].sort((a, b) => a.start_no - b.start_no).map((r) => [r.start_no, `${r.start_no} ${r.name}`]);
  options($("white"), players, true);
  options($("black"), players, true);
  options($("player"), players, true);
  options($("round"), Array.from({ length: payload.rounds }, (_, i) => [i + 1, `Round ${i + 1}`]), true);
  if (first) {
    if (players.length > 1) $("black").value = String(players[1][0]);
    const open = firstOpenRound();
    if (open) $("round").value = String(open);
    defaultGame();
  }
}

/** Put the first game of the selected round still without a result in the form (when there is a schedule). */
function defaultGame() {
  const game = pendingGames(num("round"))[0];
  if (!game) return;
  $("white").value = String(game.white);
  $("black").value = String(game.black);
}

/** The scheduled games of round r (in board order) that have no result yet: [{round, white, black, board}]. */
function pendingGames(round) {
  const pairs = schedule[round - 1] || [];
  return pairs.map(([white, black], i) => ({ round, white, black, board: i + 1 }))
    .filter((g) => !entryOf(g.white, round) && !entryOf(g.black, round));
}

/** The scheduled game of `player` in round r: [white, black] or null. */
function scheduledGame(player, round) {
  return (schedule[round - 1] || []).find(([w, b]) => w === player || b === player) || null;
}

/** The first round in which someone has no result yet. */
function firstOpenRound() {
  for (let r = 1; r <= payload.rounds; r++) {
    if (payload.standings.some((row) => !row.results.some((x) => x[0] === r))) return r;
  }
  return payload.rounds;
}

function precheck() {
  if (!payload) return;
  const a = action(), round = num("round"), white = num("white"), black = num("black");
  const notes = [];
  if (a === "record" || a === "correct" || a === "void") {
    if (white === black) notes.push("Choose two different players.");
    else if (a === "record") {
      const taken = [white, black].filter((p) => entryOf(p, round));
      if (recordedGame(round, white, black)) {
        notes.push(`Round ${round} already has a result for ${who(white)} – ${who(black)}: entering it again will be rejected as a duplicate. Use Correct to change it.`);
      } else if (taken.length) {
        notes.push(taken.map((p) => {
          const e = entryOf(p, round);
          return `${who(p)} already has ${isBye(e) ? `a ${CODE_WORDS[e[3]] || "bye"}` : `a game against ${who(e[1])}`} in round ${round}.`;
        }).join(" "));
      }
    } else if (!recordedGame(round, white, black)) {
      const reversed = recordedGame(round, black, white);
      notes.push(reversed
        ? `Round ${round} has this game with colours reversed: ${who(black)} had White.`
        : `No game ${who(white)} – ${who(black)} is recorded in round ${round}.`);
    } else if (a === "correct" && recordedGame(round, white, black).result === $("result").value) {
      notes.push("That is already the recorded result.");
    }
  } else if (a === "bye" && entryOf(num("player"), round)) {
    notes.push(`${who(num("player"))} already has a result in round ${round}.`);
  } else if (a === "bye" && scheduledGame(num("player"), round) && !$("replaces").checked) {
    const [w, b] = scheduledGame(num("player"), round);
    if (!entryOf(w, round) && !entryOf(b, round)) {
      notes.push(`${who(num("player"))} has a scheduled game ${who(w)} – ${who(b)} in round ${round}: enter its result (a forfeit if one side did not play). A bye is refused unless it is a requested bye that replaces the game.`);
    }
  } else if (a === "withdraw" && rowOf(num("player"))?.withdrawn) {
    notes.push(`${who(num("player"))} has already withdrawn.`);
  }
  fill($("precheck"), notes.join(" "));
}

function newId() {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return `arbiter-${Date.now().toString(36)}-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function buildEvent() {
  const a = action(), base = { id: newId(), tournament, round: num("round") };
  switch (a) {
    case "record": return { type: "result_recorded", ...base, white: num("white"), black: num("black"), result: $("result").value };
    case "correct": return { type: "result_corrected", ...base, white: num("white"), black: num("black"), result: $("result").value };
    case "void": return { type: "result_voided", ...base, white: num("white"), black: num("black") };
    case "bye": return { type: "bye_recorded", ...base, player: num("player"), kind: $("kind").value, replaces_game: $("replaces").checked };
    default: return { type: "player_withdrawn", id: base.id, tournament, player: num("player"), reason: $("reason").value.trim() };
  }
}

/** Send one event; false (and a note in Rejected) when it could not be sent. */
function submit(event, hooks = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) { showGate("Enter the arbiter token."); return false; }
  const text = describeEvent(event);
  if (!feed || !feed.send({ type: "submit", token, event, ref: event.id })) {
    alertItem($("rejected"), "danger", "not-connected", `${text}: not sent, the connection is down. Try again when it is back.`);
    return false;
  }
  pending.set(event.id, { event, text, ...hooks });
  return true;
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  if (!payload || !feed) return;
  if (!submit(buildEvent())) return;
  $("send").disabled = true;
  setTimeout(() => { $("send").disabled = false; }, 300);
});

form.addEventListener("change", (e) => {
  if (e.target.id === "round" && payload?.standings.length) defaultGame();
  syncForm();
});
form.addEventListener("input", precheck);

/** Fill the form from a recorded game (the Correct and Void buttons). */
function prefill(kind, game, round) {
  form.elements.action.value = kind;
  $("round").value = String(round);
  $("white").value = String(game.white);
  $("black").value = String(game.black);
  if (kind === "correct") $("result").value = game.result;
  syncForm();
  $(kind === "correct" ? "result" : "send").focus();
}

// -- rendering ----------------------------------------------------------------------

function clock(at) {
  const when = at ? new Date(at * 1000) : new Date();
  return when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function alertItem(list, kind, code, text, data) {
  list.prepend(el("li", { class: kind, dataset: data || {} },
    el("time", null, clock()), " ", code ? [el("span", { class: "code" }, code), " "] : null, el("span", null, text)));
  while (list.children.length > 40) list.lastElementChild.remove();
}

function onStandings(message) {
  payload = message;
  document.title = payload.name ? `Arbiter — ${payload.name}` : "Arbiter dashboard";
  fill($("title"), payload.name ? `Arbiter · ${payload.name}` : "Arbiter dashboard");
  const n = payload.standings.length;
  fill($("meta"), n
    ? `${n} players · ${payload.rounds} rounds · ${payload.games_played} games played · seq ${payload.seq}${payload.rules ? ` · C.07 ${payload.rules}` : ""}${payload.provisional ? "" : " · all games in"}`
    : `Tournament ${tournament} is not open yet.`);
  if (!n) return;
  buildSelects();
  renderWarnings();
  renderPending();
  renderRound();
  precheck();
  renderProjection();
}

function renderRound() {
  if (!payload || !payload.standings.length) return;
  const round = num("round");
  const { games, byes } = gamesOfRound(round);
  fill($("round-h"), `Round ${round}`);
  const rows = games.map((g) => el("tr", { dataset: { white: g.white, black: g.black } },
    el("td", null, who(g.white), " – ", who(g.black)),
    el("td", { class: "num" }, RESULT_WORDS[g.result]?.split(" ")[0] || g.result),
    el("td", { class: "actions" },
      el("button", { type: "button", class: "btn small secondary", onclick: () => prefill("correct", g, round) }, "Correct"), " ",
      el("button", { type: "button", class: "btn small danger", onclick: () => prefill("void", g, round) }, "Void"))));
  for (const b of byes) rows.push(el("tr", null, el("td", null, who(b.player)), el("td", { class: "num" }, CODE_WORDS[b.code] || b.code), el("td")));
  fill($("round-games"), rows.length ? el("tbody", null, rows) : el("tbody", null, el("tr", null, el("td", { class: "legend" }, "No results in this round yet."))));
  const missing = payload.standings.filter((r) => !r.results.some((x) => x[0] === round));
  fill($("round-missing"), missing.length ? `Without a result: ${missing.map((r) => r.name).join(", ")}.` : "Every player has a result in this round.");
}

function renderWarnings() {
  const list = $("warnings");
  list.replaceChildren();
  const n = payload.standings.length;
  const latest = Math.max(0, ...payload.standings.flatMap((r) => r.results.map((x) => x[0])));
  for (let r = 1; r <= payload.rounds; r++) {
    const missing = payload.standings.filter((row) => !row.results.some((x) => x[0] === r));
    if (missing.length === 0 || missing.length === n) continue;
    const names = missing.map((row) => shortName(row.name)).join(", ");
    const text = r < latest
      ? `Round ${r} is missing results although round ${latest} has started: no result or bye for ${names}.`
      : `Round ${r} is missing results: no result or bye yet for ${names}.`;
    list.append(el("li", { class: "warning", dataset: { kind: "missing", round: r } }, text));
  }
  for (const n of notices.filter((x) => x.code === "duplicate-result").slice(-10).reverse()) {
    list.append(el("li", { class: "danger", dataset: { kind: "duplicate", code: n.code, notice: n.id } },
      el("time", null, clock(n.at)), " ",
      `Result entered twice: ${describeEvent(n.event)} was already recorded, so the second entry was refused. Use Correct to change it.`));
  }
}

/** The shared rejections: duplicates are warnings (above), every other one is listed once under Rejected. */
function renderNotices() {
  const list = $("rejected");
  for (const li of [...list.querySelectorAll("li[data-notice]")]) li.remove();
  for (const n of notices.filter((x) => x.code !== "duplicate-result")) {
    list.prepend(el("li", { class: "danger", dataset: { notice: n.id, code: n.code, id: n.event?.id || "" } },
      el("time", null, clock(n.at)), " ", el("span", { class: "code" }, n.code), " ",
      el("span", null, `${describeEvent(n.event)} — ${n.reason}`)));
  }
  if (payload && payload.standings.length) renderWarnings();
}

function onMessage(m) {
  if (m.type === "ack") {
    const item = pending.get(m.id);
    pending.delete(m.id);
    alertItem($("accepted"), "good", `seq ${m.seq}`, item ? item.text : m.id, { id: m.id });
    item?.onAck?.(m);
  } else if (m.type === "rejected") {
    const item = pending.get(m.id);
    pending.delete(m.id);
    if (m.code === "unauthorized") return refused(m.reason);
    item?.onReject?.(m);
    // what the server refused comes back to every arbiter device as "notices"; only refusals before the
    // event reached the tournament (rate limits) are shown from here
    if (m.code === "rate-limited") alertItem($("rejected"), "danger", m.code, `${item ? item.text : m.id || "event"} — ${m.reason}`, { id: m.id || "", code: m.code });
  } else if (m.type === "notices" && m.tournament === tournament) {
    // the whole list on subscribe; then each new notice alone ("added")
    if (m.added) {
      const known = new Set(notices.map((n) => n.id));
      notices = [...notices, ...m.notices.filter((n) => !known.has(n.id))].slice(-40);
    } else {
      notices = m.notices;
    }
    renderNotices();
  } else if (m.type === "schedule" && m.tournament === tournament) {
    schedule = m.rounds;
    if (payload && payload.standings.length) {
      if (!recent.size && !$("entry").contains(document.activeElement)) defaultGame();
      renderPending();
      precheck();
    }
  } else if (m.type === "error") {
    if (m.code === "unauthorized") return refused(m.reason);
    alertItem($("rejected"), "danger", m.code, m.reason);
  } else if (m.type === "projection" && m.tournament === tournament) {
    projection = m;
    renderProjection();
  }
}

function onStatus(s) {
  const node = $("status");
  node.className = `status ${s}`;
  fill(node, STATUS_WORDS[s]);
}

// -- one-click entry ------------------------------------------------------------------

const keyOf = (g) => `${g.round}:${g.white}-${g.black}`;
const SHORT_RESULT = { "1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−" };
let undoTimer = null;

/** Record `result` for a scheduled game from its row; the row then offers Undo for a few seconds. */
function enter(game, result) {
  const key = keyOf(game);
  if (recent.has(key)) return;
  const event = { type: "result_recorded", id: newId(), tournament, round: game.round, white: game.white, black: game.black, result };
  const item = { game, result, state: "sending", until: 0 };
  recent.set(key, item);
  const sent = submit(event, {
    onAck: () => { item.state = "done"; item.until = Date.now() + UNDO_MS; item.event = event; tick(); renderPending(); },
    onReject: () => { recent.delete(key); renderPending(); },
  });
  if (!sent) recent.delete(key);
  renderPending();
}

/** Take back an entry made from a row: void the game (it becomes pending again). */
function undo(key) {
  const item = recent.get(key);
  if (!item || item.state !== "done" || item.undoing) return;
  item.undoing = true;
  const { game } = item;
  const event = { type: "result_voided", id: newId(), tournament, round: game.round, white: game.white, black: game.black };
  const sent = submit(event, {
    onAck: () => { recent.delete(key); renderPending(); focusRow(key); },
    onReject: () => { item.undoing = false; renderPending(); },
  });
  if (!sent) item.undoing = false;
  renderPending();
}

/** Expire the undo offers; re-render while any countdown runs. */
function tick() {
  clearTimeout(undoTimer);
  const now = Date.now();
  let live = false;
  for (const [key, item] of recent) {
    if (item.state === "done" && !item.undoing && item.until <= now) recent.delete(key);
    else live = true;
  }
  renderPending();
  if (live) undoTimer = setTimeout(tick, 1000);
}

function focusRow(key) {
  const row = document.querySelector(`#pending [data-pending="${key}"]`);
  if (row) row.focus();
}

function pendingRow(game) {
  const key = keyOf(game);
  const item = recent.get(key);
  const title = el("span", { class: "game" }, el("span", { class: "board-no" }, `Board ${game.board}`), who(game.white), " – ", who(game.black));
  if (item && item.state === "done") {
    const left = Math.max(0, Math.ceil((item.until - Date.now()) / 1000));
    return el("div", { class: "pending-row done", tabindex: 0, dataset: { pending: key, entered: item.result } },
      title,
      el("span", { class: "entered" }, `entered ${SHORT_RESULT[item.result]}`),
      el("span", { class: "undo-bar" },
        el("button", { type: "button", class: "btn small secondary", dataset: { undo: key }, disabled: item.undoing, onclick: () => undo(key) }, item.undoing ? "Undoing…" : "Undo"),
        el("span", { class: "countdown" }, item.undoing ? "" : `${left} s`)));
  }
  const sending = item && item.state === "sending";
  return el("div", { class: `pending-row${sending ? " sending" : ""}`, tabindex: 0, dataset: { pending: key }, "aria-label": `Round ${game.round}: ${who(game.white)} against ${who(game.black)}` },
    title,
    el("span", { class: "results" },
      ["1-0", "1/2-1/2", "0-1"].map((r) => el("button", {
        type: "button", class: "btn small", dataset: { result: r }, disabled: sending,
        title: { "1-0": "White wins (key 1)", "1/2-1/2": "Draw (key =)", "0-1": "Black wins (key 0)" }[r],
        onclick: () => enter(game, r),
      }, SHORT_RESULT[r])),
      el("select", { "aria-label": "Forfeit", dataset: { forfeit: key }, disabled: sending, onchange: (e) => { if (e.target.value) enter(game, e.target.value); } },
        el("option", { value: "" }, "Forfeit…"),
        el("option", { value: "+-" }, "+/− White wins by forfeit"),
        el("option", { value: "-+" }, "−/+ Black wins by forfeit"),
        el("option", { value: "--" }, "−/− double forfeit"))));
}

function renderPending() {
  const box = $("pending");
  if (!payload || !payload.standings.length) return;
  if (!schedule.length) {
    fill(box, el("p", { class: "legend" }, "This tournament was opened without a schedule: enter results with the form below."));
    return;
  }
  const focused = document.activeElement?.closest?.("[data-pending]")?.dataset.pending;
  const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.round));
  const rounds = [];
  for (let r = 1; r <= schedule.length; r++) {
    const games = (schedule[r - 1] || []).map(([white, black], i) => ({ round: r, white, black, board: i + 1 }))
      .filter((g) => recent.has(keyOf(g)) || (!entryOf(g.white, r) && !entryOf(g.black, r)));
    if (games.length) rounds.push([r, games]);
  }
  fill(box, rounds.length ? rounds.map(([r, games], i) => {
    const rows = games.map(pendingRow);
    const heading = `Round ${r} · ${games.length} game${games.length === 1 ? "" : "s"} to enter`;
    return i === 0
      ? el("div", { class: "pending-round", dataset: { round: r } }, el("h3", null, heading), rows)
      : el("details", { class: "pending-round", dataset: { round: r }, open: open.has(String(r)) }, el("summary", null, heading), rows);
  }) : el("p", { class: "legend" }, "Every scheduled game has a result."));
  if (focused) focusRow(focused);
}

const KEYS = { "1": "1-0", "=": "1/2-1/2", "5": "1/2-1/2", "0": "0-1" };

$("pending").addEventListener("keydown", (e) => {
  const row = e.target.closest?.("[data-pending]");
  if (!row || e.target.tagName === "SELECT" || e.altKey || e.ctrlKey || e.metaKey) return;
  const rows = [...$("pending").querySelectorAll("[data-pending]")].filter((x) => x.offsetParent !== null);
  const at = rows.indexOf(row);
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    rows[at + (e.key === "ArrowDown" ? 1 : -1)]?.focus();
    e.preventDefault();
    return;
  }
  if (e.target !== row) return;  // a key on a button keeps its usual meaning
  const [round, players] = row.dataset.pending.split(":");
  const [white, black] = players.split("-").map(Number);
  if ((e.key === "u" || e.key === "Backspace") && recent.get(row.dataset.pending)?.state === "done") {
    undo(row.dataset.pending);
    e.preventDefault();
    return;
  }
  const result = KEYS[e.key];
  if (!result || row.classList.contains("done")) return;
  e.preventDefault();
  const next = rows[at + 1]?.dataset.pending;
  enter({ round: Number(round), white, black, board: 0 }, result);
  if (next) focusRow(next);
});

// -- projection -----------------------------------------------------------------------

const range = (lo, hi, f = fmt) => (lo === hi ? f(lo) : `${f(lo)}–${f(hi)}`);
const rankRange = (best, worst) => (best === worst ? String(best) : `${best}–${worst}`);

/** Opponent statuses in the order of the current standings. */
function byRank(opponents) {
  const order = new Map(payload.standings.map((r, i) => [r.start_no, i]));
  return [...opponents].sort((a, b) => (order.get(a.start_no) ?? 1e9) - (order.get(b.start_no) ?? 1e9));
}

const ordinal = (n) => `${n}${[, "st", "nd", "rd"][(n % 100 >> 3 ^ 1) && n % 10] || "th"}`;

/** "How X can still finish 1st" (and how they could fall to their worst): the scenario behind each extreme. */
function howTheyFinish(row, x) {
  if (!x.scenarios || x.rank_best === x.rank_worst) return null;
  const games = (list) => el("ol", { class: "scenario" }, list.map((g) =>
    el("li", null, `${g.round ? `R${g.round} ` : ""}${shortName(rowOf(g.white)?.name ?? String(g.white))}–` +
      `${shortName(rowOf(g.black)?.name ?? String(g.black))} ${RESULT_WORDS[g.result]?.split(" ")[0] || g.result}`)));
  const name = shortName(row.name);
  const part = (key, rank, verb) => {
    const list = x.scenarios[key];
    if (!list || !list.length) return null;
    const sure = x.exact ? x.exact[key] : true;
    return el("div", { class: "how", dataset: { extreme: key } },
      el("p", null, `How ${name} ${verb} ${ordinal(rank)}${sure ? "" : " (the nearest scenario found; the range is a bound)"}:`),
      games(list));
  };
  return el("details", { class: "how-finish" },
    el("summary", null, `how ${name} can still finish ${ordinal(x.rank_best)}`),
    part("rank_best", x.rank_best, "can still finish"),
    part("rank_worst", x.rank_worst, "could finish"));
}

function renderProjection() {
  if (!projection || !payload || !payload.standings.length) return;
  const p = projection;
  fill($("proj-meta"),
    el("span", null, p.remaining
      ? `${p.remaining} game${p.remaining === 1 ? "" : "s"} remaining · final 50% line ${fmt(p.line)} points · `
      : `All games are in · 50% line ${fmt(p.line)} points · `),
    el("span", { class: "badge prov-badge", title: p.exact ? "every outcome of the remaining games was enumerated" : "sound bounds: the truth lies inside, the range may be wider" },
      p.exact ? "exact ranges" : "bounds"),
    el("span", null, ` · as of seq ${p.seq}`),
    p.seq < payload.seq ? el("span", { class: "stale" }, " (updating…)") : null);
  const byNo = new Map(p.players.map((x) => [x.start_no, x]));
  const head = el("thead", null, el("tr", null,
    el("th", { scope: "col" }, "Player"),
    el("th", { class: "num", scope: "col", title: "Points now" }, "Pts"),
    el("th", { class: "num", scope: "col", title: "Final points range" }, "Final pts"),
    el("th", { class: "num", scope: "col", title: "KS now" }, "KS"),
    el("th", { class: "num", scope: "col", title: "Final KS range" }, "Final KS"),
    el("th", { class: "num", scope: "col", title: "Final rank range" }, "Rank"),
    el("th", { scope: "col", title: "This player's own qualification against the final line" }, "Status"),
    el("th", { scope: "col", title: "Each opponent's qualification: clinched, open or eliminated" }, "Opponents")));
  const body = el("tbody", null, payload.standings.filter((r) => byNo.has(r.start_no)).map((row) => {
    const x = byNo.get(row.start_no);
    return el("tr", { dataset: { start: row.start_no } },
      el("td", null, row.name),
      el("td", { class: "num" }, fmt(row.points)),
      el("td", { class: "num range" }, range(x.points_min, x.points_max)),
      el("td", { class: "num" }, fmt(row.tiebreaks.KS)),
      el("td", { class: "num range ks-range" }, range(x.ks_min, x.ks_max)),
      el("td", { class: "num range" }, rankRange(x.rank_best, x.rank_worst), howTheyFinish(row, x)),
      el("td", null, el("span", { class: `chip ${x.qualification}` }, x.qualification)),
      el("td", null, el("div", { class: "chips" }, byRank(x.opponents).map((o) =>
        el("span", { class: `chip ${o.status}`, title: `${rowOf(o.start_no)?.name ?? o.start_no}: ${o.status}` }, shortName(rowOf(o.start_no)?.name ?? String(o.start_no)))))));
  }));
  fill($("proj-players"), head, body);

  const open = new Set([...document.querySelectorAll("#proj-games details[open]")].map((d) => d.dataset.game));
  const shown = p.games.slice(0, 60);
  fill($("proj-games"),
    shown.length ? el("h2", null, `Pending games (${p.games.length}): what each outcome leaves possible`) : null,
    el("div", { class: "pending-list" }, shown.map((g, i) => {
      const affected = [...new Set(g.outcomes.flatMap((o) => [...o.ks.map((k) => k.start_no), ...o.ranks.map((k) => k.start_no)]))];
      const key = `${g.round}:${g.white}:${g.black}`;
      const title = `${g.round ? `Round ${g.round}: ` : ""}${who(g.white)} – ${who(g.black)}`;
      const note = affected.length ? `changes ${affected.length} player${affected.length === 1 ? "'s" : "s'"} ranges` : "changes no one's ranges";
      return el("details", { class: "pending-game", dataset: { game: key }, open: open.has(key) || (!open.size && i === 0) },
        el("summary", null, el("span", { class: "game-title" }, title), el("span", { class: "legend" }, ` · ${note}`)),
        affected.length ? el("div", { class: "scroll" }, el("table", { class: "outcomes" },
          el("thead", null, el("tr", null, el("th", { scope: "col" }, "If"), g.outcomes.map((o) => el("th", { scope: "col" }, RESULT_WORDS[o.result]?.split(" ")[0] || o.result)))),
          el("tbody", null, affected.map((no) => el("tr", null,
            el("th", { scope: "row" }, shortName(rowOf(no)?.name ?? String(no))),
            g.outcomes.map((o) => {
              const k = o.ks.find((v) => v.start_no === no), r = o.ranks.find((v) => v.start_no === no);
              return el("td", null, [k ? `KS ${range(k.min, k.max)}` : null, r ? `rank ${rankRange(r.best, r.worst)}` : null].filter(Boolean).join(" · ") || "—");
            })))))) : null);
    })),
    p.games.length > shown.length ? el("p", { class: "legend" }, `… and ${p.games.length - shown.length} more pending games.`) : null);
}

// -- start ----------------------------------------------------------------------------

syncForm();
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) start(saved);
else showGate("");
