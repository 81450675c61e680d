// Standings that explain themselves: what each tie-break column counts and
// which way is better, what a DE value means, why one player ranks above
// another, and which values can no longer change.  Pure functions of the
// standings payload the server sends; nothing is ranked here.

import { fmt, gamesAgainst, isBye, scoringOf, shortName } from "/static/live.js";

const isKoya = (code) => code.toUpperCase().startsWith("KS");

/**
 * {name, what, better, lowerFirst} for a column code, as the server's tie-break rules word it
 * (the snapshot's `columns`); a code the payload does not describe is named by its code.
 */
export function columnInfo(payload, code) {
  const found = (payload.columns || []).find((c) => c.code === code);
  if (found) return { name: found.name, what: found.what, better: found.better, lowerFirst: found.lower_first };
  return { name: code, what: "a tie-break", better: "", lowerFirst: false };
}

/** "Pts › DE › SB › KS › WON": the ranking order. */
export function rankingOrder(payload) {
  return ["Pts", ...(payload.codes || [])].join(" › ");
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
  const n = Math.round(place);
  const suffix = n % 100 >= 10 && n % 100 <= 20 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" })[n % 10] || "th";
  return `${n}${suffix}`;
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
  const others = group.filter((r) => r.start_no !== row.start_no).map((r) => shortName(r.name)).join(", ");
  return {
    text: placeWords(place) + (unmet.length ? "*" : ""),
    won,
    provisional: unmet.length > 0,
    title: `Direct encounter: ${placeWords(place)} of the ${group.length} players tied on ${fmt(row.points)}`
      + `${sharing > 1 ? " (shared)" : ""} (with ${others}): ${fmt(scored)} point${scored === 1 ? "" : "s"} from `
      + `${games} game${games === 1 ? "" : "s"} against them`
      + (unmet.length ? `; provisional: ${unmet.join(", ")} still to play` : ""),
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
    return { upper, lower, criterion: null, decides: -1, lines: [`${U} and ${L} share rank ${upper.rank}: they are equal on points and on every tie-break (${rankingOrder(payload)}).`] };
  }
  if (upper.points !== lower.points) {
    return { upper, lower, criterion: "PTS", decides: 0, lines: [`Points decide: ${U} ${fmt(upper.points)}, ${L} ${fmt(lower.points)}.`] };
  }
  const lines = [`Equal on points (${fmt(upper.points)}).`];
  for (const code of payload.codes || []) {
    const u = upper.tiebreaks[code], l = lower.tiebreaks[code];
    if (u === l) {
      lines.push(`Equal on ${code} (${code.toUpperCase() === "DE" ? (u ? `both ${placeWords(u)}` : "no separation") : fmt(u)}).`);
      continue;
    }
    const info = columnInfo(payload, code);
    const decides = lines.length;
    if (code.toUpperCase() === "DE") {
      const du = directEncounter(payload, upper, code), dl = directEncounter(payload, lower, code);
      const h2h = gamesAgainst(upper, lower.start_no);
      const scored = h2h.reduce((sum, [, , , c]) => sum + ((scoringOf(payload) || {})[c] ?? 0), 0);
      lines.push(`${info.name} (${code}) decides: ${U} ${du ? du.text : "—"}, ${L} ${dl ? dl.text : "—"} among the tied players`
        + (info.better ? ` (${info.better})` : "")
        + (h2h.length ? `; ${U} scored ${fmt(scored)} of ${h2h.length} against ${L}` : `; ${U} and ${L} have not played each other`)
        + (du?.provisional || dl?.provisional ? "; provisional: the tied players have not all met yet." : "."));
    } else {
      lines.push(`${info.name} (${code}) decides: ${U} ${fmt(u)}, ${L} ${fmt(l)}${info.better ? ` (${info.better})` : ""}.`);
      if (isKoya(code)) {
        lines.push(`Counting for ${U}: ${koyaOpponents(payload, upper).join(", ") || "nobody"}. Counting for ${L}: ${koyaOpponents(payload, lower).join(", ") || "nobody"}.`);
      }
    }
    return { upper, lower, criterion: code, decides, lines };
  }
  return { upper, lower, criterion: null, decides: -1, lines };
}
