// tabletop panel: one page, four views, the match state pushed over a WebSocket.
// Everything shown is set with textContent (never innerHTML): names come from players.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  let matchId = null, state = null, socket = null, timerHandle = null, lastTotals = {};
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...children) => {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
      else if (k === "style") for (const [p, val] of Object.entries(v)) node.style.setProperty(p, val);
      else node.setAttribute(k, v);
    }
    for (const c of children) if (c != null) node.append(c);
    return node;
  };
  const colour = (i) => `var(--c${i % 6})`;
  const signed = (n) => (n > 0 ? "+" : "") + n;

  // --- who and token -------------------------------------------------------------
  const params = new URLSearchParams(location.search);
  const who = () => localStorage.getItem("panelWho") || "panel";
  // POST a change; the answer's JSON, or null (after a toast saying why) when refused.
  async function change(path, body) {
    const headers = { "Content-Type": "application/json" };
    const token = localStorage.getItem("panelToken");
    if (token) headers["X-Panel-Token"] = token;
    const response = await fetch(`/api/matches/${matchId}/${path}`, {
      method: "POST", headers, body: JSON.stringify({ who: who(), ...body }),
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
      toast(`${response.status}: ${detail}`);
      return null;
    }
    return response.json();
  }
  function toast(text) {
    const t = $("toast"); t.textContent = text; t.hidden = false;
    clearTimeout(toast.h); toast.h = setTimeout(() => { t.hidden = true; }, 4000);
  }

  // --- views ---------------------------------------------------------------------
  function showView() {
    const view = location.pathname.replace(/^\//, "");
    const ids = { "": "view-scores", table: "view-table", history: "view-history", setup: "view-setup" };
    for (const [name, id] of Object.entries(ids)) $(id).classList.toggle("shown", name === view);
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === view);
  }

  function itemButton(token, meldIndex, itemIndex) {
    const cls = token.startsWith("JK") ? "JK" : /^[RBOK]\d/.test(token) ? token[0] : token.slice(-1);
    return el("button", {
      class: `item ${cls}`, type: "button", text: token, title: "correct this item",
      on: { click: async () => {
        const fixed = prompt(`Item ${itemIndex + 1} of meld ${meldIndex + 1} is really:`, token);
        if (fixed && fixed.trim() && fixed.trim().toUpperCase() !== token)
          await change("corrections/item", { meld: meldIndex, index: itemIndex, item: fixed.trim() });
      } },
    });
  }
  function meldRow(meld, index) {
    const row = el("div", { class: `meld ${meld.valid ? "valid" : "invalid"}`, "data-valid": String(meld.valid) });
    meld.meld.split(" ").forEach((token, i) => row.append(itemButton(token, index, i)));
    row.append(el("span", { class: "value", text: meld.valid ? String(meld.value) : "✗" }));
    if (!meld.valid && meld.reason) row.append(el("span", { class: "reason", text: meld.reason }));
    return row;
  }
  function openingBar(progress) {
    if (!progress) return el("div");
    const required = progress.required || 0, value = progress.value || 0;
    const share = required ? Math.min(100, (100 * value) / required) : 100;
    return el("div", { class: "opening" },
      el("p", { text: `${progress.player || "Seat " + progress.seat} opening: ${value} / ${required}` }),
      el("div", { class: `track ${value >= required ? "open" : ""}` }, el("div", { style: { width: share + "%" } })));
  }

  function renderScores() {
    const s = state, players = s.setup.players, match = s.match || { standings: [], history: [] };
    $("variant").textContent = `· ${s.setup.variant_name}` + (match.over ? ` · over, winner ${match.winner || "none (draw)"}` : "");
    const board = $("scoreboard"); board.replaceChildren();
    const last = (match.history || []).filter((e) => e.type === "round").slice(-1)[0];
    const standings = match.standings.length ? match.standings : players.map((p) => ({ player: p, total: 0 }));
    standings.forEach((row, rank) => {
      const seat = players.indexOf(row.player);
      const li = el("li", { "data-player": row.player, style: { "--pc": colour(seat) } },
        el("span", { class: "rank", text: String(rank + 1) }),
        el("span", { class: "name", text: row.player }),
        el("span", { class: "total", "data-total": String(row.total), text: String(row.total) },
          last && last.changes[row.player] !== undefined ? el("span", { class: "last", text: signed(last.changes[row.player]) }) : null));
      if (s.turn && s.turn.player === row.player) li.classList.add("turn");
      if (lastTotals[row.player] !== undefined && lastTotals[row.player] !== row.total) {
        li.classList.add("flash"); setTimeout(() => li.classList.remove("flash"), 900);
      }
      lastTotals[row.player] = row.total;
      board.append(li);
    });
    $("melds-mini").replaceChildren(...s.table.melds.map(meldRow));
    if (!s.table.melds.length) $("melds-mini").append(el("p", { class: "muted", text: "Nothing on the table yet." }));
    $("opening-mini").replaceChildren(openingBar(s.initial_meld));
    $("feed").replaceChildren(...s.feed.map((e) => el("li", { class: e.type, text: describe(e) })));
  }
  function describe(e) {
    const p = (seat) => (seat != null && state.setup.players[seat]) || "";
    switch (e.type) {
      case "warning": return `⚠ ${p(e.seat)} ${e.message || ""}`;
      case "round_scored": return `Round ${e.round || ""} scored` + (e.winner ? `, ${e.winner} wins: ` : ": ") +
        Object.entries(e.scores || {}).map(([k, v]) => `${k} ${signed(v)}`).join(", ");
      case "undo": return e.who ? `${e.who} undid a ${e.undone_type || "change"}` : `Undo: back to ${p(e.seat)}'s turn`;
      case "player_out": return `${p(e.seat)} is out`;
      case "hand_shown": return `${p(e.seat)}'s rack: ${(e.items || []).join(" ") || "empty"} (${e.value})` + (e.typed ? ", typed" : "");
      case "timer_paused": return "Timer paused" + (e.who ? ` by ${e.who}` : "");
      case "timer_resumed": return "Timer resumed" + (e.who ? ` by ${e.who}` : "");
      case "score_edited": return `${e.who} edited round ${e.round}`;
      case "item_corrected": return `${e.who}: ${e.was || "?"} → ${e.item}`;
      case "reading_corrected": return `Reading fixed: ${e.was} → ${e.item}` + (e.meld ? ` in ${e.meld}` : "");
      case "setup": return `${e.who} set up ${e.variant} for ${(e.players || []).join(", ")}`;
      default: return `${e.type.replace(/_/g, " ")} ${p(e.seat)}`;
    }
  }

  function renderTurn() {
    clearInterval(timerHandle);
    const box = $("turn"), s = state;
    if (!s.turn) { box.replaceChildren(el("p", { class: "muted", text: "Waiting for a turn." })); return; }
    // While paused the clock stands at the pause; the server moves `since` on by each pause.
    const limit = s.setup.turn_seconds, since = s.turn.since, pausedAt = s.turn.paused_at;
    const clock = el("div", { class: "timer" }), bar = el("div", { style: { width: "100%" } });
    box.replaceChildren(el("div", { class: "who", text: s.turn.player || `Seat ${s.turn.seat}` }), clock, el("div", { class: "track" }, bar));
    clock.classList.toggle("paused", pausedAt != null);
    if (pausedAt != null) box.append(el("p", { class: "muted", text: "Timer paused" }));
    const tick = () => {
      const now = pausedAt != null ? pausedAt : Date.now() / 1000;
      const left = Math.round(limit - (now - since));
      const shown = Math.abs(left);
      clock.textContent = (left < 0 ? "−" : "") + Math.floor(shown / 60) + ":" + String(shown % 60).padStart(2, "0");
      clock.classList.toggle("late", left < 0);
      bar.style.width = Math.max(0, Math.min(100, (100 * left) / limit)) + "%";
    };
    tick();
    if (pausedAt == null) timerHandle = setInterval(tick, 1000);
  }

  // --- the live table's buttons ----------------------------------------------------------
  let acting = false;  // one press at a time: a double tap must not end two turns
  const PHASES = { play: "· playing", counting: "· counting the racks", over: "· match over" };
  function renderCamera() {
    const live = state.live || {}, camera = live.camera, box = $("camera-state");
    const trouble = !!live.attached && !!camera && camera.state !== "live";
    box.hidden = !trouble;
    box.dataset.state = trouble ? camera.state : "";
    box.textContent = trouble ? `Camera ${camera.state}: ${camera.message}` : "";
  }
  function renderControls() {
    const s = state, live = s.live || {}, attached = !!live.attached, phase = live.phase;
    $("phase").textContent = PHASES[phase] || "";
    $("controls-hint").textContent = attached ? (phase === "over" ? "The match is over." : "")
      : "No live table is attached: these buttons work while tabletop run watches the table.";
    $("controls-hint").hidden = !$("controls-hint").textContent;
    $("play-buttons").hidden = phase !== "play";
    $("counting").hidden = phase !== "counting";
    const pause = $("pause-timer");  // one button: it pauses a running timer, resumes a paused one
    pause.dataset.action = live.paused ? "resume_timer" : "pause_timer";
    pause.textContent = live.paused ? "Resume timer" : "Pause timer";
    renderRacks(phase === "counting" ? s.racks : []);
    for (const button of $("controls").querySelectorAll("button")) button.disabled = !attached || acting;
  }
  // The rows are kept while their players stay, so a rack half typed survives each new state.
  function renderRacks(racks) {
    const list = $("racks");
    if (list.dataset.players !== racks.map((r) => r.player).join("\n")) {
      list.dataset.players = racks.map((r) => r.player).join("\n");
      list.replaceChildren(...racks.map((rack) => el("li", { "data-seat": String(rack.seat), style: { "--pc": colour(rack.seat) } },
        el("span", { class: "name", text: rack.player }), el("span", { class: "rack" }),
        el("form", { class: "rack-form", "data-seat": String(rack.seat) },
          el("input", { name: "rack", maxlength: "200", autocomplete: "off", autocapitalize: "characters",
            placeholder: "R3 R4 JK", "aria-label": `${rack.player}'s rack` }),
          el("button", { type: "submit", class: "quiet", "data-action": "hand", "aria-label": `Set ${rack.player}'s rack` }, "Set rack")))));
    }
    racks.forEach((rack, i) => {
      const row = list.children[i];
      row.querySelector(".rack").textContent = rack.out ? "went out"
        : rack.items == null ? "not seen yet" : `${rack.items.join(" ") || "empty"} = ${rack.value}` + (rack.typed ? " (typed)" : "");
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
    const banner = $("round-banner"), s = state, played = s.scored_round && s.rounds[s.scored_round - 1];
    banner.hidden = !played;
    if (!played) return;
    banner.dataset.round = String(played.round);
    banner.querySelector(".result").textContent = `Round ${played.round}: ` + (played.winner ? `${played.winner} wins` : "no winner");
    const rows = Object.entries(played.scores).sort((a, b) => b[1] - a[1]);
    banner.querySelector(".points").replaceChildren(...rows.map(([name, points]) =>
      el("li", { "data-player": name, class: name === played.winner ? "winner" : "", style: { "--pc": colour(s.setup.players.indexOf(name)) } },
        el("span", { class: "name", text: name }), el("span", { class: "value", text: signed(points) }))));
  }

  function renderTable() {
    const s = state;
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
    if (!$("view-table").classList.contains("shown")) return;
    const probe = new Image();
    probe.onload = () => { const img = $("frame"); img.src = probe.src; img.hidden = false; renderTable(); };
    probe.onerror = () => { $("frame").hidden = true; };
    probe.src = "/api/frame.jpg?at=" + Date.now();
  }

  function renderHistory() {
    const s = state, players = s.setup.players, history = ((s.match || {}).history || []).filter((e) => e.type === "round");
    const head = el("tr", {}, el("th", { text: "Round" }), ...players.map((p) => el("th", { text: p })));
    const body = history.map((entry) => el("tr", {}, el("td", { text: String(entry.round) }),
      ...players.map((p) => el("td", {}, el("button", { type: "button", title: "edit this round", text: signed(entry.changes[p] ?? 0),
        on: { click: () => editRound(entry) } })))));
    const totals = el("tr", {}, el("td", { text: "Total" }), ...players.map((p) => el("td", { text: String(((s.match || {}).totals || {})[p] ?? 0) })));
    $("rounds").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body), el("tfoot", {}, totals));
    drawPlot(players, s.totals_series);
    $("legend").replaceChildren(...players.map((p, i) => el("span", { text: p, style: { "--pc": colour(i) } })));
    $("corrections").replaceChildren(...s.corrections.map((c) =>
      el("li", { text: `${new Date(c.at * 1000).toLocaleTimeString()} · ${c.who} · ${c.type.replace(/_/g, " ")}` })));
    $("export-json").href = `/api/matches/${matchId}/export.json`;
    $("export-csv").href = `/api/matches/${matchId}/export.csv`;
  }
  async function editRound(entry) {
    const text = prompt(`Round ${entry.round} scores (name=points, comma separated):`,
      Object.entries(entry.scores).map(([k, v]) => `${k}=${v}`).join(", "));
    if (!text) return;
    const scores = {};
    for (const part of text.split(",")) {
      const [name, value] = part.split("=");
      if (!name || value === undefined || !/^\s*-?\d+\s*$/.test(value)) { toast(`not name=points: ${part}`); return; }
      scores[name.trim()] = parseInt(value, 10);
    }
    await change("corrections/score", { round: entry.round, scores });
  }
  function drawPlot(players, series) {
    const svg = $("plot"), W = 800, H = 400, pad = 44;
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`); svg.replaceChildren();
    const all = players.flatMap((p) => series[p] || [0]);
    const rounds = Math.max(1, ...players.map((p) => (series[p] || [0]).length - 1));
    let lo = Math.min(0, ...all), hi = Math.max(0, ...all); if (hi === lo) hi = lo + 10;
    // Round the axis to a step of 1, 2 or 5 times a power of ten.
    const raw = (hi - lo) / 4, power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
    lo = Math.floor(lo / step) * step; hi = Math.ceil(hi / step) * step;
    const ticks = Math.round((hi - lo) / step);
    const x = (i) => pad + (i * (W - 2 * pad)) / rounds, y = (v) => H - pad - ((v - lo) * (H - 2 * pad)) / (hi - lo);
    for (let k = 0; k <= ticks; k++) {
      const v = lo + k * step;
      svg.append(el("svg:line", { x1: pad, x2: W - pad, y1: y(v), y2: y(v), stroke: "#2a3a4a" }),
        el("svg:text", { x: 4, y: y(v) + 4, text: String(v) }));
    }
    for (let i = 0; i <= rounds; i++) svg.append(el("svg:text", { x: x(i) - 4, y: H - pad + 18, text: String(i) }));
    players.forEach((p, seat) => {
      const points = (series[p] || [0]).map((v, i) => `${x(i)},${y(v)}`).join(" ");
      svg.append(el("svg:polyline", { points, fill: "none", stroke: colour(seat), "stroke-width": 4, "stroke-linejoin": "round", "data-player": p }));
      (series[p] || []).forEach((v, i) => svg.append(el("svg:circle", { cx: x(i), cy: y(v), r: 5, fill: colour(seat) })));
    });
  }

  // --- setup ---------------------------------------------------------------------
  let variants = [];
  async function loadVariants() {
    variants = await (await fetch("/api/variants")).json();
    $("setup-variant").replaceChildren(...variants.map((v) => el("option", { value: v.id, text: v.name })));
    $("setup-variant").addEventListener("change", renderOptions);
  }
  function renderOptions() {
    const variant = variants.find((v) => v.id === $("setup-variant").value);
    const current = (state && state.setup.variant === variant.id) ? state.setup.options : {};
    $("setup-options").replaceChildren(...variant.options.map((o) => {
      const value = current[o.name] ?? o.default;
      let input;
      if (typeof o.default === "boolean") input = el("input", { type: "checkbox", "data-option": o.name });
      else if (o.choices) input = el("select", { "data-option": o.name }, ...o.choices.map((c) => el("option", { value: String(c), text: String(c) })));
      else input = el("input", { "data-option": o.name, value: String(value) });
      if (input.type === "checkbox") input.checked = !!value; else input.value = String(value);
      return el("label", { title: o.help, text: o.name + " " }, input);
    }));
  }
  function fillSetup() {
    if (!variants.length || document.activeElement && $("setup-form").contains(document.activeElement)) return;
    $("setup-variant").value = state.setup.variant; renderOptions();
    $("setup-players").value = state.setup.players.join("\n");
    $("setup-dealer").value = state.setup.dealer; $("setup-turn").value = state.setup.turn_seconds;
    $("setup-rounds").value = state.setup.rounds_limit ?? ""; $("setup-target").value = state.setup.target ?? "";
    $("calibration").textContent = `Status: ${state.calibration.status}` + (state.calibration.note ? ` — ${state.calibration.note}` : "");
  }
  $("setup-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const options = {};
    for (const input of document.querySelectorAll("[data-option]"))
      options[input.dataset.option] = input.type === "checkbox" ? input.checked : input.value;
    const number = (id) => ($(id).value === "" ? null : parseInt($(id).value, 10));
    const saved = await change("setup", {
      variant: $("setup-variant").value, options,
      players: $("setup-players").value.split("\n").map((s) => s.trim()).filter(Boolean),
      dealer: number("setup-dealer") || 0, rounds_limit: number("setup-rounds"), target: number("setup-target"),
      turn_seconds: number("setup-turn") || 120,
    });
    if (saved) toast("Setup saved.");
  });
  $("who").value = localStorage.getItem("panelWho") || "";
  $("token").value = localStorage.getItem("panelToken") || "";
  $("who-form").addEventListener("submit", (event) => {
    event.preventDefault();
    localStorage.setItem("panelWho", $("who").value.trim());
    localStorage.setItem("panelToken", $("token").value);
    toast("Remembered.");
  });
  $("undo").addEventListener("click", async () => { if (confirm("Undo the last event?")) await change("undo", {}); });

  // --- live ------------------------------------------------------------------------
  function render() {
    $("match-name").textContent = `· ${state.match_info.name}`;
    renderScores(); renderBanner(); renderTurn(); renderControls(); renderCamera(); renderTable(); renderHistory(); fillSetup();
  }
  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/matches/${matchId}`);
    socket.onopen = () => { $("conn").textContent = "live"; $("conn").classList.add("live"); };
    socket.onmessage = (message) => { state = JSON.parse(message.data); render(); };
    socket.onclose = () => {
      $("conn").textContent = "offline"; $("conn").classList.remove("live");
      setTimeout(connect, 2000);
    };
  }
  for (const a of document.querySelectorAll("nav a")) a.addEventListener("click", (event) => {
    event.preventDefault(); history.pushState({}, "", a.getAttribute("href")); showView(); refreshFrame();
  });
  window.addEventListener("popstate", showView);
  async function start() {
    showView();
    const fromUrl = parseInt(params.get("match") || "", 10);
    matchId = Number.isInteger(fromUrl) && fromUrl > 0 ? fromUrl : (await (await fetch("/api/matches/current")).json()).id;
    await loadVariants();
    connect();
    refreshFrame(); setInterval(refreshFrame, 2000);
  }
  start();
})();
