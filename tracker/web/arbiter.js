// Arbiter dashboard: enter, correct and void results over the websocket,
// see what was accepted and rejected and why, what is missing, and the projections.
//
// The token is asked for once per tab and kept in sessionStorage; it only
// ever travels inside websocket messages (never in a URL or the page).
// The one-click rows are arbiter-rows.js, the projection arbiter-projection.js,
// what the page knows (standings, schedule, withdrawals) arbiter-state.js.

import { CODE_WORDS, LiveFeed, RESULT_WORDS, STATUS_WORDS, el, fill, isBye, shortName, tournamentFromPath } from "/static/live.js";
import { join, language, loadLanguage, t, tn, translatePage, wanted } from "/static/i18n.js";
import {
  SHORT_RESULT, absent, entryOf, firstOpenRound, forfeitOf, freePlayers, gamesOfRound, latestRound, newId,
  noteWithdrawal, playableGames, ready, reasonOf, recordedGame, rowOf, state, summaryOf, who,
} from "/static/arbiter-state.js";
import { entering, mountRows, renderRows } from "/static/arbiter-rows.js";
import { renderProjection } from "/static/arbiter-projection.js";
import { renderPrizes } from "/static/arbiter-prizes.js";
import { mountTeams, onTeamSchedule, renderMatch } from "/static/arbiter-teams.js";

const TOKEN_KEY = "tracker-arbiter-token";
const LANG_KEY = "tracker-arbiter-lang";   // the language chosen in this tab (sessionStorage, as the token)

// -- language ---------------------------------------------------------------------
// ?lang= (kept for the tab), else the tab's earlier choice, else the browser's languages, else English; the
// picker keeps its choice for the tab and reloads the page in it (the token stays: the dashboard comes back).

const asked = new URLSearchParams(location.search).get("lang");
const code = await loadLanguage(wanted(asked || sessionStorage.getItem(LANG_KEY)));
if (asked) sessionStorage.setItem(LANG_KEY, code);
translatePage();
const picker = document.getElementById("lang");
picker.value = code;
picker.addEventListener("change", () => {
  sessionStorage.setItem(LANG_KEY, picker.value);
  const url = new URL(location.href);
  url.searchParams.delete("lang");
  history.replaceState(null, "", url);
  location.reload();
});
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
  // stakes: the prizes card reads their worth (the arbiters' projection search answers the stakes too)
  feed = new LiveFeed(tournament, { onSnapshot: onStandings, onUpdate, onMessage, onStatus }, { token, subscribe: { stakes: true } });
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
  showGate(t("arbiter.gate.forgotten", "Token forgotten."));
});

function refused(reason) {
  sessionStorage.removeItem(TOKEN_KEY);
  showGate(t("arbiter.gate.refused", "The tracker refused this token ({reason}). Enter the arbiter token again.", { reason }));
}

function describeEvent(e) {
  const game = { round: e.round, white: who(e.white), black: who(e.black), result: RESULT_WORDS[e.result] || e.result };
  switch (e.type) {
    case "result_recorded": return t("arbiter.event.recorded", "Round {round}: {white} – {black} {result}", game);
    case "result_corrected": return t("arbiter.event.corrected", "Correction, round {round}: {white} – {black} now {result}", game);
    case "result_voided": return t("arbiter.event.voided", "Void, round {round}: {white} – {black}", game);
    case "bye_recorded": return byeEvent(e);
    case "bye_voided": return t("arbiter.event.bye_voided", "Round {round}: {player}'s bye voided", { round: e.round, player: who(e.player) });
    case "player_withdrawn": {
      const args = { player: who(e.player), round: e.round };
      const text = e.round ? t("arbiter.event.withdraws_from", "{player} withdraws from round {round}", args) : t("arbiter.event.withdraws", "{player} withdraws", args);
      return e.reason ? t("arbiter.event.reason", "{text} ({reason})", { text, reason: e.reason }) : text;
    }
    case "tournament_opened": return e.players
      ? tn("arbiter.event.opened_with", "Opening of {tournament} with {n} player", "Opening of {tournament} with {n} players", { tournament: e.tournament, n: e.players })
      : t("arbiter.event.opened", "Opening of {tournament}", { tournament: e.tournament });
    default: return e.type || t("arbiter.event.other", "event");
  }
}

function byeEvent(e) {
  const args = { round: e.round, player: who(e.player) };
  switch (e.kind) {
    case "zero": return t("arbiter.event.bye.zero", "Round {round}: {player} zero bye", args);
    case "half": return t("arbiter.event.bye.half", "Round {round}: {player} half bye", args);
    case "full": return t("arbiter.event.bye.full", "Round {round}: {player} full bye", args);
    default: return t("arbiter.event.bye.pab", "Round {round}: {player} pab bye", args);
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
  fill($("send"), {
    record: () => t("arbiter.send.record", "Record result"), correct: () => t("arbiter.send.correct", "Correct result"),
    void: () => t("arbiter.send.void", "Void result"), bye: () => t("arbiter.send.bye", "Record bye"),
    withdraw: () => t("arbiter.send.withdraw", "Withdraw player"),
  }[a]());
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
  const rounds = Array.from({ length: payload.rounds }, (_, i) => [i + 1, roundWords(i + 1)]);
  options($("white"), players, true);
  options($("black"), players, true);
  options($("player"), players, true);
  options($("round"), rounds, true);
  options($("from-round"), [...rounds, [0, t("arbiter.form.no_round", "not given")]], true);
  if (first) {
    if (players.length > 1) $("black").value = String(players[1][0]);
    $("round").value = String(firstOpenRound());
    defaultGame();
    defaultWithdrawal();
  }
}

const roundWords = (round) => t("arbiter.round", "Round {round}", { round });

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
    if (white === black) notes.push(t("arbiter.check.same", "Choose two different players."));
    else if (a === "record") {
      const taken = [white, black].filter((p) => entryOf(p, round));
      if (recorded) {
        notes.push(t("arbiter.check.duplicate", "Round {round} already has a result for {white} – {black} ({result}): entering it again will be rejected as a duplicate. Use Correct to change it.",
          { round, white: who(white), black: who(black), result: SHORT_RESULT[recorded.result] || recorded.result }));
      } else if (taken.length) {
        notes.push(taken.map((p) => {
          const e = entryOf(p, round);
          const bye = CODE_WORDS[e[3]] || t("arbiter.check.bye", "bye");
          return isBye(e)
            ? t("arbiter.check.has_bye", "{player} already has a {bye} in round {round}.", { player: who(p), bye, round })
            : t("arbiter.check.has_game", "{player} already has a game against {opponent} in round {round}.", { player: who(p), opponent: who(e[1]), round });
        }).join(" "));
      }
    } else if (!recorded) {
      const reversed = recordedGame(round, black, white);
      notes.push(reversed
        ? t("arbiter.check.reversed", "Round {round} has this game with colours reversed: {black} had White.", { round, black: who(black) })
        : t("arbiter.check.no_game", "No game {white} – {black} is recorded in round {round}.", { round, white: who(white), black: who(black) }));
    } else if (a === "correct" && recorded.result === $("result").value) {
      notes.push(t("arbiter.check.same_result", "That is already the recorded result."));
    }
    if (a !== "void" && white !== black) notes.push(...withdrawnNotes(round, white, black, $("result").value));
  } else if (a === "bye" && entryOf(player, round)) {
    notes.push(t("arbiter.check.has_result", "{player} already has a result in round {round}.", { player: who(player), round }));
  } else if (a === "bye" && !$("replaces").checked && playableGames(round).some((g) => g.white === player || g.black === player)) {
    const g = playableGames(round).find((x) => x.white === player || x.black === player);
    notes.push(t("arbiter.check.scheduled", "{player} has a scheduled game {white} – {black} in round {round}: enter its result (a forfeit if one side did not play). A bye is refused unless it is a requested bye that replaces the game.",
      { player: who(player), white: who(g.white), black: who(g.black), round }));
  } else if (a === "withdraw") {
    const from = num("from-round");
    const played = (rowOf(player)?.results || []).filter((x) => x[0] >= from && !isBye(x) && "10=WDL".includes(x[3]));
    if (rowOf(player)?.withdrawn) notes.push(t("arbiter.check.withdrawn", "{player} has already withdrawn.", { player: who(player) }));
    else if (from && played.length) notes.push(t("arbiter.check.played", "{player} played round {played}: a withdrawal from round {from} will be refused; choose a later round.", { player: who(player), played: played[0][0], from }));
    else if (!from) notes.push(t("arbiter.check.no_round", "Without a round nothing is refused later; with one, the player's games from that round on are offered as forfeits only."));
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
  const args = { n: gone.length, players: join(gone.map(who)), round, forfeit: SHORT_RESULT[forfeit] };
  return [given
    ? tn("arbiter.check.withdrew_by", "{players} withdrew by round {round}: the game can only be recorded as the forfeit {forfeit}; anything else is refused.",
      "{players} withdrew by round {round}: the game can only be recorded as the forfeit {forfeit}; anything else is refused.", args)
    : tn("arbiter.check.has_withdrawn", "{players} has withdrawn: FIDE practice records the remaining games as forfeits ({forfeit}).",
      "{players} has withdrawn: FIDE practice records the remaining games as forfeits ({forfeit}).", args)];
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
  if (!token) { showGate(t("arbiter.gate.enter", "Enter the arbiter token.")); return false; }
  const text = describeEvent(event);
  if (!feed || !feed.send({ type: "submit", token, event, ref: event.id })) {
    alertItem($("rejected"), "danger", "not-connected", t("arbiter.not_sent", "{event}: not sent, the connection is down. Try again when it is back.", { event: text }));
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
  return when.toLocaleTimeString(language(), { hour: "2-digit", minute: "2-digit", second: "2-digit" });
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
    for (const u of recent.updates) acceptedItem(u.seq, summaryOf(u.summary_said, u.summary), u.at);
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
  acceptedItem(message.seq, summaryOf(message.summary_said, message.summary) || describeEvent(e || {}));
  onStandings(message);
}

function onStandings(message) {
  const first = !state.payload;
  state.payload = message;
  if (first) loadAccepted();  // once the players are known: the summaries name them
  const { payload } = state;
  const name = payload.name;
  document.title = name ? t("arbiter.doc_title", "Arbiter — {name}", { name }) : t("arbiter.title", "Arbiter dashboard");
  fill($("title"), name ? t("arbiter.heading", "Arbiter · {name}", { name }) : t("arbiter.title", "Arbiter dashboard"));
  const n = payload.standings.length;
  fill($("meta"), n ? metaWords(payload, n) : t("arbiter.not_open", "Tournament {tournament} is not open yet.", { tournament }));
  if (!n) return;
  buildSelects();
  follow();
  renderWarnings();
  renderRows();
  renderRound();
  precheck();
  renderProjection(projection);
  renderMatch();
}

/** "10 players · 9 rounds · 40 games played · seq 41 · C.07 2026" (and "all games in" once they are). */
function metaWords(payload, n) {
  const parts = [
    tn("arbiter.meta.players", "{n} player", "{n} players", { n }),
    tn("arbiter.meta.rounds", "{n} round", "{n} rounds", { n: payload.rounds }),
    tn("arbiter.meta.games", "{n} game played", "{n} games played", { n: payload.games_played }),
    t("arbiter.meta.seq", "seq {seq}", { seq: payload.seq }),
  ];
  if (payload.rules) parts.push(`C.07 ${payload.rules}`);
  if (!payload.provisional) parts.push(t("arbiter.meta.all_in", "all games in"));
  return parts.join(" · ");
}

function renderRound() {
  if (!ready()) return;
  const round = num("round");
  const { games, byes } = gamesOfRound(round);
  fill($("round-h"), roundWords(round));
  const rows = games.map((g) => el("tr", { dataset: { white: g.white, black: g.black } },
    el("td", null, who(g.white), " – ", who(g.black)),
    el("td", { class: "num" }, RESULT_WORDS[g.result]?.split(" ")[0] || g.result),
    el("td", { class: "actions" },
      el("button", { type: "button", class: "btn small secondary", onclick: () => prefill("correct", g, round) }, t("arbiter.round.correct", "Correct")), " ",
      el("button", { type: "button", class: "btn small danger", onclick: () => prefill("void", g, round) }, t("arbiter.round.void", "Void")))));
  for (const b of byes) rows.push(el("tr", null, el("td", null, who(b.player)), el("td", { class: "num" }, CODE_WORDS[b.code] || b.code), el("td")));
  fill($("round-games"), el("tbody", null, rows.length ? rows : el("tr", null, el("td", { class: "legend" }, t("arbiter.round.none", "No results in this round yet.")))));
  const missing = state.payload.standings.filter((r) => !entryOf(r.start_no, round));
  const named = (r) => (absent(r.start_no, round) ? t("arbiter.round.withdrawn", "{name} (withdrawn)", { name: r.name }) : r.name);
  fill($("round-missing"), missing.length
    ? t("arbiter.round.missing", "Without a result: {players}.", { players: missing.map(named).join(", ") })
    : t("arbiter.round.complete", "Every player has a result in this round."));
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
      const boards = games.map((g) => t("arbiter.warn.board", "board {board} {white}–{black}", { board: g.board, white: short(g.white), black: short(g.black) }));
      if (games.length) parts.push(t("arbiter.warn.no_result", "no result for {games}", { games: boards.join(", ") }));
      const free = freePlayers(r);
      if (free.length) parts.push(t("arbiter.warn.no_bye", "no bye recorded for {players}", { players: free.map((f) => short(f.player)).join(", ") }));
    } else {
      const missing = state.payload.standings.filter((row) => !entryOf(row.start_no, r) && !absent(row.start_no, r));
      if (missing.length) parts.push(t("arbiter.warn.no_entry", "no result or bye for {players}", { players: missing.map((row) => short(row.start_no)).join(", ") }));
    }
    if (parts.length) {
      list.append(el("li", { class: "warning", dataset: { kind: "missing", round: r } },
        t("arbiter.warn.missing", "Round {round} is missing results although round {latest} has started: {missing}.", { round: r, latest, missing: parts.join("; ") })));
    }
  }
  for (const n of notices.filter((x) => x.code === "duplicate-result").slice(-10).reverse()) {
    const e = n.event;
    const now = e.white ? recordedGame(e.round, e.white, e.black) : null;
    const stands = now
      ? t("arbiter.warn.stands", "the game stands {result}", { result: SHORT_RESULT[now.result] || now.result })
      : t("arbiter.warn.no_result_now", "the game has no result now");
    list.append(el("li", { class: "danger", dataset: { kind: "duplicate", code: n.code, notice: n.id } },
      el("time", null, clock(n.at)), " ",
      t("arbiter.warn.twice", "Result entered twice: round {round}, {white} – {black} was entered as {result} again, but it was already recorded ({stands}), so the second entry was refused. Use Correct to change it.",
        { round: e.round, white: who(e.white), black: who(e.black), result: SHORT_RESULT[e.result] || e.result, stands })));
  }
}

/** The shared rejections: duplicates are warnings (above), every other one is listed once under Rejected. */
function renderNotices() {
  const list = $("rejected");
  for (const li of [...list.querySelectorAll("li[data-notice]")]) li.remove();
  for (const n of notices.filter((x) => x.code !== "duplicate-result")) {
    list.prepend(el("li", { class: "danger", dataset: { notice: n.id, code: n.code, id: n.event?.id || "" } },
      el("time", null, clock(n.at)), " ", el("span", { class: "code" }, n.code), " ",
      el("span", null, `${describeEvent(n.event)} — ${reasonOf(n)}`)));
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
    if (m.code === "unauthorized") return refused(reasonOf(m));
    item?.onReject?.(m);
    // what the server refused comes back to every arbiter device as "notices"; only refusals before the
    // event reached the tournament (rate limits) are shown from here
    if (m.code === "rate-limited") alertItem($("rejected"), "danger", m.code, `${item ? item.text : m.id || t("arbiter.event.other", "event")} — ${reasonOf(m)}`, { id: m.id || "", code: m.code });
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
    onTeamSchedule(m);
    for (const [player, round] of m.withdrawals || []) noteWithdrawal(player, round);
    if (ready()) {
      follow();
      renderRows();
      renderWarnings();
      precheck();
    }
  } else if (m.type === "error") {
    if (m.code === "unauthorized") return refused(reasonOf(m));
    alertItem($("rejected"), "danger", m.code, reasonOf(m));
  } else if (m.type === "projection" && m.tournament === tournament) {
    projection = m;
    renderProjection(projection);
  } else if (m.type === "stakes" && m.tournament === tournament) {
    renderPrizes(m, state.payload);
  }
}

function onStatus(s) {
  const node = $("status");
  node.className = `status ${s}`;
  fill(node, STATUS_WORDS[s]);
}

// -- start ----------------------------------------------------------------------------

mountRows(submit);
mountTeams(submit);
syncForm();
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) start(saved);
else showGate("");
