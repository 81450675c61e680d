// The arbiter page's prizes: with prizes declared (tournament_opened's prizes, sharing and categories), each
// player's money from the stakes message's worth — the least and most still possible while games remain, the
// split to pay once every game is in, with its total against the prizes declared — and, with categories, the
// list paying it (the place prizes or a category: the split's, or the most's while games remain).  Inserted as
// text.

import { el, fill } from "/static/live.js";
import { t } from "/static/i18n.js";
import { amount, moneyRange } from "/static/stakes.js";

const $ = (id) => document.getElementById(id);

function sharingWords(sharing) {
  switch (sharing) {
    case "none": return t("arbiter.prizes.none", "by place (tie-breaks decide)");
    case "average": return t("arbiter.prizes.average", "shared equally among players equal on points");
    case "hort": return t("arbiter.prizes.hort", "Hort: half by place, half shared among players equal on points");
    default: return sharing;
  }
}

/** Show the prizes card from a stakes message `m` (its worth, prizes and sharing), beside the standings `payload`. */
function fromWords(from) {
  if (from === null || from === undefined) return "–";
  return from === "place" ? t("arbiter.prizes.place", "place") : from;
}

export function renderPrizes(m, payload) {
  const categories = m.categories || [];
  const declared = m.prizes?.length || categories.length ? { prizes: m.prizes || [], sharing: m.sharing } : null;
  const card = $("prizes");
  const rows = (m.worth || []).filter((w) => "prize" in w || "prize_min" in w);
  card.hidden = !rows.length || !payload;
  if (card.hidden) return;
  card.dataset.seq = String(m.seq);
  const final = rows.every((w) => "prize" in w);
  const names = new Map(payload.standings.map((r) => [r.start_no, r.name]));
  const order = new Map(payload.standings.map((r, k) => [r.start_no, k]));
  rows.sort((a, b) => (order.get(a.start_no) ?? 0) - (order.get(b.start_no) ?? 0));
  const shown = rows.filter((w) => (final ? w.prize : w.prize_max) > 0);
  const total = final ? shown.reduce((sum, w) => sum + w.prize, 0) : null;
  const want = declared
    ? [...declared.prizes, ...categories.flatMap((c) => c.prizes)].reduce((sum, p) => sum + p, 0)
    : null;
  fill($("prizes-meta"),
    declared ? `${declared.prizes.map(amount).join(" · ") || "–"} — ${sharingWords(declared.sharing)}` : "",
    categories.length
      ? el("span", { class: "categories" }, el("br"),
        t("arbiter.prizes.categories", "Categories, one prize per player:"), " ",
        categories.map((c) => `${c.name} (${c.rule}): ${c.prizes.map(amount).join(" · ")}`).join("; "))
      : null,
    el("br"),
    final
      ? t("arbiter.prizes.final", "All games are in: the split to pay, {total} in all.", { total: amount(total) })
      : t("arbiter.prizes.open", "While games remain: the least and the most each player can still receive (exact over the remaining games unless marked ≈)."),
    final && want !== null && Math.abs(total - want) > 1e-9
      ? el("span", { class: "stale" }, " ", categories.length
        ? t("arbiter.prizes.left_categories", "(the prizes declared add up to {declared}: some found no player left to take them)", { declared: amount(want) })
        : t("arbiter.prizes.left", "(the prizes declared add up to {declared}: fewer players than prizes)", { declared: amount(want) }))
      : null);
  fill($("prizes-table"),
    el("thead", null, el("tr", null,
      el("th", { scope: "col" }, t("column.player", "Player")),
      el("th", { class: "num", scope: "col" }, final ? t("arbiter.prizes.pay", "To pay") : t("worth.prize", "Prize")),
      categories.length ? el("th", { scope: "col" }, final ? t("arbiter.prizes.from", "Paid from") : t("arbiter.prizes.most_from", "The most from")) : null)),
    el("tbody", null, shown.map((w) => el("tr", { dataset: { start: w.start_no } },
      el("td", null, names.get(w.start_no) || String(w.start_no)),
      el("td", { class: "num prize" }, final ? amount(w.prize) : moneyRange(w.prize_min, w.prize_max),
        w.prize_exact === false ? el("span", { class: "badge bound", title: t("stakes.bound.title", "the search stopped early: these are proven, there may be more") }, "≈") : null),
      categories.length ? el("td", { class: "from" }, fromWords(final ? w.prize_from : w.prize_max_from)) : null))));
}
