"""People's requests from the panel to the live table: corrections and game actions.

A player who sees a misread tile on the panel corrects it there (``POST
/api/matches/{id}/corrections/item``); a player without the scoring board ends
a turn, goes out or scores the round there (``POST /api/matches/{id}/actions``,
see :mod:`tabletop.live.actions`).  Each request must reach the watcher and the game,
and two rules shape how it travels:

* the panel knows nothing of the pipeline (tracks, votes, the watcher), and
* the watcher and the game are touched only from the pipeline's own thread
  (``live.pipeline.Pipeline``), never from the panel's server thread.

So the two sides meet here, in messages and one mailbox that know neither:

* :class:`Correction`: meld index and item index in the table as the game's
  last ``table`` event lists it (the shared melds, then each seat's melds in
  seat order), the right token, who said so and ``was``, the token the panel
  showed there, so that a table that changed in the meantime is refused rather
  than the wrong item pinned.  (:class:`tabletop.live.actions.Action` is the other
  kind of request.)
* :class:`Inbox`: the panel calls :meth:`~Inbox.submit` with any request and
  gets a :class:`concurrent.futures.Future`; the pipeline's loop calls
  :meth:`~Inbox.apply_pending` between frames once per kind of request, each
  time with that kind's handler (for corrections: the watcher pins the label
  and re-reads the last committed table, the game takes the corrected
  snapshot), and each Future is settled with the handler's result or its
  :class:`Refused` error.  Requests of other kinds keep their place in the
  queue.  The panel waits a moment on the Future, so a request the live table
  refuses is refused to the person.  When the loop ends it closes the inbox;
  requests after that fail at once with :class:`LiveTableGone`.

Why not the :class:`tabletop.live.bus.EventBus`: the bus carries the game's numbered
events one way to the store, the JSONL file and the board; a request goes the
other way and needs an answer (done, or why not).

Finding each other: the panel and the live game are started separately
(``tabletop run`` starts the embedded panel, then the loop) and share one
object, the bus.  :func:`inbox_for` registers the inbox against that bus
(weakly) and :func:`find_inbox` looks it up, so ``panel.embed.start_panel``
and ``live.pipeline.Pipeline`` meet at the same inbox without any other plumbing.
This module imports nothing of the pipeline.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from tabletop.live.bus import EventBus

log = logging.getLogger(__name__)


class Refused(ValueError):
    """A request the live table will not carry out; the message says why, in one line.

    Goes back to the sender; the pipeline's loop goes on."""


class CorrectionError(Refused):
    """A correction the live table cannot take: an item that is not there, a bad token.

    The message quotes the meld and item indices (and the token) as given."""


class LiveTableGone(RuntimeError):
    """The pipeline's loop has ended (the video is over): no live table takes requests now."""


class Request(Protocol):
    """What the inbox carries: any message that can say what it asks for."""

    def describe(self) -> str: ...


@dataclass(frozen=True)
class Correction:
    """Item ``index`` of table meld ``meld`` is really ``item`` (a contract token).

    ``was``: what the sender saw there (None: not checked).  ``who``: the person."""

    meld: int
    index: int
    item: str
    who: str
    was: str | None = None

    def describe(self) -> str:
        seen = f" (shown as {self.was})" if self.was is not None else ""
        return f"item {self.index} of meld {self.meld}{seen} -> {self.item!r}"


class Inbox:
    """Requests waiting for the pipeline's loop, each with the Future its sender waits on.

    Thread-safe: ``submit`` from any thread, ``apply_pending`` from the loop."""

    def __init__(self) -> None:
        self._pending: deque[tuple[Request, Future[object]]] = deque()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def submit(self, request: Request) -> Future[object]:
        """Queue ``request``; the Future gets the handler's result, its Refused error,
        or LiveTableGone once the loop has ended."""
        future: Future[object] = Future()
        with self._lock:
            if not self._closed:
                self._pending.append((request, future))
                return future
        future.set_exception(LiveTableGone(f"no live table takes {request.describe()}"))
        return future

    def apply_pending(
        self, handler: Callable[[Any], object], kind: type[Request] = Correction
    ) -> int:
        """Run ``handler`` on each queued request of type ``kind`` in order (from the
        loop's thread); returns how many were applied or refused.  A Refused error goes
        back to its sender; any other error also goes back and then stops the loop, as
        a failing snapshot would.  Requests whose sender gave up waiting are dropped."""
        with self._lock:
            batch = [entry for entry in self._pending if isinstance(entry[0], kind)]
            self._pending = deque(
                entry
                for entry in self._pending
                if not isinstance(entry[0], kind) and not entry[1].cancelled()
            )
        handled = 0
        for request, future in batch:
            if not future.set_running_or_notify_cancel():
                continue  # the sender gave up waiting before the loop came to it
            handled += 1
            try:
                result = handler(request)
            except Refused as error:
                future.set_exception(error)
            except BaseException as error:
                future.set_exception(error)
                raise
            else:
                future.set_result(result)
        return handled

    @contextmanager
    def serving(self) -> Iterator[Inbox]:
        """Open while a pipeline runs (reopened if an earlier one closed it)."""
        with self._lock:
            self._closed = False
        try:
            yield self
        finally:
            self.close()

    def close(self) -> None:
        """The loop has ended: pending and later requests fail with LiveTableGone."""
        with self._lock:
            self._closed = True
            batch = list(self._pending)
            self._pending.clear()
        for request, future in batch:
            if future.set_running_or_notify_cancel():
                future.set_exception(
                    LiveTableGone(f"the live table ended before {request.describe()}")
                )


_INBOXES: weakref.WeakKeyDictionary[EventBus, Inbox] = weakref.WeakKeyDictionary()
_INBOXES_LOCK = threading.Lock()


def inbox_for(bus: EventBus) -> Inbox:
    """The inbox that goes with ``bus``, made on first use (by the panel)."""
    with _INBOXES_LOCK:
        inbox = _INBOXES.get(bus)
        if inbox is None:
            inbox = _INBOXES[bus] = Inbox()
        return inbox


def find_inbox(bus: EventBus) -> Inbox | None:
    """The inbox of ``bus`` if someone (a panel) made one: the pipeline's loop's look-up."""
    with _INBOXES_LOCK:
        return _INBOXES.get(bus)
