"""Writing a rendered data set: YOLO layout plus a contract annotations.jsonl.

    DIR/images/000000.jpg     the photos
    DIR/labels/000000.txt     YOLO: class cx cy w h (0..1), class ids of vision.labels
    DIR/data.yaml             names and paths for ultralytics
    DIR/annotations.jsonl     one contract detect line per image (CONTRACT.md)

Image ``i`` is rendered from the seed sequence (master seed, i), so a data set
is the same whatever the number of workers, and any image can be re-made alone.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tabletop.vision.detections import Detections, ImageDetections
from tabletop.vision.labels import CLASS_NAMES, class_id


def image_seed(master_seed: int, index: int) -> int:
    """The seed of image ``index``: independent streams for every (master, index)."""
    return int(np.random.SeedSequence([int(master_seed), int(index)]).generate_state(1)[0])


def yolo_lines(detections: Detections, width: int, height: int,
               class_of: Callable[[str, str], int] = class_id) -> list[str]:
    """YOLO label lines; ``class_of(label, kind)`` gives the class id (the
    detector's by default, the finder's kind-only ids for its data)."""
    lines = []
    for box, label, kind in zip(detections.boxes, detections.labels, detections.kinds,
                                strict=True):
        x1, y1, x2, y2 = (float(v) for v in box)
        lines.append(
            f"{class_of(label, kind)} {(x1 + x2) / 2 / width:.6f} {(y1 + y2) / 2 / height:.6f} "
            f"{(x2 - x1) / width:.6f} {(y2 - y1) / height:.6f}"
        )
    return lines


def data_yaml() -> str:
    """ultralytics' data file; no ``path`` key, so it resolves beside the file.
    Training and validation both point at images/ here; `tabletop train --val`
    takes a separate held-out set."""
    names = "\n".join(f"  {i}: {json.dumps(name)}" for i, name in enumerate(CLASS_NAMES))
    return f"train: images\nval: images\nnc: {len(CLASS_NAMES)}\nnames:\n{names}\n"


@dataclass(frozen=True)
class _Job:
    out: str
    index: int
    seed: int
    width: int
    height: int
    kind: str
    palettes: tuple[str, ...] | None = None


def _render_one(job: _Job) -> str:
    import cv2

    from tabletop.studio.synth.scene import RenderOptions, render_scene

    cv2.setNumThreads(1)
    scene = render_scene(image_seed(job.seed, job.index), job.width, job.height, job.kind,
                         RenderOptions(palettes=job.palettes))
    stem = f"{job.index:06d}"
    out = Path(job.out)
    (out / "images" / f"{stem}.jpg").write_bytes(scene.encoded)
    lines = yolo_lines(scene.detections, job.width, job.height)
    (out / "labels" / f"{stem}.txt").write_text("".join(line + "\n" for line in lines))
    record = ImageDetections(f"images/{stem}.jpg", job.width, job.height, scene.detections)
    return json.dumps(record.to_json(with_confidence=False))


def parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"size must be WIDTHxHEIGHT like 1280x720, not {text!r}") from None
    if not (64 <= width <= 8192 and 64 <= height <= 8192):
        raise ValueError(f"size {text!r} is outside 64..8192 pixels per side")
    return width, height


def generate_dataset(out: str | Path, images: int, seed: int, kind: str = "mixed",
                     size: tuple[int, int] = (1280, 720), workers: int | None = None,
                     progress: Callable[[int, int, float], None] | None = None,
                     palettes: tuple[str, ...] | None = None) -> Path:
    """Render ``images`` photos into ``out`` on ``workers`` processes (default: all cores);
    ``palettes``: the tile sets' ink palette families (None: the training ones)."""
    from tabletop.studio.synth.scene import SCENE_KINDS
    from tabletop.studio.synth.tiles import PALETTES

    unknown = [name for name in palettes or () if name not in PALETTES]
    if unknown:
        raise ValueError(f"unknown palette {unknown[0]!r}; known: {', '.join(PALETTES)}")
    if kind not in SCENE_KINDS:
        raise ValueError(f"--kind must be one of {', '.join(SCENE_KINDS)}, not {kind!r}")
    if images < 1:
        raise ValueError(f"--images must be at least 1, not {images}")
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(parents=True, exist_ok=True)
    jobs = [_Job(str(out), i, seed, size[0], size[1], kind, palettes) for i in range(images)]
    workers = max(1, min(workers or os.cpu_count() or 1, images))
    start = time.monotonic()
    lines: list[str] = []
    if workers == 1:
        results = map(_render_one, jobs)
        for done, line in enumerate(results, start=1):
            lines.append(line)
            if progress:
                progress(done, images, time.monotonic() - start)
    else:
        context = multiprocessing.get_context("spawn" if os.name == "nt" else "fork")
        with context.Pool(workers) as pool:
            for done, line in enumerate(pool.imap(_render_one, jobs, chunksize=4), start=1):
                lines.append(line)
                if progress:
                    progress(done, images, time.monotonic() - start)
    (out / "annotations.jsonl").write_text("".join(line + "\n" for line in lines))
    (out / "data.yaml").write_text(data_yaml())
    return out
