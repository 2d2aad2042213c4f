"""The optimiser against rummikub-solver on game positions (a small sample of bench/solver.py)."""

from __future__ import annotations

from collections import Counter

from bench.positions import full_set, play_games
from bench.solver import (
    compare,
    compare_hard,
    compare_lay_offs,
    hard_positions,
    hard_report,
    lay_off_milp,
    lay_off_positions,
    named_positions,
)
from tabletop.engine.items import JOKER, Joker, parse_items, parse_melds
from tabletop.engine.variants import find_variant
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


def test_lay_offs_agree_with_the_integer_programme() -> None:
    result = compare_lay_offs(seed=3, count=6)
    assert len(result["ours"]) == len(result["theirs"]) == 6
    assert result["disagreements"] == []
    for rack, table, _ in lay_off_positions(seed=3, count=6):
        assert 26 <= len(rack) <= 33 and len(table) == 4
        assert not any(item.is_joker for meld in table for item in meld)


def test_the_integer_programme_lays_one_bundle_per_table_meld() -> None:
    # 4H and 8H both fit 5H 6H 7H, and so would a second 4H onto a second copy of the
    # meld; with one table meld, one bundle: 4H 8H (2 cards, 12 points), not more
    rommee = find_variant("rommee")
    table = tuple(parse_melds("5H 6H 7H"))
    assert lay_off_milp(rommee, tuple(parse_items("4H 4H 8H")), table, "tiles") == (2, 12)
    assert lay_off_milp(rommee, tuple(parse_items("4H 4H 8H")), table, "value") == (12, 2)
