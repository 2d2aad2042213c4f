"""A real game at a real table, end to end, as players use it.

A replay composed from the real tile photos (``studio.replay.compose_game``: real tile
crops laid meld by meld on the real table of ``realdata/replays/sabra-dev``, a hand over
each move, the racks laid open in the players' zones at the end) is served as an MJPEG
stream from 127.0.0.1, the way a phone's IP-camera app serves its camera.  Each move
plays at the replay's 10 frames a second; then the settled table stays in view until the
players have done what they do at a table: look at the panel, press End turn.

``tabletop run --source http://127.0.0.1:PORT/...`` (the real command, in its own
process, reading the stream through the real ``cv2.VideoCapture``) watches it with the
shipped model, ``--zones`` from the composer; the test presses the panel's buttons in
headless Chromium (End turn, I'm out, Next round) and checks the events, the scored
round and what the page shows, and a drop-out of the camera app on the page.  It also
measures the delay from the settled table being served to its ``table`` event; the
figure is printed, not asserted as a time.  ``TABLETOP_PHONE_SCREENSHOT=docs/panel-phone.png``
keeps a picture of the phone's page at the scored round for the README.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import pytest
from playwright import sync_api

from tabletop.studio.replay import compose_game, find_realdata
from tests.live.mjpeg_server import MjpegServer
from tests.shared import needs, scaled, with_default_interrupt

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)
pytestmark = [
    needs("chromium"),
    pytest.mark.skipif(find_realdata() is None, reason="the real photos (realdata) are missing"),
]
ROOT = Path(__file__).resolve().parents[2]
PLAYERS = ("Ana", "Ben")
WAIT_S = 60.0


class PacedTable:
    """The composed replay as a live camera whose players take their time: a move plays
    at the replay's rate up to its settled frame, which stays in view until ``go_on``."""

    def __init__(self, replay: Any) -> None:
        self.replay = replay
        self.fps = replay.settings.fps
        self.jpegs = [cv2.imencode(".jpg", replay.frame(i), [cv2.IMWRITE_JPEG_QUALITY, 90])[1]
                      .tobytes() for i in range(replay.frame_count)]
        self.settled = [round(step.settled_t * self.fps) for step in replay.timings]
        self._lock = threading.Lock()
        self._from, self._hold, self._since = 0, 0, time.monotonic()
        self.step = -1
        self.settled_served_at: dict[int, float] = {}

    def frame(self, _number: int) -> bytes:
        with self._lock:
            now = time.monotonic()
            index = min(self._hold, self._from + int((now - self._since) * self.fps))
            if self.step >= 0 and index == self._hold:
                self.settled_served_at.setdefault(self.step, now)
            return self.jpegs[index]

    def go_on(self) -> int:
        """The next move starts; returns its step."""
        with self._lock:
            self.step += 1
            self._from, self._hold = self._hold, self.settled[self.step]
            self._since = time.monotonic()
            return self.step


class Events:
    """The run's events as it writes them (``--events-jsonl``), with when each was seen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: list[tuple[float, dict[str, Any]]] = []

    def poll(self) -> None:
        if not self.path.exists():
            return
        lines = self.path.read_text().splitlines()
        now = time.monotonic()
        for line in lines[len(self.seen):]:
            if line.endswith("}"):
                self.seen.append((now, json.loads(line)))

    def wait_for(self, what: Callable[[dict[str, Any]], bool], process: subprocess.Popen[str],
                 timeout: float = WAIT_S) -> tuple[float, dict[str, Any]]:
        deadline = time.monotonic() + scaled(timeout)
        checked = 0
        while time.monotonic() < deadline:
            self.poll()
            for seen_at, event in self.seen[checked:]:
                if what(event):
                    return seen_at, event
            checked = len(self.seen)
            if process.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"no such event; the run's events: {[e for _, e in self.seen]}")


def same_table(melds: list[str], truth: list[str]) -> bool:
    def bag(table: list[str]) -> list[list[str]]:
        return sorted(sorted(t.split("=")[0] for t in meld.split()) for meld in table)

    return bag(melds) == bag(truth)


@pytest.fixture
def composed() -> Any:
    return compose_game(PLAYERS, seed=3)


@pytest.fixture
def tabletop_run(tmp_path: Path, composed: Any) -> Iterator[tuple[Any, ...]]:
    zones = tmp_path / "zones.json"
    composed.zones.save(zones)
    table = PacedTable(composed)
    with MjpegServer(table.frame, fps=table.fps, timeline="server") as camera:
        port = _free_port()
        env = {**os.environ, "TABLETOP_DATA_DIR": str(tmp_path / "data"),
               "TABLETOP_PANEL_DATABASE_URL": f"sqlite:///{tmp_path / 'matches.sqlite3'}"}
        events_path = tmp_path / "events.jsonl"
        process = subprocess.Popen(
            [sys.executable, "-m", "tabletop", "run", "--source", camera.url,
             "--variant", "sabra", "--players", ",".join(PLAYERS), "--zones", str(zones),
             "--no-markers", "--port", str(port), "--events-jsonl", str(events_path)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=with_default_interrupt)
        try:
            yield process, table, Events(events_path), f"http://127.0.0.1:{port}/", camera
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(scaled(15))
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(scaled(5))


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_round_from_a_phone_camera_stream_to_the_scored_round(
        tabletop_run: tuple[Any, ...], composed: Any) -> None:
    process, table, events, panel_url, camera = tabletop_run
    truth = composed.truth()
    # the pipeline is running once the still, empty table has been committed
    events.wait_for(lambda e: e["type"] == "turn_started", process)
    assert camera.connections >= 1
    delays: list[float] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
        page.goto(panel_url)
        page.wait_for_selector("#conn.live", timeout=20_000)

        # the phone's camera app stops for two seconds: reconnected, and said so on the page
        camera.refuse(2.0)
        trouble = page.locator("#camera-state")
        sync_api.expect(trouble).to_contain_text("Camera reconnecting", timeout=15_000)
        sync_api.expect(trouble).to_be_hidden(timeout=30_000)

        def press(action: str) -> None:
            button = page.locator(f'[data-action="{action}"]').first
            sync_api.expect(button).to_be_enabled(timeout=10_000)
            button.click()

        for step, line in enumerate(truth):
            assert table.go_on() == step
            if line.get("seats"):
                # the racks laid open: the camera reads Ben's in his zone
                _, shown = events.wait_for(
                    lambda e: e["type"] == "hand_shown" and e["seat"] == 1, process)
                assert " ".join(shown["items"]) == line["seats"]["1"]
                sync_api.expect(page.locator('#racks li[data-seat="1"] .rack')).to_contain_text(
                    line["seats"]["1"].split()[0], timeout=10_000)
                press("next_round")
                continue
            seen_at, _ = events.wait_for(
                lambda e, melds=line["melds"]: e["type"] == "table"
                and same_table(e["melds"], melds), process)
            delays.append(seen_at - table.settled_served_at[step])
            if step == 0:
                # a desktop on the Table view: the picture with a frame round every meld
                desk = browser.new_page(viewport={"width": 1280, "height": 800})
                desk.goto(panel_url.rstrip("/") + "/table")
                sync_api.expect(desk.locator("#overlay rect")).to_have_count(
                    len(line["melds"]), timeout=15_000)
                desk.close()
            if step < 2:
                press("end_turn")
                events.wait_for(lambda e, seat=(step + 1) % 2: e["type"] == "turn_started"
                                and e["seat"] == seat, process)
            else:
                press("out")
                events.wait_for(lambda e: e["type"] == "player_out" and e["seat"] == 0,
                                process)
        _, scored = events.wait_for(lambda e: e["type"] == "round_scored", process)
        ben_rack = sum(int(token[1:]) for token in truth[-1]["seats"]["1"].split())
        assert scored["scores"] == {"Ana": ben_rack, "Ben": -ben_rack}
        assert scored["winner"] == "Ana"
        # the banner names the winner first (the dealer may follow)
        sync_api.expect(page.locator("#round-banner .result")).to_contain_text(
            "Round 1: Ana wins", timeout=10_000)
        keep = os.environ.get("TABLETOP_PHONE_SCREENSHOT")
        if keep:  # the README's picture of the panel on a phone
            page.screenshot(path=keep, full_page=True)
        browser.close()
    # nothing was read that was not on the table: every table event is a true state
    states = [e["melds"] for _, e in events.seen if e["type"] == "table"]
    assert all(any(same_table(s, line["melds"]) for line in truth) for s in states), states
    assert not [e for _, e in events.seen if e["type"] == "warning"]
    print(f"\nsettled table to its event: {', '.join(f'{d:.2f}' for d in delays)} s")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=scaled(30))
    assert process.returncode == 0, stderr
    assert "1 round scored" in stderr and "round 1 (Ana won)" in stderr
    assert "dropped out" in stderr  # the status line's notice of the drop-out
