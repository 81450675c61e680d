// A team event as teams: the team standings table (the payload's "teams" rows, in their order) and the
// match cards of each round (the payload's "matches": two teams, the boards, the match score).
//
// The spectator page mounts it above its individual tables and the overlay draws its team table with
// teamColumns/teamWords; both redraw from each standings message, as their individual tables do.
// Names are text nodes (el/fill): nothing from the server is ever written as HTML.

import { el, fill, fmt, resultWords } from "/static/live.js";
import { say, t, tn } from "/static/i18n.js";
import { outcomeWords } from "/static/stakes.js";

/** Short result symbols for a board (a forfeit as +/−); the title says it in words. */
const RESULT_SYMBOLS = { "1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−" };

/** What each team kind is, in the page's language (the kind is the code before ":" or "/"; ESB… are SB). */
function kindWords(code) {
  const kind = code.toUpperCase().split(/[:/]/)[0];
  switch (/^E[MG]*SB$/.test(kind) ? "SB" : kind.startsWith("EDE") ? "EDE" : kind) {
    case "MPTS": return [t("teams.tb.MPTS.name", "Match points"), t("teams.tb.MPTS.what", "2 for a match won, 1 for a match drawn")];
    case "GPTS": return [t("teams.tb.GPTS.name", "Game points"), t("teams.tb.GPTS.what", "the points of the team's boards")];
    case "MPVGP": return [t("teams.tb.MPVGP.name", "Secondary score"), t("teams.tb.MPVGP.what", "the score the order does not rank by first")];
    case "EDE": return [t("teams.tb.EDE.name", "Direct encounter"), t("teams.tb.EDE.what", "the place among the teams tied before it, by their matches against each other")];
    case "SB": return [t("teams.tb.SB.name", "Sonneborn-Berger"), t("teams.tb.SB.what", "the opponents' scores, weighted by the score against each")];
    case "KS": return [t("teams.tb.KS.name", "Koya"), t("teams.tb.KS.what", "the score against the teams on or above the 50% line")];
    case "BC": return [t("teams.tb.BC.name", "Board count"), t("teams.tb.BC.what", "the game points weighted by board, board 1 the most")];
    case "TBR": return [t("teams.tb.TBR.name", "Top board result"), t("teams.tb.TBR.what", "the points on the top board, then the next")];
    case "BBE": return [t("teams.tb.BBE.name", "Bottom board elimination"), t("teams.tb.BBE.what", "the game points without the bottom boards, one at a time")];
    case "TPN": return [t("teams.tb.TPN.name", "Team number"), t("teams.tb.TPN.what", "the team's number in the start list")];
    default: return [code, t("column.unknown", "a tie-break")];
  }
}

/** A column header's words, as the individual columns say theirs: "name: what; which way is better." */
export function teamWords(code) {
  const [name, what] = kindWords(code);
  const better = lowerFirst(code) ? t("teams.tb.lower", "lower is better") : t("teams.tb.higher", "higher is better");
  return `${name}: ${what}; ${better}.`;
}

/** A team's value on `code` in the row (MPTS and GPTS are the row's match and game points). */
function teamValue(row, code) {
  const upper = code.toUpperCase();
  if (upper === "MPTS") return row.match_points;
  if (upper === "GPTS") return row.game_points;
  return row.tiebreaks[code];
}

/** Whether lower is better for `code` (TPN; a direct-encounter place). */
function lowerFirst(code) {
  const upper = code.toUpperCase();
  return upper === "TPN" || upper.startsWith("EDE");
}

/**
 * Why team `a` ranks above team `b` (or not), in plain words: {upper, lower, criterion, decides, lines[]} as
 * explain.js's whyAbove says it for players: the team order's criteria one by one (MPTS first as the order
 * has it), each equal one said with its value, the first that separates them with both values.
 */
export function whyTeamAbove(payload, a, b) {
  const [upper, lower] = a.rank <= b.rank ? [a, b] : [b, a];
  const U = upper.name, L = lower.name;
  const order = Object.keys(upper.tiebreaks);
  if (!order.some((c) => c.toUpperCase() === "MPTS")) order.unshift("MPTS");
  if (upper.rank === lower.rank) {
    return { upper, lower, criterion: null, decides: -1, lines: [
      t("teams.why.share", "{a} and {b} share rank {rank}: they are equal on every criterion of the team order ({order}).", { a: U, b: L, rank: upper.rank, order: order.join(" › ") })] };
  }
  const lines = [];
  for (const code of order) {
    const u = teamValue(upper, code), l = teamValue(lower, code);
    const [name] = kindWords(code);
    if (u === l) {
      lines.push(t("teams.why.equal_on", "Equal on {name} ({code}): {value}.", { name, code, value: fmt(u) }));
      continue;
    }
    const better = lowerFirst(code) ? t("teams.tb.lower", "lower is better") : t("teams.tb.higher", "higher is better");
    lines.push(t("teams.why.decides", "{name} ({code}) decides: {a} {va}, {b} {vb}; {better}.", { name, code, a: U, va: fmt(u), b: L, vb: fmt(l), better }));
    return { upper, lower, criterion: code, decides: lines.length - 1, lines };
  }
  return { upper, lower, criterion: null, decides: -1, lines };
}

/** The "why" answer for the teams `picked` (their numbers) in `payload`. */
function whyAnswer(payload, picked) {
  const rows = payload.teams;
  const ra = rows.find((r) => r.team === picked.a), rb = rows.find((r) => r.team === picked.b);
  if (ra === rb) {
    return el("div", { id: "team-why-answer", class: "why-answer", role: "status" },
      el("p", { class: "legend" }, t("teams.why.pick", "Pick two different teams.")));
  }
  const why = whyTeamAbove(payload, ra, rb);
  return el("div", { id: "team-why-answer", class: "why-answer", role: "status", dataset: { criterion: why.criterion || "", upper: why.upper.team } },
    el("p", { class: "why-head" }, why.criterion
      ? t("teams.why.head.above", "{a} (rank {ra}) is above {b} (rank {rb}).", { a: why.upper.name, ra: why.upper.rank, b: why.lower.name, rb: why.lower.rank })
      : t("teams.why.head.share", "{a} and {b} share rank {rank}.", { a: why.upper.name, b: why.lower.name, rank: why.upper.rank })),
    el("ol", null, why.lines.map((line, i) => el("li", { class: i === why.decides ? "decides" : null }, line))),
    payload.provisional ? el("p", { class: "legend" }, t("why.provisional", "Provisional: the order can change with the remaining games.")) : null);
}

/** The "why is one team above another" part: two menus and the answer; `picked` keeps the teams across redraws. */
function whyPart(payload, picked) {
  const rows = payload.teams;
  if (rows.length < 2) return null;
  if (!rows.some((r) => r.team === picked.a) || !rows.some((r) => r.team === picked.b)) {
    // start on the closest pair: the first two teams equal on match points, else the top two
    const tie = rows.findIndex((r, i) => i > 0 && rows[i - 1].match_points === r.match_points);
    [picked.a, picked.b] = tie > 0 ? [rows[tie - 1].team, rows[tie].team] : [rows[0].team, rows[1].team];
  }
  let answer = whyAnswer(payload, picked);
  const menu = (key, label) => {
    const select = el("select", { id: `team-why-${key}`, "aria-label": label },
      rows.map((r) => el("option", { value: String(r.team), selected: r.team === picked[key] }, r.name)));
    select.addEventListener("change", () => {  // only the answer is redrawn: the menu keeps its focus
      picked[key] = Number(select.value);
      const fresh = whyAnswer(payload, picked);
      answer.replaceWith(fresh);
      answer = fresh;
    });
    return select;
  };
  return el("div", { class: "team-why" },
    el("h2", { id: "team-why-h" }, t("teams.why.heading", "Why is one team above another?")),
    el("p", { class: "why-pick" },
      el("label", null, t("teams.why.team", "Team"), " ", menu("a", t("teams.why.first", "first team"))), " ",
      el("label", null, t("why.and", "and"), " ", menu("b", t("teams.why.second", "second team")))),
    answer);
}

/** The tie-break codes shown after MP and GP (MPTS and GPTS are those two columns). */
export function teamCodes(payload) {
  const first = payload.teams?.[0];
  return first ? Object.keys(first.tiebreaks).filter((c) => !["MPTS", "GPTS"].includes(c.toUpperCase())) : [];
}

/** The team standings table: rank, team, MP, GP, the tie-breaks. */
export function teamTable(payload, changed) {
  const codes = teamCodes(payload);
  const head = el("thead", null, el("tr", null,
    el("th", { class: "num", scope: "col", title: t("column.rank.title", "Rank") }, t("column.rank", "Rk")),
    el("th", { scope: "col" }, t("teams.column.team", "Team")),
    el("th", { class: "num", scope: "col", title: teamWords("MPTS") }, el("abbr", { title: teamWords("MPTS") }, t("teams.column.mp", "MP"))),
    el("th", { class: "num", scope: "col", title: teamWords("GPTS") }, el("abbr", { title: teamWords("GPTS") }, t("teams.column.gp", "GP"))),
    codes.map((code) => el("th", { class: "num", scope: "col", title: teamWords(code), dataset: { code } }, el("abbr", { title: teamWords(code) }, code))),
  ));
  const body = el("tbody", null, payload.teams.map((row) =>
    el("tr", { dataset: { team: row.team }, class: changed?.has(row.team) ? "flash" : null },
      el("td", { class: "num rank" }, String(row.rank)),
      el("td", { class: "team" }, row.name),
      el("td", { class: "num mp", dataset: { value: row.match_points } }, fmt(row.match_points)),
      el("td", { class: "num gp", dataset: { value: row.game_points } }, fmt(row.game_points)),
      codes.map((code) => el("td", { class: "num", dataset: { code, value: row.tiebreaks[code] } }, fmt(row.tiebreaks[code]))),
    )));
  return el("table", { class: "standings team-standings" }, head, body);
}

/** The key of a match across messages: its round and its two teams. */
const matchKey = (round, m) => `${round}:${m.first.team}:${m.second?.team ?? 0}`;

function matchCard(payload, match, names, round, live) {
  const { first, second } = match;
  // a match being played, with a game in progress: the score if those games ended now (the live message)
  const now = !match.complete && second ? live?.get(matchKey(round, match)) : null;
  if (!second) {
    return el("li", { class: "match-card bye", dataset: { first: first.team } },
      el("div", { class: "match-head" }, el("span", { class: "team-name" }, first.name),
        el("span", { class: "match-score" }, t("teams.bye", "bye"))));
  }
  return el("li", { class: `match-card${match.complete ? " complete" : " playing"}`, dataset: { first: first.team, second: second.team } },
    el("div", { class: "match-head" },
      el("span", { class: "team-name first" }, first.name),
      el("span", { class: "match-score", title: match.complete ? t("teams.match.complete", "all boards in") : t("teams.match.playing", "boards still to play") },
        `${fmt(first.game_points)}–${fmt(second.game_points)}`),
      el("span", { class: "team-name second" }, second.name)),
    now ? el("p", { class: "as-it-stands", title: t("boards.live.title", "each game in progress counted at its most likely result") },
      el("span", { class: "badge estimate" }, t("boards.as_it_stands", "as it stands")), " ",
      `${fmt(now.first.game_points)}–${fmt(now.second.game_points)}`) : null,
    el("ol", { class: "match-boards" }, match.boards.map((b) =>
      el("li", { dataset: { board: b.board, result: b.result ?? "" } },
        el("span", { class: "board-no", title: t("teams.board", "Board {board}", { board: b.board }) }, String(b.board)),
        el("span", { class: "white" }, names(b.white)),
        el("span", { class: "result", title: b.result ? resultWords(b.result) : t("teams.pending", "to play") },
          b.result ? RESULT_SYMBOLS[b.result] ?? b.result : "·"),
        el("span", { class: "black" }, names(b.black))))));
}

/**
 * The spectator page's count line for a team event: teams, the latest round with a board in, the board games
 * in (the players' count and the individual round robin's rounds and games say nothing about a team event).
 */
export function teamMeta(payload) {
  const round = Math.max(0, ...(payload.matches || []).map((m) => m.round));
  return el("span", null,
    tn("teams.meta.teams", "{n} team", "{n} teams", { n: payload.teams.length }),
    round ? ` · ${t("spectator.meta.round", "round {round}", { round })}` : "",
    " · ", tn("teams.meta.games", "{n} board game played", "{n} board games played", { n: payload.games_played }), " · ");
}

/**
 * The official matches with those only the live boards have begun added (a match none of whose boards is in
 * is not in the payload's matches: as it stands it is, its boards pending officially), by round.
 */
function withLive(payload, live) {
  const rounds = new Map((payload.matches || []).map((r) => [r.round, { round: r.round, matches: [...r.matches] }]));
  for (const [key, m] of live || []) {
    const round = Number(key.split(":")[0]);
    const entry = rounds.get(round) ?? { round, matches: [] };
    rounds.set(round, entry);
    if (entry.matches.some((x) => matchKey(round, x) === key)) continue;
    const zero = (side) => ({ ...side, game_points: 0, match_points: 0 });
    entry.matches.push({ first: zero(m.first), second: zero(m.second), boards: m.boards.map((b) => ({ ...b, result: null })), complete: false });
  }
  return [...rounds.values()].sort((a, b) => a.round - b.round);
}

/** What each board of the last round decides for the teams (a stakes message's team_games), or null. */
function boardStakes(payload, message) {
  const games = (message?.team_games || []).filter((g) => g.outcomes.some((o) => o.stakes.length));
  if (!games.length || message.seq !== payload.seq) return null;
  const teams = new Map(payload.teams.map((r) => [r.team, r.name]));
  const players = new Map(payload.standings.map((r) => [r.start_no, r.name]));
  return el("div", { class: "team-stakes", dataset: { seq: message.seq } },
    el("h2", null, t("teams.stakes.heading", "What each board decides")),
    el("ol", { class: "stake-games" }, games.map((g) =>
      el("li", { class: "stake-game", dataset: { white: g.white, black: g.black, board: g.board } },
        el("div", { class: "stake-pair" },
          el("span", { class: "stake-board" }, t("stakes.board_no", "Board {board}", { board: g.board })),
          el("strong", null, `${teams.get(g.white_team) ?? g.white_team} – ${teams.get(g.black_team) ?? g.black_team}`),
          el("span", null, ` (${players.get(g.white) ?? g.white} – ${players.get(g.black) ?? g.black})`)),
        el("ul", { class: "stake-outcomes" }, g.outcomes.filter((o) => o.stakes.length).map((o) =>
          el("li", { dataset: { result: o.result } },
            el("span", { class: "stake-if", title: resultWords(o.result) }, `${outcomeWords(o.result, players.get(g.white) ?? String(g.white), players.get(g.black) ?? String(g.black))}: `),
            o.stakes.map((x, k) => [k ? "; " : null, el("span", { class: `stake ${x.after}`, dataset: { team: x.team } }, say(x.said, String, x.text))]))))))));
}

/** The match cards, the latest round first; `live` (match key → the match as it stands) adds who is ahead. */
export function matchCards(payload, live = null) {
  const byNo = new Map(payload.standings.map((r) => [r.start_no, r.name]));
  const names = (no) => (no === null || no === undefined ? "?" : byNo.get(no) ?? String(no));
  return withLive(payload, live).reverse().map((round) =>
    el("section", { class: "match-round", dataset: { round: round.round } },
      el("h3", null, t("teams.round", "Round {round}", { round: round.round })),
      el("ol", { class: "match-cards" }, round.matches.map((m) => matchCard(payload, m, names, round.round, live)))));
}

/**
 * The spectator page's teams part, put before `before`: shown only for a payload with "teams".
 * Returns render(payload, changedTeams): draws it anew from each standings message.
 */
export function mountSpectatorTeams(before) {
  const box = el("section", { class: "card teams-card", id: "teams", hidden: true, "aria-labelledby": "teams-h" });
  before.parentNode.insertBefore(box, before);
  let previous = new Map();
  const picked = { a: null, b: null };  // the "why" menus' teams, kept across redraws
  let live = new Map();  // match key → the match as it stands (the newest live message for this seq)
  let liveSeq = -1;
  let last = null;
  const draw = (payload, changed) => {
    fill(box,
      el("h2", { id: "teams-h" }, t("teams.heading", "Teams")),
      el("div", { class: "scroll" }, teamTable(payload, changed)),
      whyPart(payload, picked),
      stakesBox = el("div", { class: "team-stakes-box" }, boardStakes(payload, stakes)),
      el("h2", null, t("teams.matches", "Matches")),
      rounds = el("div", { class: "match-rounds" }, matchCards(payload, liveSeq === payload.seq ? live : null)));
  };
  let rounds = null;
  let stakesBox = null;
  let stakes = null;  // the newest stakes message (its team_games)
  const render = (payload) => {
    if (!payload.teams) {
      box.hidden = true;
      return;
    }
    last = payload;
    const now = new Map(payload.teams.map((r) => [r.team, `${r.rank}|${r.match_points}|${r.game_points}`]));
    const changed = new Set([...now].filter(([team, key]) => previous.size && previous.get(team) !== key).map(([team]) => team));
    previous = now;
    box.hidden = false;
    document.documentElement.dataset.teams = String(payload.teams.length);
    draw(payload, changed);
  };
  /** A live message ("if the games ended now"): the matches with a game in progress, as they would stand. */
  render.live = (m) => {
    if (m.type === "stakes") {
      stakes = m;
      if (last && stakesBox && !box.hidden) fill(stakesBox, boardStakes(last, stakes));
      return;
    }
    if (m.type !== "live" || !m.matches) return;
    live = new Map(m.matches.flatMap((r) => r.matches.map((x) => [matchKey(r.round, x), x])));
    liveSeq = m.seq;
    if (last && rounds && !box.hidden && liveSeq === last.seq) fill(rounds, ...matchCards(last, live));  // the cards alone
  };
  return render;
}

/** The overlay's team table (a team event, unless view=players): #columns and #rows as its players' table. */
export function renderOverlayTeams(payload, $, top, short) {
  const codes = teamCodes(payload);
  const cols = [
    { label: t("teams.column.mp", "MP"), title: teamWords("MPTS"), value: (r) => r.match_points },
    { label: t("teams.column.gp", "GP"), title: teamWords("GPTS"), value: (r) => r.game_points },
    ...codes.map((code) => ({ label: code, title: teamWords(code), value: (r) => r.tiebreaks[code] })),
  ];
  document.documentElement.style.setProperty("--cols", String(cols.length));
  document.documentElement.dataset.view = "teams";
  fill($("title"), payload.name);
  const round = Math.max(0, ...(payload.matches || []).map((m) => m.round));
  fill($("progress"), `${round ? t("overlay.round", "Rd {round}", { round }) : ""}${payload.provisional ? "" : ` · ${t("overlay.final", "final")}`}`);
  fill($("columns"),
    el("span", { class: "cell rank", role: "columnheader" }, "#"),
    el("span", { class: "cell name", role: "columnheader" }, t("teams.column.team", "Team")),
    cols.map((c) => el("span", { class: "cell num col-tb", role: "columnheader", title: c.title }, c.label)));
  fill($("rows"), payload.teams.slice(0, top).map((row, index) =>
    el("div", { class: `row${index % 2 ? " odd" : ""}`, role: "row", dataset: { team: row.team } },
      el("span", { class: "cell rank", role: "cell" }, String(row.rank)),
      el("span", { class: "cell name", role: "cell", title: row.name }, el("span", { class: "n" }, short ? row.name.split(/\s+/)[0] : row.name)),
      cols.map((c) => el("span", { class: "cell num col-tb", role: "cell" }, el("span", { class: "v" }, fmt(c.value(row))))))));
  fill($("foot"));
}

/**
 * The match of team `team` in the latest round it has a match in (null when none yet): {round, match}.
 * `team` 0: the first match of the latest round.
 */
export function currentMatch(payload, team) {
  for (const round of [...(payload.matches || [])].reverse()) {
    const match = round.matches.find((m) => m.second && (!team || m.first.team === team || m.second.team === team));
    if (match) return { round: round.round, match };
  }
  return null;
}

/**
 * The overlay's match lower third (mode=match, team=K): the two teams and the match score, then each board's
 * result ("·" while it is played), following every board result as it comes in.  Returns the element's
 * state for tests: it is #match-third.
 */
export function renderOverlayMatch(payload, team, short) {
  let third = document.getElementById("match-third");
  if (!third) {
    third = el("div", { id: "match-third", class: "match-third", role: "status", "aria-live": "polite", hidden: true });
    document.body.append(third);
  }
  const found = payload.teams ? currentMatch(payload, team) : null;
  third.hidden = !found;
  if (!found) return;
  const { round, match } = found;
  const byNo = new Map(payload.standings.map((r) => [r.start_no, r.name]));
  const name = (no) => {
    const full = no === null || no === undefined ? "?" : byNo.get(no) ?? String(no);
    return short ? full.split(",")[0] : full;
  };
  third.dataset.round = String(round);
  third.dataset.first = String(match.first.team);
  third.dataset.second = String(match.second.team);
  third.dataset.complete = String(match.complete);
  fill(third,
    el("div", { class: "match-line" },
      el("span", { class: "match-round" }, t("overlay.round", "Rd {round}", { round })),
      el("span", { class: "team-name first" }, match.first.name),
      el("span", { class: "match-score" }, `${fmt(match.first.game_points)}–${fmt(match.second.game_points)}`),
      el("span", { class: "team-name second" }, match.second.name)),
    el("ol", { class: "match-boards" }, match.boards.map((b) =>
      el("li", { dataset: { board: b.board, result: b.result ?? "" } },
        el("span", { class: "board-no" }, String(b.board)),
        el("span", { class: "white" }, name(b.white)),
        el("span", { class: "result", title: b.result ? resultWords(b.result) : t("teams.pending", "to play") },
          b.result ? RESULT_SYMBOLS[b.result] ?? b.result : "·"),
        el("span", { class: "black" }, name(b.black))))));
}
