"""Decoding a table under the rules (live.decoding): exact, legal, possible, reported."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from tabletop.engine.items import parse_item
from tabletop.engine.variants import find_variant
from tabletop.live.decoding import (
    EXTRA_COPY_COST,
    FLOOR,
    ILLEGAL_COST,
    KEEP_COST,
    MIN_ROW,
    Kept,
    LegalityCache,
    _options,
    decode_table,
    ranked_labellings,
)

SABRA = find_variant("sabra")


def test_labellings_come_cheapest_first_and_each_once() -> None:
    generator = random.Random(5)
    for _ in range(20):
        options = [sorted(((f"L{i}{j}", generator.uniform(0, 4)) for j in
                           range(generator.randint(1, 4))), key=lambda kv: kv[1])
                   for i in range(generator.randint(1, 5))]
        ranked = list(ranked_labellings(options))
        costs = [cost for cost, _ in ranked]
        assert costs == sorted(costs)
        every = {tuple(lab for lab, _ in combo): sum(c for _, c in combo)
                 for combo in itertools.product(*options)}
        assert len(ranked) == len(every) == len({labels for _, labels in ranked})
        for cost, labels in ranked:
            assert cost == pytest.approx(every[labels])


@pytest.mark.parametrize(("shares", "expected"), [
    # the real-photo misread of the replays: an R7 read R1 in the middle of a red run
    ([{"R5": 0.99}, {"R6": 0.97}, {"R1": 0.8, "R7": 0.15}, {"R8": 0.99}],
     ["R5", "R6", "R7", "R8"]),
    # a black tile read blue in a black run: the colour gives way
    ([{"K3": 0.98}, {"B4": 0.7, "K4": 0.25}, {"K5": 0.99}], ["K3", "K4", "K5"]),
    # a group: a 7 read 1 among 7s of three other colours
    ([{"K7": 0.99}, {"B7": 0.98}, {"O1": 0.6, "O7": 0.3}, {"R7": 0.97}],
     ["K7", "B7", "O7", "R7"]),
    # a joker read as a tile, with the joker second
    ([{"B10": 0.99}, {"R10": 0.9, "JK": 0.08}, {"B12": 0.99}], ["B10", "JK", "B12"]),
    # the reader sure and no legal reading near: kept as read
    ([{"R3": 0.999}, {"R4": 0.999}, {"R8": 0.999}], ["R3", "R4", "R8"]),
    # a legal reading far less likely than ILLEGAL_COST allows is not taken
    ([{"R3": 0.99}, {"R4": 0.99}, {"R8": 0.995, "R5": 0.002}], ["R3", "R4", "R8"]),
    # two items short of a meld are no meld yet: read as seen
    ([{"R3": 0.99}, {"R9": 0.6, "R4": 0.4}], ["R3", "R9"]),
])
def test_each_row_reads_as_its_most_probable_legal_meld(
        shares: list[dict[str, float]], expected: list[str]) -> None:
    table = dict(enumerate(shares))
    decoding = decode_table(SABRA, table, [list(table)])
    assert [decoding.labels[k] for k in table] == expected
    moved = {k for k in table if expected[k] != max(shares[k], key=shares[k].__getitem__)}
    assert decoding.changed == moved


def test_a_doubtful_illegal_meld_is_reported_with_its_alternatives() -> None:
    table = {0: {"R3": 0.99}, 1: {"R4": 0.5, "O4": 0.49}, 2: {"R9": 0.995, "R5": 0.003}}
    decoding = decode_table(SABRA, table, [[0, 1, 2]])
    assert [decoding.labels[k] for k in table] == ["R3", "R4", "R9"]
    (problem,) = decoding.problems
    assert problem.code == "illegal_meld" and problem.items == ("R3", "R4", "R9")
    (alternative, odds), = problem.alternatives
    assert alternative == "R3 R4 R5"
    assert odds == pytest.approx(0.995 / 0.003, rel=1e-3)
    assert "'R3 R4 R9' reads as no legal" in problem.message and "R3 R4 R5" in problem.message
    # read surely, the same illegal meld is the players' play: no reading problem
    sure = {0: {"R3": 0.99}, 1: {"R4": 0.99}, 2: {"R9": 0.999}}
    assert decode_table(SABRA, sure, [[0, 1, 2]]).problems == ()


def test_copies_are_shared_out_across_the_table() -> None:
    # three items read R7 best; only two R7 exist: the one whose other reading costs
    # least (and keeps its meld legal) gives way
    table = {
        0: {"R5": 0.99}, 1: {"R6": 0.99}, 2: {"R7": 0.9, "R1": 0.09},       # run R5 R6 R7
        3: {"K7": 0.99}, 4: {"B7": 0.99}, 5: {"R7": 0.7, "O7": 0.29},       # group of 7s
        6: {"R7": 0.95, "R2": 0.04},                                          # alone
    }
    decoding = decode_table(SABRA, table, [[0, 1, 2], [3, 4, 5], [6]])
    assert [decoding.labels[k] for k in (2, 5, 6)] == ["R7", "O7", "R7"]
    assert decoding.problems == ()
    # and when no reading has fewer, it is reported
    stuck = decode_table(SABRA, {k: {"R7": 1.0} for k in range(3)}, [])
    assert [p.code for p in stuck.problems] == ["too_many_copies"]
    assert str(stuck.problems[0]) == "3 copies of R7 seen but Rummikub (Sabra) has 2"


def test_an_item_that_lay_still_keeps_its_label_against_a_small_gain() -> None:
    # three R5 read, two exist: the one whose other reading costs least gives way ...
    table = {0: {"R5": 0.6, "R3": 0.4}, 1: {"R5": 0.7, "R4": 0.3}, 2: {"R5": 0.7, "R4": 0.3}}
    free = decode_table(SABRA, table, [])
    assert [free.labels[k] for k in table] == ["R3", "R5", "R5"]
    # ... unless it lay still as an R5: then another does, the gain being under KEEP_COST
    kept = decode_table(SABRA, table, [], kept={0: Kept("R5", 0.6)})
    assert kept.labels[0] == "R5" and sorted(kept.labels[k] for k in (1, 2)) == ["R4", "R5"]
    assert math.log(0.7 / 0.3) - math.log(0.6 / 0.4) < KEEP_COST
    # a kept misreading still gives way to a legal meld more than KEEP_COST likelier
    run = {0: {"O7": 0.99}, 1: {"O8": 0.99}, 2: {"O1": 0.6, "O9": 0.4}, 3: {"O10": 0.99}}
    assert decode_table(SABRA, run, [[0, 1, 2, 3]], kept={2: Kept("O1", 0.6)}).labels[2] == "O9"
    assert math.log(0.6 / 0.4) + KEEP_COST < ILLEGAL_COST


@pytest.mark.parametrize(("kept", "middle", "expected"), [
    # no memory: the run decides
    ({}, {"R6": 0.8, "R9": 0.2}, "R6"),
    # read R9 at 0.9 when committed, R6 now: its own evidence turned, it follows it
    ({1: Kept("R9", 0.9)}, {"R6": 0.8, "R9": 0.2}, "R6"),
    # an R1 the reader takes for an R7, read R1 by the rules in K1 ? B1 at 0.0015 and
    # now below MIN_SHARE: the rules' reading is held (R1 stays a candidate)
    ({1: Kept("R1", 0.0015)}, {"R7": 0.6, "R11": 0.39, "R1": 0.0008}, "R1"),
    # ... but not once the evidence against it grew (its share fell below half)
    ({1: Kept("R1", 0.0015)}, {"R7": 0.6, "R11": 0.4, "R1": 0.0005}, "R7"),
])
def test_an_items_own_turned_evidence_beats_the_memory(
        kept: dict[int, Kept], middle: dict[str, float], expected: str) -> None:
    table = {0: {"K1": 0.99}, 1: middle, 2: {"B1": 0.99}}
    assert decode_table(SABRA, table, [[0, 1, 2]], kept=kept).labels[1] == expected


def test_a_persons_label_is_never_moved() -> None:
    table = {0: {"R5": 0.99}, 1: {"R6": 0.99}, 2: {"R1": 0.8, "R7": 0.15}}
    decoding = decode_table(SABRA, table, [[0, 1, 2]], fixed={2: "R1"})
    assert decoding.labels[2] == "R1"
    # the person is sure: the illegal meld is theirs to answer for at the turn's end
    assert decoding.problems == ()


def test_cards_copies_follow_the_decks() -> None:
    rommee, rum = find_variant("rommee"), find_variant("rum500")
    table = {0: {"7H": 0.99}, 1: {"7S": 0.99}, 2: {"7S": 0.6, "7C": 0.4}}
    # two decks: 7H 7S 7S is no set (a suit twice), 7H 7S 7C is
    assert decode_table(rommee, table, [[0, 1, 2]]).labels[2] == "7C"
    # one deck: the second 7S is impossible even outside any meld
    assert decode_table(rum, table, []).labels[2] == "7C"


def _brute_force(variant_name: str, shares: dict[int, dict[str, float]],
                 rows: list[list[int]]) -> float:
    """The least cost over every labelling, as decode_table defines it."""
    variant = find_variant(variant_name)
    keys = list(shares)
    options = {k: _options(shares[k], None) for k in keys}
    best_row = {}
    for r, row in enumerate(rows):
        best_row[r] = tuple(options[k][0][0] for k in row)
    legal = LegalityCache(variant)
    least = math.inf
    for combo in itertools.product(*(options[k] for k in keys)):
        labels = dict(zip(keys, (lab for lab, _ in combo), strict=True))
        cost = sum(c for _, c in combo)
        for r, row in enumerate(rows):
            read = tuple(labels[k] for k in row)
            if len(row) >= MIN_ROW and not legal(read):
                if read != best_row[r]:
                    break
                cost += ILLEGAL_COST
        else:
            counts = Counter(labels.values())
            cost += EXTRA_COPY_COST * sum(
                max(0, n - (variant.joker_count if lab == "JK" else variant.copies_of_each))
                for lab, n in counts.items())
            least = min(least, cost)
    return least


def test_the_decoding_is_exact_on_random_tables() -> None:
    generator = random.Random(11)
    colours, numbers = "KBOR", range(1, 8)
    for _ in range(40):
        rows: list[list[int]] = []
        shares: dict[int, dict[str, float]] = {}
        key = 0
        for _row in range(generator.randint(1, 3)):
            row = []
            for _item in range(generator.randint(2, 4)):
                labels = generator.sample([f"{c}{n}" for c in colours for n in numbers], 3)
                weights = [generator.random() ** 2 for _ in labels]
                total = sum(weights)
                shares[key] = {lab: w / total for lab, w in zip(labels, weights, strict=True)}
                row.append(key)
                key += 1
            rows.append(row)
        decoding = decode_table(SABRA, shares, rows)
        options = {k: dict(_options(s, None)) for k, s in shares.items()}
        cost = sum(options[k][lab] for k, lab in decoding.labels.items())
        for row in rows:
            read = tuple(decoding.labels[k] for k in row)
            if len(row) >= MIN_ROW and not SABRA.analyse([parse_item(x) for x in read]).valid:
                cost += ILLEGAL_COST
        counts = Counter(decoding.labels.values())
        cost += EXTRA_COPY_COST * sum(max(0, n - 2) for n in counts.values())
        assert cost == pytest.approx(_brute_force("sabra", shares, rows), abs=1e-9)


def test_floor_bounds_a_missing_label() -> None:
    assert dict(_options({"R1": 1.0, "R7": 0.0}, Kept("R1")))["R1"] == 0.0
    assert -math.log(FLOOR) > ILLEGAL_COST
