"""The rearrangement question as an integer programme, for the hardest positions.

The depth-first search of engine/_rearrange.c finds a reachable target fast,
but proving that a target cannot be reached means walking every arrangement
of the table that could still reach it, and on a dense table with jokers in
play that can be a lot.  An integer programme proves it with linear-programming
bounds instead, so it is the other half of :func:`tabletop.engine.rearrange.arrange`'s
portfolio, given a slice of time whenever the probes use up a round (its linear
relaxation first, once: :meth:`Programme.relax`): a model
with one integer variable per legal meld of three to five tiles (a longer run
splits into those), after den Hertog and Hulshof, solved with HiGHS through
SciPy.  Exact like the search.  SciPy is imported only when needed, or at
once by :func:`prepare`.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tabletop.engine import budget
from tabletop.engine.items import Color, Item, Joker, Tile

COLOURS = tuple(Color)


@dataclass(frozen=True)
class Candidate:
    """A legal Sabra meld of three to five tiles, jokers written with their meaning."""

    items: tuple[Item, ...]

    def value(self) -> int:
        return sum(_number(item) for item in self.items)

    def joker_values(self) -> list[int]:
        return [_number(item) for item in self.items if isinstance(item, Joker)]


def _number(item: Item) -> int:
    played = item.stands_for if isinstance(item, Joker) else item
    assert isinstance(played, Tile)
    return played.number


@cache
def candidates(jokers: int, reference_mode: bool) -> tuple[Candidate, ...]:
    """Every legal Sabra meld of 3..5 items with at most ``jokers`` jokers.

    ``reference_mode`` leaves out what rummikub-solver leaves out: a joker in a
    set of four, or at an end of a run of four or five.
    """
    found: list[Candidate] = []
    for colour in COLOURS:
        for length in (3, 4, 5):
            for start in range(1, 15 - length):
                tiles = [Tile(colour, n) for n in range(start, start + length)]
                for count in range(0, min(jokers, length - 1) + 1):
                    for places in itertools.combinations(range(length), count):
                        if reference_mode and length > 3 and (0 in places or length - 1 in places):
                            continue
                        items: list[Item] = [
                            Joker(tile) if i in places else tile for i, tile in enumerate(tiles)
                        ]
                        found.append(Candidate(tuple(items)))
    for number in range(1, 14):
        for size in (1, 2, 3, 4):
            for colours in itertools.combinations(COLOURS, size):
                missing = [c for c in COLOURS if c not in colours]
                for count in range(0, min(jokers, 4 - size) + 1):
                    if not 3 <= size + count <= 4:
                        continue
                    if reference_mode and count and size + count != 3:
                        continue
                    items = [Tile(c, number) for c in colours]
                    items += [Joker(Tile(c, number)) for c in missing[:count]]
                    found.append(Candidate(tuple(items)))
    return tuple(found)


@cache
def _model(jokers: int, reference_mode: bool) -> tuple[Any, Any, Any, Any, Any]:
    """Every candidate meld's tile counts (53 x melds: the 52 tiles, then jokers), values,
    and each joker place's meld and value."""
    import numpy as np

    melds = candidates(jokers, reference_mode)
    counts = np.zeros((53, len(melds)))
    for m, meld in enumerate(melds):
        for item in meld.items:
            index = 52 if isinstance(item, Joker) else item.color.index * 13 + item.number - 1  # type: ignore[union-attr]
            counts[index, m] += 1
    values = np.array([meld.value() for meld in melds], dtype=float)
    places = [(m, value) for m, meld in enumerate(melds) for value in meld.joker_values()]
    place_melds = np.array([m for m, _ in places], dtype=np.int64)
    place_values = np.array([v for _, v in places], dtype=np.int64)
    return melds, counts, values, place_melds, place_values


def prepare() -> None:
    """Import SciPy and build the models now, so no later call pays for it (servers, benches)."""
    import scipy.optimize  # noqa: F401  (half a second on first import)

    for jokers in range(3):
        for reference_mode in (False, True):
            _model(jokers, reference_mode)


def ready() -> bool:
    """Whether SciPy's solver is imported (:func:`prepare`): until then the first programme
    pays half a second or more for the import, which a small time budget cannot hold."""
    return "scipy.optimize" in sys.modules


Laid = tuple[tuple[Item, ...], ...]


@dataclass(frozen=True)
class Relaxation:
    """What the linear relaxation tells: a score no play reaches beyond, and the optimal
    play itself where the relaxation's optimum happens to be whole."""

    ceiling: int
    play: tuple[int, Laid] | None


class Programme:
    """The integer programme of one position, over the melds its tiles can make.

    Variables: how often each meld is laid (0..2), how many of each rack tile
    are used, and the rack jokers used: one count when every joker scores the
    same, else for each joker place in a meld whether a rack joker fills it (so
    a rack joker scores what its place is worth).  The tiles are given as counts by
    colour-major index (52), the jokers by number.
    """

    def __init__(
        self,
        table: Sequence[int],
        rack: Sequence[int],
        jokers_table: int,
        jokers_rack: int,
        *,
        weight_tile: Sequence[int],
        weight_joker: Sequence[int],
        threshold: int,
        reference_mode: bool,
    ) -> None:
        import numpy as np

        all_melds, all_counts, all_values, place_melds, place_values = _model(
            jokers_table + jokers_rack, reference_mode
        )
        # only melds the tiles in play can make: a much smaller model
        available = np.asarray(
            [*(a + b for a, b in zip(table[:52], rack[:52], strict=True)),
             jokers_table + jokers_rack],
            dtype=float,
        )
        keep = np.nonzero(~(all_counts > available[:, None]).any(axis=0))[0]
        self.melds = [all_melds[i] for i in keep]
        counts = all_counts[:, keep]
        self.count = count = len(keep)
        pooled = len(set(weight_joker)) == 1
        if pooled:
            place_meld = np.zeros(1 if jokers_rack else 0, dtype=np.int64)
            place_value = np.ones(len(place_meld), dtype=np.int64)
        else:
            renumber = np.full(len(all_melds), -1, dtype=np.int64)
            renumber[keep] = np.arange(count)
            kept_places = renumber[place_melds] >= 0
            place_meld = renumber[place_melds[kept_places]]
            place_value = place_values[kept_places]
        nplaces = len(place_meld)
        self.size = size = count + 52 + nplaces
        cost = np.zeros(size)
        cost[count : count + 52] = -np.asarray(weight_tile, dtype=float)
        cost[count + 52 :] = -np.asarray(weight_joker, dtype=float)[place_value - 1]
        linked = nplaces if not pooled else 0
        rows = 54 + linked + (1 if threshold else 0)
        matrix = np.zeros((rows, size))
        # naturals: melds use exactly the table's tiles plus the rack tiles used
        matrix[:52, :count] = counts[:52]
        matrix[np.arange(52), count + np.arange(52)] = -1.0
        # jokers: the melds' jokers are the table's plus the rack's credited
        matrix[52, :count] = counts[52]
        matrix[52, count + 52 :] = -1.0
        matrix[53, count + 52 :] = 1.0
        lower: list[float] = [*table[:52], jokers_table, 0]
        upper: list[float] = [*table[:52], jokers_table, jokers_rack]
        if linked:
            # a credited joker place needs its meld laid
            matrix[54 + np.arange(nplaces), count + 52 + np.arange(nplaces)] = 1.0
            matrix[54 + np.arange(nplaces), place_meld] = -1.0
            lower += [-np.inf] * nplaces
            upper += [0.0] * nplaces
        if threshold:
            matrix[-1, :count] = all_values[keep]
            lower.append(threshold)
            upper.append(np.inf)
        self.cost = cost
        self.matrix = matrix
        self.lower, self.upper = lower, upper
        self.highest = np.concatenate(
            [
                np.full(count, 2.0),
                np.asarray(rack[:52], float),
                np.full(nplaces, float(jokers_rack) if pooled else 2.0),
            ]
        )

    def best(self, ceiling: int | None = None,
             seconds: float | None = None) -> tuple[int, Laid] | None:
        """Best score and the melds laid, or None (the table cannot be arranged, the
        threshold is missed).  ``ceiling``: a score known to be out of reach beyond, which
        lets HiGHS stop once a play is worth within one point of its own bound (every score
        is whole).  ``seconds``: HiGHS's time limit (None: what is left of the budget in
        force, if any); :class:`budget.OutOfTime` when it passes unproved."""
        result = self.solve(seconds, relaxed=False, ceiling=ceiling)
        if result.status == 1:  # the time limit: the optimum was not proved
            raise budget.OutOfTime
        if result.status != 0 or result.x is None:
            return None
        return round(-result.fun), self.laid(result.x)

    def relax(self, seconds: float | None = None) -> Relaxation | None:
        """The linear relaxation (None: not even it can be met, so no play can).

        On the positions the search finds hard its optimum is mostly the integer optimum,
        and often a whole-numbered one, which is then the answer; else a probe at its
        ceiling mostly finds a play.  :class:`budget.OutOfTime` when ``seconds`` pass
        first."""
        import numpy as np

        result = self.solve(seconds, relaxed=True)
        if result.status == 2:  # infeasible
            return None
        if result.status != 0 or result.x is None:
            raise budget.OutOfTime  # out of time, or no bound: the search goes on without one
        ceiling = math.floor(-result.fun + 1e-6)
        whole = np.rint(result.x)
        if np.abs(result.x - whole).max() > 1e-6:
            return Relaxation(ceiling, None)
        return Relaxation(ceiling, (round(-result.fun), self.laid(whole)))

    def laid(self, solution: Any) -> Laid:
        """The melds a (whole-numbered) solution lays."""
        import numpy as np

        chosen = np.rint(solution[: self.count]).astype(int)
        return tuple(self.melds[m].items for m in np.nonzero(chosen)[0]
                     for _ in range(chosen[m]))

    def solve(self, seconds: float | None, *, relaxed: bool, ceiling: int | None = None) -> Any:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp

        left = budget.remaining() if seconds is None else seconds
        options: dict[str, Any] = {"presolve": False}
        if left is not None:
            options["time_limit"] = max(left, 0.001)
        if ceiling is not None:
            # scores are whole: a play less than one point below HiGHS's bound is optimal.
            # Whether HiGHS measures the gap against the play's score or its bound, both
            # are at most ceiling + 1 here, so this relative gap is less than one point
            options["mip_rel_gap"] = 0.99 / (max(ceiling, 0) + 1)
        return milp(
            self.cost,
            constraints=LinearConstraint(self.matrix, self.lower, self.upper),
            integrality=np.zeros(self.size) if relaxed else np.ones(self.size),
            bounds=Bounds(np.zeros(self.size), self.highest),
            # without presolve HiGHS keeps to its time limit (its presolve has run most of a
            # second past a limit of 50 ms) and proves these small models as fast
            options=options,
        )
