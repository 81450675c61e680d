// Broadcast overlay: a compact, transparent standings table for OBS.
//
// URL parameters: top=N (rows shown, default 10), cols=points,KS,SB,games
// (any tie-break codes of the tournament; write + as %2B or leave it as a
// space; rating: the rating change so far, perf: the performance), theme=dark|light, scale=1.2 (font scale), names=short (surnames),
// status=badge|dot|none (connection state: a badge, a discreet dot that only
// shows while the connection is down, or nothing: for on air),
// legend=order (a line saying what the ranking is decided by), mode=live (the
// table as the games in progress stand, arrows against the official ranks:
// an estimate), boards=1 (an eval bar per game in progress), delay=N (a
// spoiler delay: everything N seconds late; the title and "delayed by N s"
// show at once, before the delayed standings arrive), lang=ru (the language: en, ru, es, de, fr; else the
// browser's, else English), view=players (a team event's players; by default its teams), mode=match&team=K
// (a team event: team K's match of the latest round as a lower third, board by board; team=0 the first).
// The parameters are the table OVERLAY_PARAMS (params.js) that this script
// and stakes.js both read; one that is not understood is reported once in
// the console and ignored (its default applies).
// Rank changes slide (FLIP: measure, reorder, invert, play); values that
// changed flash; provisional Koya values carry an asterisk.

import { LiveFeed, el, fill, fmt, provisionalWords, shortName, startLanguage, statusWords, tournamentFromPath } from "/static/live.js";
import { number, t } from "/static/i18n.js";
import { ignored, OVERLAY_PARAMS, readParams } from "/static/params.js";
import { arrow, mountOverlayLive } from "/static/boards.js";
import { mountOverlayStakes, ratingChange, subscribeOptions } from "/static/stakes.js";
import { directEncounter, placeWords, ptsLabel, rankingOrder } from "/static/explain.js";
import { renderOverlayMatch, renderOverlayTeams } from "/static/teams.js";

const params = readParams(location.search, OVERLAY_PARAMS, "overlay");
const lang = await startLanguage(params.lang);
if (params.lang && params.lang.toLowerCase().split(/[-_]/)[0] !== lang) {
  ignored("overlay", "lang", params.lang, `no catalogue for this language; using ${lang}`);
}
const { top, theme, scale } = params;
const short = params.names === "short";
const statusMode = params.status;
const legend = params.legend === "order";
const wanted = params.cols
  .split(",")
  .map((c) => c.trim().replace(/ /g, "+"))  // "KS/L+1" arrives as "KS/L 1" when + is not encoded
  .filter(Boolean);
// cols=rating (the rating change so far) and cols=perf (the performance) come with the stakes message's
// worth: the overlay then asks for it
const WORTH_COLS = ["rating", "perf"];
const wantsWorth = wanted.some((n) => WORTH_COLS.includes(n.toLowerCase()));
const worth = new Map();  // start number → its worth (rating_change, performance), from the newest stakes

document.documentElement.classList.add(`theme-${theme}`);
document.documentElement.style.fontSize = `${16 * scale}px`;

const tournament = tournamentFromPath();
const $ = (id) => document.getElementById(id);
const rowsBox = $("rows");
const rowEls = new Map();  // start_no → row element
let current = null;
const delayed = params.delay > 0 ? Math.round(params.delay * 10) / 10 : 0;
let knownName = "";
const seconds = () => (Number.isInteger(delayed) ? String(delayed) : number(delayed, 1));

/**
 * A delayed overlay shows something at once: the tournament's name (from the list of tournaments, which
 * holds no result) and "delayed by N s", until the standings of N seconds ago arrive.
 */
async function delayedTitle() {
  fill($("progress"), el("span", { class: "delayed" }, delayedWords()));
  try {
    const response = await fetch("/api/tournaments");
    const found = response.ok ? (await response.json()).tournaments.find((t) => t.id === tournament) : null;
    if (found?.name) knownName = found.name;
  } catch {
    // the name comes with the delayed standings
  }
  if (!current || !current.name) fill($("title"), knownName || tournament);  // the delayed state may be empty yet
}
if (delayed) delayedTitle();

function delayedWords() {
  return t("overlay.delayed", "delayed by {seconds} s", { seconds: seconds() });
}

/** The columns asked for, resolved against the tournament's codes. */
function columns(payload) {
  const codes = payload.codes || [];
  if (codes.length) {  // a tournament not open yet has no codes: nothing to check against
    const known = (name) => ["points", "pts", "games", "g", ...WORTH_COLS].includes(name.toLowerCase()) || codes.some((c) => c.toLowerCase() === name.toLowerCase());
    for (const name of wanted.filter((n) => !known(n))) ignored("overlay", "cols", name, `this tournament has no column ${name} (its tie-breaks: ${codes.join(", ")})`);
    const kept = wanted.filter(known);
    return resolve(kept.length ? kept : ["points", "KS"].filter(known), codes);
  }
  return resolve(wanted, codes);
}

function resolve(names, codes) {
  return names.map((name) => {
    const lower = name.toLowerCase();
    if (lower === "points" || lower === "pts")
      return { key: "points", label: ptsLabel(), value: (r) => r.points, provisional: false };
    if (lower === "games" || lower === "g")
      return { key: "games", label: t("column.games", "G"), value: (r) => r.games, provisional: false };
    // mode=live: the players of the games in progress as they would then stand (the live message's worth)
    const of = (r, p) => p?.live?.worth?.find((w) => w.start_no === r.start_no) ?? worth.get(r.start_no);
    if (lower === "rating")
      return { key: "rating", label: t("worth.rating", "Rating ±"), value: (r, p) => of(r, p)?.rating_change ?? null, provisional: false, show: ratingChange };
    if (lower === "perf")
      return { key: "perf", label: t("worth.performance", "Perf."), value: (r, p) => of(r, p)?.performance ?? null, provisional: false, show: String };
    const code = codes.find((c) => c.toLowerCase() === lower) || name;
    return {
      key: code,
      label: code,
      value: (r) => (code in r.tiebreaks ? r.tiebreaks[code] : null),
      provisional: code.toUpperCase().startsWith("KS"),
      // DE is a place among the tied, as everywhere, starred while two of the tied have still to meet
      show: code.toUpperCase() === "DE" ? (v, row, payload) => directEncounter(payload, row, code)?.text ?? placeWords(v) : fmt,
    };
  });
}

function render(payload) {
  const cols = columns(payload);
  const provisional = payload.provisional && cols.some((c) => c.provisional);
  const note = provisionalWords(payload);
  document.documentElement.style.setProperty("--cols", String(cols.length));
  document.documentElement.dataset.provisional = String(!!payload.provisional);

  fill($("title"), payload.name || knownName || t("page.waiting", "Waiting for the tournament to open…"));
  const n = payload.standings.length;
  const round = Math.max(0, ...payload.standings.flatMap((r) => r.results.map((x) => x[0])));
  const total = payload.rounds * Math.floor(n / 2);
  fill($("progress"), n ? `${round ? `${t("overlay.round", "Rd {round}", { round })} · ` : ""}${payload.games_played}/${total || "?"}`
    + `${payload.provisional ? "" : ` · ${t("overlay.final", "final")}`}${payload.rules ? ` · C.07 ${payload.rules}` : ""}` : "",
    delayed ? el("span", { class: "delayed", title: t("overlay.delayed.title", "spoiler delay: everything here is {seconds} s late", { seconds: seconds() }) },
      `${n ? " · " : ""}${delayedWords()}`) : null);

  fill(
    $("columns"),
    el("span", { class: "cell rank", role: "columnheader" }, "#"),
    el("span", { class: "cell name", role: "columnheader" }, t("column.player", "Player")),
    cols.map((c) =>
      el("span", { class: `cell num col-${c.key === "points" ? "points" : "tb"}`, role: "columnheader", title: c.provisional && provisional ? note : null },
        c.label, c.provisional && provisional ? el("span", { class: "prov" }, "*") : null),
    ),
  );
  fill($("foot"),
    legend && payload.codes?.length ? el("span", { class: "order" }, t("overlay.ranked_by", "Ranked by {order}", { order: rankingOrder(payload) })) : null,
    legend && provisional && payload.codes?.length ? " · " : null,
    provisional ? el("span", { title: note }, t("overlay.provisional", "* provisional Koya — as if the event ended now")) : null);

  // FLIP: First positions
  const first = new Map();
  for (const [no, node] of rowEls) first.set(no, node.getBoundingClientRect().top);
  const oldRanks = new Map(current ? current.standings.map((r) => [r.start_no, r.rank]) : []);

  const shown = payload.standings.slice(0, top);
  const keep = new Set(shown.map((r) => r.start_no));
  for (const [no, node] of rowEls) {
    if (!keep.has(no)) {
      node.remove();
      rowEls.delete(no);
    }
  }
  shown.forEach((row, index) => {
    let node = rowEls.get(row.start_no);
    const fresh = !node;
    if (fresh) {
      node = el("div", { class: "row enter", role: "row", dataset: { start: row.start_no } });
      rowEls.set(row.start_no, node);
    }
    const before = [...node.querySelectorAll(".v")].map((v) => v.textContent);
    const name = short ? shortName(row.name) : row.name;
    fill(
      node,
      el("span", { class: "cell rank", role: "cell" }, String(row.rank)),
      el("span", { class: "cell name", role: "cell", title: row.name }, el("span", { class: "n" }, name),
        row.withdrawn ? el("span", { class: "wd", title: t("player.withdrawn", "withdrawn") }, " ", t("overlay.wd", "wd")) : null,
        payload.officialRanks ? el("span", { class: `arrow ${arrow(row, payload.officialRanks).startsWith("▲") ? "up" : "down"}`,
          title: t("overlay.arrow.title", "against the official rank, as the games stand") }, arrow(row, payload.officialRanks)) : null),
      cols.map((c) => {
        const value = c.value(row, payload);
        return el("span", { class: `cell num col-${c.key === "points" ? "points" : "tb"}`, role: "cell" },
          el("span", { class: "v" }, value === null ? "–" : (c.show || fmt)(value, row, payload)),
          c.provisional && payload.provisional ? el("span", { class: "prov", title: note }, "*") : null);
      }),
    );
    node.classList.toggle("withdrawn", !!row.withdrawn);
    node.classList.toggle("odd", index % 2 === 1);
    if (!fresh) {
      const after = [...node.querySelectorAll(".v")];
      after.forEach((v, i) => {
        if (before[i] !== undefined && before[i] !== v.textContent) v.parentElement.classList.add("changed");
      });
      const was = oldRanks.get(row.start_no);
      if (was !== undefined && was !== row.rank) {
        node.classList.remove("up", "down");
        void node.offsetWidth;  // restart the animation
        node.classList.add(row.rank < was ? "up" : "down");
      }
    }
    if (rowsBox.children[index] !== node) rowsBox.insertBefore(node, rowsBox.children[index] || null);
  });

  // FLIP: Invert and Play
  for (const [no, node] of rowEls) {
    const was = first.get(no);
    if (was === undefined) continue;
    const dy = was - node.getBoundingClientRect().top;
    if (Math.abs(dy) < 1) continue;
    node.style.transition = "none";
    node.style.transform = `translateY(${dy}px)`;
    void node.offsetHeight;
    node.style.transition = "";
    node.style.transform = "";
  }
  current = payload;
}

rowsBox.addEventListener("animationend", (e) => {
  e.target.classList.remove("changed", "up", "down", "enter");
});

function status(s) {
  const node = $("status");
  node.className = `status ${s} status-${statusMode}`;
  node.title = t("overlay.connection", "connection: {status}", { status: statusWords(s) });
  fill(node, s === "live" || statusMode !== "badge" ? "" : statusWords(s));
}

const onStakes = mountOverlayStakes(params, (no) => official?.standings.find((r) => r.start_no === no)?.name);  // mode=stakes&board=N, mode=chances, cues=1 (stakes.js)
// mode=live: the table as the games stand; boards=1: an eval bar per game in progress (boards.js)
let official = null;
const live = params.mode === "live" || params.boards === "1" ? mountOverlayLive(params, () => official && render(live.view(official))) : null;
const show = (m) => {
  official = m;
  if (params.mode === "match") {  // a team match's lower third (teams.js) instead of the table
    $("board").hidden = true;
    renderOverlayMatch(m, params.team, short);
    return;
  }
  if (m.teams && params.view !== "players" && params.mode === "table") {  // a team event: its teams (view=players: its players)
    rowEls.clear();
    current = null;
    renderOverlayTeams(m, $, top, short);
    return;
  }
  render(live ? live.view(m) : m);
};
window.trackerFeed = new LiveFeed(tournament, {
  onSnapshot: show,
  onUpdate: show,
  onStatus: status,
  onMessage: (m) => {
    live?.onMessage(m);
    onStakes?.(m);
    if (m.type === "stakes" && wantsWorth && m.worth) {
      worth.clear();
      for (const w of m.worth) worth.set(w.start_no, w);
      if (official) show(official);
    }
  },
}, { subscribe: subscribeOptions(params, !!onStakes || wantsWorth, !!live) }).start();
