"""The optimiser on hard positions, per variant, under a time budget.

    python -m bench.adversarial [--positions N] [--budget SECONDS] [--seed S] [--memory]
                                [--sweep]

Positions are made to be hard, not to be likely: the longest racks the material allows
with several jokers (27-30 items for Rommé, whole-rack openings asked for their value;
26-33 beside a table of four melds to lay off onto), Räuber-Rommé's table of 14 melds
with four jokers to rebuild with a 13-card rack, and Sabra tables of 60-100 tiles to
rebuild with racks of 15-30 (bench/solver.py's hard positions). Each is solved with
``solve(..., budget_s=SECONDS)``; the table gives per variant how many finished
optimally, the time taken (median, p99, max: the budget must bound it) and, with
``--memory``, the peak memory the search allocated (Python objects, through tracemalloc,
in a second call of each position: tracing slows the search several times over, so it is
kept out of the timed call).

``--sweep`` asks every position again under each budget of :data:`SWEEP_BUDGETS` (0.2 to
5 s) and holds the budget to its promise: every call ends within 1.1 x its budget + 50 ms,
and no answer is worse than the one a smaller budget gave.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bench.solver import LAY_OFF_TABLES, cards, hard_positions
from tabletop.engine.items import Item, parse_items, parse_melds
from tabletop.engine.rearrange_ilp import prepare
from tabletop.engine.solver import ranking, solve
from tabletop.engine.variants import find_variant

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
    label: str = ""
    """What the report calls it (its variant where empty)."""

    @property
    def kind(self) -> str:
        return self.label or self.variant


def _tiles(rng: random.Random, count: int, jokers: int) -> tuple[Item, ...]:
    bag = [f"{colour}{number}" for colour in "KBOR" for number in range(1, 14)] * 2
    rng.shuffle(bag)
    return parse_items(" ".join(bag[:count] + ["JK"] * jokers))


def positions(per_variant: int, seed: int) -> Iterator[Position]:
    rng = random.Random(seed)
    table = tuple(parse_melds(RAEUBER_TABLE))
    on_table = tuple(item for meld in table for item in meld)
    rebuilt = hard_positions(seed, per_variant)
    for index in range(per_variant):
        initial = rng.random() < 0.5
        objective = rng.choice(["tiles", "value"])
        yield Position("rommee", cards(rng, rng.randint(26, 28), rng.randint(2, 4), 2), (),
                       initial, objective)
        yield Position("raeuber", cards(rng, 13, 0, 2, without=on_table), table, False,
                       objective)
        laid = tuple(parse_melds(rng.choice(LAY_OFF_TABLES)))
        on_laid = tuple(item for meld in laid for item in meld)
        yield Position("rommee", cards(rng, rng.randint(26, 30), rng.randint(0, 3), 2,
                                        without=on_laid), laid, False, objective, "rommee-lay-off")
        yield Position("wiener", cards(rng, 11, 2, 2), (), False, objective)
        yield Position("rum500", cards(rng, 24, 2, 1), (), False, objective)
        yield Position("american-rummy", cards(rng, 30, 0, 1), (), False, objective)
        yield Position("remi", _tiles(rng, 24, 2), (), initial, objective)
        yield Position("rummikub-american", _tiles(rng, 24, 2), (), initial, objective)
        yield Position("sabra", _tiles(rng, rng.randint(16, 20), rng.randint(1, 2)), (),
                       initial, objective)
        big = rebuilt[index]
        yield Position("sabra", big.rack, big.table, not big.opened, objective)


@dataclass
class Tally:
    seconds: list[float]
    peaks: list[int]
    optimal: int = 0


def run(per_variant: int, budget_s: float, seed: int, memory: bool = False) -> dict[str, Tally]:
    prepare()  # SciPy imported before timing, as the panel's server and bench.solver do
    tallies: dict[str, Tally] = {}
    for position in positions(per_variant, seed):
        tally = tallies.setdefault(position.kind, Tally([], []))
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


SWEEP_BUDGETS = (0.2, 0.5, 1.0, 2.0, 5.0)
"""The budgets of ``--sweep``, in seconds."""


def promised_seconds(budget_s: float) -> float:
    """The most a call with ``budget_s`` may take: 1.1 x the budget + 50 ms."""
    return budget_s * 1.1 + 0.05


@dataclass(frozen=True)
class SweepCall:
    budget_s: float
    seconds: float
    ranking: tuple[int, ...]
    optimal: bool


def sweep(position: Position, budgets: tuple[float, ...] = SWEEP_BUDGETS) -> list[SweepCall]:
    """``position`` solved under each budget, smallest first."""
    prepare()
    variant = find_variant(position.variant)
    calls = []
    for budget_s in sorted(budgets):
        started = time.monotonic()
        play = solve(variant, position.rack, position.table, initial=position.initial,
                     objective=position.objective, budget_s=budget_s)
        seconds = time.monotonic() - started
        calls.append(SweepCall(budget_s, seconds, ranking(play, position.objective),
                               play.optimal))
    return calls


def broken_promises(calls: list[SweepCall], allowed: Callable[[float], float]
                    = promised_seconds) -> list[str]:
    """What a sweep's calls broke: a call past ``allowed(budget)``, an answer worse than a
    smaller budget's."""
    faults = [f"{call.budget_s:g} s budget took {call.seconds:.3f} s"
              for call in calls if call.seconds > allowed(call.budget_s)]
    for smaller, larger in itertools.pairwise(calls):
        if larger.ranking < smaller.ranking:
            faults.append(f"{larger.budget_s:g} s answered {larger.ranking},"
                          f" worse than {smaller.ranking} at {smaller.budget_s:g} s")
    return faults


def sweep_report(per_variant: int, seed: int,
                 budgets: tuple[float, ...] = SWEEP_BUDGETS) -> tuple[str, int]:
    """Per variant: the calls, the slowest against its promise, the optimal answers per
    budget, and the promises broken; with the count of broken promises."""
    rows: dict[str, list[list[SweepCall]]] = {}
    faults: list[str] = []
    for position in positions(per_variant, seed):
        calls = sweep(position, budgets)
        rows.setdefault(position.kind, []).append(calls)
        faults += [f"{position.kind} {position.objective}: {fault}"
                   for fault in broken_promises(calls)]
    ordered = sorted(budgets)
    lines = [f"budget sweep {', '.join(f'{b:g}' for b in ordered)} s; promise: 1.1 x budget"
             " + 50 ms, never worse with more budget",
             f"{'variant':24}{'calls':>6}{'worst s/promise':>17}  optimal per budget"]
    for variant, sweeps in rows.items():
        calls = [call for one in sweeps for call in one]
        worst = max(call.seconds / promised_seconds(call.budget_s) for call in calls)
        optimal = " ".join(f"{sum(one[i].optimal for one in sweeps)}/{len(sweeps)}"
                           for i in range(len(ordered)))
        lines.append(f"{variant:24}{len(calls):>6}{worst:>17.2f}  {optimal}")
    lines.append(f"broken promises: {len(faults)}")
    lines += [f"  {fault}" for fault in faults]
    return "\n".join(lines), len(faults)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.adversarial")
    parser.add_argument("--positions", type=int, default=10, help="positions per variant")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per call")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memory", action="store_true",
                        help="also measure each call's peak memory (a second, traced call)")
    parser.add_argument("--sweep", action="store_true",
                        help=f"also solve every position under each of {SWEEP_BUDGETS} s")
    args = parser.parse_args(argv)
    print(report(run(args.positions, args.budget, args.seed, args.memory), args.budget))
    if not args.sweep:
        return 0
    text, broken = sweep_report(args.positions, args.seed)
    print()
    print(text)
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
