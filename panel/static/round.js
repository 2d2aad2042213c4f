// Entering a round by hand (and correcting an earlier one the same way): per player the points
// left on the rack (a keypad) or the rack's items, who went out; the engine's scores shown
// before they are saved.
import { $, app, colour, el, getJSON, go, Refused, result, send, signed, toast, who } from "./core.js";
import { t } from "./i18n.js";
import { discard, flush, onQueueChange, queue, sendOrQueue } from "./offline.js";

let entry = null, previewTimer = null, previewSeq = 0, lastPreview = null;

// What the variant's scoring reads beyond each rack (the engine's Variant.round_entry):
// melds laid, the winner's flags, anyone's flags, how the winner won, the last discard.
const NO_EXTRAS = { melds: false, winner_flags: [], anyone_flags: [], win_kinds: [], last_discard: false };
const extras = () => (app.variants.find((v) => v.id === app.state.setup.variant) || {}).round_entry || NO_EXTRAS;
const editing = () => {
  const n = parseInt(new URLSearchParams(location.search).get("round") || "", 10);
  return Number.isInteger(n) && n >= 1 && n <= app.state.rounds.length ? n : null;
};
const pendingHere = () => queue().filter((e) => e.match === app.matchId && e.kind === "round");
const nextNumber = () => app.state.rounds.length + pendingHere().length + 1;

function blankRow(name) {
  return { name, mode: "points", points: "", hand: "", melds: "", out: false, flags: {}, win: "", discard: "" };
}
// The form for the shown match and round: kept while they stay (a half-typed round survives
// each new state), made afresh when they change.
export function openRound() {
  if (!app.state) return;
  // a new round is played by those still in the match (Wiener puts players out); an earlier
  // one by those it scored
  const round = editing(), gone = new Set((app.state.match || {}).eliminated || []);
  const players = round ? app.state.setup.players.filter((p) => p in app.state.rounds[round - 1].scores)
    : app.state.setup.players.filter((p) => !gone.has(p));
  const id = `${app.matchId}/${round || "new"}/${players.join("\n")}`;
  if (entry && entry.id === id) { render(); return; }
  entry = { id, round, rows: players.map(blankRow), exhausted: false, selected: 0, loaded: !round };
  lastPreview = null;
  if (round) prefill(entry, round);
  renderRows(); render();
}

// An edited round starts from what was entered last time (the event's "input"), else from
// its winner.
async function prefill(form, round) {
  const played = app.state.rounds[round - 1];
  let input = null;
  try {
    const events = await getJSON(`/api/matches/${app.matchId}/events?after=${Math.max(0, played.id - 1)}`);
    const edits = events.filter((e) => e.type === "score_edited" && e.round === round && e.input);
    const own = events.find((e) => e.id === played.id);
    input = edits.length ? edits[edits.length - 1].input : own && own.input;
  } catch (error) { /* the scores alone below */ }
  if (entry !== form) return;
  for (const row of form.rows) {
    const given = input && (input.players || []).find((p) => p.name === row.name);
    if (given) {
      row.out = !!given.out;
      if (given.hand != null) { row.mode = "hand"; row.hand = given.hand; }
      else if (given.points != null) row.points = String(given.points);
      row.melds = given.melds || "";
      row.win = given.win || "";
      row.discard = given.last_discard || "";
      // a player's yes-or-no facts are the entry's true values besides "out"
      for (const [flag, value] of Object.entries(given))
        if (value === true && flag !== "out") row.flags[flag] = true;
    } else {
      row.out = played.winner === row.name;
      const score = played.scores[row.name];
      if (!row.out && score != null && score <= 0 && !extras().melds) row.points = String(-score);
    }
  }
  form.exhausted = !!(input && input.pool_exhausted);
  form.loaded = true;
  renderRows(); render();
}

function select(index) {
  entry.selected = index;
  for (const [i, li] of [...$("round-players").children].entries()) li.classList.toggle("selected", i === index);
  const row = entry.rows[index];
  $("keypad").hidden = !!row && row.mode === "hand";
  $("keypad-target").textContent = row ? t(row.mode === "hand" ? "round.typing_hand" : "round.typing_points", { player: row.name }) : "";
}

function renderRows() {
  const x = extras(), list = $("round-players");
  list.replaceChildren(...entry.rows.map((row, index) => {
    const seat = app.state.setup.players.indexOf(row.name);
    const points = el("input", { class: "points", inputmode: "none", autocomplete: "off", maxlength: "4",
      "aria-label": t("round.points_label", { player: row.name }), value: row.points,
      on: { input: (ev) => { row.points = ev.target.value.replace(/\D/g, "").slice(0, 4); ev.target.value = row.points; changed(); },
        focus: () => select(index) } });
    // cards are letters and digits: the phone's own keyboard, and the number keys step aside
    const hand = el("input", { class: "hand", inputmode: "text", enterkeyhint: "next", autocomplete: "off", autocapitalize: "characters", spellcheck: "false",
      maxlength: "200", placeholder: "R3 R4 JK", "aria-label": t("round.hand_label", { player: row.name }), value: row.hand,
      on: { input: (ev) => { row.hand = ev.target.value; changed(); }, focus: () => select(index) } });
    const li = el("li", { class: `entry-row ${row.mode}-mode`, "data-player": row.name, style: { "--pc": colour(seat) },
      on: { click: (ev) => { if (!ev.target.closest("button, input, select, label")) select(index); } } },
    el("span", { class: "name", text: row.name }),
    el("button", { type: "button", class: "out-toggle", "aria-pressed": String(row.out), text: t("round.went_out"),
      "aria-label": t("round.went_out_label", { player: row.name }), on: { click: () => { toggleOut(index); } } }),
    el("span", { class: "value" }, row.mode === "hand" ? hand : points,
      el("span", { class: "went-out", text: t("round.went_out_short") })),
    el("button", { type: "button", class: "mode-toggle quiet", text: t(row.mode === "hand" ? "round.use_points" : "round.use_hand"),
      "aria-label": t(row.mode === "hand" ? "round.use_points_label" : "round.use_hand_label", { player: row.name }),
      on: { click: () => { row.mode = row.mode === "hand" ? "points" : "hand"; renderRows(); select(index);
        list.children[index].querySelector("input").focus(); changed(); } } }));
    if (x.melds) li.append(el("label", { class: "melds-field" }, el("span", { text: t("round.melds") }),
      el("input", { class: "melds-input", inputmode: "text", autocomplete: "off", autocapitalize: "characters", spellcheck: "false",
        maxlength: "300", placeholder: "R1 R2 R3 | K5 K6 K7", value: row.melds,
        "aria-label": t("round.melds_label", { player: row.name }),
        on: { input: (ev) => { row.melds = ev.target.value; changed(); }, focus: () => select(index) } })));
    const flags = [...x.anyone_flags, ...(row.out ? x.winner_flags : [])];
    if (flags.length || (x.win_kinds.length && row.out) || (x.last_discard && row.out)) {
      const box = el("div", { class: "flags" });
      for (const flag of flags) box.append(el("label", { class: "check" },
        el("input", { type: "checkbox", checked: row.flags[flag] ? true : null, "data-flag": flag,
          on: { change: (ev) => { row.flags[flag] = ev.target.checked; changed(); } } }),
        el("span", { text: t(`round.flag.${flag}`) })));
      if (x.win_kinds.length && row.out) box.append(el("label", {}, el("span", { text: t("round.win") + " " }),
        el("select", { on: { change: (ev) => { row.win = ev.target.value; changed(); } } },
          ...["", ...x.win_kinds].map((w) => el("option", { value: w, selected: row.win === w ? true : null,
            text: w ? t(`round.win.${w}`) : t("round.win.any") })))));
      if (x.last_discard && row.out) box.append(el("label", {}, el("span", { text: t("round.last_discard") + " " }),
        el("input", { class: "discard-input", inputmode: "text", maxlength: "8", autocomplete: "off", autocapitalize: "characters", size: "5",
          placeholder: "JK", value: row.discard, on: { input: (ev) => { row.discard = ev.target.value.trim(); changed(); } } })));
      li.append(box);
    }
    li.classList.toggle("out", row.out);
    return li;
  }));
  $("round-exhausted").checked = entry.exhausted;
  select(Math.min(entry.selected, entry.rows.length - 1));
}

function toggleOut(index) {
  const row = entry.rows[index], now = !row.out;
  for (const other of entry.rows) other.out = false;
  row.out = now;
  if (now) entry.exhausted = false;
  if (now && entry.selected === index) entry.selected = entry.rows.findIndex((r, i) => i !== index && !r.out);
  renderRows(); changed();
}

// The body of POST rounds (RoundEntry) without who, as far as it is filled in; missing: the
// players still without a rack.
function body() {
  const x = extras(), missing = [];
  const players = entry.rows.map((row) => {
    const player = { name: row.name };
    if (row.out) player.out = true;
    if (!row.out || row.mode === "hand" && row.hand.trim()) {
      if (row.mode === "hand") {
        if (row.hand.trim()) player.hand = row.hand.trim().toUpperCase().replace(/\s+/g, " ");
        else if (!row.out) missing.push(row.name);
      } else if (row.points !== "") player.points = parseInt(row.points, 10);
      else missing.push(row.name);
    }
    if (x.melds && row.melds.trim()) player.melds = row.melds.trim().toUpperCase();
    for (const [flag, on] of Object.entries(row.flags))
      if (on && (x.anyone_flags.includes(flag) || row.out && x.winner_flags.includes(flag))) player[flag] = true;
    if (x.win_kinds.length && row.out && row.win) player.win = row.win;
    if (x.last_discard && row.out && row.discard) player.last_discard = row.discard.toUpperCase();
    return player;
  });
  const data = { players };
  if (entry.exhausted) data.pool_exhausted = true;
  const noEnd = !entry.exhausted && !entry.rows.some((r) => r.out);
  return { data, missing, noEnd };
}

function changed() {
  lastPreview = null;
  render();
  clearTimeout(previewTimer);
  previewTimer = setTimeout(preview, 250);
}

async function preview() {
  if (!entry) return;  // saved (or left) since the keys were pressed
  const { data, missing, noEnd } = body();
  if (missing.length || noEnd) return;
  const seq = ++previewSeq;
  try {
    const answer = await send("POST", `/api/matches/${app.matchId}/rounds/preview`, { who: who(), ...data });
    if (seq === previewSeq) { lastPreview = { result: answer.result }; render(); }
  } catch (error) {
    if (seq !== previewSeq) return;
    lastPreview = error instanceof Refused ? { refused: error.detail } : { offline: true };
    render();
  }
}

function render() {
  if (!entry || !app.state) return;
  const n = entry.round;
  $("round-title").textContent = n ? t("round.edit_title", { n }) : t("round.new_title", { n: nextNumber() });
  const save = $("round-save");
  save.textContent = n ? t("round.save_edit", { n }) : t("round.save", { n: nextNumber() });
  const { missing, noEnd } = body(), box = $("round-preview");
  const over = result().over && !n;
  let ready = !missing.length && !noEnd && !over && entry.loaded;
  if (over) box.replaceChildren(el("p", { class: "problem", text: t("round.match_over") }));
  else if (noEnd) box.replaceChildren(el("p", { class: "hint", text: t("round.need_out") }));
  else if (missing.length) box.replaceChildren(el("p", { class: "hint", text: t("round.missing", { players: missing.join(", ") }) }));
  else if (!lastPreview) box.replaceChildren(el("p", { class: "hint", text: t("round.previewing") }));
  else if (lastPreview.offline) box.replaceChildren(el("p", { class: "hint", text: t("round.preview_offline") }));
  else if (lastPreview.refused) { box.replaceChildren(el("p", { class: "problem", text: lastPreview.refused })); ready = false; }
  else box.replaceChildren(...previewView(lastPreview.result));
  save.disabled = !ready;
  renderQueue();
}

function previewView(scored) {
  const penalty = result().penalty, totals = (app.state.match || {}).totals || {};
  const edited = entry.round ? app.state.rounds[entry.round - 1].scores : {};
  const rows = Object.entries(scored.scores || {}).map(([name, points]) => {
    const after = (totals[name] ?? 0) - (edited[name] ?? 0) + points;
    return el("li", { "data-player": name, class: name === scored.winner ? "winner" : null,
      style: { "--pc": colour(app.state.setup.players.indexOf(name)) } },
    el("span", { class: "name", text: name }),
    el("span", { class: "value", "data-points": String(points),
      text: penalty ? t("round.penalty_points", { n: -points }) : signed(points) }),
    el("span", { class: "after muted", text: t("round.total_after", { n: penalty ? -after : after }) }));
  });
  const parts = [el("h3", { text: scored.winner ? t("round.preview_winner", { winner: scored.winner }) : t("round.preview_title") }),
    el("ul", { class: "preview-list" }, ...rows)];
  if (scored.doubled) parts.push(el("p", { class: "doubled", text: t("round.doubled") }));
  for (const problem of scored.problems || []) parts.push(el("p", { class: "problem", text: "⚠ " + problem }));
  return parts;
}

async function saveRound() {
  const { data } = body(), n = entry.round;
  const path = n ? `/api/matches/${app.matchId}/rounds/${n}` : `/api/matches/${app.matchId}/rounds`;
  const number = n || nextNumber();
  clearTimeout(previewTimer);
  $("round-save").disabled = true;
  try {
    const sent = await sendOrQueue(n ? "PUT" : "POST", path, { who: who(), ...data },
      { match: app.matchId, kind: "round", round: number, edit: !!n, players: data.players.map((p) => p.name) });
    entry = null;
    toast(sent.queued ? t("round.queued", { n: number }) : t(n ? "round.edited" : "round.saved", { n: number }));
    if (sent.queued) openRound(); else go("/");
  } catch (error) {
    toast(error instanceof Refused ? error.message : t("error.network"));
    render();
  }
}

// Rounds waiting to be sent (entered offline), here and on the scores view.
export function renderQueue() {
  const waiting = queue().filter((e) => e.match === app.matchId);
  $("round-queue").hidden = !waiting.length;
  $("round-pending").replaceChildren(...waiting.map((e) => el("li", { class: e.error ? "failed" : "pending", "data-key": e.key },
    el("span", { class: "line", text: (e.edit ? t("round.pending_edit", { n: e.round }) : t("round.pending", { n: e.round })) +
      (e.error ? ` — ${t("round.pending_refused", { why: e.error })}` : "") }),
    e.error ? el("button", { type: "button", class: "quiet", text: t("round.discard"), on: { click: () => discard(e.key) } }) : null)));
  const note = $("pending");
  note.hidden = !waiting.length;
  note.textContent = waiting.length ? t("scores.pending", { n: waiting.length }) : "";
}

export function initRound() {
  $("keypad").addEventListener("click", (event) => {
    const key = event.target.closest("button[data-key]");
    if (!key || !entry) return;
    const row = entry.rows[entry.selected];
    if (key.dataset.key === "next") {
      const next = entry.rows.findIndex((r, i) => i > entry.selected && !r.out);
      if (next >= 0) select(next); else $("round-save").focus();
      return;
    }
    if (!row || row.out || row.mode !== "points") return;
    row.points = key.dataset.key === "back" ? row.points.slice(0, -1) : (row.points + key.dataset.key).replace(/^0+(?=\d)/, "").slice(0, 4);
    $("round-players").children[entry.selected].querySelector("input.points").value = row.points;
    changed();
  });
  $("round-players").addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !event.target.matches("input.points, input.hand")) return;
    event.preventDefault();
    const before = entry.selected;
    $("keypad").querySelector('[data-key="next"]').click();
    if (entry.selected !== before) $("round-players").children[entry.selected].querySelector("input").focus();
  });
  $("round-exhausted").addEventListener("change", (event) => {
    entry.exhausted = event.target.checked;
    if (entry.exhausted) for (const row of entry.rows) row.out = false;
    renderRows(); changed();
  });
  $("round-save").addEventListener("click", saveRound);
  onQueueChange(() => { if (entry) render(); else renderQueue(); });
  flush();
}

// The page's language changed: the form's own words too (what was typed stays).
export function relabelRound() {
  if (entry && app.state) { renderRows(); render(); }
}

// A new state: the form follows the match's players, and the numbers shown follow the rounds.
export function roundState() {
  if (entry || $("view-round").classList.contains("shown")) openRound(); else renderQueue();
}
