// The page's texts in German, English and Romanian: t(key, vars) and the language switch.
// A key may be a plural set {one, few, other} chosen by Intl.PluralRules from vars.n
// (Romanian has three forms: 1 rundă, 2 runde, 20 de runde).
export const LANGUAGES = ["de", "en", "ro"];
let lang = "en", texts = {}, english = {};
const listeners = [];

export const currentLang = () => lang;
export const onLangChange = (fn) => listeners.push(fn);

export function t(key, vars) {
  let text = key in texts ? texts[key] : english[key];
  if (text == null) return key;
  if (typeof text === "object") {
    const n = vars && typeof vars.n === "number" ? vars.n : 0;
    text = text[new Intl.PluralRules(lang).select(n)] ?? text.other;
  }
  return vars ? text.replace(/\{(\w+)\}/g, (all, name) => (name in vars ? String(vars[name]) : all)) : text;
}
// A variant's name in the page's language (the engine's own name where there is none).
export const variantName = (id, fallback) => (has(`variant.${id}`) ? t(`variant.${id}`) : fallback || id);
// Does the dictionary have this key (e.g. a warning code's title)?
export const has = (key) => key in texts || key in english;

async function load(code) {
  const response = await fetch(`/static/i18n/${code}.json`);
  if (!response.ok) throw new Error(`no texts for ${code}`);
  return response.json();
}

// The static texts of the page: data-i18n="key" sets the text, data-i18n-attr="attr:key;..."
// attributes.
export function applyTexts(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll("[data-i18n-attr]"))
    for (const pair of node.dataset.i18nAttr.split(";")) {
      const [attr, key] = pair.split(":");
      node.setAttribute(attr.trim(), t(key.trim()));
    }
}

export async function setLang(code, remember) {
  if (!LANGUAGES.includes(code)) code = "en";
  if (!Object.keys(english).length) english = await load("en");
  texts = code === "en" ? english : await load(code).catch(() => english);
  lang = code;
  if (remember) localStorage.setItem("panelLang", code);
  document.documentElement.lang = code;
  applyTexts();
  for (const fn of listeners) fn(code);
}

// The language at start: the one chosen on this device, else the panel's (its --lang or the
// browser's Accept-Language), else the browser's own list.
export async function startLang() {
  let code = localStorage.getItem("panelLang");
  if (!LANGUAGES.includes(code)) {
    try {
      const response = await fetch("/api/panel");
      if (response.ok) code = (await response.json()).lang;
    } catch (error) { /* offline: the browser's languages below */ }
  }
  if (!LANGUAGES.includes(code))
    code = (navigator.languages || []).map((l) => l.slice(0, 2)).find((l) => LANGUAGES.includes(l)) || "en";
  await setLang(code, false);
}
