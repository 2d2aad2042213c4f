"""HiGHS called directly: exact answers on whole-valued objectives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tabletop.engine import highs

# A packing whose score weighs a first criterion by 65536 over a second (as the solver's
# objectives do): HiGHS's default relative gap (1e-4) stops at a play 11 points short.
ROWS = [[0, 0, 0, 1, 2, 2, 2, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0, 2, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0, 1, 2, 2, 2, 2, 0],
        [0, 0, 0, 0, 1, 0, 0, 2, 1, 1, 0, 2], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0],
        [0, 0, 0, 1, 2, 0, 0, 0, 2, 0, 0, 2], [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2]]
HAVE = [1, 2, 2, 2, 3, 2, 1, 1]
FIRST = [6, 4, 4, 4, 3, 4, 5, 4, 3, 6, 3, 2]
SECOND = [1, 15, 2, 4, 1, 19, 6, 0, 5, 13, 14, 5]


def _best_by_enumeration(rows: np.ndarray, have: np.ndarray, score: np.ndarray) -> int:
    most = [min(have[r] // rows[r, j] for r in range(len(rows)) if rows[r, j])
            for j in range(rows.shape[1])]
    best = 0
    for x in itertools.product(*(range(m + 1) for m in most)):
        taken = np.array(x)
        if (rows @ taken <= have).all():
            best = max(best, int(score @ taken))
    return best


@pytest.mark.parametrize(("whole", "exact"), [(True, True), (False, False)])
def test_a_whole_objective_is_solved_to_its_optimum_not_to_a_relative_gap(
    whole: bool, exact: bool,
) -> None:
    rows, have = np.array(ROWS), np.array(HAVE)
    score = np.array(FIRST) * 65536 + np.array(SECOND)
    programme = highs.by_columns(-score.astype(float), np.full(len(score), np.inf),
                                 np.zeros(len(have)), have, highs.columns_of(rows))
    solved = highs.solve(programme, integer=True, whole=whole)
    assert solved.status == highs.OPTIMAL
    taken = np.rint(solved.solution).astype(int)
    assert (rows @ taken <= have).all()
    best = _best_by_enumeration(rows, have, score)
    assert (int(score @ taken) == best) is exact


@pytest.mark.parametrize(("short_of_best", "status"), [
    (-1, highs.INFEASIBLE),  # only plays better than the best are sought: none
    (0, highs.INFEASIBLE),  # a play as good as the cutoff's is not better
    (1, highs.OPTIMAL),
    (25 * 65536, highs.OPTIMAL),
])
def test_a_cutoff_answers_the_optimum_below_it_or_that_none_is(
    short_of_best: int, status: int,
) -> None:
    """HiGHS, given an objective bound it cannot beat, may still call a worse solution it
    kept optimal; :func:`highs.solve` answers that none is better instead."""
    rows, have = np.array(ROWS), np.array(HAVE)
    score = np.array(FIRST) * 65536 + np.array(SECOND)
    best = _best_by_enumeration(rows, have, score)
    programme = highs.by_columns(-score.astype(float), np.full(len(score), np.inf),
                                 np.zeros(len(have)), have, highs.columns_of(rows))
    solved = highs.solve(programme, integer=True, whole=True,
                         cutoff=-(best - short_of_best) - 0.5)
    assert solved.status == status
    if status == highs.OPTIMAL:
        assert round(-solved.objective) == best
