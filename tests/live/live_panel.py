"""A live game with its panel, as `tabletop run` assembles them, over a scripted camera:
the real embedded panel (uvicorn) on a free port, ``live.run.run`` watching a still table
in a thread, and the detector reading what the test lays (``Camera.rows``)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.bus import EventBus
from tabletop.live.watcher import TableWatcher, WatcherSettings
from tabletop.panel.embed import start_panel
from tabletop.panel.settings import PanelSettings
from tabletop.vision.detections import Detections
from tests.live.frames import dets, table_frame
from tests.shared import json_events, scaled

Row = tuple[str, float, float, float]
"""An item the detector reads: label, centre x and y, confidence."""


class Camera:
    """A camera over a still table: frames until stopped, its detector reading ``rows``."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.stopped = threading.Event()

    def __iter__(self) -> Iterator[tuple[float, Any]]:
        t = 0.0
        frame = table_frame()
        while not self.stopped.is_set():
            yield t, frame
            t = round(t + 0.1, 3)
            time.sleep(0.005)

    def close(self) -> None:
        self.stopped.set()

    def detect(self, image: Any) -> Detections:
        return dets(self.rows)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + scaled(timeout)
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def call(url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=scaled(10)) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


@dataclass
class LiveTable:
    """The running game: every event published, the match's API address, the camera."""

    events: list[dict[str, Any]]
    base: str
    camera: Camera
    watching: threading.Thread
    failures: list[BaseException]

    def of(self, kind: str, code: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events
                if e["type"] == kind and (code is None or e.get("code") == code)]

    def stop_watching(self) -> None:
        """The camera's video ends: the loop finishes, having raised nothing."""
        self.camera.stopped.set()
        self.watching.join(scaled(30))
        assert not self.failures and not self.watching.is_alive(), self.failures


@contextlib.contextmanager
def watched_with_panel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, camera: Camera, *,
                       watcher: TableWatcher | None = None,
                       keep_corrections: Path | None = None) -> Iterator[LiveTable]:
    """A Sabra game of Ana and Ben watched through ``camera``, its panel up; stopped and
    checked for failures of the loop on the way out."""
    from tabletop.live.game import Game
    from tabletop.live.pipeline import Pipeline
    from tabletop.panel.routers import changes

    variant = find_variant("sabra")
    bus = EventBus()
    events, _ = json_events(bus)
    settings = PanelSettings(database_url=f"sqlite:///{tmp_path / 'm.sqlite3'}", port=free_port())
    panel = start_panel(bus, variant_id="sabra", options={}, players=["Ana", "Ben"],
                        name="live", settings=settings)
    # this machine may be busy: the loop answers between frames, give it time to get there
    monkeypatch.setattr(changes, "LIVE_ANSWER_S", 30.0)
    watcher = watcher or TableWatcher(variant, settings=WatcherSettings(still_s=0.3))
    failures: list[BaseException] = []

    def loop() -> None:
        try:
            game = Game(variant, ("Ana", "Ben"), bus)
            Pipeline(camera, camera.detect, watcher, game,
                     keep_corrections=keep_corrections).run()
        except BaseException as error:
            failures.append(error)
        finally:
            camera.close()

    watching = threading.Thread(target=loop, daemon=True)
    watching.start()
    live = LiveTable(events, f"http://127.0.0.1:{settings.port}/api/matches/{panel.match_id}",
                     camera, watching, failures)
    try:
        yield live
    finally:
        camera.stopped.set()
        watching.join(scaled(30))
        panel.stop()
    assert not failures, failures
