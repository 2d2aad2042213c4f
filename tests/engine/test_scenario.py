"""Scripted games parsed by engine.scenario, and played through live.scenario."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tabletop.engine.items import format_items
from tabletop.engine.scenario import Press, ScenarioError, TableStep, scenario_from_json
from tabletop.live.scenario import game_options, snapshot_of
from tests.shared import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]


def test_a_scenario_parses_into_tables_and_presses() -> None:
    scenario = scenario_from_json({
        "variant": "rommee", "players": ["Ana", "Ben"], "game": {"start_seat": 1},
        "steps": [{"t": 2.0, "snapshot": {"melds": ["10H JH QH"], "seats": {"1": ["KS KD KC"]},
                                          "discards": "7C"}},
                  {"t": 3.0, "press": "end_turn", "seat": 1}]})
    table, press = scenario.steps
    assert isinstance(table, TableStep) and press == Press(3.0, "end_turn", 1)
    assert [format_items(meld) for meld in table.melds] == ["10H JH QH"]
    assert [format_items(meld) for meld in table.seats[1]] == ["KS KD KC"]
    assert scenario.start_seat == 1 and game_options(scenario).start_seat == 1
    snapshot = snapshot_of(table)
    assert (snapshot.t, snapshot.melds, snapshot.discards) == (2.0, table.melds, table.discards)


@pytest.mark.parametrize(("data", "message"), [
    ([], "a scenario is a JSON object"),
    ({"variant": "sabra", "players": ["A"]}, "needs 'steps'"),
    ({"variant": "sabra", "players": ["A"], "steps": [{"t": 1, "press": "shout"}]},
     "needs 'snapshot' or 'press'"),
    ({"variant": "sabra", "players": ["A"], "steps": [{"t": 1, "snapshot": {"hand": []}}]},
     "unknown keys hand"),
    ({"variant": "sabra", "players": ["A"], "steps": [], "events": {"seq": 1}},
     "'events' is a list of events"),
    ({"variant": "sabra", "players": ["A"], "steps": [],
      "events": [{"seq": 1, "t": 0, "type": "table", "seat": None, "melds": []},
                 {"seq": 2, "t": 0, "type": "meld_laid", "seat": 0}]},
     "event 2 of 'events': meld_laid event 2 lacks meld"),
])
def test_a_malformed_scenario_is_refused(data: object, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        scenario_from_json(data)


def test_unknown_game_options_are_refused_when_played() -> None:
    scenario = scenario_from_json({"variant": "sabra", "players": ["A", "B"],
                                   "game": {"start_square": 1}, "steps": []})
    with pytest.raises(ScenarioError, match="start_square"):
        game_options(scenario)


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIOS.glob("*.json")))
def test_every_sample_scenario_parses(name: str) -> None:
    scenario = scenario_from_json(json.loads((SCENARIOS / name).read_text(encoding="utf-8")))
    assert scenario.steps and scenario.players


def test_parsing_a_scenario_needs_nothing_of_the_live_game() -> None:
    code = ("import sys, engine.scenario; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('live', 'vision')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, check=True)
    assert result.stdout.strip() == "[]"
