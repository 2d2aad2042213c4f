"""tabletop's rearrangement solver against rummikub-solver, side by side in one process.

    python -m bench.solver [--positions N] [--seed S] [--scaling]

Both solvers get the same mid-game Sabra positions (bench/positions.py): for
a player who has opened, the most tiles he can place with the table rebuilt;
for one who has not, the most numbered tiles he can open with (30 points from
the rack alone), as rummikub-solver's two modes define them.  tabletop runs
in its reference mode, which leaves out the melds rummikub-solver leaves out
(a joker in a set of four, or at an end of a run of four or five), so both
answer the same question; they must agree on every optimum.  Prints the
median and p99 time of each and the ratios.  Needs `pip install -e .[bench]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.positions import Position, dense_positions, play_games
from tabletop.engine.items import Color, Item, Joker, Tile
from tabletop.engine.rearrange import arrange

COLOURS = list(Color)


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
    our_times, their_times, disagreements = [], [], []
    for position in positions:
        mine, my_time = timed(lambda p=position: ours(p))
        reference, reference_time = timed(lambda p=position: theirs(rules, modes, convert, p))
        our_times.append(my_time)
        their_times.append(reference_time)
        if mine != reference:
            disagreements.append((position, mine, reference))
    return {
        "positions": len(positions),
        "disagreements": disagreements,
        "ours_median": statistics.median(our_times),
        "ours_p99": percentile(our_times, 0.99),
        "theirs_median": statistics.median(their_times),
        "theirs_p99": percentile(their_times, 0.99),
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--scaling", action="store_true", help="also time by rack and table size")
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
    ms = 1000.0
    for name, key in (("tabletop", "ours"), ("rummikub-solver", "theirs")):
        median, p99 = result[f"{key}_median"] * ms, result[f"{key}_p99"] * ms
        print(f"{name:15} median {median:8.2f} ms   p99 {p99:8.2f} ms")
    median_ratio = result["theirs_median"] / result["ours_median"]
    p99_ratio = result["theirs_p99"] / result["ours_p99"]
    print(f"ratio (reference / tabletop): median {median_ratio:.1f}x, p99 {p99_ratio:.1f}x")
    if args.scaling:
        print("\ntabletop time by table and rack size (opened positions):")
        print("| table tiles | rack tiles | positions | median ms | max ms |")
        print("|---|---|---|---|---|")
        for label, racks, count, median, worst in scaling(args.seed):
            print(f"| {label} | {racks} | {count} | {median * ms:.2f} | {worst * ms:.2f} |")
    return 1 if result["disagreements"] else 0


if __name__ == "__main__":
    sys.exit(main())
