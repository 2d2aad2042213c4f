"""A phone camera stream that restarts its picture is a camera event, not a move (issue 45).

A game composed from the real tile photos is served as an MJPEG stream from 127.0.0.1
(as a phone's IP-camera app serves it) and watched by the real pipeline (``live.run.run``
on the stream's URL: the real ``cv2.VideoCapture``, the shipped model looking where the
table changed, the watcher, the game).  Once the last move's table has been read, the
stream drops and comes back showing the picture it started with, the empty table (an app
that restarts its recording on a reconnect).  The game must not take that for a player
taking 9 tiles away: no ``table`` event follows, and one ``camera_view_changed``
warning says what happened."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import cv2
import pytest

from tabletop.engine.events import Event, event_to_json
from tabletop.engine.variants import find_variant
from tabletop.live.bus import EventBus
from tabletop.live.events import CAMERA_EVENT_CODE
from tabletop.live.run import Listeners, Reading, TableSetup, run
from tabletop.studio.replay import compose_game, sabra_round, table_key
from tests.live.mjpeg_server import MjpegServer
from tests.shared import REALDATA

pytestmark = pytest.mark.skipif(REALDATA is None, reason="the real photos are missing")
PLAYERS = ("Ana", "Ben")
WAIT_S = 180.0


class RestartingCamera:
    """The game at its own rate up to its last frame, held there until :meth:`restart`;
    from then on the first frame again (the empty table) until :meth:`stop`."""

    def __init__(self, game: Any) -> None:
        self.jpegs = [cv2.imencode(".jpg", game.frame(i), [cv2.IMWRITE_JPEG_QUALITY, 90])[1]
                      .tobytes() for i in range(game.frame_count)]
        self.restarted = threading.Event()
        self.stopped = threading.Event()

    def frame(self, number: int) -> bytes | None:
        if self.stopped.is_set():
            return None
        if self.restarted.is_set():
            return self.jpegs[0]
        return self.jpegs[min(number, len(self.jpegs) - 1)]


def wait_for(what: Callable[[], bool], timeout: float, why: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return
        time.sleep(0.05)
    raise AssertionError(why)


def test_a_stream_that_restarts_its_picture_is_no_move(tmp_path: Any) -> None:
    game = compose_game(PLAYERS, seed=3, steps=sabra_round()[:3])
    final = table_key(game.truth()[-1]["melds"])
    zones = tmp_path / "zones.json"
    game.zones.save(zones)
    camera = RestartingCamera(game)
    bus = EventBus()
    events: list[dict[str, Any]] = []
    lock = threading.Lock()

    def keep(event: Event) -> None:
        with lock:
            events.append(event_to_json(event))

    def seen(kind: str) -> list[dict[str, Any]]:
        with lock:
            return [e for e in events if e["type"] == kind]

    failure: list[BaseException] = []

    def watch() -> None:
        try:
            run(server.url, find_variant("sabra"), PLAYERS,
                reading=Reading(reconnect_for_s=3.0,
                                table=TableSetup(zones=zones, find_markers=False)),
                listeners=Listeners(bus=bus, on_event=keep))
        except BaseException as error:  # the test thread reports it
            failure.append(error)

    with MjpegServer(camera.frame, fps=game.settings.fps) as server:
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        wait_for(lambda: any(table_key(e["melds"]) == final for e in seen("table"))
                 or bool(failure), WAIT_S, f"the last move was never read: {events}")
        assert not failure, failure
        tables_before = len(seen("table"))
        connections = server.connections
        camera.restarted.set()
        server.cut()
        wait_for(lambda: server.connections > connections, 30.0, "the run did not reconnect")
        wait_for(lambda: bool([w for w in seen("warning") if w.get("code") == CAMERA_EVENT_CODE]),
                 60.0, f"no camera event was said: {events}")
        time.sleep(4.0)  # the empty picture stays in view, still, long enough to be committed
        camera.stopped.set()
        server.cut()
        watcher.join(60.0)
    assert not watcher.is_alive()
    assert not failure, failure
    tables = seen("table")
    assert len(tables) == tables_before, tables[tables_before:]
    assert table_key(tables[-1]["melds"]) == final
    camera_events = [w for w in seen("warning") if w.get("code") == CAMERA_EVENT_CODE]
    assert len(camera_events) == 1
    assert "7 of 7 items" in camera_events[0]["message"]
    assert not [e for e in events if e["type"] in ("table_rearranged", "turn_ended")]
