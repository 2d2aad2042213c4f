"""HiGHS, the optimiser's linear and integer programmes' solver, called directly.

Through highspy's bare solver class: SciPy's wrappers cost more than HiGHS's own work on
programmes this small, and highspy's ``Highs`` wrapper prints HiGHS's banner on stdout
(where ``tabletop solve`` writes its JSON) and adds callbacks unused here.  Without
presolve: on these programmes HiGHS is as fast or faster so, and keeps to its time limit
(its presolve has run most of a second past a limit of 50 ms), and without its
feasibility-jump heuristic (below).  A programme is given as
its arrays by column (:func:`by_columns`), built once and solved relaxed or whole.  A
solve on one thread can be stopped from another (:class:`Stop`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

OPTIMAL, OUT_OF_TIME, INFEASIBLE, OTHER, STOPPED = 0, 1, 2, 4, 5


@dataclass(frozen=True)
class Solved:
    """What HiGHS answered: its status (:data:`OPTIMAL`, :data:`OUT_OF_TIME`,
    :data:`INFEASIBLE` or :data:`OTHER`), and where optimal the objective (minimised: a
    score negated) and the solution."""

    status: int
    objective: float = 0.0
    solution: Any = None


class Stop:
    """Ends a solve running on another thread (:func:`solve` with ``stop``) soon after it
    is called; a solve that has not begun yet does not begin.

    HiGHS's interrupt callbacks are Python functions, so each call of one waits for the
    GIL, which a search racing the programme holds for a switch interval at a time: a
    callback active from the outset cost a solve beside a search twice its time.  So the
    callback is set before the solve but started only when the solve is to end, from the
    stopping thread (HiGHS reads whether a callback is active each time it would call
    it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._highs: Any = None
        self.stopped = False

    def __call__(self) -> None:
        with self._lock:
            self.stopped = True
            if self._highs is not None:
                from highspy._core import cb

                self._highs.startCallback(cb.HighsCallbackType.kCallbackMipInterrupt)
                self._highs.startCallback(cb.HighsCallbackType.kCallbackSimplexInterrupt)

    def _attach(self, highs: Any) -> bool:
        """Whether the solve may begin: not once stopped."""

        def interrupt(kind: Any, message: str, out: Any, data_in: Any, user: Any) -> None:
            data_in.user_interrupt = True

        highs.setCallback(interrupt, None)
        with self._lock:
            self._highs = highs
            return not self.stopped

    def _detach(self) -> None:
        with self._lock:
            self._highs = None


def columns_of(matrix: Any) -> tuple[Any, Any, Any]:
    """A dense matrix's entries by column: where each column starts, their rows, values."""
    import numpy as np

    columns = np.asarray(matrix, dtype=np.float64).T
    column, row = np.nonzero(columns)
    return (np.concatenate([[0], np.cumsum(np.bincount(column, minlength=len(columns)))]),
            row, columns[column, row])


def by_columns(cost: Any, upper: Any, row_lower: Any, row_upper: Any,
               entries: tuple[Any, Any, Any]) -> tuple[Any, ...]:
    """A programme's arrays as HiGHS takes them: minimise ``cost`` over columns between
    zero and ``upper``, each row between its bounds (infinite ones allowed); ``entries``:
    where each column starts, the rows and the values of its entries (:func:`columns_of`)."""
    import highspy
    import numpy as np

    infinity = highspy.kHighsInf
    starts, rows, values = entries
    return (
        len(cost), len(row_lower), len(values), 1, 1, 0.0,  # by column; minimise; no offset
        np.ascontiguousarray(cost, dtype=np.float64), np.zeros(len(cost)),
        np.ascontiguousarray(upper, dtype=np.float64),
        np.clip(np.asarray(row_lower, dtype=np.float64), -infinity, infinity),
        np.clip(np.asarray(row_upper, dtype=np.float64), -infinity, infinity),
        np.asarray(starts, dtype=np.int32), np.asarray(rows, dtype=np.int32),
        np.ascontiguousarray(values, dtype=np.float64),
    )


def solve(arrays: tuple[Any, ...], *, integer: bool, seconds: float | None = None,
          gap: float | None = None, whole: bool = False, stop: Stop | None = None,
          cutoff: float | None = None) -> Solved:
    """HiGHS on a programme (:func:`by_columns`), relaxed unless ``integer``, within
    ``seconds`` where given; ``gap``: the relative gap at which a whole solution counts
    as optimal; ``whole``: the objective is whole at every whole solution, so a solution
    within less than one of the bound is optimal and none further from it is (HiGHS's
    default relative gap, 1e-4, passes a play short by a few points of its second
    criterion as optimal where the first is weighed by 65536).  Out of time, an integer
    programme's best solution so far comes with :data:`OUT_OF_TIME` where it has one.
    ``stop``: ends the solve from another thread (:data:`STOPPED`).  ``cutoff``: only
    solutions whose objective is below it are sought (:data:`INFEASIBLE` where none is):
    a play in hand prunes from the root on what HiGHS would otherwise have to find first."""
    import highspy
    import numpy as np
    from highspy._core import _Highs

    highs: Any = _Highs()  # its overloads are not written for arguments passed as a tuple
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("presolve", "off")
    if integer:
        # every caller holds a play from its own search; feasibility jump spends up to 25 ms
        # at the root finding a worse one (45 -> 18 ms on the hardest Sabra positions)
        highs.setOptionValue("mip_heuristic_run_feasibility_jump", False)
    if seconds is not None:
        highs.setOptionValue("time_limit", max(seconds, 0.001))
    if gap is not None:
        highs.setOptionValue("mip_rel_gap", gap)
    if whole:
        highs.setOptionValue("mip_rel_gap", 0.0)
        highs.setOptionValue("mip_abs_gap", 0.99)
    if cutoff is not None:
        highs.setOptionValue("objective_bound", cutoff)
    highs.passModel(*arrays, np.full(arrays[0], 1 if integer else 0, dtype=np.int32))
    if stop is not None and not stop._attach(highs):
        return Solved(STOPPED)
    try:
        highs.run()
    finally:
        if stop is not None:
            stop._detach()
    status = highs.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        objective = highs.getInfo().objective_function_value
        if cutoff is not None and objective >= cutoff:
            # HiGHS proved nothing lies below the cutoff, yet answers the best it kept
            return Solved(INFEASIBLE)
        return Solved(OPTIMAL, highs.getInfo().objective_function_value,
                      np.asarray(highs.getSolution().col_value))
    if status == highspy.HighsModelStatus.kInfeasible:
        return Solved(INFEASIBLE)
    if status == highspy.HighsModelStatus.kTimeLimit:
        if integer and highs.getInfo().primal_solution_status == int(
                highspy.SolutionStatus.kSolutionStatusFeasible):
            return Solved(OUT_OF_TIME, highs.getInfo().objective_function_value,
                          np.asarray(highs.getSolution().col_value))
        return Solved(OUT_OF_TIME)
    if status == highspy.HighsModelStatus.kInterrupt:
        return Solved(STOPPED)
    return Solved(OTHER)
