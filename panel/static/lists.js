// The match list (live first, then open, then finished) and the players' profiles.
import { $, app, el, getJSON, go, Refused, send, toast, who } from "./core.js";
import { currentLang, t, variantName } from "./i18n.js";

const day = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleDateString(currentLang(), { day: "numeric", month: "short", year: "numeric" }) : "");
const number = (value, digits = 0) => (value == null ? "—" : Number(value).toLocaleString(currentLang(), { maximumFractionDigits: digits }));

function link(href, attrs, ...children) {
  return el("a", { href, ...attrs, on: { click: (event) => { event.preventDefault(); go(href); } } }, ...children);
}

export async function renderMatches() {
  const list = $("match-list");
  let matches;
  try {
    matches = await getJSON("/api/matches");
  } catch (error) {
    list.replaceChildren(el("li", { class: "problem", text: error instanceof Refused ? error.message : t("error.network") }));
    return;
  }
  if (!matches.length) { list.replaceChildren(el("li", { class: "muted", text: t("matches.none") })); return; }
  list.replaceChildren(...matches.map((m) => {
    const status = m.status || "open";
    // penalty games list penalty points: the fewest lead
    const totals = Object.entries(m.totals || {}).sort((a, b) => (m.penalty ? a[1] - b[1] : b[1] - a[1]));
    const outcome = m.winner ? t("matches.winner", { winner: m.winner })
      : status === "finished" ? t("matches.draw")
        : totals.length && m.rounds ? t(m.penalty ? "matches.leading_penalty" : "matches.leading", { player: totals[0][0], n: totals[0][1] }) : "";
    const about = [variantName(m.variant, m.variant_name), (m.players || []).join(", "), m.rounds != null ? t("rounds_count", { n: m.rounds }) : null,
      day(m.updated_at || m.created_at)].filter(Boolean).join(" · ");
    return el("li", { class: `match-card ${status}`, "data-match": String(m.id), "aria-current": m.id === app.matchId ? "true" : null },
      link(`/?match=${m.id}`, { class: "match-link" },
        el("span", { class: "match-top" }, el("span", { class: "match-name", text: m.name }),
          el("span", { class: `badge ${status}`, text: t(`matches.status.${status}`) })),
        el("span", { class: "muted about", text: about }),
        outcome ? el("span", { class: "outcome", text: outcome }) : null),
      matchActions(m, status));
  }));
}

// End an open match, play a set-up one again, delete one (a live one is ended at its table).
function matchActions(m, status) {
  const box = el("div", { class: "match-actions" });
  const action = (name, label, run) => box.append(el("button", { type: "button", class: "quiet", "data-action": name,
    text: t(label), "aria-label": `${t(label)}: ${m.name}`, on: { click: run } }));
  if (status === "open" && (m.players || []).length >= 2) action("close", "matches.close", () => closeMatch(m));
  if ((m.players || []).length >= 2) action("rematch", "matches.rematch", () => app.rematch(m.id));
  if (status !== "live") action("delete", "matches.delete", () => deleteMatch(m));
  return box;
}
async function closeMatch(m) {
  if (!confirm(t("matches.close_confirm", { name: m.name }))) return;
  try {
    await send("POST", `/api/matches/${m.id}/close`, { who: who() });
    toast(t("matches.closed", { name: m.name }));
  } catch (error) {
    toast(error instanceof Refused ? error.message : t("error.network"));
  }
  renderMatches();
}
async function deleteMatch(m) {
  if (!confirm(t("matches.delete_confirm", { name: m.name }))) return;
  try {
    await send("DELETE", `/api/matches/${m.id}`, { who: who() });
    toast(t("matches.deleted", { name: m.name }));
  } catch (error) {
    toast(error instanceof Refused ? error.message : t("error.network"));
  }
  renderMatches();
}

export async function renderPlayers() {
  const list = $("player-list");
  let players;
  try {
    players = await getJSON("/api/players");
  } catch (error) {
    list.replaceChildren(el("li", { class: "problem", text: error instanceof Refused ? error.message : t("error.network") }));
    return;
  }
  if (!players.length) { list.replaceChildren(el("li", { class: "muted", text: t("players.none") })); return; }
  list.replaceChildren(...players.map((p) => {
    const details = el("div", { class: "player-details", hidden: true });
    const stat = (key, value) => el("span", { class: "stat" }, el("span", { class: "stat-value", text: value }), el("span", { class: "stat-label", text: t(key) }));
    const open = el("button", { type: "button", class: "player-open", "aria-expanded": "false",
      on: { click: async () => {
        const expanded = open.getAttribute("aria-expanded") !== "true";
        open.setAttribute("aria-expanded", String(expanded));
        details.hidden = !expanded;
        if (expanded && !details.childElementCount) await profile(p.name, details);
      } } },
    el("span", { class: "player-name", text: p.name }),
    el("span", { class: "muted", text: p.last_played ? t("players.last", { date: day(p.last_played) }) : "" }));
    return el("li", { class: "player-card", "data-player": p.name }, open,
      el("div", { class: "stats" },
        stat("players.matches", number(p.matches)), stat("players.wins", number(p.wins)),
        stat("players.rounds", number(p.rounds)),
        ...(p.rounds > (p.penalty_rounds || 0) ? [stat("players.average", number(p.average_per_round, 1)),
          stat("players.best", number(p.best_round))] : []),
        ...(p.penalty_rounds ? [stat("players.penalty_average", number(p.penalty_average_per_round, 1)),
          stat("players.fewest_penalty", number(p.fewest_penalty_points))] : [])),
      details);
  }));
}

async function profile(name, box) {
  try {
    const p = await getJSON(`/api/players/${encodeURIComponent(name)}`);
    box.replaceChildren(el("ul", { class: "played" }, ...(p.matches_played || []).map((m) =>
      el("li", { class: m.won ? "won" : null },
        link(`/?match=${m.match_id}`, {}, el("span", { text: m.name })),
        el("span", { class: "muted", text: ` · ${variantName(m.variant, m.variant_name)} · ${day(m.created_at)}` }),
        el("span", { class: "total", text: ` ${t(m.penalty ? "players.total_penalty" : "players.total", { n: m.total })}${m.won ? " · " + t("players.won") : ""}` })))));
  } catch (error) {
    box.replaceChildren(el("p", { class: "problem", text: error instanceof Refused ? error.message : t("error.network") }));
  }
}

export function initLists() {
  $("new-match").addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = $("new-match-name").value.trim();
    if (!name) return;
    try {
      const made = await send("POST", "/api/matches", { name });
      $("new-match-name").value = "";
      toast(t("matches.created", { name: made.name }));
      go(`/setup?match=${made.id}`);
    } catch (error) {
      toast(error instanceof Refused ? error.message : t("error.network"));
    }
  });
}
