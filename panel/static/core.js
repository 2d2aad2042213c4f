// Shared by the panel's modules: the DOM helpers, the match being shown, and talking to the API.
// Everything shown is set with textContent (never innerHTML): names come from players.
import { t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
export const $ = (id) => document.getElementById(id);
export function el(tag, attrs, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else if (k === "style") for (const [p, val] of Object.entries(v)) node.style.setProperty(p, val);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}
export const colour = (i) => `var(--c${((i % 6) + 6) % 6})`;
export const signed = (n) => (n > 0 ? "+" : "") + n;

export function toast(text) {
  const box = $("toast"); box.textContent = text; box.hidden = false;
  clearTimeout(toast.handle); toast.handle = setTimeout(() => { box.hidden = true; }, 4500);
}

// The match shown and its latest state (from the WebSocket); modules read it, panel.js sets it.
export const app = { matchId: null, state: null, variants: [], rules: null };

// The result block of the state (the server's, or worked out from the match where an older
// server has none).
export function result(state = app.state) {
  if (state && state.result) return state.result;
  const match = (state && state.match) || {};
  const setup = (state && state.setup) || {};
  const target = match.target ?? setup.target ?? null, limit = match.rounds_limit ?? setup.rounds_limit ?? null;
  const played = match.rounds_played ?? ((state && state.rounds) || []).length;
  const penalty = !!match.penalty_totals;
  const progress = {};
  for (const [name, total] of Object.entries(match.totals || {})) {
    const points = penalty ? -total : total;
    const share = target ? points / target : limit ? played / limit : 0;
    progress[name] = { total, share: Math.max(0, Math.min(1, share)) };
  }
  return { over: !!match.over, winner: match.winner ?? null, target, rounds_limit: limit,
    rounds_played: played, penalty, progress };
}

export const who = () => localStorage.getItem("panelWho") || "panel";
function headers(extra) {
  const all = { "Content-Type": "application/json", ...(extra || {}) };
  const token = localStorage.getItem("panelToken");
  if (token) all["X-Panel-Token"] = token;
  return all;
}

// A key for Idempotency-Key: crypto.randomUUID needs a secure context, which a panel on the
// LAN (plain http) is not.
export function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class Refused extends Error {
  constructor(status, detail) { super(`${status}: ${detail}`); this.status = status; this.detail = detail; }
}
function detailOf(data) {
  const detail = data && data.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d) => (d && d.msg) || JSON.stringify(d)).join("; ");
  return JSON.stringify(data);
}

// GET a JSON document; throws Refused on an error status (a network failure throws TypeError).
export async function getJSON(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw new Refused(response.status, detailOf(await response.json().catch(() => ({}))));
  return response.json();
}
// Send a change; the answer's JSON.  Refused: the server said no (with its reason).
export async function send(method, path, body, key) {
  const extra = key ? { "Idempotency-Key": key } : {};
  const response = await fetch(path, { method, headers: headers(extra), body: JSON.stringify(body) });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Refused(response.status, detailOf(data));
  return data;
}
// A change to the shown match (POST, with who); the answer, or null after a toast saying why.
export async function change(path, body) {
  try {
    return await send("POST", `/api/matches/${app.matchId}/${path}`, { who: who(), ...body });
  } catch (error) {
    toast(error instanceof Refused ? error.message : t("error.network"));
    return null;
  }
}

// The player named in an event: the server's "player", else the seat's name.
export function playerOf(event, state = app.state) {
  if (event.player) return event.player;
  const players = (state && state.setup.players) || [];
  if (event.seat != null && players[event.seat]) return players[event.seat];
  return event.seat != null ? t("seat", { n: event.seat + 1 }) : "";
}

// In-page navigation: the address changes, the page stays (and its WebSocket with it).
// The match chosen with ?match= goes along unless the new address names one.
export function go(href) {
  const url = new URL(href, location.href), now = new URLSearchParams(location.search);
  if (!url.searchParams.has("match") && now.has("match")) url.searchParams.set("match", now.get("match"));
  history.pushState({}, "", url.pathname + url.search);
  window.dispatchEvent(new Event("panel:route"));
}
