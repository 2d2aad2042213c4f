"""``tabletop adapt --layout --light`` on the real tile set: one layout photo composed
from real crops of the adapt photos, measured on the other photos.

    python -m bench.layout_adapt [--realdata DIR] [--seed 0] [--json OUT]

The tile photos of ``<realdata>/rummikub-tiles`` are split as the replays split them
(``vision.replay.photo_split``): the layout photo is composed of crops of the *adapt*
photos only, the set laid out in the adapt order (rows K, B, O, R of 1..13, then the
jokers) on a plain table; a label no adapt photo shows is filled with a crop of
another number of its colour (the light adapt learns inks, not numbers).  The
shipped detector labels the photo by its order and ``adapt_light`` learns the set's
inks from it, as the command does.  The shipped model and the adapted one then read
the *measure* photos (``tabletop eval``'s figures, Wilson 95 % intervals) and are
compared item by item (exact McNemar).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from tabletop.vision.adapt import TILE_ORDER, adapt_light, adapted_model, layout_to_jsonl
from tabletop.vision.detector import Detector
from tabletop.vision.evaluate import compare, evaluate_truths, labelled_truths
from tabletop.vision.replay import CropBank, photo_name, photo_split, require_realdata

TILE_HEIGHT = 90


def compose_layout(bank: CropBank, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """The set laid out in :data:`TILE_ORDER` from ``bank``'s crops, and how many places
    took a crop of another number of the colour."""
    columns = max(len(row) for row in TILE_ORDER)
    image = np.full((len(TILE_ORDER) * (TILE_HEIGHT + 40) + 40, columns * 110 + 60, 3),
                    (70, 110, 150), np.uint8)
    image = np.clip(image + rng.normal(0, 6, image.shape), 0, 255).astype(np.uint8)
    filled = 0
    for r, row in enumerate(TILE_ORDER):
        x = 30
        for label in row:
            crops = bank.of(label)
            if not crops:
                crops = tuple(crop for other in bank.labels() if other[0] == label[0]
                              and other != "JK" for crop in bank.of(other))
                filled += 1
            piece = crops[int(rng.integers(len(crops)))].image
            width = round(piece.shape[1] * TILE_HEIGHT / piece.shape[0])
            y = 30 + r * (TILE_HEIGHT + 40)
            image[y:y + TILE_HEIGHT, x:x + width] = cv2.resize(
                piece, (width, TILE_HEIGHT), interpolation=cv2.INTER_AREA)
            x += width + 14
    return image, filled


def run(realdata: str | None, seed: int) -> dict[str, Any]:
    folder = require_realdata(realdata)
    split = photo_split(folder)
    bank = CropBank.load(folder, use_images=split.adapt, max_aspect=0.95)
    image, filled = compose_layout(bank, np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as scratch:
        photo = Path(scratch) / "layout.jpg"
        cv2.imwrite(str(photo), image)
        labelled = layout_to_jsonl([photo], Path(scratch) / "layout.jsonl", "tiles")
        adapt_light([labelled], Path(scratch) / "model")
        shipped, adapted = Detector(), Detector(adapted_model(Path(scratch) / "model"))
        measure = set(split.measure)
        runs: tuple[list[Any], list[Any]] = ([], [])
        annotations = folder / "rummikub-tiles" / "annotations.jsonl"
        names = [json.loads(line)["image"] for line in annotations.read_text().splitlines()
                 if line.strip()]
        for name, (picture, truth) in zip(names, labelled_truths(annotations), strict=True):
            if photo_name(name) not in measure:
                continue
            runs[0].append((truth, shipped(picture)))
            runs[1].append((truth, adapted(picture)))
    before, after = evaluate_truths(runs[0], "shipped"), evaluate_truths(runs[1], "adapted")
    return {"layout_places_filled_from_other_numbers": filled,
            "adapt_photos": len(split.adapt), "measure_photos": len(runs[0]),
            "shipped": before.to_json(), "adapted": after.to_json(),
            "comparison": compare(runs[0], runs[1], "measure",
                                  ("shipped", "adapted")).to_json()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.layout_adapt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--realdata", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    result = run(args.realdata, args.seed)
    print(f"layout from {result['adapt_photos']} adapt photos "
          f"({result['layout_places_filled_from_other_numbers']} places from other numbers); "
          f"measured on {result['measure_photos']} photos")
    for name in ("shipped", "adapted"):
        part = result[name]
        low, high = part["intervals"]["identity"]
        print(f"  {name:<8} found {part['found']:.3f}  identity {part['identity']:.3f} "
              f"({low:.3f}-{high:.3f})  precision {part['precision']:.3f}")
    both = result["comparison"]
    print(f"  only shipped {both['only_first_right']}, only adapted "
          f"{both['only_second_right']}, McNemar p {both['mcnemar_p']:.3g}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
