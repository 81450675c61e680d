// Index: the tournaments this tracker serves, with links to their pages.

import { el, fill } from "/static/live.js";

const list = document.getElementById("tournaments");

function page(prefix, id) {
  return `/${prefix}/${encodeURIComponent(id)}`;
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
  fill(list, tournaments.map((t) => {
    const total = t.rounds ? `${t.games_played} games played · ${t.rounds} rounds` : `${t.games_played} games played`;
    return el("li", { dataset: { id: t.id } },
      el("span", { class: "tname" }, t.name || t.id),
      el("span", { class: "tmeta" }, total),
      el("span", { class: "links" },
        el("a", { href: page("t", t.id) }, "Standings"),
        el("a", { href: page("overlay", t.id) }, "Overlay"),
        el("a", { href: page("arbiter", t.id) }, "Arbiter")));
  }));
  document.documentElement.dataset.loaded = "true";
}

refresh();
setInterval(refresh, 5000);
