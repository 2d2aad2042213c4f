"""Close-ups of real cards (and tiles): views of ``bridge-cards``' photos (with
``--tiles``, of ``rummikub-tiles``') a 1/k of their width (k = 1..4, in 16:9 windows
overlapping by about a third), each brought to 1280x720, read with and without the
zoomed-out passes (``--zoom-out 1``: neither the tiles' nor the card indices',
``vision.detector.CARD_ZOOM_OUT``).

    python -m bench.card_closeups [--photos adapt|measure|all] [--tiles] [--realdata DIR]
        [--json]

A view keeps the labelled indices lying wholly inside it; an index is read right
where a detection of its label and kind covers it at IoU 0.5.  Per view share: the
indices' median length, identity with a Wilson 95 % interval, and the two ways
compared index by index (exact McNemar).  Precision counts the indices a window's
edge cuts, which are read but not labelled, so it is lower than on whole photos.
``bridge-cards`` is split by ``studio.card_replay.CARD_SPLIT`` (the trigger and floor
of the card indices' pass were chosen on the *adapt* photo), ``rummikub-tiles`` by
``studio.replay.photo_split``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.studio.card_replay import card_photos
from tabletop.studio.evaluate import evaluate, items_read_right, mcnemar_exact, wilson_interval
from tabletop.studio.replay import find_realdata, photo_name, photo_split
from tabletop.vision.detections import Detections, read_jsonl
from tabletop.vision.detector import Detector, DetectorSettings

SHARES = (1, 2, 3, 4)
"""A view is 1/k of the photo's width, for each k."""
SIZE = (1280, 720)
OVERLAP = 1.5
"""Windows per side: this many times the side over the window's, rounded up."""


def windows(width: int, height: int, share: int) -> Iterator[tuple[float, float, float, float]]:
    """The 16:9 windows (x, y, width, height) of a ``width`` x ``height`` photo a
    1/``share`` of its width (less where the photo is not tall enough), overlapping."""
    window_w = width / share
    window_h = min(height, window_w * SIZE[1] / SIZE[0])
    window_w = window_h * SIZE[0] / SIZE[1]
    across = 1 if window_w >= width - 1e-6 else int(np.ceil(width / window_w * OVERLAP))
    down = 1 if window_h >= height - 1e-6 else int(np.ceil(height / window_h * OVERLAP))
    for x in np.linspace(0, width - window_w, across):
        for y in np.linspace(0, height - window_h, down):
            yield float(x), float(y), window_w, window_h


def close_up(image: npt.NDArray[np.uint8], truth: Detections,
             window: tuple[float, float, float, float]
             ) -> tuple[npt.NDArray[np.uint8], Detections] | None:
    """The window brought to :data:`SIZE` with the labelled items wholly inside it (None
    where there are none)."""
    import cv2

    x, y, w, h = window
    b = truth.boxes
    inside = (b[:, 0] >= x) & (b[:, 2] <= x + w) & (b[:, 1] >= y) & (b[:, 3] <= y + h)
    if not inside.any():
        return None
    scale = SIZE[0] / w
    view = cv2.warpAffine(image, np.array([[scale, 0, -x * scale], [0, scale, -y * scale]]),
                          SIZE, flags=cv2.INTER_CUBIC)
    boxes = (b[inside] - np.array([x, y, x, y])) * scale
    return np.asarray(view, np.uint8), Detections(
        boxes, tuple(np.asarray(truth.labels)[inside]), tuple(np.asarray(truth.kinds)[inside]),
        np.ones(int(inside.sum())))


def card_pictures(root: Path, photos: str, tiles: bool = False
                  ) -> list[tuple[npt.NDArray[np.uint8], Detections]]:
    """The labelled photos of ``bridge-cards`` (``tiles``: ``rummikub-tiles``) in
    ``photos`` (the split's part or ``all``), each with its labelled boxes in the
    file's pixels."""
    import cv2

    if tiles:
        split = photo_split(root)
        names: tuple[str, ...] | None = (None if photos == "all" else
                                         split.adapt if photos == "adapt" else split.measure)
        folder = root / "rummikub-tiles"
    else:
        names = card_photos(photos)
        folder = root / "bridge-cards"
    pictures = []
    for record in read_jsonl(folder / "annotations.jsonl"):
        name = photo_name(record.image) if tiles else Path(record.image).stem
        if names is not None and name not in names:
            continue
        image = cv2.imread(str(folder / record.image), cv2.IMREAD_COLOR)
        if image is None:
            raise SystemExit(f"cannot read {str(folder / record.image)!r}")
        truth = record.detections.scaled(image.shape[1] / record.width,
                                         image.shape[0] / record.height)
        pictures.append((np.asarray(image, np.uint8), truth))
    return pictures


def measure(photos: str, realdata: str | None = None, tiles: bool = False) -> dict[str, Any]:
    """Both ways on every view of the chosen photos, per view share."""
    root = find_realdata(realdata)
    if root is None:
        raise SystemExit("the real photos (realdata) are missing: pass --realdata DIR")
    pictures = card_pictures(Path(root), photos, tiles)
    ways = {"without": Detector(settings=DetectorSettings(zoom_out=1.0)), "with": Detector()}
    rows: dict[str, Any] = {}
    for share in SHARES:
        pairs: dict[str, list[tuple[Detections, Detections]]] = {way: [] for way in ways}
        lengths: list[float] = []
        for image, truth in pictures:
            for window in windows(image.shape[1], image.shape[0], share):
                made = close_up(image, truth, window)
                if made is None:
                    continue
                view, labelled = made
                b = labelled.boxes
                lengths.extend(np.maximum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]).tolist())
                for way, detector in ways.items():
                    pairs[way].append((labelled, detector(view)))
        right = {way: items_read_right(pairs[way]) for way in ways}
        n = len(right["with"])
        row: dict[str, Any] = {"items": n, "median_length": float(np.median(lengths))}
        for way in ways:
            k = int(right[way].sum())
            row[way] = {"right": k, "identity": k / n if n else 0.0,
                        "interval": wilson_interval(k, n),
                        "precision": evaluate(pairs[way], way).precision}
        only_without = int((right["without"] & ~right["with"]).sum())
        only_with = int((right["with"] & ~right["without"]).sum())
        row["only"] = {"without": only_without, "with": only_with,
                       "p": mcnemar_exact(only_without, only_with)}
        rows[f"1/{share}"] = row
    return {"set": "rummikub-tiles" if tiles else "bridge-cards", "photos": photos,
            "views": rows}


def report(results: dict[str, Any]) -> str:
    lines = [f"close-ups of {results['set']} ({results['photos']}), without / with the "
             "zoomed-out passes"]
    for share, row in results["views"].items():
        parts = [f"{share}: {row['items']} items, {row['median_length']:.0f} px"]
        for way in ("without", "with"):
            figure = row[way]
            low, high = figure["interval"]
            parts.append(f"{way} {figure['right']} ({figure['identity']:.3f}, {low:.3f}-"
                         f"{high:.3f}; precision {figure['precision']:.3f})")
        only = row["only"]
        parts.append(f"only without / with {only['without']} / {only['with']} "
                     f"(p {only['p']:.2g})")
        lines.append("  " + "; ".join(parts))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.card_closeups", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--photos", choices=("adapt", "measure", "all"), default="measure")
    parser.add_argument("--tiles", action="store_true", help="rummikub-tiles, not cards")
    parser.add_argument("--realdata", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = measure(args.photos, args.realdata, args.tiles)
    print(json.dumps(results) if args.json else report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
