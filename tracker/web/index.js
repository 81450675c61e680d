// Index: the tournaments this tracker serves, with links to their pages.

import { el, fill, startLanguage } from "/static/live.js";
import { t, tn } from "/static/i18n.js";

const asked = new URLSearchParams(location.search).get("lang");
const lang = await startLanguage(asked);
const list = document.getElementById("tournaments");

/** A tournament's page; with ?lang= when this page was asked for a language (the overlay takes &lang= too). */
function page(prefix, id) {
  return `/${prefix}/${encodeURIComponent(id)}${asked ? `?lang=${encodeURIComponent(lang)}` : ""}`;
}

async function refresh() {
  let data;
  try {
    const response = await fetch("/api/tournaments", { cache: "no-store" });
    data = await response.json();
  } catch {
    return;  // try again on the next tick
  }
  const tournaments = data.tournaments || [];
  document.getElementById("empty").hidden = tournaments.length > 0;
  fill(list, tournaments.map((one) => {
    const played = tn("index.played", "{n} game played", "{n} games played", { n: one.games_played });
    const rounds = tn("index.rounds", "{n} round", "{n} rounds", { n: one.rounds || 0 });
    const total = one.rounds ? `${played} · ${rounds}` : played;
    return el("li", { dataset: { id: one.id } },
      el("span", { class: "tname" }, one.name || one.id),
      el("span", { class: "tmeta" }, total),
      el("span", { class: "links" },
        el("a", { href: page("t", one.id) }, t("index.standings", "Standings")),
        el("a", { href: page("overlay", one.id) }, t("index.overlay", "Overlay")),
        el("a", { href: page("arbiter", one.id) }, t("index.arbiter", "Arbiter"))));
  }));
  document.documentElement.dataset.loaded = "true";
}

refresh();
setInterval(refresh, 5000);
