"""tabletop's rearrangement solver against rummikub-solver, side by side in one process.

    python -m bench.solver [--positions N] [--seed S] [--scaling] [--hard N] [--lay-off N]

Both solvers get the same mid-game Sabra positions (bench/positions.py): for
a player who has opened, the most tiles he can place with the table rebuilt;
for one who has not, the most numbered tiles he can open with (30 points from
the rack alone), as rummikub-solver's two modes define them.  tabletop runs
in its reference mode, which leaves out the melds rummikub-solver leaves out
(a joker in a set of four, or at an end of a run of four or five), so both
answer the same question; they must agree on every optimum.  Prints the
median and p99 time of each and the ratios.  Needs `pip install -e .[bench]`.

``--hard N`` adds N hard positions (:func:`hard_positions`): tables of 60-100
tiles in long runs and sets, racks of 15-30 tiles (what the tile set leaves),
up to two jokers on the table or the rack, 4 in 5 opened; and the two named
positions of :func:`named_positions`, where every tile of the set is in play.
Each is asked for the most tiles and for the most value.  rummikub-solver
counts a joker as nothing towards value, so the side-by-side value question
does too; an opening asked for its value has no reference there and is held
against the exact integer programme (:mod:`tabletop.engine.rearrange_ilp`).
tabletop's own value objective (a joker worth what it stands for) is timed
beside them.  Reported per group: median, p99 and worst of each, the ratios,
and how many positions tabletop took longer on than the reference.

``--lay-off N``: the games whose table may only be extended have no published solver,
so ``solve`` is held against the best exact method there is, an integer programme
(HiGHS as tabletop runs it: without presolve or feasibility jump; one integer variable
per move, as rummikub-solver models a rebuilt table) over
the same moves: every new meld the rack allows and every bundle it may lay onto each
table meld, at most one per table meld; solved exactly, its objective weighed as
tabletop's own programme weighs it.  N Rommé positions: racks of 26-30 cards and up
to three jokers beside four table melds, both objectives; they must agree on every
optimum.  Each position is solved by both once, untimed, before both are timed: they
share the analysis of the table melds and moves that a process keeps.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.positions import Position, dense_positions, play_games
from tabletop.engine import highs
from tabletop.engine.base import Variant
from tabletop.engine.items import (
    JOKER,
    Color,
    Item,
    Joker,
    Tile,
    format_items,
    parse_items,
    parse_melds,
)
from tabletop.engine.partition import MeldPacking
from tabletop.engine.rearrange import NUMBERS, arrange
from tabletop.engine.solver import SCORE_SCALE, _TableMelds, ranking, slot_scorer, solve
from tabletop.engine.variants import find_variant

COLOURS = list(Color)
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]


LAY_OFF_TABLES = (
    "5H 6H 7H | 9S 9H 9D | JC QC KC | 3D 4D 5D 6D",
    "AS 2S 3S | 7C 7D 7S | 10H JH QH | 4C 5C JK",
    "8D 9D 10D | KS KH KD | 2C 3C 4C | 5S 6S 7S 8S",
)
"""Rommé tables to lay off onto (one with a joker to exchange)."""


def cards(rng: random.Random, count: int, jokers: int, decks: int,
         without: tuple[Item, ...] = ()) -> tuple[Item, ...]:
    deck = [rank + suit for rank in RANKS for suit in "SHDC"] * decks
    for item in without:
        if str(item) in deck:
            deck.remove(str(item))
    rng.shuffle(deck)
    return parse_items(" ".join(deck[:count] + ["JK"] * jokers))


def reference_solver() -> tuple[Any, Any, Callable[[Item], Any]]:
    try:
        from rummikub_solver import RuleSet, SolverMode
    except ImportError:
        sys.exit("the reference is not installed: pip install -e '.[bench]'")
    rules = RuleSet()
    tiles = rules.tiles

    def convert(item: Item) -> Any:
        if isinstance(item, Joker):
            return tiles[-1]
        assert isinstance(item, Tile)
        return tiles[item.color.index * 13 + item.number - 1]

    return rules, SolverMode, convert


def ours(position: Position) -> int:
    if position.opened:
        found = arrange(
            position.table_items, position.rack, reference_mode=True, table_is_legal=True
        )
    else:
        found = arrange([], position.rack, threshold=30, joker_weight=0, reference_mode=True)
    if found is None:
        return 0
    if position.opened:
        return len(found.placed)
    return sum(isinstance(item, Tile) for item in found.placed)


def theirs(rules: Any, modes: Any, convert: Callable[[Item], Any], position: Position) -> int:
    state = rules.new_game()
    state.add_rack(*map(convert, position.rack))
    if position.opened:
        state.add_table(*map(convert, position.table_items))
        state.initial = False
        solution = rules.solve(state, modes.TILE_COUNT)
        return 0 if solution is None else len(solution.tiles)
    # the opening alone (rummikub-solver's INITIAL objective: numbered tiles from the rack)
    answer = rules._solver(modes.INITIAL, state)
    joker_number = rules.tile_count if rules.jokers else None  # tiles are numbered 1..53
    return sum(1 for tile in answer.tiles if tile != joker_number)


def timed(function: Callable[[], int]) -> tuple[int, float]:
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def compare(positions: list[Position]) -> dict[str, Any]:
    rules, modes, convert = reference_solver()
    from tabletop.engine.rearrange_ilp import prepare

    prepare()  # as rummikub-solver builds its models on import, build ours before timing
    # warm both up (rummikub-solver compiles its problems on first use)
    for position in positions[:3]:
        ours(position)
        theirs(rules, modes, convert, position)
    our_times, their_times, disagreements, slips = [], [], [], []
    for position in positions:
        mine, my_time = timed(lambda p=position: ours(p))
        reference, reference_time = timed(lambda p=position: theirs(rules, modes, convert, p))
        our_times.append(my_time)
        their_times.append(reference_time)
        if mine != reference:
            # rummikub-solver's model, reused across positions, has answered a position
            # short that a fresh one answers right: asked again afresh before it counts
            if theirs(*reference_solver(), position) == mine:
                slips.append((position, mine, reference))
            else:
                disagreements.append((position, mine, reference))
    return {
        "positions": len(positions),
        "disagreements": disagreements,
        "reference_slips": slips,
        "ours_median": statistics.median(our_times),
        "ours_p99": percentile(our_times, 0.99),
        "theirs_median": statistics.median(their_times),
        "theirs_p99": percentile(their_times, 0.99),
        "ours_max": max(our_times),
        "theirs_max": max(their_times),
        "slower": sum(mine > theirs for mine, theirs in zip(our_times, their_times, strict=True)),
        "closest": min(theirs / mine for mine, theirs in zip(our_times, their_times, strict=True)),
    }


def scaling(seed: int) -> list[tuple[str, str, int, float, float]]:
    """Median time by table and rack size, from the opening rack to a table of 90."""
    positions = play_games(seed, 500, hold_back=0.6) + play_games(seed + 1, 500, hold_back=0.1)
    positions += dense_positions(seed, 40, 75) + dense_positions(seed + 1, 40, 88)
    rows = []
    openings = [p for p in positions if not p.opened]
    if openings:
        times = [timed(lambda p=p: ours(p))[1] for p in openings]
        rows.append(
            ("opening (rack only)", "8-30", len(openings), statistics.median(times), max(times))
        )
    for label, low, high in (
        ("1-20", 1, 20),
        ("21-45", 21, 45),
        ("46-70", 46, 70),
        ("71-90", 71, 90),
    ):
        for rack_low, rack_high in ((8, 14), (15, 22), (23, 34)):
            chosen = [
                p
                for p in positions
                if p.opened
                and low <= len(p.table_items) <= high
                and rack_low <= len(p.rack) <= rack_high
            ]
            if not chosen:
                continue
            times = [timed(lambda p=p: ours(p))[1] for p in chosen]
            rows.append(
                (
                    label,
                    f"{rack_low}-{rack_high}",
                    len(chosen),
                    statistics.median(times),
                    max(times),
                )
            )
    return rows


OBJECTIVES = ("tiles", "value")


def _table(rng: random.Random, tiles: int) -> tuple[list[tuple[Item, ...]], Counter[Item]]:
    """Melds of about ``tiles`` tiles drawn from one tile set (runs of 3-13, sets of 3-4),
    and the tiles left."""
    colours = list(Color)
    pool: Counter[Item] = Counter({Tile(c, n): 2 for c in colours for n in NUMBERS})
    table: list[tuple[Item, ...]] = []
    laid = attempts = 0
    while laid < tiles and attempts < 5000:
        attempts += 1
        if rng.random() < 0.6:
            colour, length = rng.choice(colours), rng.randint(3, 13)
            start = rng.randint(1, 14 - length)
            meld: tuple[Item, ...] = tuple(Tile(colour, n) for n in range(start, start + length))
        else:
            number = rng.randint(1, 13)
            meld = tuple(Tile(c, number) for c in rng.sample(colours, rng.randint(3, 4)))
        if all(pool[t] > 0 for t in meld) and laid + len(meld) <= tiles:
            pool.subtract(meld)
            table.append(meld)
            laid += len(meld)
    return table, +pool


def _jokers_onto(rng: random.Random, table: list[tuple[Item, ...]], pool: Counter[Item],
                 count: int) -> int:
    """Put up to ``count`` jokers into the table's runs of four or more (inside, where
    both solvers allow them), the tiles they replace going back to the pool."""
    placed = 0
    for _ in range(count):
        runs = [i for i, meld in enumerate(table)
                if len(meld) >= 4 and not any(isinstance(x, Joker) for x in meld)
                and len({x.color for x in meld if isinstance(x, Tile)}) == 1]
        if not runs:
            break
        index = rng.choice(runs)
        meld = list(table[index])
        where = rng.randrange(1, len(meld) - 1)
        pool[meld[where]] += 1
        meld[where] = JOKER
        table[index] = tuple(meld)
        placed += 1
    return placed


def hard_positions(seed: int, count: int) -> list[Position]:
    """``count`` hard Sabra positions: a table of 60-100 tiles, a rack of 15-30 tiles (as
    many as the set has left), up to two jokers between them, 4 in 5 opened."""
    rng = random.Random(seed)
    positions: list[Position] = []
    while len(positions) < count:
        table, pool = _table(rng, rng.randint(60, 100))
        jokers = rng.randint(0, 2)
        on_table = _jokers_onto(rng, table, pool, rng.randint(0, jokers))
        rest = sorted(pool.elements(), key=str)
        rng.shuffle(rest)
        rack = [*rest[: rng.randint(15, 30) - (jokers - on_table)], *[JOKER] * (jokers - on_table)]
        positions.append(Position(tuple(table), tuple(rack), rng.random() < 0.8))
    return positions


def _all_in_play(seed: int, melds: int, tiles: int, jokers_on_table: int) -> Position:
    """The first table (seeds from ``seed`` on) of exactly ``melds`` melds and ``tiles``
    tiles; every tile the table leaves, both jokers included, on the rack."""
    for attempt in itertools.count(seed):
        rng = random.Random(attempt)
        table, pool = _table(rng, tiles)
        if len(table) != melds or sum(map(len, table)) != tiles:
            continue
        on_table = _jokers_onto(rng, table, pool, jokers_on_table)
        rack = sorted(pool.elements(), key=str) + [JOKER] * (2 - on_table)
        return Position(tuple(table), tuple(rack), True)
    raise AssertionError("unreachable")


def named_positions() -> dict[str, Position]:
    """The two late-game Sabra positions of the optimiser's hard cases, every tile of the
    set in play: a 12-meld table of 89 tiles with a 17-tile rack (both jokers on it), and a
    table of 86 tiles (a joker in a run) with a 20-tile rack holding the other joker."""
    return {
        "12 melds, 89 tiles, rack 17": _all_in_play(46_139, 12, 89, 0),
        "86 tiles, rack 20 with a joker": _all_in_play(46_110, 12, 86, 1),
    }


def hard_ours(position: Position, objective: str, native: bool = False) -> int:
    """tabletop's optimum for ``objective``; the value of a joker is nothing (as the
    reference counts it) unless ``native`` (what it stands for, as ``solve`` counts it)."""
    joker_weight = None if native else 0
    if position.opened:
        found = arrange(position.table_items, position.rack, objective=objective,
                        reference_mode=True, table_is_legal=True,
                        joker_weight=joker_weight if objective == "value" else None)
        if found is None:
            return 0
        return len(found.placed) if objective == "tiles" else found.score
    found = arrange([], position.rack, objective=objective, threshold=30,
                    joker_weight=0 if objective == "tiles" else joker_weight,
                    reference_mode=True)
    return 0 if found is None else found.score


def _exact_opening_value(position: Position) -> int:
    """The most value an opening can have (jokers count nothing), by the integer
    programme: the exact reference where rummikub-solver has none."""
    from tabletop.engine.rearrange_ilp import Programme

    rack = [0] * 52
    for item in position.rack:
        if isinstance(item, Tile):
            rack[item.color.index * 13 + item.number - 1] += 1
    jokers = sum(isinstance(item, Joker) for item in position.rack)
    solved = Programme([0] * 52, rack, 0, jokers, weight_tile=[*NUMBERS] * 4,
                       weight_joker=[0] * 13, threshold=30, reference_mode=True).best()
    return 0 if solved is None else solved[0]


def hard_theirs(rules: Any, modes: Any, convert: Callable[[Item], Any], position: Position,
                objective: str) -> int:
    if objective == "tiles":
        return theirs(rules, modes, convert, position)
    if not position.opened:
        return _exact_opening_value(position)
    state = rules.new_game()
    state.add_rack(*map(convert, position.rack))
    state.add_table(*map(convert, position.table_items))
    state.initial = False
    solution = rules.solve(state, modes.TOTAL_VALUE)
    if solution is None:
        return 0
    # tiles are numbered colour by colour, 1..52, the joker after them (worth nothing)
    return sum((tile - 1) % 13 + 1 for tile in solution.tiles if tile <= 52)


@dataclass
class Group:
    """The times of one kind of hard question, ours beside the reference's."""

    ours: list[float]
    theirs: list[float]
    native: list[float]
    disagreements: list[tuple[str, int, int]]
    slower: int = 0


def compare_hard(named: dict[str, Position], positions: list[Position]) -> dict[str, Group]:
    """Every position in both objectives, the two solvers side by side; groups keyed
    "opened tiles", "opened value", "opening tiles", "opening value"."""
    rules, modes, convert = reference_solver()
    from tabletop.engine.rearrange_ilp import prepare

    prepare()
    everything = [*named.items(), *((f"hard #{i}", p) for i, p in enumerate(positions))]
    # warm both up: rummikub-solver compiles its problems on first use, the C search builds
    # its move tables per count of jokers in play
    warm: dict[int, Position] = {}
    for _, position in everything:
        jokers = sum(isinstance(i, Joker) for i in (*position.rack, *position.table_items))
        warm.setdefault(jokers, position)
    for position in warm.values():
        for objective in OBJECTIVES:
            hard_ours(position, objective)
            hard_ours(position, objective, native=True)
            hard_theirs(rules, modes, convert, position, objective)
    groups: dict[str, Group] = {}
    for name, position in everything:
        for objective in OBJECTIVES:
            key = f"{'opened' if position.opened else 'opening'} {objective}"
            group = groups.setdefault(key, Group([], [], [], []))
            mine, my_time = timed(lambda p=position, o=objective: hard_ours(p, o))
            reference, their_time = timed(
                lambda p=position, o=objective: hard_theirs(rules, modes, convert, p, o)
            )
            _, native_time = timed(lambda p=position, o=objective: hard_ours(p, o, native=True))
            group.ours.append(my_time)
            group.theirs.append(their_time)
            group.native.append(native_time)
            group.slower += my_time > their_time
            if mine != reference:
                group.disagreements.append((name, mine, reference))
    return groups


def named_figures(named: dict[str, Position]) -> list[tuple[str, str, int, float, int, float]]:
    """The named positions in both objectives (jokers worth what they stand for, as
    ``solve`` answers): (position, objective, our score, our seconds, reference score,
    reference seconds); the reference values a joker at nothing."""
    rules, modes, convert = reference_solver()
    rows = []
    for name, position in named.items():
        for objective in OBJECTIVES:
            mine, my_time = timed(lambda p=position, o=objective: hard_ours(p, o, native=True))
            reference, their_time = timed(
                lambda p=position, o=objective: hard_theirs(rules, modes, convert, p, o)
            )
            rows.append((name, objective, mine, my_time, reference, their_time))
    return rows


def hard_report(groups: dict[str, Group]) -> list[str]:
    ms = 1000.0
    lines = ["| question | positions | tabletop median / p99 / worst ms | reference median / p99"
             " / worst ms | ratio median / p99 / worst | tabletop slower | tabletop's own value"
             " objective median / p99 / worst ms |", "|---|---|---|---|---|---|---|"]
    for key, group in groups.items():
        mine = [statistics.median(group.ours), percentile(group.ours, 0.99), max(group.ours)]
        theirs_ = [statistics.median(group.theirs), percentile(group.theirs, 0.99),
                   max(group.theirs)]
        native = [statistics.median(group.native), percentile(group.native, 0.99),
                  max(group.native)]
        reference = "integer programme" if key == "opening value" else "rummikub-solver"
        lines.append(
            f"| {key} (vs {reference}) | {len(group.ours)} | "
            + " / ".join(f"{t * ms:.2f}" for t in mine) + " | "
            + " / ".join(f"{t * ms:.1f}" for t in theirs_) + " | "
            + " / ".join(f"{b / a:.0f}x" for a, b in zip(mine, theirs_, strict=True))
            + f" | {group.slower} | "
            + (" / ".join(f"{t * ms:.2f}" for t in native) if key.endswith("value") else "-")
            + " |"
        )
        for name, ours_, reference_ in group.disagreements[:5]:
            lines.append(f"  disagreement on {name}: ours {ours_} vs reference {reference_}")
    return lines


def lay_off_positions(seed: int, count: int
                      ) -> list[tuple[tuple[Item, ...], tuple[tuple[Item, ...], ...], str]]:
    """``count`` Rommé racks of 26-30 cards and 0-3 jokers beside a table of four melds
    with no joker (so no exchange: both methods answer the same question), with the
    objective (the two alternate)."""
    rng = random.Random(seed)
    tables = [parse_melds(text) for text in LAY_OFF_TABLES if "JK" not in text]
    found = []
    for index in range(count):
        table = tuple(rng.choice(tables))
        on_table = tuple(item for meld in table for item in meld)
        rack = cards(rng, rng.randint(26, 30), rng.randint(0, 3), 2, without=on_table)
        found.append((rack, table, ("tiles", "value")[index % 2]))
    return found


def lay_off_milp(variant: Variant, rack: tuple[Item, ...], table: tuple[tuple[Item, ...], ...],
                 objective: str) -> tuple[int, ...]:
    """The best play by an integer programme over every move (new melds and bundles laid
    onto the table) as :func:`tabletop.engine.solver.solve` ranks it."""
    import numpy as np

    melds = _TableMelds(variant, table)
    counts = Counter(rack)
    lay_offs = [step.lay_off for anchor in melds.anchors
                for step in melds.bundles_of(anchor, counts) if step.lay_off is not None]
    packing = MeldPacking(variant, rack, slot_scorer(objective), lay_offs=lay_offs,
                          tables=len(table), lead=SCORE_SCALE)
    moves = packing.moves()
    if not moves:
        return (0, 0)
    fields = range(packing.fields)
    matrix = np.array([[(move.mask >> (4 * f)) & 15 for move in moves] for f in fields])
    have = np.array([(packing.start >> (4 * f)) & 15 for f in fields])
    # HiGHS without presolve or feasibility jump (highs.solve): on these programmes several
    # times faster than as SciPy's milp runs it, so the best exact method there is; solved
    # exactly, its first criterion weighed as tabletop's own programme weighs it (HiGHS
    # solves that faster than a weight of SCORE_SCALE)
    programme = packing.programme_arrays(highs.by_columns(
        -np.array([move.score for move in moves], dtype=float), np.full(len(moves), np.inf),
        np.zeros(len(have)), have, highs.columns_of(matrix)), moves)
    solved = highs.solve(programme, integer=True, whole=True)
    assert solved.status == highs.OPTIMAL
    solution = solved.solution
    chosen = [move for move, x in zip(moves, solution, strict=True) for _ in range(round(x))]
    score = sum(move.score for move in chosen)
    return divmod(score, SCORE_SCALE)


def compare_lay_offs(seed: int, count: int) -> dict[str, Any]:
    from tabletop.engine.rearrange_ilp import prepare

    prepare()
    rommee = find_variant("rommee")
    positions = lay_off_positions(seed, count)
    our_times, their_times, disagreements = [], [], []
    for rack, table, objective in positions:
        # both once untimed: they share the table melds' and the moves' analysis, which a
        # process keeps, so the one timed first would pay it for both
        solve(rommee, rack, table, objective=objective)
        lay_off_milp(rommee, rack, table, objective)
        started = time.perf_counter()
        play = solve(rommee, rack, table, objective=objective)
        our_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        reference = lay_off_milp(rommee, rack, table, objective)
        their_times.append(time.perf_counter() - started)
        if ranking(play, objective)[1:] != reference:
            disagreements.append((rack, table, objective, ranking(play, objective)[1:], reference))
    return {"positions": count, "disagreements": disagreements,
            "ours": our_times, "theirs": their_times}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--scaling", action="store_true", help="also time by rack and table size")
    parser.add_argument("--lay-off", type=int, default=0, metavar="N",
                        help="also N Rommé positions to lay off onto, against an integer"
                             " programme")
    parser.add_argument("--hard", type=int, default=0, metavar="N",
                        help="also N hard positions and the two named ones, both objectives")
    args = parser.parse_args(argv)
    positions = play_games(args.seed, args.positions)
    result = compare(positions)
    jokers = sum(any(isinstance(i, Joker) for i in (*p.rack, *p.table_items)) for p in positions)
    opened = sum(p.opened for p in positions)
    print(f"positions: {result['positions']} ({opened} opened, {jokers} with a joker in play)")
    print(
        f"racks {min(len(p.rack) for p in positions)}-{max(len(p.rack) for p in positions)} tiles,"
        f" tables up to {max(len(p.table_items) for p in positions)} tiles"
    )
    print(f"disagreements on the optimum: {len(result['disagreements'])}")
    for position, mine, reference in result["disagreements"][:5]:
        print(f"  ours {mine} vs reference {reference}: {position}")
    for position, mine, reference in result["reference_slips"]:
        print(f"  rummikub-solver answered {reference} where a fresh instance of it answers"
              f" {mine}, as tabletop does: {position}")
    ms = 1000.0
    for name, key in (("tabletop", "ours"), ("rummikub-solver", "theirs")):
        median, p99 = result[f"{key}_median"] * ms, result[f"{key}_p99"] * ms
        print(f"{name:15} median {median:8.2f} ms   p99 {p99:8.2f} ms"
              f"   worst {result[f'{key}_max'] * ms:8.2f} ms")
    median_ratio = result["theirs_median"] / result["ours_median"]
    p99_ratio = result["theirs_p99"] / result["ours_p99"]
    print(f"ratio (reference / tabletop): median {median_ratio:.1f}x, p99 {p99_ratio:.1f}x;"
          f" positions tabletop took longer on: {result['slower']}"
          f" (closest: the reference {result['closest']:.1f}x tabletop's time)")
    if args.scaling:
        print("\ntabletop time by table and rack size (opened positions):")
        print("| table tiles | rack tiles | positions | median ms | max ms |")
        print("|---|---|---|---|---|")
        for label, racks, count, median, worst in scaling(args.seed):
            print(f"| {label} | {racks} | {count} | {median * ms:.2f} | {worst * ms:.2f} |")
    failed = bool(result["disagreements"])
    if args.hard:
        named = named_positions()
        groups = compare_hard(named, hard_positions(args.seed, args.hard))
        print(f"\nhard positions: {args.hard} and the two named ones, each in both objectives")
        print("\n".join(hard_report(groups)))
        print("\nthe named positions, jokers worth what they stand for (the reference: nothing):")
        for name, objective, mine, my_time, reference, their_time in named_figures(named):
            print(f"  {name}, most {objective}: tabletop {mine} in {my_time * ms:.1f} ms,"
                  f" rummikub-solver {reference} in {their_time * ms:.1f} ms")
        failed = failed or any(group.disagreements for group in groups.values())
    if args.lay_off:
        laid = compare_lay_offs(args.seed, args.lay_off)
        print(f"\nRommé, laid off onto a table of four melds: {args.lay_off} positions,"
              f" racks 26-30 cards with up to three jokers, against an integer programme")
        print(f"disagreements on the optimum: {len(laid['disagreements'])}")
        for rack, table, objective, mine, reference in laid["disagreements"][:5]:
            print(f"  most {objective}: ours {mine} vs {reference}: {format_items(rack)}"
                  f" beside {' | '.join(format_items(meld) for meld in table)}")
        for name, key in (("tabletop", "ours"), ("integer programme", "theirs")):
            times = laid[key]
            print(f"{name:17} median {statistics.median(times) * ms:8.2f} ms"
                  f"   p99 {percentile(times, 0.99) * ms:8.2f} ms   max {max(times) * ms:8.2f} ms")
        ours_times, theirs_times = laid["ours"], laid["theirs"]
        print(f"ratio (integer programme / tabletop): median"
              f" {statistics.median(theirs_times) / statistics.median(ours_times):.1f}x,"
              f" p99 {percentile(theirs_times, 0.99) / percentile(ours_times, 0.99):.1f}x;"
              f" slower than it on"
              f" {sum(o > t for o, t in zip(ours_times, theirs_times, strict=True))}")
        failed = failed or bool(laid["disagreements"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
