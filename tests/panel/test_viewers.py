"""Many pages watching, slow pages and half-sent requests, against the real server
(uvicorn on 127.0.0.1 with the panel's own settings, panel/serving.py) and real
WebSocket clients."""

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
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import websockets
from websockets.sync.client import connect

from tabletop.panel import serving
from tabletop.panel.app import create_app
from tabletop.panel.embed import listen_socket
from tabletop.panel.routers import live
from tabletop.panel.settings import PanelSettings
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

    @property
    def ws(self) -> str:
        return self.base.replace("http", "ws") + f"/ws/matches/{self.match_id}"

    def viewers(self) -> int:
        feeds = getattr(self.app.state, "live_feeds", {})
        return sum(len(feed.viewers) for feed in feeds.values())


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
    service.correction(match_id, "setup", "Ana", variant="sabra", players=PLAYERS)
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


def test_a_hundred_viewers_share_one_replay_per_change(served: Served) -> None:
    async def watch(count: int, writes: int) -> list[list[int]]:
        seen: list[list[int]] = [[] for _ in range(count)]
        sockets = [await websockets.connect(served.ws) for _ in range(count)]
        for slot, ws in enumerate(sockets):
            seen[slot].append(json.loads(await ws.recv())["last_id"])
        before = len(served.replays)
        for number in range(writes):
            await asyncio.to_thread(served.table, [f"R{number % 10 + 1} R{number % 10 + 2} "
                                                   f"R{number % 10 + 3}"])
            await asyncio.sleep(0.3)
        last = int((await asyncio.to_thread(
            lambda: json.loads(urllib.request.urlopen(
                f"{served.base}/api/matches/{served.match_id}/state", timeout=30).read())
        ))["last_id"])
        for slot, ws in enumerate(sockets):
            while seen[slot][-1] != last:
                seen[slot].append(json.loads(await asyncio.wait_for(ws.recv(), 10))["last_id"])
            await ws.close()
        assert len(served.replays) - before <= writes + 2  # not one per viewer
        return seen

    seen = asyncio.run(watch(100, 5))
    for pushes in seen:
        assert pushes == sorted(pushes) and len(pushes) >= 2


def test_a_viewer_that_does_not_read_is_dropped_and_the_others_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "SEND_SECONDS", 1.0)
    big = [" ".join(f"R{value}" for value in range(1, 14))] * 200  # pushes of some 25 kB
    with serve(tmp_path, send_buffer=4096) as served:
        served.table(big)
        slow_socket = socket.socket()
        slow_socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting
        slow_socket.connect(("127.0.0.1", int(served.base.rsplit(":", 1)[1])))
        # its client stops reading the socket once it holds one message: it never reads
        slow = connect(served.ws, sock=slow_socket, max_queue=1)
        assert slow.response is not None and slow.response.status_code == 101
        with connect(served.ws) as reader:
            assert len(reader.recv(timeout=10)) > 20_000
            assert _until(lambda: served.viewers() == 2, 5)
            for number in range(12):
                served.table([*big[:-1], f"K{number + 1} B{number + 1} O{number + 1}"])
                time.sleep(0.25)
            assert _until(lambda: served.viewers() == 1, 15), "the slow page is still held"
            last = served.post(f"/api/matches/{served.match_id}/undo", {"who": "Ana"})["id"]
            pushed = json.loads(reader.recv(timeout=10))
            while pushed["last_id"] != last:
                pushed = json.loads(reader.recv(timeout=10))
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
