"""A match's state as a replay of its logged events.

Nothing here is stored: :func:`replay` reads the events in log order and
builds what the panel shows.  The game's events are those of CONTRACT.md
(``table``, ``warning``, ``round_scored``) and the live game's (``turn_started``,
``initial_meld_progress``, ``match_over``, ...).  The panel adds its own, each
with ``who`` and ``at`` (wall-clock seconds):

* ``setup``: variant, options, players (seat order), dealer, rounds_limit,
  target, turn_seconds; a later setup replaces an earlier one.
* ``calibration``: status (``none``, ``ok``, ...) and an optional note.
* ``item_corrected``: meld index, item index and the right token for the
  table as it stands; a later ``table`` event from the camera supersedes it.
* ``score_edited``: a round's scores replaced (round numbers count from 1).
* ``undo``: ``target`` is the log id of the event taken back.  Undo never
  deletes: the event stays in the log and the replay skips it.  An undo
  itself is not undone (a taken-back event is re-published instead).

Round scores go through :class:`tabletop.engine.match.Match`, so a match's totals,
end and winner follow the variant's match rules.

Where the live game stands, from its events alone (``state["live"]``; the
service adds whether a live table is attached): ``phase`` is ``play`` from a
``turn_started`` (and after a ``round_scored``, as the next round starts),
``counting`` from a ``player_out`` and ``over`` from a ``match_over``; the
game's own ``undo`` names the phase it returns to and how many rounds are
scored by then (later rounds are dropped, as the game dropped them).
``paused``: a ``timer_paused`` not yet followed by ``timer_resumed`` or the
next turn.  The turn's ``since`` (wall-clock seconds the turn timer counts
from) moves on by each pause's length, and ``paused_at`` says when the
running pause began, so the page shows the time left frozen.  ``racks``: in
the counting phase, each player's hand as shown (by the camera or typed on
the panel).  ``scored_round``: the round the page shows as just scored, from
its ``round_scored`` until the first turn of the next round ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tabletop.engine.items import format_items, parse_items
from tabletop.engine.match import Match
from tabletop.engine.rounds import RoundResult
from tabletop.engine.variants import find_variant
from tabletop.panel.store import StoredEvent

DEFAULT_VARIANT = "sabra"
DEFAULT_TURN_SECONDS = 120
"""Sabra's usual limit: "Jeder Spieler hat pro Zug ... zwei Minuten" as players keep it."""
FEED_LENGTH = 12
CORRECTION_TYPES = ("setup", "calibration", "item_corrected", "score_edited", "undo")


@dataclass
class _Replay:
    setup: dict[str, Any] = field(default_factory=dict)
    calibration: dict[str, Any] = field(default_factory=lambda: {"status": "none"})
    melds: list[str] = field(default_factory=list)
    table_t: float | None = None
    boxes: list[Any] | None = None
    turn: dict[str, Any] | None = None
    progress: dict[str, Any] | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)
    feed: list[dict[str, Any]] = field(default_factory=list)
    corrections: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    match_over: dict[str, Any] | None = None
    phase: str = "play"
    racks: dict[int, dict[str, Any]] = field(default_factory=dict)
    out_seat: int | None = None
    scored_round: int | None = None
    last_id: int = 0
    last_effective: int | None = None


def undone_ids(events: Iterable[StoredEvent]) -> set[int]:
    """The log ids taken back by ``undo`` events."""
    undone: set[int] = set()
    for stored in events:
        if stored.type == "undo" and isinstance(stored.event.get("target"), int):
            undone.add(int(stored.event["target"]))
    return undone


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
    # the game's own undo (a button press, logged through the bus) names no target
    game_undo = kind == "undo" and "target" not in event
    if kind in CORRECTION_TYPES and not game_undo:
        state.corrections.append(
            {
                "id": stored.id,
                "type": kind,
                "who": event.get("who"),
                "at": event.get("at", stored.recorded_at),
            }
        )
    if kind == "setup":
        state.setup = dict(event)
    elif kind == "calibration":
        state.calibration = {"status": event.get("status", "none"), "note": event.get("note")}
    elif kind == "table":
        state.melds = [str(meld) for meld in event.get("melds", [])]
        state.table_t = event.get("t")
        boxes = event.get("boxes")
        state.boxes = boxes if isinstance(boxes, list) else None
    elif kind == "item_corrected":
        _correct_item(state, event)
    elif kind == "turn_started":
        _turn_on(state, stored)
    elif kind == "turn_ended":
        state.turn = None
        state.progress = None
        state.scored_round = None
    elif kind == "timer_paused" and state.turn is not None:
        state.turn["paused_at"] = stored.recorded_at
    elif kind == "timer_resumed" and state.turn is not None and state.turn["paused_at"] is not None:
        state.turn["since"] += stored.recorded_at - state.turn["paused_at"]
        state.turn["paused_at"] = None
    elif kind == "player_out":
        state.phase, state.out_seat, state.turn = "counting", event.get("seat"), None
    elif kind == "hand_shown":
        state.racks[int(event["seat"])] = {
            "items": [str(item) for item in event.get("items", [])],
            "value": event.get("value"),
            "typed": bool(event.get("typed")),
        }
    elif game_undo:
        _game_undo(state, stored)
    elif kind == "initial_meld_progress":
        state.progress = {
            "seat": event.get("seat"),
            "value": event.get("value"),
            "required": event.get("required"),
        }
    elif kind == "round_scored":
        state.rounds.append(
            {
                "scores": dict(event.get("scores", {})),
                "winner": event.get("winner"),
                "id": stored.id,
            }
        )
        state.turn = None
        state.progress = None
        _round_closed(state, "play")
        state.scored_round = len(state.rounds)
    elif kind == "score_edited":
        number = event.get("round")
        if isinstance(number, int) and 1 <= number <= len(state.rounds):
            state.rounds[number - 1] = {
                **state.rounds[number - 1],
                "scores": dict(event.get("scores", {})),
                "edited_by": event.get("who"),
            }
        else:
            state.problems.append(f"score_edited names round {number!r}, which was not played")
    elif kind == "match_over":
        state.match_over = dict(event)
        state.phase, state.turn = "over", None
    if kind not in ("table", "turn_started", "turn_ended", "initial_meld_progress"):
        state.feed.append({"id": stored.id, "recorded_at": stored.recorded_at, **event})
        del state.feed[:-FEED_LENGTH]


def _turn_on(state: _Replay, stored: StoredEvent) -> None:
    """A turn starts (or, after an undo, starts again): its timer runs from now."""
    state.turn = {
        "seat": stored.event.get("seat"),
        "since": stored.recorded_at,
        "t": stored.event.get("t"),
        "paused_at": None,
    }
    state.progress = None
    _round_closed(state, "play")


def _round_closed(state: _Replay, phase: str) -> None:
    """Leaving the counting phase: the racks shown belong to the round that ended."""
    state.phase = phase
    if phase != "counting":
        state.racks, state.out_seat = {}, None


def _game_undo(state: _Replay, stored: StoredEvent) -> None:
    """The game took back its last change: its table, phase and rounds are as the event
    says, and a turn on is timed afresh.  Back in counting, it shows the hands again."""
    event = stored.event
    state.melds = [str(meld) for meld in event.get("melds", [])]
    phase = str(event.get("phase", state.phase))
    rounds = event.get("rounds")
    if isinstance(rounds, int) and rounds < len(state.rounds):
        del state.rounds[rounds:]
    if state.scored_round is not None and state.scored_round > len(state.rounds):
        state.scored_round = None
    if phase != "over":
        state.match_over = None
    if phase == "play":
        _turn_on(state, stored)
        return
    state.turn, state.progress = None, None
    _round_closed(state, phase)
    state.racks = {}  # back in counting, the game shows each hand again


def _correct_item(state: _Replay, event: dict[str, Any]) -> None:
    meld_index, item_index, token = event.get("meld"), event.get("index"), event.get("item")
    try:
        melds = [list(parse_items(meld)) for meld in state.melds]
        replacement = parse_items(str(token))
        if len(replacement) != 1:
            raise ValueError(f"one item, not {token!r}")
        melds[int(meld_index)][int(item_index)] = replacement[0]  # type: ignore[arg-type]
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


def _summarise(state: _Replay, default_turn_seconds: int) -> dict[str, Any]:
    setup = state.setup
    variant_id = str(setup.get("variant", DEFAULT_VARIANT))
    problems = list(state.problems)
    try:
        variant = find_variant(variant_id, setup.get("options") or {})
    except ValueError as error:
        problems.append(str(error))
        variant = find_variant(DEFAULT_VARIANT)
    players = [str(name) for name in setup.get("players", [])]
    if not players:
        for played in state.rounds:
            players += [name for name in played["scores"] if name not in players]
    match_json: dict[str, Any] | None = None
    series: dict[str, list[int]] = {name: [0] for name in players}
    if len(players) >= 2:
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
        else:
            for number, played in enumerate(state.rounds, start=1):
                try:
                    match.record(RoundResult(played["scores"], played.get("winner")))
                except ValueError as error:
                    problems.append(f"round {number}: {error}")
                    continue
                for name in players:
                    series[name].append(match.totals[name])
            match_json = match.to_json()
    turn = state.turn
    if turn is not None and isinstance(turn.get("seat"), int) and 0 <= turn["seat"] < len(players):
        turn = {**turn, "player": players[turn["seat"]]}
    progress = state.progress
    if progress is not None and isinstance(progress.get("seat"), int):
        seat = progress["seat"]
        progress = {**progress, "player": players[seat] if 0 <= seat < len(players) else None}
    return {
        "setup": {
            "variant": variant.id,
            "variant_name": variant.name,
            "options": variant.options,
            "players": players,
            "dealer": setup.get("dealer", 0),
            "rounds_limit": setup.get("rounds_limit"),
            "target": setup.get("target"),
            "turn_seconds": int(setup.get("turn_seconds", default_turn_seconds)),
        },
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
        "match_over": state.match_over,
        "live": {
            "phase": state.phase,
            "paused": turn is not None and turn.get("paused_at") is not None,
        },
        "racks": [
            {
                "seat": seat,
                "player": name,
                "out": seat == state.out_seat,
                **state.racks.get(seat, {"items": None, "value": None, "typed": False}),
            }
            for seat, name in enumerate(players)
        ]
        if state.phase == "counting"
        else [],
        "scored_round": state.scored_round,
        "feed": list(reversed(state.feed)),
        "corrections": state.corrections[-FEED_LENGTH:][::-1],
        "problems": problems,
        "last_id": state.last_id,
        "undoable": state.last_effective,
    }
