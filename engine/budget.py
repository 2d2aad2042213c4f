"""A time budget for the optimiser's searches.

:func:`limit` sets the budget for the searches started inside it (in this thread and
context); the searches call :func:`check` as they go, which raises :class:`OutOfTime`
once the budget is spent.  The caller catches it and answers with the best it has,
saying the answer may not be optimal.  A search that keeps a best answer so far asks
:func:`spent` instead, stops with that answer and calls :func:`settle`.  Outside
:func:`limit`, :func:`check` costs a context-variable read and never raises.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = [
    "Deadline",
    "OutOfTime",
    "check",
    "limit",
    "remaining",
    "settle",
    "settled",
    "spent",
    "suspended",
]

class OutOfTime(Exception):
    """The search's budget is spent (not an error: the caller answers without optimality)."""


@dataclass
class Deadline:
    at: float
    """``time.monotonic()`` when the budget is spent."""
    settled: bool = False
    """A search ran out of time and answered with the best it had found."""


_current: ContextVar[Deadline | None] = ContextVar("tabletop_search_deadline", default=None)


@contextmanager
def limit(seconds: float | None) -> Iterator[Deadline | None]:
    """Searches inside may run ``seconds`` in all (None: no limit; 0: none at all, as a
    share of a budget already spent is, so their first :func:`check` raises).  Yields the
    deadline: another thread may end the searches early by setting its ``at`` to the past."""
    if seconds is None:
        yield None
        return
    if not seconds >= 0:
        raise ValueError(f"a time budget is a number of seconds, not {seconds!r}")
    deadline = Deadline(time.monotonic() + seconds)
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)


@contextmanager
def suspended() -> Iterator[None]:
    """No budget inside: to build the answer a search found before its time ran out."""
    token = _current.set(None)
    try:
        yield
    finally:
        _current.reset(token)


def check() -> None:
    """Raise OutOfTime when the budget in force is spent."""
    deadline = _current.get()
    # the clock is read every time: it costs less than the call, and the searches' steps
    # differ too much in cost for a count of calls to stand in for time
    if deadline is not None and time.monotonic() >= deadline.at:
        raise OutOfTime


def spent() -> bool:
    """Whether the budget in force is spent (False without one): for a search that keeps
    a best answer so far and can stop with it (then it calls :func:`settle`)."""
    deadline = _current.get()
    return deadline is not None and time.monotonic() >= deadline.at


def settle() -> None:
    """Record that the answer being built is the best found in time, not a proved optimum."""
    deadline = _current.get()
    if deadline is not None:
        deadline.settled = True


def settled() -> bool:
    """Whether a search inside the budget in force settled for the best it had found."""
    deadline = _current.get()
    return deadline is not None and deadline.settled


def remaining() -> float | None:
    """Seconds left of the budget in force (None: no limit); never below zero."""
    deadline = _current.get()
    if deadline is None:
        return None
    return max(0.0, deadline.at - time.monotonic())
