// The pages in their viewer's language: the catalogue of /static/i18n/<lang>.json, the phrases the
// server sends ({key, args}), and the page's own words.
//
// One source per string: a page's script writes t("key", "English", args) or tn("key", "one", "other",
// args); its HTML marks an element data-i18n="key" (its text is the English) or data-i18n-title,
// data-i18n-aria-label, data-i18n-placeholder; the server's sentences are phrases of its Python code.
// `make i18n` extracts all three into the gettext catalogues (tracker/i18n/locale), and the server makes
// each language's JSON from its catalogue. The arguments follow tracker/core/phrases.py: {name} as it
// is, {name:player} a start number written as the player's name, {name:players} a list of them, {name:list} a list of numbers,
// {name:result} a result code, {name:points} and {name:signed} points, {name:line} a line of the
// standings (its places, or the name the tournament gave it), {name:phrase} a phrase inside the phrase
// and {name:phrases} several, one after the other.

const FIELD = /\{(\w+)(?::(\w+))?\}/g;
const RESULTS = { "1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−" };
const GLYPHS = { 0.25: "¼", 0.5: "½", 0.75: "¾" };
const ENGLISH = {
  lang: "en", plural: { one: 0, other: 1 }, points: "glyphs", decimal: ".",
  list: { 2: "{0} and {1}", start: "{0}, {1}", middle: "{0}, {1}", end: "{0} and {1}" }, messages: {},
};

let catalogue = ENGLISH;
let rules = new Intl.PluralRules("en");

/** The languages a page asks for, best first: ?lang= (or what the page passes), the browser's, English. */
export function wanted(asked) {
  const codes = [];
  for (const item of [asked, ...(navigator.languages || [navigator.language])]) {
    const code = String(item || "").trim().toLowerCase().split(/[-_]/)[0];
    if (/^[a-z]{2,3}$/.test(code) && !codes.includes(code)) codes.push(code);
  }
  if (!codes.includes("en")) codes.push("en");
  return codes;
}

/**
 * Load the first catalogue of `codes` the server has (a language it does not speak is a 404: the next is
 * tried) and mark the page with its language. Resolves to the language's code; never rejects (English then).
 */
export async function loadLanguage(codes) {
  for (const code of codes) {
    try {
      const response = await fetch(`/static/i18n/${encodeURIComponent(code)}.json`);
      if (!response.ok) continue;
      use(await response.json());
      return catalogue.lang;
    } catch (err) {
      console.warn(`tracker: the ${code} catalogue could not be loaded (${err}); trying the next language`);
    }
  }
  use(ENGLISH);
  return "en";
}

/** Make `data` (a catalogue's JSON) the page's language. */
export function use(data) {
  catalogue = data;
  rules = new Intl.PluralRules(data.lang);
  document.documentElement.lang = data.lang;
}

export function language() {
  return catalogue.lang;
}

/** The page's words for `key` (its English when the catalogue lacks it), with `args` written in. */
export function t(key, english, args = {}, names = String) {
  return fill(template(key, [english]), args, names);
}

/** A plural phrase: its form follows `args.n`. */
export function tn(key, one, other, args = {}, names = String) {
  return fill(template(key, [one, other], args.n), args, names);
}

/**
 * A phrase the server sent ({key, args}) in the page's language; `names(startNo)` writes a player;
 * `fallback` (the server's English text) is what a page shows for a key no catalogue has.
 */
export function say(said, names = String, fallback = "") {
  if (!said || !said.key) return fallback;
  const forms = catalogue.messages[said.key];
  if (forms === undefined) return fallback;
  const count = said.args ? said.args.n : undefined;
  return fill(pick(Array.isArray(forms) ? forms : [forms], count), said.args || {}, names);
}

function template(key, englishForms, count) {
  const forms = catalogue.messages[key];
  if (forms === undefined) return pick(englishForms, count, ENGLISH_RULES);
  return pick(Array.isArray(forms) ? forms : [forms], count);
}

const ENGLISH_RULES = new Intl.PluralRules("en");

function pick(forms, count, pluralRules = rules) {
  if (forms.length === 1 || typeof count !== "number") return forms[0];
  const map = pluralRules === ENGLISH_RULES ? ENGLISH.plural : catalogue.plural;
  // a fraction where "other" is for fractions only (Russian: "2,5 очка", the genitive singular of "few")
  const category = !Number.isInteger(count) && map.few !== undefined ? "few" : pluralRules.select(count);
  const index = map[category] ?? map.other ?? forms.length - 1;
  return forms[Math.min(index, forms.length - 1)];
}

function fill(text, args, names) {
  return text.replace(FIELD, (whole, name, kind) => {
    if (!(name in args)) {
      console.warn(`tracker: argument ${name} missing for "${text}"`);
      return whole;
    }
    return written(args[name], kind, names);
  });
}

function written(value, kind, names) {
  switch (kind) {
    case "player": return names(value);
    case "players": return join(value.map(names));
    case "list": return join(value.map(String));
    case "result": return RESULTS[value] ?? String(value);
    case "points": return points(value);
    case "signed": return (value > 0 ? "+" : "−") + points(Math.abs(value));
    case "line": return typeof value === "string" ? value : value === 1 ? t("line.first", "1st") : t("line.top", "top {n}", { n: value });
    case "phrase": return say(value, names);
    case "phrases": return value.map((v) => say(v, names)).reduceRight((next, first) => next === null ? first : t("list.semicolon", "{first}; {next}", { first, next }), null) ?? "";
    default: return value === null || value === undefined ? "" : String(value);
  }
}

/** Points as the page's language writes them: 2½ and 14¾ (glyphs), or 2,5 and 14,75 (decimal). */
export function points(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  if (value < 0) return "−" + points(-value);
  const whole = Math.floor(value);
  const rest = value - whole;
  if (rest === 0) return String(whole);
  if (catalogue.points === "glyphs" && GLYPHS[rest]) return (whole ? String(whole) : "") + GLYPHS[rest];
  const text = catalogue.points === "glyphs" ? String(Number(value.toPrecision(6))) : value.toFixed(3).replace(/0+$/, "");
  return text.replace(".", catalogue.decimal);
}

/** A number with decimals as the page's language writes it (a percentage, an average). */
export function number(value, digits = 1) {
  return value.toFixed(digits).replace(".", catalogue.decimal);
}

/** A number the server wrote with a decimal point ("+3.2", "−0.45") with the page's decimal symbol ("+3,2"). */
export function decimals(text) {
  return String(text).replace(/(\d)\.(\d)/g, `$1${catalogue.decimal}$2`);
}

/** `items` as a list in the page's language ("A, B and C"; CLDR list patterns, as the server writes them). */
export function join(items) {
  const p = catalogue.list;
  if (items.length < 2) return items.join("");
  if (items.length === 2) return p["2"].replace("{0}", items[0]).replace("{1}", items[1]);
  let text = p.end.replace("{0}", items[items.length - 2]).replace("{1}", items[items.length - 1]);
  for (let i = items.length - 3; i >= 1; i--) text = p.middle.replace("{0}", items[i]).replace("{1}", text);
  return p.start.replace("{0}", items[0]).replace("{1}", text);
}

/** Write the page's marked elements (data-i18n and its attribute forms) in the page's language. */
export function translatePage(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) {
    if (!el.dataset.i18nEnglish) el.dataset.i18nEnglish = el.textContent.trim().replace(/\s+/g, " ");
    el.textContent = t(el.dataset.i18n, el.dataset.i18nEnglish);
  }
  for (const attr of ["title", "aria-label", "placeholder"]) {
    const data = `data-i18n-${attr}`;
    for (const el of root.querySelectorAll(`[${data}]`)) {
      const keep = `data-i18n-english-${attr}`;
      if (!el.hasAttribute(keep)) el.setAttribute(keep, el.getAttribute(attr) || "");
      el.setAttribute(attr, t(el.getAttribute(data), el.getAttribute(keep)));
    }
  }
}

const ORDINAL_RULES = new Map();

/** A place as the page's language writes it: 1st, 2nd, 3rd, 4th (1-е; 1.; 1.º; 1er, 2e). */
export function ordinal(n) {
  const lang = language();
  if (!ORDINAL_RULES.has(lang)) ORDINAL_RULES.set(lang, new Intl.PluralRules(lang, { type: "ordinal" }));
  switch (ORDINAL_RULES.get(lang).select(n)) {
    case "one": return t("ordinal.one", "{n}st", { n });
    case "two": return t("ordinal.two", "{n}nd", { n });
    case "few": return t("ordinal.few", "{n}rd", { n });
    default: return t("ordinal.other", "{n}th", { n });
  }
}
