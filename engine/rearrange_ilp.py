"""The rearrangement question as an integer programme, for the hardest positions.

The depth-first search of engine/_rearrange.c finds a reachable target fast,
but proving that a target cannot be reached means walking every arrangement
of the table that could still reach it, and on a dense table with jokers in
play that can be a lot.  An integer programme proves it with linear-programming
bounds instead, so it is the other half of :func:`tabletop.engine.rearrange.arrange`'s
portfolio, given a slice of time whenever the probes use up a round (its linear
relaxation first, once: :meth:`Programme.relax`): a model
with one integer variable per legal meld of three to five tiles (a longer run
splits into those), after den Hertog and Hulshof, solved with HiGHS
(highspy).  Exact like the search.  HiGHS is imported only when needed, or at
once by :func:`prepare`.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tabletop.engine import budget, highs
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


@dataclass(frozen=True)
class _Model:
    """Every candidate meld of a joker count and mode, in the forms the programme is built
    from: for each, the rows (the 52 tiles, then the joker) it takes and how many of each,
    padded to five with a row that always has room (:data:`_ROOM`), its value, and each
    joker place's meld and value."""

    melds: tuple[Candidate, ...]
    rows: Any
    takes: Any
    values: Any
    place_melds: Any
    place_values: Any


_ROOM = 53


@cache
def _model(jokers: int, reference_mode: bool) -> _Model:
    import numpy as np

    melds = candidates(jokers, reference_mode)
    rows = np.full((len(melds), 5), _ROOM, dtype=np.int64)
    takes = np.zeros((len(melds), 5), dtype=np.int64)
    for m, meld in enumerate(melds):
        taken = Counter(52 if isinstance(item, Joker) else item.color.index * 13 + item.number - 1  # type: ignore[union-attr]
                        for item in meld.items)
        for slot, (row, count) in enumerate(sorted(taken.items())):
            rows[m, slot], takes[m, slot] = row, count
    values = np.array([meld.value() for meld in melds], dtype=float)
    places = [(m, value) for m, meld in enumerate(melds) for value in meld.joker_values()]
    return _Model(melds, rows, takes, values,
                  np.array([m for m, _ in places], dtype=np.int64),
                  np.array([v for _, v in places], dtype=np.int64))


def prepare() -> None:
    """Import HiGHS and build the models now, so no later call pays for it (servers, benches)."""
    import highspy  # noqa: F401

    for jokers in range(3):
        for reference_mode in (False, True):
            _model(jokers, reference_mode)


def ready() -> bool:
    """Whether HiGHS is imported (:func:`prepare`): until then the first programme pays for
    the import, which a small time budget cannot hold."""
    return "highspy" in sys.modules


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

        model = _model(jokers_table + jokers_rack, reference_mode)
        # only melds the tiles in play can make: a much smaller model
        room = np.asarray(
            [*(a + b for a, b in zip(table[:52], rack[:52], strict=True)),
             jokers_table + jokers_rack, 99],
            dtype=np.int64,
        )
        keep = np.nonzero((room[model.rows] >= model.takes).all(axis=1))[0]
        self.melds = [model.melds[i] for i in keep.tolist()]
        self.count = count = len(keep)
        pooled = len(set(weight_joker)) == 1
        if pooled:
            place_meld = np.zeros(1 if jokers_rack else 0, dtype=np.int64)
            place_value = np.ones(len(place_meld), dtype=np.int64)
        else:
            renumber = np.full(len(model.melds), -1, dtype=np.int64)
            renumber[keep] = np.arange(count)
            kept_places = renumber[model.place_melds] >= 0
            place_meld = renumber[model.place_melds[kept_places]]
            place_value = model.place_values[kept_places]
        nplaces = len(place_meld)
        self.size = size = count + 52 + nplaces
        cost = np.zeros(size)
        cost[count : count + 52] = -np.asarray(weight_tile, dtype=float)
        cost[count + 52 :] = -np.asarray(weight_joker, dtype=float)[place_value - 1]
        linked = nplaces if not pooled else 0
        # the constraint matrix as (column, row, value) entries, compressed by column below
        used = model.takes[keep] > 0
        entries = [
            # naturals: melds use exactly the table's tiles plus the rack tiles used;
            # jokers: the melds' jokers are the table's plus the rack's credited
            (np.repeat(np.arange(count), used.sum(axis=1)), model.rows[keep][used],
             model.takes[keep][used].astype(float)),
            (count + np.arange(52), np.arange(52), np.full(52, -1.0)),
            (count + 52 + np.arange(nplaces), np.full(nplaces, 52), np.full(nplaces, -1.0)),
            (count + 52 + np.arange(nplaces), np.full(nplaces, 53), np.full(nplaces, 1.0)),
        ]
        lower: list[float] = [*table[:52], jokers_table, 0]
        upper: list[float] = [*table[:52], jokers_table, jokers_rack]
        if linked:
            # a credited joker place needs its meld laid
            entries.append((count + 52 + np.arange(nplaces), 54 + np.arange(nplaces),
                            np.full(nplaces, 1.0)))
            entries.append((place_meld, 54 + np.arange(nplaces), np.full(nplaces, -1.0)))
            lower += [-np.inf] * nplaces
            upper += [0.0] * nplaces
        if threshold:
            entries.append((np.arange(count), np.full(count, len(lower)), model.values[keep]))
            lower.append(threshold)
            upper.append(np.inf)
        highest = np.concatenate(
            [
                np.full(count, 2.0),
                np.asarray(rack[:52], float),
                np.full(nplaces, float(jokers_rack) if pooled else 2.0),
            ]
        )
        columns, rows, values = (np.concatenate(part) for part in zip(*entries, strict=True))
        order = np.lexsort((rows, columns))
        # built once: the relaxation may be solved on a thread of its own, which should
        # hold the GIL for as little as it can
        self._model = highs.by_columns(
            cost, highest, lower, upper,
            (np.concatenate([[0], np.cumsum(np.bincount(columns, minlength=size))]),
             rows[order], values[order]))

    def best(self, ceiling: int | None = None,
             seconds: float | None = None) -> tuple[int, Laid] | None:
        """Best score and the melds laid, or None (the table cannot be arranged, the
        threshold is missed).  ``ceiling``: a score known to be out of reach beyond, which
        lets HiGHS stop once a play is worth within one point of its own bound (every score
        is whole).  ``seconds``: HiGHS's time limit (None: what is left of the budget in
        force, if any); :class:`budget.OutOfTime` when it passes unproved."""
        result = self.solve(seconds, relaxed=False, ceiling=ceiling)
        if result.status == highs.OUT_OF_TIME:  # the optimum was not proved
            raise budget.OutOfTime
        if result.status != highs.OPTIMAL:
            return None
        return round(-result.objective), self.laid(result.solution)

    def relax(self, seconds: float | None = None) -> Relaxation | None:
        """The linear relaxation (None: not even it can be met, so no play can).

        On the positions the search finds hard its optimum is mostly the integer optimum,
        and often a whole-numbered one, which is then the answer; else a probe at its
        ceiling mostly finds a play.  :class:`budget.OutOfTime` when ``seconds`` pass
        first."""
        import numpy as np

        result = self.solve(seconds, relaxed=True)
        if result.status == highs.INFEASIBLE:
            return None
        if result.status != highs.OPTIMAL:
            raise budget.OutOfTime  # out of time, or no bound: the search goes on without one
        ceiling = math.floor(-result.objective + 1e-6)
        whole = np.rint(result.solution)
        if np.abs(result.solution - whole).max() > 1e-6:
            return Relaxation(ceiling, None)
        return Relaxation(ceiling, (round(-result.objective), self.laid(whole)))

    def laid(self, solution: Any) -> Laid:
        """The melds a (whole-numbered) solution lays."""
        import numpy as np

        chosen = np.rint(solution[: self.count]).astype(int)
        return tuple(self.melds[m].items for m in np.nonzero(chosen)[0]
                     for _ in range(chosen[m]))

    def solve(self, seconds: float | None, *, relaxed: bool,
              ceiling: int | None = None) -> highs.Solved:
        """HiGHS on this programme (:mod:`tabletop.engine.highs`)."""
        left = budget.remaining() if seconds is None else seconds
        # scores are whole: a play less than one point below HiGHS's bound is optimal.
        # Whether HiGHS measures the gap against the play's score or its bound, both are at
        # most ceiling + 1 here, so this relative gap is less than one point
        gap = None if ceiling is None else 0.99 / (max(ceiling, 0) + 1)
        return highs.solve(self._model, integer=not relaxed, seconds=left, gap=gap)


