"""Streams that answer badly, the way a player meets them (issue 47, items 1 and 5): a
server that accepts the connection and never answers, a stream that goes silent in
the middle of a game, a server that sends garbage, parts that are no JPEG.

``tabletop run`` must end with its one line and its status (2 for a source that never
opened, 0 for one that was lost after --reconnect-for), never with an abort ("terminate
called without an active exception", status 134) from an OpenCV call that returns while
the process exits."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from tabletop.live.sources import SourceError, open_source
from tests.live.mjpeg_server import MjpegServer, numbered_frame
from tests.shared import scaled

ROOT = Path(__file__).resolve().parents[2]
RUN = [sys.executable, "-m", "tabletop", "run", "--variant", "sabra", "--players", "A,B",
       "--headless"]
ABORTED = "terminate called"
OPEN_TIMEOUT_S = 2.0

Answer = Callable[[socket.socket], None]


@contextlib.contextmanager
def tcp_server(answer: Answer) -> Iterator[str]:
    """A server on 127.0.0.1 that accepts every connection and hands it to ``answer``
    (in its own thread); the connections stay open until the server stops.  Yields the
    URL of a stream on it."""
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[socket.socket] = []
    stopped = threading.Event()

    def serve(connection: socket.socket) -> None:
        with contextlib.suppress(OSError):
            answer(connection)

    def accept() -> None:
        while not stopped.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connections.append(connection)
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/video"
    finally:
        stopped.set()
        listener.close()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()


def silent(connection: socket.socket) -> None:
    """Accepts and never answers."""


def _noise(connection: socket.socket) -> None:
    random = np.random.default_rng(47)
    while True:
        connection.sendall(random.integers(0, 256, 4096, dtype=np.uint8).tobytes())
        time.sleep(0.01)


def garbage(connection: socket.socket) -> None:
    """Answers the request with random bytes, no HTTP at all."""
    connection.recv(4096)
    _noise(connection)


def http_answer(content_type: str, body: bytes | None) -> Answer:
    """An HTTP 200 answer of ``content_type``: ``body`` then silence, or endless random
    bytes when ``body`` is None."""
    def answer(connection: socket.socket) -> None:
        connection.recv(4096)
        connection.sendall(f"HTTP/1.0 200 OK\r\nContent-Type: {content_type}\r\n\r\n"
                           .encode("ascii"))
        if body is None:
            _noise(connection)
        connection.sendall(body or b"")
        time.sleep(60)
    return answer


CORRUPT_JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 8  # a JPEG's start, then noise


@contextlib.contextmanager
def mjpeg_of(parts: list[bytes]) -> Iterator[str]:
    """A real MJPEG stream whose parts are ``parts``."""
    with MjpegServer(parts, fps=10) as server:
        yield server.url


def _runs(urls: list[str], *extra: str) -> list[subprocess.CompletedProcess[str]]:
    """``tabletop run --source URL`` for each of ``urls``, all at once, each bounded in time."""
    processes = [subprocess.Popen([*RUN, "--source", url, *extra], cwd=ROOT,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for url in urls]
    done = []
    for process in processes:
        try:
            stdout, stderr = process.communicate(timeout=scaled(60))
        finally:
            process.kill()
        done.append(subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr))
    return done


def test_a_server_that_never_answers_ends_the_run_with_one_line_and_status_2() -> None:
    with tcp_server(silent) as url:
        results = _runs([url] * 5)  # at once: a busy machine is where a call comes back late
    for result in results:
        assert ABORTED not in result.stderr
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.count("tabletop: error:") == 1, result.stderr
        assert result.stderr.startswith(f"tabletop: error: cannot open the stream '{url}': "
                                        "no answer within 10 s")


STUCK_CAMERA = """
import sys

import cv2

from tabletop.live.sources import LiveSource, SourceError

fifo, url, *command = sys.argv[1:]
# FFmpeg opening a FIFO that no one writes to: an OpenCV call that never returns
camera = LiveSource(url, open_timeout_s=0.5,
                    open_capture=lambda _target: cv2.VideoCapture(fifo, cv2.CAP_FFMPEG))
try:
    camera.open()
except SourceError as error:
    print(f"first: {error}")  # stdout to a pipe: kept in the buffer until the end
sys.argv = ["tabletop", *command]
from tabletop.cli import main

sys.exit(main())
"""


def test_a_camera_call_that_never_returns_leaves_the_status_and_what_was_said(
        tmp_path: Path) -> None:
    """The command ends at once (os._exit) where a camera's OpenCV call is still stuck at
    exit, so that it cannot return while the interpreter finalises: what was printed is
    out all the same, the message once, and the status is the command's."""
    fifo = tmp_path / "camera"
    os.mkfifo(fifo)
    missing = tmp_path / "no such folder"
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", STUCK_CAMERA, str(fifo), "http://127.0.0.1:9/video",
         "run", "--variant", "sabra", "--players", "A,B", "--headless", "--source",
         str(missing)],
        cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=scaled(60))
    assert result.returncode == 2, result.stderr
    assert ABORTED not in result.stderr
    assert result.stderr.count("tabletop: error:") == 1, result.stderr
    assert result.stderr.count("\n") == 1 and str(missing) in result.stderr, result.stderr
    assert result.stdout.startswith("first: cannot open the stream"), result.stdout
    # the wait for a call with no timeout of its own (2 s) and the grace (2 s), then out
    assert time.monotonic() - started < scaled(15)


def test_a_stream_that_goes_silent_mid_run_ends_after_reconnect_for() -> None:
    with MjpegServer(numbered_frame, fps=10) as server:
        def go_silent() -> None:
            server.wait_for_connections(2, scaled(30))
            time.sleep(1.5)  # frames flow first: both runs are live
            server.stall(600)

        stall = threading.Thread(target=go_silent)
        stall.start()
        started = time.monotonic()
        results = _runs([server.url] * 2, "--reconnect-for", "2")
        stall.join()
    for result in results:
        assert ABORTED not in result.stderr
        assert result.returncode == 0, result.stderr
        assert "did not come back within" in result.stderr
        assert "last: no answer within" in result.stderr
    # the frames, the 5 s without one, the 2 s of reconnecting, starting Python twice over
    assert time.monotonic() - started < scaled(30)


BAD_STREAMS = [
    pytest.param(lambda: tcp_server(silent), f"no answer within {OPEN_TIMEOUT_S:g} s",
                 id="silent"),
    pytest.param(lambda: tcp_server(garbage), "not a video stream: the server answers with "
                 "data that is neither HTTP nor a format OpenCV reads", id="garbage"),
    pytest.param(lambda: tcp_server(http_answer("text/html", b"<html>my router</html>")),
                 "not a video stream: the server sends text/html", id="web-page"),
    pytest.param(lambda: tcp_server(http_answer("application/octet-stream", None)),
                 "not a video stream: the server sends application/octet-stream",
                 id="http-garbage"),
    pytest.param(lambda: mjpeg_of([CORRUPT_JPEG]), "it sends parts that OpenCV cannot decode",
                 id="corrupt-jpeg-parts"),
    pytest.param(lambda: mjpeg_of([b"no picture here"]), "it sends parts that OpenCV cannot decode",
                 id="text-parts"),
]


@pytest.mark.parametrize("server, says", BAD_STREAMS)
def test_a_bad_stream_is_named_for_what_it_sends(
        server: Callable[[], contextlib.AbstractContextManager[str]], says: str) -> None:
    with server() as url:
        started = time.monotonic()
        with pytest.raises(SourceError) as raised:
            next(iter(open_source(url, open_timeout_s=OPEN_TIMEOUT_S)))
        elapsed = time.monotonic() - started
    message = str(raised.value)
    assert message.startswith(f"cannot open the stream '{url}': {says}"), message
    assert "\n" not in message
    assert elapsed < OPEN_TIMEOUT_S + scaled(1.5)


def test_tabletop_run_names_garbage_and_corrupt_frames_with_status_2() -> None:
    with tcp_server(garbage) as noise, mjpeg_of([CORRUPT_JPEG]) as corrupt:
        says = {noise: "not a video stream", corrupt: "it sends parts that OpenCV cannot decode"}
        results = _runs(list(says))
    for result, (url, words) in zip(results, says.items(), strict=True):
        assert ABORTED not in result.stderr
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith(f"tabletop: error: cannot open the stream '{url}': {words}")
