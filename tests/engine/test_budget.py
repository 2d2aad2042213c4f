"""The optimiser's time budget: hard positions are answered within it, saying whether the
answer is optimal; easy ones are still solved exactly."""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from tabletop.engine import budget
from tabletop.engine.items import Item, parse_items, parse_melds
from tabletop.engine.play import Play, SolveError
from tabletop.engine.solver import _melds_from_the_rack, solve
from tabletop.engine.turns import check_turn
from tabletop.engine.variants import find_variant

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
OVERRUN = 1.10
"""No call may run past its budget by more than 10 %..."""
GRACE_S = 0.05
"""...plus the time to build the answer and to be scheduled again on a busy machine."""


def _cards(seed: int, count: int, jokers: int, decks: int = 2) -> tuple[Item, ...]:
    deck = [rank + suit for rank in RANKS for suit in "SHDC"] * decks
    random.Random(seed).shuffle(deck)
    return parse_items(" ".join(deck[:count] + ["JK"] * jokers))


def _tiles(seed: int, count: int, jokers: int) -> tuple[Item, ...]:
    bag = [f"{colour}{number}" for colour in "KBOR" for number in range(1, 14)] * 2
    random.Random(seed).shuffle(bag)
    return parse_items(" ".join(bag[:count] + ["JK"] * jokers))


RAEUBER_TABLE = parse_melds(
    "AS 2S 3S | 4S 5S 6S | 7S 8S 9S | AH 2H 3H | 4H 5H 6H | 8H 9H 10H | AD 2D 3D | 4D 5D 6D"
    " | 7D 8D 9D | AC 2C 3C | JK 5C 6C | 9C JK JC | QS QH JK | 7C 7H JK"
)
HARD = [
    # id, rack, table, initial, objective: positions that took minutes before the packing
    # search, and now take a few tenths of a second
    ("raeuber", parse_items("10S JS QS KS 10H JH QH KH 10D JD QD KD 8C"), RAEUBER_TABLE,
     False, "tiles"),
    ("rommee", _cards(2, 27, 3), (), False, "tiles"),
    ("rommee", _cards(3, 28, 2), (), True, "value"),
]


def _ranking(play: Play, objective: str) -> tuple[int, ...]:
    count = len(play.placed)
    if objective == "tiles":
        return (int(play.meets_initial), count, play.value)
    return (int(play.meets_initial), play.value, count)


@pytest.mark.parametrize(("variant_id", "rack", "table", "initial", "objective"), HARD)
@pytest.mark.parametrize("seconds", [0.02, 0.2, 1.0])
def test_a_hard_position_is_answered_within_its_budget(
    variant_id: str, rack: tuple[Item, ...], table: tuple[tuple[Item, ...], ...],
    initial: bool, objective: str, seconds: float,
) -> None:
    variant = find_variant(variant_id)
    started = time.monotonic()
    play = solve(variant, rack, table, initial=initial, objective=objective, budget_s=seconds)
    elapsed = time.monotonic() - started
    assert elapsed <= seconds * OVERRUN + GRACE_S
    assert play.to_json()["optimal"] is play.optimal
    if play.placed:
        assert check_turn(variant, table, play.melds, play.placed, opened=not initial).valid
    if seconds >= 1.0:
        # never worse than the rack's own melds beside the table (the answer out of time
        # of old), which a twentieth of a second finds
        fallback = _melds_from_the_rack(variant, rack, table, initial, 0, 60.0, objective)
        assert _ranking(play, objective) >= _ranking(fallback, objective)
    exact = solve(variant, rack, table, initial=initial, objective=objective)
    assert _ranking(play, objective) <= _ranking(exact, objective)
    if play.optimal:
        assert _ranking(play, objective) == _ranking(exact, objective)


@pytest.mark.parametrize(("variant_id", "rack", "table", "initial", "objective"), HARD)
def test_a_hard_position_is_solved_exactly_within_a_few_seconds(
    variant_id: str, rack: tuple[Item, ...], table: tuple[tuple[Item, ...], ...],
    initial: bool, objective: str,
) -> None:
    # each takes under half a second on its own; the budget leaves room for a busy machine
    play = solve(find_variant(variant_id), rack, table, initial=initial, objective=objective,
                 budget_s=10.0)
    assert play.optimal


def test_the_hard_raeuber_position_rebuilds_the_table() -> None:
    # the rack's own four sets beside the table place 12; rebuilt, the table takes all 13
    variant = find_variant("raeuber")
    rack = HARD[0][1]
    play = solve(variant, rack, RAEUBER_TABLE)
    assert play.optimal and len(play.placed) == 13
    assert check_turn(variant, RAEUBER_TABLE, play.melds, play.placed, opened=True).valid


@pytest.mark.parametrize("seconds", [0.0005, 0.002, 0.01])
def test_a_tiny_budget_still_answers_the_racks_own_melds(seconds: float) -> None:
    # a hint that found its worker late searches a few hundredths of a second; the
    # fallback's own least time finds the rack's four runs however little is left
    variant_id, rack, table, initial, objective = HARD[0]
    variant = find_variant(variant_id)
    started = time.monotonic()
    play = solve(variant, rack, table, initial=initial, objective=objective, budget_s=seconds)
    assert time.monotonic() - started <= seconds * OVERRUN + GRACE_S
    fallback = _melds_from_the_rack(variant, rack, table, initial, 0, 60.0, objective)
    assert len(fallback.placed) == 12
    assert _ranking(play, objective) >= _ranking(fallback, objective)


@pytest.mark.parametrize(
    ("variant_id", "rack", "table"),
    [
        ("sabra", _tiles(1, 20, 2), ()),
        ("rummikub-american", _tiles(2, 22, 1), ()),
        ("remi", _tiles(3, 24, 2), ()),
        ("rum500", _cards(4, 24, 2, decks=1), ()),
        ("american-rummy", parse_items(
            " ".join(f"{rank}{suit}" for rank in RANKS[:7] for suit in "SHDC")), ()),
        ("wiener", _cards(5, 11, 2), ()),
        ("rommee", _cards(6, 28, 4), ()),
        ("raeuber", _cards(7, 13, 0), RAEUBER_TABLE),
        # a table to lay off onto: the extend-only search with its best play so far
        ("rommee", _cards(8, 24, 2), parse_melds("5S 6S 7S | 9H 9D 9C | JK 3D 4D")),
    ],
)
@pytest.mark.parametrize("seconds", [0.05, 0.3])
def test_no_variant_overruns_its_budget(
    variant_id: str, rack: tuple[Item, ...], table: tuple[tuple[Item, ...], ...],
    seconds: float,
) -> None:
    variant = find_variant(variant_id)
    rack = tuple(item for item in rack if not any(item in meld for meld in table)) \
        if variant_id == "raeuber" else rack
    started = time.monotonic()
    play = solve(variant, rack, table, budget_s=seconds)
    assert time.monotonic() - started <= seconds * OVERRUN + GRACE_S
    if play.placed and variant.table_rules.lays_out:
        assert check_turn(variant, table, play.melds, play.placed, opened=True).valid


def test_out_of_time_the_extend_only_search_answers_with_its_best_play() -> None:
    # a 30-card rack and a table to lay off onto: far from finished in 0.3 s, the answer is
    # the best play found by then (legal), never less than the rack's own melds (found in
    # the first quarter of the budget)
    variant = find_variant("rommee")
    table = parse_melds("5S 6S 7S | 9H 9D 9C | JK 3D 4D | 10C JC QC")
    rack = tuple(
        item for item in _cards(9, 30, 2)
        if Counter([*_cards(9, 30, 2), *(i for m in table for i in m)])[item] <= 2
    )
    play = solve(variant, rack, table, budget_s=0.3)
    if play.placed:
        assert check_turn(variant, table, play.melds, play.placed, opened=True).valid
    fallback = _melds_from_the_rack(variant, rack, table, False, 0, 60.0, "tiles")
    assert _ranking(play, "tiles") >= _ranking(fallback, "tiles")
    exact = solve(variant, rack, table)
    assert exact.optimal and _ranking(exact, "tiles") >= _ranking(play, "tiles")


def test_an_easy_position_is_still_solved_exactly() -> None:
    sabra = find_variant("sabra")
    rack, table = parse_items("R10 R11 R12 K1"), parse_melds("R7 R8 R9")
    exact = solve(sabra, rack, table)
    budgeted = solve(sabra, rack, table, budget_s=5.0)
    assert budgeted == exact and budgeted.optimal is True
    assert [str(item) for item in budgeted.placed] == ["R10", "R11", "R12"]


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
def test_a_budget_must_be_positive(seconds: float) -> None:
    with pytest.raises(SolveError, match="positive number of seconds"):
        solve(find_variant("sabra"), parse_items("R1"), budget_s=seconds)


def test_a_share_of_a_spent_budget_is_spent_at_once() -> None:
    # what is left of a spent budget is 0 s: a search given a share of it stops at once
    with budget.limit(0.0), pytest.raises(budget.OutOfTime):
        budget.check()
    for seconds in (-0.1, float("nan")):
        with pytest.raises(ValueError, match="number of seconds"), budget.limit(seconds):
            pass


def test_the_budget_applies_inside_its_block_only() -> None:
    assert budget.remaining() is None
    with budget.limit(10.0):
        left = budget.remaining()
        assert left is not None and 9.0 < left <= 10.0
        with budget.limit(0.001):
            time.sleep(0.01)
            with pytest.raises(budget.OutOfTime):
                budget.check()
        assert budget.remaining() is not None and budget.remaining() > 9.0  # type: ignore[operator]
    assert budget.remaining() is None
    budget.check()  # no budget: never raises


def _sabra_crowded_table() -> tuple[tuple[tuple[Item, ...], ...], tuple[Item, ...]]:
    """87 tiles on the table in runs, 17 of the rest and a joker on the rack: asked for the
    most value, a hard case for the exact search."""
    rng = random.Random(3)
    runs = [" ".join(f"{colour}{n}" for n in range(a, b + 1))
            for _ in range(2) for colour in "KBOR" for a, b in ((1, 4), (5, 8), (9, 13))]
    rng.shuffle(runs)
    table = runs[:20]
    rest = [f"{colour}{n}" for colour in "KBOR" for n in range(1, 14)] * 2
    for tile in " ".join(table).split():
        rest.remove(tile)
    rng.shuffle(rest)
    return parse_melds(" | ".join(table)), parse_items(" ".join([*rest[:17], "JK"]))


def test_sabra_answers_with_the_best_play_found_in_time() -> None:
    sabra = find_variant("sabra")
    table, rack = _sabra_crowded_table()
    started = time.monotonic()
    quick = solve(sabra, rack, table, objective="value", budget_s=0.3)
    assert time.monotonic() - started <= 0.3 * OVERRUN + GRACE_S
    exact = solve(sabra, rack, table, objective="value")
    assert exact.optimal
    assert 0 < quick.value <= exact.value
    assert not quick.optimal or quick.value == exact.value
    assert check_turn(sabra, table, quick.melds, quick.placed, opened=True).valid


@pytest.mark.parametrize("rack", [
    # a rebuilt table whose search proves its answer in tenths of a second, where the
    # integer programme racing it takes seconds alone
    "JD QS 4D 6D JS 4C 10H 8S 8C KS 6S 5S 10D",
    "KH 10D 4S 9C 5D KC 7C JS 9D 10C KD 7D JH",
])
def test_a_race_the_search_wins_leaves_no_programme_running(rack: str) -> None:
    import threading

    variant = find_variant("raeuber")
    raced: list[threading.Thread] = []
    started = threading.Thread.start

    def recorded(thread: threading.Thread) -> None:
        if thread.name == "packing programme":
            raced.append(thread)
        started(thread)

    threading.Thread.start = recorded  # type: ignore[method-assign]
    try:
        play = solve(variant, parse_items(rack), RAEUBER_TABLE)
    finally:
        threading.Thread.start = started  # type: ignore[method-assign]
    assert play.optimal
    assert raced
    for thread in raced:
        thread.join(0.5)  # stopped at HiGHS's next check, not at its end seconds later
        assert not thread.is_alive()
