"""Latency of the shipped detector on 1280x720 frames: ONNX Runtime against
ultralytics' default PyTorch path, same weights, same frames, one run.

The shipped model is two-stage (vision/reader.py): the finder (YOLO, two
classes) and the reader (crop classifier, ONNX in both paths).  Timed per
frame, after warm-up:

* ``finder``: the finder alone, one pass at the base input size,
  ``models/tabletop.onnx`` through ONNX Runtime against ``models/tabletop.pt``
  through ``YOLO.predict`` (letterbox, NMS and the copy back to pixels
  included in both);
* ``single``: finder + reader, one finder pass (``--zoom 1``);
* ``whole``: the complete default ``Detector(image)`` call: the finder at the
  base size and zoomed (``DEFAULT_ZOOM``), the passes merged, one reader crop
  per tile and two per card index (as found and upside down,
  ``DEFAULT_CARD_TURNS``; the live pipeline's setting);
  With a card finder shipped (``tabletop.cards.onnx`` / ``.cards.pt``) its two
  passes run too, on every one of these frames: each has card indices;
* ``nocards``: the same without the card finder (``--card-finder off``);
* ``onereader``: the default with card indices named by the reader that names
  the tiles (``--card-reader off``) rather than by the card reader
  (``tabletop.cards.reader.onnx``);
* ``tiles``: the default on tile-only frames, where the card finder does not
  run unless the finder boxes a card index;
* ``plain``: the default reading card indices once (``--card-turns 1``);
* ``turns4``: the default reading card indices at all four quarter turns
  (``--card-turns 4``);
* ``views5``: the same reading each box from five nudged crops
  (``--views 5``).

    python -m bench.detect_latency [--frames 30] [--repeat 3] [--threads N]

Frames are rendered held-out scenes (seed 424242, not timed): mixed ones, and
tile-only ones for ``tiles``.  Prints
medians, p95 and the ratio PyTorch / ONNX; ``--json`` for one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def frames(count: int, size: tuple[int, int] = (1280, 720), kind: str = "mixed") -> list[Any]:
    import cv2
    import numpy as np

    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene

    out = []
    for index in range(count):
        scene = render_scene(image_seed(424242, index), size[0], size[1], kind)
        out.append(cv2.imdecode(np.frombuffer(scene.encoded, np.uint8), cv2.IMREAD_COLOR))
    return out


def time_calls(call: Any, images: list[Any], repeat: int) -> list[float]:
    for image in images[:3]:
        call(image)  # warm-up: first calls allocate
    times = []
    for _ in range(repeat):
        for image in images:
            start = time.perf_counter()
            call(image)
            times.append((time.perf_counter() - start) * 1000)
    return times


def summary(times: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(times), 2),
            "p95_ms": round(percentile(times, 0.95), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", default=str(ROOT / "models"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ["YOLO_OFFLINE"] = "1"

    from tabletop.vision.detector import Detector, DetectorSettings

    models = Path(args.models)
    onnx = Detector(models / "tabletop.onnx")
    torch_path = Detector(models / "tabletop.pt", DetectorSettings(imgsz=onnx.imgsz))
    images = frames(args.frames)
    tile_images = frames(args.frames, kind="tiles")
    result: dict[str, Any] = {"frame": "1280x720", "imgsz": onnx.imgsz,
                              "zoom_imgsz": onnx.zoom_imgsz,
                              "card_finder": [onnx.card_finder_way, torch_path.card_finder_way],
                              "frames": len(images), "repeat": args.repeat}

    def finder_only(detector: Detector) -> Any:
        reader = detector.reader
        detector.reader = None  # the finder's boxes alone

        def call(image: Any) -> Any:
            return detector._pass(image, detector.imgsz)
        return call, reader

    parts = ("finder", "single", "whole", "nocards", "onereader", "tiles", "plain",
             "turns4", "views5")
    # each variation but the finder alone is the default detector with one setting changed
    varied: dict[str, dict[str, Any]] = {
        "single": {"zoom": 1.0}, "nocards": {"card_finder": "off"},
        "onereader": {"card_reader": "off"}, "plain": {"card_turns": 1},
        "turns4": {"card_turns": 4}, "views5": {"views": 5}}

    for name, detector in (("onnxruntime", onnx), ("ultralytics", torch_path)):
        call, reader = finder_only(detector)
        result[f"finder_{name}"] = summary(time_calls(call, images, args.repeat))
        detector.reader = reader
        result[f"whole_{name}"] = summary(time_calls(detector, images, args.repeat))
        result[f"tiles_{name}"] = summary(time_calls(detector, tile_images, args.repeat))
        for part, changes in varied.items():
            other = Detector(detector.path, replace(detector.settings, **changes))
            result[f"{part}_{name}"] = summary(time_calls(other, images, args.repeat))
    for part in parts:
        result[f"{part}_ratio"] = round(result[f"{part}_ultralytics"]["median_ms"]
                                        / result[f"{part}_onnxruntime"]["median_ms"], 2)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"1280x720 frames at imgsz {onnx.imgsz} (zoomed pass {onnx.zoom_imgsz}), "
              f"{len(images)} frames x {args.repeat}")
        for part in parts:
            o, u = result[f"{part}_onnxruntime"], result[f"{part}_ultralytics"]
            print(f"{part:9s} onnxruntime {o['median_ms']:7.2f} ms (p95 {o['p95_ms']:.2f})   "
                  f"ultralytics {u['median_ms']:7.2f} ms (p95 {u['p95_ms']:.2f})   "
                  f"ratio {result[f'{part}_ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
