"""Game events as CONTRACT.md fixes them, numbered, validated and written as JSON lines.

Every event is a plain dict with ``seq`` (1, 2, ...), ``t`` (seconds since the
start; video time for files), ``type`` and ``seat`` (index into the players,
or None).  The contract fixes three types and their fields (``table``,
``warning``, ``round_scored``); the others below are this project's own and
are described in :data:`EVENT_FIELDS`.  Items are contract tokens, melds are
strings of tokens (``"R3 R4 R5"``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from tabletop.engine.items import Item, format_items
from tabletop.live.bus import Event, EventBus

EVENT_FIELDS: dict[str, frozenset[str]] = {
    # fixed by CONTRACT.md; a watched game's ``table`` also carries ``boxes``: where each
    # meld lies in the camera's frame (pixels x1 y1 x2 y2, null for one not in view)
    "table": frozenset({"melds"}),
    "warning": frozenset({"message", "items"}),
    "round_scored": frozenset({"scores"}),
    # this project's own
    "turn_started": frozenset({"round", "turn"}),
    "turn_ended": frozenset({"valid", "laid"}),
    "meld_laid": frozenset({"meld"}),
    "item_added": frozenset({"meld", "items"}),
    "joker_exchanged": frozenset({"meld", "items"}),
    "table_rearranged": frozenset({"before", "after"}),
    "discard_taken": frozenset({"items"}),
    "item_discarded": frozenset({"item"}),
    "initial_meld_progress": frozenset({"value", "required", "meets"}),
    "player_out": frozenset(),
    "hand_shown": frozenset({"items", "value"}),
    "match_over": frozenset({"winner", "totals"}),
    "undo": frozenset({"melds"}),
    # a person corrected the camera's reading of one item (``was`` -> ``item``, tokens):
    # not a play, so no check and no turn change.  ``meld``: the meld holding it as it
    # reads now, or null for an item of a hand laid open; ``value`` (a meld's points as
    # the variant counts them, null when the meld is not legal) and ``who`` where known;
    # ``seat``: who laid the item (or holds it).  Not ``item_corrected``: that is the
    # panel's own log entry for the person's request (panel.state).
    "reading_corrected": frozenset({"item", "was", "meld"}),
    # the turn timer stopped and started again from the panel or the keys (``who``: the
    # person, where known); a pause also ends with the turn
    "timer_paused": frozenset(),
    "timer_resumed": frozenset(),
}
"""The fields each event type must carry besides ``seq``, ``t``, ``type`` and ``seat``."""

BASE_FIELDS = ("seq", "t", "type", "seat")

CAMERA_EVENT_CODE = "camera_view_changed"
"""The ``warning`` code of a camera event: the camera's view changed at once in a way no
hand did (a reconnected stream, a covered lens); the table is kept as it was
(:mod:`tabletop.live.permanence`)."""


class EventError(ValueError):
    """An event that does not have the contract's shape."""


def melds_json(melds: Iterable[Sequence[Item]]) -> list[str]:
    return [format_items(meld) for meld in melds]


def items_json(items: Iterable[Item]) -> list[str]:
    return [str(item) for item in items]


def validate_event(event: Any) -> None:
    """Raise EventError unless ``event`` has the contract's base fields and its type's."""
    if not isinstance(event, dict):
        raise EventError(f"an event is a JSON object, not {event!r}")
    for name in BASE_FIELDS:
        if name not in event:
            raise EventError(f"event {event!r} has no {name!r}")
    seq, t, kind, seat = (event[name] for name in BASE_FIELDS)
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise EventError(f"seq must be a whole number from 1, not {seq!r}")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
        raise EventError(f"t must be seconds >= 0, not {t!r}")
    if kind not in EVENT_FIELDS:
        raise EventError(f"unknown event type {kind!r}")
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or seat < 0):
        raise EventError(f"seat must be a seat index or null, not {seat!r}")
    missing = EVENT_FIELDS[kind] - set(event)
    if missing:
        raise EventError(f"{kind} event {seq} lacks {', '.join(sorted(missing))}")
    for name in ("melds", "items", "before", "after"):
        if name in event and not all(isinstance(x, str) for x in event[name]):
            raise EventError(f"{kind} event {seq}: {name} must be a list of strings")
    if kind == "round_scored":
        scores = event["scores"]
        if not isinstance(scores, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in scores.values()
        ):
            raise EventError(f"round_scored event {seq}: scores must map names to whole numbers")


class EventStream:
    """Numbers events, validates them and publishes them on the bus.

    ``emit`` is the only way the game makes an event, so ``seq`` is 1, 2, ...
    without gaps, in the order the events happened."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.seq = 0

    def emit(self, t: float, kind: str, seat: int | None, **fields: Any) -> Event:
        self.seq += 1
        event: Event = {"seq": self.seq, "t": round(float(t), 3), "type": kind, "seat": seat}
        event.update(fields)
        validate_event(event)
        self.bus.publish(event)
        return event


class JsonlWriter:
    """A bus subscriber writing each event as one JSON line, flushed at once, so a
    reader following the file sees every event as it happens."""

    def __init__(self, target: str | Path | IO[str]) -> None:
        if isinstance(target, (str, Path)):
            self._file: IO[str] = open(target, "w", encoding="utf-8")  # noqa: SIM115
            self._owned = True
        else:
            self._file = target
            self._owned = False

    def __call__(self, event: Event) -> None:
        self._file.write(json.dumps(event, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._owned:
            self._file.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def collector(bus: EventBus) -> tuple[list[Event], Callable[[], None]]:
    """Subscribe a list to ``bus``: (the list, unsubscribe)."""
    events: list[Event] = []
    return events, bus.subscribe(events.append)


def read_jsonl(path: str | Path) -> list[Event]:
    """Read and validate an events file; seq must run on by one from the first event (1 for
    a new match, the stored match's next number for a resumed one)."""
    events: list[Event] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as error:
            raise EventError(f"{path}:{number}: not JSON: {error}") from None
        except RecursionError:
            raise EventError(f"{path}:{number}: nested too deep") from None
        validate_event(event)
        expected = events[0]["seq"] + len(events) if events else event["seq"]
        if event["seq"] != expected:
            raise EventError(f"{path}:{number}: seq {event['seq']}, expected {expected}")
        events.append(event)
    return events


def describe_event(event: Event, players: Sequence[str]) -> str | None:
    """One readable line for an event (None for the ones a person need not see)."""
    who = players[event["seat"]] if isinstance(event.get("seat"), int) else ""
    kind = event["type"]
    if kind == "turn_started":
        return f"{who}'s turn"
    if kind == "meld_laid":
        return f"{who} lays {event['meld']}"
    if kind == "item_added":
        return f"{who} adds {' '.join(event['items'])} to {event['meld']}"
    if kind == "table_rearranged":
        return f"{who} rebuilds the table: {' | '.join(event['after'])}"
    if kind == "joker_exchanged":
        return f"{who} exchanges a joker: {event['meld']}"
    if kind == "initial_meld_progress":
        problems = event.get("problems") or []
        if problems and not event["meets"]:
            return (
                f"{who}'s opening is worth {event['value']} of {event['required']} but does"
                f" not count yet: {'; '.join(map(str, problems))}"
            )
        verdict = "enough to open" if event["meets"] else "not enough yet"
        return f"{who}'s opening is worth {event['value']} of {event['required']}: {verdict}"
    if kind == "warning":
        return f"WARNING {event['message']}"
    if kind in ("discard_taken", "item_discarded"):
        items = event.get("items") or [event.get("item")]
        verb = "takes the discard" if kind == "discard_taken" else "discards"
        return f"{who} {verb} {' '.join(map(str, items))}"
    if kind == "player_out":
        return f"{who} goes out"
    if kind == "round_scored":
        scores = ", ".join(f"{n} {v:+d}" for n, v in event["scores"].items())
        winner = event.get("winner")
        won = f", {winner} wins" if winner else ""
        return f"round {event.get('round', '')} scored{won}: {scores}"
    if kind == "hand_shown":
        return f"{who}'s rack: {' '.join(event['items']) or 'empty'} ({event['value']})"
    if kind == "timer_paused":
        return "timer paused"
    if kind == "timer_resumed":
        return "timer resumed"
    if kind == "match_over":
        return f"match over, winner {event['winner']}"
    return None
