// Page parameters: one table per page of what its URL may say, read in one place.
//
// Each entry says how a parameter is read: `choice` (one of `choices`, the
// first is the default), `int` / `float` (clamped to [lo, hi]; not a number:
// the default), `lang` (a language code) or `text`.  A parameter the table does not have, or a value it
// cannot read, is reported once in the browser console and ignored (its
// default applies): an OBS source set up with a typo still shows something.

/** The overlay (/overlay/{id}): the table, the stakes and chances modes, cues, the spoiler delay. */
export const OVERLAY_PARAMS = {
  top: { kind: "int", default: 10, lo: 1, hi: 500 },             // rows shown
  cols: { kind: "text", default: "points,KS" },                    // columns: points, games, any tie-break code
  theme: { kind: "choice", choices: ["dark", "light"] },
  scale: { kind: "float", default: 1, lo: 0.3, hi: 5 },           // font scale
  names: { kind: "choice", choices: ["full", "short"] },         // short: surnames
  status: { kind: "choice", choices: ["badge", "dot", "none"] },  // the connection state on air
  legend: { kind: "choice", choices: ["none", "order"] },        // order: "Ranked by Pts › DE › …"
  mode: { kind: "choice", choices: ["table", "stakes", "chances", "cues", "live", "match"] },  // live: as the games stand; match: a team match's lower third
  team: { kind: "int", default: 0, lo: 0, hi: 999 },              // mode=match: the team whose match (0: the round's first)
  boards: { kind: "choice", choices: ["0", "1"] },               // 1: an eval bar per game in progress
  board: { kind: "int", default: 1, lo: 1, hi: 500 },             // mode=stakes: board N of the round being played
  cues: { kind: "choice", choices: ["0", "1"] },                 // 1: lower thirds for cues
  delay: { kind: "float", default: 0, lo: 0, hi: 600 },          // a spoiler delay, seconds
  lang: { kind: "lang", default: "" },                             // the language (en, ru, es, de, fr); else the browser's
  view: { kind: "choice", choices: ["auto", "players"] },         // auto: a team event shows its teams; players: its players
};

/** The spectator page (/t/{id}). */
export const SPECTATOR_PARAMS = {
  delay: { kind: "float", default: 0, lo: 0, hi: 600 },
  lang: { kind: "lang", default: "" },
};

const reported = new Set();

/** Say once in the console that a parameter was not understood and what applies instead. */
export function ignored(page, name, value, instead) {
  const key = `${name}=${value}`;
  if (reported.has(key)) return;
  reported.add(key);
  console.warn(`${page}: ignored ${name}=${JSON.stringify(value)}: ${instead}`);
}

function read(page, name, spec, value) {
  if (spec.kind === "choice") {
    if (value === null) return spec.choices[0];
    if (spec.choices.includes(value)) return value;
    ignored(page, name, value, `expected one of ${spec.choices.join(", ")}; using ${spec.choices[0]}`);
    return spec.choices[0];
  }
  if (spec.kind === "int" || spec.kind === "float") {
    if (value === null) return spec.default;
    const n = spec.kind === "int" ? parseInt(value, 10) : parseFloat(value);
    if (!/^\s*[0-9.]+\s*$/.test(value) || !Number.isFinite(n)) {
      ignored(page, name, value, `not a number; using ${spec.default}`);
      return spec.default;
    }
    const clamped = Math.max(spec.lo, Math.min(spec.hi, n));
    if (clamped !== n) ignored(page, name, value, `out of range ${spec.lo}–${spec.hi}; using ${clamped}`);
    return clamped;
  }
  if (spec.kind === "lang") {  // a language code; one the server has no catalogue for is reported by the page
    if (value === null || value === "") return spec.default;
    if (/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/.test(value.trim())) return value.trim();
    ignored(page, name, value, "not a language code; using the browser's language");
    return spec.default;
  }
  return value === null ? spec.default : value;
}

/** The values of `table`'s parameters in `search` (a location.search string); unknown ones are reported. */
export function readParams(search, table, page = "page") {
  const params = new URLSearchParams(search);
  for (const name of new Set(params.keys())) {
    if (!(name in table)) ignored(page, name, params.get(name), `unknown parameter (known: ${Object.keys(table).join(", ")})`);
  }
  const values = {};
  for (const [name, spec] of Object.entries(table)) values[name] = read(page, name, spec, params.get(name));
  return values;
}
