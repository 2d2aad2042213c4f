"""Memory and event delay of ``tabletop run`` watching a live camera stream for minutes.

The short Sabra round composed from the real tile photos (``studio.replay.compose_game``)
is served in a loop as an MJPEG stream on 127.0.0.1 at its 10 frames a second, like a
phone's IP-camera app; ``tabletop run --source http://... --headless`` watches it with
the shipped model for ``--minutes``.  Every ``--every`` seconds the run's resident memory
(``VmRSS``) is sampled; at the end the run is stopped with Ctrl-C (SIGINT), as a person
stops it.

    python -m bench.stream_memory [--minutes 10] [--every 10]

Prints the memory at each minute, the growth per minute after the first (a least-squares
slope, MB/min: flat is about 0), and the delay from each settled table being served to
its ``table`` event appearing in the run's event file (median and maximum; the loop's
restart, which sweeps the table bare without a hand, is not a move and is left out).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parent.parent
# the MJPEG server the tests serve streams with: a phone camera app on 127.0.0.1
sys.path.insert(0, str(ROOT / "tests"))
from mjpeg_server import MjpegServer  # noqa: E402

from tabletop.studio.replay import compose_game  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def slope(points: list[tuple[float, float]]) -> float:
    xs, ys = zip(*points, strict=True)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()

    replay = compose_game(("Ana", "Ben"), seed=args.seed)
    jpegs = [cv2.imencode(".jpg", replay.frame(i), [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
             for i in range(replay.frame_count)]
    fps = replay.settings.fps
    settled = {round(step.settled_t * fps) for step in replay.timings}
    served: list[float] = []  # wall times a settled frame was first served, in order
    last = [-1]

    def frame(number: int) -> bytes:
        index = number % len(jpegs)
        if index in settled and number != last[0]:
            served.append(time.monotonic())
        last[0] = number
        return jpegs[index]

    work = Path(tempfile.mkdtemp(prefix="tabletop-stream-"))
    zones = work / "zones.json"
    replay.zones.save(zones)
    events_path = work / "events.jsonl"
    env = {**os.environ, "TABLETOP_DATA_DIR": str(work / "data")}
    samples: list[tuple[float, float]] = []
    seen_at: list[tuple[float, dict[str, object]]] = []
    with MjpegServer(frame, fps=fps, timeline="server") as camera:
        process = subprocess.Popen(
            [sys.executable, "-m", "tabletop", "-q", "run", "--source", camera.url,
             "--variant", "sabra", "--players", "Ana,Ben", "--zones", str(zones),
             "--no-markers", "--headless", "--events-jsonl", str(events_path)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        started = time.monotonic()
        next_sample = started
        read = 0
        while time.monotonic() - started < args.minutes * 60 and process.poll() is None:
            now = time.monotonic()
            if now >= next_sample:
                samples.append(((now - started) / 60, rss_mb(process.pid)))
                next_sample += args.every
            if events_path.exists():
                lines = events_path.read_text().splitlines()
                for line in lines[read:]:
                    if line.endswith("}"):
                        seen_at.append((now, json.loads(line)))
                        read += 1
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    print(f"tabletop run on a {len(jpegs) / fps:.1f} s game looped as an MJPEG stream at "
          f"{fps:g} fps for {args.minutes:g} min (exit {process.returncode})")
    for minute in range(int(args.minutes) + 1):
        near = min(samples, key=lambda s: abs(s[0] - minute))
        print(f"  minute {near[0]:5.2f}: {near[1]:7.1f} MB")
    later = [s for s in samples if s[0] >= 1.0]
    if len(later) >= 2:
        print(f"  growth after the first minute: {slope(later):+.2f} MB/min "
              f"(min {min(m for _, m in later):.1f}, max {max(m for _, m in later):.1f} MB)")
    # the loop's restart sweeps every item away at once, with no hand: not a move, and the
    # tracker lets vanished items go only after a grace; moves are the tables with melds
    tables = [t for t, e in seen_at if e["type"] == "table" and e["melds"]]
    delays = []
    for t in tables:
        before = [s for s in served if s <= t]
        if before and t - before[-1] < 5.0:
            delays.append(t - before[-1])
    if delays:
        print(f"  settled table to its event: median {statistics.median(delays):.2f} s, "
              f"max {max(delays):.2f} s over {len(delays)} tables")
    print("  " + " ".join(line for line in stderr.splitlines()[-6:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
