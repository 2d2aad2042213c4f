"""Game events numbered, published and written as JSON lines.

The events themselves are the engine's values (:mod:`tabletop.engine.events`: one frozen
dataclass per kind, with the JSON of CONTRACT.md).  :class:`EventStream` numbers them
(``seq`` 1, 2, ...) and publishes them on the bus; :class:`JsonlWriter` writes them one JSON
object a line; :func:`read_jsonl` reads such a file back; :func:`describe_event` says one in
a line for a person.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO

from tabletop.engine import events as ev
from tabletop.engine.events import Event, EventError, event_from_json, event_to_json
from tabletop.engine.items import Item, format_items
from tabletop.engine.record import GameRecord
from tabletop.live.bus import EventBus

__all__ = ["CAMERA_EVENT_CODE", "EventError", "EventStream", "JsonlWriter", "collector",
           "describe_event", "items_json", "melds_json", "read_jsonl"]

CAMERA_EVENT_CODE = "camera_view_changed"
"""The ``warning`` code of a camera event: the camera's view changed at once in a way no
hand did (a reconnected stream, a covered lens); the table is kept as it was
(:mod:`tabletop.live.permanence`)."""


def melds_json(melds: Iterable[Sequence[Item]]) -> tuple[str, ...]:
    """Melds as an event holds them: strings of tokens."""
    return tuple(format_items(meld) for meld in melds)


def items_json(items: Iterable[Item]) -> tuple[str, ...]:
    """Items as an event holds them: tokens."""
    return tuple(str(item) for item in items)


class EventStream:
    """Numbers events, validates them and publishes them on the bus.

    ``emit`` is the only way the game makes an event, so ``seq`` is 1, 2, ...
    without gaps, in the order the events happened.  ``record`` folds every event emitted
    (:class:`tabletop.engine.record.GameRecord`): what the game has told so far."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.seq = 0
        self.record = GameRecord()

    def emit(self, event: Event) -> Event:
        """Number ``event`` (its ``t`` to the millisecond) and publish it."""
        self.seq += 1
        event = dataclasses.replace(event, seq=self.seq, t=round(float(event.t), 3))
        self.record.apply(event)
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
        self._file.write(json.dumps(event_to_json(event), ensure_ascii=False) + "\n")
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
            event = event_from_json(json.loads(line))
        except json.JSONDecodeError as error:
            raise EventError(f"{path}:{number}: not JSON: {error}") from None
        except RecursionError:
            raise EventError(f"{path}:{number}: nested too deep") from None
        expected = events[0].seq + len(events) if events else event.seq
        if event.seq != expected:
            raise EventError(f"{path}:{number}: seq {event.seq}, expected {expected}")
        events.append(event)
    return events


def describe_event(event: Event, players: Sequence[str]) -> str | None:
    """One readable line for an event (None for the ones a person need not see)."""
    who = players[event.seat] if event.seat is not None else ""
    match event:
        case ev.TurnStarted():
            return f"{who}'s turn"
        case ev.MeldLaid(meld=meld):
            return f"{who} lays {meld}"
        case ev.ItemAdded(meld=meld, items=items):
            return f"{who} adds {' '.join(items)} to {meld}"
        case ev.TableRearranged(after=after):
            return f"{who} rebuilds the table: {' | '.join(after)}"
        case ev.JokerExchanged(meld=meld):
            return f"{who} exchanges a joker: {meld}"
        case ev.InitialMeldProgress(value=value, required=required, meets=meets,
                                    problems=problems):
            if problems and not meets:
                return (f"{who}'s opening is worth {value} of {required} but does"
                        f" not count yet: {'; '.join(problems)}")
            verdict = "enough to open" if meets else "not enough yet"
            return f"{who}'s opening is worth {value} of {required}: {verdict}"
        case ev.GameWarning(message=message):
            return f"WARNING {message}"
        case ev.DiscardTaken(items=items):
            return f"{who} takes the discard {' '.join(items)}"
        case ev.ItemDiscarded(item=item):
            return f"{who} discards {item}"
        case ev.PlayerOut():
            return f"{who} goes out"
        case ev.PoolExhausted():
            return "the pool has run out: the hands are counted"
        case ev.RoundScored(scores=scores, winner=winner, round=number):
            tally = ", ".join(f"{n} {v:+d}" for n, v in scores.items())
            won = f", {winner} wins" if winner else ""
            return f"round {'' if number is None else number} scored{won}: {tally}"
        case ev.HandShown(items=items, value=value):
            return f"{who}'s rack: {' '.join(items) or 'empty'} ({value})"
        case ev.TimerPaused():
            return "timer paused"
        case ev.TimerResumed():
            return "timer resumed"
        case ev.MatchOver(winner=winner):
            return f"match over, winner {winner}"
    return None
