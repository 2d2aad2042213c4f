"""Scripted games: the tables a game shows and the buttons pressed, with its true event log.

A scenario is a JSON object (``live.scenario`` reads the files)::

    {"variant": "sabra", "options": {}, "players": ["Ana", "Ben", "Cem"],
     "game": {"start_seat": 0},
     "steps": [
        {"t": 2.0, "snapshot": {"melds": ["R10 R11 R12"], "seats": {"1": ["QS QH QD"]},
                                "discards": ["7C"]}},
        {"t": 3.0, "press": "end_turn", "seat": 0},
        {"t": 9.0, "press": "out", "seat": 1},
        {"t": 12.0, "press": "score"}],
     "events": [... the true event log ...],
     "scores": [{"Ana": 12, "Ben": -5, "Cem": -7}]}

Presses are the board's and panel's buttons: ``end_turn`` (optional
``seat``), ``out`` (``seat``), ``exhausted``, ``score`` and ``undo``.
``game`` holds the fields of ``live.game.GameOptions``; this module keeps them
as given, and ``live.scenario`` makes the options of them.  Only parsing here:
``live.scenario`` plays a scenario through ``live.game.Game``, and the video
renderer (``studio.synth.scripted``) lays out its tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tabletop.engine.events import Event, EventError, event_from_json
from tabletop.engine.items import Item, parse_items, parse_melds
from tabletop.engine.variants import Variant, find_variant

PRESSES = ("end_turn", "out", "exhausted", "score", "undo")


class ScenarioError(ValueError):
    """A scenario that does not have the documented shape."""


@dataclass(frozen=True)
class Press:
    """A button pressed at ``t`` (one of :data:`PRESSES`), by ``seat`` where it names one."""

    t: float
    action: str
    seat: int | None = None


@dataclass(frozen=True)
class TableStep:
    """The table as it lies at ``t``: the shared ``melds`` (each in table order), the
    melds open in each seat's area (``seats``, by seat index), the ``discards`` (oldest
    first) and items lying in no zone (``unplaced``)."""

    t: float
    melds: tuple[tuple[Item, ...], ...] = ()
    seats: Mapping[int, tuple[tuple[Item, ...], ...]] = field(default_factory=dict)
    discards: tuple[Item, ...] = ()
    unplaced: tuple[Item, ...] = ()


Step = TableStep | Press


@dataclass(frozen=True)
class Scenario:
    variant: Variant
    players: tuple[str, ...]
    steps: tuple[Step, ...]
    game: Mapping[str, Any] = field(default_factory=dict)
    """The scenario's ``game`` object: ``live.game.GameOptions``' fields."""
    events: tuple[Event, ...] = ()
    """The true event log: what the game must publish, played through these steps."""
    scores: tuple[dict[str, int], ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def start_seat(self) -> int:
        """The seat that begins the first round."""
        return int(self.game.get("start_seat", 0))


def _melds(raw: Any, where: str) -> tuple[tuple[Item, ...], ...]:
    if isinstance(raw, str):
        raw = [raw] if raw.strip() else []
    if not isinstance(raw, Sequence):
        raise ScenarioError(f"{where}: melds are a list of strings, not {raw!r}")
    melds: list[tuple[Item, ...]] = []
    for text in raw:
        melds.extend(tuple(meld) for meld in parse_melds(str(text)))
    return tuple(m for m in melds if m)


def table_step_from_json(t: float, raw: Mapping[str, Any],
                         where: str = "snapshot") -> TableStep:
    """A TableStep from ``{"melds": [...], "seats": {"0": [...]}, "discards": "..."}``."""
    unknown = set(raw) - {"melds", "seats", "discards", "unplaced"}
    if unknown:
        raise ScenarioError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    seats_raw = raw.get("seats", {})
    if not isinstance(seats_raw, Mapping):
        raise ScenarioError(f"{where}: seats map a seat index to melds")
    try:
        seats = {int(k): _melds(v, f"{where} seat {k}") for k, v in seats_raw.items()}
    except ValueError as error:
        raise ScenarioError(f"{where}: {error}") from None
    discards = raw.get("discards", [])
    discard_text = discards if isinstance(discards, str) else " ".join(map(str, discards))
    unplaced = raw.get("unplaced", "")
    unplaced_text = unplaced if isinstance(unplaced, str) else " ".join(map(str, unplaced))
    return TableStep(
        t=t,
        melds=_melds(raw.get("melds", []), where),
        seats=seats,
        discards=tuple(parse_items(discard_text)),
        unplaced=tuple(parse_items(unplaced_text)),
    )


def _true_events(raw: Any) -> tuple[Event, ...]:
    if not isinstance(raw, list):
        raise ScenarioError(f"'events' is a list of events, not {raw!r}")
    events = []
    for number, event in enumerate(raw, 1):
        try:
            events.append(event_from_json(event))
        except EventError as error:
            raise ScenarioError(f"event {number} of 'events': {error}") from None
    return tuple(events)


def scenario_from_text(text: str, source: str) -> Scenario:
    """A Scenario from a scenario file's text; ``source`` names the file in errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ScenarioError(f"scenario {source!r} is not JSON: {error}") from None
    except RecursionError:
        raise ScenarioError(f"scenario {source!r} is nested too deep") from None
    return scenario_from_json(data)


def scenario_from_json(data: Any) -> Scenario:
    """A Scenario from a scenario's parsed JSON; ScenarioError when it is malformed."""
    if not isinstance(data, Mapping):
        raise ScenarioError("a scenario is a JSON object")
    for key in ("variant", "players", "steps"):
        if key not in data:
            raise ScenarioError(f"the scenario needs {key!r}")
    variant = find_variant(str(data["variant"]), data.get("options") or {})
    players = tuple(str(p) for p in data["players"])
    game = data.get("game") or {}
    if not isinstance(game, Mapping):
        raise ScenarioError(f"'game' is an object of game options, not {game!r}")
    steps: list[Step] = []
    for index, raw in enumerate(data["steps"]):
        where = f"step {index + 1}"
        if not isinstance(raw, Mapping) or "t" not in raw:
            raise ScenarioError(f"{where}: a step is an object with 't'")
        t = float(raw["t"])
        if "snapshot" in raw:
            steps.append(table_step_from_json(t, raw["snapshot"], where))
        elif raw.get("press") in PRESSES:
            seat = raw.get("seat")
            steps.append(Press(t, str(raw["press"]), None if seat is None else int(seat)))
        else:
            raise ScenarioError(f"{where}: needs 'snapshot' or 'press' (one of {PRESSES})")
    return Scenario(
        variant,
        players,
        tuple(steps),
        dict(game),
        _true_events(data.get("events", [])),
        tuple(dict(s) for s in data.get("scores", ())),
        data,
    )
