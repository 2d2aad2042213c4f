"""Hints share a few workers, so that a crowd of phones asking at once neither overruns their
budgets nor starves the rest of the panel.

A hint is admitted while fewer than ``workers + waiting`` are in hand, else refused at once
(:class:`HintsBusy`, a 503 the page shows).  Its budget counts from the request's arrival
(stamped by the guard, panel/guards.py), and its search must end by :data:`SEARCH_SHARE` of
it: the rest is for what a crowd of requests makes slow around the search, the server's
threads taking the request up and sending the answer.  An admitted hint waits for one of
``workers`` slots; the time it waits, and the time the match's state takes to read, come
off its budget, so it answers within the budget it asked for (plus the optimiser's small
fixed margin) however many ask, as far as the optimiser keeps to its budget on a crowded
machine (short budgets can run past it when more searches than cores run at once).  A free
slot is taken at once, however small the budget; one that must wait and finds no slot while
a search of :data:`LEAST_SECONDS` still fits is refused the same way, within its budget.
The optimiser's search runs without Python's global lock, so ``workers`` hints run truly
side by side, one to a core.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

LEAST_SECONDS = 0.02
"""A hint that found its slot late still searches this long: enough for the quick answers
(the beam's play, the rack's own melds) that every budget ends with."""

SEARCH_SHARE = 0.9
"""The part of a hint's budget, from the request's arrival, by which its search ends."""


class HintsBusy(Exception):
    """No slot for a hint now (a 503: the page asks again in a moment)."""


class HintPool:
    """``workers`` slots for hints and ``waiting`` places in line for them."""

    def __init__(self, workers: int, waiting: int) -> None:
        if workers < 1 or waiting < 0:
            raise ValueError(f"a hint pool needs a worker and no negative line, not"
                             f" {workers} and {waiting}")
        self.workers, self.waiting = workers, waiting
        self._admitted = threading.BoundedSemaphore(workers + waiting)
        self._slots = threading.BoundedSemaphore(workers)
        self._lock = threading.Lock()
        self.in_hand = 0
        """Hints admitted and not yet answered (for the busy message and the tests)."""

    @contextlib.contextmanager
    def slot(self, budget_s: float, arrived: float | None = None) -> Iterator[float]:
        """Hold a worker's slot for one hint asked at ``arrived`` (``time.monotonic``;
        now if not given): yields when its search must end (see :func:`left`)."""
        if not self._admitted.acquire(blocking=False):
            raise HintsBusy(f"the panel is working out {self.workers + self.waiting} hints"
                            f" already; ask again in a moment")
        with self._lock:
            self.in_hand += 1
        try:
            deadline = (time.monotonic() if arrived is None else arrived) \
                + SEARCH_SHARE * budget_s
            wait = deadline - LEAST_SECONDS - time.monotonic()
            # a free worker is taken whatever the budget (the quick answers still come);
            # only waiting for one is bounded by the budget
            if not self._slots.acquire(blocking=False) and (
                    wait <= 0 or not self._slots.acquire(timeout=wait)):
                raise HintsBusy(f"no worker was free within the hint's {budget_s:g} s;"
                                f" ask again in a moment")
            try:
                yield deadline
            finally:
                self._slots.release()
        finally:
            with self._lock:
                self.in_hand -= 1
            self._admitted.release()


def left(deadline: float) -> float:
    """The seconds a search may still take before ``deadline`` (at least
    :data:`LEAST_SECONDS`)."""
    return max(LEAST_SECONDS, deadline - time.monotonic())
