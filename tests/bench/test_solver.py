"""The optimiser against rummikub-solver on game positions (a small sample of bench/solver.py)."""

from __future__ import annotations

from collections import Counter

from bench.positions import full_set, play_games
from bench.solver import compare, compare_hard, hard_positions, hard_report, named_positions
from tabletop.engine.items import JOKER, Joker
from tests.shared import needs

pytestmark = needs("rummikub_solver")


def test_agrees_with_the_reference_on_every_position() -> None:
    result = compare(play_games(seed=7, count=40))
    assert result["positions"] == 40
    assert result["disagreements"] == []


def test_the_named_hard_positions_have_the_shape_they_are_named_for() -> None:
    named = named_positions()
    first, second = named["12 melds, 89 tiles, rack 17"], named["86 tiles, rack 20 with a joker"]
    assert (len(first.table), len(first.table_items), len(first.rack)) == (12, 89, 17)
    assert (len(second.table_items), len(second.rack)) == (86, 20)
    assert sum(isinstance(item, Joker) for item in second.rack) == 1
    for position in (first, second):
        in_play = Counter(JOKER if isinstance(i, Joker) else i
                          for i in (*position.table_items, *position.rack))
        assert in_play == Counter(full_set())  # every tile of the set, each once


def test_hard_positions_agree_with_the_reference_in_both_objectives() -> None:
    positions = hard_positions(seed=11, count=6)
    assert all(60 <= len(p.table_items) <= 100 for p in positions)
    groups = compare_hard(named_positions(), positions)
    assert sum(len(group.ours) for group in groups.values()) == 2 * (6 + 2)
    assert {key: group.disagreements for key, group in groups.items()} == {
        key: [] for key in groups
    }
    lines = hard_report(groups)
    assert lines[0].startswith("| question | positions |") and len(lines) == 2 + len(groups)
