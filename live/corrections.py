"""People correcting the camera: a misread item fixed on the panel reaches the live table.

A player who sees a misread tile on the panel corrects it there (``POST
/api/matches/{id}/corrections/item``).  From then on the watcher must read
that physical item as corrected, so the game, its meld checks and the scores
use the right token; otherwise the next committed snapshot would bring the
misreading back.  Two rules shape how the correction travels:

* the panel knows nothing of the pipeline (tracks, votes, the watcher), and
* the watcher and the game are touched only from the watch loop's own thread
  (``live.run.watch``), never from the panel's server thread.

So the two sides meet here, in a message and a mailbox that know neither:

* :class:`Correction`: meld index and item index in the table as the game's
  last ``table`` event lists it (the shared melds, then each seat's melds in
  seat order), the right token, who said so and ``was``, the token the panel
  showed there, so that a table that changed in the meantime is refused rather
  than the wrong item pinned.
* :class:`CorrectionInbox`: the panel calls :meth:`~CorrectionInbox.submit` and
  gets a :class:`concurrent.futures.Future`; the watch loop calls
  :meth:`~CorrectionInbox.apply_pending` between frames, which runs its handler
  (the watcher pins the label and re-reads the last committed table, the game
  takes the corrected snapshot) and settles each Future with the handler's
  result or its :class:`CorrectionError`.  The panel waits a moment on the
  Future, so a correction the live table refuses is refused to the person
  and never logged.  When the loop ends it closes the inbox; corrections after
  that fail at once with :class:`LiveTableGone` (the panel then only fixes
  its own display).

Why not the :class:`live.bus.EventBus`: the bus carries the game's numbered
events one way to the store, the JSONL file and the board; a correction is a
request going the other way that needs an answer (accepted, or why not).

Finding each other: the panel and the live game are started separately
(``tabletop run`` starts the embedded panel, then the loop) and share one
object, the bus.  :func:`inbox_for` registers the inbox against that bus
(weakly) and :func:`find_inbox` looks it up, so ``panel.embed.start_panel``
and ``live.run.watch`` meet at the same inbox without any other plumbing.
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

from live.bus import EventBus

log = logging.getLogger(__name__)


class CorrectionError(ValueError):
    """A correction the live table cannot take: an item that is not there, a bad token.

    The message quotes the meld and item indices (and the token) as given."""


class LiveTableGone(RuntimeError):
    """The watch loop has ended (the video is over): no live table takes corrections now."""


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


CorrectionHandler = Callable[[Correction], object]


class CorrectionInbox:
    """Corrections waiting for the watch loop, each with the Future its sender waits on.

    Thread-safe: ``submit`` from any thread, ``apply_pending`` from the loop."""

    def __init__(self) -> None:
        self._pending: deque[tuple[Correction, Future[object]]] = deque()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def submit(self, correction: Correction) -> Future[object]:
        """Queue ``correction``; the Future gets the handler's result, its
        CorrectionError, or LiveTableGone once the loop has ended."""
        future: Future[object] = Future()
        with self._lock:
            if not self._closed:
                self._pending.append((correction, future))
                return future
        future.set_exception(LiveTableGone(f"no live table takes {correction.describe()}"))
        return future

    def apply_pending(self, handler: CorrectionHandler) -> int:
        """Run ``handler`` on each queued correction in order (from the loop's thread);
        returns how many were applied or refused.  A CorrectionError goes back to its
        sender; any other error also goes back and then stops the loop, as a failing
        snapshot would."""
        with self._lock:
            batch = list(self._pending)
            self._pending.clear()
        handled = 0
        for correction, future in batch:
            if not future.set_running_or_notify_cancel():
                continue  # the sender gave up waiting before the loop came to it
            handled += 1
            try:
                result = handler(correction)
            except CorrectionError as error:
                future.set_exception(error)
            except BaseException as error:
                future.set_exception(error)
                raise
            else:
                future.set_result(result)
        return handled

    @contextmanager
    def serving(self) -> Iterator[CorrectionInbox]:
        """Open while a watch loop runs (reopened if an earlier loop closed it)."""
        with self._lock:
            self._closed = False
        try:
            yield self
        finally:
            self.close()

    def close(self) -> None:
        """The loop has ended: pending and later corrections fail with LiveTableGone."""
        with self._lock:
            self._closed = True
            batch = list(self._pending)
            self._pending.clear()
        for correction, future in batch:
            if future.set_running_or_notify_cancel():
                future.set_exception(LiveTableGone(f"the live table ended before "
                                                   f"{correction.describe()}"))


_INBOXES: weakref.WeakKeyDictionary[EventBus, CorrectionInbox] = weakref.WeakKeyDictionary()
_INBOXES_LOCK = threading.Lock()


def inbox_for(bus: EventBus) -> CorrectionInbox:
    """The inbox that goes with ``bus``, made on first use (by the panel)."""
    with _INBOXES_LOCK:
        inbox = _INBOXES.get(bus)
        if inbox is None:
            inbox = _INBOXES[bus] = CorrectionInbox()
        return inbox


def find_inbox(bus: EventBus) -> CorrectionInbox | None:
    """The inbox of ``bus`` if someone (a panel) made one: the watch loop's look-up."""
    with _INBOXES_LOCK:
        return _INBOXES.get(bus)
