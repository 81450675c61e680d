// A team event on the arbiter dashboard: a match entered board by board.  The arbiter picks the round and
// the two teams (the first-named first); every board is a row with its two players (board order, each
// team's reserves offered in a menu while the board has no result) and one click per result; a match
// forfeited whole is one action (the first-named team wins, the second wins, or both lose: every board not
// yet in gets its forfeit, by the board's colours).  The teams, their players and the colour sequence come
// with the arbiters' "schedule" message (its "teams"); results go out as the page's other entries do.

import { el, fill } from "/static/live.js";
import { t } from "/static/i18n.js";
import { SHORT_RESULT, newId, recordedGame, state, who } from "/static/arbiter-state.js";

const $ = (id) => document.getElementById(id);
let setup = null;          // the schedule message's "teams": {boards, colours, teams: [{team, name, players}]}
let submit = () => false;
const seated = new Map();  // "round:team:board" → the start number the arbiter put on that board (a reserve)
const sending = new Set(); // "round:white-black" of boards sent and not yet acknowledged

/** Wire the match card to the page's submit(event, hooks) (see arbiter.js). */
export function mountTeams(send) {
  submit = send;
}

/** The arbiters' schedule message: a team event's set-up shows the match card. */
export function onTeamSchedule(m) {
  setup = m.teams || null;
  renderMatch();
}

/** The colour of the first-named team on board `board` (1-based): the event's sequence, else W B W B …. */
function firstColour(board) {
  const c = setup.colours || "";
  if (c.length) return c[(board - 1) % c.length];
  return board % 2 === 1 ? "W" : "B";
}

function teamOf(number) {
  return setup.teams.find((x) => x.team === number);
}

/** The boards of the match in round `round` of `first` against `second`: players, colours, result. */
function boardsOf(round, first, second) {
  const a = teamOf(first), b = teamOf(second);
  const out = [];
  for (let board = 1; board <= setup.boards; board++) {
    const mine = seated.get(`${round}:${first}:${board}`) ?? a.players[board - 1];
    const theirs = seated.get(`${round}:${second}:${board}`) ?? b.players[board - 1];
    const firstWhite = firstColour(board) === "W";
    const white = firstWhite ? mine : theirs, black = firstWhite ? theirs : mine;
    const recorded = white && black ? recordedGame(round, white, black) : null;
    out.push({ board, white, black, firstWhite, recorded });
  }
  return out;
}

function boardEvent(round, g, result) {
  return { type: "result_recorded", id: newId(), tournament: state.payload.tournament, round, white: g.white, black: g.black, result };
}

function send(round, g, result) {
  const key = `${round}:${g.white}-${g.black}`;
  if (sending.has(key)) return;
  sending.add(key);
  const done = () => { sending.delete(key); renderMatch(); };
  if (!submit(boardEvent(round, g, result), { onAck: done, onReject: done })) sending.delete(key);
  renderMatch();
}

/** The forfeit a board gets when the match is forfeited whole: `winner` "first", "second" or "none". */
function forfeitResult(g, winner) {
  if (winner === "none") return "--";
  const whiteWins = (winner === "first") === g.firstWhite;
  return whiteWins ? "+-" : "-+";
}

function forfeitMatch(round, boards, winner) {
  for (const g of boards) if (!g.recorded && g.white && g.black) send(round, g, forfeitResult(g, winner));
}

/** A team's players a board can seat: the line-up and reserves, not seated on another board of the match. */
function playerSelect(round, team, board, current, others) {
  const tm = teamOf(team);
  const key = `${round}:${team}:${board}`;
  const select = el("select", { class: "seat", "aria-label": t("arbiter.match.seat", "Board {board}: {team}'s player", { board, team: tm.name }) },
    tm.players.filter((p) => p === current || !others.includes(p)).map((p) => el("option", { value: String(p), selected: p === current }, who(p))));
  select.addEventListener("change", () => { seated.set(key, Number(select.value)); renderMatch(); });
  return select;
}

function boardRow(round, first, second, g, boards) {
  const seatedFirst = boards.filter((x) => x !== g).map((x) => (x.firstWhite ? x.white : x.black));
  const seatedSecond = boards.filter((x) => x !== g).map((x) => (x.firstWhite ? x.black : x.white));
  const reserves = (team) => teamOf(team).players.length > setup.boards;
  const side = (player, team, others) => (!g.recorded && reserves(team) ? playerSelect(round, team, g.board, player, others) : el("span", null, who(player)));
  const [whiteTeam, blackTeam] = g.firstWhite ? [first, second] : [second, first];
  const [whiteOthers, blackOthers] = g.firstWhite ? [seatedFirst, seatedSecond] : [seatedSecond, seatedFirst];
  const busy = sending.has(`${round}:${g.white}-${g.black}`);
  return el("tr", { dataset: { board: g.board, white: g.white, black: g.black } },
    el("td", { class: "num" }, String(g.board)),
    el("td", { class: "white" }, side(g.white, whiteTeam, whiteOthers)),
    el("td", { class: "black" }, side(g.black, blackTeam, blackOthers)),
    el("td", { class: "result" }, g.recorded
      ? el("strong", { class: "recorded" }, SHORT_RESULT[g.recorded.result] || g.recorded.result)
      : ["1-0", "1/2-1/2", "0-1"].map((result) => {
        const b = el("button", { type: "button", class: "one-click", dataset: { result }, disabled: busy }, SHORT_RESULT[result]);
        b.addEventListener("click", () => send(round, g, result));
        return b;
      })));
}

/** Draw the match card (hidden unless the tournament is a team event and the standings are in). */
export function renderMatch() {
  const card = $("match");
  if (!card) return;
  card.hidden = !setup || !state.payload?.standings.length;
  if (card.hidden) return;
  const roundSel = $("match-round"), firstSel = $("match-first"), secondSel = $("match-second");
  const rounds = state.payload.rounds || 1;
  if (roundSel.options.length !== rounds) {
    fill(roundSel, Array.from({ length: rounds }, (_, k) => el("option", { value: String(k + 1) }, String(k + 1))));
  }
  if (firstSel.options.length !== setup.teams.length) {
    for (const sel of [firstSel, secondSel]) fill(sel, setup.teams.map((x) => el("option", { value: String(x.team) }, x.name)));
    secondSel.value = String(setup.teams[1].team);
  }
  const round = Number(roundSel.value), first = Number(firstSel.value), second = Number(secondSel.value);
  const body = $("match-boards");
  if (first === second) {
    fill(body, el("p", { class: "legend" }, t("arbiter.match.same", "Choose two different teams.")));
    return;
  }
  const boards = boardsOf(round, first, second);
  const open = boards.some((g) => !g.recorded);
  const names = { first: teamOf(first).name, second: teamOf(second).name };
  const forfeit = (winner, words) => {
    const b = el("button", { type: "button", class: "forfeit", dataset: { winner }, disabled: !open }, words);
    b.addEventListener("click", () => forfeitMatch(round, boards, winner));
    return b;
  };
  fill(body,
    el("table", { class: "match-boards" },
      el("thead", null, el("tr", null,
        el("th", { class: "num", scope: "col" }, t("arbiter.match.board", "Board")),
        el("th", { scope: "col" }, t("arbiter.match.white", "White")),
        el("th", { scope: "col" }, t("arbiter.match.black", "Black")),
        el("th", { scope: "col" }, t("arbiter.match.result", "Result")))),
      el("tbody", null, boards.map((g) => boardRow(round, first, second, g, boards)))),
    el("p", { class: "match-forfeit" },
      el("span", null, t("arbiter.match.forfeit", "The whole match by forfeit:"), " "),
      forfeit("first", t("arbiter.match.forfeit_win", "{team} wins", { team: names.first })), " ",
      forfeit("second", t("arbiter.match.forfeit_win", "{team} wins", { team: names.second })), " ",
      forfeit("none", t("arbiter.match.forfeit_none", "both lose (−/−)"))));
}

for (const id of ["match-round", "match-first", "match-second"]) {
  document.getElementById(id)?.addEventListener("change", () => renderMatch());
}
