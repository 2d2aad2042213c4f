"""The oracle detector: a rendered video's true boxes, read back as if a model had found them.

Until the detection model is trained, ``OracleDetector`` stands in for
``vision.detector.Detector``: the same call (an image in, ``Detections``
out), answered from the renderer's truth file (``studio.synth.scripted``)
beside the video.  Frames are taken in order, one per call, as
``live.pipeline.Pipeline`` feeds them; the image's size is checked against the file
so the oracle cannot be paired with the wrong video unnoticed.

What a real model does to those boxes is imitated, seeded per frame so a
replay is the same every time: boxes wander by a few per cent of their size,
confidences vary, and now and then an item is missed for a frame.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.engine.events import Event, event_to_json
from tabletop.vision.detections import Detections

TRUTH_SUFFIX = ".truth.jsonl"


class OracleError(ValueError):
    """A truth file that is missing, malformed or does not fit the frames fed to it."""


@dataclass(frozen=True)
class Noise:
    """How unlike the truth the oracle's answers are."""

    box_jitter: float = 0.03
    """Standard deviation of each box side, as a share of the box's size."""
    box_jitter_px: float = 0.2
    """...plus this many pixels."""
    miss_rate: float = 0.003
    """Chance that an item in sight is not detected in a frame."""
    confidence: tuple[float, float] = (0.6, 0.99)


EXACT = Noise(0.0, 0.0, 0.0, (1.0, 1.0))


def truth_path_for(video: str | Path) -> Path:
    video = Path(video)
    return video.with_name(video.stem + TRUTH_SUFFIX)


def read_truth(path: str | Path) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """(the header, each frame's true detections in frame order)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise OracleError(f"cannot read the truth file {str(path)!r}: {error}") from None
    try:
        rows = [json.loads(line) for line in lines if line.strip()]
    except json.JSONDecodeError as error:
        raise OracleError(f"{path}: not JSON lines: {error}") from None
    if not rows or rows[0].get("kind") != "header":
        raise OracleError(f"{path}: the first line must be the header")
    header, frames = rows[0], rows[1:]
    for number, row in enumerate(frames):
        if row.get("frame") != number or not isinstance(row.get("detections"), list):
            raise OracleError(f"{path}: line {number + 2} is not frame {number}: "
                              f"{json.dumps(row)[:100]}")
    if header.get("frames") != len(frames):
        raise OracleError(f"{path}: the header promises {header.get('frames')} frames, "
                          f"the file has {len(frames)}")
    return header, [row["detections"] for row in frames]


class OracleDetector:
    """``detector(image) -> Detections`` from a truth file, one frame per call."""

    def __init__(self, truth: str | Path, *, noise: Noise | None = None, seed: int = 0) -> None:
        self.path = Path(truth)
        self.header, self.frames = read_truth(self.path)
        self.noise = noise if noise is not None else Noise()
        self.seed = seed
        self.index = 0
        self.size = (int(self.header["width"]), int(self.header["height"]))

    @classmethod
    def for_video(cls, video: str | Path, **kwargs: Any) -> OracleDetector:
        return cls(truth_path_for(video), **kwargs)

    def __call__(self, image: npt.NDArray[np.uint8] | None) -> Detections:
        if image is not None:
            h, w = image.shape[:2]
            if (w, h) != self.size:
                raise OracleError(f"frame {self.index} is {w}x{h} but {self.path.name} "
                                  f"describes {self.size[0]}x{self.size[1]} frames")
        detections = self.at(self.index)
        self.index += 1
        return detections

    def at(self, index: int) -> Detections:
        """Frame ``index``'s detections, noise included (the same every time)."""
        if not 0 <= index < len(self.frames):
            raise OracleError(f"frame {index} is past the {len(self.frames)} frames of "
                              f"{self.path.name}")
        return noisy(self.frames[index], self.noise, np.random.default_rng([self.seed, index]),
                     self.size)

    def reset(self) -> None:
        self.index = 0


def noisy(items: Sequence[Mapping[str, Any]], noise: Noise, rng: np.random.Generator,
          size: tuple[int, int]) -> Detections:
    kept: list[dict[str, Any]] = []
    low, high = noise.confidence
    for item in items:
        # draw every number for every item, so one item's miss does not shift the others'
        box = np.asarray(item["box"], np.float64)
        side = np.array([box[2] - box[0], box[3] - box[1]] * 2)
        shifted = box + rng.normal(0.0, 1.0, 4) * (noise.box_jitter * side + noise.box_jitter_px)
        confidence = float(rng.uniform(low, high))
        missed = rng.random() < noise.miss_rate
        if missed:
            continue
        x1, y1 = max(0.0, shifted[0]), max(0.0, shifted[1])
        x2, y2 = min(float(size[0]), shifted[2]), min(float(size[1]), shifted[3])
        if x2 - x1 < 1.0 or y2 - y1 < 1.0:
            continue
        kept.append({"label": item["label"], "kind": item["kind"], "box": [x1, y1, x2, y2],
                     "confidence": confidence})
    return Detections.from_items(kept)


def calibration_from(header: Mapping[str, Any]) -> Any:
    """The table calibration the truth file's camera implies (corners in the image)."""
    from tabletop.calibration.table import TableCalibration

    return TableCalibration.from_corners(header["image_corners"], tuple(header["table_mm"]),
                                         (int(header["width"]), int(header["height"])))


@dataclass
class Replay:
    """What a video replay produced: the events and when each snapshot was committed."""

    events: list[Event]
    frames: int
    snapshots: int
    committed_t: list[float]

    def json_events(self) -> list[dict[str, Any]]:
        """The events as the JSON objects a truth file's events are (CONTRACT.md)."""
        return [event_to_json(event) for event in self.events]


def replay_video(video: str | Path, scenario: Any, *, noise: Noise | None = None,
                 seed: int = 0, on_frame: Any = None, bus: Any = None,
                 detector: Any = None) -> Replay:
    """The whole pipeline after the model on a rendered video: source, oracle, watcher with
    the default zones and the camera's calibration, game; the header's button presses are
    pressed at their video times, after the frame that reaches them.  ``detector``
    (e.g. the trained :class:`tabletop.vision.detector.Detector`) replaces the oracle; the truth
    file still gives the calibration and the presses."""
    from tabletop.calibration.zones import default_layout
    from tabletop.engine.scenario import Press
    from tabletop.live.bus import EventBus
    from tabletop.live.events import collector
    from tabletop.live.game import Game
    from tabletop.live.pipeline import Pipeline
    from tabletop.live.scenario import game_options
    from tabletop.live.sources import open_source
    from tabletop.live.watcher import TableWatcher

    oracle = OracleDetector.for_video(video, noise=noise, seed=seed)
    header = oracle.header
    detector = detector if detector is not None else oracle
    zones = default_layout(scenario.variant.id, len(scenario.players),
                           tuple(header["table_mm"]))
    watcher = TableWatcher(scenario.variant, zones, calibration_from(header))
    bus = bus if bus is not None else EventBus()
    events, _ = collector(bus)
    game = Game(scenario.variant, scenario.players, bus, options=game_options(scenario))
    presses = [Press(float(p["t"]), str(p["press"]), p.get("seat")) for p in header["presses"]]
    frames = open_source(video)
    try:
        # the rendered games are read without second looks, as their figures were measured
        watched = Pipeline(frames, detector, watcher, game, presses=presses, on_frame=on_frame,
                           second_look=False).run()
    finally:
        frames.close()
    return Replay(events, watched.frames, watched.snapshots, list(watched.committed))


__all__ = ["EXACT", "Noise", "OracleDetector", "OracleError", "Replay", "calibration_from",
           "noisy", "read_truth", "replay_video", "truth_path_for"]
