// One-click entry on the arbiter dashboard: every scheduled game still without a
// result is a row (1–0 / ½–½ / 0–1, forfeits in its menu, keys 1 = 0 on the
// focused row, Undo for a few seconds); a withdrawn player's games from their
// withdrawal round on are rows with the one forfeit they can be; a player with
// no game in a round (an odd field's free round, or the opponent of a requested
// bye) is a row with the byes.  Rounds are listed open up to the first one
// with something to enter; later ones are folded.

import { el, fill } from "/static/live.js";
import { join, t, tn } from "/static/i18n.js";
import {
  SHORT_RESULT, absent, forfeitOf, freePlayers, newId, openGames, ready, state, who,
} from "/static/arbiter-state.js";

const UNDO_MS = 6000;          // how long an entry can be undone from its row
const recent = new Map();      // row key → {event, result, state: "sending"|"done", until, undoing}
let submit = () => false;
let undoTimer = null;

/** Wire the rows to the page's submit(event, hooks) (see arbiter.js). */
export function mountRows(send) {
  submit = send;
  $("pending").addEventListener("keydown", onKey);
}

/** Whether an entry made from a row is still in its undo window (the form then stays where it is). */
export const entering = () => recent.size > 0;

const $ = (id) => document.getElementById(id);
const keyOf = (g) => `${g.round}:${g.white}-${g.black}`;
const freeKey = (round, player) => `${round}:bye-${player}`;

/** Record `event` from the row `key`; the row then offers Undo for a few seconds. */
function enter(key, event, result, undo) {
  if (recent.has(key)) return;
  const item = { result, state: "sending", until: 0, undo };
  recent.set(key, item);
  const sent = submit(event, {
    onAck: () => { item.state = "done"; item.until = Date.now() + UNDO_MS; tick(); renderRows(); },
    onReject: () => { recent.delete(key); renderRows(); },
  });
  if (!sent) recent.delete(key);
  renderRows();
}

function enterGame(game, result) {
  const { tournament } = state.payload;
  enter(keyOf(game), { type: "result_recorded", id: newId(), tournament, round: game.round, white: game.white, black: game.black, result }, result,
    { type: "result_voided", tournament, round: game.round, white: game.white, black: game.black });
}

function enterBye(round, player, kind) {
  const { tournament } = state.payload;
  enter(freeKey(round, player), { type: "bye_recorded", id: newId(), tournament, round, player, kind }, `${kind} bye`,
    { type: "bye_voided", tournament, round, player });
}

/** Take back an entry made from a row: void it (the row comes back). */
function undo(key) {
  const item = recent.get(key);
  if (!item || item.state !== "done" || item.undoing) return;
  item.undoing = true;
  const sent = submit({ ...item.undo, id: newId() }, {
    onAck: () => { recent.delete(key); renderRows(); focusRow(key); },
    onReject: () => { item.undoing = false; renderRows(); },
  });
  if (!sent) item.undoing = false;
  renderRows();
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
  renderRows();
  if (live) undoTimer = setTimeout(tick, 1000);
}

function focusRow(key) {
  const row = document.querySelector(`#pending [data-pending="${key}"]`);
  if (row) row.focus();
}

function doneRow(key, title, item) {
  const left = Math.max(0, Math.ceil((item.until - Date.now()) / 1000));
  return el("div", { class: "pending-row done", tabindex: 0, dataset: { pending: key, entered: item.result } },
    title,
    el("span", { class: "entered" }, t("arbiter.row.entered", "entered {result}", { result: enteredWords(item.result) })),
    el("span", { class: "undo-bar" },
      el("button", { type: "button", class: "btn small secondary", dataset: { undo: key }, disabled: item.undoing, onclick: () => undo(key) },
        item.undoing ? t("arbiter.row.undoing", "Undoing…") : t("arbiter.row.undo", "Undo")),
      el("span", { class: "countdown" }, item.undoing ? "" : t("arbiter.row.seconds", "{n} s", { n: left }))));
}

/** What a row entered: a result (1–0) or a bye ("half bye"). */
function enteredWords(result) {
  switch (result) {
    case "zero bye": return t("arbiter.row.bye.zero", "zero bye");
    case "half bye": return t("arbiter.row.bye.half", "half bye");
    case "full bye": return t("arbiter.row.bye.full", "full bye");
    default: return SHORT_RESULT[result] || result;
  }
}

function gameRow(game) {
  const key = keyOf(game);
  const item = recent.get(key);
  const title = el("span", { class: "game" }, el("span", { class: "board-no" }, boardWords(game.board)), who(game.white), " – ", who(game.black));
  if (item?.state === "done") return doneRow(key, title, item);
  const sending = item?.state === "sending";
  const label = t("arbiter.row.label", "Round {round}: {white} against {black}", { round: game.round, white: who(game.white), black: who(game.black) });
  return el("div", { class: `pending-row${sending ? " sending" : ""}`, tabindex: 0, dataset: { pending: key }, "aria-label": label },
    title,
    el("span", { class: "results" },
      ["1-0", "1/2-1/2", "0-1"].map((r) => el("button", {
        type: "button", class: "btn small", dataset: { result: r }, disabled: sending,
        title: resultTitle(r),
        onclick: () => enterGame(game, r),
      }, SHORT_RESULT[r])),
      el("select", { "aria-label": t("arbiter.row.forfeit", "Forfeit"), dataset: { forfeit: key }, disabled: sending, onchange: (e) => { if (e.target.value) enterGame(game, e.target.value); } },
        el("option", { value: "" }, t("arbiter.row.forfeit_menu", "Forfeit…")),
        el("option", { value: "+-" }, t("arbiter.forfeit.white", "+/− White wins by forfeit")),
        el("option", { value: "-+" }, t("arbiter.forfeit.black", "−/+ Black wins by forfeit")),
        el("option", { value: "--" }, t("arbiter.forfeit.double", "−/− double forfeit")))));
}

const boardWords = (board) => t("arbiter.row.board", "Board {n}", { n: board });

function resultTitle(result) {
  switch (result) {
    case "1-0": return t("arbiter.row.white_wins", "White wins (key 1)");
    case "1/2-1/2": return t("arbiter.row.draw", "Draw (key =)");
    default: return t("arbiter.row.black_wins", "Black wins (key 0)");
  }
}

/** A game of a withdrawn player from their withdrawal round on: it can only be their forfeit. */
function forfeitRow(game) {
  const key = keyOf(game);
  const item = recent.get(key);
  const gone = [game.white, game.black].filter((p) => absent(p, game.round));
  const title = el("span", { class: "game" }, el("span", { class: "board-no" }, boardWords(game.board)), who(game.white), " – ", who(game.black),
    el("span", { class: "tag" }, tn("arbiter.row.withdrew", "{players} withdrew", "{players} withdrew", { n: gone.length, players: join(gone.map(who)) })));
  if (item?.state === "done") return doneRow(key, title, item);
  const result = forfeitOf(game);
  return el("div", { class: `pending-row withdrawn${item ? " sending" : ""}`, tabindex: 0, dataset: { pending: key, withdrawn: "" } },
    title,
    el("span", { class: "results" },
      el("button", { type: "button", class: "btn small secondary", dataset: { forfeit: result }, disabled: !!item, onclick: () => enterGame(game, result) },
        t("arbiter.row.record_forfeit", "Record the forfeit {result}", { result: SHORT_RESULT[result] }))));
}

/** A player with no game in the round: the byes the arbiter can record for them. */
function freeRow(round, free) {
  const key = freeKey(round, free.player);
  const item = recent.get(key);
  const why = free.why === "free" ? t("arbiter.row.free", "free round") : t("arbiter.row.replaced", "no game: {player} took a requested bye", { player: who(free.by) });
  const title = el("span", { class: "game" }, el("span", { class: "board-no" }, byeWord()), who(free.player), el("span", { class: "tag" }, why));
  if (item?.state === "done") return doneRow(key, title, item);
  return el("div", { class: `pending-row free${item ? " sending" : ""}`, tabindex: 0, dataset: { pending: key, free: free.why } },
    title,
    el("span", { class: "results" },
      [
        ["zero", t("arbiter.row.bye0", "0 bye"), t("arbiter.row.bye0.title", "Zero-point bye")],
        ["half", t("arbiter.row.bye_half", "½ bye"), t("arbiter.row.bye_half.title", "Half-point bye")],
        ["full", t("arbiter.row.bye1", "1 bye"), t("arbiter.row.bye1.title", "Full-point bye")],
      ].map(([kind, text, title]) =>
        el("button", { type: "button", class: "btn small secondary", dataset: { bye: kind }, title, disabled: !!item, onclick: () => enterBye(round, free.player, kind) }, text))));
}

/** The rows of round r: games to enter, withdrawn players' forfeits, free players; and whether any is still to do. */
function roundRows(r) {
  const recentIn = (key) => recent.has(key);
  const games = (state.schedule[r - 1] || []).map(([white, black], i) => ({ round: r, white, black, board: i + 1 }));
  const open = new Set(openGames(r).map(keyOf));
  const rows = [];
  let todo = 0;
  for (const g of games) {
    const key = keyOf(g);
    if (!open.has(key) && !recentIn(key)) continue;
    const gone = absent(g.white, r) || absent(g.black, r);
    rows.push(gone ? forfeitRow(g) : gameRow(g));
    if (recent.get(key)?.state !== "done") todo += 1;
  }
  for (const free of freePlayers(r)) {
    rows.push(freeRow(r, free));
    todo += 1;
  }
  for (const [key, item] of recent) {  // a bye just entered from a row: its player has an entry now
    if (key.startsWith(`${r}:bye-`) && !rows.some((row) => row.dataset.pending === key) && item.state === "done") {
      const player = Number(key.split("-")[1]);
      rows.push(doneRow(key, el("span", { class: "game" }, el("span", { class: "board-no" }, byeWord()), who(player)), item));
    }
  }
  return { rows, todo };
}

const byeWord = () => t("arbiter.row.bye", "Bye");

export function renderRows() {
  const box = $("pending");
  if (!ready()) return;
  if (!state.schedule.length) {
    fill(box, el("p", { class: "legend" }, t("arbiter.rows.no_schedule", "This tournament was opened without a schedule: enter results with the form below.")));
    return;
  }
  const focused = document.activeElement?.closest?.("[data-pending]")?.dataset.pending;
  const unfolded = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.round));
  const rounds = [];
  let reached = false;  // a round with something still to enter has been listed: the later ones fold
  for (let r = 1; r <= state.schedule.length; r++) {
    const { rows, todo } = roundRows(r);
    if (!rows.length) continue;
    const heading = t("arbiter.rows.round", "Round {round} · {n} to enter", { round: r, n: todo });
    rounds.push(reached
      ? el("details", { class: "pending-round", dataset: { round: r }, open: unfolded.has(String(r)) }, el("summary", null, heading), rows)
      : el("div", { class: "pending-round", dataset: { round: r } }, el("h3", null, heading), rows));
    reached = reached || todo > 0;
  }
  fill(box, rounds.length ? rounds : el("p", { class: "legend" }, t("arbiter.rows.done", "Every scheduled game has a result.")));
  if (focused) focusRow(focused);
}

const KEYS = { "1": "1-0", "=": "1/2-1/2", "5": "1/2-1/2", "0": "0-1" };

function onKey(e) {
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
  if ((e.key === "u" || e.key === "Backspace") && recent.get(row.dataset.pending)?.state === "done") {
    undo(row.dataset.pending);
    e.preventDefault();
    return;
  }
  const result = KEYS[e.key];
  if (!result || row.classList.contains("done") || "withdrawn" in row.dataset || "free" in row.dataset) return;
  e.preventDefault();
  const [round, players] = row.dataset.pending.split(":");
  const [white, black] = players.split("-").map(Number);
  const next = rows[at + 1]?.dataset.pending;
  enterGame({ round: Number(round), white, black, board: 0 }, result);
  if (next) focusRow(next);
}
