"""The panel's own events as values: what people change on the panel, beside the game's
events (:mod:`tabletop.engine.events`) in a match's log.

One frozen dataclass per kind: :class:`MatchSetUp` (``setup``), :class:`CalibrationNoted`
(``calibration``), :class:`ItemCorrected` (``item_corrected``), :class:`ScoreEdited`
(``score_edited``), :class:`MatchClosedOnPanel` (``match_closed``) and :class:`LogUndone`
(``undo`` naming the log entry it takes back; the game's own ``undo`` names none and is
the engine's :class:`~tabletop.engine.events.Undo`).  Every one says who made it and when
(``at``, wall-clock seconds).

:func:`panel_event_to_json` writes one as the log holds it: ``type``, ``seat`` (always
null), ``who``, ``at``, the kind's fields in the order declared here (an optional field
that is None left out, but for a setup's ends, a calibration's note and a rescored
round's winner, written null), then any fields the kind does not know, as they came.
:func:`panel_event_from_json` reads one back, refusing a bad shape in one line that quotes
it (:class:`~tabletop.engine.events.EventError`); matches stored before these values read
as they always did.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from tabletop.engine.events import (
    FLAG,
    TALLY,
    TEXT,
    TEXT_OR_NULL,
    TEXTS,
    WHOLE,
    WHOLE_OR_NULL,
    Codec,
    CodedFields,
    EventError,
    event_field,
)


def _read_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise TypeError
    return dict(value)


OBJECT = Codec("a JSON object", _read_object, dict)
OBJECT_OR_NULL = Codec("a JSON object or null",
                       lambda value: None if value is None else _read_object(value), dict)


@dataclass(frozen=True, kw_only=True)
class PanelEvent(CodedFields):
    """What every panel event has; a kind adds its fields (see :data:`PANEL_EVENT_TYPES`)."""

    kind: ClassVar[str] = ""
    who: str | None = None
    at: float | None = None
    """When it was made (seconds since the epoch); None until the service stamps it."""
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Fields the kind does not declare, as they came (written after the kind's own)."""


@dataclass(frozen=True, kw_only=True)
class MatchSetUp(PanelEvent):
    """The match's game, its options, the players in seat order, who deals first and how
    the match ends (a rounds limit or a target, where the variant lets the players set
    one); ``turn_seconds``: the turn timer.  What a setup leaves out (None) takes the
    panel's default."""

    kind: ClassVar[str] = "setup"
    variant: str | None = event_field(TEXT, optional=True)
    options: Mapping[str, Any] | None = event_field(OBJECT, optional=True, hashed=False)
    players: tuple[str, ...] = event_field(TEXTS)
    dealer: int | None = event_field(WHOLE, optional=True)
    rounds_limit: int | None = event_field(WHOLE_OR_NULL, optional=True)
    target: int | None = event_field(WHOLE_OR_NULL, optional=True)
    turn_seconds: int | None = event_field(WHOLE, optional=True)

    def _leaves_out(self, name: str) -> bool:
        # the ends are written as null where there is none (older setups left them out)
        return name not in ("rounds_limit", "target") and super()._leaves_out(name)


@dataclass(frozen=True, kw_only=True)
class CalibrationNoted(PanelEvent):
    """The table's calibration as a person reported it (none, ok, stale, failed)."""

    kind: ClassVar[str] = "calibration"
    status: str = event_field(TEXT)
    note: str | None = event_field(TEXT_OR_NULL, optional=True)

    def _leaves_out(self, name: str) -> bool:
        return name != "note" and super()._leaves_out(name)


@dataclass(frozen=True, kw_only=True)
class ItemCorrected(PanelEvent):
    """Item ``index`` of table meld ``meld`` reads ``item``, not ``was``; ``live``: the
    live table took the correction too (else only the panel's view is fixed)."""

    kind: ClassVar[str] = "item_corrected"
    meld: int = event_field(WHOLE)
    index: int = event_field(WHOLE)
    item: str = event_field(TEXT)
    was: str | None = event_field(TEXT, optional=True)
    live: bool | None = event_field(FLAG, optional=True)


@dataclass(frozen=True, kw_only=True)
class ScoreEdited(PanelEvent):
    """Round ``round``'s scores replaced.  Typed in: the scores alone.  Scored again by
    the engine from a round entry: its whole result beside them (``rescored``)."""

    kind: ClassVar[str] = "score_edited"
    round: int = event_field(WHOLE)
    scores: Mapping[str, int] = event_field(TALLY, hashed=False)
    manual: bool | None = event_field(FLAG, optional=True)
    winner: str | None = event_field(TEXT_OR_NULL, optional=True)
    details: Mapping[str, Any] | None = event_field(OBJECT_OR_NULL, optional=True, hashed=False)
    doubled: bool | None = event_field(FLAG, optional=True)
    problems: tuple[str, ...] | None = event_field(TEXTS, optional=True)
    extras: Mapping[str, Any] | None = event_field(OBJECT_OR_NULL, optional=True, hashed=False)
    input: Mapping[str, Any] | None = event_field(OBJECT_OR_NULL, optional=True, hashed=False)

    def _leaves_out(self, name: str) -> bool:
        # a result scored again has a winner, null for none; scores typed in have none
        if name == "winner":
            return not self.rescored
        return super()._leaves_out(name)

    @property
    def rescored(self) -> bool:
        """Scored again by the engine (its winner, details and input come with it)."""
        return self.manual is not None


@dataclass(frozen=True, kw_only=True)
class MatchClosedOnPanel(PanelEvent):
    """The players ended the match where it stood; the one leading wins."""

    kind: ClassVar[str] = "match_closed"


@dataclass(frozen=True, kw_only=True)
class LogUndone(PanelEvent):
    """Log entry ``target`` (of type ``undone_type``) taken back on the panel."""

    kind: ClassVar[str] = "undo"
    target: int = event_field(WHOLE)
    undone_type: str | None = event_field(TEXT, optional=True)


PanelEventValue: TypeAlias = (
    MatchSetUp | CalibrationNoted | ItemCorrected | ScoreEdited | MatchClosedOnPanel | LogUndone
)
"""Any event the panel makes."""

PANEL_EVENT_TYPES: dict[str, type[PanelEvent]] = {
    cls.kind: cls
    for cls in (MatchSetUp, CalibrationNoted, ItemCorrected, ScoreEdited, MatchClosedOnPanel,
                LogUndone)
}
"""Each kind's class, by its JSON ``type``."""
PANEL_KINDS = frozenset(PANEL_EVENT_TYPES)
"""The ``type`` of every panel event (a game event never posts one of these to the panel;
``undo`` is the panel's only where it names its ``target``)."""

_BASE_FIELDS = ("type", "seat", "who", "at")


def is_panel_event(raw: Mapping[str, Any]) -> bool:
    """Whether a logged JSON object is one of the panel's events (else the game's)."""
    kind = raw.get("type")
    if kind == "undo":
        return "target" in raw
    return kind in PANEL_KINDS


def panel_event_to_json(event: PanelEvent) -> dict[str, Any]:
    """The event's JSON object as the log holds it (see the module's doc)."""
    data: dict[str, Any] = {"type": event.kind, "seat": None, "who": event.who, "at": event.at}
    data.update(event.own_json())
    data.update(event.extra)
    return data


def panel_event_from_json(raw: Any) -> PanelEventValue:
    """The panel event a logged JSON object describes; :class:`EventError` unless it has
    its kind's fields.  ``who`` and ``at`` may be missing (None)."""
    if not isinstance(raw, dict):
        raise EventError(f"a panel event is a JSON object, not {raw!r}")
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in PANEL_EVENT_TYPES:
        raise EventError(f"unknown panel event type {kind!r}")
    who, at = raw.get("who"), raw.get("at")
    if who is not None and not isinstance(who, str):
        raise EventError(f"{kind} event: who must be a string, not {who!r}")
    if at is not None and (isinstance(at, bool) or not isinstance(at, (int, float))
                           or not math.isfinite(at)):
        raise EventError(f"{kind} event: at must be seconds, not {at!r}")
    cls = PANEL_EVENT_TYPES[kind]
    values, extra = cls.read_own(raw, f"{kind} event", _BASE_FIELDS)
    event = cls(who=who, at=None if at is None else float(at), extra=extra, **values)
    return event  # type: ignore[return-value]  # PANEL_EVENT_TYPES holds only their classes


__all__ = [
    "PANEL_EVENT_TYPES",
    "PANEL_KINDS",
    "CalibrationNoted",
    "ItemCorrected",
    "LogUndone",
    "MatchClosedOnPanel",
    "MatchSetUp",
    "PanelEvent",
    "PanelEventValue",
    "ScoreEdited",
    "is_panel_event",
    "panel_event_from_json",
    "panel_event_to_json",
]
