"""engine.partition.MeldPacking: the packing search on counts, proved against the item by
item searches it replaced (the extend-only search, with and without a table to lay off
onto, and a brute force over the rack's subsets for a table rebuilt), and its best play
so far."""

from __future__ import annotations

import gc
import itertools
import random
import time
from collections import Counter

import pytest

from tabletop.engine import budget, highs
from tabletop.engine.items import JOKER, Item, parse_items, parse_melds
from tabletop.engine.partition import (
    MeldPacking,
    _run_length_cap,
    can_be_melded,
    field_item,
    sorted_items,
)
from tabletop.engine.solver import ranking, slot_scorer, solve
from tabletop.engine.turns import check_turn
from tabletop.engine.variants import VARIANTS, Variant, find_variant
from tests.engine.item_search import ItemSearch, State, extend_by_items
from tests.engine.test_solver import random_case, random_exchange_case

EXTEND_ONLY = ("rommee", "rum500", "american-rummy", "remi", "rummikub-american",
               "rummikub-international", "wiener")


def _rack(variant: Variant, rng: random.Random, size: int, jokers: int) -> tuple[Item, ...]:
    family = variant.family
    pool = [field_item(family, i) for i in range(52) for _ in range(variant.copies_of_each)]
    rng.shuffle(pool)
    return (*pool[:size], *([JOKER] * min(jokers, variant.joker_count)))


def _reference(variant: Variant, rack: tuple[Item, ...], objective: str, need: int,
               need_run: bool, keep: int) -> tuple[int, int] | None:
    """The item-by-item extend-only search with no table (exact, and slow on long racks)."""
    search = ItemSearch(variant, (), objective, lay_off=False, max_placed=len(rack) - keep)
    return search.best(State(sorted_items(rack), 0, need, need_run, 0))


def _score(variant: Variant, readings: tuple, objective: str) -> tuple[int, int]:  # type: ignore[type-arg]
    count = sum(len(r.slots) for r in readings)
    value = sum(variant.meld_value(r) for r in readings)
    return (count, value) if objective == "tiles" else (value, count)


@pytest.mark.parametrize("variant_id", EXTEND_ONLY)
def test_the_packing_matches_the_item_search(variant_id: str) -> None:
    variant = find_variant(variant_id)
    rng = random.Random(variant_id)
    for _ in range(10):
        rack = _rack(variant, rng, rng.randint(8, 15), rng.randint(0, 3))
        objective = rng.choice(["tiles", "value"])
        opening = rng.random() < 0.4 and variant.table_rules.lays_out
        need = variant.initial_meld_required if opening else 0
        need_run = opening and variant.initial_meld_needs_run
        keep = rng.choice([0, 0, 1])
        expected = _reference(variant, rack, objective, need, need_run, keep)
        found = MeldPacking(variant, rack, slot_scorer(objective)).solve(need, need_run, keep)
        if expected is None:
            assert found is None, rack
            continue
        assert found is not None and found.optimal
        assert _score(variant, found.readings, objective) == expected, rack
        used = Counter(JOKER if s.is_joker else s.item for r in found.readings for s in r.slots)
        assert not used - Counter(rack)
        assert sum(used.values()) <= len(rack) - keep
        for reading in found.readings:
            assert variant.analyse(reading.resolved_items()).valid


def test_a_long_run_that_cannot_be_cut_is_laid_whole() -> None:
    # [remi] twice as many real tiles as jokers: JK JK R3 R4 R5 R6 is a run, but neither
    # JK JK R3 nor JK JK R3 R4 is, so the six go down together or not at all
    remi = find_variant("remi")
    assert _run_length_cap(remi, repr(remi), 2) >= 6
    play = solve(remi, parse_items("R3 R4 R5 R6 JK JK"))
    assert len(play.placed) == 6 and len(play.melds) == 1
    # without jokers a run is never needed longer than five: it splits into two
    assert _run_length_cap(find_variant("american-rummy"), "american", 0) == 5


def _brute_rebuild(variant: Variant, table: tuple[Item, ...], rack: tuple[Item, ...]) -> int:
    """Most rack items that fit with the whole table into legal melds (every subset)."""
    best = 0
    for size in range(len(rack), 0, -1):
        for subset in itertools.combinations(rack, size):
            if can_be_melded((*table, *subset), variant):
                return size
    return best


@pytest.mark.parametrize("seed", range(6))
def test_a_rebuilt_table_matches_the_brute_force(seed: int) -> None:
    raeuber = find_variant("raeuber")
    rng = random.Random(seed)
    melds = ["AS 2S 3S", "4H 5H 6H 7H", "9D 9C 9H", "JK 5C 6C", "QS QH JK", "8C 9C 10C",
             "KD KS KC", "2D 3D 4D"]
    table = parse_melds(" | ".join(rng.sample(melds, 3)))
    on_table = Counter(item for meld in table for item in meld)
    pool = [field_item(raeuber.family, i) for i in range(52) for _ in range(2)]
    pool = list((Counter(pool) - on_table).elements())
    rng.shuffle(pool)
    rack = tuple(pool[:6])
    flat = tuple(item for meld in table for item in meld)
    expected = _brute_rebuild(raeuber, flat, rack)
    play = solve(raeuber, rack, table)
    assert play.optimal and len(play.placed) == expected, (table, rack)
    if play.placed:
        assert check_turn(raeuber, table, play.melds, play.placed, opened=True).valid


def test_out_of_time_the_packing_answers_with_its_best_so_far() -> None:
    rommee = find_variant("rommee")
    rack = _rack(rommee, random.Random(4), 28, 4)
    # the process's one-time work (the candidate melds' analysis, a collection of what
    # earlier tests left) is not the search's: done before the clock starts
    MeldPacking(rommee, _rack(rommee, random.Random(5), 8, 0), slot_scorer("tiles")).solve()
    gc.collect()
    with budget.limit(0.02):
        started = time.monotonic()
        try:
            found = MeldPacking(rommee, rack, slot_scorer("tiles")).solve()
        except budget.OutOfTime:
            found = None  # not a single play in time: the caller falls back
        assert time.monotonic() - started < 0.02 * 1.1 + 0.05
    if found is not None and not found.optimal:
        used = Counter(JOKER if s.is_joker else s.item for r in found.readings for s in r.slots)
        assert not used - Counter(rack)
        for reading in found.readings:
            assert rommee.analyse(reading.resolved_items()).valid
    exact = MeldPacking(rommee, rack, slot_scorer("tiles")).solve()
    assert exact is not None and exact.optimal
    if found is not None:
        assert found.score <= exact.score


@pytest.mark.parametrize("steps", [40, 400, 4000])
def test_stopped_early_the_packing_answers_with_a_legal_play(
    steps: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the budget runs out after so many steps of the search: the answer is the best play
    # found by then, legal, and no better than the best
    rommee = find_variant("rommee")
    rack = _rack(rommee, random.Random(5), 30, 3)
    exact = MeldPacking(rommee, rack, slot_scorer("tiles")).solve()
    assert exact is not None and exact.optimal
    packing = MeldPacking(rommee, rack, slot_scorer("tiles"))
    calls = 0

    def check() -> None:
        nonlocal calls
        calls += 1
        if calls > steps:
            raise budget.OutOfTime

    monkeypatch.setattr(budget, "check", check)
    found = packing.solve()
    assert found is not None
    if not found.optimal:
        assert found.score <= exact.score
    else:
        assert found.score == exact.score
    used = Counter(JOKER if s.is_joker else s.item for r in found.readings for s in r.slots)
    assert not used - Counter(rack)
    for reading in found.readings:
        assert rommee.analyse(reading.resolved_items()).valid
    assert found.score == sum(
        slot_scorer("tiles")(0, rommee.slot_value(r, s)) for r in found.readings for s in r.slots
    )


LAYS_OFF = tuple(v for v in EXTEND_ONLY if v != "wiener")


@pytest.mark.parametrize("variant_id", LAYS_OFF)
@pytest.mark.parametrize("exchange", [False, True], ids=["lay-off", "exchange"])
def test_lay_offs_packed_match_the_item_search(variant_id: str, exchange: bool) -> None:
    """Racks of 8-16 beside tables of 1-3 melds (with a joker and an item it stands for,
    where ``exchange``): the packing search's play scores what the item-by-item search
    proves best, and the turn check accepts it."""
    variant = find_variant(variant_id)
    rng = random.Random(f"{variant_id}-{exchange}")
    make = random_exchange_case if exchange else random_case
    for _ in range(8):
        rack, table = make(variant, rng, rng.randint(8, 16))
        objective = rng.choice(["tiles", "value"])
        keep = rng.choice([0, 0, 1])
        expected = extend_by_items(variant, rack, table, objective, keep)
        play = solve(variant, rack, table, objective=objective, keep=keep)
        assert play.optimal
        assert ranking(play, objective) == ranking(expected, objective), (rack, table)
        assert len(play.placed) <= len(rack) - keep
        assert not Counter(play.placed) - Counter(rack)
        if play.placed:
            assert check_turn(variant, table, play.melds, play.placed, opened=True).valid


@pytest.mark.parametrize("variant_id", sorted(VARIANTS))
def test_a_run_moved_from_the_first_suit_is_the_variants_own_reading(variant_id: str) -> None:
    # the packing search analyses each run once, in the first suit, and moves it to the
    # others: every run of every length, place and joker pattern must read as the
    # variant's own analysis reads it in that suit
    from tabletop.engine.items import all_naturals
    from tabletop.engine.partition import _in_suit, _run_code

    variant = find_variant(variant_id)
    packing = MeldPacking(variant, list(all_naturals(variant.family)) * 2 + [JOKER] * 2,
                          slot_scorer("tiles"))
    rules = variant.meld_rules
    compared = 0
    for start in range(1, rules.max_position + 1):
        for length in range(rules.min_size, min(rules.max_run_length, 13) + 1):
            if start + length - 1 > rules.max_position:
                continue
            for jokers in range(0, 3):
                for places in itertools.combinations(range(length), jokers):
                    jokers_at = sum(1 << place for place in places)
                    first = packing._analysed(_run_code(0, start, length, jokers_at))
                    for suit in (1, 2, 3):
                        own = packing._analysed(_run_code(suit, start, length, jokers_at))
                        moved = None if first is None else _in_suit(first, suit,
                                                                    variant.family)
                        assert (own is None) == (moved is None)
                        if own is not None and moved is not None:
                            assert (own.reading, own.mask, own.opening, own.slots,
                                    own.is_run) == (moved.reading, moved.mask,
                                                    moved.opening, moved.slots,
                                                    moved.is_run)
                            compared += 1
    assert compared > 100


@pytest.mark.parametrize("keep", [0, 1])
def test_where_the_search_proves_nothing_first_the_integer_programme_answers(
    monkeypatch: pytest.MonkeyPatch, keep: int,
) -> None:
    """The lay-off search runs for a moment before the integer programme of its relaxation
    takes over; with no moment at all, every position whose relaxation is fractional is
    the programme's, and its play is proved best (as the item-by-item search scores it) and
    legal."""
    from tabletop.engine import partition

    solved = highs.solve
    programmes: list[int] = []

    def counted(arrays: tuple[object, ...], **kwargs: object) -> highs.Solved:
        programmes.append(bool(kwargs.get("integer")))
        return solved(arrays, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(partition, "SEARCH_FIRST", 0.0)
    monkeypatch.setattr(partition.highs, "solve", counted)
    variant = find_variant("rommee")
    rng = random.Random(f"race-{keep}")
    answered = 0
    for _ in range(12):
        rack, table = random_case(variant, rng, rng.randint(10, 16))
        objective = rng.choice(["tiles", "value"])
        programmes.clear()
        play = solve(variant, rack, table, objective=objective, keep=keep)
        expected = extend_by_items(variant, rack, table, objective, keep)
        assert play.optimal
        assert ranking(play, objective) == ranking(expected, objective), (rack, table)
        assert len(play.placed) <= len(rack) - keep
        if play.placed:
            assert check_turn(variant, table, play.melds, play.placed, opened=True).valid
        answered += any(programmes)
    assert answered  # the relaxation was fractional, and the programme answered, somewhere


def test_a_play_the_search_found_but_did_not_prove_is_proved_by_the_programme(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the search's moment ends with a play it has not proved, the integer programme
    seeks only better plays; finding none proves the search's play best."""
    from tabletop.engine import partition

    search = MeldPacking._search
    solved = highs.solve
    cutoffs: list[tuple[object, int]] = []

    def unproved(self: MeldPacking, *args: object) -> object:
        found = search(self, *args)  # type: ignore[arg-type]
        if found is None:
            return None
        # the search's best, as a moment that ran out before the proof would leave it
        return partition.PackResult(found.readings, found.score, False, found.moves)

    def recorded(arrays: tuple[object, ...], **kwargs: object) -> highs.Solved:
        answer = solved(arrays, **kwargs)  # type: ignore[arg-type]
        if kwargs.get("integer"):
            cutoffs.append((kwargs.get("cutoff"), answer.status))
        return answer

    monkeypatch.setattr(MeldPacking, "_search", unproved)
    monkeypatch.setattr(partition.highs, "solve", recorded)
    variant = find_variant("rommee")
    rng = random.Random("cutoff")
    proved_by_none_better = 0
    for _ in range(10):
        rack, table = random_case(variant, rng, rng.randint(10, 16))
        objective = rng.choice(["tiles", "value"])
        cutoffs.clear()
        play = solve(variant, rack, table, objective=objective)
        expected = extend_by_items(variant, rack, table, objective, 0)
        assert ranking(play, objective) == ranking(expected, objective), (rack, table)
        assert all(cutoff is not None for cutoff, _ in cutoffs)
        proved_by_none_better += any(status == highs.INFEASIBLE for _, status in cutoffs)
    assert proved_by_none_better
