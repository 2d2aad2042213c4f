"""bench/live_fps.py's camera clock: a slow pipeline gets the newest frame, never an old one;
every frame without the clock; spans of video counted once."""

from __future__ import annotations

import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.live_fps import PacedFrames, _covered

FPS = 30.0
FRAMES = 45


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("paced") / "count.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), FPS, (64, 48))
    for index in range(FRAMES):
        frame = np.zeros((48, 64, 3), np.uint8)
        frame[:, :] = (index * 5) % 256  # the frame's number in its grey level
        writer.write(frame)
    writer.release()
    return path


@pytest.mark.parametrize(("work_s", "least_step"), [(0.0, 1), (0.1, 3), (0.2, 6)])
def test_a_slow_pipeline_gets_the_newest_frame(video: Path, work_s: float,
                                               least_step: int) -> None:
    frames = PacedFrames(video, FPS)
    indices = []
    for frame in frames:
        indices.append(frame.index)
        assert abs(float(frame.image.mean()) - (frame.index * 5) % 256) < 3
        assert frame.t == pytest.approx(frame.index / FPS)
        time.sleep(work_s)
    steps = np.diff(indices)
    assert indices[0] == 0 and steps.min() >= least_step
    assert [c.index for c in frames.costs] == indices
    assert all(c.wall_s >= work_s for c in frames.costs)
    assert frames.decoded >= indices[-1] + 1


def test_without_the_clock_every_frame_comes(video: Path) -> None:
    frames = PacedFrames(video, FPS, paced=False)
    indices = []
    for frame in frames:
        indices.append(frame.index)
        time.sleep(0.01)
    assert indices == list(range(FRAMES))


@pytest.mark.parametrize("paced", [True, False])
def test_a_held_video_goes_on_showing_its_last_frame_with_noise(video: Path,
                                                                paced: bool) -> None:
    hold_s = 0.5
    frames = PacedFrames(video, FPS, paced=paced, hold_s=hold_s)
    seen = [(frame.index, frame.t, frame.image.astype(np.float64)) for frame in frames]
    last_grey = ((FRAMES - 1) * 5) % 256
    held = [(index, t, image) for index, t, image in seen if index >= FRAMES]
    assert held, "no held frames"
    assert seen[-1][0] <= FRAMES - 1 + hold_s * FPS
    if not paced:
        assert [index for index, _, _ in held] == list(range(FRAMES, FRAMES + 15))
    for index, t, image in held:
        assert t == pytest.approx(index / FPS)
        assert abs(image.mean() - last_grey) < 3
        assert 0.5 < (image - image.mean()).std() < 4  # a camera's noise, no picture change
    assert frames.decoded == FRAMES


def test_without_a_hold_the_video_ends_with_its_last_frame(video: Path) -> None:
    assert [frame.index for frame in PacedFrames(video, FPS, paced=False)][-1] == FRAMES - 1


@pytest.mark.parametrize(("spans", "end", "seconds"), [
    ([], 10.0, 0.0),
    ([(1.0, 2.0), (3.0, 4.5)], 10.0, 2.5),
    ([(1.0, 3.0), (2.0, 4.0)], 10.0, 3.0),   # overlapping spans count once
    ([(-1.0, 1.0), (9.0, 12.0)], 10.0, 2.0),  # cut to the video
])
def test_spans_are_counted_once(spans: list[tuple[float, float]], end: float,
                                seconds: float) -> None:
    assert _covered(spans, end) == pytest.approx(seconds)


TABLE = {"type": "table", "seat": 0, "melds": ["10H JH QH"]}
LAID = {"type": "meld_laid", "seat": 0, "meld": "10H JH QH"}


@pytest.mark.parametrize(("got", "want", "right"), [
    ([dict(LAID, seq=1, t=1.0), dict(TABLE, seq=2, t=1.0, boxes=[[1.0, 2.0, 3.0, 4.0]])],
     [LAID, TABLE], 2),
    ([dict(LAID, seq=1, t=1.0), dict(TABLE, melds=["KS KD KC"])], [LAID, TABLE], 1),
    ([dict(LAID, seq=1, t=1.0)], [LAID, TABLE], 1),
    ([], [LAID], 0),
], ids=["boxes ignored", "wrong melds", "one short", "none"])
def test_events_right_counts_the_leading_events_a_scenario_states(
        got: list[dict[str, object]], want: list[dict[str, object]], right: int) -> None:
    from bench.live_fps import comparable, events_right

    assert events_right([comparable(e) for e in got], want) == right


ADDED = {"type": "item_added", "seat": 0, "meld": "9H 10H JH QH", "items": ["9H"]}
WRONG = {"type": "meld_laid", "seat": 0, "meld": "JK"}


@pytest.mark.parametrize(("got", "want", "in_order"), [
    ([LAID, TABLE, ADDED], [LAID, TABLE, ADDED], 3),
    ([LAID, WRONG, TABLE, ADDED], [LAID, TABLE, ADDED], 3),  # a false event costs itself
    ([LAID, ADDED], [LAID, TABLE, ADDED], 2),  # a missed one too
    ([ADDED, LAID], [LAID, ADDED], 1),  # out of order: one of the two
    ([], [LAID], 0),
], ids=["all", "one false between", "one missed", "swapped", "none"])
def test_events_in_order_count_what_the_scenario_states_past_a_wrong_one(
        got: list[dict[str, object]], want: list[dict[str, object]], in_order: int) -> None:
    from bench.live_fps import events_in_order, events_right

    assert events_in_order(got, want) == in_order
    assert events_in_order(got, want) >= events_right(got, want)
