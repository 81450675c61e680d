// Late-round intelligence on the public pages: what each pending game decides
// (exact, or proven and labelled), the chances from ratings (an estimate,
// shown apart and labelled as one), and producers' cues as lower thirds.
//
// The server sends "stakes" and "cue" messages to a subscriber that asks
// with {"stakes": true}; {"delay": N} holds back everything it is sent by N
// seconds (a spoiler delay).  The pages hand these messages here through
// LiveFeed's onMessage.  Everything from the server is inserted as text.

import { el, fill, resultWords, sentenceName, shortName } from "/static/live.js";
import { number, say, t } from "/static/i18n.js";

function stateWords(state) {
  switch (state) {
    case "clinched": return t("stakes.state.clinched", "clinched");
    case "playoff": return t("stakes.state.playoff", "at least a play-off");
    case "open": return t("stakes.state.open", "open");
    case "eliminated": return t("stakes.state.eliminated", "out");
    case "unknown": return t("stakes.state.unknown", "not decided yet");
    default: return state;
  }
}
const MAX_DELAY = 600;
const CUE_MS = 5000;      // how long a lower third stays when nothing newer is waiting
const CUE_MIN_MS = 1500;  // how long it stays at least when a newer update's cue is waiting
const CUE_ORDER = ["clinched", "leader", "lost", "overtake"];
function cueLabel(kind) {
  switch (kind) {
    case "clinched": return t("cue.clinched", "CLINCHED");
    case "lost": return t("cue.lost", "OUT");
    case "leader": return t("cue.leader", "LEADER");
    case "overtake": return t("cue.overtake", "TIE-BREAK");
    default: return kind;
  }
}

/** A line's name in the page's language: "1st" and "top N" as the server names undeclared lines, else as declared. */
export function lineName(line) {
  if (line.name === "1st" && line.places === 1) return t("line.first", "1st");
  if (line.name === `top ${line.places}`) return t("line.top", "top {n}", { n: line.places });
  return line.name;
}

/** How the server's sentences write a player of a stakes message (the surname). */
function writer(message) {
  const who = names(message);
  return (startNo) => sentenceName(who.get(startNo) || String(startNo));
}

/** The stylesheet of these parts, added once (CSP: styles from this origin only). */
function styles() {
  if (document.querySelector('link[href="/static/stakes.css"]')) return;
  document.head.appendChild(el("link", { rel: "stylesheet", href: "/static/stakes.css" }));
}

/** Subscribe options from the page's parameters (readParams): stakes, boards when wanted, the delay when asked. */
export function subscribeOptions(params, stakes = true, boards = false) {
  const options = stakes ? { stakes: true } : {};
  if (boards) options.boards = true;
  if (params.delay > 0) options.delay = Math.min(MAX_DELAY, params.delay);
  return options;
}

function names(message) {
  return new Map(message.players.map((p) => [p.start_no, p.name]));
}

function pct(x) {
  if (x >= 0.9995) return "100%";
  if (x > 0 && x < 0.0005) return `<${number(0.1, 1)}%`;
  return `${number(x * 100, x < 0.1 ? 1 : 0)}%`;
}

/**
 * A chance as shown: "out" where the exact stakes say the player can no longer reach that line (the
 * estimate's 0.0% would read as "unlikely"), the estimate otherwise.  `places` 1 is 1st (judged on
 * tie-breaks: with a play-off for 1st the estimate stands).
 */
function chanceCell(message, startNo, places, chance) {
  const line = message.players.find((p) => p.start_no === startNo)?.lines.find((l) => l.places === places);
  if (line?.state === "eliminated" && !(places === 1 && message.playoff)) {
    return el("span", { class: "out", title: t("stakes.out.title", "eliminated: no result of the remaining games brings this line within reach (exact)") },
      t("stakes.state.eliminated", "out"));
  }
  return pct(chance);
}

/** "If Caruana wins" / "If they draw": one result of a pending game, its two players named as given. */
export function outcomeWords(result, white, black) {
  if (result === "1-0") return t("stakes.if_wins", "If {player} wins", { player: white });
  if (result === "0-1") return t("stakes.if_wins", "If {player} wins", { player: black });
  return t("stakes.if_draw", "If they draw");
}

/** One pending game and what each outcome decides, as a list item. */
function gameItem(game, who, write) {
  const white = shortName(who.get(game.white) || String(game.white));
  const black = shortName(who.get(game.black) || String(game.black));
  const decided = game.outcomes.filter((o) => o.stakes.length || o.norms?.length || o.money?.length);
  return el("li", { class: "stake-game", dataset: { white: game.white, black: game.black, exact: game.exact, board: game.board || null } },
    el("div", { class: "stake-pair" },
      game.round ? el("span", { class: "stake-round" }, `R${game.round}`) : null,
      game.board ? el("span", { class: "stake-board" }, t("stakes.board_no", "Board {board}", { board: game.board })) : null,
      el("strong", null, `${white} – ${black}`),
      game.exact ? null : el("span", { class: "badge bound", title: t("stakes.bound.title", "the search stopped early: these are proven, there may be more") },
        t("stakes.bound", "proven so far"))),
    decided.length
      ? el("ul", { class: "stake-outcomes" }, decided.map((o) =>
        el("li", { dataset: { result: o.result } },
          el("span", { class: "stake-if", title: resultWords(o.result) }, `${outcomeWords(o.result, white, black)}: `),
          o.stakes.map((s, k) => [k ? "; " : null, el("span", { class: `stake ${s.after}` }, say(s.said, write, s.text))]),
          (o.norms || []).map((s, k) => [k || o.stakes.length ? "; " : null,
            el("span", { class: `stake norm ${s.after}`, dataset: { start: s.start_no, title: s.title } }, say(s.said, write, s.text))]),
          (o.money || []).map((x, k) => [k || o.stakes.length || o.norms?.length ? "; " : null,
            el("span", { class: "stake money", dataset: { start: x.start_no } },
              t("worth.money_then", "{player}: prize {money}", { player: write(x.start_no), money: moneyRange(x.least, x.most) }))]))))
      : el("p", { class: "stake-none" }, t("stakes.none", "decides no line on its own")));
}

/** The chances table: labelled as an estimate, kept apart from the exact answers. */
function chancesTable(message) {
  const c = message.chances;
  if (!c) return null;
  const who = names(message);
  const rows = [...c.players].sort((a, b) => b.first - a.first || a.start_no - b.start_no);
  const showLines = c.players[0]?.lines.filter((l) => !(message.playoff && l.places === 1) && l.places !== 1) ?? [];
  return el("div", { class: "chances" },
    el("h3", null, t("stakes.chances", "Chances from ratings"), " ", el("span", { class: "badge estimate" }, t("page.estimate", "estimate"))),
    el("p", { class: "explain" }, t("stakes.chances.explain", "An estimate, not a result: {model} (seed {seed}). The exact answers are above.",
      { model: modelWords(c), seed: c.seed })),
    el("table", { class: "chances-table" },
      el("thead", null, el("tr", null,
        el("th", { scope: "col" }, t("column.player", "Player")),
        el("th", { class: "num", scope: "col" }, t("line.first", "1st")),
        message.playoff ? el("th", { class: "num", scope: "col" }, t("chances.playoff", "play-off")) : null,
        showLines.map((l) => el("th", { class: "num", scope: "col" }, lineName(l))))),
      el("tbody", null, rows.map((p) => el("tr", { dataset: { start: p.start_no } },
        el("td", null, who.get(p.start_no) || String(p.start_no)),
        el("td", { class: "num" }, chanceCell(message, p.start_no, 1, p.first)),
        message.playoff ? el("td", { class: "num" }, pct(p.playoff ?? 0)) : null,
        p.lines.filter((l) => l.places !== 1).map((l) => el("td", { class: "num" }, chanceCell(message, p.start_no, l.places, l.chance))))))));
}

/** How the chances were simulated, in the page's language (the server's `model` says it in English). */
function modelWords(c) {
  if (typeof c.draw_rate !== "number" || typeof c.runs !== "number") return c.model;
  return t("stakes.model", "Elo expectation, draw rate {rate} between equals, {runs} simulated runs",
    { rate: String(Number(c.draw_rate.toPrecision(6))).replace(".", number(0.5, 1)[1]), runs: c.runs });
}

/** A rating change as a rating report writes it: signed, one decimal ("+4,6", "−12,0"), "–" when unrated. */
export function ratingChange(value) {
  if (value === null || value === undefined) return "–";
  if (value === 0) return number(0, 1);
  return (value > 0 ? "+" : "−") + number(Math.abs(value), 1);
}

/** An amount of prize money as the page's language writes it (no currency: the tournament declares none). */
export function amount(value) {
  return number(value, Number.isInteger(value) ? 0 : 2);
}

/** A player's money: "600" once certain, else "400–1000" (least–most). */
export function moneyRange(least, most) {
  return least === most ? amount(least) : `${amount(least)}–${amount(most)}`;
}

/** The worth of one player in a stakes message (rating change, performance, norms), or undefined. */
export function worthOf(message, startNo) {
  return message.worth?.find((w) => w.start_no === startNo);
}

/**
 * The spectator page's card of what results are worth to each player: the rating change over the rated
 * games so far (FIDE B.02), the performance (TPR) and the title norms still in play (B.01), each in a
 * sentence.  Players without a rated game and without a norm in play are left out.
 */
function worthCard(card, m) {
  const prizes = (m.worth || []).some((w) => "prize" in w || "prize_min" in w);
  const rows = (m.worth || []).filter((w) => w.rating_change !== null || w.performance !== null || w.norms.length
    || w.prize > 0 || w.prize_max > 0);
  card.hidden = !rows.length;
  card.dataset.seq = String(m.seq);
  if (!rows.length) return;
  const who = names(m);
  const write = writer(m);
  const order = new Map(m.players.map((p, k) => [p.start_no, k]));
  rows.sort((a, b) => (order.get(a.start_no) ?? 0) - (order.get(b.start_no) ?? 0));
  fill(document.getElementById("worth-body"),
    el("p", { class: "explain" }, t("worth.explain",
      "Rating change over the rated games so far (FIDE rating regulations, K from the start list), performance rating, and the title norms still in play over the whole remaining schedule (exact).")),
    el("table", { class: "worth-table" },
      el("thead", null, el("tr", null,
        el("th", { scope: "col" }, t("column.player", "Player")),
        el("th", { class: "num", scope: "col", title: t("worth.rating.title", "rating change so far") }, t("worth.rating", "Rating ±")),
        el("th", { class: "num", scope: "col", title: t("tiebreak.TPR.name", "Performance rating") }, t("worth.performance", "Perf.")),
        el("th", { scope: "col" }, t("worth.norms", "Norms")),
        prizes ? el("th", { class: "num", scope: "col", title: t("worth.prize.title", "the prize money paid, or the least and most still possible over the remaining games") },
          t("worth.prize", "Prize")) : null)),
      el("tbody", null, rows.map((w) => el("tr", { dataset: { start: w.start_no } },
        el("td", null, who.get(w.start_no) || String(w.start_no)),
        el("td", { class: "num rating-change" }, ratingChange(w.rating_change)),
        el("td", { class: "num performance" }, w.performance === null ? "–" : String(w.performance)),
        el("td", { class: "norms" }, w.norms.length
          ? w.norms.map((n, k) => [k ? "; " : null, el("span", { class: `norm ${n.status}`, dataset: { title: n.title } }, say(n.said, write, n.text))])
          : "–"),
        prizes ? el("td", { class: "num prize", dataset: { exact: w.prize_exact === false ? "false" : "true" } },
          "prize" in w ? amount(w.prize) : "prize_min" in w ? moneyRange(w.prize_min, w.prize_max) : "–",
          w.prize_exact === false ? el("span", { class: "badge bound", title: t("stakes.bound.title", "the search stopped early: these are proven, there may be more") }, "≈") : null) : null)))));
}

/**
 * The spectator page's section: the lines today, what each pending game
 * decides, then the chances (an estimate).  Returns onMessage for LiveFeed.
 */
export function mountSpectatorStakes(parent) {
  styles();
  const card = el("section", { class: "card stakes-card", id: "stakes", "aria-labelledby": "stakes-h", hidden: true },
    el("h2", { id: "stakes-h" }, t("stakes.heading", "What the remaining games decide")),
    el("div", { id: "stakes-body" }));
  const worth = el("section", { class: "card worth-card", id: "worth", "aria-labelledby": "worth-h", hidden: true },
    el("h2", { id: "worth-h" }, t("worth.heading", "What results are worth")),
    el("div", { id: "worth-body" }));
  parent.append(card, worth);
  return (m) => {
    if (m.type !== "stakes") return;
    worthCard(worth, m);
    const who = names(m);
    const write = writer(m);
    card.hidden = !m.games.length;
    card.dataset.seq = String(m.seq);
    const race = m.players.filter((p) => p.lines.some((l) => l.state !== "eliminated"));
    fill(document.getElementById("stakes-body"),
      el("p", { class: "explain" },
        m.exact ? el("span", { class: "badge exact" }, t("stakes.exact", "exact")) : el("span", { class: "badge bound" }, t("stakes.partly", "partly bounds")), " ",
        m.exact ? t("stakes.exact.explain", "Over every outcome of every remaining game, under the tournament's tie-break order.")
          : t("stakes.partly.explain", "Every statement shown is proven; some games were not searched to the end (marked), so there may be more.")),
      el("p", { class: "stake-lines" }, m.lines.map((line) => el("span", { class: "stake-line" },
        el("strong", null, `${lineName(line)}: `),
        race.map((p, k) => {
          const state = p.lines.find((l) => l.places === line.places)?.state;
          if (!state || state === "eliminated") return null;
          return [k ? " " : null, el("span", { class: `stake ${state}`, title: stateWords(state) }, `${shortName(p.name)} (${stateWords(state)})`)];
        })))),
      el("ol", { class: "stake-games" }, m.games.map((g) => gameItem(g, who, write))),
      chancesTable(m));
  };
}

/**
 * The game of board `board` in the round being played (the first round with a game to play): the game of
 * that board when it is still to be decided, `finished` when that board's game is over, null when the round
 * has no such board.  A tournament opened without a schedule numbers no boards: its N-th undecided game then.
 */
export function boardGame(message, board) {
  const next = Math.min(...message.games.map((g) => g.round ?? Infinity));
  const round = message.games.filter((g) => (g.round ?? Infinity) === next);
  if (!round.length) return null;
  if (!round.some((g) => g.board)) return round[board - 1] ?? null;
  const game = round.find((g) => g.board === board);
  if (game) return game;
  return board <= Math.floor(message.players.length / 2) ? { finished: true, round: round[0].round, board } : null;
}

/**
 * The overlay's parts, by URL parameter: mode=stakes&board=N ("what this
 * board decides" for board N of the round being played, 1 = first; when that game is over, it says so),
 * mode=chances (an estimate, labelled), cues=1 (lower thirds for cues).
 * Returns onMessage for LiveFeed, or null when none is asked for.
 */
export function mountOverlayStakes(params, nameOf = () => null) {
  const mode = params.mode;
  const cuesWanted = params.cues === "1" || mode === "cues";
  if (mode !== "stakes" && mode !== "chances" && !cuesWanted) return null;
  styles();
  const board = params.board;
  const box = el("div", { id: "stakes-box", class: "stakes-box", hidden: true });
  const third = el("div", { id: "cue", class: "cue", hidden: true, role: "status", "aria-live": "polite" });
  document.body.append(box, third);
  // cues queue up: each lower third stays CUE_MS, the most important of an update first (a clinch before an
  // overtake), updates in order; a lower third gives way after CUE_MIN_MS once a newer update's cue waits, so
  // cues keep up with results a few seconds apart instead of lagging one result behind
  const queue = [];
  const known = new Map();  // start number → name, from the stakes messages (a cue names players by number)
  let busy = false;
  let timer = null;
  let shownAt = 0;
  let showing = null;
  const rank = (m) => [m.seq, CUE_ORDER.indexOf(m.kind)];
  const schedule = () => {
    clearTimeout(timer);
    const newer = queue.some((q) => showing && q.seq > showing.seq);
    const stay = newer ? Math.max(0, CUE_MIN_MS - (Date.now() - shownAt)) : CUE_MS - (Date.now() - shownAt);
    timer = setTimeout(showNext, Math.max(0, stay));
  };
  const showNext = () => {
    if (!queue.length) { busy = false; showing = null; third.hidden = true; return; }
    busy = true;
    queue.sort((a, b) => rank(a)[0] - rank(b)[0] || rank(a)[1] - rank(b)[1]);
    const m = queue.shift();
    showing = m;
    shownAt = Date.now();
    fill(third, el("span", { class: `cue-kind ${m.kind}` }, cueLabel(m.kind)), el("span", { class: "cue-text" }, say(m.said, m.write, m.text)));
    third.dataset.kind = m.kind;
    third.dataset.seq = String(m.seq);
    third.hidden = false;
    third.classList.remove("show");
    void third.offsetWidth;  // restart the slide-in
    third.classList.add("show");
    schedule();
  };
  return (m) => {
    if (m.type === "cue" && cuesWanted) {
      queue.push({ ...m, write: (startNo) => sentenceName(nameOf(startNo) || known.get(startNo) || String(startNo)) });
      if (queue.length > 20) queue.splice(0, queue.length - 20);
      if (!busy) { busy = true; timer = setTimeout(showNext, 150); }  // cues of one update arrive together
      else if (showing) schedule();  // a newer update's cue shortens the one on screen
      return;
    }
    if (m.type !== "stakes") return;
    const who = names(m);
    const write = writer(m);
    for (const [no, name] of who) known.set(no, name);
    box.dataset.seq = String(m.seq);
    if (mode === "stakes") {
      const game = boardGame(m, board);
      box.hidden = !game;
      box.dataset.board = game?.board ? String(game.board) : "";
      if (game?.finished) {
        fill(box, el("div", { class: "stakes-title" }, t("stakes.board_no", "Board {board}", { board: game.board })),
          el("p", { class: "stake-finished" }, t("stakes.board_finished", "This board's game is over (round {round}).", { round: game.round })));
      } else if (game) {
        fill(box, el("div", { class: "stakes-title" }, t("stakes.board", "What this board decides"),
          m.exact ? null : [" ", el("span", { class: "badge bound" }, t("stakes.bound", "proven so far"))]), el("ol", null, gameItem(game, who, write)));
      }
    } else if (mode === "chances" && m.chances) {
      box.hidden = false;
      const top = [...m.chances.players].sort((a, b) => b.first - a.first).slice(0, 5);
      fill(box, el("div", { class: "stakes-title" }, t("stakes.chances_first", "Chances of 1st"), " ",
        el("span", { class: "badge estimate" }, t("stakes.estimate_ratings", "estimate from ratings"))),
        el("ol", { class: "chance-list" }, top.map((p) => el("li", { dataset: { start: p.start_no } },
          el("span", null, shortName(who.get(p.start_no) || String(p.start_no))), el("span", { class: "num" }, chanceCell(m, p.start_no, 1, p.first))))));
    }
  };
}
