"""A live Sabra game on an event bus, its loop thread serving the bus's inbox, as a camera
run would keep it."""

from __future__ import annotations

import queue
import threading
import time

from tabletop.engine.items import parse_items
from tabletop.engine.variants import find_variant
from tabletop.live.actions import apply_pending_actions
from tabletop.live.bus import EventBus
from tabletop.live.corrections import inbox_for
from tabletop.live.game import Game
from tabletop.live.snapshot import TableSnapshot

OPENING = "R10 R11 R12"  # 33 of Sabra's 30 ("mindestens 30 Punkte")
BEN_OPENS = "B11 B12 B13"  # 36


class LiveTable:
    """A real Game on ``bus`` and its loop thread, serving the bus's inbox."""

    def __init__(self, bus: EventBus, players: tuple[str, ...] = ("Ana", "Ben")) -> None:
        self.inbox = inbox_for(bus)
        self.game = Game(find_variant("sabra"), players, bus)
        self.t = 0.0
        self.failures: list[BaseException] = []
        self._tables: queue.Queue[tuple[tuple[str, ...], threading.Event]] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="live-table", daemon=True)

    def start(self) -> LiveTable:
        self._thread.start()
        return self

    def lay(self, *melds: str) -> None:
        """The camera commits a table of ``melds``; returns once the game has taken it."""
        taken = threading.Event()
        self._tables.put((melds, taken))
        assert taken.wait(10), "the live table's loop did not take the snapshot"

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        assert not self.failures

    def _loop(self) -> None:
        try:
            with self.inbox.serving():
                while not self._stop.is_set():
                    self.t = round(self.t + 0.1, 3)
                    self.game.start(self.t)
                    while not self._tables.empty():
                        melds, taken = self._tables.get()
                        self.game.update(
                            TableSnapshot(self.t, melds=tuple(parse_items(m) for m in melds))
                        )
                        taken.set()
                    apply_pending_actions(self.inbox, self.game, self.t)
                    time.sleep(0.005)
        except BaseException as error:
            self.failures.append(error)
            raise
