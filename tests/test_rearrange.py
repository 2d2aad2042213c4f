"""The rearrangement solver against an exhaustive search, and its answers' legality."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from engine import find_variant
from engine.items import JOKER, Color, Item, Joker, Tile, parse_items, parse_melds
from engine.partition import can_be_melded
from engine.rearrange import arrange
from engine.state import TableState

SABRA = find_variant("sabra")
COLOURS = list(Color)


def bare(item: Item) -> Item:
    return JOKER if isinstance(item, Joker) else item


def random_position(rng: random.Random, melds: int, rack_size: int, jokers: int):
    pool = Counter({Tile(c, n): 2 for c in COLOURS for n in range(1, 14)})
    table: list[Item] = []
    for _ in range(melds):
        if rng.random() < 0.6:
            colour, start = rng.choice(COLOURS), rng.randint(1, 11)
            meld = [Tile(colour, n) for n in range(start, start + rng.randint(3, 4)) if n <= 13]
        else:
            number = rng.randint(1, 13)
            meld = [Tile(c, number) for c in rng.sample(COLOURS, rng.randint(3, 4))]
        if len(meld) >= 3 and all(pool[t] > 0 for t in meld):
            pool.subtract(meld)
            table.extend(meld)
    rest = list(pool.elements())
    rack: list[Item] = rng.sample(rest, rack_size)
    table_jokers = rng.randint(0, jokers)
    rack.extend([JOKER] * (jokers - table_jokers))
    if table_jokers and table:
        # a joker on the table replaces one of its tiles, which goes back to the pool
        for _ in range(table_jokers):
            table[rng.randrange(len(table))] = JOKER
    return table, rack


def brute_force(table: list[Item], rack: list[Item], objective: str) -> int | None:
    best = None
    for size in range(len(rack), -1, -1):
        for chosen in set(itertools.combinations(sorted(rack, key=str), size)):
            if can_be_melded([*table, *chosen], SABRA) if (table or chosen) else True:
                score = size if objective == "tiles" else None
                if objective == "value":
                    # a joker's value depends on where it goes: leave value cases to the DP's
                    # own check below
                    continue
                best = score if best is None else max(best, score)
        if best is not None and objective == "tiles":
            return best
    return best


def check_arrangement(table: list[Item], arrangement) -> None:
    laid = Counter(bare(item) for meld in arrangement.melds for item in meld)
    assert laid == Counter(bare(item) for item in table) + Counter(map(bare, arrangement.placed))
    assert TableState.from_melds(SABRA, arrangement.melds).problems() == []


@pytest.mark.parametrize("seed", range(60))
def test_tiles_objective_matches_exhaustive_search(seed: int) -> None:
    rng = random.Random(seed)
    table, rack = random_position(rng, melds=rng.randint(0, 3), rack_size=rng.randint(2, 6),
                                  jokers=rng.randint(0, 2))
    if table and not can_be_melded(table, SABRA):
        pytest.skip("the random joker made the table impossible")
    expected = brute_force(table, rack, "tiles")
    arrangement = arrange(table, rack)
    assert arrangement is not None
    assert arrangement.score == expected, (table, rack)
    check_arrangement(table, arrangement)


@pytest.mark.parametrize(
    ("table", "rack", "placed"),
    [
        # [sabra] Sätze: "drei oder vier Spielsteinen derselben Zahl und verschiedener Farben":
        # R6 R7 extend the run, but a second K7 cannot join the set of sevens
        ("R3 R4 R5 | K7 B7 O7", "R6 R7 K7", 2),
        # [sabra] "die Spielsteine mit der 1 in Folgen immer niedrig": R12 R13 R1 is no run
        ("R11 R12 R13", "R1", 0),
        # the table may be rebuilt: K5 K6 K7 + K8 from the rack, and B8 O8 with R8 from it
        ("K5 K6 K7 K8 | B8 O8 R8", "K9 B9 O9", 3),
        # two jokers from the rack can stand together ("zwei Joker ... sollte es erlaubt sein")
        ("", "R5 JK JK", 3),
    ],
)
def test_known_answers(table: str, rack: str, placed: int) -> None:
    table_items = [item for meld in parse_melds(table) for item in meld] if table else []
    arrangement = arrange(table_items, parse_items(rack))
    assert arrangement is not None
    assert len(arrangement.placed) == placed
    check_arrangement(table_items, arrangement)


def test_impossible_table_gives_none() -> None:
    assert arrange(parse_items("R3 R4"), parse_items("K9")) is None


def test_value_objective_prefers_points() -> None:
    # R13 can go to the run R11 R12 R13 (36) or the set K13 B13 R13 (39): three tiles either
    # way, so "value" decides for the set
    arrangement = arrange([], parse_items("R11 R12 R13 K13 B13"), objective="value")
    assert arrangement is not None
    assert arrangement.score == 39
    assert sorted(map(str, arrangement.placed)) == ["B13", "K13", "R13"]
