// What the arbiter dashboard knows, shared by its modules: the standings the
// server sent, the published schedule, the withdrawals, and the questions every
// part of the page asks of them (who is this, what was recorded, what is still
// to enter).  Nothing here is worked out from the rules: results, byes and
// withdrawal rounds are the server's.

import { isBye } from "/static/live.js";
import { say, t } from "/static/i18n.js";

export const state = {
  payload: null,             // the standings at the seq shown
  schedule: [],              // schedule[r - 1]: the [white, black] pairs of round r (the server's "schedule")
  withdrawals: new Map(),    // start number → the first round the player no longer plays (0: not given)
};

export const SHORT_RESULT = { "1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−" };

export const ready = () => !!state.payload && state.payload.standings.length > 0;

export function rowOf(startNo) {
  return state.payload?.standings.find((r) => r.start_no === startNo);
}

export function who(startNo) {
  const row = rowOf(startNo);
  return row ? `${startNo} ${row.name}` : t("arbiter.player_no", "player {n}", { n: startNo });
}

/** How the server's sentences name a player: the surname ("Caruana, Fabiano" → "Caruana"). */
export function surname(startNo) {
  const name = rowOf(startNo)?.name;
  return name === undefined ? String(startNo) : name.split(",")[0].trim() || name;
}

/**
 * An update's summary in the page's language from its phrases (`summary_said`: the head, then its parts, joined as
 * tracker.core.apply.summary_text joins them); the server's English `english` when there are none.
 */
export function summaryOf(said, english) {
  if (!Array.isArray(said) || !said.length) return english;
  const head = say(said[0], surname, null);
  if (head === null) return english;
  if (said.length === 1) return head;
  let parts = say(said[said.length - 1], surname, english);
  for (let i = said.length - 2; i >= 1; i--) parts = say({ key: "summary.parts", args: { first: say(said[i], surname), next: parts } }, String, `${say(said[i], surname)}, ${parts}`);
  return say({ key: "summary", args: { head, parts } }, String, `${head}: ${parts}`);
}

/** A server's reason (a rejection, a notice, an error) in the page's language: its phrase, else its English. */
export function reasonOf(m) {
  // a subscribe's "error" carries no phrase; a wrong token's sentence is the server's rejected.token
  const said = m?.reason_said ?? (m?.type === "error" && m.code === "unauthorized" ? { key: "rejected.token", args: {} } : null);
  return say(said, String, m?.reason ?? "");
}

const GAME_CODES = {
  "1/0": "1-0", "=/=": "1/2-1/2", "0/1": "0-1", "+/-": "+-", "-/+": "-+", "-/-": "--",
  "W/L": "1-0", "D/D": "1/2-1/2", "L/W": "0-1",
};

/** The game of round r where `white` had White, from the rows: {white, black, result} or null. */
export function recordedGame(round, white, black) {
  const w = rowOf(white), b = rowOf(black);
  if (!w || !b) return null;
  const we = w.results.find((x) => x[0] === round && x[1] === black && x[2] === "w");
  const be = b.results.find((x) => x[0] === round && x[1] === white);
  if (!we || !be) return null;
  return { white, black, result: GAME_CODES[`${we[3]}/${be[3]}`] || `${we[3]}/${be[3]}` };
}

export function entryOf(startNo, round) {
  return rowOf(startNo)?.results.find((x) => x[0] === round) || null;
}

/** Whether `startNo` no longer plays in round r: withdrawn from that round or earlier (or without a round). */
export function absent(startNo, round) {
  const from = state.withdrawals.get(startNo) ?? (rowOf(startNo)?.withdrawn ? 0 : undefined);
  return from !== undefined && (from === 0 || round >= from);
}

/** The forfeit a game with a withdrawn player is recorded as: the absent side loses. */
export function forfeitOf(game) {
  const w = absent(game.white, game.round), b = absent(game.black, game.round);
  return w && b ? "--" : w ? "-+" : "+-";
}

/** The last round anyone has a result or a bye in (0 before the first). */
export function latestRound() {
  return Math.max(0, ...state.payload.standings.flatMap((r) => r.results.map((x) => x[0])));
}

/** The scheduled games of round r (board order) with no result yet: [{round, white, black, board}]. */
export function openGames(round) {
  return (state.schedule[round - 1] || []).map(([white, black], i) => ({ round, white, black, board: i + 1 }))
    .filter((g) => !entryOf(g.white, round) && !entryOf(g.black, round));
}

/** The games of round r an arbiter enters result by result: open, neither player withdrawn by then. */
export function playableGames(round) {
  return openGames(round).filter((g) => !absent(g.white, round) && !absent(g.black, round));
}

/**
 * Players with nothing in round r and no game to play in it (with a schedule): the free player of an odd
 * field, and the opponent of a requested bye that replaced the game: [{player, why, by?}].
 */
export function freePlayers(round) {
  if (!state.schedule.length || round > state.schedule.length) return [];
  const pairs = state.schedule[round - 1] || [];
  const free = [];
  for (const row of [...state.payload.standings].sort((a, b) => a.start_no - b.start_no)) {
    const no = row.start_no;
    if (entryOf(no, round) || absent(no, round)) continue;
    const pair = pairs.find(([w, b]) => w === no || b === no);
    if (!pair) free.push({ player: no, why: "free" });
    else {
      const other = pair[0] === no ? pair[1] : pair[0];
      const theirs = entryOf(other, round);
      if (theirs && isBye(theirs)) free.push({ player: no, why: "replaced", by: other });
    }
  }
  return free;
}

/** The first round with a game still to enter (or the last round). */
export function firstOpenRound() {
  const rounds = state.payload.rounds;
  for (let r = 1; r <= rounds; r++) {
    if (state.schedule.length ? playableGames(r).length : state.payload.standings.some((row) => !entryOf(row.start_no, r) && !absent(row.start_no, r))) return r;
  }
  return rounds;
}

/** Recorded games and byes of round r, from the rows. */
export function gamesOfRound(round) {
  const games = [], byes = [];
  for (const row of state.payload.standings) {
    const e = row.results.find((x) => x[0] === round);
    if (!e) continue;
    if (isBye(e)) byes.push({ player: row.start_no, code: e[3] });
    else if (e[2] === "w") games.push(recordedGame(round, row.start_no, e[1]));
  }
  games.sort((a, b) => a.white - b.white);
  return { games: games.filter(Boolean), byes };
}

/** Note a withdrawal the server announced (the schedule message on subscribe, or an update's event). */
export function noteWithdrawal(startNo, round) {
  state.withdrawals.set(startNo, round || 0);
}

export function newId() {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return `arbiter-${Date.now().toString(36)}-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
