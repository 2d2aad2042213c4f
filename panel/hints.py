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

The searches run in worker processes (:meth:`HintPool.solve`), not in the server's
threads: most of the optimiser is Python (only Sabra's rebuild is C), and a search in a
thread of the server holds Python's global lock.  Two of them left every other thread of
the server a third of the interpreter, in turns of the lock's switch interval, and a state
read (its request parsed, its rows fetched, its answer sent: each step a turn) took thirty
times as long while hints ran; on a loaded machine whole seconds.  In their own processes
the searches run truly side by side, one to a core, and the server's threads keep the lock
to themselves.  The workers are shared by the process's pools and started in the
background when the panel starts (:func:`start_workers`), forked from a server process
that has the optimiser imported.  A hint that comes while they start (the panel's first
second), or whose worker died, searches in its own thread as before: waiting for a worker
to start would take more than a short budget.  A search's deadline is on the machine's
monotonic clock, the same in every process: the worker searches until the hint's own
deadline.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from multiprocessing.context import ForkServerContext, SpawnContext

    from tabletop.engine.base import Variant
    from tabletop.engine.items import Item
    from tabletop.engine.play import Play

log = logging.getLogger(__name__)

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

    def solve(self, deadline: float, variant: Variant, rack: Sequence[Item],
              table: Sequence[Sequence[Item]], **options: Any) -> Play:
        """The optimiser's play (:func:`tabletop.engine.solver.solve` with ``options``),
        searched until ``deadline`` (see :func:`left`) for a hint that holds a
        :meth:`slot`: in an idle worker process (:func:`start_workers`), else in this
        thread (while the workers start, the panel's first second, or where none can
        start), as it is where the worker dies under it (it is replaced).  The solver's
        errors (a rack no game can hold) are raised here."""
        arguments = (deadline, variant, tuple(rack), tuple(tuple(meld) for meld in table),
                     options)
        worker = _WORKERS.take(self.workers)
        if worker is not None:
            try:
                refused, answer = worker.search(arguments, deadline)
            except _WorkerLost as lost:
                _WORKERS.lost(worker, str(lost))
            else:
                # a refusal is an answer too: the worker is free again either way
                _WORKERS.give(worker)
                if refused:
                    raise answer
                return cast("Play", answer)
        return _search(*arguments)


WORKER_MODULES = ["tabletop.panel.hints", "tabletop.engine.solver",
                  "tabletop.engine.rearrange_ilp", "highspy"]
"""What the workers' server process imports once, so that each worker forked from it has
the optimiser ready (its imports take longer than a short budget)."""

WORKER_GRACE_S = 5.0
"""A worker not answered this long after its search's deadline is taken for stuck: it is
stopped and replaced, and the hint searches in its own thread instead."""


class _WorkerLost(Exception):
    """A worker died or hangs; the message says which."""


class _Worker:
    """One worker process: a search at a time, over a pipe only it and the panel hold (so
    that it ends when the panel does, however the panel ends)."""

    def __init__(self, context: ForkServerContext | SpawnContext) -> None:
        here, there = context.Pipe()
        # daemonic: stopped when the panel's interpreter exits, never waited for
        self.process = context.Process(target=_serve, args=(there,), daemon=True,
                                       name="hint worker")
        self.process.start()
        there.close()
        self.connection = here

    def search(self, arguments: tuple[Any, ...], deadline: float) -> tuple[bool, Any]:
        """(whether the solver refused, its play or its error), the answer read whole."""
        try:
            self.connection.send(arguments)
            if not self.connection.poll(max(0.0, deadline - time.monotonic())
                                        + WORKER_GRACE_S):
                raise _WorkerLost(f"no answer {WORKER_GRACE_S:g} s after the deadline")
            failed, answer = self.connection.recv()
        except (EOFError, OSError) as error:
            raise _WorkerLost(f"the worker died ({error or type(error).__name__})") from None
        return bool(failed), answer

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        self.connection.close()


def _serve(connection: Connection) -> None:
    """A worker process: searches what the panel sends until the panel goes."""
    # Ctrl-C at the terminal reaches the whole process group: the panel stops its workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from tabletop.engine.rearrange_ilp import prepare

    prepare()
    while True:
        try:
            arguments = connection.recv()
        except (EOFError, OSError):
            return  # the panel has gone
        try:
            answer: tuple[bool, Any] = (False, _search(*arguments))
        except Exception as error:  # the solver's refusal, raised again in the panel
            answer = (True, error)
        connection.send(answer)


class _Workers:
    """The worker processes of every hint pool of this process, idle ones waiting for a
    search: started in the background (the first needs its server process, which imports
    the optimiser: half a second or more), more of them when a pool has more workers, and
    a new one for each that died."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._idle: list[_Worker] = []
        self._count = 0
        """Workers started or starting."""
        self._ready = 0
        """Workers started."""
        self._failed = False
        """No worker could be started here: every hint searches in its own thread."""

    def take(self, size: int) -> _Worker | None:
        """An idle worker, None where none is (up to ``size`` are started meanwhile): a
        hint does not wait for a worker to start, which takes longer than short budgets."""
        with self._lock:
            self._grow(size)
            return self._idle.pop() if self._idle else None

    def give(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)
            self._lock.notify_all()

    def lost(self, worker: _Worker, why: str) -> None:
        log.warning("a hint worker was lost (%s); another is started", why)
        worker.stop()
        with self._lock:
            self._count -= 1
            self._ready -= 1
            self._grow(self._count + 1)

    def start(self, size: int, wait_s: float) -> bool:
        """Start workers until there are ``size``; True once ``size`` of them are started
        and idle (none still searching for an earlier hint), within ``wait_s``."""
        with self._lock:
            self._grow(size)
            return self._lock.wait_for(lambda: len(self._idle) >= size or self._failed,
                                       wait_s) and not self._failed

    def _grow(self, size: int) -> None:
        """Start workers in the background until there are ``size`` (under the lock)."""
        if self._failed or self._count >= size:
            return
        more, self._count = size - self._count, size
        threading.Thread(target=self._started, args=(more,), name="hint-workers",
                         daemon=True).start()

    def _started(self, more: int) -> None:
        for _ in range(more):
            try:
                worker = _Worker(_workers_context())
            except Exception as error:  # no processes here: the hints search in threads
                log.warning("hint workers did not start (%s); hints search in the panel's"
                            " threads", error)
                with self._lock:
                    self._failed = True
                    self._lock.notify_all()
                return
            with self._lock:
                self._ready += 1
                self._idle.append(worker)
                self._lock.notify_all()


_WORKERS = _Workers()
_context_lock = threading.Lock()


def _workers_context() -> ForkServerContext | SpawnContext:
    """How worker processes start: forked from a server process of their own that has
    :data:`WORKER_MODULES` imported (never forked from the panel itself, whose other
    threads may hold locks at that moment); started afresh where there is no such server."""
    with _context_lock:
        if "forkserver" not in multiprocessing.get_all_start_methods():
            return multiprocessing.get_context("spawn")
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(WORKER_MODULES)
        return context


def start_workers(size: int | None = None, wait_s: float = 0.0) -> bool:
    """Start the hint workers (one a core, or ``size``) in the background now, rather than
    at the first hint: a panel calls this when it starts.  True once ``size`` of them have
    started and are idle, within ``wait_s``."""
    return _WORKERS.start(size or os.cpu_count() or 2, wait_s)


def _search(deadline: float, variant: Variant, rack: tuple[Item, ...],
            table: tuple[tuple[Item, ...], ...], options: dict[str, Any]) -> Play:
    """The search, for what is left until ``deadline`` now (in a worker process)."""
    from tabletop.engine.solver import solve

    return solve(variant, rack, table, budget_s=left(deadline), **options)


def left(deadline: float) -> float:
    """The seconds a search may still take before ``deadline`` (at least
    :data:`LEAST_SECONDS`)."""
    return max(LEAST_SECONDS, deadline - time.monotonic())
