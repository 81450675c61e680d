// Arbiter dashboard: enter, correct and void results over the websocket,
// see what was accepted and rejected and why, what is missing, and the projections.
//
// The token is asked for once per tab and kept in sessionStorage; it only
// ever travels inside websocket messages (never in a URL or the page).
// The one-click rows are arbiter-rows.js, the projection arbiter-projection.js,
// what the page knows (standings, schedule, withdrawals) arbiter-state.js.

import { CODE_WORDS, LiveFeed, RESULT_WORDS, STATUS_WORDS, el, fill, isBye, shortName, tournamentFromPath } from "/static/live.js";
import {
  SHORT_RESULT, absent, entryOf, firstOpenRound, forfeitOf, freePlayers, gamesOfRound, latestRound, newId,
  noteWithdrawal, playableGames, ready, recordedGame, rowOf, state, who,
} from "/static/arbiter-state.js";
import { entering, mountRows, renderRows } from "/static/arbiter-rows.js";
import { renderProjection } from "/static/arbiter-projection.js";

const TOKEN_KEY = "tracker-arbiter-token";
const tournament = tournamentFromPath();
const $ = (id) => document.getElementById(id);
const form = $("entry");

let feed = null;
let projection = null;
let playersKey = "";
let touched = false;           // the arbiter changed the form since it last followed the live round
const pending = new Map();     // event id → {event, text, onAck?, onReject?}
let notices = [];              // the server's recent rejections, shared by every arbiter device
const accepted = new Map();    // seq → its item in Accepted (every device lists the same updates)

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
  feed = new LiveFeed(tournament, { onSnapshot: onStandings, onUpdate, onMessage, onStatus }, { token });
  window.trackerFeed = feed.start();
  loadAccepted();
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

function describeEvent(e) {
  const result = (r) => RESULT_WORDS[r] || r;
  switch (e.type) {
    case "result_recorded": return `Round ${e.round}: ${who(e.white)} – ${who(e.black)} ${result(e.result)}`;
    case "result_corrected": return `Correction, round ${e.round}: ${who(e.white)} – ${who(e.black)} now ${result(e.result)}`;
    case "result_voided": return `Void, round ${e.round}: ${who(e.white)} – ${who(e.black)}`;
    case "bye_recorded": return `Round ${e.round}: ${who(e.player)} ${e.kind} bye`;
    case "bye_voided": return `Round ${e.round}: ${who(e.player)}'s bye voided`;
    case "player_withdrawn": return `${who(e.player)} withdraws${e.round ? ` from round ${e.round}` : ""}${e.reason ? ` (${e.reason})` : ""}`;
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
  const { payload } = state;
  const key = JSON.stringify([payload.rounds, payload.standings.map((r) => [r.start_no, r.name])]);
  if (key === playersKey) return;
  const first = playersKey === "";
  playersKey = key;
  const players = [...payload.standings].sort((a, b) => a.start_no - b.start_no).map((r) => [r.start_no, `${r.start_no} ${r.name}`]);
  const rounds = Array.from({ length: payload.rounds }, (_, i) => [i + 1, `Round ${i + 1}`]);
  options($("white"), players, true);
  options($("black"), players, true);
  options($("player"), players, true);
  options($("round"), rounds, true);
  options($("from-round"), [...rounds, [0, "not given"]], true);
  if (first) {
    if (players.length > 1) $("black").value = String(players[1][0]);
    $("round").value = String(firstOpenRound());
    defaultGame();
    defaultWithdrawal();
  }
}

/** Put the first game of the selected round still to enter in the form (when there is a schedule). */
function defaultGame() {
  const game = playableGames(num("round"))[0];
  if (!game) return;
  $("white").value = String(game.white);
  $("black").value = String(game.black);
}

/** The first round the selected player has nothing in after their last game played: where a withdrawal starts. */
function defaultWithdrawal() {
  const results = rowOf(num("player"))?.results || [];
  const played = Math.max(0, ...results.filter((x) => !isBye(x) && "10=WDL".includes(x[3])).map((x) => x[0]));
  let r = played + 1;
  while (r <= state.payload.rounds && entryOf(num("player"), r)) r += 1;
  $("from-round").value = String(r <= state.payload.rounds ? r : 0);
}

/**
 * Keep the form on the live round: when the game it shows got a result (from this device, another one or a
 * one-click row), move it to the first game still to enter, unless the arbiter is using the form.
 */
function follow() {
  const focus = document.activeElement;
  if (touched || entering() || (form.contains(focus) && focus.tagName !== "BUTTON") || action() !== "record") return;
  const round = num("round"), white = num("white"), black = num("black");
  if (playableGames(round).some((g) => g.white === white && g.black === black)) return;
  $("round").value = String(firstOpenRound());
  defaultGame();
}

function precheck() {
  if (!ready()) return;
  const a = action(), round = num("round"), white = num("white"), black = num("black"), player = num("player");
  const notes = [];
  if (a === "record" || a === "correct" || a === "void") {
    const recorded = recordedGame(round, white, black);
    if (white === black) notes.push("Choose two different players.");
    else if (a === "record") {
      const taken = [white, black].filter((p) => entryOf(p, round));
      if (recorded) {
        notes.push(`Round ${round} already has a result for ${who(white)} – ${who(black)} (${SHORT_RESULT[recorded.result] || recorded.result}): entering it again will be rejected as a duplicate. Use Correct to change it.`);
      } else if (taken.length) {
        notes.push(taken.map((p) => {
          const e = entryOf(p, round);
          return `${who(p)} already has ${isBye(e) ? `a ${CODE_WORDS[e[3]] || "bye"}` : `a game against ${who(e[1])}`} in round ${round}.`;
        }).join(" "));
      }
    } else if (!recorded) {
      const reversed = recordedGame(round, black, white);
      notes.push(reversed
        ? `Round ${round} has this game with colours reversed: ${who(black)} had White.`
        : `No game ${who(white)} – ${who(black)} is recorded in round ${round}.`);
    } else if (a === "correct" && recorded.result === $("result").value) {
      notes.push("That is already the recorded result.");
    }
    if (a !== "void" && white !== black) notes.push(...withdrawnNotes(round, white, black, $("result").value));
  } else if (a === "bye" && entryOf(player, round)) {
    notes.push(`${who(player)} already has a result in round ${round}.`);
  } else if (a === "bye" && !$("replaces").checked && playableGames(round).some((g) => g.white === player || g.black === player)) {
    const g = playableGames(round).find((x) => x.white === player || x.black === player);
    notes.push(`${who(player)} has a scheduled game ${who(g.white)} – ${who(g.black)} in round ${round}: enter its result (a forfeit if one side did not play). A bye is refused unless it is a requested bye that replaces the game.`);
  } else if (a === "withdraw") {
    const from = num("from-round");
    const played = (rowOf(player)?.results || []).filter((x) => x[0] >= from && !isBye(x) && "10=WDL".includes(x[3]));
    if (rowOf(player)?.withdrawn) notes.push(`${who(player)} has already withdrawn.`);
    else if (from && played.length) notes.push(`${who(player)} played round ${played[0][0]}: a withdrawal from round ${from} will be refused; choose a later round.`);
    else if (!from) notes.push("Without a round nothing is refused later; with one, the player's games from that round on are offered as forfeits only.");
  }
  fill($("precheck"), notes.join(" "));
}

/** What the form should say about a game with a withdrawn player (FIDE practice: the remaining games are forfeits). */
function withdrawnNotes(round, white, black, result) {
  const game = { round, white, black };
  const gone = [white, black].filter((p) => absent(p, round));
  if (!gone.length) return [];
  const forfeit = forfeitOf(game);
  const given = gone.every((p) => state.withdrawals.get(p));
  if (result === forfeit || result === "--") return [];
  return [given
    ? `${gone.map(who).join(" and ")} withdrew by round ${round}: the game can only be recorded as the forfeit ${SHORT_RESULT[forfeit]}; anything else is refused.`
    : `${gone.map(who).join(" and ")} has withdrawn: FIDE practice records the remaining games as forfeits (${SHORT_RESULT[forfeit]}).`];
}

function buildEvent() {
  const a = action(), base = { id: newId(), tournament, round: num("round") };
  switch (a) {
    case "record": return { type: "result_recorded", ...base, white: num("white"), black: num("black"), result: $("result").value };
    case "correct": return { type: "result_corrected", ...base, white: num("white"), black: num("black"), result: $("result").value };
    case "void": return { type: "result_voided", ...base, white: num("white"), black: num("black") };
    case "bye": return { type: "bye_recorded", ...base, player: num("player"), kind: $("kind").value, replaces_game: $("replaces").checked };
    default: {
      const from = num("from-round");
      return { type: "player_withdrawn", id: base.id, tournament, player: num("player"), ...(from ? { round: from } : {}), reason: $("reason").value.trim() };
    }
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
  if (!state.payload || !feed) return;
  if (!submit(buildEvent())) return;
  touched = false;  // the next update moves the form on to the next game
  $("send").disabled = true;
  setTimeout(() => { $("send").disabled = false; }, 300);
});

form.addEventListener("change", (e) => {
  if (e.isTrusted) touched = true;
  if (e.target.id === "round" && ready()) defaultGame();
  if (e.target.id === "player" && ready()) defaultWithdrawal();
  syncForm();
});
form.addEventListener("input", (e) => {
  if (e.isTrusted) touched = true;
  precheck();
});

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

function alertItem(list, kind, code, text, data, at) {
  const item = el("li", { class: kind, dataset: data || {} },
    el("time", null, clock(at)), " ", code ? [el("span", { class: "code" }, code), " "] : null, el("span", null, text));
  list.prepend(item);
  while (list.children.length > 40) list.lastElementChild.remove();
  return item;
}

/** One accepted update in Accepted (once per seq, newest first), from any arbiter device. */
function acceptedItem(seq, text, at, id) {
  const known = accepted.get(seq);
  if (known) {
    if (id) known.dataset.id = id;
    return;
  }
  if (accepted.size && seq < Math.min(...accepted.keys())) return;  // older than the list: the history is in already
  const item = alertItem($("accepted"), "good", `seq ${seq}`, text, { seq, ...(id ? { id } : {}) }, at);
  accepted.set(seq, item);
  for (const [s, node] of accepted) if (!node.isConnected) accepted.delete(s);
}

/** Accepted after a reload: the tournament's recent updates, as every arbiter device lists them. */
async function loadAccepted() {
  try {
    const response = await fetch(`/api/tournaments/${encodeURIComponent(tournament)}/recent`);
    if (!response.ok) return;
    const recent = await response.json();
    const known = [...accepted.entries()];
    accepted.clear();
    $("accepted").replaceChildren();
    for (const u of recent.updates) acceptedItem(u.seq, u.summary, u.at);
    for (const [seq, node] of known.sort((a, b) => a[0] - b[0])) {
      if (!accepted.has(seq)) { $("accepted").prepend(node); accepted.set(seq, node); }
    }
  } catch {
    // no history: the list fills from the updates
  }
}

function onUpdate(message) {
  const e = message.event;
  if (e?.type === "player_withdrawn") noteWithdrawal(e.player, e.round);
  acceptedItem(message.seq, message.summary || describeEvent(e || {}));
  onStandings(message);
}

function onStandings(message) {
  state.payload = message;
  const { payload } = state;
  document.title = payload.name ? `Arbiter — ${payload.name}` : "Arbiter dashboard";
  fill($("title"), payload.name ? `Arbiter · ${payload.name}` : "Arbiter dashboard");
  const n = payload.standings.length;
  fill($("meta"), n
    ? `${n} players · ${payload.rounds} rounds · ${payload.games_played} games played · seq ${payload.seq}${payload.rules ? ` · C.07 ${payload.rules}` : ""}${payload.provisional ? "" : " · all games in"}`
    : `Tournament ${tournament} is not open yet.`);
  if (!n) return;
  buildSelects();
  follow();
  renderWarnings();
  renderRows();
  renderRound();
  precheck();
  renderProjection(projection);
}

function renderRound() {
  if (!ready()) return;
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
  fill($("round-games"), el("tbody", null, rows.length ? rows : el("tr", null, el("td", { class: "legend" }, "No results in this round yet."))));
  const missing = state.payload.standings.filter((r) => !entryOf(r.start_no, round));
  fill($("round-missing"), missing.length
    ? `Without a result: ${missing.map((r) => r.name + (absent(r.start_no, round) ? " (withdrawn)" : "")).join(", ")}.`
    : "Every player has a result in this round.");
}

/**
 * Missing results of the rounds that are over (a later round has started): the games still to enter by
 * board and the byes still to record; not the games being played now, nor a withdrawn player's forfeits
 * (they are rows of their own).  Then the duplicates the server refused.
 */
function renderWarnings() {
  const list = $("warnings");
  list.replaceChildren();
  const latest = latestRound();
  const short = (no) => shortName(rowOf(no)?.name ?? String(no));
  for (let r = 1; r < latest; r++) {
    const parts = [];
    if (state.schedule.length) {
      const games = playableGames(r);
      if (games.length) parts.push(`no result for ${games.map((g) => `board ${g.board} ${short(g.white)}–${short(g.black)}`).join(", ")}`);
      const free = freePlayers(r);
      if (free.length) parts.push(`no bye recorded for ${free.map((f) => short(f.player)).join(", ")}`);
    } else {
      const missing = state.payload.standings.filter((row) => !entryOf(row.start_no, r) && !absent(row.start_no, r));
      if (missing.length) parts.push(`no result or bye for ${missing.map((row) => short(row.start_no)).join(", ")}`);
    }
    if (parts.length) {
      list.append(el("li", { class: "warning", dataset: { kind: "missing", round: r } },
        `Round ${r} is missing results although round ${latest} has started: ${parts.join("; ")}.`));
    }
  }
  for (const n of notices.filter((x) => x.code === "duplicate-result").slice(-10).reverse()) {
    const e = n.event;
    const now = e.white ? recordedGame(e.round, e.white, e.black) : null;
    const stands = now ? `the game stands ${SHORT_RESULT[now.result] || now.result}` : "the game has no result now";
    list.append(el("li", { class: "danger", dataset: { kind: "duplicate", code: n.code, notice: n.id } },
      el("time", null, clock(n.at)), " ",
      `Result entered twice: round ${e.round}, ${who(e.white)} – ${who(e.black)} was entered as ${SHORT_RESULT[e.result] || e.result} again, but it was already recorded (${stands}), so the second entry was refused. Use Correct to change it.`));
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
  if (ready()) renderWarnings();
}

function onMessage(m) {
  if (m.type === "ack") {
    const item = pending.get(m.id);
    pending.delete(m.id);
    acceptedItem(m.seq, item ? item.text : m.id, undefined, m.id);
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
    state.schedule = m.rounds;
    for (const [player, round] of m.withdrawals || []) noteWithdrawal(player, round);
    if (ready()) {
      follow();
      renderRows();
      renderWarnings();
      precheck();
    }
  } else if (m.type === "error") {
    if (m.code === "unauthorized") return refused(m.reason);
    alertItem($("rejected"), "danger", m.code, m.reason);
  } else if (m.type === "projection" && m.tournament === tournament) {
    projection = m;
    renderProjection(projection);
  }
}

function onStatus(s) {
  const node = $("status");
  node.className = `status ${s}`;
  fill(node, STATUS_WORDS[s]);
}

// -- start ----------------------------------------------------------------------------

mountRows(submit);
syncForm();
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) start(saved);
else showGate("");
