// The arbiter projection on the dashboard: per player the final points, KS and
// rank ranges (and how they can be reached), where they stand against the final
// 50% line, each opponent's qualification, and what each pending game decides.
// It says what kind of answer it shows: exact ranges, bounds sent first while
// the exact search runs, or bounds because the search was cut short.

import { RESULT_WORDS, el, fill, fmt, shortName } from "/static/live.js";
import { rowOf, state, who } from "/static/arbiter-state.js";

const $ = (id) => document.getElementById(id);
const range = (lo, hi, f = fmt) => (lo === hi ? f(lo) : `${f(lo)}–${f(hi)}`);
const rankRange = (best, worst) => (best === worst ? String(best) : `${best}–${worst}`);
const ordinal = (n) => `${n}${[, "st", "nd", "rd"][(n % 100 >> 3 ^ 1) && n % 10] || "th"}`;

/** The player's own final score against the 50% line (what opponents' Koya counts), in words. */
const LINE_WORDS = {
  clinched: ["on or above 50% in every outcome", "≥ 50% sure"],
  eliminated: ["below 50% in every outcome", "< 50% sure"],
  open: ["above or below 50% depending on the remaining games", "50% open"],
};

/** Opponent statuses in the order of the current standings. */
function byRank(opponents) {
  const order = new Map(state.payload.standings.map((r, i) => [r.start_no, i]));
  return [...opponents].sort((a, b) => (order.get(a.start_no) ?? 1e9) - (order.get(b.start_no) ?? 1e9));
}

/** "How X can still finish 1st" (and how they could fall to their worst): the scenario behind each extreme. */
function howTheyFinish(row, x) {
  if (!x.scenarios || x.rank_best === x.rank_worst) return null;
  const games = (list) => el("ol", { class: "scenario" }, list.map((g) =>
    el("li", null, `${g.round ? `R${g.round} ` : ""}${shortName(rowOf(g.white)?.name ?? String(g.white))}–` +
      `${shortName(rowOf(g.black)?.name ?? String(g.black))} ${RESULT_WORDS[g.result]?.split(" ")[0] || g.result}`)));
  const name = shortName(row.name);
  const part = (key, rank, verb) => {
    const list = x.scenarios[key];
    if (!list || !list.length) return null;
    const sure = x.exact ? x.exact[key] : true;
    return el("div", { class: "how", dataset: { extreme: key } },
      el("p", null, `How ${name} ${verb} ${ordinal(rank)}${sure ? "" : " (the nearest scenario found; the range is a bound)"}:`),
      games(list));
  };
  return el("details", { class: "how-finish" },
    el("summary", null, `how ${name} can still finish ${ordinal(x.rank_best)}`),
    part("rank_best", x.rank_best, "can still finish"),
    part("rank_worst", x.rank_worst, "could finish"));
}

/** The badge saying what kind of answer this is, and its explanation. */
function kind(p) {
  if (p.cut_short) {
    const why = p.cut_short.reason === "memory" ? "it ran out of its memory" : "it ran out of its time";
    return ["cut", `cut short after ${fmt(p.cut_short.seconds)} s: values shown are bounds`,
      `The exact search was stopped (${why}); every range shown is sound (the final value lies inside) but may be wider.`];
  }
  if (p.preliminary) {
    return ["first", "bounds first: the exact projection is being computed…",
      "Sent at once while the exact search runs: every range is sound, the exact ones follow."];
  }
  return p.exact
    ? ["exact", "exact ranges", "every outcome of the remaining games was taken into account"]
    : ["bounds", "bounds", "sound bounds: the truth lies inside, the range may be wider"];
}

export function renderProjection(p) {
  if (!p || !state.payload || !state.payload.standings.length) return;
  const payload = state.payload;
  const [badge, words, title] = kind(p);
  fill($("proj-meta"),
    el("span", null, p.remaining
      ? `${p.remaining} game${p.remaining === 1 ? "" : "s"} remaining · final 50% line ${fmt(p.line)} points · `
      : `All games are in · 50% line ${fmt(p.line)} points · `),
    el("span", { class: `badge prov-badge proj-${badge}`, title, dataset: { kind: badge } }, words),
    el("span", null, ` · as of seq ${p.seq}`),
    p.seq < payload.seq ? el("span", { class: "stale" }, " (updating…)") : null);
  const byNo = new Map(p.players.map((x) => [x.start_no, x]));
  const head = el("thead", null, el("tr", null,
    el("th", { scope: "col" }, "Player"),
    el("th", { class: "num", scope: "col", title: "Points now" }, "Pts"),
    el("th", { class: "num", scope: "col", title: "Final points range" }, "Final pts"),
    el("th", { class: "num", scope: "col", title: "KS now" }, "KS"),
    el("th", { class: "num", scope: "col", title: "Final KS range" }, "Final KS"),
    el("th", { class: "num", scope: "col", title: "Final rank range" }, "Rank"),
    el("th", { scope: "col", dataset: { col: "line" }, title: "This player's own final score against the 50% line (whether they count in their opponents' Koya) — not a place in the standings" }, "50% line"),
    el("th", { scope: "col", title: "Each opponent's qualification against the final 50% line: clinched, open or eliminated" }, "Opponents ≥ 50%")));
  const body = el("tbody", null, payload.standings.filter((r) => byNo.has(r.start_no)).map((row) => {
    const x = byNo.get(row.start_no);
    const [sentence, short] = LINE_WORDS[x.qualification] || [x.qualification, x.qualification];
    return el("tr", { dataset: { start: row.start_no } },
      el("td", null, row.name),
      el("td", { class: "num" }, fmt(row.points)),
      el("td", { class: "num range" }, range(x.points_min, x.points_max)),
      el("td", { class: "num" }, fmt(row.tiebreaks.KS)),
      el("td", { class: "num range ks-range" }, range(x.ks_min, x.ks_max)),
      el("td", { class: "num range" }, rankRange(x.rank_best, x.rank_worst), howTheyFinish(row, x)),
      el("td", null, el("span", { class: `chip ${x.qualification}`, title: `${row.name}: ${sentence}`, dataset: { line: x.qualification } }, short)),
      el("td", null, el("div", { class: "chips" }, byRank(x.opponents).map((o) =>
        el("span", { class: `chip ${o.status}`, title: `${rowOf(o.start_no)?.name ?? o.start_no}: ${o.status}` }, shortName(rowOf(o.start_no)?.name ?? String(o.start_no)))))));
  }));
  fill($("proj-players"), head, body);

  const open = new Set([...document.querySelectorAll("#proj-games details[open]")].map((d) => d.dataset.game));
  const shown = p.games.slice(0, 60);
  fill($("proj-games"),
    shown.length ? el("h2", null, `Pending games (${p.games.length}): what each outcome leaves possible`) : null,
    el("div", { class: "pending-list" }, shown.map((g, i) => {
      const affected = [...new Set(g.outcomes.flatMap((o) => [...o.ks.map((k) => k.start_no), ...o.ranks.map((k) => k.start_no)]))];
      const key = `${g.round}:${g.white}:${g.black}`;
      const title = `${g.round ? `Round ${g.round}: ` : ""}${who(g.white)} – ${who(g.black)}`;
      const forced = g.outcomes.length === 1 ? ` · ${RESULT_WORDS[g.outcomes[0].result]} (a withdrawn player's game)` : "";
      const note = affected.length ? `changes ${affected.length} player${affected.length === 1 ? "'s" : "s'"} ranges` : "changes no one's ranges";
      return el("details", { class: "pending-game", dataset: { game: key }, open: open.has(key) || (!open.size && i === 0) },
        el("summary", null, el("span", { class: "game-title" }, title), el("span", { class: "legend" }, `${forced} · ${note}`)),
        affected.length ? el("div", { class: "scroll" }, el("table", { class: "outcomes" },
          el("thead", null, el("tr", null, el("th", { scope: "col" }, "If"), g.outcomes.map((o) => el("th", { scope: "col" }, RESULT_WORDS[o.result]?.split(" ")[0] || o.result)))),
          el("tbody", null, affected.map((no) => el("tr", null,
            el("th", { scope: "row" }, shortName(rowOf(no)?.name ?? String(no))),
            g.outcomes.map((o) => {
              const k = o.ks.find((v) => v.start_no === no), r = o.ranks.find((v) => v.start_no === no);
              return el("td", null, [k ? `KS ${range(k.min, k.max)}` : null, r ? `rank ${rankRange(r.best, r.worst)}` : null].filter(Boolean).join(" · ") || "—");
            })))))) : null);
    })),
    p.games.length > shown.length ? el("p", { class: "legend" }, `… and ${p.games.length - shown.length} more pending games.`) : null);
}
