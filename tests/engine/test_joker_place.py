"""A meld is judged as the players mean it: a run's items in any order, with jokers
anywhere, are the run they can form (issue 45, item 3).

Where a variant's rule text makes a joker's place say what it stands for ([sabra] "kann
der Joker nicht an das andere Ende gelegt werden", [remi] "muss es klar sein, welchen
Stein der Joly ersetzt", [rum500] "indem Sie die Karten in dieser Anordnung ablegen,
geben Sie dies an"; American and International Rummikub take Sabra's melds, "Wie bei
Sabra"), a joker out of place gets a hint to move it, never a penalty.  Rommé, Räuber-
and Wiener Rommé say nothing of the place, so nothing is hinted there.
"""

from __future__ import annotations

import pytest

from tabletop.engine.items import parse_items, parse_melds
from tabletop.engine.turns import check_turn
from tabletop.engine.variants import find_variant

PLACE_MATTERS = {"sabra", "rummikub-american", "rummikub-international", "remi", "rum500"}


def _readings(variant: str, meld: str) -> set[str]:
    return {str(r) for r in find_variant(variant).analyse(parse_items(meld)).readings}


@pytest.mark.parametrize(
    ("variant", "meld", "runs", "hinted"),
    [
        # the case: players read both as R11 R12 R13 ([sabra] 12-13-1 is no run)
        ("sabra", "R12 R13 JK", {"JK=R11 R12 R13"}, True),  # joker at the end
        ("sabra", "JK R12 R13", {"JK=R11 R12 R13"}, False),  # at the start, in place
        ("sabra", "R12 JK R13", {"JK=R11 R12 R13"}, True),  # in the middle
        ("sabra", "R5 JK R7", {"R5 JK=R6 R7"}, False),  # in the middle, in place
        ("sabra", "R6 R4 JK", {"R4 JK=R5 R6"}, True),  # unordered with a joker
        ("sabra", "R7 R5 R6", {"R5 R6 R7"}, False),  # unordered, no joker
        ("sabra", "R7 JK R5", {"R5 JK=R6 R7"}, False),  # laid right to left
        ("sabra", "R5 R7 JK JK", {"JK=R4 R5 JK=R6 R7", "R5 JK=R6 R7 JK=R8"}, True),
        # [american] "12-13-1" is a run there, so the joker at the end is in place
        ("rummikub-american", "R12 R13 JK", {"R12 R13 JK=R1"}, False),
        # [american] "13-1-2 ist nicht regelgerecht": the joker is the 3
        ("rummikub-american", "JK R1 R2", {"R1 R2 JK=R3"}, True),
        ("rummikub-american", "R13 R11 JK", {"R11 JK=R12 R13"}, True),
        ("rummikub-international", "R3 R1 JK", {"R1 JK=R2 R3"}, True),
        ("rummikub-international", "JK R2 R3", {"JK=R1 R2 R3"}, False),  # its place says R1
        # [remi] the joker's tile must be clear: two runs, the hint asks which
        ("remi", "B10 JK B9", {"JK=B8 B9 B10", "B9 B10 JK=B11"}, True),
        ("remi", "R12 JK R10 R13", {"R10 JK=R11 R12 R13"}, True),
        ("remi", "B9 B10 JK", {"B9 B10 JK=B11"}, False),
        # [rum500] "6 7 Joker ... Der Joker repräsentiert die 8"
        ("rum500", "6H 7H JK", {"6H 7H JK=8H"}, False),
        ("rum500", "7H JK 6H", {"JK=5H 6H 7H", "6H 7H JK=8H"}, True),
        ("rum500", "KH JK QH", {"JK=JH QH KH", "QH KH JK=AH"}, True),
        # [rommee] "♣D–♣K–♣A"; the place is not a rule there: read, not hinted
        ("rommee", "KS AS JK", {"JK=QS KS AS"}, False),
        ("rommee", "5S 3S JK", {"3S JK=4S 5S"}, False),
        ("raeuber", "JK 10C 8C", {"8C JK=9C 10C"}, False),
        ("wiener", "2H JK AH", {"AH 2H JK=3H"}, False),
        ("american-rummy", "5S 3S 4S", {"3S 4S 5S"}, False),
    ],
)
def test_a_run_in_any_order_is_the_run_it_can_form(
    variant: str, meld: str, runs: set[str], hinted: bool
) -> None:
    analysis = find_variant(variant).analyse(parse_items(meld))
    assert analysis.valid, analysis.reason
    assert {str(r) for r in analysis.readings} == runs
    if hinted:
        assert analysis.hint is not None and analysis.hint.startswith("move the joker")
        assert all(run in analysis.hint for run in runs)
    else:
        assert analysis.hint is None


@pytest.mark.parametrize(
    ("variant", "meld", "reason"),
    [
        # the variant's own joker rules still hold wherever the joker lies
        ("remi", "R7 JK R5 JK", "twice as many real tiles as jokers"),
        ("rommee", "5S JK JK", "one natural card with two jokers"),
        ("american-rummy", "5S 3S JK", "without jokers"),
        # no order makes these a run
        ("sabra", "R12 R13 JK JK R3", "not a run"),
        ("sabra", "R12 B13 JK", "a run needs one colour"),
        ("rum500", "7H JK 3H", "not a run"),
    ],
)
def test_what_no_order_makes_a_run_stays_invalid(variant: str, meld: str, reason: str) -> None:
    analysis = find_variant(variant).analyse(parse_items(meld))
    assert not analysis.valid and reason in str(analysis.reason)
    assert analysis.hint is None


def test_a_set_is_still_a_set_before_any_reordered_run() -> None:
    # "JK B1 JK" in Sabra is a set of ones, not B1 B2 B3 with the jokers moved
    assert _readings("sabra", "JK B1 JK") == {"JK=K1 B1 JK=O1"}


@pytest.mark.parametrize(
    ("variant", "melds"),
    [
        ("sabra", "R12 R13 JK"),
        ("rummikub-american", "R13 R11 JK"),
        ("rummikub-international", "R13 R11 JK R10 | K10 B10 O10"),
        ("remi", "R12 JK R10 R13 | K9 B9 O9"),
        ("rum500", "7H JK 6H"),
        ("rommee", "KS AS JK | 5H 5D 5C"),
        ("raeuber", "KS AS JK | 5H 5D 5C"),
        ("american-rummy", "5S 3S 4S"),
    ],
)
def test_an_opening_with_the_joker_out_of_place_is_no_penalty(variant: str, melds: str) -> None:
    rules = find_variant(variant)
    after = parse_melds(melds)
    laid = [item for meld in after for item in meld]
    check = check_turn(rules, [], after, laid, opened=False)
    assert check.valid, check.problems
    assert check.penalty_draw == 0
    hints = [hint.code for hint in check.hints]
    assert hints == (["joker_out_of_place"] if variant in PLACE_MATTERS else [])
    if hints:
        assert check.hints[0].message.startswith("move the joker")
        assert check.hints[0].items == after[0]


def test_a_meld_hinted_once_is_not_hinted_again_in_later_turns() -> None:
    sabra = find_variant("sabra")
    table = parse_melds("R12 R13 JK")
    later = parse_melds("R12 R13 JK | K5 B5 O5")
    check = check_turn(sabra, table, later, [i for i in later[1]], opened=True)
    assert check.valid and check.hints == ()


def test_a_joker_keeps_its_meaning_when_the_run_grows() -> None:
    # laid as R12 R13 JK (read JK=R11), extended with R10 in front of the joker's place:
    # the joker still stands for R11, so the turn is legal
    sabra = find_variant("sabra")
    before = parse_melds("R12 R13 JK")
    after = parse_melds("R10 R12 R13 JK")
    check = check_turn(sabra, before, after, parse_items("R10"), opened=True)
    assert check.valid, check.problems
    assert [h.code for h in check.hints] == ["joker_out_of_place"]
