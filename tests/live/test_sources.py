"""Live sources as a camera app: bounded opening, the newest frame, reconnection, status.

The stream tests run OpenCV's real ``cv2.VideoCapture`` (FFmpeg) on the MJPEG
server of ``tests/live/mjpeg_server.py``; fake captures stand in only where a
backend must hang or a backoff schedule be recorded.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tabletop.live.sources import (
    Backoff,
    FolderSource,
    Frame,
    LiveSource,
    SourceError,
    SourceStatus,
    VideoFileSource,
    gstreamer_available,
    live_kind,
    open_source,
)
from tests.live.mjpeg_server import MjpegServer, frame_number, numbered_frame

OPEN_CONTRACT_S = 10.0  # open_timeout_s's default: every bad source fails within it


def open_live(spec: int | str, **options: Any) -> LiveSource:
    """``open_source(spec, **options)``, which must be a live source."""
    source = open_source(spec, **options)
    assert isinstance(source, LiveSource)
    return source


def free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class StatusLog:
    """Collects what ``on_status`` hears."""

    def __init__(self) -> None:
        self.seen: list[SourceStatus] = []

    def __call__(self, status: SourceStatus) -> None:
        self.seen.append(status)

    @property
    def states(self) -> list[str]:
        return [s.state for s in self.seen]


def take(frames: Iterator[Frame], count: int, *, within_s: float = 20.0,
         each: Callable[[Frame], object] | None = None) -> list[Frame]:
    """``count`` frames from ``frames``, failing the test if they take longer than ``within_s``."""
    got: list[Frame] = []
    deadline = time.monotonic() + within_s
    for frame in frames:
        got.append(frame)
        if each is not None:
            each(frame)
        if len(got) == count:
            return got
        assert time.monotonic() < deadline, f"only {len(got)} of {count} frames in {within_s} s"
    raise AssertionError(f"the source ended after {len(got)} of {count} frames")


def until_back(source: LiveSource, frames: Iterator[Frame], within_s: float = 25.0) -> None:
    """Reads ``frames`` until the first one after ``source`` reconnected."""
    deadline = time.monotonic() + within_s
    for _frame in frames:
        if source.status.reconnects:
            return
        assert time.monotonic() < deadline, f"no reconnection in {within_s} s"
    raise AssertionError(f"the source ended: {source.status.message}")


@pytest.fixture
def camera_server() -> Iterator[MjpegServer]:
    """A 30 fps live camera: frame numbers follow the server's clock."""
    with MjpegServer(numbered_frame, fps=30, timeline="server") as server:
        yield server


# --- targets -----------------------------------------------------------------------


@pytest.mark.parametrize("spec, kind", [
    (0, "camera"),
    ("0", "camera"),
    (" 2 ", "camera"),
    ("/dev/video0", "camera device"),
    ("/dev/video12", "camera device"),
    ("/dev/v4l/by-id/usb-Logitech_C920-video-index0", "camera device"),
    ("http://192.168.1.20:8080/video", "stream"),
    ("https://cam.example/stream.mjpg", "stream"),
    ("rtsp://user:secret@cam.local:554/h264", "stream"),
    ("rtsps://cam.local/stream", "stream"),
    ("rtmp://live.local/app/key", "stream"),
    ("udp://0.0.0.0:5000", "stream"),
    ("tcp://127.0.0.1:5000", "stream"),
    ("videotestsrc ! videoconvert ! appsink", "GStreamer pipeline"),
])
def test_open_source_names_live_targets(spec: int | str, kind: str) -> None:
    source = open_source(spec)
    assert isinstance(source, LiveSource)
    assert kind in source.label
    assert source.status.state == "opening"  # nothing opened until asked


def test_stream_label_hides_the_password() -> None:
    source = open_source("rtsp://user:secret@cam.local:554/h264")
    assert isinstance(source, LiveSource)
    assert "secret" not in source.label and "user:***@cam.local" in source.label


@pytest.mark.parametrize("text, kind", [
    ("7", "camera"),
    ("HTTP://CAM/X", "stream"),
    ("v4l2src device=/dev/video0 ! videoconvert ! appsink", "pipeline"),
    ("/dev/video0", "device"),
    ("clip.mp4", None),
    ("frames/", None),
])
def test_live_kind(text: str, kind: str | None) -> None:
    assert live_kind(text) == kind


def test_files_and_folders_stay_file_sources(tmp_path: Path) -> None:
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (32, 24))
    writer.write(np.zeros((24, 32, 3), np.uint8))
    writer.release()
    assert isinstance(open_source(tmp_path), FolderSource)
    assert isinstance(open_source(str(video)), VideoFileSource)
    with pytest.raises(SourceError, match="nothing-here"):
        open_source(str(tmp_path / "nothing-here.mp4"))


# --- sources that do not open ------------------------------------------------------


def _bad_sources() -> list[Any]:
    port = free_port()
    pipeline = "videotestsrc num-buffers=0 ! nosuchelement ! appsink"
    return [
        pytest.param("9", ["camera 9", "no camera answers at that index"],
                     marks=pytest.mark.skipif(Path("/dev/video9").exists(),
                                              reason="this machine has a /dev/video9"),
                     id="camera-9"),
        pytest.param("/dev/video99", ["'/dev/video99'", "no such device"], id="dev-video99"),
        pytest.param(f"http://127.0.0.1:{port}/stream.mjpg",
                     [f"'http://127.0.0.1:{port}/stream.mjpg'",
                      f"nothing is listening at 127.0.0.1:{port}", "phone app"],
                     id="port-with-nothing"),
        pytest.param(pipeline,
                     ["GStreamer pipeline", "nosuchelement",
                      "no GStreamer support" if not gstreamer_available() else "did not start"],
                     id="gstreamer-pipeline"),
    ]


@pytest.mark.parametrize("spec, words", _bad_sources())
def test_a_source_that_does_not_open_fails_in_time_with_one_line(
        spec: str, words: list[str]) -> None:
    statuses = StatusLog()
    source = open_live(spec, on_status=statuses)
    started = time.monotonic()
    with pytest.raises(SourceError) as raised:
        next(iter(source))
    elapsed = time.monotonic() - started
    message = str(raised.value)
    assert elapsed < OPEN_CONTRACT_S
    assert "\n" not in message and message.startswith("cannot open ")
    for word in words:
        assert word in message
    assert statuses.states == ["opening", "lost"] and statuses.seen[-1].message == message
    with pytest.raises(SourceError, match="cannot open"):  # asked again, the same answer
        source.open()


def test_a_server_on_the_wrong_path_is_named_as_such(camera_server: MjpegServer) -> None:
    url = camera_server.url.replace("/stream.mjpg", "/not-the-stream")
    with pytest.raises(SourceError, match="answers but sends no video"):
        next(iter(open_source(url, open_timeout_s=2)))


def test_a_stream_that_opens_but_sends_nothing_fails_at_the_deadline() -> None:
    with MjpegServer(numbered_frame, fps=30) as server:
        server.stall(60)
        started = time.monotonic()
        with pytest.raises(SourceError, match="no answer within 2 s"):
            next(iter(open_source(server.url, open_timeout_s=2)))
        assert time.monotonic() - started < OPEN_CONTRACT_S


class FakeCapture:
    """A capture double: ``frames`` good reads, then failed ones; ``hang`` blocks reads."""

    def __init__(self, opened: bool = True, frames: int = 0, frame_s: float = 0.0,
                 hang: threading.Event | None = None) -> None:
        self.opened, self.frames, self.frame_s, self.hang = opened, frames, frame_s, hang
        self.released = False

    def isOpened(self) -> bool:
        return self.opened

    def read(self) -> tuple[bool, Any]:
        if self.frames > 0:
            self.frames -= 1
            time.sleep(self.frame_s)
            return True, np.zeros((4, 4, 3), np.uint8)
        if self.hang is not None:
            self.hang.wait()
        return False, None

    def release(self) -> None:
        self.released = True


def test_an_endless_backoff_is_bounded_by_the_open_deadline() -> None:
    opens = itertools.count()

    def never_opens(_target: int | str) -> FakeCapture:
        next(opens)
        return FakeCapture(opened=False)

    source = LiveSource(0, backoff=Backoff(first_s=0.01, factor=1.0, attempts=0),
                        open_timeout_s=0.5, open_capture=never_opens)
    started = time.monotonic()
    # the last try is cut short by the deadline when the machine is slow to run it
    with pytest.raises(SourceError, match=r"camera 0: no (camera answers|answer within 0\.5 s)"):
        source.open()
    assert time.monotonic() - started < OPEN_CONTRACT_S
    assert next(opens) > 3  # it did retry, a bounded number of times


def test_backoff_is_lazy_and_capped() -> None:
    delays = Backoff().delays()
    assert isinstance(delays, Iterator)
    assert list(itertools.islice(delays, 7)) == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert list(Backoff(first_s=1, factor=3, max_s=20, attempts=4).delays()) == [1, 3, 9, 20]


def test_a_backend_that_hangs_in_open_is_abandoned_at_the_deadline() -> None:
    unblock = threading.Event()
    made: list[FakeCapture] = []

    def hangs(_target: int | str) -> FakeCapture:
        unblock.wait()
        made.append(FakeCapture(frames=1))
        return made[-1]

    source = LiveSource("rtsp://cam.local/x", open_timeout_s=0.5, open_capture=hangs)
    started = time.monotonic()
    with pytest.raises(SourceError, match=r"no answer within 0\.5 s"):
        source.open()
    assert time.monotonic() - started < OPEN_CONTRACT_S
    unblock.set()  # the backend answers late: what it opened is released, not leaked
    deadline = time.monotonic() + 5
    while not (made and made[0].released) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert made and made[0].released


def test_a_capture_that_opens_but_gives_no_frame_fails() -> None:
    source = LiveSource(1, open_timeout_s=0.5, open_capture=lambda _t: FakeCapture(frames=0))
    with pytest.raises(SourceError, match=r"opened but sent no frame within 0\.5 s"):
        source.open()


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _fail_to_open(make: Callable[[], LiveSource], times: int) -> None:
    for _ in range(times):
        source = make()
        with pytest.raises(SourceError):
            source.open()
        source.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
@pytest.mark.parametrize("make, times", [
    pytest.param(lambda: LiveSource("9"), 20, id="missing-camera"),
    pytest.param(lambda: LiveSource(f"http://127.0.0.1:{free_port()}/s.mjpg",
                                    open_timeout_s=0.6), 8, id="port-with-nothing"),
    pytest.param(lambda: LiveSource(0, backoff=Backoff(first_s=0.005, factor=1.0),
                                    open_timeout_s=0.2,
                                    open_capture=lambda _t: FakeCapture(opened=False)),
                 20, id="endless-backoff"),
])
def test_failing_to_open_again_and_again_holds_no_memory(
        make: Callable[[], LiveSource], times: int) -> None:
    _fail_to_open(make, 3)  # OpenCV's and FFmpeg's one-time set-up
    threads, rss = threading.active_count(), _rss_bytes()
    _fail_to_open(make, times)
    assert _rss_bytes() - rss < 20 * 2**20
    assert threading.active_count() <= threads + 1


# --- a live stream, real OpenCV ----------------------------------------------------


def test_stream_frames_arrive_with_times_and_indices(camera_server: MjpegServer) -> None:
    statuses = StatusLog()
    with open_live(camera_server.url, on_status=statuses) as source:
        frames = take(iter(source), 10)
        assert statuses.states == ["opening", "live"]
        assert source.status.state == "live" and "320x240" in source.status.message
    assert all(f.image.shape == (240, 320, 3) for f in frames)
    assert all(b.t > a.t >= 0 for a, b in itertools.pairwise(frames))
    assert all(b.index > a.index for a, b in itertools.pairwise(frames))
    numbers = [frame_number(f.image) for f in frames]
    assert numbers == sorted(set(numbers))  # never the same frame twice
    assert statuses.states[-1] == "ended" and source.status.state == "ended"


def test_a_slow_consumer_gets_the_newest_frame(camera_server: MjpegServer) -> None:
    ages: list[int] = []

    def like_a_300ms_detector(frame: Frame) -> None:
        ages.append(camera_server.number_now() - frame_number(frame.image))
        time.sleep(0.3)

    with open_live(camera_server.url) as source:
        frames = take(iter(source), 8, each=like_a_300ms_detector)
        dropped = source.dropped
    # At 30 fps a frame is 33 ms, and a queue would make the age grow by 9 frames a
    # frame.  Newest-frame gives 0 or 1; the bound leaves room for a busy machine.
    assert sorted(ages)[len(ages) // 2] <= 2 and max(ages[1:]) <= 6, ages
    assert dropped >= frames[-1].index + 1 - len(frames) >= 7 * 2
    assert all(b.index - a.index >= 2 for a, b in itertools.pairwise(frames[1:]))


@pytest.mark.parametrize("fault, read_timeout_s", [
    pytest.param(lambda server: server.cut(), 5.0, id="connection-cut"),
    pytest.param(lambda server: server.refuse(1.0), 5.0, id="refused-for-1s"),
    pytest.param(lambda server: server.stall(2.0), 0.5, id="silent-for-2s"),
])
def test_a_stream_that_drops_out_comes_back(camera_server: MjpegServer,
                                            fault: Callable[[MjpegServer], None],
                                            read_timeout_s: float) -> None:
    statuses = StatusLog()
    with open_live(camera_server.url, on_status=statuses, read_timeout_s=read_timeout_s,
                     reconnect_for_s=30) as source:
        frames = iter(source)
        before = take(frames, 3)
        fault(camera_server)
        until_back(source, frames)
        after = take(frames, 3)
        assert statuses.states == ["opening", "live", "reconnecting", "live"]
        assert source.status.reconnects == 1
        assert "dropped out" in statuses.seen[2].message
    assert frame_number(after[-1].image) > frame_number(before[-1].image)
    assert after[-1].index > before[-1].index


def test_a_stream_gone_for_good_ends_the_frames_in_bounded_time(
        camera_server: MjpegServer) -> None:
    statuses = StatusLog()
    with open_live(camera_server.url, on_status=statuses, reconnect_for_s=2) as source:
        frames = iter(source)
        take(frames, 3)
        camera_server.stop()
        stopped = time.monotonic()
        list(frames)  # ends by itself
        assert time.monotonic() - stopped < 2 + OPEN_CONTRACT_S
        assert statuses.states == ["opening", "live", "reconnecting", "lost"]
        lost = source.status
        assert lost.state == "lost" and "did not come back" in lost.message
        assert camera_server.url in lost.message


def test_a_replay_streamed_once_ends_the_source() -> None:
    images = [numbered_frame(n) for n in range(12)]
    with MjpegServer(images, fps=10, loop=False, after_last_frame="refuse") as server:
        with open_live(server.url, reconnect_for_s=1) as source:
            numbers = [frame_number(f.image) for f in source]
            assert source.status.state == "lost"
        assert server.wait_for_end(0)
    assert numbers == sorted(set(numbers)) and numbers[-1] == 11


def test_close_stops_the_grabber_promptly(camera_server: MjpegServer) -> None:
    source = open_live(camera_server.url)
    frames = iter(source)
    take(frames, 2)
    grabbers = [t for t in threading.enumerate() if t.name.startswith("grab ")]
    started = time.monotonic()
    source.close()
    assert time.monotonic() - started < source.close_timeout_s + 1
    assert list(frames) == []
    assert not any(t.is_alive() for t in grabbers)
    assert source.status.state == "ended"
    source.close()  # twice is fine


def test_close_from_another_thread_ends_a_waiting_iterator() -> None:
    with MjpegServer(numbered_frame, fps=2) as server:  # a frame every 0.5 s
        source = open_source(server.url)
        frames = iter(source)
        take(frames, 1)
        threading.Timer(0.1, source.close).start()
        started = time.monotonic()
        list(frames)
        assert time.monotonic() - started < 5


# --- backoff and a hung backend, with fake captures ---------------------------------


def test_reconnection_follows_the_backoff_then_gives_up() -> None:
    # 3 frames, drop, 2 failed opens, 2 frames, drop, opens fail until the attempts run out
    plan = [FakeCapture(frames=3, frame_s=0.01), FakeCapture(opened=False),
            FakeCapture(opened=False), FakeCapture(frames=2, frame_s=0.01)]
    pauses: list[float] = []
    statuses = StatusLog()
    source = LiveSource(0, backoff=Backoff(first_s=0.5, factor=2, max_s=10, attempts=4),
                        open_capture=lambda _t: plan.pop(0) if plan else FakeCapture(opened=False),
                        sleep=pauses.append, on_status=statuses)
    frames = list(source)
    source.close()
    assert pauses == [0.5, 1.0, 2.0, 0.5, 1.0, 2.0, 4.0]
    assert statuses.states == ["opening", "live", "reconnecting", "live", "reconnecting", "lost"]
    assert source.reconnects == 1
    indices = [f.index for f in frames]
    assert indices == sorted(set(indices)) and indices[-1] == 4
    assert len(frames) + source.dropped == 5


def test_a_read_that_hangs_is_abandoned_and_the_source_reopened() -> None:
    unblock = threading.Event()
    stuck = FakeCapture(frames=3, frame_s=0.01, hang=unblock)
    plan = [stuck, FakeCapture(frames=10_000, frame_s=0.02)]
    statuses = StatusLog()
    source = LiveSource("rtsp://cam.local/x", read_timeout_s=0.2, on_status=statuses,
                        open_capture=lambda _t: plan.pop(0))
    try:
        frames = iter(source)
        take(frames, 1)
        until_back(source, frames, within_s=15)
        assert statuses.states == ["opening", "live", "reconnecting", "live"]
        assert "stopped answering" in statuses.seen[2].message
        assert not stuck.released  # still inside its read: nobody may release it under it
    finally:
        unblock.set()
        source.close()
    deadline = time.monotonic() + 5
    while not stuck.released and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stuck.released


def test_a_failing_status_listener_does_not_stop_the_source(camera_server: MjpegServer) -> None:
    def broken(_status: SourceStatus) -> None:
        raise RuntimeError("display gone")

    with contextlib.closing(open_source(camera_server.url, on_status=broken)) as source:
        assert len(take(iter(source), 3)) == 3
