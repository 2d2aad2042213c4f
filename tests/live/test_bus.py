"""The event bus delivers in order, to every subscriber, and survives a failing one."""

from __future__ import annotations

import threading

from tabletop.engine.events import Event, Table
from tabletop.live.bus import EventBus


def _table(seq: int) -> Event:
    return Table(seq=seq, t=0.0, seat=None, melds=())


def test_delivers_to_every_subscriber_in_order() -> None:
    bus = EventBus()
    first: list[int] = []
    second: list[int] = []
    bus.subscribe(lambda e: first.append(e.seq))
    bus.subscribe(lambda e: second.append(e.seq))
    for seq in range(1, 6):
        bus.publish(_table(seq))
    assert first == second == [1, 2, 3, 4, 5]


def test_failing_subscriber_is_kept_and_others_still_get_events() -> None:
    bus = EventBus()
    seen: list[int] = []

    def broken(event: Event) -> None:
        raise RuntimeError("boom")

    bus.subscribe(broken)
    bus.subscribe(lambda e: seen.append(e.seq))
    bus.publish(_table(1))
    bus.publish(_table(2))
    assert seen == [1, 2]


def test_unsubscribe_and_threads() -> None:
    bus = EventBus()
    seen: list[int] = []
    lock = threading.Lock()

    def record(event: Event) -> None:
        with lock:
            seen.append(event.seq)

    stop = bus.subscribe(record)
    threads = [
        threading.Thread(target=lambda k=k: [bus.publish(_table(k * 100 + i)) for i in range(50)])
        for k in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 200
    stop()
    bus.publish(_table(999))
    assert 999 not in seen
