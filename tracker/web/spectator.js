// Spectator page: full standings with every configured tie-break, the
// crosstable, a player's Koya breakdown and a feed of what changed.

import {
  CODE_SYMBOLS, CODE_WORDS, LiveFeed, STATUS_WORDS, basisWords, el, fill, fmt, gamesAgainst,
  koyaBreakdown, provisionalWords, scoringOf, shortName, tournamentFromPath,
} from "/static/live.js";
import { mountSpectatorStakes, subscribeOptions } from "/static/stakes.js";

const tournament = tournamentFromPath();
const $ = (id) => document.getElementById(id);
const dialog = $("koya");
let payload = null;
let points = null;      // TRF code → points, for the Koya breakdown
let selected = null;    // start number whose breakdown is open
let snapshots = 0;

const isKoya = (code) => code.toUpperCase().startsWith("KS");

function render(message, changed) {
  payload = message;
  points = scoringOf(payload);
  document.title = payload.name ? `${payload.name} — standings` : "Standings";
  fill($("title"), payload.name || "Waiting for the tournament to open…");
  renderMeta();
  renderStandings(changed);
  renderCrosstable(changed);
  if (selected !== null && dialog.open) renderBreakdown();
}

function currentRound() {
  return Math.max(0, ...payload.standings.flatMap((r) => r.results.map((x) => x[0])));
}

function renderMeta() {
  const n = payload.standings.length;
  if (!n) {
    fill($("meta"), "Standings appear here as soon as the tournament is opened.");
    return;
  }
  const round = currentRound();
  const total = payload.rounds * Math.floor(n / 2);
  fill(
    $("meta"),
    el("span", null, `${n} players · ${payload.rounds} rounds`),
    round ? el("span", null, ` · round ${round}`) : null,
    el("span", null, ` · ${payload.games_played} of ${total} games played · `),
    el("span", { class: payload.provisional ? "badge prov-badge" : "badge final-badge", title: provisionalWords(payload) },
      payload.provisional ? `provisional (${payload.basis} basis)` : "final"),
  );
}

function header(code) {
  const mark = payload.provisional && isKoya(code);
  return el("th", { class: "num", scope: "col", title: mark ? provisionalWords(payload) : null },
    code, mark ? el("span", { class: "prov" }, "*") : null);
}

function renderStandings(changed) {
  const codes = payload.codes || [];
  const table = $("standings");
  const head = el("thead", null,
    el("tr", null,
      el("th", { class: "num", scope: "col", title: "Rank" }, "Rk"),
      el("th", { class: "num no", scope: "col", title: "Starting number" }, "No"),
      el("th", { scope: "col" }, "Player"),
      el("th", { class: "num", scope: "col", title: "Points" }, "Pts"),
      codes.map(header),
      el("th", { class: "num", scope: "col", title: "Games played" }, "G"),
    ));
  const body = el("tbody", null, payload.standings.map((row) =>
    el("tr", {
      dataset: { start: row.start_no },
      class: [row.qualified ? "qualified" : "", row.withdrawn ? "withdrawn" : "", changed?.has(row.start_no) ? "flash" : ""].join(" ").trim() || null,
    },
      el("td", { class: "num rank", title: row.qualified ? "On or above the 50% line: counts in opponents' Koya" : null }, String(row.rank)),
      el("td", { class: "num no" }, String(row.start_no)),
      el("td", { class: "player" }, playerButton(row), row.withdrawn ? el("span", { class: "tag" }, "withdrawn") : null),
      el("td", { class: "num pts" }, fmt(row.points)),
      codes.map((code) => el("td", { class: "num", dataset: { code } },
        el("span", { class: "v" }, fmt(row.tiebreaks[code])),
        payload.provisional && isKoya(code) ? el("span", { class: "prov", title: provisionalWords(payload) }, "*") : null)),
      el("td", { class: "num" }, String(row.games)),
    )));
  fill(table, head, body);
  fill($("legend"),
    payload.provisional ? el("span", null, "* provisional: Koya as if the event ended now; final once the last game is in. ") : null,
    el("span", null, "Green bar: on or above the 50% line (counts in opponents' Koya). Click a player for the Koya breakdown."));
}

function playerButton(row, label) {
  return el("button", { type: "button", class: "linkish", title: `Koya breakdown of ${row.name}`, onclick: () => open(row.start_no) },
    label ?? row.name);
}

function renderCrosstable(changed) {
  const rows = payload.standings;
  const ks = (payload.codes || []).find((c) => c === "KS");
  const head = el("thead", null, el("tr", null,
    el("th", { class: "num", scope: "col" }, "#"),
    el("th", { scope: "col" }, "Player"),
    rows.map((r, i) => el("th", { class: "num opp", scope: "col", title: r.name }, String(i + 1))),
    el("th", { class: "num", scope: "col" }, "Pts"),
    ks ? el("th", { class: "num", scope: "col" }, "KS") : null,
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
            title: `Round ${round}: ${row.name} (${colour === "w" ? "White" : "Black"}) ${CODE_WORDS[code] || code} against ${opp.name}`,
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
  fill($("koya-h"), `Koya of ${b.row.name}`);
  fill($("koya-body"),
    el("p", { class: "koya-sum" },
      el("span", { class: "big", dataset: { value: ks } }, `KS ${fmt(ks)}`), mark,
      el("span", null, ` · rank ${b.row.rank} · ${fmt(b.row.points)} points from ${b.row.games} games`)),
    el("p", { class: "explain" },
      "Koya is the sum of the points scored against the opponents on or above the 50% line: ", basisWords(payload), ". ",
      payload.provisional ? "Values are provisional until the last game is in." : ""),
    el("div", { class: "scroll" }, el("table", { class: "breakdown" },
      el("thead", null, el("tr", null,
        el("th", { scope: "col" }, "Opponent"),
        el("th", { class: "num", scope: "col", title: "Opponent's score, games and 50% line" }, "Score"),
        el("th", { scope: "col" }, "Games"),
        el("th", { class: "num", scope: "col", title: "Points scored against this opponent" }, "Scored"))),
      el("tbody", null, b.opponents.map((o) =>
        el("tr", { class: o.row.qualified ? "counts" : "not-counted", dataset: { start: o.row.start_no, qualified: o.row.qualified, scored: o.scored } },
          el("td", null, el("span", { class: "opp-name" }, o.row.name),
            el("span", { class: "sub" }, o.row.qualified ? "on or above the line: counts" : "below the line")),
          el("td", { class: "num", title: `${fmt(o.row.points)} points from ${o.row.games} games; line ${fmt(o.row.line)}` },
            `${fmt(o.row.points)}/${o.row.games}`, el("span", { class: "sub" }, `line ${fmt(o.row.line)}`)),
          el("td", { class: "games" }, o.games.map((g, k) => [k ? " " : null,
            el("span", { class: `g ${g.colour}`, title: `Round ${g.round}, ${g.colour === "w" ? "White" : "Black"}` }, `R${g.round} ${CODE_SYMBOLS[g.code] ?? g.code}`)])),
          el("td", { class: "num scored" }, Number.isNaN(o.scored) ? "?" : fmt(o.scored)),
        ))),
      el("tfoot", null, el("tr", null,
        el("th", { colspan: 3, scope: "row" }, "KS: the sum over the opponents who count"),
        el("td", { class: "num total", dataset: { value: b.total } }, fmt(b.total)))),
    )),
    b.byes.length ? el("p", { class: "explain" }, "Byes never count for Koya: ",
      b.byes.map(([round, , , code]) => `round ${round} (${CODE_WORDS[code] || code})`).join(", "), ".") : null,
  );
}

$("koya-close").addEventListener("click", () => dialog.close());
dialog.addEventListener("click", (e) => { if (e.target === dialog) dialog.close(); });
dialog.addEventListener("close", () => { selected = null; });

// -- what changed ----------------------------------------------------------------

function clock() {
  return new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function addFeed(text, seq, kind) {
  const feed = $("feed");
  feed.prepend(el("li", { class: kind || null, dataset: { seq } },
    el("time", null, clock()), " ", el("span", { class: "what" }, text)));
  while (feed.children.length > 60) feed.lastElementChild.remove();
}

function describe(m) {
  if (m.summary) return m.summary;
  const e = m.event || {};
  if (e.type === "tournament_opened") return `${e.name} opened with ${e.players?.length ?? "?"} players.`;
  return `${e.type || "update"} (seq ${m.seq})`;
}

function status(s) {
  const node = $("status");
  node.className = `status ${s}`;
  fill(node, STATUS_WORDS[s]);
}

window.trackerFeed = new LiveFeed(tournament, {
  onSnapshot: (m) => {
    render(m, null);
    snapshots += 1;
    if (m.standings.length)
      addFeed(`${snapshots > 1 ? "Caught up: standings" : "Standings"} after ${m.games_played} game${m.games_played === 1 ? "" : "s"}.`, m.seq, "note");
  },
  onUpdate: (m) => {
    render(m, new Set(m.changed || []));
    addFeed(describe(m), m.seq);
  },
  onStatus: status,
  onMessage: mountSpectatorStakes(document.querySelector("main")),
}, { subscribe: subscribeOptions(new URLSearchParams(location.search)) }).start();
