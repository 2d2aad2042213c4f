"""The rearrangement solver against an exhaustive search, and its answers' legality."""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import pytest

from tabletop.engine import find_variant
from tabletop.engine.items import JOKER, Color, Item, Joker, Tile, parse_items, parse_melds
from tabletop.engine.partition import can_be_melded
from tabletop.engine.rearrange import arrange
from tabletop.engine.solver import solve
from tabletop.engine.state import TableState
from tests.shared import scaled

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
    table, rack = random_position(
        rng, melds=rng.randint(0, 3), rack_size=rng.randint(2, 6), jokers=rng.randint(0, 2)
    )
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


# --- the opening: 30 from the rack alone ----------------------------------------
def best_opening_by_search(rack: list[Item]) -> int | None:
    """Most tiles laid from the rack in melds worth at least 30, by brute force."""
    from tabletop.engine.partition import meld_partitions

    best = None
    for size in range(len(rack), 2, -1):
        for chosen in set(itertools.combinations(sorted(rack, key=str), size)):
            for split in meld_partitions(list(chosen), SABRA):
                if sum(SABRA.meld_value(reading) for reading in split) >= 30:
                    best = size
                    break
            if best is not None:
                return best
    return best


@pytest.mark.parametrize("seed", range(25))
def test_opening_matches_exhaustive_search(seed: int) -> None:
    rng = random.Random(1000 + seed)
    _, rack = random_position(rng, melds=0, rack_size=rng.randint(4, 8), jokers=rng.randint(0, 1))
    expected = best_opening_by_search(rack)
    found = arrange([], rack, threshold=30)
    assert (found.score if found else None) == expected
    if found:
        assert found.value >= 30
        check_arrangement([], found)


# --- the Sabra solver behind `tabletop solve` -----------------------------------------
@pytest.mark.parametrize(
    ("options", "rack", "table", "initial", "placed"),
    [
        # [sabra] "An eine Meldung, die einen Joker enthält, können weitere Spielsteine
        # angelegt werden": R7 extends the joker's run
        ({}, "R6 R7", "R3 R4 JK R6 | K9 B9 O9", False, ["R7"]),
        # ... and R5 may take its joker first ("den Joker dann in einer anderen
        # Zusammenstellung auf dem Tisch verwendet"): R3-R7, the joker joining the nines
        ({}, "R5 R7", "R3 R4 JK R6 | K9 B9 O9", False, ["R5", "R7"]),
        # a set's joker taken by O5 and the set completed by R5, the joker joining R9-R11
        ({}, "O5 R5", "K5 B5 JK | R9 R10 R11", False, ["O5", "R5"]),
        # ... "den Joker dann in einer anderen Zusammenstellung auf dem Tisch verwendet":
        # R5 frees the joker, which goes to a new run with K1 K2
        ({}, "R5 K1 K2", "R3 R4 JK R6 | K9 B9 O9", False, ["K1", "K2", "R5"]),
        # a freed joker cannot go back into its own run, and neither the rack nor the table
        # holds another home (the nines are four)
        ({}, "R5", "R3 R4 JK R6 | K9 B9 O9 R9", False, []),
        # "in einer anderen Zusammenstellung auf dem Tisch": anywhere on the table by default
        # (Goliath), so the freed joker joins the nines as R9, the run staying whole ...
        ({}, "R5", "R3 R4 JK R6 | K9 B9 O9", False, ["R5"]),
        # ... but not where it must start a new group (Lemada)
        ({"freed_joker": "new_group"}, "R5", "R3 R4 JK R6 | K9 B9 O9", False, []),
        # "Wenn ein Satz aus zwei gleichen Spielsteinen und einem Joker besteht, kann der Joker
        # durch einen passenden Spielstein jeder der fehlenden Farben ersetzt werden"
        ({}, "R7 R8 B5", "R3 R4 JK R6 | K5 O5 JK", False, ["B5", "R7", "R8"]),
        # the opening: "mindesten 30" from the hand alone; 10+11+12 = 33 opens, 1+2+3 rides along
        ({}, "R10 R11 R12 K1 K2 K3", "", True, ["K1", "K2", "K3", "R10", "R11", "R12"]),
        # 7+8+9 = 24 does not open, whatever the table offers
        ({}, "B7 B8 B9 R13", "R10 R11 R12", True, []),
        # rebuilding may start in the opening turn: B12 joins the twelves after opening
        (
            {},
            "R10 R11 R12 B12 K1 K2 K3",
            "O12 K12 R12",
            True,
            ["K1", "K2", "K3", "B12", "R10", "R11", "R12"],
        ),
        # the joker's run R4 R5 JK may take the table's R7..R10 ("können weitere Spielsteine
        # angelegt werden"), so the rack's own R7 joins K7 B7
        ({}, "R7 K7 B7", "R4 R5 JK | R7 R8 R9 R10", False, ["K7", "B7", "R7"]),
        # Dutch Sabra ("Gruppen, die einen Joker enthalten, umgruppiert werden dürfen ...
        # vorausgesetzt, dass der Joker immer für denselben Spielstein steht"): R8 extends the
        # run R5 R6 JK=R7 with the joker kept as R7
        ({"dutch": True}, "R8", "R5 R6 JK | K9 B9 O9 | R9 R10 R11", False, ["R8"]),
        ({"dutch": True}, "R5 R7", "R3 R4 JK R6 | K9 B9 O9", False, ["R5", "R7"]),
        # ... unless the house rule forbids it (Lemada 1999)
        (
            {"rearrange_on_opening_turn": False},
            "R10 R11 R12 B12 K1 K2 K3",
            "O12 K12 R12",
            True,
            ["K1", "K2", "K3", "R10", "R11", "R12"],
        ),
    ],
)
def test_solve_sabra(
    options: dict[str, object], rack: str, table: str, initial: bool, placed: list[str]
) -> None:
    from tabletop.engine.solver import solve
    from tabletop.engine.turns import check_turn

    variant = find_variant("sabra", options)
    table_melds = parse_melds(table) if table else ()
    play = solve(variant, parse_items(rack), table_melds, initial=initial)
    assert [str(item) for item in play.placed] == placed
    assert play.meets_initial is (bool(placed) or not initial)
    if play.placed:
        verdict = check_turn(variant, table_melds, play.melds, play.placed, opened=not initial)
        assert verdict.valid, verdict.problems


# --- Räuber-Rommé ---------------------------------------------------------------------
RAEUBER = find_variant("raeuber")


@pytest.mark.parametrize(
    ("rack", "table", "initial", "placed"),
    [
        # [raeuber] "Auf dem Tisch liegt ♣5–♣6–♣7–♣8–♣9; ein Spieler hält die zweite ♣7 ...
        # kann nun die ♣5 und die ♣6 vom Tisch nehmen und mit seiner ♣7 ... auslegen"
        ("7C", "5C 6C 7C 8C 9C", False, ["7C"]),
        # [raeuber] "♦5–♦6–♦7 und ♠5–♠6–J; der Spieler hält ♣5, ♥6 und ♦9 ... ♦5–♠5–♣5,
        # ♦6–♥6–♠6 und ♦7–J–♦9"
        ("5C 6H 9D", "5D 6D 7D | 5S 6S JK", False, ["5C", "6H", "9D"]),
        # [rommee] Erstmeldung "mindestens 40": Q-K-A of hearts (10+10+11) and 10-J-Q of
        # spades (30) open; 2-3-4 of hearts (9) does not
        ("QH KH AH 10S JS QS", "", True, ["10S", "AH", "JS", "KH", "QH", "QS"]),
        ("2H 3H 4H", "", True, []),
        # a card that fits nowhere stays in the hand
        ("2C", "5D 6D 7D", False, []),
    ],
)
def test_solve_raeuber(rack: str, table: str, initial: bool, placed: list[str]) -> None:
    from tabletop.engine.solver import solve
    from tabletop.engine.turns import check_turn

    table_melds = parse_melds(table) if table else ()
    play = solve(RAEUBER, parse_items(rack), table_melds, initial=initial)
    assert sorted(str(item) for item in play.placed) == sorted(placed)
    if play.placed:
        verdict = check_turn(RAEUBER, table_melds, play.melds, play.placed, opened=not initial)
        assert verdict.valid, verdict.problems


@pytest.mark.parametrize("seed", range(20))
def test_raeuber_matches_exhaustive_search(seed: int) -> None:
    from tabletop.engine.items import all_naturals
    from tabletop.engine.solver import solve

    rng = random.Random(5000 + seed)
    cards = [c for c in all_naturals(RAEUBER.family) if c.rank >= 8] * 2
    rng.shuffle(cards)
    table_melds = []
    for _ in range(2):
        suit_cards = sorted({c for c in cards if c.suit == cards[0].suit}, key=lambda c: c.rank)
        run = suit_cards[:3]
        if len(run) == 3 and RAEUBER.analyse(run).valid:
            table_melds.append(tuple(run))
            for card in run:
                cards.remove(card)
    rack = cards[:5] + ([JOKER] if seed % 3 == 0 else [])
    table_items = [i for m in table_melds for i in m]
    best = 0
    for size in range(len(rack), 0, -1):
        if any(
            can_be_melded([*table_items, *chosen], RAEUBER)
            for chosen in set(itertools.combinations(sorted(rack, key=str), size))
        ):
            best = size
            break
    play = solve(RAEUBER, rack, table_melds)
    assert len(play.placed) == best


# --- known answers (optima found by exhaustive search over the rack's subsets) -------------
def rearrangement_answers() -> list[tuple[str, dict[str, object]]]:
    import json
    from pathlib import Path

    folder = Path(__file__).parents[1] / "data" / "rearrangement"
    return [
        (path.stem, case)
        for path in sorted(folder.glob("*.json"))
        for case in json.loads(path.read_text(encoding="utf-8"))
    ]


@pytest.mark.parametrize(("variant_id", "case"), rearrangement_answers())
def test_rearrangement_known_answers(variant_id: str, case: dict[str, object]) -> None:
    from tabletop.engine.solver import solve
    from tabletop.engine.turns import check_turn

    variant = find_variant(variant_id)
    table_text = str(case["table"])
    table_melds = parse_melds(table_text) if table_text.strip() else ()
    play = solve(
        variant,
        parse_items(str(case["rack"])),
        table_melds,
        initial=bool(case["initial"]),
        objective=str(case["objective"]),
    )
    achieved = len(play.placed) if case["objective"] == "tiles" else play.value
    assert achieved == case["optimum"]
    if play.placed:
        opened = not case["initial"]
        assert check_turn(variant, table_melds, play.melds, play.placed, opened=opened).valid


# Late-game positions with every tile of the set in play (bench/solver.py's named hard
# positions): the rack fits whole, and the value objective must find where its jokers count
# most without the search wandering (it once took 30 s and answered 9 tiles of 17).
HARD_TABLES = {
    "12 melds of 89 tiles, rack 17": (
        "R5 R6 R7 R8 R9 R10 | K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12"
        " | K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13 | B10 B11 B12"
        " | O2 O3 O4 O5 O6 O7 O8 O9 O10 O11 O12 O13 | O3 O4 O5 O6 O7 O8 O9 O10 O11"
        " | R7 R8 R9 R10 | B3 B4 B5 B6 B7 B8 B9 | B3 B4 B5 B6 B7 B8 B9 B10 B11 B12 B13"
        " | R2 R3 R4 R5 R6 | R2 R3 R4 | K13 R13 O13 B13",
        "B1 B1 B2 B2 O1 O1 O12 O2 R1 R1 R11 R11 R12 R12 R13 JK JK",
    ),
    "86 tiles, rack 20 with a joker": (
        "O6 O7 O8 O9 O10 | O1 O2 O3 O4 O5 O6 O7 O8 O9 O10 O11"
        " | R2 R3 R4 R5 R6 R7 R8 R9 JK R11 R12 R13 | B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11 B12 B13"
        " | B1 B2 B3 B4 B5 B6 B7 | R3 R4 R5 | K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13"
        " | K3 K4 K5 K6 K7 K8 K9 K10 | O12 R12 K12 | R7 R8 R9 R10 R11 | O1 O2 O3 O4 | B8 B9 B10",
        "B11 B12 B13 K1 K1 K11 K13 K2 O11 O12 O13 O13 O5 R1 R1 R10 R13 R2 R6 JK",
    ),
}


def _ilp_optimum(table: list[Item], rack: list[Item], objective: str) -> int:
    """The exact integer programme's optimum (native weights: a joker counts what it stands
    for under ``value``), the yardstick of the search."""
    from tabletop.engine.rearrange import NUMBERS, _grid
    from tabletop.engine.rearrange_ilp import Programme

    value = objective == "value"
    solved = Programme(
        _grid(table), _grid(rack), sum(isinstance(i, Joker) for i in table),
        sum(isinstance(i, Joker) for i in rack),
        weight_tile=[*NUMBERS] * 4 if value else [1] * 52,
        weight_joker=list(NUMBERS) if value else [1] * 13,
        threshold=0, reference_mode=False,
    ).best()
    assert solved is not None
    return solved[0]


@pytest.mark.parametrize("objective", ["tiles", "value"])
@pytest.mark.parametrize("name", list(HARD_TABLES))
def test_hard_positions_are_solved_optimally_well_within_a_hint_budget(
    name: str, objective: str
) -> None:
    table_text, rack_text = HARD_TABLES[name]
    table, rack = parse_melds(table_text), parse_items(rack_text)
    started = time.monotonic()
    play = solve(SABRA, rack, table, objective=objective, budget_s=1.0)
    elapsed = time.monotonic() - started
    assert play.optimal
    assert len(play.placed) == len(rack)  # every tile of the set ends on the table
    table_items = [bare(i) for meld in table for i in meld]
    rack_items = [bare(i) for i in rack]
    score = len(play.placed) if objective == "tiles" else play.value
    assert score == _ilp_optimum(table_items, rack_items, objective)
    assert elapsed < scaled(0.25), f"{elapsed:.2f} s"


@pytest.mark.parametrize("seed", range(6))
def test_value_objective_matches_the_integer_programme_on_big_tables(seed: int) -> None:
    # jokers on the rack are what once made the value search lose its way: a rack joker
    # placed at a low number still counted as worth 13 in the search's bound
    rng = random.Random(seed)
    table, rack = random_position(rng, 26, 15, 2)
    found = arrange(table, rack, objective="value")
    exact = _ilp_optimum(table, rack, "value")
    assert (found.score if found else None) == exact


def test_out_of_time_the_answer_is_the_best_play_found_and_more_time_finds_the_optimum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # probes that give up at once and programmes given no time, in rounds that never grow:
    # every budget runs out, and the answer is the best play found by then (the beam
    # search's), never the rack's own melds beside the table, which place fewer
    from tabletop.engine import rearrange

    table_text, rack_text = HARD_TABLES["86 tiles, rack 20 with a joker"]
    table, rack = parse_melds(table_text), parse_items(rack_text)
    rack_only = solve(SABRA, rack, (), objective="value")
    monkeypatch.setattr(rearrange, "SEARCH_BUDGET", 1)
    monkeypatch.setattr(rearrange, "ILP_SLICE", 0.0001)
    monkeypatch.setattr(rearrange, "ROUND_GROWTH", 1)
    answers = []
    for budget_s in (0.05, 0.2):
        started = time.monotonic()
        play = solve(SABRA, rack, table, objective="value", budget_s=budget_s)
        assert time.monotonic() - started < scaled(2 * budget_s + 0.25)
        assert not play.optimal
        assert len(play.placed) > len(rack_only.placed)
        answers.append((play.value, len(play.placed)))
    assert answers[1] >= answers[0]
    # rounds that grow: the portfolio proves the optimum
    monkeypatch.setattr(rearrange, "ROUND_GROWTH", 4)
    play = solve(SABRA, rack, table, objective="value", budget_s=30.0)
    assert play.optimal and (play.value, len(play.placed)) >= answers[1]
    assert play.value == _ilp_optimum(
        [bare(i) for meld in table for i in meld], [bare(i) for i in rack], "value"
    )


def _grid_position(table: list[Item], rack: list[Item]) -> tuple[list[int], list[int], int, int]:
    from tabletop.engine.rearrange import _grid

    return (_grid(table), _grid(rack), sum(isinstance(i, Joker) for i in table),
            sum(isinstance(i, Joker) for i in rack))


def _can_be_laid(table: list[Item]) -> bool:
    """Whether the table's items all fit into melds, by the integer programme: on a table
    of 22 melds with jokers the partition search can take minutes to say no."""
    from tabletop.engine.rearrange_ilp import Programme

    return Programme(*_grid_position(table, []), weight_tile=[1] * 52, weight_joker=[1] * 13,
                     threshold=0, reference_mode=False).best() is not None


@pytest.mark.parametrize("objective", ["tiles", "value"])
def test_the_relaxation_bounds_the_optimum_and_its_whole_answers_are_optimal(
    objective: str,
) -> None:
    from tabletop.engine.rearrange import NUMBERS
    from tabletop.engine.rearrange_ilp import Programme

    value = objective == "value"
    whole = 0
    for seed in range(12):
        table, rack = random_position(random.Random(seed), 22, 14, 2)
        if table and not _can_be_laid(table):
            continue
        relaxation = Programme(*_grid_position(table, rack),
                               weight_tile=[*NUMBERS] * 4 if value else [1] * 52,
                               weight_joker=list(NUMBERS) if value else [1] * 13,
                               threshold=0, reference_mode=False).relax()
        exact = _ilp_optimum(table, rack, objective)
        assert relaxation is not None and relaxation.ceiling >= exact, seed
        if relaxation.play is not None:
            whole += 1
            score, melds = relaxation.play
            assert score == exact, seed
            assert TableState.from_melds(SABRA, melds).problems() == []
            laid = Counter(bare(item) for meld in melds for item in meld)
            assert laid - Counter(map(bare, rack)) <= Counter(map(bare, table))
            assert Counter(map(bare, table)) <= laid
    assert whole, "no whole-numbered relaxation"  # often one is: then it is the play


def test_positions_the_probes_give_up_on_are_settled_by_the_relaxation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # probes that give up at once: the portfolio's next step, the linear relaxation, answers
    # the optimum of some positions by itself, with no integer programme solved, and every
    # answer is the optimum
    from tabletop.engine import rearrange
    from tabletop.engine.rearrange_ilp import Programme

    programmes: list[object] = []
    solve_programme = Programme.best

    def counted(self: Programme, *args: object, **kwargs: object) -> object:
        programmes.append(self)
        return solve_programme(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rearrange, "SEARCH_BUDGET", 1)
    monkeypatch.setattr(rearrange, "ILP_SLICE", 5.0)  # the relaxation's time, on a busy machine
    monkeypatch.setattr(Programme, "best", counted)
    settled = 0
    for seed in range(12):
        table, rack = random_position(random.Random(seed), 22, 14, 2)
        if table and not _can_be_laid(table):
            continue
        for objective in ("tiles", "value"):
            programmes.clear()
            found = arrange(table, rack, objective=objective)
            settled += not programmes
            assert found is not None
            assert found.score == _ilp_optimum(table, rack, objective), (seed, objective)
            check_arrangement(table, found)
    assert settled, "the relaxation settled no position"


def _melds_rummikub_solver_leaves_out(
    melds: tuple[tuple[Item, ...], ...],
) -> list[tuple[Item, ...]]:
    def is_run(meld: tuple[Item, ...]) -> bool:
        colours = {item.stands_for.color if isinstance(item, Joker) else item.color  # type: ignore[union-attr]
                   for item in meld}
        return len(colours) == 1
    return [meld for meld in melds
            if (is_run(meld) and len(meld) in (4, 5)
                and (isinstance(meld[0], Joker) or isinstance(meld[-1], Joker)))
            or (not is_run(meld) and len(meld) == 4 and any(isinstance(i, Joker) for i in meld))]


@pytest.mark.parametrize("seed", range(30))
def test_reference_mode_lays_only_the_melds_rummikub_solver_counts(seed: int) -> None:
    # the C search merges run codes no future can tell apart (a run's joker flags where
    # they no longer matter); the replay must follow, and the melds stay those the
    # reference counts, as many as a search that lays any legal meld where none of those
    # is needed
    table, rack = random_position(random.Random(seed), 14, 16, 2)
    if table and not _can_be_laid(table):
        pytest.skip("a table no arrangement holds")
    for objective in ("tiles", "value"):
        found = arrange(table, rack, objective=objective, reference_mode=True)
        assert found is not None
        check_arrangement(table, found)
        assert _melds_rummikub_solver_leaves_out(found.melds) == []
        anything = arrange(table, rack, objective=objective)
        assert anything is not None and anything.score >= found.score

