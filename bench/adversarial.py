"""The optimiser on hard positions, per variant, under a time budget.

    python -m bench.adversarial [--positions N] [--budget SECONDS] [--seed S] [--memory]

Positions are made to be hard, not to be likely: the longest racks the material allows
with several jokers (27-30 items for Rommé, whole-rack openings asked for their value),
and Räuber-Rommé's table of 14 melds with four jokers to rebuild with a 13-card rack.
Each is solved with ``solve(..., budget_s=SECONDS)``; the table gives per variant how
many finished optimally, the time taken (median, p99, max: the budget must bound it)
and, with ``--memory``, the peak memory the search allocated (Python objects, through
tracemalloc, in a second call of each position: tracing slows the search several times
over, so it is kept out of the timed call).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass

from tabletop.engine.items import Item, parse_items, parse_melds
from tabletop.engine.solver import solve
from tabletop.engine.variants import find_variant

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
RAEUBER_TABLE = (
    "AS 2S 3S | 4S 5S 6S | 7S 8S 9S | AH 2H 3H | 4H 5H 6H | 8H 9H 10H | AD 2D 3D | 4D 5D 6D"
    " | 7D 8D 9D | AC 2C 3C | JK 5C 6C | 9C JK JC | QS QH JK | 7C 7H JK"
)


@dataclass(frozen=True)
class Position:
    variant: str
    rack: tuple[Item, ...]
    table: tuple[tuple[Item, ...], ...]
    initial: bool
    objective: str


def _cards(rng: random.Random, count: int, jokers: int, decks: int,
           without: tuple[Item, ...] = ()) -> tuple[Item, ...]:
    deck = [rank + suit for rank in RANKS for suit in "SHDC"] * decks
    for item in without:
        if str(item) in deck:
            deck.remove(str(item))
    rng.shuffle(deck)
    return parse_items(" ".join(deck[:count] + ["JK"] * jokers))


def _tiles(rng: random.Random, count: int, jokers: int) -> tuple[Item, ...]:
    bag = [f"{colour}{number}" for colour in "KBOR" for number in range(1, 14)] * 2
    rng.shuffle(bag)
    return parse_items(" ".join(bag[:count] + ["JK"] * jokers))


def positions(per_variant: int, seed: int) -> Iterator[Position]:
    rng = random.Random(seed)
    table = tuple(parse_melds(RAEUBER_TABLE))
    on_table = tuple(item for meld in table for item in meld)
    for _ in range(per_variant):
        initial = rng.random() < 0.5
        objective = rng.choice(["tiles", "value"])
        yield Position("rommee", _cards(rng, rng.randint(26, 28), rng.randint(2, 4), 2), (),
                       initial, objective)
        yield Position("raeuber", _cards(rng, 13, 0, 2, without=on_table), table, False,
                       objective)
        yield Position("wiener", _cards(rng, 11, 2, 2), (), False, objective)
        yield Position("rum500", _cards(rng, 24, 2, 1), (), False, objective)
        yield Position("american-rummy", _cards(rng, 30, 0, 1), (), False, objective)
        yield Position("remi", _tiles(rng, 24, 2), (), initial, objective)
        yield Position("rummikub-american", _tiles(rng, 24, 2), (), initial, objective)
        yield Position("sabra", _tiles(rng, rng.randint(16, 20), rng.randint(1, 2)), (),
                       initial, objective)


@dataclass
class Tally:
    seconds: list[float]
    peaks: list[int]
    optimal: int = 0


def run(per_variant: int, budget_s: float, seed: int, memory: bool = False) -> dict[str, Tally]:
    tallies: dict[str, Tally] = {}
    for position in positions(per_variant, seed):
        tally = tallies.setdefault(position.variant, Tally([], []))
        variant = find_variant(position.variant)
        started = time.monotonic()
        play = solve(variant, position.rack, position.table, initial=position.initial,
                     objective=position.objective, budget_s=budget_s)
        tally.seconds.append(time.monotonic() - started)
        tally.optimal += play.optimal
        if memory:
            # a second call, traced: tracemalloc hooks every allocation, which slows a
            # search that counts in large integers several times over, so the times and
            # the optimal count come from the first call
            tracemalloc.start()
            solve(variant, position.rack, position.table, initial=position.initial,
                  objective=position.objective, budget_s=budget_s)
            tally.peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
    return tallies


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def report(tallies: dict[str, Tally], budget_s: float) -> str:
    lines = [f"budget {budget_s:g} s per call",
             f"{'variant':24}{'optimal':>10}{'p50 s':>9}{'p99 s':>9}{'max s':>9}"
             f"{'max/budget':>12}{'peak MB':>9}"]
    for variant, tally in tallies.items():
        worst = max(tally.seconds)
        peak = f"{max(tally.peaks) / 1e6:>9.1f}" if tally.peaks else f"{'-':>9}"
        lines.append(
            f"{variant:24}{tally.optimal:>5}/{len(tally.seconds):<4}"
            f"{statistics.median(tally.seconds):>9.3f}{_p99(tally.seconds):>9.3f}"
            f"{worst:>9.3f}{worst / budget_s:>12.2f}{peak}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.adversarial")
    parser.add_argument("--positions", type=int, default=10, help="positions per variant")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per call")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memory", action="store_true",
                        help="also measure each call's peak memory (a second, traced call)")
    args = parser.parse_args(argv)
    print(report(run(args.positions, args.budget, args.seed, args.memory), args.budget))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
