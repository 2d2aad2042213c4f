"""Wakes the WebSocket clients of a match when one of its events is written.

``notify`` may be called from any thread (the live game publishes on its
own); each client waits on an asyncio queue in the server's event loop.  A queue
holds one wake-up at most: the client reads the log itself when woken, so
wake-ups that come while one waits add nothing, and a busy client cannot make
them pile up.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict


class Hub:
    def __init__(self) -> None:
        self._clients: dict[int, set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[int]]]] = (
            defaultdict(set)
        )
        self._lock = threading.Lock()

    def register(self, match_id: int) -> asyncio.Queue[int]:
        """A queue that receives the log id of each new event of the match (call in the loop)."""
        queue: asyncio.Queue[int] = asyncio.Queue(maxsize=1)
        with self._lock:
            self._clients[match_id].add((asyncio.get_running_loop(), queue))
        return queue

    def unregister(self, match_id: int, queue: asyncio.Queue[int]) -> None:
        with self._lock:
            self._clients[match_id] = {
                client for client in self._clients[match_id] if client[1] is not queue
            }

    def notify(self, match_id: int, event_id: int) -> None:
        with self._lock:
            clients = list(self._clients.get(match_id, ()))
        for loop, queue in clients:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_wake, queue, event_id)

    def client_count(self, match_id: int) -> int:
        with self._lock:
            return len(self._clients.get(match_id, ()))


def _wake(queue: asyncio.Queue[int], event_id: int) -> None:
    if not queue.full():
        queue.put_nowait(event_id)
