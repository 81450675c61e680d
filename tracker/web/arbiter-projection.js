// The arbiter projection on the dashboard: per player the final points, KS and
// rank ranges (and how they can be reached), where they stand against the final
// 50% line, each opponent's qualification, and what each pending game decides.
// It says what kind of answer it shows: exact ranges, bounds sent first while
// the exact search runs, or bounds because the search was cut short.

import { RESULT_WORDS, el, fill, shortName } from "/static/live.js";
import { ordinal, points, t, tn } from "/static/i18n.js";
import { rowOf, state, who } from "/static/arbiter-state.js";

const $ = (id) => document.getElementById(id);
const fmt = (value) => points(Math.round(value * 100) / 100);
const range = (lo, hi, f = fmt) => (lo === hi ? f(lo) : `${f(lo)}–${f(hi)}`);
const rankRange = (best, worst) => (best === worst ? String(best) : `${best}–${worst}`);
const short = (r) => RESULT_WORDS[r]?.split(" ")[0] || r;

/** The player's own final score against the 50% line (what opponents' Koya counts), in words: [sentence, chip]. */
function lineWords(qualification) {
  switch (qualification) {
    case "clinched": return [t("arbiter.line.clinched", "on or above 50% in every outcome"), t("arbiter.line.clinched.short", "≥ 50% sure")];
    case "eliminated": return [t("arbiter.line.eliminated", "below 50% in every outcome"), t("arbiter.line.eliminated.short", "< 50% sure")];
    case "open": return [t("arbiter.line.open", "above or below 50% depending on the remaining games"), t("arbiter.line.open.short", "50% open")];
    default: return [qualification, qualification];
  }
}

/** An opponent's qualification in a word. */
function statusWord(status) {
  switch (status) {
    case "clinched": return t("arbiter.status.clinched", "clinched");
    case "eliminated": return t("arbiter.status.eliminated", "eliminated");
    case "open": return t("arbiter.status.open", "open");
    default: return status;
  }
}

/** Opponent statuses in the order of the current standings. */
function byRank(opponents) {
  const order = new Map(state.payload.standings.map((r, i) => [r.start_no, i]));
  return [...opponents].sort((a, b) => (order.get(a.start_no) ?? 1e9) - (order.get(b.start_no) ?? 1e9));
}

/** "How X can still finish 1st" (and how they could fall to their worst): the scenario behind each extreme. */
function howTheyFinish(row, x) {
  if (!x.scenarios || x.rank_best === x.rank_worst) return null;
  const games = (list) => el("ol", { class: "scenario" }, list.map((g) => {
    const round = g.round ? t("arbiter.how.round", "R{round} ", { round: g.round }) : "";
    const white = shortName(rowOf(g.white)?.name ?? String(g.white)), black = shortName(rowOf(g.black)?.name ?? String(g.black));
    return el("li", null, `${round}${white}–${black} ${short(g.result)}`);
  }));
  const name = shortName(row.name);
  const part = (key, heading) => {
    const list = x.scenarios[key];
    if (!list || !list.length) return null;
    const sure = x.exact ? x.exact[key] : true;
    const text = sure ? heading : t("arbiter.how.bound", "{heading} (the nearest scenario found; the range is a bound)", { heading });
    return el("div", { class: "how", dataset: { extreme: key } },
      el("p", null, t("arbiter.how.colon", "{text}:", { text })),
      games(list));
  };
  return el("details", { class: "how-finish" },
    el("summary", null, t("arbiter.how.summary", "how {name} can still finish {place}", { name, place: ordinal(x.rank_best) })),
    part("rank_best", t("arbiter.how.best", "How {name} can still finish {place}", { name, place: ordinal(x.rank_best) })),
    part("rank_worst", t("arbiter.how.worst", "How {name} could finish {place}", { name, place: ordinal(x.rank_worst) })));
}

/** The badge saying what kind of answer this is, and its explanation. */
function kind(p) {
  if (p.cut_short) {
    const why = p.cut_short.reason === "memory" ? t("arbiter.kind.memory", "it ran out of its memory") : t("arbiter.kind.time", "it ran out of its time");
    return ["cut", t("arbiter.kind.cut", "cut short after {seconds} s: values shown are bounds", { seconds: fmt(p.cut_short.seconds) }),
      t("arbiter.kind.cut.title", "The exact search was stopped ({why}); every range shown is sound (the final value lies inside) but may be wider.", { why })];
  }
  if (p.preliminary) {
    return ["first", t("arbiter.kind.first", "bounds first: the exact projection is being computed…"),
      t("arbiter.kind.first.title", "Sent at once while the exact search runs: every range is sound, the exact ones follow.")];
  }
  return p.exact
    ? ["exact", t("arbiter.kind.exact", "exact ranges"), t("arbiter.kind.exact.title", "every outcome of the remaining games was taken into account")]
    : ["bounds", t("arbiter.kind.bounds", "bounds"), t("arbiter.kind.bounds.title", "sound bounds: the truth lies inside, the range may be wider")];
}

export function renderProjection(p) {
  if (!p || !state.payload || !state.payload.standings.length) return;
  const payload = state.payload;
  const [badge, words, title] = kind(p);
  fill($("proj-meta"),
    el("span", null, p.remaining
      ? tn("arbiter.proj.remaining", "{n} game remaining · final 50% line {line} points · ", "{n} games remaining · final 50% line {line} points · ", { n: p.remaining, line: fmt(p.line) })
      : t("arbiter.proj.all_in", "All games are in · 50% line {line} points · ", { line: fmt(p.line) })),
    el("span", { class: `badge prov-badge proj-${badge}`, title, dataset: { kind: badge } }, words),
    el("span", null, t("arbiter.proj.seq", " · as of seq {seq}", { seq: p.seq })),
    p.seq < payload.seq ? el("span", { class: "stale" }, t("arbiter.proj.updating", " (updating…)")) : null);
  const byNo = new Map(p.players.map((x) => [x.start_no, x]));
  const head = el("thead", null, el("tr", null,
    el("th", { scope: "col" }, t("arbiter.proj.player", "Player")),
    el("th", { class: "num", scope: "col", title: t("arbiter.proj.pts.title", "Points now") }, t("arbiter.proj.pts", "Pts")),
    el("th", { class: "num", scope: "col", title: t("arbiter.proj.final_pts.title", "Final points range") }, t("arbiter.proj.final_pts", "Final pts")),
    el("th", { class: "num", scope: "col", title: t("arbiter.proj.ks.title", "KS now") }, "KS"),
    el("th", { class: "num", scope: "col", title: t("arbiter.proj.final_ks.title", "Final KS range") }, t("arbiter.proj.final_ks", "Final KS")),
    el("th", { class: "num", scope: "col", title: t("arbiter.proj.rank.title", "Final rank range") }, t("arbiter.proj.rank", "Rank")),
    el("th", { scope: "col", dataset: { col: "line" }, title: t("arbiter.proj.line.title", "This player's own final score against the 50% line (whether they count in their opponents' Koya) — not a place in the standings") }, t("arbiter.proj.line", "50% line")),
    el("th", { scope: "col", title: t("arbiter.proj.opponents.title", "Each opponent's qualification against the final 50% line: clinched, open or eliminated") }, t("arbiter.proj.opponents", "Opponents ≥ 50%"))));
  const body = el("tbody", null, payload.standings.filter((r) => byNo.has(r.start_no)).map((row) => {
    const x = byNo.get(row.start_no);
    const [sentence, chip] = lineWords(x.qualification);
    return el("tr", { dataset: { start: row.start_no } },
      el("td", null, row.name),
      el("td", { class: "num" }, fmt(row.points)),
      el("td", { class: "num range" }, range(x.points_min, x.points_max)),
      el("td", { class: "num" }, fmt(row.tiebreaks.KS)),
      el("td", { class: "num range ks-range" }, range(x.ks_min, x.ks_max)),
      el("td", { class: "num range" }, rankRange(x.rank_best, x.rank_worst), howTheyFinish(row, x)),
      el("td", null, el("span", { class: `chip ${x.qualification}`, title: `${row.name}: ${sentence}`, dataset: { line: x.qualification } }, chip)),
      el("td", null, el("div", { class: "chips" }, byRank(x.opponents).map((o) =>
        el("span", { class: `chip ${o.status}`, title: `${rowOf(o.start_no)?.name ?? o.start_no}: ${statusWord(o.status)}` }, shortName(rowOf(o.start_no)?.name ?? String(o.start_no)))))));
  }));
  fill($("proj-players"), head, body);

  const open = new Set([...document.querySelectorAll("#proj-games details[open]")].map((d) => d.dataset.game));
  const shown = p.games.slice(0, 60);
  fill($("proj-games"),
    shown.length ? el("h2", null, t("arbiter.proj.games", "Pending games ({n}): what each outcome leaves possible", { n: p.games.length })) : null,
    el("div", { class: "pending-list" }, shown.map((g, i) => {
      const affected = [...new Set(g.outcomes.flatMap((o) => [...o.ks.map((k) => k.start_no), ...o.ranks.map((k) => k.start_no)]))];
      const key = `${g.round}:${g.white}:${g.black}`;
      const game = `${who(g.white)} – ${who(g.black)}`;
      const title = g.round ? t("arbiter.proj.game", "Round {round}: {game}", { round: g.round, game }) : game;
      const forced = g.outcomes.length === 1 ? t("arbiter.proj.forced", " · {result} (a withdrawn player's game)", { result: RESULT_WORDS[g.outcomes[0].result] }) : "";
      const note = affected.length
        ? tn("arbiter.proj.changes", "changes {n} player's ranges", "changes {n} players' ranges", { n: affected.length })
        : t("arbiter.proj.changes_none", "changes no one's ranges");
      return el("details", { class: "pending-game", dataset: { game: key }, open: open.has(key) || (!open.size && i === 0) },
        el("summary", null, el("span", { class: "game-title" }, title), el("span", { class: "legend" }, `${forced} · ${note}`)),
        affected.length ? el("div", { class: "scroll" }, el("table", { class: "outcomes" },
          el("thead", null, el("tr", null, el("th", { scope: "col" }, t("arbiter.proj.if", "If")), g.outcomes.map((o) => el("th", { scope: "col" }, short(o.result))))),
          el("tbody", null, affected.map((no) => el("tr", null,
            el("th", { scope: "row" }, shortName(rowOf(no)?.name ?? String(no))),
            g.outcomes.map((o) => {
              const k = o.ks.find((v) => v.start_no === no), r = o.ranks.find((v) => v.start_no === no);
              return el("td", null, [k ? `KS ${range(k.min, k.max)}` : null, r ? t("arbiter.proj.rank_in", "rank {range}", { range: rankRange(r.best, r.worst) }) : null].filter(Boolean).join(" · ") || "—");
            })))))) : null);
    })),
    p.games.length > shown.length ? el("p", { class: "legend" }, tn("arbiter.proj.more", "… and {n} more pending game.", "… and {n} more pending games.", { n: p.games.length - shown.length })) : null);
}
