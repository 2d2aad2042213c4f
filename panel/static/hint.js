// "What can I play?": the best play for a rack typed here or shown at a seat, with the table
// after it and the new or changed melds marked.
import { $, app, el, Refused, send } from "./core.js";
import { t } from "./i18n.js";

const meldText = (meld) => (typeof meld === "string" ? meld : (meld && meld.meld) || "");
export function itemClass(token) {
  return token.startsWith("JK") ? "JK" : /^[RBOK]\d/.test(token) ? token[0] : token.slice(-1);
}

export function renderHintSeats() {
  const racks = (app.state.racks || []).filter((r) => r.items && r.items.length && !r.out);
  const select = $("hint-seat"), chosen = select.value;
  select.replaceChildren(el("option", { value: "", text: "—" }),
    ...racks.map((r) => el("option", { value: String(r.seat), text: `${r.player}: ${r.items.join(" ")}` })));
  select.value = racks.some((r) => String(r.seat) === chosen) ? chosen : "";
  $("hint-seat-label").hidden = !racks.length;
}

function show(answer) {
  const box = $("hint-result"), placed = answer.placed || [];
  if (!placed.length) {
    box.replaceChildren(el("p", { class: "hint-none", text: t("hint.nothing") }));
    return;
  }
  const fresh = new Set(answer.new || []);
  const facts = [t("hint.value", { n: answer.value })];
  if (answer.initial) facts.push(answer.meets_initial ? t("hint.opens") : t("hint.not_enough"));
  if (answer.optimal === false) facts.push(t("hint.not_proven"));
  box.replaceChildren(
    el("p", { class: "hint-play" }, el("strong", { text: t("hint.lay", { items: placed.join(" ") }) })),
    el("p", { class: "muted", text: facts.join(" · ") }),
    el("div", { class: "melds hint-melds" }, ...(answer.melds || []).map((meld, index) => {
      const isNew = fresh.has(index);
      return el("div", { class: `meld valid${isNew ? " new" : ""}`, "data-new": String(isNew) },
        ...meldText(meld).split(" ").filter(Boolean).map((token) =>
          el("span", { class: `item ${itemClass(token)}${placed.includes(token) ? " placed" : ""}`, text: token })),
        isNew ? el("span", { class: "badge", text: t("hint.new") }) : null);
    })));
}

export function initHint() {
  $("hint-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const rack = $("hint-rack").value.trim(), seat = $("hint-seat").value;
    if (!rack && seat === "") { $("hint-result").replaceChildren(el("p", { class: "hint", text: t("hint.need_rack") })); return; }
    const button = $("hint-go");
    button.disabled = true;
    $("hint-result").replaceChildren(el("p", { class: "hint", text: t("hint.thinking") }));
    try {
      const body = rack ? { rack: rack.toUpperCase(), seat: null } : { rack: null, seat: parseInt(seat, 10) };
      show(await send("POST", `/api/matches/${app.matchId}/hint`, body));
    } catch (error) {
      $("hint-result").replaceChildren(el("p", { class: "problem",
        text: error instanceof Refused ? error.detail : t("error.network") }));
    } finally {
      button.disabled = false;
    }
  });
}
