"""Scripted games: snapshots and button presses with their true event log.

A scenario is a JSON file::

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
:func:`replay` runs a scenario through :class:`live.game.Game`; the
``scenario:FILE.json`` source of ``tabletop run`` replays its snapshots.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.items import parse_items, parse_melds
from engine.variants import Variant, find_variant
from live.bus import Event, EventBus
from live.events import collector
from live.game import Game, GameOptions
from live.snapshot import TableSnapshot

PRESSES = ("end_turn", "out", "exhausted", "score", "undo")


class ScenarioError(ValueError):
    """A scenario file that does not have the documented shape."""


@dataclass(frozen=True)
class Press:
    t: float
    action: str
    seat: int | None = None


Step = TableSnapshot | Press


@dataclass(frozen=True)
class Scenario:
    variant: Variant
    players: tuple[str, ...]
    options: GameOptions
    steps: tuple[Step, ...]
    events: tuple[Event, ...] = ()
    scores: tuple[dict[str, int], ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


def _melds(raw: Any, where: str) -> tuple[tuple[Any, ...], ...]:
    if isinstance(raw, str):
        raw = [raw] if raw.strip() else []
    if not isinstance(raw, Sequence):
        raise ScenarioError(f"{where}: melds are a list of strings, not {raw!r}")
    melds: list[tuple[Any, ...]] = []
    for text in raw:
        melds.extend(parse_melds(str(text)))
    return tuple(tuple(m) for m in melds if m)


def snapshot_from_json(t: float, raw: Mapping[str, Any], where: str = "snapshot") -> TableSnapshot:
    """A TableSnapshot from ``{"melds": [...], "seats": {"0": [...]}, "discards": "..."}``."""
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
    return TableSnapshot(
        t=t,
        melds=_melds(raw.get("melds", []), where),
        seats=seats,
        discards=tuple(parse_items(discard_text)),
        unplaced=tuple(parse_items(unplaced_text)),
    )


def scenario_from_json(data: Any) -> Scenario:
    if not isinstance(data, Mapping):
        raise ScenarioError("a scenario is a JSON object")
    for key in ("variant", "players", "steps"):
        if key not in data:
            raise ScenarioError(f"the scenario needs {key!r}")
    variant = find_variant(str(data["variant"]), data.get("options") or {})
    players = tuple(str(p) for p in data["players"])
    options = GameOptions(**(data.get("game") or {}))
    steps: list[Step] = []
    for index, raw in enumerate(data["steps"]):
        where = f"step {index + 1}"
        if not isinstance(raw, Mapping) or "t" not in raw:
            raise ScenarioError(f"{where}: a step is an object with 't'")
        t = float(raw["t"])
        if "snapshot" in raw:
            steps.append(snapshot_from_json(t, raw["snapshot"], where))
        elif raw.get("press") in PRESSES:
            seat = raw.get("seat")
            steps.append(Press(t, str(raw["press"]), None if seat is None else int(seat)))
        else:
            raise ScenarioError(f"{where}: needs 'snapshot' or 'press' (one of {PRESSES})")
    return Scenario(
        variant,
        players,
        options,
        tuple(steps),
        tuple(data.get("events", ())),
        tuple(dict(s) for s in data.get("scores", ())),
        data,
    )


def load_scenario(path: str | Path) -> Scenario:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ScenarioError(f"cannot read scenario {str(path)!r}: {error}") from None
    return scenario_from_json(data)


def apply_step(game: Game, step: Step) -> None:
    if isinstance(step, TableSnapshot):
        game.update(step)
    elif step.action == "end_turn":
        game.end_turn(step.seat, t=step.t)
    elif step.action == "out":
        if step.seat is None:
            raise ScenarioError(f"'out' at t={step.t} needs a seat")
        game.out(step.seat, t=step.t)
    elif step.action == "exhausted":
        game.exhausted(t=step.t)
    elif step.action == "score":
        game.score(t=step.t)
    else:
        game.undo(t=step.t)


def iter_steps(scenario: Scenario) -> Iterator[Step]:
    yield from scenario.steps


def replay(scenario: Scenario, bus: EventBus | None = None) -> tuple[Game, list[Event]]:
    """Run every step through a fresh Game: (the game, the events it published)."""
    bus = bus or EventBus()
    events, _ = collector(bus)
    game = Game(scenario.variant, scenario.players, bus, options=scenario.options)
    for step in scenario.steps:
        apply_step(game, step)
    return game, events
