"""Frame sources: a camera, a video file, a stream URL or a folder of images, one interface.

Every source yields ``Frame(t, image)``: ``t`` is video time for files (the
frame's position, not the wall clock, so a replay gives the same times however
fast it runs), the frame rate's times for a folder (or times written in the
file names), and seconds since opening for cameras and streams.

Live sources drop out: a camera unplugged, a stream that stalls.  They are
reopened with a growing pause (backoff) instead of ending the run; a frame
that cannot be decoded is skipped with a warning, never a crash.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
STREAM_PREFIXES = ("rtsp://", "rtsps://", "http://", "https://", "udp://", "tcp://", "rtmp://")
_TIME_IN_NAME = re.compile(r"(?:^|[^0-9.])t?(\d+(?:\.\d+)?)(?:s|ms)?$")


class SourceError(ValueError):
    """A source that cannot be opened at all; the message quotes it."""


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
    """Pauses between reconnection attempts: first, doubling, capped; ``attempts`` 0 = forever."""

    first_s: float = 0.5
    factor: float = 2.0
    max_s: float = 10.0
    attempts: int = 0

    def delays(self) -> Iterator[float]:
        delay, tried = self.first_s, 0
        while self.attempts == 0 or tried < self.attempts:
            yield delay
            tried += 1
            delay = min(self.max_s, delay * self.factor)


Capture = Any  # cv2.VideoCapture or a test double with isOpened/read/get/release


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
                yield Frame(round(t, 6), image, index)
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
            yield Frame(round(t, 6), image, index)

    def close(self) -> None:
        pass


class LiveSource:
    """A camera index or a stream URL, reopened with backoff when it drops out.

    ``open_capture`` makes the capture (``cv2.VideoCapture`` by default; tests
    pass a fake).  A run of ``max_failed_reads`` failed reads counts as a drop.
    The source ends only when ``close()`` is called or the backoff gives up.
    """

    def __init__(self, target: int | str, *, backoff: Backoff | None = None,
                 max_failed_reads: int = 5,
                 open_capture: Callable[[int | str], Capture] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.target = target
        self.backoff = backoff or Backoff()
        self.max_failed_reads = max_failed_reads
        self._open = open_capture or cv2.VideoCapture
        self._clock, self._sleep = clock, sleep
        self._closed = False
        self.reconnects = 0

    def _connect(self) -> Capture | None:
        for delay in [0.0, *self.backoff.delays()]:
            if self._closed:
                return None
            if delay:
                log.warning("source %r unavailable; retrying in %.1f s", self.target, delay)
                self._sleep(delay)
            capture = self._open(self.target)
            if capture is not None and capture.isOpened():
                return capture
            if capture is not None:
                capture.release()
        return None

    def __iter__(self) -> Iterator[Frame]:
        start = self._clock()
        index = 0
        capture = self._connect()
        if capture is None:
            raise SourceError(f"cannot open the source {self.target!r}")
        try:
            while not self._closed:
                failed = 0
                while failed < self.max_failed_reads and not self._closed:
                    ok, image = capture.read()
                    if ok and image is not None and image.size:
                        failed = 0
                        yield Frame(round(self._clock() - start, 6), image, index)
                        index += 1
                    else:
                        failed += 1
                capture.release()
                if self._closed:
                    return
                log.warning("source %r dropped out; reconnecting", self.target)
                capture = self._connect()
                if capture is None:
                    log.error("source %r did not come back; giving up", self.target)
                    return
                self.reconnects += 1
        finally:
            if capture is not None:
                capture.release()

    def close(self) -> None:
        self._closed = True


def open_source(spec: str | int | Path, *, fps: float = 10.0,
                backoff: Backoff | None = None) -> VideoFileSource | FolderSource | LiveSource:
    """The source ``spec`` names: a camera index ("0"), a stream URL, a folder or a video file."""
    if isinstance(spec, int):
        return LiveSource(spec, backoff=backoff)
    text = str(spec).strip()
    if text.isdigit():
        return LiveSource(int(text), backoff=backoff)
    if text.lower().startswith(STREAM_PREFIXES):
        return LiveSource(text, backoff=backoff)
    path = Path(text)
    if path.is_dir():
        return FolderSource(path, fps=fps)
    if path.is_file():
        return VideoFileSource(path)
    raise SourceError(
        f"source {text!r} is not a camera index, a stream URL, a folder or a video file")


__all__ = [
    "Backoff",
    "FolderSource",
    "Frame",
    "LiveSource",
    "SourceError",
    "VideoFileSource",
    "open_source",
]
