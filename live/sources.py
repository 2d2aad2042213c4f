"""Frame sources: a camera, a stream, a GStreamer pipeline, a video file or a folder, one interface.

Every source yields ``Frame(t, image, index)``.  Files and folders give every
frame: ``t`` is video time for files (the frame's position, not the wall
clock, so a replay gives the same times however fast it runs), the frame
rate's times for a folder (or times written in the file names).

Live sources (``LiveSource``: a camera index, a ``/dev/video*`` device, a
stream URL, a GStreamer pipeline) behave like a camera app:

* opening is bounded: a source that does not open, or opens but sends no
  frame, raises ``SourceError`` within ``open_timeout_s`` (retries included)
  with one line naming the source and what to check;
* a grabber thread owns the capture and reads all the time; the iterator hands
  out the newest frame only, never one twice, and counts the ones it skipped
  (``dropped``), so a slow consumer always gets a fresh frame.  ``t`` is seconds
  since opening (monotonic clock when the frame was grabbed) and ``index`` the
  grab counter, so gaps in it are the dropped frames;
* a source that drops out after working is reopened with a growing pause
  (``Backoff``) for at most ``reconnect_for_s``; after that the iterator ends;
* ``status`` (a ``SourceStatus``) says whether it is opening, live,
  reconnecting, lost or ended, and ``on_status`` hears of every change.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Any, Literal, NoReturn, Protocol, cast
from urllib.parse import urlsplit

import cv2
import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
STREAM_PREFIXES = ("rtsp://", "rtsps://", "http://", "https://", "udp://", "tcp://", "rtmp://")
DEVICE_PREFIXES = ("/dev/video", "/dev/v4l/")
PIPELINE_SEPARATOR = " ! "
_TIME_IN_NAME = re.compile(r"(?:^|[^0-9.])t?(\d+(?:\.\d+)?)(?:s|ms)?$")
# A read may take up to the read timeout; one stuck this much longer is a hung backend.
_HUNG_GRACE_S = 2.0
# The least time a reconnection try gets before the reconnect deadline.
_LAST_TRY_S = 0.25
# A stream's open ends this much before its deadline: the rest is for asking the server
# what it sends (``_why_stream_failed``), so the one-line error still comes in time.
_STREAM_PROBE_S = 1.0
# FFmpeg's own open timeout ends this share of the attempt before the attempt's deadline,
# so the open returns by itself and no thread is left inside FFmpeg.
_BACKEND_MARGIN = 0.1
# How long the process waits at exit for a backend call with no timeout of its own.
_UNBOUNDED_CALL_WAIT_S = 2.0
_DEFAULT_PORTS = {"http": 80, "https": 443, "rtsp": 554, "rtsps": 322, "rtmp": 1935}

# FFmpeg prints its own errors ("Connection refused"; "No JPEG data found in image", even
# at its fatal level) straight to stderr, which would break the one-line SourceError the
# command line shows.  OpenCV reads this when it first starts FFmpeg, so it only takes
# effect before any capture opened; a value set by the user (for debugging) wins.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")  # AV_LOG_QUIET


class SourceError(ValueError):
    """A source that cannot be opened at all; the one-line message names it."""


@dataclass(frozen=True)
class Frame:
    t: float
    image: Image
    index: int


class FrameSource(Protocol):
    def __iter__(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Backoff:
    """Pauses between attempts to open: ``first_s``, times ``factor`` each, at most ``max_s``.

    ``delays()`` is lazy; with ``attempts`` 0 it never runs out, so whoever
    iterates it bounds it by time (``LiveSource`` stops at its deadlines).
    """

    first_s: float = 0.5
    factor: float = 2.0
    max_s: float = 5.0
    attempts: int = 0

    def delays(self) -> Iterator[float]:
        delay, tried = self.first_s, 0
        while self.attempts == 0 or tried < self.attempts:
            yield delay
            tried += 1
            delay = min(self.max_s, delay * self.factor)


SourceState = Literal["opening", "live", "reconnecting", "lost", "ended"]
SourceKind = Literal["camera", "device", "stream", "pipeline"]


@dataclass(frozen=True)
class SourceStatus:
    """Where a live source stands.

    ``state``: ``opening`` (not yet sending), ``live`` (frames arrive),
    ``reconnecting`` (dropped out, being reopened), ``lost`` (did not open, or
    did not come back in time: no more frames) or ``ended`` (closed).
    ``message``: one line for people.  ``since``: wall-clock time
    (``time.time()``) the state began.  ``reconnects``: times it came back.
    ``dropped``: frames grabbed but skipped because a newer one arrived first.
    """

    state: SourceState
    message: str
    since: float
    reconnects: int = 0
    dropped: int = 0


Capture = Any  # cv2.VideoCapture or a test double with isOpened/read/release


class VideoFileSource:
    """Frames of a video file with their video times (CAP_PROP_POS_MSEC, or index / fps)."""

    def __init__(self, path: str | Path, *, max_bad_frames: int = 25) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise SourceError(f"no video file {str(self.path)!r}")
        self.max_bad_frames = max_bad_frames
        self._capture: Capture | None = None

    def __iter__(self) -> Iterator[Frame]:
        capture = cv2.VideoCapture(str(self.path))
        self._capture = capture
        if not capture.isOpened():
            raise SourceError(f"OpenCV cannot open the video {str(self.path)!r}")
        fps = capture.get(cv2.CAP_PROP_FPS) or 0.0
        index = bad = 0
        try:
            while True:
                ok, image = capture.read()
                if not ok:
                    # A broken frame in the middle reads as not ok too: try a few more
                    # before deciding the file has ended.
                    bad += 1
                    total = capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0
                    if bad > self.max_bad_frames or index + bad >= total:
                        return
                    log.warning("%s: frame %d unreadable, skipped", self.path, index)
                    index += 1
                    continue
                bad = 0
                t = index / fps if fps > 0 else capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
                # OpenCV decodes 8-bit BGR; its stubs type any Mat
                yield Frame(round(t, 6), cast(Image, image), index)
                index += 1
        finally:
            self.close()

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class FolderSource:
    """Images of a folder in name order; times from a fixed rate or from the file names.

    ``times_from_names``: a name ending in a number (``frame_12.5.jpg``,
    ``0001250ms.png``) gives its time in seconds (``ms`` suffix: milliseconds).
    An unreadable or corrupt file is skipped with a warning.
    """

    def __init__(self, folder: str | Path, *, fps: float = 10.0,
                 times_from_names: bool = False) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceError(f"no folder {str(self.folder)!r}")
        if fps <= 0:
            raise SourceError(f"fps must be positive, not {fps!r}")
        self.fps = fps
        self.times_from_names = times_from_names
        self.skipped: list[Path] = []

    def files(self) -> list[Path]:
        return sorted(p for p in self.folder.iterdir()
                      if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)

    @staticmethod
    def time_from_name(path: Path) -> float:
        match = _TIME_IN_NAME.search(path.stem)
        if not match:
            raise SourceError(f"no time in the file name {path.name!r}")
        value = float(match.group(1))
        return value / 1000.0 if path.stem.endswith("ms") else value

    def __iter__(self) -> Iterator[Frame]:
        for index, path in enumerate(self.files()):
            t = self.time_from_name(path) if self.times_from_names else index / self.fps
            data = np.fromfile(str(path), dtype=np.uint8)
            image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
            if image is None:
                log.warning("%s: not a readable image, skipped", path)
                self.skipped.append(path)
                continue
            yield Frame(round(t, 6), cast(Image, image), index)

    def close(self) -> None:
        pass


def live_kind(target: int | str) -> SourceKind | None:
    """The kind of live source ``target`` names, or None when it names none.

    A camera index (``0``, ``"0"``), a V4L2 device (``/dev/video*``,
    ``/dev/v4l/...``), a stream URL (``STREAM_PREFIXES``) or a GStreamer
    pipeline (text with `` ! `` between its elements).
    """
    if isinstance(target, int):
        return "camera"
    text = target.strip()
    if text.isdigit():
        return "camera"
    if text.lower().startswith(STREAM_PREFIXES):
        return "stream"
    if PIPELINE_SEPARATOR in text:
        return "pipeline"
    if text.startswith(DEVICE_PREFIXES):
        return "device"
    return None


def gstreamer_available() -> bool:
    """Whether this OpenCV opens GStreamer pipelines (built with GStreamer, or its plugin found)."""
    with contextlib.suppress(AttributeError, cv2.error):
        if cv2.videoio_registry.hasBackend(cv2.CAP_GSTREAMER):
            return True
    return re.search(r"GStreamer:\s*YES", cv2.getBuildInformation()) is not None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _http_answer(connection: socket.socket, host: str, path: str, query: str,
                 within_s: float) -> bytes:
    """The first bytes (at most 64 KiB) a server sends within ``within_s`` for a GET of ``path``."""
    target = f"{path}?{query}" if query else path
    deadline = time.monotonic() + within_s
    answer = b""
    try:
        connection.sendall(f"GET {target} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode("latin-1"))
        while len(answer) < 65536:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            connection.settimeout(left)
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
            head, separator, body = answer.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/") or (separator and body):
                break  # enough to tell what it is
    except (OSError, UnicodeEncodeError):
        pass  # a timeout or a reset: what arrived so far is the answer
    return answer


def _what_the_answer_is(answer: bytes) -> str | None:
    """Why an HTTP server's ``answer`` is no video OpenCV reads; None when it sent nothing
    to judge (no byte, or only headers): then the stream is silent."""
    if not answer:
        return None
    if not answer.startswith(b"HTTP/"):
        return ("not a video stream: the server answers with data that is neither HTTP "
                "nor a format OpenCV reads")
    head, _separator, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    code = status[1] if len(status) > 1 else "?"
    if code != "200":
        reason = f" {status[2]}" if len(status) > 2 else ""
        return f"the server answers but sends no video OpenCV can read (HTTP {code}{reason})"
    content_type = next((line.split(":", 1)[1].strip() for line in lines[1:]
                         if line.lower().startswith("content-type:")), "")
    if not body:
        return None
    if content_type.lower().startswith("multipart/"):
        return ("it sends parts that OpenCV cannot decode as frames (corrupt JPEG, or "
                "not JPEG at all)")
    shown = _one_line(content_type)[:60] or "data with no Content-Type"
    return f"not a video stream: the server sends {shown}, which OpenCV cannot read as video"


def _video_devices() -> list[str]:
    if not sys.platform.startswith("linux"):
        return []
    return sorted((str(p) for p in Path("/dev").glob("video*")),
                  key=lambda name: (len(name), name))


def _device_index(path: str) -> int | None:
    """N for a path that is (or links to) ``/dev/videoN``."""
    match = re.fullmatch(r"/dev/video(\d+)", os.path.realpath(path))
    return int(match.group(1)) if match else None


class _QuietOpenCv:
    """OpenCV's log silenced while any open runs: its warnings about a camera or URL
    that does not open would spoil the one-line error; opens in several threads
    share one save and restore."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = 0

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._saved = cv2.utils.logging.getLogLevel()
                cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    cv2.utils.logging.setLogLevel(self._saved)


_quiet_opencv = _QuietOpenCv()


class _BackendUser:
    """One daemon thread that may call OpenCV, from before its first call until it has
    released its capture (:meth:`_BackendCalls.user`)."""

    def __init__(self, calls: _BackendCalls) -> None:
        self._calls = calls
        self.due: float | None = None
        """When the call it is in returns by itself (None: in none, or in one with no
        timeout of its own)."""

    @contextlib.contextmanager
    def call(self, within_s: float | None) -> Iterator[None]:
        """Around one backend call that returns by itself within ``within_s`` (None: unknown)."""
        with self._calls._cond:
            self.due = None if within_s is None else time.monotonic() + within_s
        try:
            yield
        finally:
            with self._calls._cond:
                self.due = None

    def done(self) -> None:
        """The thread calls OpenCV no more: its capture is released (or it had none)."""
        with self._calls._cond:
            self._calls._users.discard(self)
            self._calls._cond.notify_all()


class _BackendCalls:
    """The sources' daemon threads that may still call OpenCV (opens, reads, releases).

    An OpenCV call runs without the GIL.  When it returns while the interpreter is
    finalising, CPython ends its thread by unwinding through OpenCV's C++ frames,
    which aborts the process ("terminate called without an active exception",
    status 134) after the command has already said why it stops.  Watching the calls
    one by one is not enough: between a read that returned and the ``release()`` after
    it, no call runs, yet the thread is about to make one, and a release closes
    FFmpeg's connection and threads, long enough to be running when finalising
    begins.  So a thread counts (a *user*) from before it starts until it has released
    its capture, and at exit the process waits for the users: each until the call it is
    in is due back (a stream's FFmpeg timeouts bound its open and reads; a thread
    between calls, or in a call without a timeout, gets ``_UNBOUNDED_CALL_WAIT_S``),
    plus a grace.  A thread still in OpenCV past that may return while the interpreter
    finalises: the command line then ends the process at once with its status
    (``os._exit`` in tabletop/cli.py, after :func:`backend_calls_returned`).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._users: set[_BackendUser] = set()

    def user(self) -> _BackendUser:
        """A new user, counted until its ``done()``: made by the thread that starts the
        one that will call OpenCV, so that none is ever uncounted."""
        user = _BackendUser(self)
        with self._cond:
            self._users.add(user)
        return user

    def wait(self) -> bool:
        """Waits for the users until each is due back; True when none is left."""
        now = time.monotonic()
        with self._cond:
            if not self._users:
                return True
            dues = [now + _UNBOUNDED_CALL_WAIT_S if user.due is None else user.due
                    for user in self._users]
            give_up_at = max(dues) + _HUNG_GRACE_S
            while self._users:
                left = give_up_at - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return not self._users


_backend_calls = _BackendCalls()
# atexit runs before finalisation begins, while a returning thread is still harmless.
atexit.register(_backend_calls.wait)


def backend_calls_returned() -> bool:
    """Waits for the OpenCV calls still running in the sources' threads until each is due
    back (plus a grace); True when none is running now, False when one is stuck."""
    return _backend_calls.wait()


OpenFailure = Literal["not_opened", "no_frame", "timeout", "error"]


class _OpenAttempt:
    """One open of a capture and its first frame, in a daemon thread.

    The caller waits up to its deadline (``wait``); a backend that hangs past it
    is abandoned, and the thread releases whatever it opened once the backend
    returns, so nothing stays open and nothing waits forever (its ``thread`` ends
    then).  ``open_within_s`` and ``read_within_s``: how soon the
    backend's open and reads return by themselves (None: it has no timeout), for
    the wait at exit.
    """

    def __init__(self, open_capture: Callable[[], Capture], first_frame_by: float,
                 name: str, open_within_s: float | None = None,
                 read_within_s: float | None = None) -> None:
        self.capture: Capture | None = None
        self.image: Image | None = None
        self.grabbed_at = 0.0
        self.failure: OpenFailure = "timeout"
        self.error = ""
        self.opened = False
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._abandoned = False
        # when whoever waits for this attempt wants the reason it failed, if it does
        self.explain_by = first_frame_by
        self._open_within_s = open_within_s
        self._read_within_s = read_within_s
        self._backend = _backend_calls.user()
        self.thread = threading.Thread(target=self._run, args=(open_capture, first_frame_by),
                                       name=name, daemon=True)
        """Ends once whatever it opened is released, or handed over."""
        try:
            self.thread.start()
        except BaseException:
            self._backend.done()
            raise

    def wait(self, deadline: float, stop: threading.Event) -> bool:
        """True when the capture opened and gave a frame before ``deadline`` (and no stop)."""
        while not self._done.wait(max(0.0, min(0.05, deadline - time.monotonic()))):
            if stop.is_set() or time.monotonic() >= deadline:
                break
        with self._lock:
            if not self._done.is_set() or stop.is_set():
                self._abandoned = True
                if not self._done.is_set() and self.opened:
                    self.failure = "no_frame"
                if self.capture is not None:
                    self.capture.release()
                    self.capture = None
                return False
            return self.capture is not None

    def _run(self, open_capture: Callable[[], Capture], first_frame_by: float) -> None:
        try:
            self._open_and_read(open_capture, first_frame_by)
        finally:
            self._backend.done()

    def _open_and_read(self, open_capture: Callable[[], Capture], first_frame_by: float) -> None:
        capture: Capture | None = None
        image: Image | None = None
        grabbed_at = 0.0
        failure: OpenFailure = "not_opened"
        try:
            started = time.monotonic()
            with _quiet_opencv(), self._backend.call(self._open_within_s):
                capture = open_capture()
            opened = capture is not None and capture.isOpened()
            if (not opened and self._open_within_s is not None
                    and time.monotonic() - started >= self._open_within_s * 0.9):
                failure = "timeout"  # the backend gave up at its own open timeout
            if opened:
                failure = "no_frame"
                self.opened = True
                # A camera's first reads may fail while it starts up; the stream's
                # first frame may still be on its way.
                while time.monotonic() < first_frame_by and not self._abandoned:
                    with self._backend.call(self._read_within_s):
                        ok, image = capture.read()
                    if ok and image is not None and image.size:
                        grabbed_at = time.monotonic()
                        break
                    image = None
                    time.sleep(0.01)
        except Exception as error:  # a backend's cv2.error: a failed open, not a crash
            failure, self.error = "error", _one_line(str(error))[:200]
        with self._lock:
            if image is not None and not self._abandoned:
                # handed over: whoever waits for this attempt releases it
                self.capture, self.image, self.grabbed_at = capture, image, grabbed_at
                capture = None
            else:
                self.failure = failure
            self._done.set()
        if capture is not None:
            # still counted as a user (``_run``): the release is an OpenCV call too, and
            # closing FFmpeg's connection takes a while
            capture.release()


class LiveSource:
    """A camera, a V4L2 device, a stream URL or a GStreamer pipeline, read like a camera app.

    ``open()`` (or the first ``next()`` of the iterator) opens it, retrying with
    ``backoff`` pauses, and raises ``SourceError`` within ``open_timeout_s`` when it
    does not open or sends no frame.  From then on a grabber thread owns the
    capture and reads it all the time; the iterator (one consumer at a time)
    yields the newest frame, waits for a new one rather than repeating one, and
    ends when the source is lost or closed.  ``dropped`` counts frames skipped
    for a newer one.

    A drop-out (``max_failed_reads`` failed reads in a row, or no frame for
    ``read_timeout_s``, or a read stuck for longer) is reopened with ``backoff``
    pauses for at most ``reconnect_for_s``; ``reconnects`` counts the returns.
    ``status`` is a ``SourceStatus``; ``on_status`` is called with each new one,
    from the grabber thread (from the caller's thread for ``opening``, a failed
    start and ``ended``).

    ``close()`` stops the grabber and the opens still running, and waits (for at
    most ``close_timeout_s`` in all) until each has released its capture: a
    program that closes its source before it ends leaves no thread inside OpenCV.
    ``open_capture(target)`` replaces OpenCV (tests pass fakes; no checks of device
    files or GStreamer support are made then), and ``sleep`` the pause between
    attempts.
    """

    def __init__(self, target: int | str, *, backoff: Backoff | None = None,
                 open_timeout_s: float = 10.0, read_timeout_s: float = 5.0,
                 reconnect_for_s: float = 120.0, max_failed_reads: int = 5,
                 close_timeout_s: float = 2.0,
                 on_status: Callable[[SourceStatus], object] | None = None,
                 open_capture: Callable[[int | str], Capture] | None = None,
                 sleep: Callable[[float], object] | None = None) -> None:
        kind = live_kind(target)
        if kind is None:
            raise SourceError(f"{target!r} is not a camera index, a /dev/video device, "
                              "a stream URL or a GStreamer pipeline")
        for name, value in (("open_timeout_s", open_timeout_s),
                            ("read_timeout_s", read_timeout_s),
                            ("reconnect_for_s", reconnect_for_s)):
            if not value > 0:
                raise SourceError(f"{name} must be positive, not {value!r}")
        self.kind: SourceKind = kind
        self.target: int | str = int(target) if kind == "camera" else str(target).strip()
        self.label = self._label()
        self.backoff = backoff or Backoff()
        self.open_timeout_s = open_timeout_s
        self.read_timeout_s = read_timeout_s
        self.reconnect_for_s = reconnect_for_s
        self.max_failed_reads = max(1, max_failed_reads)
        self.close_timeout_s = close_timeout_s
        self.on_status = on_status
        self._open_injected = open_capture
        self._sleep = sleep
        self.reconnects = 0
        self.dropped = 0
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._opened = False
        self._open_error: SourceError | None = None
        self._started_at = time.monotonic()
        self._grabbed = 0
        self._newest: Frame | None = None
        self._generation = 0
        self._reading_since: tuple[int, float] | None = None
        self._threads: list[threading.Thread] = []
        """The opens and grabbers started, the abandoned ones too: close() waits for them."""
        self._status = SourceStatus("opening", f"{self.label} is not open yet", time.time())

    # --- public ----------------------------------------------------------------------

    @property
    def status(self) -> SourceStatus:
        with self._cond:
            return replace(self._status, reconnects=self.reconnects, dropped=self.dropped)

    def open(self) -> None:
        """Opens the source and starts the grabber; a second call does nothing.

        Raises ``SourceError`` within ``open_timeout_s`` when the source does not
        open or sends no frame.
        """
        with self._cond:
            if self._open_error is not None:
                raise SourceError(str(self._open_error))
            if self._opened:
                return
            if self._stop.is_set():
                raise SourceError(f"{self.label} is closed")
            self._opened = True
        self._started_at = time.monotonic()
        deadline = self._started_at + self.open_timeout_s
        self._set_status("opening", f"opening {self.label}")
        problem = self._problem_before_opening()
        if problem is not None:
            self._fail(problem)
        attempt: _OpenAttempt | None = None
        for pause in chain([0.0], self.backoff.delays()):
            if pause:
                if pause >= deadline - time.monotonic():
                    break
                log.info("%s did not open; trying again in %.1f s", self.label, pause)
                self._pause(pause)
            if self._stop.is_set():
                raise SourceError(f"{self.label} was closed while opening")
            attempt = self._attempt(deadline)
            if attempt.capture is not None:
                self._set_status("live", self._live_message(attempt.image))
                self._publish(attempt.image, attempt.grabbed_at, 0)
                self._start_grabber(0, attempt.capture, "")
                return
            if self._stop.is_set():
                raise SourceError(f"{self.label} was closed while opening")
            if attempt.failure == "timeout":
                break
        self._fail(f"cannot open {self.label}: {self._why_not_opened(attempt)}")

    def __iter__(self) -> Iterator[Frame]:
        try:
            self.open()
        except SourceError:
            if self._stop.is_set():
                return  # closed before or while opening: no frames, and no error
            raise
        while True:
            with self._cond:
                while self._newest is None:
                    if self._stop.is_set() or self._status.state in ("lost", "ended"):
                        return
                    self._cond.wait(0.25)
                    self._restart_if_hung()
                frame, self._newest = self._newest, None
            yield frame

    def close(self) -> None:
        """Stops the grabber and the opens, and waits until each has released its capture;
        iteration ends.  Bounded (``close_timeout_s`` in all), repeatable."""
        self._stop.set()
        with self._cond:
            self._newest = None
            self._cond.notify_all()
        self._set_status("ended", f"{self.label} closed")
        # The grabber, the opens (abandoned ones too) and any grabber given up as hung:
        # each stops after the OpenCV call it is in and releases what it opened.
        until = time.monotonic() + self.close_timeout_s
        with self._cond:
            threads = [thread for thread in self._threads
                       if thread is not threading.current_thread()]
        for thread in threads:
            thread.join(max(0.0, until - time.monotonic()))
        with self._cond:
            self._threads = [thread for thread in self._threads if thread.is_alive()]

    def __enter__(self) -> LiveSource:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- opening ---------------------------------------------------------------------

    def _label(self) -> str:
        if self.kind == "camera":
            return f"camera {self.target}"
        if self.kind == "device":
            return f"the camera device '{self.target}'"
        if self.kind == "stream":
            return f"the stream '{_one_line(_without_password(str(self.target)))}'"
        return f"the GStreamer pipeline '{_one_line(str(self.target))}'"

    def _open_capture(self, timeout_s: float) -> Capture:
        if self._open_injected is not None:
            return self._open_injected(self.target)
        target = self.target
        if self.kind == "camera":
            return cv2.VideoCapture(int(target))
        if self.kind == "device":
            index = _device_index(str(target))
            # OpenCV's V4L2 backend opens cameras by index only, not by path.
            if index is not None and cv2.videoio_registry.hasBackend(cv2.CAP_V4L2):
                return cv2.VideoCapture(index, cv2.CAP_V4L2)
            return cv2.VideoCapture(str(target))
        if self.kind == "stream":
            return cv2.VideoCapture(str(target), cv2.CAP_FFMPEG, [
                cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, max(1, int(timeout_s * 1000)),
                cv2.CAP_PROP_READ_TIMEOUT_MSEC, max(1, int(self.read_timeout_s * 1000)),
            ])
        return cv2.VideoCapture(str(target), cv2.CAP_GSTREAMER)

    def _bounded_by_ffmpeg(self) -> bool:
        """Whether OpenCV's FFmpeg opens this source, with its open and read timeouts."""
        return self.kind == "stream" and self._open_injected is None

    def _attempt(self, deadline: float) -> _OpenAttempt:
        explain_by = deadline
        if self._bounded_by_ffmpeg():
            deadline -= min(_STREAM_PROBE_S, 0.2 * (deadline - time.monotonic()))
        timeout_s = max(0.001, deadline - time.monotonic())
        open_within_s = read_within_s = None
        if self._bounded_by_ffmpeg():
            # FFmpeg gives up before the attempt does, so its thread has returned by then
            open_within_s = timeout_s * (1 - _BACKEND_MARGIN)
            read_within_s = self.read_timeout_s
        attempt = _OpenAttempt(lambda: self._open_capture(open_within_s or timeout_s), deadline,
                               name=f"open {self.label}"[:60], open_within_s=open_within_s,
                               read_within_s=read_within_s)
        self._keep(attempt.thread)
        attempt.explain_by = explain_by
        attempt.wait(deadline, self._stop)
        return attempt

    def _keep(self, thread: threading.Thread) -> None:
        """Remember ``thread`` (an open or a grabber) for close() to wait for."""
        with self._cond:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)

    def _pause(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stop.wait(seconds)

    def _check(self) -> str:
        """What to check for this kind of source: the question ending a SourceError."""
        if self.kind == "camera":
            present = [i for i in (_device_index(d) for d in _video_devices()) if i is not None]
            if sys.platform.startswith("linux") and not present:
                return "is it plugged in? this machine shows no /dev/video* device"
            other = [i for i in present if i != self.target]
            suggestion = other[0] if other else (1 if self.target == 0 else 0)
            return ("is it plugged in, used by another program, or at another index "
                    f"such as --source {suggestion}?")
        if self.kind == "device":
            return "is it plugged in and not used by another program?"
        if self.kind == "stream":
            if str(self.target).lower().startswith("udp://"):
                return "is the sender running and sending to this machine and port?"
            return "is the phone app running, on the same network, and the URL as the app shows it?"
        return "does gst-launch-1.0 run it, and does it end in appsink?"

    def _problem_before_opening(self) -> str | None:
        """A reason the source cannot open that needs no attempt, or None."""
        if self._open_injected is not None:
            return None
        if self.kind == "pipeline" and not gstreamer_available():
            return (f"cannot open {self.label}: this OpenCV has no GStreamer support "
                    "(the opencv-python wheels are built without it; use an OpenCV "
                    "built with GStreamer, or give the camera or stream URL instead)")
        if self.kind == "camera" and sys.platform.startswith("linux"):
            # On Linux OpenCV's camera N is /dev/videoN: without it no backend answers.
            if not Path(f"/dev/video{self.target}").exists():
                return (f"cannot open {self.label}: no camera answers at that index "
                        f"({self._check()})")
        if self.kind == "device":
            path = str(self.target)
            if not os.path.exists(path):
                present = _video_devices()
                where = (f"cameras here: {', '.join(present)}" if present
                         else "this machine shows no /dev/video* device")
                return (f"cannot open {self.label}: there is no such device "
                        f"(is the camera plugged in? {where})")
            if not os.access(path, os.R_OK | os.W_OK):
                return (f"cannot open {self.label}: this user may not open it "
                        "(add the user to the device's group, usually 'video')")
        return None

    def _why_not_opened(self, attempt: _OpenAttempt | None) -> str:
        """Why an open failed as ``attempt`` did, and what to check: the SourceError's tail."""
        check = self._check()
        failure = attempt.failure if attempt is not None else "not_opened"
        within = f"{self.open_timeout_s:g} s"
        explain_by = attempt.explain_by if attempt is not None else time.monotonic()
        if self._bounded_by_ffmpeg() and failure != "error":
            return f"{self._why_stream_failed(failure, explain_by)} ({check})"
        if failure == "timeout":
            return f"no answer within {within} ({check})"
        if failure == "no_frame":
            return f"it opened but sent no frame within {within} ({check})"
        if failure == "error" and attempt is not None:
            return f"OpenCV failed ({attempt.error}) ({check})"
        if self.kind == "camera":
            return f"no camera answers at that index ({check})"
        if self.kind == "stream":
            return f"{self._why_stream_failed(failure, explain_by)} ({check})"
        if self.kind == "device":
            return ("it did not open as a camera (is it used by another program, and is it "
                    "the capture node? a camera's second /dev/video node often carries "
                    "only metadata)")
        return f"the pipeline did not start ({check})"

    def _why_stream_failed(self, failure: OpenFailure, explain_by: float) -> str:
        """What the stream's server says when asked directly: nothing listening, silence,
        an HTTP error, an answer that is no video, or parts OpenCV cannot decode.  It
        listens for an answer until ``explain_by`` (at least a moment)."""
        within = f"{self.open_timeout_s:g} s"
        silent = {"timeout": f"no answer within {within}",
                  "no_frame": f"it opened but sent no frame within {within}"}.get(
                      failure, "the server answers but sends no video OpenCV can read")
        parts = urlsplit(str(self.target))
        scheme = parts.scheme.lower()
        try:
            port = parts.port or _DEFAULT_PORTS.get(scheme)
        except ValueError:
            return "the URL's port is not a number"
        if scheme == "udp" or not parts.hostname or port is None:
            return f"no video arrived within {within}"
        try:
            connection = socket.create_connection((parts.hostname, port), timeout=1.0)
        except socket.gaierror:
            return f"the host '{parts.hostname}' is not known"
        except ConnectionRefusedError:
            return f"nothing is listening at {parts.hostname}:{port}"
        except OSError:
            return f"{parts.hostname}:{port} does not answer"
        with connection:
            if scheme != "http":
                return silent  # rtsp, rtmp, https: nothing to read without their handshakes
            listen_s = min(_STREAM_PROBE_S, max(0.2, explain_by - time.monotonic()))
            answer = _http_answer(connection, parts.hostname, parts.path or "/",
                                  parts.query, listen_s)
        return _what_the_answer_is(answer) or silent

    def _fail(self, message: str) -> NoReturn:
        self._open_error = SourceError(message)
        self._set_status("lost", message)
        raise self._open_error

    def _live_message(self, image: Image | None) -> str:
        size = f" ({image.shape[1]}x{image.shape[0]})" if image is not None else ""
        return f"{self.label} is live{size}"

    # --- grabbing --------------------------------------------------------------------

    def _current(self, generation: int) -> bool:
        return not self._stop.is_set() and generation == self._generation

    def _start_grabber(self, generation: int, capture: Capture | None, reason: str) -> None:
        backend = _backend_calls.user()
        grabber = threading.Thread(target=self._grab,
                                   args=(generation, capture, reason, backend),
                                   name=f"grab {self.label}"[:60], daemon=True)
        self._keep(grabber)
        try:
            grabber.start()
        except BaseException:
            backend.done()
            raise

    def _grab(self, generation: int, capture: Capture | None, reason: str,
              backend: _BackendUser) -> None:
        """The grabber thread: reads into the newest-frame slot, reopens after drop-outs.
        It counts as a user of OpenCV (``backend``) until its capture is released."""
        try:
            while self._current(generation):
                if capture is None:
                    capture = self._reconnect(generation, reason)
                    if capture is None:
                        return
                drop = self._read_until_drop(generation, capture, backend)
                capture.release()
                capture = None
                if drop is None:
                    return
                reason = drop
        except Exception:
            log.exception("%s: the grabber failed", self.label)
            self._set_status("lost", f"{self.label} failed; see the log", generation)
        finally:
            try:
                if capture is not None:
                    capture.release()
            finally:
                backend.done()
                with self._cond:
                    self._cond.notify_all()

    def _read_until_drop(self, generation: int, capture: Capture,
                         backend: _BackendUser) -> str | None:
        """Reads until the source drops out (the reason) or this grabber should stop (None)."""
        failed = 0
        last_frame_at = time.monotonic()
        while self._current(generation):
            self._reading_since = (generation, time.monotonic())
            try:
                with backend.call(self.read_timeout_s if self._bounded_by_ffmpeg() else None):
                    ok, image = capture.read()
            except cv2.error:
                ok, image = False, None
            with self._cond:
                if self._reading_since is not None and self._reading_since[0] == generation:
                    self._reading_since = None
            now = time.monotonic()
            if not self._current(generation):
                return None
            if ok and image is not None and image.size:
                self._publish(image, now, generation)
                failed = 0
                last_frame_at = now
                continue
            failed += 1
            if failed >= self.max_failed_reads:
                return f"{failed} reads in a row failed"
            if now - last_frame_at >= self.read_timeout_s:
                return f"no frame for {self.read_timeout_s:g} s"
            self._stop.wait(0.01)  # a capture that fails at once must not spin
        return None

    def _reconnect(self, generation: int, reason: str) -> Capture | None:
        """Reopens within ``reconnect_for_s``: the capture, or None (lost, or stopped)."""
        started = time.monotonic()
        give_up_at = started + self.reconnect_for_s
        log.warning("%s dropped out (%s); reconnecting", self.label, reason)
        self._set_status("reconnecting", f"{self.label} dropped out ({reason}); reconnecting "
                         f"for up to {self.reconnect_for_s:g} s", generation)
        last_failure = reason
        for pause in self.backoff.delays():
            # The last pause is shortened so that the last try comes at the deadline.
            remaining = give_up_at - time.monotonic() - _LAST_TRY_S
            if remaining <= 0:
                break
            self._pause(min(pause, remaining))
            if not self._current(generation):
                return None
            deadline = min(give_up_at, time.monotonic() + self.open_timeout_s)
            attempt = self._attempt(deadline)
            if attempt.capture is not None:
                if not self._current(generation):
                    attempt.capture.release()
                    return None
                with self._cond:
                    self.reconnects += 1
                log.warning("%s is back after %.1f s", self.label, time.monotonic() - started)
                self._set_status("live", self._live_message(attempt.image), generation)
                self._publish(attempt.image, attempt.grabbed_at, generation)
                return attempt.capture
            last_failure = self._why_not_opened(attempt)
        if self._current(generation):
            message = (f"{self.label} did not come back within "
                       f"{time.monotonic() - started:.0f} s; last: {last_failure}")
            log.error("%s", message)
            self._set_status("lost", message, generation)
        return None

    def _restart_if_hung(self) -> None:
        """Abandons a grabber stuck in a read past the read timeout and starts a new one.

        Called with the lock held.  The stuck thread releases its capture when
        (if ever) the backend returns, and publishes nothing more.
        """
        reading = self._reading_since
        if (reading is None or reading[0] != self._generation or self._stop.is_set()
                or time.monotonic() - reading[1] < self.read_timeout_s + _HUNG_GRACE_S):
            return
        self._generation += 1
        self._reading_since = None
        self._start_grabber(self._generation, None, "the capture stopped answering")

    def _publish(self, image: Image | None, grabbed_at: float, generation: int) -> None:
        if image is None:
            return
        with self._cond:
            if generation != self._generation or self._stop.is_set():
                return
            if self._newest is not None:
                self.dropped += 1
            self._newest = Frame(round(grabbed_at - self._started_at, 6), image, self._grabbed)
            self._grabbed += 1
            self._cond.notify_all()

    def _set_status(self, state: SourceState, message: str,
                    generation: int | None = None) -> None:
        with self._cond:
            if generation is not None and generation != self._generation:
                return
            if self._status.state in ("lost", "ended"):
                return  # final: a closed or lost source stays so
            status = SourceStatus(state, message, time.time(), self.reconnects, self.dropped)
            self._status = status
            self._cond.notify_all()
        if self.on_status is not None:
            try:
                self.on_status(status)
            except Exception:
                log.exception("%s: on_status failed", self.label)


def open_source(spec: str | int | Path, *, fps: float = 10.0, backoff: Backoff | None = None,
                open_timeout_s: float = 10.0, read_timeout_s: float = 5.0,
                reconnect_for_s: float = 120.0,
                on_status: Callable[[SourceStatus], object] | None = None,
                ) -> VideoFileSource | FolderSource | LiveSource:
    """The source ``spec`` names.

    A camera index (``0``, ``"0"``), a ``/dev/video*`` device, a stream URL
    (``STREAM_PREFIXES``) or a GStreamer pipeline (``... ! appsink``) give a
    ``LiveSource`` (not opened yet: iterating or ``open()`` opens it, and the
    other keywords apply to it); a folder gives a ``FolderSource`` at ``fps``, a
    video file a ``VideoFileSource``.
    """
    target = spec if isinstance(spec, int) else str(spec)
    if live_kind(target) is not None:
        return LiveSource(target, backoff=backoff, open_timeout_s=open_timeout_s,
                          read_timeout_s=read_timeout_s, reconnect_for_s=reconnect_for_s,
                          on_status=on_status)
    text = str(spec).strip()
    path = Path(text)
    if path.is_dir():
        return FolderSource(path, fps=fps)
    if path.is_file():
        return VideoFileSource(path)
    raise SourceError(f"source {text!r} is not a camera index, a /dev/video device, a stream "
                      "URL, a GStreamer pipeline, a folder or a video file")


__all__ = [
    "Backoff",
    "FolderSource",
    "Frame",
    "FrameSource",
    "LiveSource",
    "SourceError",
    "SourceStatus",
    "VideoFileSource",
    "gstreamer_available",
    "live_kind",
    "open_source",
]
