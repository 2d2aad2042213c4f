// The event feed as sentences a player would say, and the explanation of a warning.
import { $, app, el, playerOf, result, signed } from "./core.js";
import { currentLang, has, t, variantName } from "./i18n.js";

const list = (items) => (items || []).join(" ");
// A round's scores; penalty games say them as the penalty points each took.
function scoresText(scores) {
  const penalty = app.state && result().penalty;
  const list = Object.entries(scores || {}).map(([name, v]) => `${name} ${penalty ? -v : signed(v)}`).join(", ");
  return penalty ? t("feed.penalties", { list }) : list;
}

// A warning's rule, from GET /api/variants/{id}/rules (title, explanation, quote), or null.
export function warningRule(code) {
  const rules = app.rules && app.rules.warnings;
  return (code && rules && rules[code]) || null;
}
function warningTitle(e) {
  const rule = warningRule(e.code);
  if (rule && rule.title) return rule.title;
  if (e.code && has(`warning.${e.code}`)) return t(`warning.${e.code}`);
  return e.message || t("warning.generic");
}

export function describe(e) {
  const player = playerOf(e), vars = { player, who: e.who || "", round: e.round ?? "" };
  switch (e.type) {
    case "meld_laid": {
      let line = t("feed.meld_laid", { ...vars, meld: e.meld });
      if (e.opening) line += t("feed.opening", { value: e.opening.value, required: e.opening.required });
      else if (e.value != null) line += t("feed.points", { n: e.value });
      return line;
    }
    case "item_added":
      return t("feed.item_added", { ...vars, items: list(e.items), meld: e.meld }) + (e.value != null ? t("feed.points", { n: e.value }) : "");
    case "joker_exchanged": return t("feed.joker_exchanged", { ...vars, items: list(e.items), meld: e.meld });
    case "table_rearranged": return t("feed.table_rearranged", vars);
    case "discard_taken": return t("feed.discard_taken", { ...vars, items: list(e.items) });
    case "item_discarded": return t("feed.item_discarded", { ...vars, item: e.item });
    case "player_out": return t(e.all_at_once ? "feed.player_out_all" : "feed.player_out", vars);
    case "pool_exhausted": return t("feed.pool_exhausted", vars);
    case "hand_shown": {
      const line = (e.items || []).length ? t("feed.hand_shown", { ...vars, items: list(e.items), n: e.value ?? 0 })
        : t("feed.hand_empty", vars);
      return line + (e.typed ? t("feed.typed") : "");
    }
    case "warning": return `⚠ ${player ? player + ": " : ""}${warningTitle(e)}` +
      (warningRule(e.code) && (e.items || []).length ? ` (${list(e.items)})` : "");
    case "round_scored": {
      const head = e.manual && e.who ? t("feed.round_entered", vars)
        : t(e.round ? "feed.round_scored" : "feed.round_scored_plain", vars);
      const winner = e.winner ? t("feed.round_winner", { winner: e.winner }) : "";
      return `${head}${winner ? " — " + winner : ""}: ${scoresText(e.scores)}`;
    }
    case "score_edited": return t("feed.score_edited", vars);
    case "match_closed": return t("feed.match_closed", vars);
    case "match_over": return e.winner ? t("feed.match_over", { winner: e.winner }) : t("feed.match_over_draw");
    case "undo": return e.who ? t("feed.undo_by", vars) : t("feed.undo_game", vars);
    case "timer_paused": return e.who ? t("feed.timer_paused_by", vars) : t("feed.timer_paused");
    case "timer_resumed": return e.who ? t("feed.timer_resumed_by", vars) : t("feed.timer_resumed");
    case "item_corrected": return t("feed.item_corrected", { ...vars, was: e.was || "?", item: e.item });
    case "reading_corrected":
      return t(e.meld ? "feed.reading_corrected_in" : "feed.reading_corrected", { was: e.was, item: e.item, meld: e.meld || "" });
    case "setup": return t("feed.setup", { ...vars, variant: nameOf(e.variant), players: (e.players || []).join(", ") });
    case "calibration": return t("feed.calibration", { ...vars, status: t(`calibration.${e.status}`) });
    default: return `${e.type.replace(/_/g, " ")} ${player}`.trim();
  }
}
function nameOf(id) {
  const variant = app.variants.find((v) => v.id === id);
  return variantName(id, variant ? variant.name : id);
}

export function feedItem(e) {
  const li = el("li", { class: e.type, "data-type": e.type }, el("span", { class: "line", text: describe(e) }));
  if (e.type === "warning") {
    li.append(el("button", { type: "button", class: "explain-button", text: t("feed.explain"),
      "aria-label": t("feed.explain_label", { what: warningTitle(e) }), on: { click: () => explain(e) } }));
  }
  return li;
}

export function explain(e) {
  const rule = warningRule(e.code);
  $("explain-title").textContent = rule ? rule.title : warningTitle(e);
  $("explain-text").textContent = rule ? rule.explanation : (e.message || "");
  // the rule's own sentence is German: open on a German page, a tap away on the others
  const original = $("explain-original"), quoted = !!(rule && rule.quote);
  original.hidden = !quoted;
  original.open = quoted && currentLang() === "de";
  $("explain-quote").textContent = quoted ? `„${rule.quote}“` : "";
  const source = $("explain-source");
  source.hidden = !quoted;
  source.textContent = quoted ? t("explain.source", { source: nameOf(app.state.setup.variant) }) : "";
  $("explain").showModal();
}
