"""engine.solver: the exact best play, proved against a brute-force solver.

The brute force (``BruteForce`` below) tries every way to hand each rack item
to "stays on the rack", "laid onto table meld j" or "new meld g" and asks
``variant.analyse`` whether each group can be read as a meld under some
declaration of its jokers.  Every play the solver returns is also judged by
``engine.turns.check_turn``.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from engine.items import (
    JOKER,
    Card,
    Item,
    Joker,
    Natural,
    Tile,
    all_naturals,
    natural,
    parse_items,
    parse_melds,
)
from engine.melds import MeldKind, Reading
from engine.solver import (
    Play,
    SolveError,
    best_rack_split,
    knock_decision,
    solve,
    table_arrangeable,
)
from engine.turns import check_turn
from engine.variants import Variant, find_variant
from tabletop.cli import main

DATA = Path(__file__).parent / "data" / "solver"
EXTEND_ONLY = (
    "remi",
    "rommee",
    "rummikub-american",
    "rummikub-international",
    "rum500",
    "american-rummy",
)

Score = tuple[int, int]


def _key(items: Sequence[Item]) -> tuple[str, ...]:
    return tuple(sorted(str(item) for item in items))


class BruteForce:
    def __init__(self, variant: Variant, table: Sequence[Sequence[Item]]) -> None:
        self.variant = variant
        self.table = [tuple(meld) for meld in table]
        self.new_options = lru_cache(maxsize=None)(self._new_options)
        self.lay_options = lru_cache(maxsize=None)(self._lay_options)

    def _meanings(self, naturals: Sequence[Natural]) -> list[Natural]:
        family = self.variant.family
        ranks = {n.rank for n in naturals}
        suits = {n.suit_index for n in naturals}
        out = {natural(family, r, s) for r in ranks for s in range(4)}
        out |= {natural(family, r, s) for s in suits for r in range(1, 14)}
        return sorted(out, key=str)

    def _new_options(
        self, key: tuple[str, ...], group: tuple[Item, ...]
    ) -> frozenset[tuple[int, bool]]:
        """(value, is_run) of every way to declare this group as one new meld."""
        naturals = [i for i in group if isinstance(i, (Tile, Card))]
        jokers = len(group) - len(naturals)
        if not naturals:
            return frozenset()
        found: set[tuple[int, bool]] = set()
        for meanings in itertools.product(self._meanings(naturals), repeat=jokers):
            items = [*naturals, *(Joker(m) for m in meanings)]
            for reading in self.variant.analyse(items).readings:
                found.add((self.variant.meld_value(reading), reading.kind is MeldKind.RUN))
        return frozenset(found)

    def _lay_options(
        self, index: int, key: tuple[str, ...], group: tuple[Item, ...]
    ) -> frozenset[int]:
        """Values of every legal way to lay this group onto table meld ``index``."""
        old_meld = self.table[index]
        naturals = [i for i in group if not i.is_joker]
        jokers = len(group) - len(naturals)
        values: set[int] = set()
        for old in self.variant.analyse(old_meld).readings:
            if old.kind is MeldKind.SET:
                # a set's joker stands for any suit it misses: written bare
                base = [*old.naturals(), *([Joker()] * old.joker_count)]
                items = [*base, *naturals, *([Joker()] * jokers)]
                for reading in self.variant.analyse(items).readings:
                    if reading.kind is MeldKind.SET:
                        values.add(self._laid_value(reading, group, len(base)))
                continue
            base = list(old.resolved_items())
            suit = old.suit
            assert suit is not None
            run_meanings = [natural(self.variant.family, r, suit) for r in range(1, 14)]
            for meanings in itertools.product(run_meanings, repeat=jokers):
                laid = [*naturals, *(Joker(m) for m in meanings)]
                for reading in self.variant.analyse([*base, *laid]).readings:
                    if reading.kind is MeldKind.RUN:
                        values.add(self._laid_count_value(reading, laid))
        return frozenset(values)

    def _laid_value(self, reading: Reading, group: Sequence[Item], start: int) -> int:
        return sum(self.variant.slot_value(reading, slot) for slot in reading.slots[start:])

    def _laid_count_value(self, reading: Reading, laid: Sequence[Item]) -> int:
        want = Counter(laid)
        total = 0
        for slot in reading.slots:
            if want[slot.item] > 0:
                want[slot.item] -= 1
                total += self.variant.slot_value(reading, slot)
        return total

    def solve(
        self,
        rack: Sequence[Item],
        *,
        objective: str = "tiles",
        lay_off: bool = True,
        need: int = 0,
        need_run: bool = False,
        keep: int = 0,
    ) -> Score | None:
        """The best (primary, secondary) score; None when no play meets the opening."""
        rack = tuple(rack)
        n = len(rack)
        m = len(self.table) if lay_off else 0
        best: Score | None = None

        def score(count: int, value: int) -> Score:
            return (count, value) if objective == "tiles" else (value, count)

        def assign(i: int, dest: list[int], groups: int) -> None:
            nonlocal best
            if i == n:
                result = evaluate(dest, groups)
                if result is not None and (best is None or result > best):
                    best = result
                return
            for d in range(-1, m + groups + 1):
                dest.append(d)
                assign(i + 1, dest, groups + (d == m + groups))
                dest.pop()

        def evaluate(dest: list[int], groups: int) -> Score | None:
            placed = sum(d >= 0 for d in dest)
            if placed > n - keep:
                return None
            lay_values = 0
            for j in range(m):
                group = tuple(rack[i] for i in range(n) if dest[i] == j)
                if group:
                    values = self.lay_options(j, _key(group), group)
                    if not values:
                        return None
                    lay_values += max(values)
            new_options = []
            for g in range(groups):
                group = tuple(rack[i] for i in range(n) if dest[i] == m + g)
                options = self.new_options(_key(group), group)
                if not options:
                    return None
                new_options.append(sorted(options))
            chosen: Score | None = None
            for combo in itertools.product(*new_options):
                value = sum(v for v, _ in combo)
                if value < need or (need_run and not any(r for _, r in combo)):
                    continue
                s = score(placed, lay_values + value)
                if chosen is None or s > chosen:
                    chosen = s
            return chosen

        assign(0, [], 0)
        return best


# --- helpers -----------------------------------------------------------------------
def opening_rule(variant: Variant) -> bool:
    return variant.initial_meld_required > 0 or variant.initial_meld_needs_run


def brute(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]],
    *,
    initial: bool,
    objective: str,
    keep: int = 0,
) -> Score | None:
    constrained = initial and opening_rule(variant)
    return BruteForce(variant, table).solve(
        rack,
        objective=objective,
        lay_off=not constrained,
        need=variant.initial_meld_required if constrained else 0,
        need_run=constrained and variant.initial_meld_needs_run,
        keep=keep,
    )


def score_of(play: Play, objective: str) -> Score:
    count = len(play.placed)
    return (count, play.value) if objective == "tiles" else (play.value, count)


def assert_legal(
    variant: Variant, table: Sequence[Sequence[Item]], play: Play, initial: bool
) -> None:
    """The play passes check_turn, and its value is what its melds say."""
    check = check_turn(variant, table, play.melds, play.placed, opened=not initial)
    assert check.valid, [p.message for p in check.problems]
    assert Counter(map(str, play.placed)) <= Counter(
        str(JOKER if i.is_joker else i) for i in play.placed
    )
    if play.placed:
        assert play.meets_initial


def solve_and_check(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]],
    *,
    initial: bool,
    objective: str,
    keep: int = 0,
) -> Play:
    play = solve(variant, rack, table, initial=initial, objective=objective, keep=keep)
    assert Counter(play.placed) <= Counter(JOKER if i.is_joker else i for i in rack)
    assert len(play.placed) <= len(rack) - keep
    assert_legal(variant, table, play, initial)
    return play


def random_case(
    variant: Variant, rng: random.Random, rack_size: int
) -> tuple[tuple[Item, ...], tuple[tuple[Item, ...], ...]]:
    """A legal table of 1-3 melds and a rack near it (so lay-offs are common)."""
    family = variant.family
    pool: Counter[Item] = Counter({n: variant.copies_of_each for n in all_naturals(family)})
    pool[JOKER] = variant.joker_count
    table: list[tuple[Item, ...]] = []
    for _ in range(rng.randint(0, 3)):
        for _attempt in range(20):
            suit, rank = rng.randrange(4), rng.randint(1, 13)
            if rng.random() < 0.5:
                length = rng.randint(3, 5)
                start = rng.randint(1, 14 - length)
                meld: list[Item] = [natural(family, r, suit) for r in range(start, start + length)]
            else:
                meld = [natural(family, rank, s) for s in rng.sample(range(4), rng.randint(3, 4))]
            if pool[JOKER] and rng.random() < 0.25:
                meld[rng.randrange(len(meld))] = JOKER
            need = Counter(meld)
            if all(pool[i] >= k for i, k in need.items()) and variant.analyse(meld).valid:
                pool -= need
                table.append(tuple(meld))
                break
    near: list[Item] = []
    for laid in table:
        for item in laid:
            if isinstance(item, (Tile, Card)):
                for r in (item.rank - 2, item.rank - 1, item.rank + 1, item.rank + 2, item.rank):
                    for s in range(4):
                        if 1 <= r <= 13:
                            near.append(natural(family, r, s))
    rack: list[Item] = []
    while len(rack) < rack_size:
        choice = (
            rng.choice(near) if near and rng.random() < 0.6 else rng.choice(list(pool.elements()))
        )
        if rng.random() < 0.12:
            choice = JOKER
        if pool[choice] > 0:
            pool[choice] -= 1
            rack.append(choice)
    return tuple(rack), tuple(table)


# --- the solver is exact: compared with the brute force on small random cases -----------
@pytest.mark.parametrize("variant_id", [*EXTEND_ONLY, "wiener"])
@pytest.mark.parametrize("objective", ["tiles", "value"])
@pytest.mark.parametrize("initial", [False, True])
def test_matches_brute_force_on_random_cases(
    variant_id: str, objective: str, initial: bool
) -> None:
    variant = find_variant(variant_id)
    rng = random.Random(f"{variant_id}-{objective}-{initial}")
    for _ in range(12):
        rack, table = random_case(variant, rng, rng.randint(3, 6))
        if variant_id == "wiener":
            table = ()
        expected = brute(variant, rack, table, initial=initial, objective=objective)
        if variant_id == "wiener":
            play = solve(variant, rack, (), initial=initial, objective=objective)
        else:
            play = solve_and_check(variant, rack, table, initial=initial, objective=objective)
        if expected is None:
            assert play.placed == () and not play.meets_initial
        else:
            assert score_of(play, objective) == expected, (rack, table)


@pytest.mark.parametrize("variant_id", ["remi", "rommee", "rummikub-american"])
def test_keep_one_item_to_discard(variant_id: str) -> None:
    # [remi] "darf man das nicht tun, weil man dann keinen Stein mehr zum Ablegen hätte"
    variant = find_variant(variant_id)
    rng = random.Random(f"keep-{variant_id}")
    for _ in range(8):
        rack, table = random_case(variant, rng, rng.randint(3, 5))
        expected = brute(variant, rack, table, initial=False, objective="tiles", keep=1)
        play = solve_and_check(variant, rack, table, initial=False, objective="tiles", keep=1)
        assert score_of(play, "tiles") == expected


def test_ace_around_option_matches_brute_force() -> None:
    # [rommee] Varianten: "auch in der Sequenz K–A–2" as the house rule ace_around
    variant = find_variant("rommee", {"ace_around": "true"})
    rack = parse_items("AS 2S QH 3S JK")
    table = parse_melds("JS QS KS | KH AH 2H")
    play = solve_and_check(variant, rack, table, initial=False, objective="tiles")
    assert score_of(play, "tiles") == brute(variant, rack, table, initial=False, objective="tiles")
    assert len(play.placed) == 5


# --- known answers worked out by hand from the rule texts --------------------------------
HAND_CASES = [
    # [rommee] "Auf dem Tisch liegt ♥2–♥3–♥4. Hält ein Spieler ♥ A und ♥ 5 ..., so darf er
    # diese beiden Karten an die ausgelegte Folge anlegen": both go, A counts 1 at the bottom.
    ("rommee", "AH 5H", "2H 3H 4H", False, "tiles", 2, 6, ["AH 2H 3H 4H 5H"]),
    # [rommee] the initial meld needs 40 ("mindestens 40 Punkten"); 10+10+10 = 30 is too low,
    # and "erst nach Auslage der Erstmeldung" nothing may be laid off: nothing is placed.
    ("rommee", "KS KH KD 5H", "2H 3H 4H", True, "tiles", 0, 0, None),
    # ... with a fourth king 40 is reached; 5H still waits (no laying off when opening)
    ("rommee", "KS KH KD KC 5H", "2H 3H 4H", True, "tiles", 4, 40, None),
    # [remi] "mindestens eine eine Folge sein": three sets worth 90 do not open without a run
    ("remi", "K10 B10 O10 K11 B11 O11 K13 B13 O13", "", True, "tiles", 0, 0, None),
    # [remi] a run R10 R11 R12 (30) plus sets of 11 and 12 (each 30) = 90 with a run
    ("remi", "R10 R11 R12 K11 B11 O11 K12 B12 O12", "", True, "tiles", 9, 90, None),
    # [remi] "Gleichzeitig mit der Anfangsmeldung darf man keine Steine an die Meldungen
    # anderer Spieler anlegen": R7 stays although it fits R4 R5 R6
    # (K10 K11 K12 = 30 and K13 B13 O13 = 30)
    ("remi", "K10 K11 K12 K13 B13 O13 R7", "R4 R5 R6", True, "tiles", 6, 60, None),
    ("remi", "K10 K11 K12 K13 B13 O13 R7", "R4 R5 R6", False, "tiles", 7, 65, None),
    # [remi] "doppelt so viele echte Steine ... wie Jolys": JK cannot join a set of three
    # with a joker already; it goes on the five-run instead (5 real : 2 jokers would not do
    # for 3 : 2, but R3..R7 + JK is 5 : 1)
    ("remi", "JK", "K5 B5 JK | R3 R4 R5 R6 R7", False, "tiles", 1, 5, None),
    # [american] "mindestens 21 Punkten": 6+7+8 = 21 opens
    ("rummikub-american", "R6 R7 R8 K1", "", True, "tiles", 3, 21, ["R6 R7 R8"]),
    # [american] 12-13-1 is a run there: K1 goes onto K12 K13 only after opening
    ("rummikub-american", "K1", "K11 K12 K13", False, "tiles", 1, 1, ["K11 K12 K13 K1"]),
    # [international] opening 50
    ("rummikub-international", "R10 R11 R12 K13 B13 O13", "", True, "tiles", 6, 72, None),
    ("rummikub-international", "R10 R11 R12 K1", "", True, "tiles", 0, 0, None),
    # [rum500] "B kann die 8 in der Sequenz von A ablegen"; ace in A-2-3 counts 1
    ("rum500", "8H AS 2S 3S", "5H 6H 7H | 9C 9D 9S", False, "value", 4, 14, None),
    # [rum500] joker 15 ("Ass, Joker je 15 Punkte") laid next to a run
    ("rum500", "JK", "5H 6H 7H", False, "value", 1, 15, None),
    # [american-rummy] the ace is low unless agreed: KH cannot be followed by AH
    ("american-rummy", "AH", "JH QH KH", False, "tiles", 0, 0, None),
    ("american-rummy", "QH", "QS QD QC | 9H 10H JH", False, "tiles", 1, 10, None),
]


@pytest.mark.parametrize("variant_id,rack,table,initial,objective,count,value,melds", HAND_CASES)
def test_hand_worked_cases(
    variant_id: str,
    rack: str,
    table: str,
    initial: bool,
    objective: str,
    count: int,
    value: int,
    melds: list[str] | None,
) -> None:
    variant = find_variant(variant_id)
    table_melds = parse_melds(table) if table else ()
    play = solve_and_check(
        variant, parse_items(rack), table_melds, initial=initial, objective=objective
    )
    assert (len(play.placed), play.value) == (count, value)
    expected = brute(variant, parse_items(rack), table_melds, initial=initial, objective=objective)
    if count == 0 and initial:
        assert expected is None and not play.meets_initial
    else:
        assert expected == score_of(play, objective)
    if melds is not None:
        assert sorted(str(" ".join(map(str, m))) for m in play.melds) == sorted(melds)


# --- known-answer files --------------------------------------------------------------------
def known_answers() -> list[tuple[str, dict[str, Any]]]:
    cases = []
    for path in sorted(DATA.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            cases.append((path.stem, case))
    return cases


def test_every_extend_only_variant_has_known_answers() -> None:
    assert {stem for stem, _ in known_answers()} >= {*EXTEND_ONLY, "wiener"}


@pytest.mark.parametrize("variant_id,case", known_answers())
def test_known_answers(variant_id: str, case: dict[str, Any]) -> None:
    variant = find_variant(variant_id, case.get("options"))
    table = parse_melds(case["table"]) if case["table"].strip() else ()
    rack = parse_items(case["rack"])
    if variant_id == "wiener":
        play = solve(variant, rack, table, initial=case["initial"], objective=case["objective"])
    else:
        play = solve_and_check(
            variant, rack, table, initial=case["initial"], objective=case["objective"]
        )
    assert len(play.placed) == case["placed_count"]
    assert play.value == case["value"]


# --- larger racks: legal, and never worse than a greedy lay-off ----------------------------
@pytest.mark.parametrize("variant_id", ["remi", "rommee", "rummikub-american"])
def test_large_racks_are_solved_quickly_and_legally(variant_id: str) -> None:
    variant = find_variant(variant_id)
    rng = random.Random(variant_id)
    family = variant.family
    deck = [n for n in all_naturals(family) for _ in range(variant.copies_of_each)]
    rng.shuffle(deck)
    table: list[tuple[Item, ...]] = []
    for start in range(1, 11, 4):
        for suit in range(4):
            meld = tuple(natural(family, r, suit) for r in range(start, start + 3))
            if all(m in deck for m in meld):
                for m in meld:
                    deck.remove(m)
                table.append(meld)
    rack = (*deck[:24], JOKER)
    play = solve_and_check(variant, rack, table, initial=False, objective="tiles")
    # every natural adjacent to a run end alone is a lower bound
    assert len(play.placed) >= 1
    opening = solve_and_check(variant, rack[:14], table, initial=True, objective="value")
    assert opening.meets_initial or not opening.placed


# --- wiener: the hand, not the table ------------------------------------------------------
def test_wiener_solve_arranges_the_hand() -> None:
    variant = find_variant("wiener")
    play = solve(variant, parse_items("5H 6H 7H 9S 9D 9C 2C 3D KS KH"), objective="value")
    assert sorted(map(str, play.placed)) == sorted(["5H", "6H", "7H", "9S", "9D", "9C"])
    assert play.value == 45


def test_wiener_refuses_a_table() -> None:
    with pytest.raises(SolveError, match="wiener"):
        solve(find_variant("wiener"), parse_items("5H"), parse_melds("2H 3H 4H"))


@pytest.mark.parametrize(
    "hand,discard,deadwood,knock,rommee",
    [
        # [wiener] "fünf oder weniger Augen in schlechten Karten, so kann er klopfen"
        ("5H 6H 7H 9S 9D 9C 2C 3D QS QH", False, 25, False, False),
        ("5H 6H 7H 9S 9D 9C 2C 3D QS QH QD", False, 5, True, False),
        # "zehn Karten in Meldungen auslegt und seine elfte Karte ablegt": Rommé
        ("5H 6H 7H 9S 9D 9C QS QH QD KC 8H", True, 0, True, True),
        ("5H 6H 7H 9S 9D 9C QS QH QD JK", False, 0, True, True),
    ],
)
def test_knock_decision(hand: str, discard: bool, deadwood: int, knock: bool, rommee: bool) -> None:
    decision = knock_decision(find_variant("wiener"), parse_items(hand), discard=discard)
    assert decision.deadwood == deadwood
    assert decision.can_knock is knock
    assert decision.can_call_rommee is rommee
    assert (decision.discard is not None) is discard


def test_knock_limit_option() -> None:
    variant = find_variant("wiener", {"knock_limit": "3"})
    decision = knock_decision(variant, parse_items("5H 6H 7H 9S 9D 9C QS QH QD 2C 3D"))
    assert decision.deadwood == 5 and not decision.can_knock


def test_knock_decision_is_for_wiener() -> None:
    with pytest.raises(SolveError):
        knock_decision(find_variant("rommee"), parse_items("5H"))


# --- rack splits --------------------------------------------------------------------------
def test_best_rack_split_leaves_least_penalty() -> None:
    # [sabra/american] the joker left on the rack counts 30: better melded
    split = best_rack_split(find_variant("rummikub-american"), parse_items("R5 R6 JK K9 K1"))
    assert split.leftover and split.penalty == 10
    assert [len(m) for m in split.melds] == [3]


@pytest.mark.parametrize(
    "variant_id,items,ok",
    [
        ("remi", "R1 R2 R3 K5 B5 O5", True),
        ("remi", "R1 R2 R3 K5 B5", False),
        # [remi] "doppelt so viele echte Steine ... wie Jolys"
        ("remi", "R1 JK JK", False),
        ("rommee", "3S JK JK 6S", True),  # "♠3–J–J–♠6 eine erlaubte Kombination"
        ("american-rummy", "AS 2S 3S", True),
    ],
)
def test_table_arrangeable(variant_id: str, items: str, ok: bool) -> None:
    assert table_arrangeable(find_variant(variant_id), parse_items(items)) is ok


# --- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "variant_id,rack,table,message",
    [
        ("rommee", "R5", "", "not one of the cards"),
        ("american-rummy", "JK", "", "jokers"),
        ("rommee", "5H", "5H 6H 8H", "not legal"),
        ("rum500", "5H", "5H 6H 7H", "times"),
    ],
)
def test_bad_input(variant_id: str, rack: str, table: str, message: str) -> None:
    with pytest.raises(SolveError, match=message):
        solve(find_variant(variant_id), parse_items(rack), parse_melds(table) if table else ())


def test_unknown_objective() -> None:
    with pytest.raises(SolveError, match="objective"):
        solve(find_variant("rommee"), parse_items("5H"), objective="speed")


# --- command line ---------------------------------------------------------------------------
def test_cli_solve_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["solve", "--variant", "rommee", "--rack", "AH 5H 9C", "--table", "2H 3H 4H", "--json"]
    )
    assert code == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == {
        "melds": ["AH 2H 3H 4H 5H"],
        "placed": ["AH", "5H"],
        "value": 6,
        "meets_initial": True,
    }


def test_cli_solve_initial_and_option(capsys: pytest.CaptureFixture[str]) -> None:
    # [remi] Varianten: "Einige Runden fordern nur 45 Punkte": 15+15+15 = 45 with a run
    args = [
        "solve",
        "--variant",
        "remi",
        "--rack",
        "R10 R11 R12 K13 B13 O13 K2",
        "--initial",
        "--objective",
        "value",
        "--json",
    ]
    assert main(args) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["value"] == 60 and answer["meets_initial"] is True
    assert main([*args[:-1], "--option", "initial_meld=45", "--json"]) == 0


def test_cli_solve_text_and_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--variant", "rommee", "--rack", "AH 5H", "--table", "2H 3H 4H"]) == 0
    assert "AH 2H 3H 4H 5H" in capsys.readouterr().out
    assert main(["solve", "--variant", "rommee", "--rack", "XX"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "XX" in err
