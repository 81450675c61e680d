// Shared by every page: the websocket feed, DOM building with text only,
// number formatting and the crosstable helpers.
//
// How the feed works: subscribe → snapshot (full standings, seq) → updates
// with seq + 1 each.  An update whose seq is not the next one is kept aside
// and the page resubscribes with since = the last seq it has shown; the
// server answers with what was missed (or a fresh snapshot) and the kept
// updates are applied in order.  After a dropped connection the page
// reconnects with exponential backoff and resubscribes the same way, so the
// table never skips an update.
//
// Updates come as field deltas (protocol v1.1, "updates": "delta"): the feed
// keeps the full standings, applies each delta, checks its digest (CRC-32 of
// the canonical text, docs/protocol.md) and hands the page the same full
// update a v1 subscriber gets.  A delta that does not check out makes the feed
// resubscribe without since: the fresh snapshot starts it over.

import { join, language, loadLanguage, points, say, t, translatePage, wanted } from "/static/i18n.js";

/**
 * The page in its viewer's language: `asked` (?lang=), else the browser's languages, else English.
 * Loads the catalogue, marks <html lang> and writes the page's marked elements; resolves to the code.
 */
export async function startLanguage(asked) {
  const code = await loadLanguage(wanted(asked));
  translatePage();
  return code;
}

/** The tournament id of /overlay/{id}, /t/{id} or /arbiter/{id}. */
export function tournamentFromPath() {
  const parts = location.pathname.split("/").filter(Boolean);
  return parts.length >= 2 ? decodeURIComponent(parts[1]) : "";
}

/**
 * A DOM element: el("td", {class: "x", title: name}, "text", child, …).
 * Children are strings (inserted as text nodes), nodes, arrays or null.
 * Attributes are set with setAttribute; there is no way to pass HTML.
 */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
}

/** Replace all children of node (text only, as el()). */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** 2.5 → "2½" (or "2,5" where the language writes decimals), 23.75 → "23¾", 3 → "3"; others to two decimals. */
export function fmt(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  return points(Math.round(value * 100) / 100);
}

/** A game's result as people write it. */
export function resultWords(result) {
  switch (result) {
    case "1-0": return "1–0";
    case "1/2-1/2": return "½–½";
    case "0-1": return "0–1";
    case "+-": return t("result.forfeit_white", "+/− (White wins by forfeit)");
    case "-+": return t("result.forfeit_black", "−/+ (Black wins by forfeit)");
    case "--": return t("result.forfeit_double", "−/− (double forfeit)");
    default: return result;
  }
}

/** TRF result code → the symbol shown in a crosstable cell. */
export const CODE_SYMBOLS = {
  "1": "1", "=": "½", "0": "0", "+": "+", "-": "−",
  "W": "1", "D": "½", "L": "0",
  "F": "1", "H": "½", "Z": "0", "U": "1",
};

/** A TRF result code in words, from the player's side ("won", "half-point bye"). */
export function codeWords(code) {
  switch (code) {
    case "1": return t("code.won", "won");
    case "=": return t("code.drew", "drew");
    case "0": return t("code.lost", "lost");
    case "+": return t("code.won_forfeit", "won by forfeit");
    case "-": return t("code.lost_forfeit", "lost by forfeit");
    case "W": return t("code.won_short", "won (short game)");
    case "D": return t("code.drew_short", "drew (short game)");
    case "L": return t("code.lost_short", "lost (short game)");
    case "F": return t("code.bye_full", "full-point bye");
    case "H": return t("code.bye_half", "half-point bye");
    case "Z": return t("code.bye_zero", "zero-point bye");
    case "U": return t("code.bye_pab", "pairing-allocated bye");
    default: return code;
  }
}

const BYE_CODES = new Set(["F", "H", "Z", "U"]);
export const isBye = (entry) => entry[1] === 0 || BYE_CODES.has(entry[3]);

/**
 * Points per TRF code, from the scoring the server sends with the standings
 * (payload.scoring: win, draw, loss, forfeits, byes).  Nothing is worked out
 * here: a payload without scoring (a tournament not open yet) gives null.
 */
export function scoringOf(payload) {
  const s = payload.scoring;
  if (!s || typeof s.win !== "number") return null;
  const win = s.win, draw = s.draw ?? win / 2;
  return {
    "1": win, "W": win, "=": draw, "D": draw, "0": s.loss ?? 0, "L": s.loss ?? 0,
    "+": s.forfeit_win ?? win, "-": s.forfeit_loss ?? 0,
    "F": s.full_bye ?? win, "H": s.half_bye ?? draw, "Z": s.zero_bye ?? 0, "U": s.pab ?? win,
  };
}

/**
 * The Koya breakdown of one player (C.07 §9.2): every opponent met, whether
 * the server says they are on or above their line (row.qualified), and the
 * points scored against them (the server's scoring per result code).
 * ``total`` is the server's KS value for the player, not a sum made here.
 */
export function koyaBreakdown(payload, startNo, points) {
  const rows = new Map(payload.standings.map((r) => [r.start_no, r]));
  const row = rows.get(startNo);
  const opponents = new Map();
  const byes = [];
  for (const entry of row.results) {
    if (isBye(entry)) { byes.push(entry); continue; }
    const [round, opp, colour, code] = entry;
    if (!opponents.has(opp)) {
      const o = rows.get(opp);
      opponents.set(opp, { row: o, games: [], scored: 0 });
    }
    const item = opponents.get(opp);
    item.games.push({ round, colour, code });
    item.scored += points ? points[code] ?? 0 : NaN;
  }
  const list = [...opponents.values()].sort((a, b) => a.row.rank - b.row.rank || a.row.start_no - b.row.start_no);
  return { row, opponents: list, byes, total: row.tiebreaks.KS };
}

/** Plain words for the basis of the Koya line. */
export function basisWords(payload) {
  if (!payload.provisional && payload.basis === "rounds")
    return t("basis.rounds_final", "an opponent counts when their final score is at least 50% of the points of all rounds");
  switch (payload.basis) {
    case "percentage": return t("basis.percentage", "an opponent counts when their score is at least 50% of the points of the games they have completed");
    case "max-games": return t("basis.max_games", "an opponent counts when their score is at least 50% of the points of the most games anyone has completed");
    case "rounds": return t("basis.rounds", "an opponent counts when their score is at least 50% of the points of the completed rounds");
    case "games": return t("basis.games", "an opponent counts when their final score is at least 50% of the maximum possible score");
    default: return t("basis.other", "an opponent counts when their score is at least 50% of the maximum");
  }
}

/** The basis of the Koya line in a word or two ("percentage basis"). */
export function basisName(basis) {
  switch (basis || "percentage") {
    case "percentage": return t("basis.name.percentage", "percentage basis");
    case "max-games": return t("basis.name.max_games", "max-games basis");
    case "rounds": return t("basis.name.rounds", "rounds basis");
    case "games": return t("basis.name.games", "games basis");
    default: return basis;
  }
}

export function provisionalWords(payload) {
  return payload.provisional
    ? t("provisional.koya", "Provisional: Koya as if the event ended now ({basis}); final once the last game is in.", { basis: basisName(payload.basis) })
    : t("provisional.final", "Final: every game is in.");
}

/** A player's name as the server's sentences write it: the surname ("Caruana, Fabiano" → "Caruana"). */
export function sentenceName(name) {
  return String(name).split(",")[0].trim() || name;
}

/**
 * An update's summary in the page's language, from its phrases (`summary_said`: the head, then its parts,
 * as tracker.core.apply.summary_text joins them); `names(startNo)` writes a player.  Without phrases: `english`.
 */
export function summaryText(said, names, english = "") {
  if (!Array.isArray(said) || !said.length) return english;
  const head = say(said[0], names, null);
  if (head === null) return english;
  if (said.length === 1) return head;
  let parts = say(said[said.length - 1], names);
  for (let i = said.length - 2; i >= 1; i--) parts = t("summary.parts", "{first}, {next}", { first: say(said[i], names), next: parts });
  return t("summary", "{head}: {parts}", { head, parts });
}

/** A clock time in the page's language (the seconds too). */
export function clockTime(at) {
  return (at ? new Date(at * 1000) : new Date()).toLocaleTimeString(language(), { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export { join };

/** The words above as tables (what the arbiter's scripts read: RESULT_WORDS[r], CODE_WORDS[c], STATUS_WORDS[s]). */
const table = (keys, words) => new Proxy({}, { get: (_, key) => (keys.includes(key) ? words(key) : undefined) });
export const RESULT_WORDS = table(["1-0", "1/2-1/2", "0-1", "+-", "-+", "--"], resultWords);
export const CODE_WORDS = table(["1", "=", "0", "+", "-", "W", "D", "L", "F", "H", "Z", "U"], codeWords);
export const STATUS_WORDS = table(["connecting", "live", "reconnecting"], (s) => statusWords(s));

/** Results of one player against one opponent, in round order. */
export function gamesAgainst(row, opponent) {
  return row.results.filter((r) => r[1] === opponent && !isBye(r));
}

/** A surname-first name shortened for narrow places: "Caruana, Fabiano" → "Caruana". */
export function shortName(name) {
  const comma = name.indexOf(",");
  return comma > 0 ? name.slice(0, comma) : name;
}

// -- protocol v1.1: deltas and the digest ---------------------------------------------------

/** Keys of a delta that are not standings fields (the event's fields and the delta's own). */
const DELTA_ONLY = new Set([
  "type", "delta", "tournament", "seq", "standings", "event", "changed", "reached", "fell",
  "qualification", "summary", "summary_said", "rows", "order", "digest", "matches", "match_rounds",
]);
const EVENT_FIELDS = ["event", "changed", "reached", "fell", "qualification", "summary", "summary_said"];

/** The standings after a delta: previous (at seq - 1) is not changed; unchanged rows are shared. */
export function applyDelta(previous, delta) {
  const next = { ...previous };
  for (const [key, value] of Object.entries(delta)) if (!DELTA_ONLY.has(key)) next[key] = value;
  next.tournament = delta.tournament;
  next.seq = delta.seq;
  if (delta.matches || delta.match_rounds) {  // a team event: only the rounds whose matches changed
    const byRound = new Map((previous.matches || []).map((entry) => [entry.round, entry]));
    for (const entry of delta.matches || []) byRound.set(entry.round, entry);
    const rounds = delta.match_rounds || [...byRound.keys()].sort((a, b) => a - b);
    next.matches = rounds.map((r) => byRound.get(r));
  }
  const rows = new Map((previous.standings || []).map((row) => [row.start_no, row]));
  for (const change of delta.rows || []) {
    const old = rows.get(change.start_no);
    if (!old) { rows.set(change.start_no, { ...change }); continue; }
    const row = { ...old, ...change };
    if (change.tiebreaks) row.tiebreaks = { ...old.tiebreaks, ...change.tiebreaks };
    if ("results_from" in change) {  // the line's first results_from entries stay; the rest is sent
      delete row.results_from;
      row.results = [...old.results.slice(0, change.results_from), ...change.results];
    }
    rows.set(change.start_no, row);
  }
  const order = delta.order || (previous.standings || []).map((row) => row.start_no);
  next.standings = order.map((n) => {
    const row = rows.get(n);
    if (!row) throw new Error(`the delta names row ${n}, which nobody described`);
    return row;
  });
  return next;
}

const HEADER = ["tournament", "name", "seq", "rounds", "games_played", "provisional", "basis", "max_basis", "rules"];
const ROW = ["rank", "start_no", "name", "points", "games", "withdrawn", "qualified", "line"];
const text = (value) => (value === undefined ? "" : String(value));

/** The canonical text of full standings (docs/protocol.md, "Digest"). */
export function canonicalText(p) {
  const codes = p.codes || [];
  const scoring = p.scoring || {};
  const lines = [[
    ...HEADER.map((key) => text(p[key])),
    codes.join(","),
    Object.keys(scoring).sort().map((key) => `${key}=${String(scoring[key])}`).join(","),
  ].join("|")];
  for (const row of p.standings || []) {
    const tiebreaks = row.tiebreaks || {};
    lines.push([
      ...ROW.map((key) => String(row[key])),
      codes.map((code) => (code in tiebreaks ? String(tiebreaks[code]) : "")).join(","),
      row.results.map((entry) => entry.map(String).join(",")).join(";"),
    ].join("|"));
  }
  return lines.join("\n");
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO-HDLC, as zlib and PNG) of bytes, an unsigned 32-bit number. */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The digest a delta carries: CRC-32 of the UTF-8 of the canonical text of the standings after it. */
export function standingsDigest(p) {
  return crc32(new TextEncoder().encode(canonicalText(p)));
}

/** Status text for people, from the feed's status. */
export function statusWords(status) {
  switch (status) {
    case "connecting": return t("status.connecting", "connecting…");
    case "live": return t("status.live", "live");
    case "reconnecting": return t("status.reconnecting", "reconnecting…");
    default: return status;
  }
}

/**
 * The websocket feed of one tournament.
 *
 * handlers: onSnapshot(payload), onUpdate(message), onMessage(message) for
 * everything else (ack, rejected, error, projection), onStatus(status).
 * onUpdate always gets a full update (the deltas are applied here).
 * The last shown seq and the status are mirrored on <html data-seq
 * data-status> so that tests and OBS users can see them, and the deltas that
 * did not check out on <html data-resyncs>.
 */
export class LiveFeed {
  constructor(tournament, handlers = {}, options = {}) {
    this.tournament = tournament;
    this.handlers = handlers;
    this.token = options.token || null;
    this.subscribeOptions = options.subscribe || {};  // e.g. {stakes: true, delay: 30} (stakes.js)
    this.seq = null;
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.waiting = new Map();  // seq → update that came before the one it follows
    this.resyncAt = -Infinity;
    this.gapTimer = null;
    this.log = [];             // [kind, seq] of what was shown, for tests and debugging
    this.stopped = false;
    this.standings = null;     // the full standings at this.seq: what the next delta applies to
    this.resyncs = 0;          // deltas that did not apply or whose digest differed
  }

  start() {
    this._connect();
    return this;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }

  /** Send a message now; false when the connection is not open. */
  send(message) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  get connected() {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN;
  }

  _status(status) {
    document.documentElement.dataset.status = status;
    this.handlers.onStatus?.(status);
  }

  _connect() {
    if (this.stopped) return;
    this._status(this.attempt ? "reconnecting" : "connecting");
    const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
    let ws;
    try {
      ws = new WebSocket(url);
    } catch {
      this._retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      this._subscribe();
      this._status("live");
    };
    ws.onmessage = (e) => {
      let message;
      try {
        message = JSON.parse(e.data);
      } catch {
        return;
      }
      this._receive(message);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this._retry();
    };
  }

  _retry() {
    if (this.stopped) return;
    this._status("reconnecting");
    // 0.5 s, 1 s, 2 s … at most 10 s, with ±25 % jitter so that a thousand
    // overlays do not all come back in the same millisecond.
    const delay = Math.min(10000, 500 * 2 ** Math.min(this.attempt, 5)) * (0.75 + Math.random() * 0.5);
    this.attempt += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this._connect(), delay);
  }

  _subscribe() {
    const message = { type: "subscribe", tournament: this.tournament, updates: "delta" };
    if (this.seq !== null) message.since = this.seq;
    if (this.token) message.token = this.token;
    Object.assign(message, this.subscribeOptions);
    this.resyncAt = performance.now();
    this.send(message);
  }

  _receive(m) {
    const ours = m.tournament === undefined || m.tournament === this.tournament;
    if (m.type === "snapshot" && ours) {
      this.seq = m.seq;
      this.standings = m;
      this._record("snapshot", m.seq);
      this.handlers.onSnapshot?.(m);
      this._drain();
    } else if (m.type === "update" && ours) {
      if (this.seq === null || m.seq <= this.seq) return;  // before the snapshot, or already shown
      if (m.seq === this.seq + 1) {
        this._apply(m);
        this._drain();
      } else {
        this.waiting.set(m.seq, m);
        if (this.waiting.size === 1) this._resync();
      }
    } else {
      this.handlers.onMessage?.(m);
    }
  }

  /** A gap: ask for what is missing with since, again every 2 s while the gap lasts. */
  _resync() {
    if (performance.now() - this.resyncAt < 2000 && this.gapTimer) return;
    this._subscribe();
    clearTimeout(this.gapTimer);
    this.gapTimer = setTimeout(() => {
      this.gapTimer = null;
      if (this.waiting.size) this._resync();
    }, 2000);
  }

  _apply(m) {
    if (m.delta) {
      let after;
      try {
        after = applyDelta(this.standings, m);
        if (standingsDigest(after) !== m.digest) after = null;
      } catch {
        after = null;
      }
      if (!after) {
        this._restart();
        return;
      }
      this.standings = after;
      const delta = m;
      m = { ...after, type: "update" };
      for (const key of EVENT_FIELDS) m[key] = delta[key];
    } else {
      // a full update does not repeat what the snapshot said once for the tournament (its columns' words)
      if (m.columns === undefined && this.standings?.columns !== undefined) m = { ...m, columns: this.standings.columns };
      this.standings = m;
    }
    this.seq = m.seq;
    this._record("update", m.seq);
    this.handlers.onUpdate?.(m);
  }

  /** A delta did not check out: forget the standings and resubscribe without since (a fresh snapshot). */
  _restart() {
    this.resyncs += 1;
    document.documentElement.dataset.resyncs = String(this.resyncs);
    this.seq = null;
    this.standings = null;
    this.waiting.clear();
    this.log.push(["resync", null]);
    this._subscribe();
  }

  /** The digest of the standings shown (what the last delta's digest was checked against). */
  digest() {
    return this.standings ? standingsDigest(this.standings) : null;
  }

  _drain() {
    while (this.seq !== null && this.waiting.has(this.seq + 1)) {
      const next = this.waiting.get(this.seq + 1);
      this.waiting.delete(this.seq + 1);
      this._apply(next);
    }
    for (const seq of this.waiting.keys()) if (seq <= this.seq) this.waiting.delete(seq);
  }

  _record(kind, seq) {
    document.documentElement.dataset.seq = String(seq);
    this.log.push([kind, seq]);
    if (this.log.length > 5000) this.log.splice(0, 1000);
  }
}
