"""Frames per second of the live pipeline without the neural detector, and the event delay.

The scripted Sabra and Rommé games are rendered at each size (not timed), then
played back twice: the *floor* only decodes the video's frames; the *pipeline*
decodes, asks the oracle detector (the renderer's boxes with jitter and
misses), tracks, watches for stillness, reads the table and runs the game.

    python -m bench.pipeline_fps [--sizes 1280x720,640x360] [--repeat 3]

Prints per size: frames per second and per-frame milliseconds of both, their
ratio, the slowest frame, and the delay from a move settling (the last frame
with the hand in it) to the committed snapshot that makes its events, in
video time (what the stillness rule waits) plus the processing of that frame.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tabletop.engine.events import GameWarning, event_to_json
from tabletop.live.oracle import read_truth, replay_video, truth_path_for
from tabletop.live.scenario import load_scenario
from tabletop.live.sources import open_source
from tabletop.studio.synth.scripted import VideoSettings, render_video

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("sabra", "rommee")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass
class Figures:
    size: str
    frames: int
    floor_s: float
    pipeline_s: float
    frame_ms: list[float]
    delays_s: list[float]
    matched: bool

    @property
    def floor_fps(self) -> float:
        return self.frames / self.floor_s

    @property
    def pipeline_fps(self) -> float:
        return self.frames / self.pipeline_s


def decode_only(video: Path) -> int:
    source = open_source(video)
    count = 0
    try:
        for _ in source:
            count += 1
    finally:
        source.close()
    return count


def delays(header: dict[str, object], committed: list[float]) -> list[float]:
    """Per step that changed the table: its first commit after it settled, minus settling."""
    settled = [float(s["settled_t"]) for s in header["steps"]]  # type: ignore[attr-defined]
    out = []
    for i, t in enumerate(settled):
        end = settled[i + 1] if i + 1 < len(settled) else float("inf")
        first = next((c for c in committed if t < c < end), None)
        if first is not None:
            out.append(first - t)
    return out


def measure(folder: Path, size: tuple[int, int], repeat: int, fps: float = 5.0) -> Figures:
    frames = 0
    floor = pipeline = 0.0
    frame_ms: list[float] = []
    waits: list[float] = []
    matched = True
    for game in GAMES:
        scenario_path = ROOT / "tabletop" / "samples" / "scenarios" / f"{game}.json"
        video = folder / f"{game}-{size[0]}x{size[1]}-{fps:g}fps.mp4"
        if not video.exists():
            render_video(scenario_path, video,
                         VideoSettings(width=size[0], height=size[1], fps=fps))
        scenario = load_scenario(scenario_path)
        header, _ = read_truth(truth_path_for(video))
        best_floor = best_pipe = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            count = decode_only(video)
            best_floor = min(best_floor, time.perf_counter() - start)
            stamps: list[float] = []
            start = time.perf_counter()
            replay = replay_video(video, scenario,
                                  on_frame=lambda t, image, s=stamps: s.append(time.perf_counter()))
            end = time.perf_counter()
            if end - start < best_pipe:
                best_pipe = end - start
                stamps.append(end)
                # one frame's work: from its arrival to the next one's (decode included)
                per_frame = [(b - a) * 1000 for a, b in itertools.pairwise(stamps)]
                committed = replay.committed_t
                events = replay.json_events()
        frames += count
        floor += best_floor
        pipeline += best_pipe
        frame_ms += per_frame
        processing = statistics.median(per_frame) / 1000
        waits += [d + processing for d in delays(header, committed)]
        want = [{k: v for k, v in event_to_json(e).items() if k not in ("seq", "t")}
                for e in scenario.events
                if not (isinstance(e, GameWarning) and e.t in
                        {s["scenario_t"] for s in header["skipped"]})]
        got = [{k: v for k, v in e.items() if k not in ("seq", "t")} for e in events]
        matched = matched and got == want
    return Figures(f"{size[0]}x{size[1]}", frames, floor, pipeline, frame_ms, waits, matched)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1280x720,640x360")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fps", type=float, default=5.0, help="the rendered videos' frame rate")
    parser.add_argument("--keep", help="folder for the rendered videos (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    sizes = [tuple(int(v) for v in s.lower().split("x")) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        results = [measure(folder, (s[0], s[1]), args.repeat, args.fps) for s in sizes]
    print(f"{'size':>9} {'frames':>6} | {'floor fps':>9} {'ms/frame':>8} | {'pipeline fps':>12} "
          f"{'ms/frame':>8} {'p95 ms':>7} {'max ms':>7} | {'ratio':>5} | "
          f"{'delay med s':>11} {'max s':>6} | events")
    for r in results:
        print(f"{r.size:>9} {r.frames:>6} | {r.floor_fps:>9.0f} {1000 / r.floor_fps:>8.2f} | "
              f"{r.pipeline_fps:>12.0f} {1000 / r.pipeline_fps:>8.2f} "
              f"{percentile(r.frame_ms, 0.95):>7.2f} {max(r.frame_ms):>7.2f} | "
              f"{r.floor_fps / r.pipeline_fps:>5.2f} | "
              f"{statistics.median(r.delays_s):>11.2f} {max(r.delays_s):>6.2f} | "
              f"{'exact' if r.matched else 'DIFFER'}")
    print("ratio: pipeline time per frame / decoding time per frame.  delay: last frame with "
          "motion to the frame whose snapshot makes the move's events, plus that frame's "
          "median processing; it moves in steps of one frame "
          f"({1 / args.fps:.2f} s at {args.fps:g} fps).")
    if args.json:
        print(json.dumps([{"size": r.size, "frames": r.frames, "floor_fps": r.floor_fps,
                           "pipeline_fps": r.pipeline_fps, "delays_s": r.delays_s,
                           "matched": r.matched} for r in results]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
