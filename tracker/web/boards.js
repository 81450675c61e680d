// Live boards on the pages: the games in progress with an eval bar each, and the standings "if the games
// ended now" (an estimate, shown beside the official standings, never instead of them).
//
// The server sends `boards` (every game in progress) and `live` (the as-it-stands rows as a delta
// against the official standings at its seq) to a page that subscribes with boards: true.  A live
// message for an older official seq than the page shows is stale: it waits for the next one.

import { applyDelta, el, fill, fmt, sentenceName, shortName } from "/static/live.js";
import { decimals, say, t, tn } from "/static/i18n.js";
import { directEncounter, placeWords } from "/static/explain.js";
import { ratingChange } from "/static/stakes.js";

/** The stylesheet of these parts, added once (CSP: styles from this origin only). */
function styles() {
  if (document.querySelector('link[href="/static/boards.css"]')) return;
  document.head.appendChild(el("link", { rel: "stylesheet", href: "/static/boards.css" }));
}

/** White's share of the bar (0–1): the expected score from the board's win/draw/loss, else ½. */
export function whiteShare(board) {
  if (!board.wdl) return 0.5;
  const [w, d] = board.wdl;
  return (w + d / 2) / 1000;
}

/** An eval bar: White's share as a filled bar, the evaluation as text (a screen reader reads the label). */
export function evalBar(board) {
  const share = whiteShare(board);
  const text = board.eval_text ? decimals(board.eval_text) : "";  // "+3,2" where the language writes 2,5
  const label = text ? t("boards.evaluation", "evaluation {eval}", { eval: text }) : t("boards.no_evaluation", "no evaluation");
  const white = el("span", { class: "evalbar-white" });
  white.style.width = `${(share * 100).toFixed(1)}%`;  // CSSOM, not a style attribute: the CSP allows it
  return el("span", { class: "evalbar-box", title: label },
    el("span", { class: "evalbar", role: "img", "aria-label": label, dataset: { share: share.toFixed(3) } }, white),
    el("span", { class: "evalbar-text" }, text || "–"));
}

/** A clock's time left as a board shows it: "1:02:05", "9:58", "0:07" (seconds, from the PGN's [%clk]). */
export function clockText(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), ss = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** Both clocks of a board (White's first, as the players are written), or nothing when the source gives none. */
function clocks(b) {
  if (b.white_clock == null && b.black_clock == null) return el("span", { class: "board-clocks" });
  const white = b.white_clock == null ? "–" : clockText(b.white_clock);
  const black = b.black_clock == null ? "–" : clockText(b.black_clock);
  return el("span", { class: "board-clocks", title: t("boards.clocks", "clocks: White {white}, Black {black}", { white, black }) },
    el("span", { class: "clock white" }, white), " – ", el("span", { class: "clock black" }, black));
}

/** The standings as they stand (official + the live delta), with each row's official rank beside it. */
export function asItStands(official, live) {
  if (!official || !live || live.seq !== official.seq) return null;
  const after = applyDelta(official, { tournament: official.tournament, seq: official.seq, rows: live.rows, order: live.order });
  const ranks = new Map(official.standings.map((r) => [r.start_no, r.rank]));
  return { ...after, officialRanks: ranks, live };
}

/** A DE cell as it stands: the place among the tied, starred while two of them have still to meet (as the
 * official table writes it: the games in progress count as played, the games to come do not). */
function deText(view, row, code) {
  return directEncounter(view, row, code)?.text ?? placeWords(row.tiebreaks[code]);
}

/** "▲2", "▼1" or "" for a row as it stands against its official rank. */
export function arrow(row, ranks) {
  const was = ranks?.get(row.start_no);
  if (was === undefined || was === row.rank) return "";
  return was > row.rank ? `▲${was - row.rank}` : `▼${row.rank - was}`;
}

/** Keeps the newest boards and live messages of one tournament (by live_seq). */
export class LiveState {
  constructor() {
    this.boards = null;
    this.live = null;
  }

  /** Take a message; true when it was a boards or live message newer than the one kept. */
  take(m) {
    if (m.type === "boards" && (!this.boards || m.live_seq >= this.boards.live_seq)) {
      this.boards = m;
      return true;
    }
    if (m.type === "live" && (!this.live || m.seq > this.live.seq || m.live_seq >= this.live.live_seq)) {
      this.live = m;
      return true;
    }
    return false;
  }
}

/** How long ago a board's source sent it ("45 s ago", "3 min ago", "2 h ago"): the message's `age`, seconds. */
export function ageText(age) {
  const s = Math.max(0, Math.floor(age));
  if (s < 60) return t("boards.age_s", "{n} s ago", { n: s });
  if (s < 3600) return t("boards.age_min", "{n} min ago", { n: Math.floor(s / 60) });
  return t("boards.age_h", "{n} h ago", { n: Math.floor(s / 3600) });
}

/** A stale board's mark (its source stopped sending it: the position as last known), or nothing when live. */
export function staleMark(b) {
  if (!b.stale) return null;
  const text = b.age == null
    ? t("boards.restored", "stale · not sent again since the restart")
    : t("boards.stale", "stale · {age}", { age: ageText(b.age) });
  return el("span", { class: "board-stale", title: t("boards.stale_title", "its source has not sent this game again: the position as last known") }, text);
}

function boardLine(b, names) {
  const white = shortName(names.get(b.white) || String(b.white));
  const black = shortName(names.get(b.black) || String(b.black));
  return el("li", { class: b.stale ? "board-line stale" : "board-line", dataset: { white: b.white, black: b.black, board: b.board } },
    el("span", { class: "board-no" }, b.board ? String(b.board) : "·"),
    el("span", { class: "board-players" }, `${white} – ${black}`, staleMark(b)),
    evalBar(b),
    clocks(b),
    el("span", { class: "board-move" }, b.last_move ? `${Math.ceil(b.ply / 2)}${b.ply % 2 ? "." : "…"} ${b.last_move}` : ""));
}

/**
 * The spectator page's live part, under `main`: the games in progress with their eval bars, and the
 * standings if the games ended now beside the official ones.  Returns {onMessage, official(payload)}.
 */
export function mountSpectatorBoards(main) {
  styles();
  const state = new LiveState();
  let official = null;
  let ratings = new Map();  // start number → the official rating change and performance (the newest stakes' worth)
  const section = el("section", { id: "live", class: "card live-card", hidden: true, "aria-labelledby": "live-h" },
    el("h2", { id: "live-h" }, t("boards.heading", "Games in progress"), " ", el("span", { class: "badge estimate" }, t("page.estimate", "estimate"))),
    el("ol", { id: "live-boards", class: "live-boards" }),
    el("h3", null, t("boards.if_ended", "If the games ended now")),
    el("p", { id: "live-note", class: "legend" }),
    el("div", { class: "scroll" }, el("table", { id: "live-table", class: "standings live-standings" })),
    el("ul", { id: "live-stakes", class: "live-stakes" }));
  main.insertBefore(section, main.querySelector(".layout")?.nextSibling || null);

  function draw() {
    const boards = state.boards?.boards || [];
    section.hidden = boards.length === 0;
    if (!official || section.hidden) return;
    const names = new Map(official.standings.map((r) => [r.start_no, r.name]));
    section.dataset.seq = String(state.boards.seq);
    fill(section.querySelector("#live-boards"), boards.map((b) => boardLine(b, names)));
    const view = asItStands(official, state.live);
    const table = section.querySelector("#live-table");
    if (!view) {
      fill(section.querySelector("#live-note"), t("boards.working", "Working out the standings as they stand…"));
      table.replaceChildren();
      return;
    }
    section.dataset.liveSeq = String(view.live.live_seq);
    const assumed = view.live.results.length;
    fill(section.querySelector("#live-note"),
      tn("boards.note", "Each game in progress counted at its most likely result ({n} game); the official standings are the table above.",
        "Each game in progress counted at its most likely result ({n} games); the official standings are the table above.", { n: assumed }));
    const codes = (view.codes || []).slice(0, 3);
    // the rating change as it stands: the players of the games in progress from the live message, the
    // others' official one (from the stakes message); the column only when a game in progress is rated
    const live = new Map((view.live.worth || []).map((w) => [w.start_no, w]));
    const rated = [...live.values()].some((w) => w.rating_change !== null);
    const rating = (no) => {
      const w = live.get(no) ?? ratings.get(no);
      return el("td", { class: `num rating-change${live.has(no) ? " as-it-stands" : ""}` }, ratingChange(w?.rating_change));
    };
    fill(table,
      el("thead", null, el("tr", null, el("th", { scope: "col" }, "#"), el("th", { scope: "col" }, ""),
        el("th", { scope: "col" }, t("column.player", "Player")), el("th", { class: "num", scope: "col" }, t("column.pts", "Pts")),
        codes.map((c) => el("th", { class: "num", scope: "col" }, c)),
        rated ? el("th", { class: "num", scope: "col", title: t("worth.rating.title", "rating change so far") }, t("worth.rating", "Rating ±")) : null)),
      el("tbody", null, view.standings.map((row) => {
        const move = arrow(row, view.officialRanks);
        return el("tr", { dataset: { start: row.start_no, rank: row.rank } },
          el("td", { class: "num" }, String(row.rank)),
          el("td", { class: `arrow ${move.startsWith("▲") ? "up" : move ? "down" : ""}` }, move),
          el("td", null, row.name),
          el("td", { class: "num" }, fmt(row.points)),
          codes.map((c) => el("td", { class: "num", dataset: { code: c } }, c.toUpperCase() === "DE" ? deText(view, row, c) : fmt(row.tiebreaks[c] ?? 0))),
          rated ? rating(row.start_no) : null);
      })));
    const write = (no) => sentenceName(names.get(no) || String(no));
    fill(section.querySelector("#live-stakes"), view.live.stakes.map((s) => el("li", null, say(s.said, write, s.text))));
  }

  return {
    onMessage(m) {
      if (m.type === "stakes" && m.worth) {
        ratings = new Map(m.worth.map((w) => [w.start_no, w]));
        draw();
        return;
      }
      if (state.take(m)) draw();
    },
    official(payload) {
      official = payload;
      draw();
    },
  };
}

/**
 * The overlay's live parts: mode=live shows the standings as they stand (arrows against the official
 * ranks), boards=1 an eval bar per game in progress under the table.  Returns {onMessage, view}.
 */
export function mountOverlayLive(params, redraw) {
  styles();
  const state = new LiveState();
  const bars = params.boards === "1" ? el("ol", { id: "overlay-boards", class: "overlay-boards", hidden: true }) : null;
  if (bars) document.getElementById("board").insertBefore(bars, document.getElementById("foot"));
  if (params.mode === "live") {  // the table is an estimate: said on air, in the head
    document.querySelector(".board-head .title")?.after(
      el("span", { class: "live-badge", title: t("boards.live.title", "each game in progress counted at its most likely result") }, t("boards.as_it_stands", "as it stands")));
  }
  let official = null;
  return {
    onMessage(m) {
      if (!state.take(m)) return;
      if (bars && official && state.boards) {
        const names = new Map(official.standings.map((r) => [r.start_no, r.name]));
        bars.hidden = !state.boards.boards.length;
        fill(bars, state.boards.boards.map((b) => boardLine(b, names)));
      }
      if (m.type === "live" && params.mode === "live") redraw();
    },
    /** What the table shows: as it stands in mode=live (when known for this seq), else the official payload. */
    view(payload) {
      official = payload;
      return params.mode === "live" ? asItStands(payload, state.live) || payload : payload;
    },
  };
}
