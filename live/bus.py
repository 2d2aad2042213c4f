"""An in-process event bus: the game publishes, the store, panel and board subscribe.

Events are the engine's values (:mod:`tabletop.engine.events`), written as the JSON of
CONTRACT.md by whoever needs it.  Publishing is thread-safe and never fails
because of a subscriber: a subscriber that raises is logged and kept.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from tabletop.engine.events import Event

Subscriber = Callable[[Event], None]

log = logging.getLogger(__name__)


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber(event)`` for every event published from now on; returns an
        unsubscribe function."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def publish(self, event: Event) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception:
                log.exception(
                    "event subscriber %r failed on event %s", subscriber, event.seq
                )
