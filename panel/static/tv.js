// The TV view: big totals with the way to the target, the turn timer, the last round and the
// QR code to join, readable across the room.
import { $, colour, el, getJSON, result, signed } from "./core.js";
import { t, variantName } from "./i18n.js";

let joinLoaded = false;

export function standings(state) {
  const match = state.match || {};
  return (match.standings && match.standings.length) ? match.standings
    : state.setup.players.map((p) => ({ player: p, total: 0 }));
}
// A total as players read it: penalty games count penalty points (positive, fewer is better).
export const shownTotal = (total, penalty) => (penalty ? -total : total);

export function progressText(res) {
  if (res.target) return t(res.penalty ? "progress.penalty_target" : "progress.target", { n: res.target });
  if (res.rounds_limit) return t("progress.rounds", { n: Math.min(res.rounds_played + (res.over ? 0 : 1), res.rounds_limit), of: res.rounds_limit });
  return res.rounds_played ? t("progress.played", { n: res.rounds_played }) : "";
}

export function renderTV(state) {
  const res = result(state), players = state.setup.players;
  $("tv-title").textContent = `${state.match_info.name} · ${variantName(state.setup.variant, state.setup.variant_name)}`;
  $("tv-progress").textContent = progressText(res);
  $("tv-unit").hidden = !res.penalty;
  $("tv-unit").textContent = res.penalty ? t("tv.penalty") : "";
  const last = ((state.match || {}).history || []).filter((e) => e.type === "round").slice(-1)[0];
  $("tv-board").replaceChildren(...standings(state).map((row, rank) => {
    const seat = players.indexOf(row.player), progress = (res.progress || {})[row.player];
    const li = el("li", { "data-player": row.player, class: state.turn && state.turn.player === row.player ? "turn" : null,
      style: { "--pc": colour(seat) } },
    el("span", { class: "rank", text: String(rank + 1) }),
    el("span", { class: "name", text: row.player }),
    el("span", { class: "total", text: String(shownTotal(row.total, res.penalty)) }),
    last && last.changes[row.player] !== undefined
      ? el("span", { class: "last", text: signed(shownTotal(last.changes[row.player], res.penalty)) }) : el("span"));
    if (res.target && progress) li.append(el("div", { class: `track${res.penalty ? " penalty" : ""}` },
      el("div", { style: { width: `${Math.round(100 * progress.share)}%` } })));
    return li;
  }));
  $("tv-last").replaceChildren(...(last ? [el("h2", { text: t("tv.last_round") }),
    el("p", { text: last.winner ? t("banner.wins", { n: last.round, winner: last.winner }) : t("banner.no_winner", { n: last.round }) }),
    el("p", { class: "tv-changes", text: Object.entries(last.changes).map(([name, v]) => `${name} ${signed(shownTotal(v, res.penalty))}`).join(" · ") })] : []));
  const winner = $("tv-winner");
  winner.hidden = !res.over;
  if (res.over) {
    $("tv-winner-title").textContent = res.winner ? t("winner.title", { winner: res.winner }) : t("winner.draw");
    $("tv-winner-standings").replaceChildren(...standings(state).map((row) =>
      el("li", { style: { "--pc": colour(players.indexOf(row.player)) } }, el("span", { class: "name", text: row.player }),
        el("span", { class: "total", text: String(shownTotal(row.total, res.penalty)) }))));
  }
  if (!joinLoaded) { joinLoaded = true; loadJoin(); }
}

// The join QR code comes as SVG text: shown as an image (a data: URL), never put in the page.
async function loadJoin() {
  try {
    const join = await getJSON("/api/join");
    if (!join.url) return;
    $("tv-url").textContent = join.url;
    if (join.qr_url) $("tv-qr").src = join.qr_url;
    else if (join.qr_svg) $("tv-qr").src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(join.qr_svg);
    $("tv-qr").alt = t("tv.qr_alt", { url: join.url });
    $("tv-join").hidden = false;
  } catch (error) {
    joinLoaded = false;
  }
}
