// Standings that explain themselves: what each tie-break column counts and
// which way is better, what a DE value means, why one player ranks above
// another, and which values can no longer change.  Pure functions of the
// standings payload the server sends; nothing is ranked here.

import { fmt, gamesAgainst, isBye, join, scoringOf, shortName } from "/static/live.js";
import { ordinal, say, t, tn } from "/static/i18n.js";

const isKoya = (code) => code.toUpperCase().startsWith("KS");

/**
 * {name, what, better, lowerFirst} for a column code, in the page's language: the server's phrases
 * `tiebreak.<kind>.name|what|better` (the kind is the code before any "/"; KS/L±n: `tiebreak.KS.what.limit`),
 * else the English the snapshot's `columns` carry; a code the payload does not describe is named by its code.
 */
export function columnInfo(payload, code) {
  const found = (payload.columns || []).find((c) => c.code === code);
  const kind = code.split("/")[0].toUpperCase();
  const limit = kind === "KS" ? /\/L([+-]\d+)$/i.exec(code) : null;
  // a page opened before the tournament has no columns yet: the phrases of the kind still name it
  const english = found || { name: code, what: t("column.unknown", "a tie-break"), better: "", lower_first: false };
  const what = limit
    ? say({ key: "tiebreak.KS.what.limit", args: { limit: limit[1], n: Math.abs(Number(limit[1])) } }, String, english.what)
    : say({ key: `tiebreak.${kind}.what` }, String, english.what);
  return {
    name: say({ key: `tiebreak.${kind}.name` }, String, english.name),
    what,
    better: say({ key: `tiebreak.${kind}.better` }, String, english.better),
    lowerFirst: english.lower_first,
  };
}

/** "Pts" in the page's language (the points column). */
export function ptsLabel() {
  return t("column.pts", "Pts");
}

/** "Pts › DE › SB › KS › WON": the ranking order. */
export function rankingOrder(payload) {
  return [ptsLabel(), ...(payload.codes || [])].join(" › ");
}

/** The rows tied with `row` on points and on every code before `code`. */
function tiedBefore(payload, row, code) {
  const codes = payload.codes || [];
  const before = codes.slice(0, codes.indexOf(code));
  return payload.standings.filter((r) => r.points === row.points && before.every((c) => r.tiebreaks[c] === row.tiebreaks[c]));
}

/** A DE value as every interface writes it (the server's place among the tied): "1st", "2nd", "—" for 0. */
export function placeWords(place) {
  if (!place || place <= 0) return "—";
  return ordinal(Math.round(place));
}

/** "2½ points", "1 point" in the page's language. */
export function pointsCount(value) {
  return tn("count.points", "{points} point", "{points} points", { n: value, points: fmt(value) });
}

/** "3 games", "1 game" in the page's language. */
export function gamesCount(n) {
  return tn("count.games", "{n} game", "{n} games", { n });
}

/** Games a round robin has between two players (two per pair in a double round robin). */
function meetings(payload) {
  const n = payload.standings.length;
  return n > 1 && payload.rounds >= 2 * (n - 1) ? 2 : 1;
}

/**
 * What a DE value means for `row`: {text, title, provisional, won}, or null when DE is 0.
 * `text` is the place among the players tied before it ("1st", as the CLI and `tracker check` write it),
 * with "*" while two of them have still to meet (the games between them can change it: provisional);
 * the title says who is tied and the points scored against them.
 */
export function directEncounter(payload, row, code = "DE") {
  const place = row.tiebreaks[code];
  if (!place) return null;
  const group = tiedBefore(payload, row, code);
  const points = scoringOf(payload);
  let scored = 0, games = 0;
  for (const other of group) {
    if (other.start_no === row.start_no) continue;
    for (const [, , , c] of gamesAgainst(row, other.start_no)) {
      scored += points ? points[c] ?? 0 : 0;
      games += 1;
    }
  }
  const cycles = meetings(payload);
  const unmet = payload.provisional ? group.flatMap((a, i) => group.slice(i + 1)
    .filter((b) => gamesAgainst(a, b.start_no).length < cycles).map((b) => `${shortName(a.name)}–${shortName(b.name)}`)) : [];
  const sharing = group.filter((r) => r.tiebreaks[code] === place).length;
  const won = place === 1 && sharing === 1;
  const others = join(group.filter((r) => r.start_no !== row.start_no).map((r) => shortName(r.name)));
  const args = { place: placeWords(place), tied: group.length, points: fmt(row.points), others };
  const head = sharing > 1
    ? t("de.title.shared", "Direct encounter: {place} of the {tied} players tied on {points} (shared) (with {others})", args)
    : t("de.title", "Direct encounter: {place} of the {tied} players tied on {points} (with {others})", args);
  const scoredWords = t("de.title.scored", "{points} from {games} against them", { points: pointsCount(scored), games: gamesCount(games) });
  return {
    text: placeWords(place) + (unmet.length ? "*" : ""),
    won,
    provisional: unmet.length > 0,
    title: `${head}: ${scoredWords}`
      + (unmet.length ? t("de.title.unmet", "; provisional: {pairs} still to play", { pairs: join(unmet) }) : ""),
  };
}

/** Whether `row` has an entry (game or bye) in every round: its points can no longer change. */
export function pointsSettled(payload, row) {
  return new Set(row.results.map((x) => x[0])).size >= payload.rounds;
}

function maxPoints(payload, row) {
  const s = payload.scoring || {};
  const win = Math.max(s.win ?? 1, s.forfeit_win ?? 0, s.full_bye ?? 0, s.pab ?? 0);
  const left = Math.max(0, payload.rounds - new Set(row.results.map((x) => x[0])).size);
  return row.points + left * win;
}

/**
 * Whether `row`'s rank can no longer change: everyone above is out of reach
 * (more points now than `row` can reach) and nobody below can catch up.
 * Sound but not complete: a rank decided by tie-breaks is not called locked.
 */
export function rankLocked(payload, row) {
  if (!payload.provisional) return true;
  const mine = maxPoints(payload, row);
  return payload.standings.every((r) => r.start_no === row.start_no
    || (r.rank < row.rank ? r.points > mine : r.rank > row.rank ? maxPoints(payload, r) < row.points : false));
}

/** Opponents counting for `code` (Koya): those the server marks qualified. */
function koyaOpponents(payload, row) {
  const byNo = new Map(payload.standings.map((r) => [r.start_no, r]));
  const seen = new Set();
  for (const entry of row.results) if (!isBye(entry) && byNo.get(entry[1])?.qualified) seen.add(entry[1]);
  return [...seen].map((no) => shortName(byNo.get(no).name));
}

/**
 * Why `a` ranks above `b` (or not): {upper, lower, criterion, decides, lines[]}
 * where `criterion` is the first that separates them ("PTS", a code, or null
 * when they share the rank), `lines` are sentences with both values and
 * `decides` the index of the line that names the deciding criterion.
 */
export function whyAbove(payload, a, b) {
  const [upper, lower] = a.rank <= b.rank ? [a, b] : [b, a];
  const U = shortName(upper.name), L = shortName(lower.name);
  if (upper.rank === lower.rank) {
    return { upper, lower, criterion: null, decides: -1, lines: [
      t("why.share", "{a} and {b} share rank {rank}: they are equal on points and on every tie-break ({order}).", { a: U, b: L, rank: upper.rank, order: rankingOrder(payload) })] };
  }
  if (upper.points !== lower.points) {
    return { upper, lower, criterion: "PTS", decides: 0, lines: [
      t("why.points", "Points decide: {a} {pa}, {b} {pb}.", { a: U, pa: fmt(upper.points), b: L, pb: fmt(lower.points) })] };
  }
  const lines = [t("why.equal_points", "Equal on points ({points}).", { points: fmt(upper.points) })];
  for (const code of payload.codes || []) {
    const u = upper.tiebreaks[code], l = lower.tiebreaks[code];
    if (u === l) {
      const value = code.toUpperCase() === "DE" ? (u ? t("why.both", "both {place}", { place: placeWords(u) }) : t("why.no_separation", "no separation")) : fmt(u);
      lines.push(t("why.equal_on", "Equal on {code} ({value}).", { code, value }));
      continue;
    }
    const info = columnInfo(payload, code);
    const decides = lines.length;
    const better = info.better ? `; ${info.better}` : "";  // not in parentheses: DE's own has some
    if (code.toUpperCase() === "DE") {
      const du = directEncounter(payload, upper, code), dl = directEncounter(payload, lower, code);
      const h2h = gamesAgainst(upper, lower.start_no);
      const scored = h2h.reduce((sum, [, , , c]) => sum + ((scoringOf(payload) || {})[c] ?? 0), 0);
      const args = { name: info.name, code, a: U, va: du ? du.text : "—", b: L, vb: dl ? dl.text : "—", better };
      lines.push(t("why.de", "{name} ({code}) decides: {a} {va}, {b} {vb} among the tied players{better}", args)
        + (h2h.length ? t("why.de.scored", "; {a} scored {points} of {games} against {b}", { a: U, points: fmt(scored), games: h2h.length, b: L })
          : t("why.de.unplayed", "; {a} and {b} have not played each other", { a: U, b: L }))
        + (du?.provisional || dl?.provisional ? t("why.de.provisional", "; provisional: the tied players have not all met yet.") : "."));
    } else {
      lines.push(t("why.decides", "{name} ({code}) decides: {a} {va}, {b} {vb}{better}.", { name: info.name, code, a: U, va: fmt(u), b: L, vb: fmt(l), better }));
      if (isKoya(code)) {
        const nobody = t("why.nobody", "nobody");
        lines.push(t("why.counting", "Counting for {a}: {for_a}. Counting for {b}: {for_b}.", {
          a: U, for_a: join(koyaOpponents(payload, upper)) || nobody, b: L, for_b: join(koyaOpponents(payload, lower)) || nobody }));
      }
    }
    return { upper, lower, criterion: code, decides, lines };
  }
  return { upper, lower, criterion: null, decides: -1, lines };
}
