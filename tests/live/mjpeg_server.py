"""An MJPEG-over-HTTP server for tests: a phone camera app on 127.0.0.1.

It serves ``multipart/x-mixed-replace`` JPEG frames the way IP-camera apps do
(each part with its own ``Content-Type: image/jpeg`` and ``Content-Length``),
which OpenCV's FFmpeg backend reads with its ``mpjpeg`` demuxer from any URL
path: ``cv2.VideoCapture(server.url)`` needs no ``.mjpg`` suffix and no extra
options.  Each client is served from its own thread (``ThreadingHTTPServer``).

Frames come from a list (images or already-encoded JPEG bytes) or from a
callable ``frame(number) -> image | bytes | None`` (None ends the stream).
``timeline`` decides what ``number`` is:

* ``"connection"`` (default): every connection starts at frame 0 and counts
  up at ``fps``: a replay, so a client that connects late still gets every
  frame from the start;
* ``"server"``: the number is the time since ``start()`` times ``fps``, shared by
  all connections and continuing across cuts: a live camera, where a client
  gets whatever is current.

A list with ``loop=False`` ends each stream after its last frame.  Then
``after_last_frame`` decides: ``"close"`` (default) closes that connection and
a new one replays from frame 0; ``"refuse"`` also stops listening, like a
camera app switched off, so a client that reconnects is refused.
``wait_for_end(timeout_s)`` returns once a stream has sent its last frame.

Faults, to test reconnection:

* ``cut()``: closes the open connections now (clients see the stream end);
* ``refuse(seconds=None)``: cuts and stops listening, so new connections are
  refused, until ``resume()`` or for ``seconds``; the port stays the same;
* ``stall(seconds)``: connections stay open but no frame is sent for ``seconds``.

What OpenCV's FFmpeg needs (measured): without a ``Content-Type`` in each
part the ``mpjpeg`` demuxer finds no frame at all; without ``Content-Length``
it waits for the next boundary, so every frame arrives one frame late.

Counters: ``connections`` (streams started), ``sent`` (frames sent, all clients).
``number_now()`` is the current frame number of the ``"server"`` timeline.

Numbered frames: ``numbered_frame(n)`` draws ``n`` as blocks that survive JPEG
compression and ``frame_number(image)`` reads it back, so a test can tell
which frame it got and how old it is.

Examples::

    with MjpegServer(numbered_frame, fps=30, timeline="server") as server:
        capture = cv2.VideoCapture(server.url)
        ok, image = capture.read()
        age_in_frames = server.number_now() - frame_number(image)
        server.refuse(2.0)  # the phone app stops for 2 s

    # a recorded game, streamed once at its own rate, as a phone would
    images = [image for image in video_frames]  # 1280x720 BGR arrays
    with MjpegServer(images, fps=10, loop=False, after_last_frame="refuse") as server:
        run = subprocess.Popen(["tabletop", "run", "--source", server.url, ...])
        assert server.wait_for_end(timeout_s=120)
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
FrameMaker = Callable[[int], "Image | bytes | None"]

BOUNDARY = "tabletopframe"
NUMBER_BITS = 16
_BLOCK = 40


def numbered_frame(number: int, size: tuple[int, int] = (320, 240)) -> Image:
    """A ``size`` (width, height) BGR image showing ``number`` as black and white blocks.

    Row 0 and 1 hold the 16 bits (most significant first), rows 2 and 3 the same
    bits inverted, so a misread is detected rather than returned.
    """
    width, height = size
    if width < 8 * _BLOCK or height < 4 * _BLOCK:
        raise ValueError(f"a numbered frame needs at least 320x160 pixels, not {width}x{height}")
    if not 0 <= number < 2**NUMBER_BITS:
        raise ValueError(f"frame number must be in 0..{2**NUMBER_BITS - 1}, not {number}")
    image = np.full((height, width, 3), 96, np.uint8)
    for bit, (row, column) in enumerate(_bit_cells()):
        on = (number >> (NUMBER_BITS - 1 - bit)) & 1
        for block_row, value in ((row, on), (row + 2, 1 - on)):
            y, x = block_row * _BLOCK, column * _BLOCK
            image[y : y + _BLOCK, x : x + _BLOCK] = 255 if value else 0
    return image


def frame_number(image: Image) -> int:
    """The number ``numbered_frame`` drew; ValueError when the blocks do not read back."""
    gray = image.mean(axis=2) if image.ndim == 3 else image
    number = 0
    for row, column in _bit_cells():
        bit = _block_is_white(gray, row, column)
        if bit == _block_is_white(gray, row + 2, column):
            raise ValueError(f"not a numbered frame (block {row},{column} disagrees)")
        number = (number << 1) | int(bit)
    return number


def _bit_cells() -> Iterator[tuple[int, int]]:
    for bit in range(NUMBER_BITS):
        yield bit // 8, bit % 8


def _block_is_white(gray: npt.NDArray[Any], row: int, column: int) -> bool:
    margin = _BLOCK // 4
    y, x = row * _BLOCK + margin, column * _BLOCK + margin
    return bool(gray[y : y + _BLOCK - 2 * margin, x : x + _BLOCK - 2 * margin].mean() > 128)


class MjpegServer:
    """A multipart JPEG stream on ``url`` (see the module docstring)."""

    def __init__(self, frames: Sequence[Image | bytes] | FrameMaker, *, fps: float = 30.0,
                 path: str = "/stream.mjpg", host: str = "127.0.0.1", port: int = 0,
                 quality: int = 85, loop: bool = True,
                 timeline: Literal["connection", "server"] = "connection",
                 after_last_frame: Literal["close", "refuse"] = "close") -> None:
        if fps <= 0:
            raise ValueError(f"fps must be positive, not {fps!r}")
        self.fps = fps
        self.path = path if path.startswith("/") else "/" + path
        self.host = host
        self.port = port
        self.quality = quality
        self.loop = loop
        self.timeline = timeline
        self.after_last_frame = after_last_frame
        self._ended = threading.Event()
        self.connections = 0
        self.sent = 0
        self._frames = frames
        self._encoded: dict[int, bytes] = {}
        self._lock = threading.Lock()
        self._open_sockets: set[socket.socket] = set()
        self._cuts = 0
        self._stalled_until = 0.0
        self._started_at = time.monotonic()
        self._httpd: ThreadingHTTPServer | None = None
        self._serving: threading.Thread | None = None
        self._resume_timer: threading.Timer | None = None
        self._stopped = False

    # --- lifecycle -------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.path}"

    def start(self) -> MjpegServer:
        self._started_at = time.monotonic()
        self._listen()
        return self

    def stop(self) -> None:
        """Stops for good: no more connections, the open ones closed."""
        self._stopped = True
        self._cancel_resume()
        self._close_listener()
        self.cut()

    def __enter__(self) -> MjpegServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # --- faults ----------------------------------------------------------------------

    def cut(self) -> None:
        """Closes every open connection now; the server keeps listening."""
        with self._lock:
            self._cuts += 1
            sockets = list(self._open_sockets)
        for connection in sockets:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def refuse(self, seconds: float | None = None) -> None:
        """Cuts and refuses connections until ``resume()``, or for ``seconds``."""
        self._cancel_resume()
        self._close_listener()
        self.cut()
        if seconds is not None:
            timer = threading.Timer(seconds, self.resume)
            timer.daemon = True
            self._resume_timer = timer
            timer.start()

    def resume(self) -> None:
        """Listens again on the same port after ``refuse()``."""
        if not self._stopped and self._httpd is None:
            self._listen()

    def stall(self, seconds: float) -> None:
        """Keeps the connections open but sends no frame for ``seconds``."""
        self._stalled_until = time.monotonic() + seconds

    def number_now(self) -> int:
        """The frame number due now on the ``"server"`` timeline."""
        return int((time.monotonic() - self._started_at) * self.fps)

    def wait_for_end(self, timeout_s: float = 60.0) -> bool:
        """Whether a stream sent its last frame (``loop=False``) within ``timeout_s``."""
        return self._ended.wait(timeout_s)

    def wait_for_connections(self, count: int = 1, timeout_s: float = 10.0) -> bool:
        """True once ``count`` streams have started, False after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while self.connections < count:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    # --- serving ---------------------------------------------------------------------

    def _listen(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server._serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        httpd.daemon_threads = True
        self.port = httpd.server_address[1]
        self._httpd = httpd
        self._serving = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                         name=f"mjpeg-server-{self.port}", daemon=True)
        self._serving.start()

    def _close_listener(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._serving is not None:
            self._serving.join(timeout=5)
            self._serving = None

    def _cancel_resume(self) -> None:
        if self._resume_timer is not None:
            self._resume_timer.cancel()
            self._resume_timer = None

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.split("?", 1)[0] != self.path:
            handler.send_error(404, f"the stream is at {self.path}")
            return
        connection = handler.connection
        with self._lock:
            self._open_sockets.add(connection)
            cuts_at_start = self._cuts
            self.connections += 1
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
            handler.send_header("Cache-Control", "no-cache, no-store")
            handler.send_header("Connection", "close")
            handler.end_headers()
            self._stream(handler, lambda: self._cuts != cuts_at_start)
        except OSError:
            pass  # the client went away, or cut() closed the socket
        finally:
            with self._lock:
                self._open_sockets.discard(connection)
            handler.close_connection = True

    def _stream(self, handler: BaseHTTPRequestHandler, was_cut: Callable[[], bool]) -> None:
        opened_at = time.monotonic()
        last_number = -1
        while not was_cut() and not self._stopped:
            now = time.monotonic()
            if now < self._stalled_until:
                time.sleep(min(0.02, self._stalled_until - now))
                continue
            if self.timeline == "server":
                number = self.number_now()
                if number == last_number:
                    time.sleep(max(0.0, (number + 1) / self.fps - (now - self._started_at)))
                    continue
            else:
                number = last_number + 1
                due = opened_at + number / self.fps
                if due > now:
                    time.sleep(due - now)
            jpeg = self._jpeg(number)
            if jpeg is None:
                self._ended.set()
                if self.after_last_frame == "refuse":
                    # not from this handler: refusing cuts every connection, this one included
                    threading.Thread(target=self.refuse, daemon=True).start()
                return
            part = (f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                    f"Content-Length: {len(jpeg)}\r\n\r\n").encode("ascii")
            handler.wfile.write(part + jpeg + b"\r\n")
            handler.wfile.flush()
            last_number = number
            with self._lock:
                self.sent += 1

    def _jpeg(self, number: int) -> bytes | None:
        frames = self._frames
        if callable(frames):
            return self._encode(frames(number))
        if not frames:
            return None
        if number >= len(frames) and not self.loop:
            return None
        position = number % len(frames)
        if position not in self._encoded:
            encoded = self._encode(frames[position])
            assert encoded is not None
            self._encoded[position] = encoded
        return self._encoded[position]

    def _encode(self, frame: Image | bytes | None) -> bytes | None:
        if frame is None or isinstance(frame, bytes):
            return frame
        ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
        if not ok:
            raise ValueError("OpenCV could not encode the frame as JPEG")
        return data.tobytes()


__all__ = ["BOUNDARY", "MjpegServer", "frame_number", "numbered_frame"]
