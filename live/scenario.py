"""Scripted games played through :class:`tabletop.live.game.Game`.

:func:`load_scenario` reads a scenario file (the JSON of :mod:`tabletop.engine.scenario`);
:func:`replay` runs one through a fresh game, and the ``scenario:FILE.json``
source of ``tabletop run`` replays its tables.  A step's table reaches the game
as the :class:`tabletop.live.snapshot.TableSnapshot` the camera side would commit
(:func:`snapshot_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tabletop.engine.scenario import (
    Scenario,
    ScenarioError,
    Step,
    TableStep,
    scenario_from_text,
    table_step_from_json,
)
from tabletop.live.bus import Event, EventBus
from tabletop.live.events import collector
from tabletop.live.game import Game, GameOptions
from tabletop.live.snapshot import TableSnapshot


def load_scenario(path: str | Path) -> Scenario:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ScenarioError(f"cannot read scenario {str(path)!r}: {error}") from None
    return scenario_from_text(text, str(path))


def game_options(scenario: Scenario) -> GameOptions:
    """The options of the scenario's ``game`` object."""
    try:
        return GameOptions(**scenario.game)
    except TypeError as error:
        raise ScenarioError(f"'game': {error}") from None


def snapshot_of(step: TableStep) -> TableSnapshot:
    """The committed snapshot of a step's table."""
    return TableSnapshot(t=step.t, melds=step.melds, seats=step.seats,
                         discards=step.discards, unplaced=step.unplaced)


def snapshot_from_json(t: float, raw: Mapping[str, Any],
                       where: str = "snapshot") -> TableSnapshot:
    """A TableSnapshot from ``{"melds": [...], "seats": {"0": [...]}, "discards": "..."}``."""
    return snapshot_of(table_step_from_json(t, raw, where))


def apply_step(game: Game, step: Step) -> None:
    if isinstance(step, TableStep):
        game.update(snapshot_of(step))
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


def replay(scenario: Scenario, bus: EventBus | None = None) -> tuple[Game, list[Event]]:
    """Run every step through a fresh Game: (the game, the events it published)."""
    bus = bus or EventBus()
    events, _ = collector(bus)
    game = Game(scenario.variant, scenario.players, bus, options=game_options(scenario))
    for step in scenario.steps:
        apply_step(game, step)
    return game, events
