"""Camera rate on this machine: the model on every whole frame against only where the table changed.

    python -m bench.live_fps [--replays 6] [--seed 1] [--fps 30] [--no-cards]
        [--hold S] [--out DIR] [--verbose] [--json]

The replays, played as a camera gives them (1280x720 at ``--fps``):

* *tiles*: random Sabra games composed from the real tile photos not used for
  adapting (``bench.replays``' replays ``0..N-1`` of ``--seed``, composed again
  at this frame rate into ``OUT/replays/``), scored against their truth as
  ``bench.replays`` scores them;
* *cards*: the scripted Rommé game of ``tabletop/samples/scenarios/rommee.json``
  rendered at that size and rate (the project has no card replays composed from
  photos), its events compared with the scenario's: how many come right before
  the first wrong one.

Each goes through the real pipeline (model, tracker, watcher, rules, game) with
two detectors: *every frame* (``vision.detector.Detector`` on every whole
frame) and *incremental* (``vision.incremental.IncrementalDetector``).  Each
runs twice:

* *paced*, as from a live camera: frames arrive at ``--fps`` on a clock that the
  pipeline's own processing time moves on, and the pipeline always gets the
  newest frame (the others are dropped, as ``live.sources.LiveSource`` drops
  them).  Figures: frames taken per second of video and CPU (all threads, the
  video's decoding included) while the table changes (from a step's
  ``hand_in_t`` to :data:`EVENT_WINDOW_S` after its ``settled_t``: the hand, then
  the looks, readings and commit the change calls for) and while it is still; CPU
  seconds per minute of play; the delay from a move settling to the first event
  showing it; and the replay's results;
* on *every frame* of the video (no clock): the committed tables (tiles) or
  events (cards) of the two detectors compared, so the comparison does not hang
  on timing.  The every-frame detector's detections of each frame are kept in
  ``OUT/detections/`` (``bench.replays.CachedDetections``), so a second run of the
  bench takes minutes.

With ``--hold S`` each paced run goes on after the video with its last frame,
a camera's noise on it, for S seconds: a table left still.  What that costs
after its first :data:`HOLD_SETTLE_S` seconds (the last move's looks and
commit) is printed per pipeline, the worst replay's.

The decoding floor (reading the video alone) is printed for scale.  Timings
are wall-clock on this machine: run it with nothing else busy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "runs" / "live_fps"
PIPELINES = ("every-frame", "incremental")
EVENT_WINDOW_S = 1.0
"""How long after a move settles its work (looks, readings, the commit) counts as the
table changing: the settle-to-event delay the pipeline is to stay under."""


# --- a camera's clock ------------------------------------------------------------------
@dataclass
class FrameCost:
    index: int
    t: float
    wall_s: float
    """Processing of this frame (until the pipeline asked for the next one)."""
    cpu_s: float
    """Process CPU time, all threads, from handing it out to handing out the next
    (the video's decoding of the frames in between included)."""


class PacedFrames:
    """The frames of a video as a live camera at ``fps`` gives them to a pipeline that
    takes ``wall_s`` a frame: the newest frame that has arrived when it asks, never one
    twice; the video's time is the clock, moved on by the pipeline's processing time.
    ``paced=False`` gives every frame (a file)."""

    def __init__(self, video: Path, fps: float, paced: bool = True, hold_s: float = 0.0
                 ) -> None:
        self.video = video
        self.fps = fps
        self.paced = paced
        self.hold_s = hold_s
        """After the video, its last frame for this many seconds more, as a camera shows
        a table left still: with a camera's noise (:data:`HOLD_NOISE`), a few noisy
        copies taken in turn, made before the first is handed out."""
        self.costs: list[FrameCost] = []
        self.decoded = 0

    def __iter__(self) -> Iterator[Any]:
        import cv2

        from tabletop.live.sources import Frame

        capture = cv2.VideoCapture(str(self.video))
        if not capture.isOpened():
            raise RuntimeError(f"cannot read {self.video}")
        try:
            index = -1
            clock = 0.0
            handed = None
            held: list[Any] = []
            last = None
            ended = -1
            while True:
                if handed is None:
                    want = 0
                else:
                    wall = time.perf_counter() - handed[1]
                    if self.paced:
                        clock = max(clock + wall, (index + 1) / self.fps)
                        want = max(index + 1, int(clock * self.fps + 1e-9))
                    else:
                        want = index + 1
                    self.costs.append(FrameCost(index, index / self.fps, wall,
                                                time.process_time() - handed[2]))
                image = None
                while index < want:
                    if ended < 0:
                        ok, image = capture.read()
                        if ok:
                            last = image
                            self.decoded += 1
                            index += 1
                            continue
                        if self.hold_s <= 0 or last is None:
                            return
                        ended = index
                        held = _noisy_copies(last)
                    if (index + 1 - ended) / self.fps > self.hold_s:
                        return
                    index += 1
                    image = held[index % len(held)]
                clock = max(clock, index / self.fps)
                handed = (index, time.perf_counter(), time.process_time())
                yield Frame(index / self.fps, image, index)
        finally:
            if handed is not None and (not self.costs or self.costs[-1].index != handed[0]):
                self.costs.append(FrameCost(handed[0], handed[0] / self.fps,
                                            time.perf_counter() - handed[1],
                                            time.process_time() - handed[2]))
            capture.release()


HOLD_NOISE = 2.0
"""Grey levels (standard deviation) of a held frame's noise: a webcam's sensor on a lit
table."""
HOLD_SETTLE_S = 5.0
"""The first seconds of a hold are not counted: the last move's looks and commit."""


def _noisy_copies(image: Any, copies: int = 8) -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    return [np.clip(image + rng.normal(0.0, HOLD_NOISE, image.shape), 0, 255).astype(np.uint8)
            for _ in range(copies)]


def decode_cpu_s(video: Path) -> tuple[float, int]:
    """CPU seconds to decode the whole video, and its frames."""
    import cv2

    capture = cv2.VideoCapture(str(video))
    start = time.process_time()
    count = 0
    while capture.grab() and capture.retrieve()[0]:
        count += 1
    capture.release()
    return time.process_time() - start, count


# --- the replays -------------------------------------------------------------------------
@dataclass
class Case:
    """One replay: its video, how the pipeline is set up for it, and how it is scored."""

    name: str
    kind: str
    video: Path
    variant: Any
    players: tuple[str, ...]
    header: Mapping[str, Any]
    make_watcher: Callable[[], Any]
    presses: Sequence[Any]
    score: Callable[[list[dict[str, Any]], list[float]], dict[str, Any]]
    changing: list[tuple[float, float]]
    """(start, end) of each stretch of video with a hand in view."""
    duration_s: float
    cache: Path
    """Where the every-frame detections of the video are kept."""


def tile_cases(out: Path, replays: int, seed: int, fps: float, model: str | None,
               realdata: str | None) -> list[Case]:
    from bench.replays import PLAYER_NAMES, BenchSetup, model_tag, moves_of, score_replay
    from tabletop.engine.variants import find_variant
    from tabletop.live.run import TableSetup
    from tabletop.studio.replay import read_truth

    setup = BenchSetup(out, seed=seed, model=model, realdata=realdata)
    cases = []
    for index in range(replays):
        folder = out / "replays" / f"{setup.set_name}-{fps:g}fps" / f"{index:03d}"
        if not (folder / "script.json").is_file():
            compose_at(setup, index, fps, folder)
        header, truth = read_truth(folder / "truth.jsonl")
        assert header is not None
        players = tuple(header.get("players") or PLAYER_NAMES[:2])
        variant = find_variant("sabra")
        zones = folder / "zones.json"

        def make_watcher(variant: Any = variant, players: tuple[str, ...] = players,
                         zones: Path = zones) -> Any:
            return TableSetup(zones=zones, find_markers=False).view(variant, len(players))

        def score(events: list[dict[str, Any]], committed: list[float],
                  truth: Any = truth, header: Any = header) -> dict[str, Any]:
            result = score_replay(truth, events, moves_of(header)).to_json()
            result["tables"] = [e.get("melds", []) for e in events if e["type"] == "table"]
            result["delays"] = [d for d in result["found"] if d is not None]
            return result

        cases.append(Case(f"tiles {index:03d}", "tiles", folder / "video.mp4", variant, players,
                          header, make_watcher, (), score,
                          [(a, b + EVENT_WINDOW_S) for a, b in moves_of(header)],
                          float(header["frames"]) / fps,
                          out / "detections" / model_tag(model) / folder.parent.name
                          / f"{index:03d}.jsonl.gz"))
    return cases


def compose_at(setup: Any, index: int, fps: float, folder: Path) -> None:
    """``bench.replays``' replay ``index`` composed at ``fps`` into ``folder``."""
    from bench.replays import SCRIPT_NAME, replay_seed
    from tabletop.studio.replay import CropBank, compose_random_game, photo_split

    photos = photo_split(setup.realdata).of(setup.photos)
    bank = CropBank.load(setup.realdata, use_images=photos)
    partial = folder.with_name(folder.name + ".part")
    shutil.rmtree(partial, ignore_errors=True)
    seed = replay_seed(setup.seed, index)
    replay = compose_random_game(("Ana", "Ben"), partial, seed=seed, realdata=setup.realdata,
                                 size=setup.size, fps=fps, bank=bank, racks=0.0)
    (partial / SCRIPT_NAME).write_text(json.dumps({
        "players": list(replay.players), "variant": "sabra", "seed": seed, "fps": fps,
        "steps": [s.to_json() for s in replay.steps]}) + "\n", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)


def comparable(event: dict[str, Any]) -> dict[str, Any]:
    """An event's JSON as a scenario states it: without its number and time, and without a
    table event's boxes (where the camera saw each meld, which no scenario knows)."""
    return {k: v for k, v in event.items() if k not in ("seq", "t", "boxes")}


def events_right(got: Sequence[dict[str, Any]], want: Sequence[dict[str, Any]]) -> int:
    """How many of ``got`` match ``want`` before the first that does not."""
    return next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                min(len(got), len(want)))


def events_in_order(got: Sequence[Any], want: Sequence[Any]) -> int:
    """How many of ``want`` ``got`` holds in their order, other events between them allowed
    (the longest common subsequence): a wrong event costs itself, not all that follow."""
    best = [0] * (len(want) + 1)
    for a in got:
        diagonal = 0
        for j, b in enumerate(want, start=1):
            above = best[j]
            best[j] = diagonal + 1 if a == b else max(best[j], best[j - 1])
            diagonal = above
    return best[-1]


def card_case(out: Path, fps: float, model: str | None) -> Case:
    from bench.pipeline_fps import delays
    from bench.replays import model_tag
    from tabletop.calibration.zones import default_layout
    from tabletop.engine.events import GameWarning, event_to_json
    from tabletop.engine.scenario import Press
    from tabletop.live.oracle import calibration_from, read_truth, truth_path_for
    from tabletop.live.scenario import load_scenario
    from tabletop.live.watcher import TableWatcher
    from tabletop.studio.synth.scripted import VideoSettings, render_video

    scenario_path = ROOT / "tabletop" / "samples" / "scenarios" / "rommee.json"
    video = out / "replays" / f"rommee-1280x720-{fps:g}fps" / "video.mp4"
    if not truth_path_for(video).is_file():
        render_video(scenario_path, video, VideoSettings(width=1280, height=720, fps=fps))
    scenario = load_scenario(scenario_path)
    header, _ = read_truth(truth_path_for(video))
    skipped = {s["scenario_t"] for s in header["skipped"]}
    want = [comparable(event_to_json(e)) for e in scenario.events
            if not (isinstance(e, GameWarning) and e.t in skipped)]

    def make_watcher() -> Any:
        zones = default_layout(scenario.variant.id, len(scenario.players),
                               tuple(header["table_mm"]))
        return TableWatcher(scenario.variant, zones, calibration_from(header))

    def score(events: list[dict[str, Any]], committed: list[float]) -> dict[str, Any]:
        got = [comparable(e) for e in events]
        leading = events_right(got, want)
        in_order = events_in_order(got, want)
        return {"events_exact": got == want, "events_right": leading,
                "events_in_order": in_order, "events_false": len(got) - in_order,
                "events_true": len(want), "events": got, "delays": delays(header, committed)}

    presses = [Press(float(p["t"]), str(p["press"]), p.get("seat")) for p in header["presses"]]
    steps = header["steps"]
    changing = [(float(s.get("hand_in_t", s["settled_t"])),
                 float(s["settled_t"]) + EVENT_WINDOW_S) for s in steps]
    return Case("cards rommee", "cards", video, scenario.variant, tuple(scenario.players),
                header, make_watcher, presses, score, changing,
                float(header["frames"]) / fps,
                out / "detections" / model_tag(model) / video.parent.name / "000.jsonl.gz")


# --- one run -----------------------------------------------------------------------------
@dataclass
class Played:
    pipeline: str
    paced: bool
    costs: list[FrameCost]
    decoded: int
    score: dict[str, Any]
    looks: dict[str, Any] = field(default_factory=dict)
    hold_s: float = 0.0


def play(case: Case, detector: Any, pipeline: str, paced: bool, fps: float,
         hold_s: float = 0.0) -> Played:
    """``case`` through the pipeline with ``detector`` (a callable, maybe with
    ``look_again`` and ``set_time``), its last frame held ``hold_s`` more."""
    from tabletop.engine.events import event_to_json
    from tabletop.live.bus import EventBus
    from tabletop.live.events import collector
    from tabletop.live.game import Game
    from tabletop.live.pipeline import Pipeline

    bus = EventBus()
    events, _ = collector(bus)
    game = Game(case.variant, case.players, bus)
    frames = PacedFrames(case.video, fps, paced, hold_s)
    watched = Pipeline(frames, detector, case.make_watcher(), game, presses=case.presses).run()
    counts = getattr(detector, "counts", None)
    looks = ({k: v for k, v in vars(counts).items()} if counts is not None else {})
    return Played(pipeline, paced, frames.costs, frames.decoded,
                  case.score([event_to_json(e) for e in events], list(watched.committed)), looks,
                  hold_s)


def figures(case: Case, played: Played) -> dict[str, Any]:
    """Frames taken and CPU, while changing and while still, of a paced run."""

    def changing(t: float) -> bool:
        return any(a <= t < b for a, b in case.changing)

    changing_s = _covered(case.changing, case.duration_s)
    still_s = max(1e-9, case.duration_s - changing_s)
    in_video = [c for c in played.costs if c.t < case.duration_s]
    moving = [c for c in in_video if changing(c.t)]
    still = [c for c in in_video if not changing(c.t)]
    cpu = sum(c.cpu_s for c in in_video)
    held_from = case.duration_s + HOLD_SETTLE_S
    held = [c for c in played.costs if c.t >= held_from]
    held_s = played.hold_s - HOLD_SETTLE_S if held else 0.0
    delays = played.score.get("delays") or []
    return {
        "frames": len(played.costs),
        "fps_changing": len(moving) / max(changing_s, 1e-9),
        "fps_still": len(still) / still_s,
        "cores_changing": sum(c.cpu_s for c in moving) / max(changing_s, 1e-9),
        "cores_still": sum(c.cpu_s for c in still) / still_s,
        "cpu_s_per_min": cpu / case.duration_s * 60,
        "cores_held": sum(c.cpu_s for c in held) / held_s if held_s > 0 else None,
        "held_s": held_s,
        "frame_ms_median": 1000 * statistics.median(c.wall_s for c in in_video),
        "frame_ms_max": 1000 * max(c.wall_s for c in in_video),
        "delay_median_s": statistics.median(delays) if delays else None,
        "delay_max_s": max(delays) if delays else None,
        "changing_s": changing_s,
        "still_s": still_s,
    }


def _covered(spans: Sequence[tuple[float, float]], end: float) -> float:
    """Seconds of ``[0, end)`` inside some span (spans may overlap)."""
    total, reach = 0.0, 0.0
    for a, b in sorted((max(0.0, a), min(end, b)) for a, b in spans):
        a = max(a, reach)
        if b > a:
            total += b - a
            reach = b
    return total


def results_of(case: Case, score: Mapping[str, Any]) -> dict[str, Any]:
    if case.kind == "tiles":
        return {k: score[k] for k in ("committed", "right", "found_count", "states",
                                      "final_right", "false_states")}
    return {k: score[k] for k in ("events_exact", "events_right", "events_in_order",
                                  "events_false", "events_true")}


def same(case: Case, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Did two runs commit the same tables (tiles) or make the same events (cards)?  A
    table is the multiset of its melds: their order on the table follows positions
    a pixel can swap."""
    from tabletop.studio.replay import table_key

    if case.kind == "tiles":
        return [table_key(t) for t in a["tables"]] == [table_key(t) for t in b["tables"]]

    def normal(events: Sequence[Mapping[str, Any]]) -> list[Any]:
        return [{**e, "melds": sorted(e["melds"])} if "melds" in e else dict(e)
                for e in events]

    return normal(a["events"]) == normal(b["events"])


def run_case(case: Case, model: str | None, fps: float, hold_s: float = 0.0
             ) -> dict[str, Any]:
    from bench.replays import CachedDetections, _detector
    from tabletop.vision.incremental import IncrementalDetector

    detector = _detector(model)
    out: dict[str, Any] = {"case": case.name, "kind": case.kind,
                           "duration_s": case.duration_s}
    floor_cpu, frames = decode_cpu_s(case.video)
    out["video_frames"] = frames
    out["decode_cpu_s_per_min"] = floor_cpu / case.duration_s * 60
    cached = CachedDetections(case.cache, lambda: detector)
    reference = play(case, cached, "every-frame", False, fps)
    cached.save()
    incremental_all = play(case, IncrementalDetector(detector), "incremental", False, fps)
    out["every_frame_all"] = results_of(case, reference.score)
    out["incremental_all"] = results_of(case, incremental_all.score)
    out["incremental_all"]["same_as_every_frame"] = same(case, incremental_all.score,
                                                         reference.score)
    for name, make in (("every-frame", lambda: detector),
                       ("incremental", lambda: IncrementalDetector(detector))):
        played = play(case, make(), name, True, fps, hold_s)
        out[name] = {**figures(case, played), **results_of(case, played.score),
                     "same_as_every_frame": same(case, played.score, reference.score),
                     "looks": played.looks}
    return out


# --- the whole bench ---------------------------------------------------------------------
def summary(results: Sequence[Mapping[str, Any]], kind: str | None = None) -> dict[str, Any]:
    chosen = [r for r in results if kind is None or r["kind"] == kind]
    out: dict[str, Any] = {"replays": len(chosen)}
    if not chosen:
        return out
    for name in PIPELINES:
        rows = [r[name] for r in chosen]
        changing = sum(r["changing_s"] for r in rows)
        still = sum(r["still_s"] for r in rows)
        duration = sum(r["duration_s"] for r in chosen)
        out[name] = {
            "fps_changing": sum(r["fps_changing"] * r["changing_s"] for r in rows) / changing,
            "fps_changing_worst": min(r["fps_changing"] for r in rows),
            "fps_still": sum(r["fps_still"] * r["still_s"] for r in rows) / still,
            "cores_changing": sum(r["cores_changing"] * r["changing_s"] for r in rows)
            / changing,
            "cores_still": sum(r["cores_still"] * r["still_s"] for r in rows) / still,
            "cores_still_worst": max(r["cores_still"] for r in rows),
            "cpu_s_per_min": sum(r["cpu_s_per_min"] * r2["duration_s"]
                                 for r, r2 in zip(rows, chosen, strict=True)) / duration,
            "delay_median_s": _median([r["delay_median_s"] for r in rows]),
            "delay_max_s": max((r["delay_max_s"] for r in rows
                                if r["delay_max_s"] is not None), default=None),
            "same_as_every_frame": sum(bool(r["same_as_every_frame"]) for r in rows),
            "cores_held": _worst([r.get("cores_held") for r in rows]),
        }
        out[name].update(_totals(rows))
    out["every_frame_all"] = _totals([r["every_frame_all"] for r in chosen])
    out["incremental_all"] = _totals([r["incremental_all"] for r in chosen])
    out["incremental_all"]["same_as_every_frame"] = sum(
        bool(r["incremental_all"]["same_as_every_frame"]) for r in chosen)
    out["decode_cpu_s_per_min"] = (sum(r["decode_cpu_s_per_min"] * r["duration_s"]
                                       for r in chosen)
                                   / sum(r["duration_s"] for r in chosen))
    return out


def _worst(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    if "events_exact" in rows[0]:
        return {"events_exact": sum(bool(r["events_exact"]) for r in rows),
                "events_right": sum(r["events_right"] for r in rows),
                "events_in_order": sum(r["events_in_order"] for r in rows),
                "events_false": sum(r["events_false"] for r in rows),
                "events_true": sum(r["events_true"] for r in rows)}
    return {"committed": sum(r["committed"] for r in rows),
            "right": sum(r["right"] for r in rows),
            "found": sum(r["found_count"] for r in rows),
            "states": sum(r["states"] for r in rows),
            "final_right": sum(bool(r["final_right"]) for r in rows),
            "false_states": sum(r["false_states"] for r in rows)}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def print_table(results: Sequence[Mapping[str, Any]], fps: float) -> None:
    print(f"machine: {machine()}; input 1280x720 at {fps:g} fps")
    for kind in ("tiles", "cards"):
        s = summary(results, kind)
        if s["replays"] == 0:
            continue
        print(f"\n{kind}: {s['replays']} replay(s); decoding alone "
              f"{s['decode_cpu_s_per_min']:.1f} CPU s per minute")
        print(f"{'pipeline':>12} | {'fps changing':>12} {'worst':>5} {'fps still':>9} | "
              f"{'cores changing':>14} {'still':>5} {'worst':>5} | {'CPU s/min':>9} | "
              f"{'delay med':>9} {'max':>5} | results (paced) | same as every-frame")
        for name in PIPELINES:
            r = s[name]
            res = (f"{r['right']}/{r['committed']} right, found {r['found']}/{r['states']}, "
                   f"final {r['final_right']}, false {r['false_states']}"
                   if kind == "tiles" else _card_results(r))
            print(f"{name:>12} | {r['fps_changing']:>12.1f} {r['fps_changing_worst']:>5.1f} "
                  f"{r['fps_still']:>9.1f} | {r['cores_changing']:>14.2f} "
                  f"{r['cores_still']:>5.2f} {r['cores_still_worst']:>5.2f} | "
                  f"{r['cpu_s_per_min']:>9.1f} | {_s(r['delay_median_s']):>9} "
                  f"{_s(r['delay_max_s']):>5} | {res} | {r['same_as_every_frame']}/"
                  f"{s['replays']}")
        for name in ("every_frame_all", "incremental_all"):
            r = s[name]
            res = (f"{r['right']}/{r['committed']} right, found {r['found']}/{r['states']}, "
                   f"final {r['final_right']}, false {r['false_states']}"
                   if kind == "tiles" else _card_results(r))
            extra = (f"; same as every-frame {r['same_as_every_frame']}/{s['replays']}"
                     if "same_as_every_frame" in r else "")
            print(f"  every video frame, {name.split('_all')[0].replace('_', '-')}: {res}{extra}")
        for name in PIPELINES:
            if s[name]["cores_held"] is not None:
                print(f"  last frame held still, {name}: {s[name]['cores_held']:.2f} of a core "
                      f"(the worst replay's, after its first {HOLD_SETTLE_S:g} s)")
    print("\nfps: frames the pipeline took per second of video (a live camera's newest frame "
          "each time); cores: CPU seconds (all threads, decoding included) per second of "
          f"video; changing: a hand in view until {EVENT_WINDOW_S:g} s after it left; "
          "delay: a move settling to the first event showing it.")


def _card_results(r: Mapping[str, Any]) -> str:
    return (f"events right before the first wrong one {r['events_right']}/{r['events_true']}, "
            f"in order {r['events_in_order']}/{r['events_true']} with {r['events_false']} "
            "not true")


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=6, help="tile replays (default 6)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--no-cards", dest="cards", action="store_false")
    parser.add_argument("--model", default=None)
    parser.add_argument("--realdata", default=None)
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--verbose", action="store_true", help="a line per replay as it ends")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--hold", type=float, default=0.0, metavar="S",
                        help="after each replay, its last frame (with a camera's noise) for S "
                        f"seconds more, paced: a table left still; its cost after the first "
                        f"{HOLD_SETTLE_S:g} s (default 0: none)")
    args = parser.parse_args(argv)
    if args.hold and args.hold <= HOLD_SETTLE_S:
        parser.error(f"--hold must be over {HOLD_SETTLE_S:g} seconds, not {args.hold:g}")
    out = Path(args.out)
    cases = tile_cases(out, args.replays, args.seed, args.fps, args.model, args.realdata)
    if args.cards:
        cases.append(card_case(out, args.fps, args.model))
    results = []
    for case in cases:
        result = run_case(case, args.model, args.fps, args.hold)
        results.append(result)
        if args.verbose:
            print(json.dumps(result), flush=True)
    if args.json:
        print(json.dumps({"machine": machine(), "fps": args.fps, "results": results,
                          "tiles": summary(results, "tiles"),
                          "cards": summary(results, "cards")}))
    else:
        print_table(results, args.fps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
