"""The game's events as values: one frozen dataclass per kind, read from and written to the
JSON of CONTRACT.md.

Every event has ``seq`` (1, 2, ... in the order the events happened; 0 until an event
stream numbers it), ``t`` (seconds since the start; video time for files) and ``seat``
(index into the players, or None).  The contract fixes three kinds and their fields
(:class:`Table`, :class:`GameWarning`, :class:`RoundScored`); the others are this project's own.
Items are contract tokens and melds strings of tokens (``"R3 R4 R5"``), as in the JSON.

:func:`event_to_json` writes an event as the JSON object it has always been, key for key
and in the same order (``seq``, ``t``, ``type``, ``seat``, then the kind's fields in the
order declared here, then any fields the kind does not know, as they came), so event files
and stored matches read back into equal values and write back byte for byte.
:func:`event_from_json` reads one, checking its shape (:class:`EventError`, quoting it).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias


class EventError(ValueError):
    """An event that does not have the contract's shape."""


# --- how a field is read from JSON and written back ---------------------------------------

def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Codec:
    describe: str
    read: Callable[[Any], Any]
    """The field's value from JSON (raises TypeError/ValueError when it is not one)."""
    write: Callable[[Any], Any]
    freeze: Callable[[Any], Any] = lambda value: value
    """A value given as lists (as the game builds it) made immutable."""


def _read_text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError
    return value


def _read_texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise TypeError
    return tuple(value)


def _read_whole(value: Any) -> int:
    if not _whole(value):
        raise TypeError
    return int(value)


def _read_flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError
    return value


def _read_tally(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and _whole(v) for k, v in value.items()
    ):
        raise TypeError
    return dict(value)


def _read_boxes(value: Any) -> tuple[tuple[float, ...] | None, ...]:
    if not isinstance(value, list):
        raise TypeError
    boxes: list[tuple[float, ...] | None] = []
    for box in value:
        if box is None:
            boxes.append(None)
        elif isinstance(box, list) and len(box) == 4 and all(map(_number, box)):
            boxes.append(tuple(box))
        else:
            raise TypeError
    return tuple(boxes)


def _read_alternatives(value: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, list):
        raise TypeError
    read: list[tuple[str, float]] = []
    for option in value:
        if (not isinstance(option, dict) or list(option) != ["meld", "odds"]
                or not isinstance(option["meld"], str) or not _number(option["odds"])):
            raise TypeError
        read.append((option["meld"], option["odds"]))
    return tuple(read)


def _or_null(read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else read(value)


def _same(value: Any) -> Any:
    return value


TEXT = Codec("a string", _read_text, _same)
TEXT_OR_NULL = Codec("a string or null", _or_null(_read_text), _same)
TEXTS = Codec("a list of strings", _read_texts, list, tuple)
WHOLE = Codec("a whole number", _read_whole, _same)
WHOLE_OR_NULL = Codec("a whole number or null", _or_null(_read_whole), _same)
FLAG = Codec("true or false", _read_flag, _same)
TALLY = Codec("an object of names to whole numbers", _read_tally, dict)
BOXES = Codec("a list of [x1, y1, x2, y2] or null", _read_boxes,
               lambda boxes: [None if box is None else list(box) for box in boxes],
               lambda boxes: tuple(None if box is None else tuple(box) for box in boxes))
ALTERNATIVES = Codec('a list of {"meld", "odds"}', _read_alternatives,
                      lambda options: [{"meld": m, "odds": o} for m, o in options],
                      lambda options: tuple(tuple(option) for option in options))


def event_field(codec: Codec, *, optional: bool = False, hashed: bool = True) -> Any:
    """A kind's field: ``optional`` ones default to None and are left out of the JSON then."""
    metadata = {"codec": codec, "optional": optional}
    if optional:
        return field(default=None, metadata=metadata, hash=hashed)
    return field(metadata=metadata, hash=hashed)


_FIELDS_OF: dict[type, tuple[dataclasses.Field[Any], ...]] = {}


def _own_fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    """A value class's own fields (those made by :func:`event_field`), in their JSON order."""
    own = _FIELDS_OF.get(cls)
    if own is None:
        own = _FIELDS_OF[cls] = tuple(
            spec for spec in dataclasses.fields(cls) if "codec" in spec.metadata)
    return own


class CodedFields:
    """A frozen dataclass whose fields made by :func:`event_field` are read from JSON and
    written back by their codecs (the game's events here, the panel's own in
    :mod:`tabletop.panel.events`)."""

    def __post_init__(self) -> None:
        for spec in _own_fields(type(self)):
            value = getattr(self, spec.name)
            if value is not None:
                object.__setattr__(self, spec.name, spec.metadata["codec"].freeze(value))

    def _leaves_out(self, name: str) -> bool:
        """Whether the JSON has no ``name`` (an optional field that is None)."""
        spec = next(spec for spec in _own_fields(type(self)) if spec.name == name)
        return bool(spec.metadata["optional"]) and getattr(self, name) is None

    def own_json(self) -> dict[str, Any]:
        """The value's own fields as JSON, in their order, those it leaves out left out."""
        return {spec.name: spec.metadata["codec"].write(getattr(self, spec.name))
                for spec in _own_fields(type(self)) if not self._leaves_out(spec.name)}

    @classmethod
    def read_own(cls, raw: Mapping[str, Any], what: str,
                 base: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The class's own fields read from ``raw``, and the fields neither they nor
        ``base`` name (kept as they came); :class:`EventError` starting with ``what``
        where one is missing or is not what its codec reads."""
        own = _own_fields(cls)
        missing = [spec.name for spec in own
                   if not spec.metadata["optional"] and spec.name not in raw]
        if missing:
            raise EventError(f"{what} lacks {', '.join(sorted(missing))}")
        values: dict[str, Any] = {}
        for spec in own:
            if spec.name not in raw:
                continue
            codec: Codec = spec.metadata["codec"]
            try:
                values[spec.name] = codec.read(raw[spec.name])
            except (TypeError, ValueError):
                raise EventError(f"{what}: {spec.name} must be {codec.describe},"
                                 f" not {raw[spec.name]!r}") from None
        names = {spec.name for spec in own} | set(base)
        return values, {key: value for key, value in raw.items() if key not in names}


# --- the events ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class GameEvent(CodedFields):
    """What every event has; a kind adds its fields (see :data:`EVENT_TYPES`)."""

    kind: ClassVar[str] = ""
    t: float
    seat: int | None
    seq: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Fields the kind does not declare, as they came (written after the kind's own)."""


@dataclass(frozen=True, kw_only=True)
class Table(GameEvent):
    """The whole shared table after a committed change (CONTRACT.md).  ``restored``: the
    table put back as it was after the camera's view changed; ``boxes``: where each meld
    lies in the camera's frame (pixels, None for one not in view)."""

    kind: ClassVar[str] = "table"
    melds: tuple[str, ...] = event_field(TEXTS)
    restored: bool | None = event_field(FLAG, optional=True)
    boxes: tuple[tuple[float, ...] | None, ...] | None = event_field(BOXES, optional=True)


@dataclass(frozen=True, kw_only=True)
class GameWarning(GameEvent):
    """Something the players should know (CONTRACT.md); ``code`` says which warning.
    ``missing`` and ``table_before``: what a table put back still lacks and how it was;
    ``penalty_draw`` and ``back_to_rack``: a penalty's draw and the items that go back to
    the rack; ``alternatives``: the readings of a meld the camera could not read for
    sure (with their odds)."""

    kind: ClassVar[str] = "warning"
    message: str = event_field(TEXT)
    items: tuple[str, ...] = event_field(TEXTS)
    code: str | None = event_field(TEXT, optional=True)
    missing: tuple[str, ...] | None = event_field(TEXTS, optional=True)
    penalty_draw: int | None = event_field(WHOLE, optional=True)
    back_to_rack: tuple[str, ...] | None = event_field(TEXTS, optional=True)
    table_before: tuple[str, ...] | None = event_field(TEXTS, optional=True)
    alternatives: tuple[tuple[str, float], ...] | None = event_field(ALTERNATIVES, optional=True)


@dataclass(frozen=True, kw_only=True)
class RoundScored(GameEvent):
    """A round's scores by name (CONTRACT.md), with the round, its winner and the match's
    totals after it where the game knows them."""

    kind: ClassVar[str] = "round_scored"
    scores: Mapping[str, int] = event_field(TALLY, hashed=False)
    round: int | None = event_field(WHOLE, optional=True)
    winner: str | None = event_field(TEXT_OR_NULL, optional=True)
    totals: Mapping[str, int] | None = event_field(TALLY, optional=True, hashed=False)

    def _leaves_out(self, name: str) -> bool:
        # the contract's own round_scored has the scores alone: a winner of None is
        # written only beside the round, as the game writes it
        if name == "winner":
            return self.winner is None and self.round is None
        return super()._leaves_out(name)


@dataclass(frozen=True, kw_only=True)
class TurnStarted(GameEvent):
    kind: ClassVar[str] = "turn_started"
    round: int = event_field(WHOLE)
    turn: int = event_field(WHOLE)


@dataclass(frozen=True, kw_only=True)
class TurnEnded(GameEvent):
    """``laid``: the items the turn placed (none for an invalid turn, which is taken back)."""

    kind: ClassVar[str] = "turn_ended"
    valid: bool = event_field(FLAG)
    laid: tuple[str, ...] = event_field(TEXTS)


@dataclass(frozen=True, kw_only=True)
class MeldLaid(GameEvent):
    kind: ClassVar[str] = "meld_laid"
    meld: str = event_field(TEXT)


@dataclass(frozen=True, kw_only=True)
class _MeldChanged(GameEvent):
    """``items`` went into a meld on the table, which reads ``meld`` now."""

    meld: str = event_field(TEXT)
    items: tuple[str, ...] = event_field(TEXTS)


@dataclass(frozen=True, kw_only=True)
class ItemAdded(_MeldChanged):
    """``items`` laid off onto a meld."""

    kind: ClassVar[str] = "item_added"


@dataclass(frozen=True, kw_only=True)
class JokerExchanged(_MeldChanged):
    """A joker taken out of a meld for ``items``, the tiles or cards it stood for."""

    kind: ClassVar[str] = "joker_exchanged"


@dataclass(frozen=True, kw_only=True)
class TableRearranged(GameEvent):
    kind: ClassVar[str] = "table_rearranged"
    before: tuple[str, ...] = event_field(TEXTS)
    after: tuple[str, ...] = event_field(TEXTS)


@dataclass(frozen=True, kw_only=True)
class DiscardTaken(GameEvent):
    kind: ClassVar[str] = "discard_taken"
    items: tuple[str, ...] = event_field(TEXTS)


@dataclass(frozen=True, kw_only=True)
class ItemDiscarded(GameEvent):
    kind: ClassVar[str] = "item_discarded"
    item: str = event_field(TEXT)


@dataclass(frozen=True, kw_only=True)
class InitialMeldProgress(GameEvent):
    """What the seat's opening is worth so far against what the variant asks; ``problems``:
    what else stops an opening whose value is enough."""

    kind: ClassVar[str] = "initial_meld_progress"
    value: int = event_field(WHOLE)
    required: int = event_field(WHOLE)
    meets: bool = event_field(FLAG)
    problems: tuple[str, ...] | None = event_field(TEXTS, optional=True)


@dataclass(frozen=True, kw_only=True)
class PlayerOut(GameEvent):
    """``all_at_once``: the seat laid its whole hand in one turn."""

    kind: ClassVar[str] = "player_out"
    all_at_once: bool | None = event_field(FLAG, optional=True)


@dataclass(frozen=True, kw_only=True)
class PoolExhausted(GameEvent):
    """The stock or pool is used up and no one can go on: the round ends with no one out,
    and the hands are counted."""

    kind: ClassVar[str] = "pool_exhausted"


@dataclass(frozen=True, kw_only=True)
class HandShown(GameEvent):
    """The seat's hand and what it counts; ``typed``: a person typed it on the panel;
    ``who``: the person, where known."""

    kind: ClassVar[str] = "hand_shown"
    items: tuple[str, ...] = event_field(TEXTS)
    value: int = event_field(WHOLE)
    typed: bool | None = event_field(FLAG, optional=True)
    who: str | None = event_field(TEXT, optional=True)


@dataclass(frozen=True, kw_only=True)
class MatchOver(GameEvent):
    kind: ClassVar[str] = "match_over"
    winner: str | None = event_field(TEXT_OR_NULL)
    totals: Mapping[str, int] = event_field(TALLY, hashed=False)


@dataclass(frozen=True, kw_only=True)
class Undo(GameEvent):
    """The game took its last step back: the table as it is now, the phase and the rounds
    played."""

    kind: ClassVar[str] = "undo"
    melds: tuple[str, ...] = event_field(TEXTS)
    phase: str | None = event_field(TEXT, optional=True)
    rounds: int | None = event_field(WHOLE, optional=True)


@dataclass(frozen=True, kw_only=True)
class ReadingCorrected(GameEvent):
    """A person corrected the camera's reading of one item (``was`` -> ``item``): not a
    play, so no check and no turn change.  ``meld``: the meld holding it as it reads now,
    or None for an item of a hand laid open; ``value``: that meld's points as the variant
    counts them (None when it is not legal), written only beside a meld; ``who`` where
    known; ``seat``: who laid the item (or holds it)."""

    kind: ClassVar[str] = "reading_corrected"
    item: str = event_field(TEXT)
    was: str = event_field(TEXT)
    meld: str | None = event_field(TEXT_OR_NULL)
    who: str | None = event_field(TEXT, optional=True)
    value: int | None = event_field(WHOLE_OR_NULL, optional=True)

    def _leaves_out(self, name: str) -> bool:
        if name == "value":
            return self.meld is None
        return super()._leaves_out(name)


@dataclass(frozen=True, kw_only=True)
class TimerPaused(GameEvent):
    """The turn timer stopped (from the panel or the keys; ``who``: the person)."""

    kind: ClassVar[str] = "timer_paused"
    who: str | None = event_field(TEXT, optional=True)


@dataclass(frozen=True, kw_only=True)
class TimerResumed(GameEvent):
    kind: ClassVar[str] = "timer_resumed"
    who: str | None = event_field(TEXT, optional=True)


Event: TypeAlias = (
    Table | GameWarning | RoundScored | TurnStarted | TurnEnded | MeldLaid | ItemAdded
    | JokerExchanged | TableRearranged | DiscardTaken | ItemDiscarded | InitialMeldProgress
    | PlayerOut | PoolExhausted | HandShown | MatchOver | Undo | ReadingCorrected | TimerPaused
    | TimerResumed
)
"""Any event the game makes."""

EVENT_TYPES: dict[str, type[GameEvent]] = {
    cls.kind: cls
    for cls in (Table, GameWarning, RoundScored, TurnStarted, TurnEnded, MeldLaid, ItemAdded,
                JokerExchanged, TableRearranged, DiscardTaken, ItemDiscarded,
                InitialMeldProgress, PlayerOut, PoolExhausted, HandShown, MatchOver, Undo,
                ReadingCorrected, TimerPaused, TimerResumed)
}
"""Each kind's class, by its JSON ``type``."""

BASE_FIELDS = ("seq", "t", "type", "seat")


def event_to_json(event: GameEvent) -> dict[str, Any]:
    """The event's JSON object, key for key as it is read (see the module's doc)."""
    data: dict[str, Any] = {"seq": event.seq, "t": event.t, "type": event.kind,
                            "seat": event.seat}
    data.update(event.own_json())
    data.update(event.extra)
    return data


def event_from_json(raw: Any) -> Event:
    """The event a JSON object describes; :class:`EventError` unless it has the contract's
    base fields and its kind's."""
    if not isinstance(raw, dict):
        raise EventError(f"an event is a JSON object, not {raw!r}")
    for name in BASE_FIELDS:
        if name not in raw:
            raise EventError(f"event {raw!r} has no {name!r}")
    seq, t, kind, seat = (raw[name] for name in BASE_FIELDS)
    if not _whole(seq) or seq < 1:
        raise EventError(f"seq must be a whole number from 1, not {seq!r}")
    if not _number(t) or not math.isfinite(t) or t < 0:
        raise EventError(f"t must be seconds >= 0, not {t!r}")
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        raise EventError(f"unknown event type {kind!r}")
    if seat is not None and (not _whole(seat) or seat < 0):
        raise EventError(f"seat must be a seat index or null, not {seat!r}")
    cls = EVENT_TYPES[kind]
    values, extra = cls.read_own(raw, f"{kind} event {seq}", BASE_FIELDS)
    event = cls(seq=seq, t=t, seat=seat, extra=extra, **values)
    return event  # type: ignore[return-value]  # EVENT_TYPES holds only Event's classes
