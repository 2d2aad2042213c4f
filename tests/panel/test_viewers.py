"""Many pages watching, slow pages and half-sent requests, against the real server
(uvicorn on 127.0.0.1 with the panel's own settings, panel/serving.py) and real
WebSocket clients, each following the whole state and the patches after it as a page
does (tests/panel/clients.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import websockets
from websockets.sync.client import connect

from tabletop.panel import patch, serving
from tabletop.panel.app import create_app
from tabletop.panel.embed import listen_socket
from tabletop.panel.events import MatchSetUp
from tabletop.panel.routers import live
from tabletop.panel.settings import PanelSettings
from tests.panel.clients import Follower, push_number
from tests.shared import scaled

PLAYERS = ["Ana", "Ben", "Cem", "Dora"]


@dataclass
class Served:
    base: str
    app: Any
    match_id: int
    replays: list[int]

    def post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.base + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def table(self, melds: list[str]) -> None:
        self.post(f"/api/matches/{self.match_id}/events",
                  {"type": "table", "seat": 0, "melds": melds})

    def round(self, number: int) -> None:
        """A round entered by hand: a player out in turn, the others counting their racks."""
        out = number % len(PLAYERS)
        players = [{"name": name, "out": True} if seat == out
                   else {"name": name, "points": 5 + seat + number % 7}
                   for seat, name in enumerate(PLAYERS)]
        self.post(f"/api/matches/{self.match_id}/rounds", {"who": "Ana", "players": players})

    def state(self) -> dict[str, Any]:
        """The match's state as the HTTP API serves it."""
        with urllib.request.urlopen(f"{self.base}/api/matches/{self.match_id}/state",
                                    timeout=30) as answer:
            return dict(json.loads(answer.read()))

    @property
    def ws(self) -> str:
        return self.base.replace("http", "ws") + f"/ws/matches/{self.match_id}"

    def viewers(self) -> int:
        feeds = getattr(self.app.state, "live_feeds", {})
        return sum(len(feed.viewers) for feed in feeds.values())

    def behind(self) -> int:
        """How many pushes the page furthest behind has not been sent."""
        feeds = getattr(self.app.state, "live_feeds", {})
        return max((push_number(feed.latest.version) - push_number(viewer.held)
                    for feed in feeds.values() if isinstance(feed.latest, live._Push)
                    for viewer in feed.viewers if viewer.held is not None), default=0)


@contextlib.contextmanager
def serve(tmp_path: Path, send_buffer: int | None = None) -> Iterator[Served]:
    sock = listen_socket("127.0.0.1", 0)
    if send_buffer is not None:
        # accepted connections inherit it: a page that does not read fills it at once
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    port = int(sock.getsockname()[1])
    app = create_app(PanelSettings(database_url=f"sqlite:///{tmp_path / 'p.db'}", port=port))
    service = app.state.service
    replays: list[int] = []
    replay = service.state

    def counted(match_id: int) -> dict[str, Any]:
        replays.append(match_id)
        return replay(match_id)

    service.state = counted
    match_id = service.store.create_match("Friday").id
    service.log(match_id, MatchSetUp(who="Ana", variant="sabra", players=tuple(PLAYERS)))
    server = uvicorn.Server(serving.server_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.02)
    yield Served(f"http://127.0.0.1:{port}", app, match_id, replays)
    server.should_exit = True
    thread.join(scaled(10))
    sock.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serve(tmp_path) as panel:
        yield panel


def _until(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + scaled(seconds)
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def _big(number: int) -> list[str]:
    """A table of 200 runs in a colour that changes with ``number``: each push after the
    one before is some 20 kB, patch or not."""
    colour = "RBKO"[number % 4]
    return [" ".join(f"{colour}{value}" for value in range(1, 14))] * 200


def test_a_hundred_viewers_share_one_replay_and_one_patch_per_change(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    diffs: list[int] = []
    diff = patch.diff

    def counted(old: Any, new: Any) -> list[dict[str, Any]]:
        diffs.append(1)
        return diff(old, new)

    monkeypatch.setattr(patch, "diff", counted)

    async def watch(count: int, writes: int) -> list[Follower]:
        pages = [Follower() for _ in range(count)]
        sockets = [await websockets.connect(served.ws) for _ in range(count)]
        for page, ws in zip(pages, sockets, strict=True):
            page.take(await ws.recv())
        replays, patches = len(served.replays), len(diffs)
        for number in range(writes):
            await asyncio.to_thread(served.table, [f"R{number % 10 + 1} R{number % 10 + 2} "
                                                   f"R{number % 10 + 3}"])
            await asyncio.sleep(0.3)
        final = await asyncio.to_thread(served.state)
        for page, ws in zip(pages, sockets, strict=True):
            while page.state != final:
                page.take(await asyncio.wait_for(ws.recv(), scaled(10)))
            await ws.close()
        assert len(served.replays) - replays <= writes + 2  # not one per viewer
        # one per change for the pages that took the last push, and one for each other
        # version a page held when the next came: far from one per page
        assert len(diffs) - patches <= 3 * (writes + 2)
        return pages

    pages = asyncio.run(watch(100, 5))
    for page in pages:
        assert page.wholes == 1 and page.patches >= 1


def test_early_and_late_viewers_end_with_the_state_the_api_serves(served: Served) -> None:
    service = served.app.state.service
    undo = partial(served.post, f"/api/matches/{served.match_id}/undo", {"who": "Ana"})
    before = [partial(served.table, ["R1 R2 R3", "K7 B7 O7"]), partial(served.round, 0),
              partial(served.table, ["B10 B11 JK B13"]), partial(served.round, 1), undo]
    after = [partial(served.round, 2), partial(served.table, ["O4 O5 O6"]),
             partial(service.set_camera, served.match_id, "live", "the stream is live"),
             partial(served.round, 3), undo]
    early, late = Follower(), Follower()
    with connect(served.ws) as first:
        early.take(first.recv(timeout=scaled(10)))
        for change in before:
            change()
            time.sleep(0.3)  # a push each, mostly
        with connect(served.ws) as second:
            late.take(second.recv(timeout=scaled(10)))
            for change in after:
                change()
                time.sleep(0.3)
            final = served.state()
            assert final["live"]["camera"] == {"state": "live", "message": "the stream is live"}
            assert len(final["rounds"]) == 2
            for socket_, page in ((first, early), (second, late)):
                while page.state != final:
                    page.take(socket_.recv(timeout=scaled(10)))
    assert early.wholes == 1 and early.patches >= 5
    assert late.wholes == 1 and late.patches >= 3


def test_a_round_is_pushed_as_a_patch_far_smaller_than_the_state(served: Served) -> None:
    for number in range(30):
        served.table(["R3 R4 R5", f"K{number % 13 + 1} B{number % 13 + 1} O{number % 13 + 1}"])
        served.round(number)
    page = Follower()
    with connect(served.ws, max_size=None) as ws:
        whole = ws.recv(timeout=scaled(10))
        page.take(whole)
        for change in (lambda: served.round(30), lambda: served.table(["O4 O5 O6"])):
            change()
            pushed = ws.recv(timeout=scaled(10))
            assert "patch" in json.loads(pushed)
            assert len(pushed) * 10 < len(whole), (len(pushed), len(whole))
            assert page.take(pushed) == served.state()


def test_a_viewer_that_misses_pushes_is_sent_the_newest_and_ends_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "SEND_SECONDS", scaled(120))  # slow, not gone
    with serve(tmp_path, send_buffer=4096) as served:
        slow_socket = socket.socket()
        slow_socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting
        slow_socket.connect(("127.0.0.1", int(served.base.rsplit(":", 1)[1])))
        page = Follower()
        # its client stops reading the socket while it holds a message not taken
        with connect(served.ws, sock=slow_socket, max_queue=1, max_size=None) as slow:
            page.take(slow.recv(timeout=scaled(10)))
            for number in range(60):
                served.table(_big(number))
                time.sleep(0.25)
                if served.behind() >= 2:
                    break  # the server is stuck sending it one push, two newer are waiting
            assert served.behind() >= 2, "the page took every push"
            final = served.state()
            while page.state != final:
                page.take(slow.recv(timeout=scaled(10)))
        assert page.skipped >= 1 and page.wholes == 1


def test_a_page_that_asks_for_the_whole_state_is_sent_it(served: Served) -> None:
    with connect(served.ws) as ws:
        first = json.loads(ws.recv(timeout=scaled(10)))
        ws.send(json.dumps({"want": "state"}))
        assert json.loads(ws.recv(timeout=scaled(10))) == first
        ws.send("not JSON")  # what the page says otherwise is ignored
        ws.send(json.dumps({"want": "nothing"}))
        served.table(["R1 R2 R3"])
        pushed = json.loads(ws.recv(timeout=scaled(10)))
        assert pushed["base"] == first["version"] and pushed["version"] != first["version"]
        assert patch.apply(first["state"], pushed["patch"]) == served.state()


def test_a_replay_that_fails_once_does_not_stop_the_pushes(served: Served) -> None:
    service = served.app.state.service
    replay, failures = service.state, []

    def failing_once(match_id: int) -> dict[str, Any]:
        if not failures:
            failures.append(match_id)
            raise RuntimeError("a replay that went wrong")
        return replay(match_id)

    with connect(served.ws) as ws:
        page = Follower()
        page.take(ws.recv(timeout=scaled(10)))
        service.state = failing_once
        served.table(["R1 R2 R3"])
        assert _until(lambda: bool(failures), 10)
        served.table(["R1 R2 R3 R4"])
        final = served.state()
        while page.state != final:
            page.take(ws.recv(timeout=scaled(10)))
    assert failures == [served.match_id]


def test_a_viewer_that_does_not_read_is_dropped_and_the_others_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "SEND_SECONDS", 1.0)
    with serve(tmp_path, send_buffer=4096) as served:
        served.table(_big(0))
        slow_socket = socket.socket()
        slow_socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting
        slow_socket.connect(("127.0.0.1", int(served.base.rsplit(":", 1)[1])))
        # its client stops reading the socket once it holds one message: it never reads
        slow = connect(served.ws, sock=slow_socket, max_queue=1)
        assert slow.response is not None and slow.response.status_code == 101
        page = Follower()
        with connect(served.ws) as reader:
            whole = reader.recv(timeout=10)
            assert len(whole) > 20_000
            page.take(whole)
            assert _until(lambda: served.viewers() == 2, 5)
            for number in range(1, 13):
                served.table(_big(number))
                time.sleep(0.25)
            assert _until(lambda: served.viewers() == 1, 15), "the slow page is still held"
            served.post(f"/api/matches/{served.match_id}/undo", {"who": "Ana"})
            final = served.state()
            while page.state != final:
                page.take(reader.recv(timeout=10))
        slow_socket.close()
        assert _until(lambda: served.viewers() == 0, 5)


@pytest.mark.parametrize("sent", [b"", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"])
def test_a_connection_that_never_finishes_its_request_is_closed(
    served: Served, monkeypatch: pytest.MonkeyPatch, sent: bytes
) -> None:
    monkeypatch.setattr(serving, "HEAD_SECONDS", 0.5)
    port = int(served.base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as half:
        half.sendall(sent)
        half.settimeout(scaled(10))
        started = time.monotonic()
        assert half.recv(1024) == b""  # closed by the server, no answer
        assert time.monotonic() - started < scaled(5)


def test_a_slow_but_complete_request_is_answered(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serving, "HEAD_SECONDS", 1.0)
    port = int(served.base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.settimeout(scaled(10))
        for part in (b"GET /api/matches HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"\r\n"):
            client.sendall(part)
            time.sleep(0.3)
        assert client.recv(1024).startswith(b"HTTP/1.1 200")
        # the next request on the same connection has its own time
        time.sleep(0.8)
        client.sendall(b"GET /api/matches HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert client.recv(1024).startswith(b"HTTP/1.1 200")
