// Spectator page: full standings with every configured tie-break, the
// crosstable, a player's Koya breakdown and a feed of what changed.

import {
  CODE_SYMBOLS, LiveFeed, basisName, basisWords, clockTime, codeWords, el, fill, fmt, gamesAgainst, join,
  koyaBreakdown, provisionalWords, scoringOf, sentenceName, shortName, startLanguage, statusWords, summaryText,
  tournamentFromPath,
} from "/static/live.js";
import { number, t, tn } from "/static/i18n.js";
import { readParams, SPECTATOR_PARAMS } from "/static/params.js";
import { mountSpectatorBoards } from "/static/boards.js";
import { mountSpectatorTeams, teamMeta } from "/static/teams.js";
import { mountSpectatorStakes, subscribeOptions } from "/static/stakes.js";
import {
  columnInfo, directEncounter, gamesCount, pointsCount, pointsSettled, ptsLabel, rankLocked, rankingOrder, whyAbove,
} from "/static/explain.js";

const tournament = tournamentFromPath();
const spectatorParams = readParams(location.search, SPECTATOR_PARAMS, "spectator");
const delayed = spectatorParams.delay > 0 ? Math.round(Math.min(600, spectatorParams.delay) * 10) / 10 : 0;  // seconds behind
const lang = await startLanguage(spectatorParams.lang);
const $ = (id) => document.getElementById(id);
const dialog = $("koya");
const renderTeams = mountSpectatorTeams(document.querySelector("main .layout"));  // a team event: its teams first
let payload = null;
let points = null;      // TRF code → points, for the Koya breakdown
let selected = null;    // start number whose breakdown is open
let snapshots = 0;

const isKoya = (code) => code.toUpperCase().startsWith("KS");

function render(message, changed) {
  payload = message;
  points = scoringOf(payload);
  document.title = payload.name ? t("spectator.page_title", "{name} — standings", { name: payload.name }) : t("spectator.standings", "Standings");
  fill($("title"), payload.name || t("page.waiting", "Waiting for the tournament to open…"));
  renderMeta();
  renderTeams(payload);
  renderStandings(changed);
  renderCrosstable(changed);
  if (selected !== null && dialog.open) renderBreakdown();
  renderWhy();
}

function currentRound() {
  return Math.max(0, ...payload.standings.flatMap((r) => r.results.map((x) => x[0])));
}

function renderMeta() {
  const n = payload.standings.length;
  if (!n) {
    fill($("meta"), t("spectator.meta.empty", "Standings appear here as soon as the tournament is opened."));
    return;
  }
  const round = currentRound();
  const total = payload.rounds * Math.floor(n / 2);
  fill(
    $("meta"),
    payload.teams ? teamMeta(payload) : [el("span", null, tn("spectator.meta.players", "{n} player", "{n} players", { n }), " · ",
      tn("spectator.meta.rounds", "{n} round", "{n} rounds", { n: payload.rounds })),
    round ? el("span", null, " · ", t("spectator.meta.round", "round {round}", { round })) : null,
    el("span", null, " · ", tn("spectator.meta.games", "{n} of {total} games played", "{n} of {total} games played", { n: payload.games_played, total }), " · ")],
    el("span", { class: payload.provisional ? "badge prov-badge" : "badge final-badge", title: provisionalWords(payload) },
      payload.provisional ? t("spectator.meta.provisional", "provisional ({basis})", { basis: basisName(payload.basis) }) : t("spectator.meta.final", "final")),
    payload.rules ? el("span", { class: "badge rules-badge", title: t("page.rules_edition", "tie-breaks per FIDE C.07, {edition} edition", { edition: payload.rules }) },
      ` C.07 ${payload.rules}`) : null,
  );
}

function header(code) {
  const mark = payload.provisional && isKoya(code);
  const info = columnInfo(payload, code);
  const title = `${info.name}: ${info.what}; ${info.better}.${mark ? ` ${provisionalWords(payload)}` : ""}`;
  return el("th", { class: "num", scope: "col", title, dataset: { code } },
    el("abbr", { title }, code), mark ? el("span", { class: "prov" }, "*") : null);
}

/** A tie-break cell: the value, or for DE what it means; data-value keeps the server's value. */
function tiebreakCell(row, code) {
  const value = row.tiebreaks[code];
  const prov = payload.provisional && isKoya(code) ? el("span", { class: "prov", title: provisionalWords(payload) }, "*") : null;
  if (code.toUpperCase() === "DE") {
    const de = directEncounter(payload, row, code);
    return el("td", { class: `num de${de?.won ? " won" : ""}${de?.provisional ? " provisional" : ""}`, dataset: { code, provisional: String(!!de?.provisional) }, title: de ? de.title : t("de.none", "No tie to break by direct encounter (or it stays tied)") },
      el("span", { class: "v", dataset: { value } }, de ? de.text : "—"));
  }
  return el("td", { class: "num", dataset: { code } }, el("span", { class: "v", dataset: { value } }, fmt(value)), prov);
}

function renderStandings(changed) {
  const codes = payload.codes || [];
  const table = $("standings");
  const head = el("thead", null,
    el("tr", null,
      el("th", { class: "num", scope: "col", title: t("column.rank.title", "Rank") }, t("column.rank", "Rk")),
      el("th", { class: "num no", scope: "col", title: t("column.no.title", "Starting number") }, t("column.no", "No")),
      el("th", { scope: "col" }, t("column.player", "Player")),
      el("th", { class: "num", scope: "col", title: t("column.pts.title", "Points") }, ptsLabel()),
      codes.map(header),
      el("th", { class: "num", scope: "col", title: t("column.games.title", "Games played") }, t("column.games", "G")),
    ));
  const body = el("tbody", null, payload.standings.map((row) =>
    el("tr", {
      dataset: { start: row.start_no },
      class: [row.qualified ? "qualified" : "", row.withdrawn ? "withdrawn" : "", changed?.has(row.start_no) ? "flash" : ""].join(" ").trim() || null,
    },
      rankCell(row),
      el("td", { class: "num no" }, String(row.start_no)),
      el("td", { class: "player" }, playerButton(row), row.withdrawn ? el("span", { class: "tag" }, t("player.withdrawn", "withdrawn")) : null),
      pointsCell(row),
      codes.map((code) => tiebreakCell(row, code)),
      el("td", { class: "num" }, String(row.games)),
    )));
  fill(table, head, body);
  fill($("legend"),
    payload.provisional ? el("span", null, t("legend.provisional", "* provisional: Koya as if the event ended now; final once the last game is in."), " ") : null,
    payload.provisional && codes.some((c) => c.toUpperCase() === "DE") ? el("span", null, t("legend.de", "DE is the place among the players tied before it (1st best); * while two of them have still to meet."), " ") : null,
    payload.provisional ? el("span", null, t("legend.settled", "Points in bold are settled (all the player's games are in); \"locked\": a rank no remaining result can change."), " ") : null,
    el("span", null, t("legend.line", "Green bar: on or above the 50% line (counts in opponents' Koya). Click a player for the Koya breakdown.")));
  fill($("columns-legend"),
    el("dt", null, t("legend.ranking", "Ranking")), el("dd", { dataset: { order: "" } }, t("legend.order", "{order}: the first that differs decides.", { order: rankingOrder(payload) })),
    codes.map((code) => {
      const info = columnInfo(payload, code);
      return [el("dt", { dataset: { code } }, code), el("dd", { dataset: { code } }, `${info.name}: ${info.what}; ${info.better}.`)];
    }));
}

function rankCell(row) {
  const locked = payload.provisional && rankLocked(payload, row);
  return el("td", {
    class: `num rank${locked ? " locked" : ""}`,
    dataset: { locked: String(!payload.provisional || locked) },
    title: [row.qualified ? t("rank.qualified", "On or above the 50% line: counts in opponents' Koya.") : "",
      !payload.provisional ? t("rank.final", "Final.") : locked ? t("rank.locked.title", "Locked: no remaining result can change this rank.")
        : t("rank.open", "Provisional: this rank can still change.")].join(" ").trim(),
  }, String(row.rank), locked ? el("span", { class: "lock" }, t("rank.locked", "locked")) : null);
}

function pointsCell(row) {
  const settled = !payload.provisional || pointsSettled(payload, row);
  return el("td", {
    class: `num pts ${settled ? "settled" : "open"}`,
    dataset: { settled: String(settled) },
    title: settled ? t("points.settled", "Settled: all of this player's games are in") : t("points.open", "Provisional: games still to play"),
  }, fmt(row.points));
}

// -- why is A above B? ----------------------------------------------------------------

function renderWhy() {
  const rows = payload.standings;
  const a = $("why-a"), b = $("why-b");
  if (!rows.length) return;
  const key = rows.map((r) => r.start_no).sort((x, y) => x - y).join(",");
  if (a.dataset.key !== key) {
    const keep = [a.value, b.value];
    const sorted = [...rows].sort((x, y) => x.start_no - y.start_no);
    for (const select of [a, b]) fill(select, sorted.map((r) => el("option", { value: r.start_no }, r.name)));
    a.dataset.key = key;
    if (keep[0]) [a.value, b.value] = keep;
    else {
      // start on the closest pair: the first two players tied on points, else the top two
      const tie = rows.findIndex((r, i) => i > 0 && rows[i - 1].points === r.points);
      const [x, y] = tie > 0 ? [rows[tie - 1], rows[tie]] : [rows[0], rows[1] || rows[0]];
      a.value = String(x.start_no);
      b.value = String(y.start_no);
    }
  }
  const ra = rows.find((r) => String(r.start_no) === a.value), rb = rows.find((r) => String(r.start_no) === b.value);
  if (!ra || !rb) return;
  if (ra === rb) {
    fill($("why-answer"), el("p", { class: "legend" }, t("why.pick", "Pick two different players.")));
    return;
  }
  const why = whyAbove(payload, ra, rb);
  const answer = $("why-answer");
  answer.dataset.criterion = why.criterion || "";
  answer.dataset.upper = why.upper.start_no;
  fill(answer,
    el("p", { class: "why-head" }, why.criterion
      ? t("why.head.above", "{a} (rank {ra}) is above {b} (rank {rb}).", { a: why.upper.name, ra: why.upper.rank, b: why.lower.name, rb: why.lower.rank })
      : t("why.head.share", "{a} and {b} share rank {rank}.", { a: why.upper.name, b: why.lower.name, rank: why.upper.rank })),
    el("ol", null, why.lines.map((line, i) => el("li", { class: i === why.decides ? "decides" : null }, line))),
    payload.provisional ? el("p", { class: "legend" }, t("why.provisional", "Provisional: the order can change with the remaining games.")) : null);
}

for (const id of ["why-a", "why-b"]) $(id).addEventListener("change", () => payload && renderWhy());

function playerButton(row, label) {
  return el("button", { type: "button", class: "linkish", title: t("koya.of_title", "Koya breakdown of {name}", { name: row.name }), onclick: () => open(row.start_no) },
    label ?? row.name);
}

function renderCrosstable(changed) {
  const rows = payload.standings;
  const ks = (payload.codes || []).find((c) => c === "KS");
  const head = el("thead", null, el("tr", null,
    el("th", { class: "num", scope: "col" }, "#"),
    el("th", { scope: "col" }, t("column.player", "Player")),
    rows.map((r, i) => el("th", { class: "num opp", scope: "col", title: r.name }, String(i + 1))),
    el("th", { class: "num", scope: "col", title: t("column.pts.title", "Points") }, ptsLabel()),
    ks ? header(ks) : null,  // explained as in the standings: name, what it counts, which way is better
  ));
  const body = el("tbody", null, rows.map((row, i) =>
    el("tr", { dataset: { start: row.start_no }, class: row.qualified ? "qualified" : null },
      el("td", { class: "num rank" }, String(i + 1)),
      el("td", { class: "player" }, playerButton(row, shortName(row.name))),
      rows.map((opp) => {
        if (opp.start_no === row.start_no) return el("td", { class: "self", "aria-label": "—" });
        const games = gamesAgainst(row, opp.start_no);
        return el("td", {
          class: `cell${opp.qualified ? " counts" : ""}${changed?.has(row.start_no) && changed?.has(opp.start_no) ? " flash" : ""}`,
          dataset: { row: row.start_no, col: opp.start_no },
        }, games.map(([round, , colour, code], k) => [
          k ? " " : null,
          el("span", {
            class: `g ${colour}`,
            title: t("crosstable.game", "Round {round}: {player} ({colour}) {result} against {opponent}",
              { round, player: row.name, colour: colourWords(colour), result: codeWords(code), opponent: opp.name }),
          }, CODE_SYMBOLS[code] ?? code),
        ]));
      }),
      el("td", { class: "num pts" }, fmt(row.points)),
      ks ? el("td", { class: "num" }, fmt(row.tiebreaks.KS)) : null,
    )));
  fill($("crosstable"), head, body);
}

// -- Koya breakdown ----------------------------------------------------------

function open(startNo) {
  selected = startNo;
  renderBreakdown();
  if (!dialog.open) dialog.showModal();
}

function renderBreakdown() {
  const b = koyaBreakdown(payload, selected, points);
  const ks = b.row.tiebreaks.KS;
  const mark = payload.provisional ? el("span", { class: "prov", title: provisionalWords(payload) }, "*") : null;
  fill($("koya-h"), t("koya.of", "Koya of {name}", { name: b.row.name }));
  fill($("koya-body"),
    el("p", { class: "koya-sum" },
      el("span", { class: "big", dataset: { value: ks } }, `KS ${fmt(ks)}`), mark,
      el("span", null, " · ", t("koya.rank", "rank {rank} · {points} from {games}", { rank: b.row.rank, points: pointsCount(b.row.points), games: gamesCount(b.row.games) }))),
    el("p", { class: "explain" },
      t("koya.explain", "Koya is the sum of the points scored against the opponents on or above the 50% line: {basis}.", { basis: basisWords(payload) }), " ",
      payload.provisional ? t("koya.provisional", "Values are provisional until the last game is in.") : ""),
    el("div", { class: "scroll" }, el("table", { class: "breakdown" },
      el("thead", null, el("tr", null,
        el("th", { scope: "col" }, t("koya.opponent", "Opponent")),
        el("th", { class: "num", scope: "col", title: t("koya.score.title", "Opponent's score, games and 50% line") }, t("koya.score", "Score")),
        el("th", { scope: "col" }, t("koya.games", "Games")),
        el("th", { class: "num", scope: "col", title: t("koya.scored.title", "Points scored against this opponent") }, t("koya.scored", "Scored")))),
      el("tbody", null, b.opponents.map((o) =>
        el("tr", { class: o.row.qualified ? "counts" : "not-counted", dataset: { start: o.row.start_no, qualified: o.row.qualified, scored: o.scored } },
          el("td", null, el("span", { class: "opp-name" }, o.row.name),
            el("span", { class: "sub" }, o.row.qualified ? t("koya.counts", "on or above the line: counts") : t("koya.below", "below the line"))),
          el("td", { class: "num", title: t("koya.score.of", "{points} from {games}; line {line}", { points: pointsCount(o.row.points), games: gamesCount(o.row.games), line: fmt(o.row.line) }) },
            `${fmt(o.row.points)}/${o.row.games}`, el("span", { class: "sub" }, t("koya.line", "line {line}", { line: fmt(o.row.line) }))),
          el("td", { class: "games" }, o.games.map((g, k) => [k ? " " : null,
            el("span", { class: `g ${g.colour}`, title: t("koya.game.title", "Round {round}, {colour}", { round: g.round, colour: colourWords(g.colour) }) },
              t("koya.game", "R{round} {result}", { round: g.round, result: CODE_SYMBOLS[g.code] ?? g.code }))])),
          el("td", { class: "num scored" }, Number.isNaN(o.scored) ? "?" : fmt(o.scored)),
        ))),
      el("tfoot", null, el("tr", null,
        el("th", { colspan: 3, scope: "row" }, t("koya.total", "KS: the sum over the opponents who count")),
        el("td", { class: "num total", dataset: { value: b.total } }, fmt(b.total)))),
    )),
    b.byes.length ? el("p", { class: "explain" }, t("koya.byes", "Byes never count for Koya: {byes}.", { byes: join(b.byes.map(byeWords)) })) : null,
  );
}

function byeWords([round, , , code]) {
  return t("koya.bye", "round {round} ({bye})", { round, bye: codeWords(code) });
}

$("koya-close").addEventListener("click", () => dialog.close());
dialog.addEventListener("click", (e) => { if (e.target === dialog) dialog.close(); });
dialog.addEventListener("close", () => { selected = null; });

// -- what changed ----------------------------------------------------------------

const clock = clockTime;

function colourWords(colour) {
  return colour === "w" ? t("colour.white", "White") : t("colour.black", "Black");
}

/** How the server's sentences name a player: the surname, from the standings shown. */
function names(startNo) {
  const row = payload?.standings.find((r) => r.start_no === startNo);
  return row ? sentenceName(row.name) : String(startNo);
}

function addFeed(text, seq, kind, at) {
  const feed = $("feed");
  if (seq && feed.querySelector(`li[data-seq="${seq}"]:not(.note)`)) return;  // shown already
  const item = el("li", { class: kind || null, dataset: { seq } },
    el("time", null, clock(at)), " ", el("span", { class: "what" }, text));
  // newest first, in seq order: an item from the history goes below the newer ones already shown
  const after = [...feed.children].find((li) => Number(li.dataset.seq) < seq);
  feed.insertBefore(item, after || null);
  while (feed.children.length > 60) feed.lastElementChild.remove();
}

/**
 * Fill the feed with the recent history the server keeps (a page opened late,
 * or back after a reconnect that missed more than it could resume): each
 * update is shown once, whatever came first.
 */
async function backfill() {
  try {
    // a delayed page asks for what was published at least its delay ago: the feed never runs ahead of the table
    const delay = spectatorParams.delay > 0 ? `?delay=${spectatorParams.delay}` : "";
    const response = await fetch(`/api/tournaments/${encodeURIComponent(tournament)}/recent${delay}`, { cache: "no-store" });
    if (!response.ok) return;
    const recent = await response.json();
    for (const u of recent.updates || []) if (u.summary) addFeed(summaryText(u.summary_said, names, u.summary), u.seq, null, u.at);
    document.documentElement.dataset.backfilled = String(recent.seq);
  } catch {
    // no history: the feed fills from the live updates
  }
}

function describe(m) {
  if (m.summary) return summaryText(m.summary_said, names, m.summary);
  const e = m.event || {};
  if (e.type === "tournament_opened") return tn("feed.opened", "{name} opened with {n} player.", "{name} opened with {n} players.", { name: e.name, n: e.players?.length ?? 0 });
  return t("feed.other", "{type} (seq {seq})", { type: e.type || "update", seq: m.seq });
}

/**
 * One short sentence for screen readers after an update (the polite status): who is first now, and
 * how many places changed.
 */
function announce(m) {
  const top = m.standings[0];
  if (!top) return;
  const moved = (m.changed || []).length;
  const changed = tn("announce.changed", "{n} player's line changed", "{n} players' lines changed", { n: moved });
  fill($("announce"), t("announce.update", "Standings updated: {leader} leads with {points}; {changed}.",
    { leader: top.name, points: pointsCount(top.points), changed }));
}

/** The connection's state; a delayed page says how far behind it is ("live, 30 s behind"), never just "live". */
function status(s) {
  const node = $("status");
  node.className = `status ${s}${delayed ? " delayed" : ""}`;
  const seconds = Number.isInteger(delayed) ? String(delayed) : number(delayed, 1);
  node.title = delayed ? t("overlay.delayed.title", "spoiler delay: everything here is {seconds} s late", { seconds }) : "";
  fill(node, delayed && s === "live" ? t("status.live_delayed", "live, {seconds} s behind", { seconds }) : statusWords(s));
}

$("feed").dataset.empty = t("feed.empty", "Nothing yet: each result appears here in plain words.");
languagePicker();

/** The language picker: the page again with ?lang= set (the other parameters kept). */
function languagePicker() {
  const select = $("lang");
  select.value = [...select.options].some((o) => o.value === lang) ? lang : "en";
  select.addEventListener("change", () => {
    const query = new URLSearchParams(location.search);
    query.set("lang", select.value);
    location.search = query.toString();
  });
  const home = document.querySelector(".topbar .home");
  if (spectatorParams.lang) home.href = `/?lang=${encodeURIComponent(lang)}`;
}

const onStakes = mountSpectatorStakes(document.querySelector("main"));
const boards = mountSpectatorBoards(document.querySelector("main"));  // games in progress, if the games ended now
window.trackerFeed = new LiveFeed(tournament, {
  onSnapshot: (m) => {
    render(m, null);
    boards.official(m);
    snapshots += 1;
    if (m.standings.length) {
      addFeed(snapshots > 1
        ? tn("feed.caught_up", "Caught up: standings after {n} game.", "Caught up: standings after {n} games.", { n: m.games_played })
        : tn("feed.snapshot", "Standings after {n} game.", "Standings after {n} games.", { n: m.games_played }), m.seq, "note");
      backfill();
    }
  },
  onUpdate: (m) => {
    render(m, new Set(m.changed || []));
    boards.official(m);
    addFeed(describe(m), m.seq);
    announce(m);
  },
  onStatus: status,
  onMessage: (m) => {
    boards.onMessage(m);
    onStakes?.(m);
    renderTeams.live(m);  // a team event: who is ahead in each match being played
  },
}, { subscribe: subscribeOptions(spectatorParams, true, true) }).start();
