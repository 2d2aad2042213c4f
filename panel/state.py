"""A match's state as a replay of its logged events.

Nothing here is stored: :func:`replay` reads the events in log order and
builds what the panel shows.  The game's events are those of CONTRACT.md
(``table``, ``warning``, ``round_scored``) and the live game's (``turn_started``,
``initial_meld_progress``, ``match_over``, ...).  The panel adds its own
(:mod:`tabletop.panel.events`), each with ``who`` and ``at`` (wall-clock seconds);
every logged event is read back into its value (:func:`logged_event`) and folded:

* ``setup``: variant, options, players (seat order), dealer, rounds_limit,
  target, turn_seconds; a later setup replaces an earlier one.
* ``calibration``: status (``none``, ``ok``, ...) and an optional note.
* ``item_corrected``: meld index, item index and the right token for the
  table as it stands; a later ``table`` event from the camera supersedes it.
* ``score_edited``: a round's scores replaced (round numbers count from 1).  One
  scored again by the engine (``PUT /api/matches/{id}/rounds/{n}``) also carries
  ``winner``, ``details`` and ``input``, which replace the round's; one that only
  gives numbers keeps the winner and drops the explanation, which no longer fits.
* ``match_closed``: the players ended the match here (a camera run quit half-way, an
  evening over before its target): it is over, won by the one leading (none on a tie).
* ``undo``: ``target`` is the log id of the event taken back.  Undo never
  deletes: the event stays in the log and the replay skips it.  An undo
  itself is not undone (a taken-back event is re-published instead).

A ``round_scored`` entered by hand (``POST /api/matches/{id}/rounds``, ``manual``)
is scored by the engine like the live game's, and carries ``winner``, ``details``,
``extras`` (the engine's variant-specific results, e.g. American Rummy's collected
points) and ``input`` (the entry, so the page can show and edit it).

Round scores go through :class:`tabletop.engine.match.Match`, so a match's totals,
end and winner follow the variant's match rules.  ``state["result"]`` says whether
the match is over, who won and how far each player is toward its end; a live game's
``match_over`` ends it too (the game may have had a rounds limit the setup does not
name), with the game's winner.

Feed entries carry what a sentence about them needs: ``player`` (the seat's name),
for ``meld_laid``, ``item_added`` and ``joker_exchanged`` the meld's ``value`` as
the variant counts it (null for an illegal meld), and for a ``meld_laid`` of a seat
that has not opened in this round, ``opening``: the value laid toward the initial
meld in this turn so far and the ``required`` minimum.  A panel event that its kind's
shape does not fit is skipped and named among the problems, like a game event.

Where the live game stands is what its events tell, folded by the engine's
:class:`tabletop.engine.record.GameRecord` as the live game folds them too
(``state["live"]``; the service adds whether a live table is attached): ``phase`` is
``play`` from a ``turn_started`` (and after a ``round_scored``, as the next round
starts), ``counting`` from a ``player_out`` and ``over`` from a ``match_over`` or a
``match_closed``; the game's own ``undo`` goes back to where it names (its table, phase,
rounds scored and seat on turn; later rounds are dropped, as the game dropped them).
``opened``: the seats that have made their initial meld in the round now on.  A game
event is read as the engine's value (``seq`` and ``t`` may be left out by a game in
another process); one that is not is skipped and named among the problems.
``paused``: a ``timer_paused`` not yet followed by ``timer_resumed`` or the
next turn.  The turn's ``since`` (wall-clock seconds the turn timer counts
from) moves on by each pause's length, and ``paused_at`` says when the
running pause began, so the page shows the time left frozen.  ``racks``: in
the counting phase, each player's hand as shown (by the camera or typed on
the panel).  ``scored_round``: the round the page shows as just scored, from
its ``round_scored`` until the first turn of the next round ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tabletop.engine.base import Variant
from tabletop.engine.events import (
    EVENT_TYPES,
    Event,
    HandShown,
    InitialMeldProgress,
    MatchOver,
    RoundScored,
    Table,
    TimerPaused,
    TimerResumed,
    TurnStarted,
    Undo,
    event_from_json,
)
from tabletop.engine.items import format_items, parse_items
from tabletop.engine.match import Match
from tabletop.engine.record import GameFacts, GameRecord, MatchClosed
from tabletop.engine.rounds import RoundResult
from tabletop.engine.variants import find_variant
from tabletop.panel.events import (
    CalibrationNoted,
    ItemCorrected,
    MatchClosedOnPanel,
    MatchSetUp,
    PanelEvent,
    PanelEventValue,
    ScoreEdited,
    is_panel_event,
    panel_event_from_json,
)
from tabletop.panel.store import StoredEvent

DEFAULT_VARIANT = "sabra"
DEFAULT_TURN_SECONDS = 120
"""Sabra's usual limit: "Jeder Spieler hat pro Zug ... zwei Minuten" as players keep it."""
FEED_LENGTH = 12


@dataclass
class _Replay:
    record: GameRecord = field(default_factory=GameRecord)
    """The game's facts (phase, turn, who opened, hands, rounds, end), folded by the engine."""
    setup: MatchSetUp = field(default_factory=lambda: MatchSetUp(players=()))
    calibration: dict[str, Any] = field(default_factory=lambda: {"status": "none"})
    melds: list[str] = field(default_factory=list)
    table_t: float | None = None
    boxes: list[Any] | None = None
    since: float = 0.0
    """Wall-clock seconds the turn on is timed from (moved on by each pause's length)."""
    paused_at: float | None = None
    turn_t: Any = None
    """The turn's start in the game's seconds, as its event gave it."""
    rounds: list[dict[str, Any]] = field(default_factory=list)
    """The rounds as the page lists them (the panel's entries and edits beside the scores)."""
    feed: list[dict[str, Any]] = field(default_factory=list)
    corrections: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    match_over: dict[str, Any] | None = None
    """The ``match_over`` event as logged, while the game's match is over."""
    closed: dict[str, Any] | None = None
    """The ``match_closed`` event that ended the match on the panel, if any."""
    last_id: int = 0
    last_effective: int | None = None
    variant: Variant | None = None
    """The setup's variant (None: no setup yet, or one the engine cannot make)."""
    opening_value: int = 0
    """What the seat on turn has laid toward its initial meld in this turn so far."""

    @property
    def facts(self) -> GameFacts:
        return self.record.facts


def undone_ids(events: Iterable[StoredEvent]) -> set[int]:
    """The log ids taken back on the panel (:class:`LogUndone`)."""
    undone: set[int] = set()
    for stored in events:
        if stored.type == "undo" and isinstance(stored.event.get("target"), int):
            undone.add(int(stored.event["target"]))
    return undone


def logged_event(stored: StoredEvent) -> Event | PanelEventValue:
    """A logged event as its value: one of the panel's own, else the game's
    (:func:`game_event`); :class:`~tabletop.engine.events.EventError` when it has
    neither shape."""
    if is_panel_event(stored.event):
        return panel_event_from_json(stored.event)
    return game_event(stored)


def last_undoable(events: list[StoredEvent]) -> StoredEvent | None:
    """The latest event that is neither an undo nor already undone."""
    undone = undone_ids(events)
    for stored in reversed(events):
        if stored.type != "undo" and stored.id not in undone:
            return stored
    return None


def replay(
    events: list[StoredEvent], *, turn_seconds: int = DEFAULT_TURN_SECONDS
) -> dict[str, Any]:
    """The JSON state the panel shows, from a match's events in log order."""
    undone = undone_ids(events)
    state = _Replay()
    for stored in events:
        state.last_id = stored.id
        if stored.id in undone:
            continue
        if stored.type != "undo":
            state.last_effective = stored.id
        try:
            _apply(state, stored)
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            # A malformed event (from a game in another process) must not stop the panel.
            state.problems.append(f"event {stored.id} ({stored.type}) skipped: {error}")
    return _summarise(state, turn_seconds)


def _apply(state: _Replay, stored: StoredEvent) -> None:
    event = stored.event
    kind = stored.type
    if is_panel_event(event) or kind in EVENT_TYPES:
        match logged_event(stored):
            case PanelEvent() as panel_event:
                state.corrections.append({
                    "id": stored.id, "type": kind, "who": panel_event.who,
                    "at": stored.recorded_at if panel_event.at is None else panel_event.at,
                })
                _apply_panel(state, panel_event, stored.recorded_at)
            case game_event_:
                _apply_game(state, stored, game_event_)
    if kind not in ("table", "turn_started", "turn_ended", "initial_meld_progress"):
        entry = {"id": stored.id, "recorded_at": stored.recorded_at, **event}
        if kind in ("meld_laid", "item_added", "joker_exchanged"):
            entry.update(_meld_play(state, event))
        state.feed.append(entry)
        del state.feed[:-FEED_LENGTH]


def game_event(stored: StoredEvent) -> Event:
    """A logged game event as the engine's value.  One posted from another process may
    leave out ``seq`` and ``t`` (the log's id and 0 stand in); anything else it lacks
    makes it unreadable (:class:`tabletop.engine.events.EventError`)."""
    return posted_event(stored.event, stored.id)


def posted_event(posted: Mapping[str, Any], seq: int) -> Event:
    """A game event as a program posted it, read as the engine's value: ``seq`` (else the
    one given) and ``t`` (else 0) may be left out; :class:`EventError` otherwise."""
    raw = dict(posted)
    raw["seq"] = raw.get("seq") or seq
    if raw.get("t") is None:
        raw["t"] = 0.0
    raw.setdefault("seat", None)
    return event_from_json(raw)


def _apply_panel(state: _Replay, event: PanelEvent, recorded_at: float) -> None:
    """One of the panel's own events (see the module); a :class:`LogUndone` has done its
    work already, in :func:`undone_ids`."""
    match event:
        case MatchSetUp():
            state.setup = event
            state.variant = _setup_variant(event)
        case CalibrationNoted(status=status, note=note):
            state.calibration = {"status": status, "note": note}
        case ItemCorrected():
            _correct_item(state, event)
        case ScoreEdited():
            _edit_score(state, event)
        case MatchClosedOnPanel(who=who, at=at):
            state.closed = {"who": who, "at": recorded_at if at is None else at}
            state.record.apply(MatchClosed())


def _apply_game(state: _Replay, stored: StoredEvent, event: Event) -> None:
    """One of the game's events: the engine's record takes it, the panel keeps what only
    the page needs (the table's boxes, the turn's wall-clock timer, the rounds' entries)."""
    before = state.facts
    facts = state.record.apply(event)
    match event:
        case Table(melds=melds, boxes=boxes):
            state.melds, state.table_t = list(melds), stored.event.get("t")
            state.boxes = stored.event.get("boxes") if boxes is not None else None
        case TurnStarted():
            _clock_on(state, stored)
        case TimerPaused() if before.turn is not None:
            state.paused_at = stored.recorded_at
        case TimerResumed() if before.turn is not None and state.paused_at is not None:
            state.since += stored.recorded_at - state.paused_at
            state.paused_at = None
        case InitialMeldProgress(value=value):
            state.opening_value = value
        case RoundScored():
            state.rounds.append(_round_entry(stored))
        case MatchOver():
            state.match_over = dict(stored.event)
        case Undo():
            state.melds = list(facts.table)
            del state.rounds[facts.rounds_played:]
            if facts.turn is not None:
                _clock_on(state, stored)
    if facts.match_over is None:
        state.match_over = None


def _clock_on(state: _Replay, stored: StoredEvent) -> None:
    """A turn starts (or, after an undo, starts again): its timer runs from now."""
    state.since, state.paused_at = stored.recorded_at, None
    state.turn_t = stored.event.get("t")
    state.opening_value = 0


def _round_entry(stored: StoredEvent) -> dict[str, Any]:
    event = stored.event
    return {
        "scores": dict(event.get("scores", {})),
        "winner": event.get("winner"),
        "id": stored.id,
        "manual": bool(event.get("manual")),
        "details": _object_or_none(event.get("details")),
        "input": _object_or_none(event.get("input")),
        "edited_by": None,
        "extras": _object_or_none(event.get("extras")) or {},
    }


def _edit_score(state: _Replay, event: ScoreEdited) -> None:
    number = event.round
    if not 1 <= number <= len(state.rounds):
        state.problems.append(f"score_edited names round {number!r}, which was not played")
        return
    edited = {
        **state.rounds[number - 1],
        "scores": dict(event.scores),
        "edited_by": event.who,
    }
    if event.rescored:  # scored again by the engine: its result replaces all
        edited["winner"] = event.winner
        edited["details"] = _object_or_none(event.details)
        edited["input"] = _object_or_none(event.input)
        edited["extras"] = _object_or_none(event.extras) or {}
    else:  # numbers typed in: the engine's explanation no longer fits them
        edited.update(details=None, input=None, extras={})
    state.rounds[number - 1] = edited


def _rack(hand: HandShown | None) -> dict[str, Any]:
    if hand is None:
        return {"items": None, "value": None, "typed": False}
    return {"items": list(hand.items), "value": hand.value, "typed": bool(hand.typed)}


def _object_or_none(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, dict) else None


def _setup_variant(setup: MatchSetUp) -> Variant | None:
    try:
        return find_variant(setup.variant or DEFAULT_VARIANT, setup.options or {})
    except (ValueError, TypeError, AttributeError):
        return None  # reported by the summary


def _meld_play(state: _Replay, event: dict[str, Any]) -> dict[str, Any]:
    """What a sentence about a meld laid or extended needs: the meld's value, and for a
    meld laid by a seat that has not opened, the opening so far."""
    variant = state.variant or find_variant(DEFAULT_VARIANT)
    meld = _meld_json(variant, str(event.get("meld", "")))
    value = meld["value"] if meld["valid"] else None
    fields: dict[str, Any] = {"value": value}
    seat = event.get("seat")
    required = variant.initial_meld_required
    if (
        event.get("type") == "meld_laid"
        and variant.table_rules.opening
        and required > 0
        and isinstance(seat, int)
        and seat not in state.facts.opened
    ):
        state.opening_value += value or 0
        fields["opening"] = {"value": state.opening_value, "required": required}
    return fields


def _correct_item(state: _Replay, event: ItemCorrected) -> None:
    meld_index, item_index, token = event.meld, event.index, event.item
    try:
        melds = [list(parse_items(meld)) for meld in state.melds]
        replacement = parse_items(token)
        if len(replacement) != 1:
            raise ValueError(f"one item, not {token!r}")
        melds[meld_index][item_index] = replacement[0]
    except (ValueError, IndexError, TypeError) as error:
        state.problems.append(f"item correction {meld_index}/{item_index} -> {token!r}: {error}")
        return
    state.melds = [format_items(meld) for meld in melds]


def _meld_json(variant: Any, text: str) -> dict[str, Any]:
    try:
        items = parse_items(text)
        analysis = variant.analyse(items)
    except ValueError as error:
        return {"meld": text, "valid": False, "value": 0, "kind": None, "reason": str(error)}
    if not analysis.valid:
        return {"meld": text, "valid": False, "value": 0, "kind": None, "reason": analysis.reason}
    best = max(analysis.readings, key=variant.meld_value)
    return {
        "meld": text,
        "valid": True,
        "value": variant.meld_value(best),
        "kind": best.kind.value,
        "reason": None,
        "ambiguous": len(analysis.readings) > 1,
    }


def build_match(
    variant: Variant, setup: dict[str, Any], players: list[str], rounds: list[dict[str, Any]]
) -> tuple[Match | None, list[str], dict[str, list[int]]]:
    """The engine's match of ``players`` with the setup's end and the ``rounds`` (as the
    state lists them) recorded, the problems met (rounds that do not fit are left out)
    and each player's total after each round; no match for fewer than two players or a
    setup the match rules refuse."""
    problems: list[str] = []
    series: dict[str, list[int]] = {name: [0] for name in players}
    if len(players) < 2:
        return None, problems, series
    try:
        match = Match(
            variant,
            tuple(players),
            rounds_limit=setup.get("rounds_limit"),
            target=setup.get("target") if variant.match_rules.target is None else None,
            dealer=int(setup.get("dealer", 0)),
        )
    except ValueError as error:
        problems.append(str(error))
        return None, problems, series
    for number, played in enumerate(rounds, start=1):
        extras = played.get("extras") or {}
        try:
            match.record(RoundResult(played["scores"], played.get("winner"), extras=extras))
        except ValueError as error:
            problems.append(f"round {number}: {error}")
            continue
        for name in players:
            series[name].append(match.totals[name])
    return match, problems, series


def match_for(state: dict[str, Any], rounds: int | None = None) -> Match | None:
    """The match of a replayed ``state`` with its first ``rounds`` rounds (all: None)."""
    setup = state["setup"]
    variant = find_variant(setup["variant"], setup["options"])
    played = state["rounds"] if rounds is None else state["rounds"][:rounds]
    return build_match(variant, setup, list(setup["players"]), played)[0]


def _ended_by_rounds(state: _Replay, result: dict[str, Any]) -> dict[str, Any]:
    """The feed's line for a match its scored rounds ended (rounds entered on the panel:
    no game logged a ``match_over``), dated with the round that ended it."""
    last = state.rounds[-1]
    scored = next((entry for entry in state.feed if entry.get("id") == last.get("id")), {})
    return {
        "type": "match_over",
        "seat": None,
        "id": last.get("id"),
        "recorded_at": scored.get("recorded_at"),
        "winner": result["winner"],
        "totals": {name: row["total"] for name, row in result["progress"].items()},
        "from_rounds": True,
    }


def _result(
    variant: Variant,
    match: Match | None,
    match_over: dict[str, Any] | None,
    players: list[str],
    rounds: int,
    closed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Whether the match is over, who won, and how far each player is toward its end.

    ``share`` is the larger of the player's way to the target (penalty points toward
    the limit, in Wiener toward elimination) and the rounds played toward the rounds
    limit, 0 to 1.  A live game's ``match_over`` ends the match with the game's winner,
    as the game may have played to a rounds limit the setup does not name."""
    over = bool(match is not None and match.over)
    winner = match.winner if match is not None else None
    if match_over is not None:
        over = True
        told = match_over.get("winner")
        winner = told if isinstance(told, str) else None
    elif closed is not None and not over:
        over = True
        winner = _sole_leader(match)
    rules = variant.match_rules
    target = match.match_target if match is not None else None
    limit = match.rounds_limit if match is not None else None
    played = match.rounds_played if match is not None else rounds
    totals = match.totals if match is not None else {}
    penalty = variant.penalty_scoring
    progress: dict[str, dict[str, Any]] = {}
    for name in players:
        total = totals.get(name, 0)
        shares = []
        if rules.elimination is not None:
            shares.append(-total / rules.elimination)
        elif target:
            shares.append((-total if penalty else total) / target)
        if limit:
            shares.append(played / limit)
        share = max(shares) if shares else (1.0 if over else 0.0)
        progress[name] = {"total": total, "share": round(min(1.0, max(0.0, share)), 4)}
        if penalty:
            progress[name]["penalty"] = -total
    return {
        "over": over,
        "winner": winner,
        "target": target,
        "rounds_limit": limit,
        "elimination": rules.elimination,
        "rounds_played": played,
        "penalty": penalty,
        "progress": progress,
        "closed": closed,
    }


def _sole_leader(match: Match | None) -> str | None:
    """Who leads the match (totals are higher-is-better, penalty ones negative); None
    before any round or on a tie for the lead."""
    if match is None or not match.rounds_played:
        return None
    standings = match.standings()
    if len(standings) > 1 and standings[0][1] == standings[1][1]:
        return None
    return standings[0][0]


def _summarise(state: _Replay, default_turn_seconds: int) -> dict[str, Any]:
    setup = state.setup
    problems = list(state.problems)
    try:
        variant = find_variant(setup.variant or DEFAULT_VARIANT, setup.options or {})
    except ValueError as error:
        problems.append(str(error))
        variant = find_variant(DEFAULT_VARIANT)
    players = list(setup.players)
    if not players:
        for played in state.rounds:
            players += [name for name in played["scores"] if name not in players]
    setup_json = {
        "variant": variant.id,
        "variant_name": variant.name,
        "options": variant.options.as_dict(),
        "players": players,
        "dealer": setup.dealer or 0,
        "rounds_limit": setup.rounds_limit,
        "target": setup.target,
        "turn_seconds": setup.turn_seconds or default_turn_seconds,
    }
    match, match_problems, series = build_match(variant, setup_json, players, state.rounds)
    problems += match_problems
    result = _result(
        variant, match, state.match_over, players, len(state.rounds), state.closed
    )
    match_json: dict[str, Any] | None = None
    if match is not None:
        match_json = {**match.to_json(), "over": result["over"], "winner": result["winner"]}
    feed = [
        {**entry, "player": players[entry["seat"]]}
        if isinstance(entry.get("seat"), int) and 0 <= entry["seat"] < len(players)
        else entry
        for entry in reversed(state.feed)
    ]
    if result["over"] and state.match_over is None and state.closed is None and state.rounds:
        feed.insert(0, _ended_by_rounds(state, result))
    facts = state.facts
    turn: dict[str, Any] | None = None
    if facts.turn is not None:
        turn = {"seat": facts.turn.seat, "since": state.since, "t": state.turn_t,
                "paused_at": state.paused_at if facts.paused else None}
        if facts.turn.seat is not None and 0 <= facts.turn.seat < len(players):
            turn["player"] = players[facts.turn.seat]
    progress: dict[str, Any] | None = None
    if facts.progress is not None:
        seat = facts.progress.seat
        progress = {"seat": seat, "value": facts.progress.value,
                    "required": facts.progress.required}
        if seat is not None:
            progress["player"] = players[seat] if 0 <= seat < len(players) else None
    return {
        "setup": setup_json,
        "calibration": state.calibration,
        "table": {
            "t": state.table_t,
            "melds": [_meld_json(variant, meld) for meld in state.melds],
            "boxes": state.boxes,
        },
        "turn": turn,
        "initial_meld": progress,
        "rounds": [
            {"round": number, **played} for number, played in enumerate(state.rounds, start=1)
        ],
        "totals_series": series,
        "match": match_json,
        "result": result,
        "match_over": state.match_over,
        "live": {
            "phase": facts.phase,
            "paused": turn is not None and turn.get("paused_at") is not None,
        },
        "racks": [
            {
                "seat": seat,
                "player": name,
                "out": seat == facts.out_seat,
                **_rack(facts.hands.get(seat)),
            }
            for seat, name in enumerate(players)
        ]
        if facts.phase == "counting"
        else [],
        "scored_round": facts.just_scored,
        "opened": list(facts.opened_seats()),
        "feed": feed,
        "corrections": state.corrections[-FEED_LENGTH:][::-1],
        "problems": problems,
        "last_id": state.last_id,
        "undoable": state.last_effective,
    }
