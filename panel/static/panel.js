// tabletop panel: one page, a view per path, the match state pushed over a WebSocket.
// Everything shown is set with textContent (never innerHTML): names come from players.
import { $, app, change, colour, el, getJSON, go, Refused, result, send, signed, toast, who } from "./core.js";
import { feedItem } from "./feed.js";
import { itemClass, initHint, renderHintSeats } from "./hint.js";
import { currentLang, onLangChange, setLang, startLang, t, variantName } from "./i18n.js";
import { initLists, renderMatches, renderPlayers } from "./lists.js";
import { flush } from "./offline.js";
import { applyPatch, PatchError } from "./patch.js";
import { initRound, openRound, relabelRound, renderQueue, roundState } from "./round.js";
import { progressText, renderTV, shownTotal, standings } from "./tv.js";

const VIEWS = { "": "view-scores", table: "view-table", round: "view-round", history: "view-history",
  matches: "view-matches", players: "view-players", setup: "view-setup", tv: "view-tv" };
let socket = null, timerHandle = null, lastTotals = {};
const view = () => { const name = location.pathname.replace(/^\/|\/$/g, ""); return name in VIEWS ? name : ""; };

// --- views -------------------------------------------------------------------------
let shownView = null;
function showView() {
  const name = view();
  // another view opens at its top (after Save on the round entry: the scores, not the middle)
  if (shownView !== null && shownView !== name) window.scrollTo(0, 0);
  shownView = name;
  for (const [key, id] of Object.entries(VIEWS)) $(id).classList.toggle("shown", key === name);
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("active", a.dataset.view === name);
    if (a.dataset.view === name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  document.body.classList.toggle("tv-mode", name === "tv");
  // a view from the "More" menu: the menu's button shows it is the one open
  $("more").classList.toggle("active", !!document.querySelector(`#more-menu a[data-view="${name}"]`));
  if (name === "matches") renderMatches();
  if (name === "players") renderPlayers();
  if (name === "round") openRound();
  if (name === "tv" && app.state) renderTV(app.state);
  if (name === "history" && app.state) renderHistory();  // the plot's labels fit its width now shown
  refreshFrame();
}
function closeMenu() { $("nav").classList.remove("open"); $("more").setAttribute("aria-expanded", "false"); }
// Links inside the page (the tabs, data-nav buttons) change the view without a reload.
document.addEventListener("click", (event) => {
  const a = event.target.closest("nav a, a[data-nav]");
  if (!a || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  go(a.getAttribute("href"));
});
$("more").addEventListener("click", () => {
  const open = $("nav").classList.toggle("open");
  $("more").setAttribute("aria-expanded", String(open));
});
document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeMenu(); });
window.addEventListener("resize", () => { if (view() === "history" && app.state) renderHistory(); });
document.addEventListener("click", (event) => { if (!event.target.closest("nav")) closeMenu(); });

// --- scores ------------------------------------------------------------------------
function renderScores() {
  const s = app.state, players = s.setup.players, match = s.match || {}, res = result();
  $("variant").textContent = `· ${variantName(s.setup.variant, s.setup.variant_name)}`;
  const line = progressText(res);
  $("match-progress").hidden = !line;
  $("match-progress").textContent = line;
  $("score-unit").hidden = !res.penalty;
  $("score-unit").textContent = res.penalty ? t("scores.unit_penalty") : "";
  // who deals the round now being played (the rounds before: the History and the banner)
  const deals = !res.over && players.length >= 2 && match.dealer;
  $("dealer-line").hidden = !deals;
  $("dealer-line").textContent = deals ? t("scores.deals", { n: (res.rounds_played || 0) + 1, player: match.dealer }) : "";
  // in a camera game the game's own buttons lead; a match that is over takes no rounds
  const camera = !!((s.live || {}).attached || s.turn || s.table.melds.length);
  $("enter-round").classList.toggle("quiet", camera);
  $("enter-round").hidden = res.over;
  const unset = players.length < 2;
  $("first-run").hidden = !unset;
  document.querySelector("#view-scores .scores").hidden = unset;
  const board = $("scoreboard"); board.replaceChildren();
  const last = (match.history || []).filter((e) => e.type === "round").slice(-1)[0];
  standings(s).forEach((row, rank) => {
    const seat = players.indexOf(row.player), shown = shownTotal(row.total, res.penalty);
    const li = el("li", { "data-player": row.player, style: { "--pc": colour(seat) } },
      el("span", { class: "rank", text: String(rank + 1) }),
      el("span", { class: "name", text: row.player }),
      el("span", { class: "total", "data-total": String(row.total), text: String(shown) },
        last && last.changes[row.player] !== undefined ? el("span", { class: "last", text: signed(shownTotal(last.changes[row.player], res.penalty)) }) : null));
    const progress = (res.progress || {})[row.player];
    if (res.target && progress) {
      const share = Math.round(100 * progress.share);
      li.append(el("div", { class: "progress", title: t("progress.of", { n: shown, of: res.target }) },
        el("div", { class: `track${res.penalty ? " penalty" : ""}`, role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100",
          "aria-valuenow": String(share), "aria-label": t("progress.label", { player: row.player, n: shown, of: res.target }) },
        el("div", { style: { width: share + "%" } })),
        el("span", { class: "progress-text", text: t("progress.of", { n: shown, of: res.target }) })));
    }
    if (s.turn && s.turn.player === row.player) li.classList.add("turn");
    if (lastTotals[row.player] !== undefined && lastTotals[row.player] !== row.total) {
      li.classList.add("flash"); setTimeout(() => li.classList.remove("flash"), 900);
    }
    lastTotals[row.player] = row.total;
    board.append(li);
  });
  $("melds-mini").replaceChildren(...s.table.melds.map(meldRow));
  if (!s.table.melds.length) $("melds-mini").append(el("p", { class: "muted", text: t("table.empty") }));
  $("opening-mini").replaceChildren(openingBar(s.initial_meld));
  $("feed").replaceChildren(...s.feed.map(feedItem));
  renderHintSeats();
}

// The winner screen: at the top of the scores once the match is over, until dismissed.
function renderWinner() {
  const s = app.state, res = result(), box = $("winner");
  const dismissed = sessionStorage.getItem("panelWinnerSeen") === String(app.matchId);
  box.hidden = !res.over || dismissed;
  // once the winner screen is put away, the winner stays named above the scores
  $("winner-line").hidden = !res.over || !dismissed;
  $("winner-line").textContent = res.over ? `★ ${res.winner ? t("winner.title", { winner: res.winner }) : t("winner.draw")}` : "";
  if (box.hidden) return;
  $("winner-title").textContent = res.winner ? t("winner.title", { winner: res.winner }) : t("winner.draw");
  $("winner-closed").hidden = !res.closed;
  $("winner-closed").textContent = res.closed ? t("winner.closed", { who: res.closed.who || "" }) : "";
  $("winner-standings").replaceChildren(...standings(s).map((row) =>
    el("li", { "data-player": row.player, class: row.player === res.winner ? "champion" : null,
      style: { "--pc": colour(s.setup.players.indexOf(row.player)) } },
    el("span", { class: "name", text: row.player }),
    el("span", { class: "total", text: String(shownTotal(row.total, res.penalty)) }))));
}
$("winner-close").addEventListener("click", () => {
  sessionStorage.setItem("panelWinnerSeen", String(app.matchId)); renderWinner();
});
$("winner-rematch").addEventListener("click", () => rematch(app.matchId));

function itemButton(token, meldIndex, itemIndex) {
  return el("button", {
    class: `item ${itemClass(token)}`, type: "button", text: token, title: t("table.correct_item"),
    on: { click: async () => {
      const fixed = prompt(t("table.correct_prompt", { i: itemIndex + 1, m: meldIndex + 1 }), token);
      if (fixed && fixed.trim() && fixed.trim().toUpperCase() !== token)
        await change("corrections/item", { meld: meldIndex, index: itemIndex, item: fixed.trim() });
    } },
  });
}
function meldRow(meld, index) {
  const row = el("div", { class: `meld ${meld.valid ? "valid" : "invalid"}`, "data-valid": String(meld.valid) });
  meld.meld.split(" ").forEach((token, i) => row.append(itemButton(token, index, i)));
  row.append(el("span", { class: "value", text: meld.valid ? String(meld.value) : "✗" }));
  // the engine says why in English; other languages say what is wrong and keep its words as a tooltip
  if (!meld.valid && meld.reason) row.append(el("span", { class: "reason", title: meld.reason,
    text: currentLang() === "en" ? meld.reason : t("warning.invalid_meld") }));
  return row;
}
function openingBar(progress) {
  if (!progress) return el("div");
  const required = progress.required || 0, value = progress.value || 0;
  const share = required ? Math.min(100, (100 * value) / required) : 100;
  return el("div", { class: "opening" },
    el("p", { text: t("opening.progress", { player: progress.player || t("seat", { n: progress.seat + 1 }), value, required }) }),
    el("div", { class: `track ${value >= required ? "open" : ""}` }, el("div", { style: { width: share + "%" } })));
}

// --- the turn, its timer and the alarm when it runs out -------------------------------------
let audio = null;
const muted = () => localStorage.getItem("panelMute") === "1";
function renderMute() {
  const button = $("mute"), on = muted();
  button.setAttribute("aria-pressed", String(on));
  button.classList.toggle("muted-on", on);
  const label = t(on ? "sound.unmute" : "sound.mute");
  button.setAttribute("aria-label", label); button.title = label;
}
$("mute").addEventListener("click", () => { localStorage.setItem("panelMute", muted() ? "0" : "1"); renderMute(); });
// Browsers let a page make sounds only after a tap on it: the first tap readies the audio.
document.addEventListener("pointerdown", () => {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!audio && Context) audio = new Context();
  if (audio && audio.state === "suspended") audio.resume();
}, { passive: true });
function ring() {
  document.body.dataset.alarms = String(parseInt(document.body.dataset.alarms || "0", 10) + 1);
  if (muted()) return;
  if (audio) {
    const start = audio.currentTime;
    for (let i = 0; i < 3; i++) {
      const osc = audio.createOscillator(), gain = audio.createGain();
      osc.frequency.value = 880; osc.type = "square";
      gain.gain.setValueAtTime(0.0001, start + i * 0.3);
      gain.gain.exponentialRampToValueAtTime(0.25, start + i * 0.3 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + i * 0.3 + 0.2);
      osc.connect(gain).connect(audio.destination);
      osc.start(start + i * 0.3); osc.stop(start + i * 0.3 + 0.22);
    }
  }
  if (navigator.vibrate) { try { navigator.vibrate([200, 100, 200, 100, 400]); } catch (error) { /* not allowed here */ } }
}

function renderTurn() {
  clearInterval(timerHandle);
  const s = app.state, boxes = [$("turn"), $("tv-turn")];
  if (!s.turn) {
    for (const box of boxes) box.replaceChildren(el("p", { class: "muted", text: t("turn.waiting") }));
    return;
  }
  // While paused the clock stands at the pause; the server moves `since` on by each pause.
  const limit = s.setup.turn_seconds, since = s.turn.since, pausedAt = s.turn.paused_at;
  const clocks = [], bars = [];
  for (const box of boxes) {
    const clock = el("div", { class: "timer" }), bar = el("div", { style: { width: "100%" } });
    box.replaceChildren(el("div", { class: "who", text: s.turn.player || t("seat", { n: s.turn.seat + 1 }) }), clock, el("div", { class: "track" }, bar));
    clock.classList.toggle("paused", pausedAt != null);
    if (pausedAt != null) box.append(el("p", { class: "muted", text: t("turn.paused") }));
    clocks.push(clock); bars.push(bar);
  }
  let before = null;
  const tick = () => {
    const now = pausedAt != null ? pausedAt : Date.now() / 1000;
    const left = Math.round(limit - (now - since)), shown = Math.abs(left);
    const text = (left < 0 ? "−" : "") + Math.floor(shown / 60) + ":" + String(shown % 60).padStart(2, "0");
    for (const clock of clocks) { clock.textContent = text; clock.classList.toggle("late", left < 0); }
    for (const bar of bars) bar.style.width = Math.max(0, Math.min(100, (100 * left) / limit)) + "%";
    // rings when the time runs out while the page watches, not for a turn already late
    if (before !== null && before > 0 && left <= 0) ring();
    before = left;
  };
  tick();
  if (pausedAt == null) timerHandle = setInterval(tick, 1000);
}

// --- the live table's buttons ----------------------------------------------------------
let acting = false;  // one press at a time: a double tap must not end two turns
function renderCamera() {
  const live = app.state.live || {}, camera = live.camera, box = $("camera-state");
  const trouble = !!live.attached && !!camera && camera.state !== "live";
  box.hidden = !trouble;
  box.dataset.state = trouble ? camera.state : "";
  box.textContent = trouble ? t("camera.trouble", { state: t(`camera.${camera.state}`), message: camera.message }) : "";
  // card indices the live table leaves unread as too small: the camera is too far
  const far = live.attached && live.view ? live.view.too_far_px : null;
  $("too-far").hidden = !far;
  $("too-far").textContent = far ? t("camera.too_far", { px: Math.round(far) }) : "";
}
function renderControls() {
  const s = app.state, live = s.live || {}, attached = !!live.attached, phase = live.phase;
  $("phase").textContent = phase ? t(`phase.${phase}`) : "";
  $("controls-hint").textContent = attached ? (phase === "over" ? t("controls.over") : "") : t("controls.no_table");
  $("controls-hint").hidden = !$("controls-hint").textContent;
  $("play-buttons").hidden = phase !== "play";
  $("counting").hidden = phase !== "counting";
  const pause = $("pause-timer");  // one button: it pauses a running timer, resumes a paused one
  pause.dataset.action = live.paused ? "resume_timer" : "pause_timer";
  pause.textContent = t(live.paused ? "controls.resume" : "controls.pause");
  renderRacks(phase === "counting" ? s.racks : []);
  for (const button of $("controls").querySelectorAll("button")) button.disabled = !attached || acting;
  $("controls").classList.toggle("detached", !attached);  // a table scored by hand: no game buttons
}
// The rows are kept while their players stay, so a rack half typed survives each new state.
function renderRacks(racks) {
  const list = $("racks"), key = currentLang() + "\n" + racks.map((r) => r.player).join("\n");
  if (list.dataset.players !== key) {
    list.dataset.players = key;
    list.replaceChildren(...racks.map((rack) => el("li", { "data-seat": String(rack.seat), style: { "--pc": colour(rack.seat) } },
      el("span", { class: "name", text: rack.player }), el("span", { class: "rack" }),
      el("form", { class: "rack-form", "data-seat": String(rack.seat) },
        el("input", { name: "rack", inputmode: "text", maxlength: "200", autocomplete: "off", autocapitalize: "characters",
          placeholder: "R3 R4 JK", "aria-label": t("controls.rack_label", { player: rack.player }) }),
        el("button", { type: "submit", class: "quiet", "data-action": "hand", "aria-label": t("controls.set_rack_label", { player: rack.player }) },
          t("controls.set_rack"))))));
  }
  racks.forEach((rack, i) => {
    const row = list.children[i];
    row.querySelector(".rack").textContent = rack.out ? t("controls.went_out")
      : rack.items == null ? t("controls.not_seen") : `${rack.items.join(" ") || t("controls.empty")} = ${rack.value}` + (rack.typed ? t("controls.typed") : "");
    row.querySelector("form").hidden = rack.out;
  });
}
async function act(body) {
  acting = true; renderControls();
  try {
    const answer = await change("actions", body);
    const warnings = ((answer && answer.events) || []).filter((e) => e.type === "warning");
    if (warnings.length) toast(warnings.map((e) => e.message).join("; "));
    return answer;
  } finally {
    acting = false; renderControls();
  }
}
$("controls").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || button.type === "submit") return;
  act({ kind: button.dataset.action });
});
$("controls").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target, input = form.querySelector("input");
  const answer = await act({ kind: "hand", seat: parseInt(form.dataset.seat, 10), items: input.value });
  if (answer) input.value = "";
});

function renderBanner() {
  const banner = $("round-banner"), s = app.state, played = s.scored_round && s.rounds[s.scored_round - 1];
  banner.hidden = !played || result().over;
  if (!played) return;
  banner.dataset.round = String(played.round);
  const entry = ((s.match || {}).history || []).filter((e) => e.type === "round")[played.round - 1];
  banner.querySelector(".result").textContent = (played.winner ? t("banner.wins", { n: played.round, winner: played.winner })
    : t("banner.no_winner", { n: played.round })) + (entry && entry.dealer ? ` · ${t("banner.dealt", { player: entry.dealer })}` : "");
  const penalty = result().penalty, rows = Object.entries(played.scores).sort((a, b) => b[1] - a[1]);
  banner.querySelector(".points").replaceChildren(...rows.map(([name, points]) =>
    el("li", { "data-player": name, class: name === played.winner ? "winner" : "", style: { "--pc": colour(s.setup.players.indexOf(name)) } },
      el("span", { class: "name", text: name }),
      el("span", { class: "value", "data-shown": String(shownTotal(points, penalty)), text: roundPoints(points, penalty) }))));
}

// --- the table -----------------------------------------------------------------------
function renderTable() {
  const s = app.state;
  $("table-t").textContent = s.table.t != null ? `· t = ${s.table.t}s` : "";
  $("melds").replaceChildren(...s.table.melds.map(meldRow));
  $("opening").replaceChildren(openingBar(s.initial_meld));
  const overlay = $("overlay"); overlay.replaceChildren();
  const img = $("frame");
  if (!img.hidden && Array.isArray(s.table.boxes) && img.naturalWidth) {
    overlay.setAttribute("viewBox", `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
    s.table.boxes.forEach((box, i) => {
      const meld = s.table.melds[i]; if (!meld || !Array.isArray(box) || box.length !== 4) return;
      const [x1, y1, x2, y2] = box.map(Number), stroke = meld.valid ? "#2fbf71" : "#e5484d";
      overlay.append(el("svg:rect", { x: x1, y: y1, width: x2 - x1, height: y2 - y1, fill: "none", stroke, "stroke-width": 4, rx: 8 }),
        el("svg:text", { x: x1, y: y1 - 6, fill: stroke, "font-size": 28, "font-weight": 700, text: meld.valid ? String(meld.value) : "✗" }));
    });
  }
}
function refreshFrame() {
  if (!$("view-table").classList.contains("shown") || !app.matchId) return;
  const probe = new Image();
  probe.onload = () => { const img = $("frame"); img.src = probe.src; img.hidden = false; if (app.state) renderTable(); };
  probe.onerror = () => { $("frame").hidden = true; };
  probe.src = "/api/frame.jpg?at=" + Date.now();
}

// --- history ---------------------------------------------------------------------------
function renderHistory() {
  const s = app.state, players = s.setup.players, match = s.match || {}, res = result();
  const history = (match.history || []).filter((e) => e.type === "round");
  const head = el("tr", {}, el("th", { text: t("history.round") }), el("th", { text: t("history.dealer") }),
    ...players.map((p) => el("th", { text: p })));
  const body = history.map((entry) => el("tr", { "data-round": String(entry.round) }, el("td", { text: String(entry.round) }),
    el("td", { class: "dealer", text: entry.dealer || "" }),
    ...players.map((p) => el("td", { "data-player": p }, el("button", { type: "button", title: t("history.edit_round", { n: entry.round }),
      text: changeText(entry.changes[p] ?? 0, res.penalty), on: { click: () => go(`/round?round=${entry.round}`) } })))));
  const totals = el("tr", {}, el("td", { text: t("history.total") }), el("td"),
    ...players.map((p) => el("td", { "data-player": p, text: String(shownTotal((match.totals || {})[p] ?? 0, res.penalty)) })));
  $("rounds").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body), el("tfoot", {}, totals));
  $("plot-unit").hidden = !res.penalty;
  $("plot-unit").textContent = res.penalty ? t("history.plot_penalty") : "";
  const series = Object.fromEntries(players.map((p) => [p, (s.totals_series[p] || [0]).map((v) => shownTotal(v, res.penalty))]));
  drawPlot(players, series);
  $("legend").replaceChildren(...players.map((p, i) => el("span", { text: p, style: { "--pc": colour(i) } })));
  $("corrections").replaceChildren(...s.corrections.map((c) =>
    el("li", { text: `${new Date(c.at * 1000).toLocaleTimeString(currentLang())} · ${c.who} · ${t(`correction.${c.type}`)}` })));
  $("export-json").href = `/api/matches/${app.matchId}/export.json`;
  $("export-csv").href = `/api/matches/${app.matchId}/export.csv`;
}
// A round's change as the scores show it: points won or lost (+12, -7), or the penalty points
// taken (23: penalty points only ever add up).
const changeText = (change, penalty) => (penalty ? String(-change) : signed(change));
const roundPoints = (points, penalty) => (penalty ? t("round.penalty_points", { n: -points }) : signed(points));

function drawPlot(players, series) {
  // the labels are drawn in the plot's own units: sized so that they read at least 12 px on
  // the screen however narrow the plot is drawn (a phone shows it at under half its width)
  const svg = $("plot"), W = 800, H = 400;
  const scale = (svg.getBoundingClientRect().width || W) / W, font = Math.max(16, Math.ceil(12 / scale)), pad = Math.round(font * 3);
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`); svg.replaceChildren();
  const all = players.flatMap((p) => series[p] || [0]);
  const rounds = Math.max(1, ...players.map((p) => (series[p] || [0]).length - 1));
  let lo = Math.min(0, ...all), hi = Math.max(0, ...all); if (hi === lo) hi = lo + 10;
  // Round the axis to a step of 1, 2 or 5 times a power of ten.
  const raw = (hi - lo) / 4, power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((v) => v >= raw);
  lo = Math.floor(lo / step) * step; hi = Math.ceil(hi / step) * step;
  const ticks = Math.round((hi - lo) / step);
  const x = (i) => pad + (i * (W - 2 * pad)) / rounds, y = (v) => H - pad - ((v - lo) * (H - 2 * pad)) / (hi - lo);
  for (let k = 0; k <= ticks; k++) {
    const v = lo + k * step;
    svg.append(el("svg:line", { x1: pad, x2: W - pad, y1: y(v), y2: y(v), stroke: "#2a3a4a" }),
      el("svg:text", { x: 4, y: y(v) + font / 3, "font-size": font, class: "axis", text: String(v) }));
  }
  for (let i = 0; i <= rounds; i++)
    svg.append(el("svg:text", { x: x(i), y: H - pad + font * 1.2, "font-size": font, "text-anchor": "middle", class: "axis", text: String(i) }));
  players.forEach((p, seat) => {
    const points = (series[p] || [0]).map((v, i) => `${x(i)},${y(v)}`).join(" ");
    svg.append(el("svg:polyline", { points, fill: "none", stroke: colour(seat), "stroke-width": 4, "stroke-linejoin": "round", "data-player": p }));
    (series[p] || []).forEach((v, i) => svg.append(el("svg:circle", { cx: x(i), cy: y(v), r: 5, fill: colour(seat) })));
  });
}
$("undo").addEventListener("click", async () => { if (confirm(t("history.undo_confirm"))) await change("undo", {}); });

// --- setup: the options in plain words, with the rule's own sentence ------------------------
const rulesCache = {};
async function rulesFor(variantId) {
  const key = `${variantId}/${currentLang()}`;
  if (!(key in rulesCache))
    rulesCache[key] = getJSON(`/api/variants/${encodeURIComponent(variantId)}/rules?lang=${currentLang()}`).catch(() => null);
  return rulesCache[key];
}
async function loadVariants() {
  app.variants = await getJSON("/api/variants");
  renderVariantNames();
  $("setup-variant").addEventListener("change", renderOptions);
}
function renderVariantNames() {
  const select = $("setup-variant"), chosen = select.value;
  select.replaceChildren(...app.variants.map((v) => el("option", { value: v.id, text: variantName(v.id, v.name) })));
  if (chosen) select.value = chosen;
}
const plain = (name) => name.replace(/_/g, " ");
async function renderOptions() {
  const id = $("setup-variant").value, variant = app.variants.find((v) => v.id === id);
  if (!variant) return;
  const rules = await rulesFor(id);
  if ($("setup-variant").value !== id) return;
  const current = (app.state && app.state.setup.variant === id) ? app.state.setup.options : {};
  const explained = Object.fromEntries(((rules && rules.options) || []).map((o) => [o.name, o]));
  $("setup-options").replaceChildren(...variant.options.map((o) => {
    const about = explained[o.name] || {}, value = current[o.name] ?? o.default;
    const labels = about.choice_labels || {};
    let input;
    if (typeof o.default === "boolean") input = el("input", { type: "checkbox", "data-option": o.name });
    else if (o.choices) input = el("select", { "data-option": o.name }, ...o.choices.map((c) => el("option", { value: String(c), text: labels[c] || plain(String(c)) })));
    else input = el("input", { "data-option": o.name, value: String(value) });
    if (input.type === "checkbox") input.checked = !!value; else input.value = String(value);
    const box = el("div", { class: "option", "data-name": o.name });
    const label = el("label", { class: input.type === "checkbox" ? "check" : null });
    const title = el("span", { class: "option-label", text: about.label || plain(o.name) });
    if (input.type === "checkbox") label.append(input, title); else label.append(title, input);
    box.append(label, el("p", { class: "hint option-help", text: about.help || o.help }));
    if (about.quote) box.append(el("blockquote", { class: "quote", lang: "de", text: `„${about.quote}“` }));
    return box;
  }));
  $("setup-options").dataset.variant = id;
}
let setupShownFor = null, setupTyped = false;
// What a player has typed into the setup stays until saved: a state (or the variants arriving
// late on a slow phone) does not write over it.
$("setup-form").addEventListener("input", () => { setupTyped = true; });
$("setup-form").addEventListener("change", () => { setupTyped = true; });
function fillSetup() {
  if (!app.variants.length || setupTyped || (document.activeElement && $("setup-form").contains(document.activeElement))) return;
  const s = app.state, key = `${app.matchId}/${s.last_id}/${currentLang()}`;
  if (setupShownFor === key) return;
  setupShownFor = key;
  $("setup-variant").value = s.setup.variant; renderOptions();
  // a new match starts with the players of the one shown before
  const players = s.setup.players.length ? s.setup.players : (app.lastPlayers || []);
  $("setup-players").value = players.join("\n");
  renderDealers(s.setup.dealer); $("setup-turn").value = s.setup.turn_seconds;
  $("setup-rounds").value = s.setup.rounds_limit ?? ""; $("setup-target").value = s.setup.target ?? "";
  $("calibration").textContent = t("setup.calibration_status", { status: t(`calibration.${s.calibration.status}`) }) +
    (s.calibration.note ? ` — ${s.calibration.note}` : "");
}
$("setup-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const options = {};
  // the inputs shown are another game's until its rules texts arrive: that game's options
  // are not sent, and the chosen game's take their defaults
  const shown = $("setup-options").dataset.variant === $("setup-variant").value;
  for (const input of shown ? $("setup-options").querySelectorAll("[data-option]") : []) {
    const spec = ((app.variants.find((v) => v.id === $("setup-variant").value) || {}).options || []).find((o) => o.name === input.dataset.option);
    let value = input.type === "checkbox" ? input.checked : input.value;
    if (spec && typeof spec.default === "number" && value !== "" && !Number.isNaN(Number(value))) value = Number(value);
    options[input.dataset.option] = value;
  }
  const number = (id) => ($(id).value === "" ? null : parseInt($(id).value, 10));
  const saved = await change("setup", {
    variant: $("setup-variant").value, options,
    players: $("setup-players").value.split("\n").map((p) => p.trim()).filter(Boolean),
    dealer: number("setup-dealer") || 0, rounds_limit: number("setup-rounds"), target: number("setup-target"),
    turn_seconds: number("setup-turn") || 120,
  });
  if (saved) { toast(t("setup.saved")); setupShownFor = null; setupTyped = false; }
});
// The first dealer is chosen by name among the players written above (sent as their seat).
const typedPlayers = () => $("setup-players").value.split("\n").map((p) => p.trim()).filter(Boolean);
function renderDealers(seat) {
  const select = $("setup-dealer"), chosen = seat ?? parseInt(select.value || "0", 10);
  const names = typedPlayers();
  select.replaceChildren(...names.map((name, i) => el("option", { value: String(i), text: name })));
  select.value = String(Math.min(Number.isInteger(chosen) ? chosen : 0, Math.max(0, names.length - 1)));
}
$("setup-players").addEventListener("input", () => renderDealers());

// Same players again: a new match of the same game and options, the next dealer first.
async function rematch(id) {
  try {
    const made = await send("POST", `/api/matches/${id}/rematch`, { who: who() });
    const state = await getJSON(`/api/matches/${made.id}/state`);
    toast(t("matches.rematch_made", { name: made.name, player: (state.match || {}).dealer || "" }));
    go(`/?match=${made.id}`);
  } catch (error) {
    toast(error instanceof Refused ? error.message : t("error.network"));
  }
}
app.rematch = rematch;

$("who").value = localStorage.getItem("panelWho") || "";
$("token").value = localStorage.getItem("panelToken") || "";
$("who-form").addEventListener("submit", (event) => {
  event.preventDefault();
  localStorage.setItem("panelWho", $("who").value.trim());
  localStorage.setItem("panelToken", $("token").value);
  toast(t("setup.remembered"));
});

// The rules of the match's variant in the page's language: the warnings' explanations.
let rulesShownFor = null;
async function loadRules() {
  const key = `${app.state.setup.variant}/${currentLang()}`;
  if (rulesShownFor === key) return;
  rulesShownFor = key;
  app.rules = await rulesFor(app.state.setup.variant);
  if (app.state) $("feed").replaceChildren(...app.state.feed.map(feedItem));
}

// --- live ------------------------------------------------------------------------------
function render() {
  const s = app.state;
  $("match-name").textContent = `· ${s.match_info.name}`;
  document.title = `${s.match_info.name} · tabletop`;
  if (s.setup.players.length) app.lastPlayers = s.setup.players;
  renderScores(); renderWinner(); renderBanner(); renderTurn(); renderControls(); renderCamera(); renderTable(); renderHistory();
  fillSetup(); roundState(); loadRules();
  if (view() === "tv") renderTV(s);
}
function setConn(live) {
  $("conn").textContent = t(live ? "conn.live" : "conn.offline");
  $("conn").classList.toggle("live", live);
}
function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws/matches/${app.matchId}`);
  socket = ws;
  // The server sends the whole state first, then patches from the version sent last
  // (panel/routers/live.py); a patch this page cannot apply gets the whole state asked for.
  let held = null, asked = false;
  ws.onopen = () => { setConn(true); flush(); };
  ws.onmessage = (message) => {
    if (socket !== ws) return;
    const push = JSON.parse(message.data);
    if (push.state) {
      app.state = push.state; held = push.version; asked = false;
    } else {
      if (asked) return;  // the whole state is on its way
      try {
        if (push.base !== held || !app.state) throw new PatchError(`no state ${push.base} here`);
        app.state = applyPatch(app.state, push.patch); held = push.version;
      } catch (error) {
        held = null; asked = true;
        ws.send(JSON.stringify({ want: "state" }));
        return;
      }
    }
    render();
  };
  ws.onclose = (closed) => {
    if (socket !== ws) return;  // replaced by the socket of another match
    setConn(false);
    if (closed.code === 4404) { matchGone(); return; }
    setTimeout(() => { if (socket === ws) connect(); }, 2000);
  };
  // The state over HTTP too: shown at once, and kept by the service worker, so a page opened
  // without a connection shows the last scores it saw (and rounds can be entered and queued).
  getJSON(`/api/matches/${app.matchId}/state`).then((data) => {
    if (socket === ws && !app.state) { app.state = data; render(); }
  }).catch(() => {});
}
// The match shown: ?match=N, else the panel's own (its --new or --match, the live table's, else
// the first of the match list).  Once chosen it goes into the address, so that nothing done
// elsewhere (a round saved, a match started at another table) moves this page to another match.
async function chooseMatch() {
  const fromUrl = parseInt(new URLSearchParams(location.search).get("match") || "", 10);
  if (Number.isInteger(fromUrl) && fromUrl > 0) return fromUrl;
  try {
    return (await getJSON("/api/matches/current")).id;
  } catch (error) {
    // offline: the match this phone showed last (its state is kept by the service worker)
    const last = parseInt(localStorage.getItem("panelMatch") || "", 10);
    if (Number.isInteger(last) && last > 0) return last;
    throw error;
  }
}
function pinMatch(id) {
  const url = new URL(location.href);
  if (url.searchParams.get("match") === String(id)) return;
  url.searchParams.set("match", String(id));
  history.replaceState(history.state, "", url.pathname + url.search);
}
// The match shown was deleted (here or on another phone): the panel's own match instead.
function matchGone() {
  const url = new URL(location.href);
  url.searchParams.delete("match");
  history.replaceState(history.state, "", url.pathname + url.search);
  toast(t("matches.gone"));
  followMatch().catch(() => setConn(false));
}
async function followMatch() {
  const id = await chooseMatch();
  pinMatch(id);
  localStorage.setItem("panelMatch", String(id));
  if (id === app.matchId) return;
  app.matchId = id; app.state = null; lastTotals = {}; setupShownFor = null; setupTyped = false;
  if (socket) { const old = socket; socket = null; old.close(); }
  connect();
}
function routed() { closeMenu(); showView(); followMatch().catch(() => setConn(false)); }
window.addEventListener("panel:route", routed);
window.addEventListener("popstate", routed);
$("lang").addEventListener("change", (event) => { setLang(event.target.value, true); });
onLangChange((code) => {
  $("lang").value = code;
  renderMute();
  setConn($("conn").classList.contains("live"));
  if (app.variants.length) renderVariantNames();
  if (app.state) { setupShownFor = null; render(); }
  if (view() === "matches") renderMatches();
  if (view() === "players") renderPlayers();
  renderQueue(); relabelRound();
});
$("explain").addEventListener("click", (event) => { if (event.target === $("explain")) $("explain").close(); });

async function start() {
  await startLang();
  showView();
  initRound(); initHint(); initLists();
  renderMute();
  // without a connection (and nothing kept by the service worker) the page waits for one
  await followMatch().catch(() => setConn(false));
  await loadVariants().catch(() => {});
  if (app.state) { setupShownFor = null; fillSetup(); }
  setInterval(refreshFrame, 2000);
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {});
}
start();
