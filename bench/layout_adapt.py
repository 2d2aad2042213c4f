"""``tabletop adapt --layout --light`` on the real tile set: one layout photo composed
from real crops of the adapt photos, measured on the other photos.

    python -m bench.layout_adapt [--realdata DIR] [--seed 0] [--json OUT]

The tile photos of ``<realdata>/rummikub-tiles`` are split as the replays split them
(``studio.replay.photo_split``): the layout photo is composed of crops of the *adapt*
photos only, the set laid out in the adapt order (rows K, B, O, R of 1..13, then the
jokers) on a plain table, and labelled by the shipped detector from its order, as the
command labels it.  A label no adapt photo shows takes a crop of another number of its
colour, so that the rows fill the order: right for the inks, wrong for the numerals.
Three models then read the *measure* photos:

* ``shipped``: the shipped model;
* ``inks``: the set's inks learnt from the whole layout photo (the light adapt without
  its head);
* ``head``: those inks and the light head (``vision.reader_head``) fitted on the
  places that show their own label only: the photo is passed as partially labelled,
  without the places filled from other numbers, so the head is taught no wrong
  numeral but also sees no bare table (``none`` is not refit), and it refits only the
  labels the adapt photos show, fewer than the command asks of a layout
  (``studio.adapt.HEAD_MIN_LABELS``), which this bench lowers to what they show.

Each is scored by ``tabletop eval``'s figures (Wilson 95 % intervals) and compared item
by item (exact McNemar).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from tabletop.studio.adapt import TILE_ORDER, adapt_light, adapted_model, layout_to_jsonl
from tabletop.studio.evaluate import compare, evaluate_truths, labelled_truths
from tabletop.studio.replay import CropBank, photo_name, photo_split, require_realdata
from tabletop.vision.detector import Detector, set_inks_path

TILE_HEIGHT = 90
WAYS = ("shipped", "inks", "head")


def compose_layout(bank: CropBank, rng: np.random.Generator) -> tuple[np.ndarray, list[int]]:
    """The set laid out in :data:`TILE_ORDER` from ``bank``'s crops, and the places (in
    the order, counted row by row) that took a crop of another number of the colour."""
    columns = max(len(row) for row in TILE_ORDER)
    image = np.full((len(TILE_ORDER) * (TILE_HEIGHT + 40) + 40, columns * 110 + 60, 3),
                    (70, 110, 150), np.uint8)
    image = np.clip(image + rng.normal(0, 6, image.shape), 0, 255).astype(np.uint8)
    filled = []
    place = 0
    for r, row in enumerate(TILE_ORDER):
        x = 30
        for label in row:
            crops = bank.of(label)
            if not crops:
                crops = tuple(crop for other in bank.labels() if other[0] == label[0]
                              and other != "JK" for crop in bank.of(other))
                filled.append(place)
            piece = crops[int(rng.integers(len(crops)))].image
            width = round(piece.shape[1] * TILE_HEIGHT / piece.shape[0])
            y = 30 + r * (TILE_HEIGHT + 40)
            image[y:y + TILE_HEIGHT, x:x + width] = cv2.resize(
                piece, (width, TILE_HEIGHT), interpolation=cv2.INTER_AREA)
            x += width + 14
            place += 1
    return image, filled


def true_places(labelled: Path, filled: Sequence[int], out: Path) -> tuple[Path, int]:
    """The labelled layout at ``labelled`` without the places of ``filled``, written to
    ``out`` as a partially labelled photo; and how many labels it still shows."""
    line = json.loads(labelled.read_text(encoding="utf-8").splitlines()[0])
    dropped = set(filled)
    # the labeller lists the boxes in the order's places, row by row
    line["detections"] = [item for place, item in enumerate(line["detections"])
                          if place not in dropped]
    line["partial"] = True
    line["image"] = str((labelled.parent / line["image"]).resolve())
    out.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return out, len({item["label"] for item in line["detections"]})


def run(realdata: str | None, seed: int) -> dict[str, Any]:
    folder = require_realdata(realdata)
    split = photo_split(folder)
    bank = CropBank.load(folder, use_images=split.adapt, max_aspect=0.95)
    image, filled = compose_layout(bank, np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        photo = work / "layout.jpg"
        cv2.imwrite(str(photo), image)
        labelled = layout_to_jsonl([photo], work / "layout.jsonl", "tiles")
        inks = adapt_light([labelled], work / "inks", head_min_labels=len(TILE_ORDER) * 99)
        partial, shown = true_places(labelled, filled, work / "true-places.jsonl")
        headed = adapt_light([partial], work / "head", head_min_labels=shown)
        # the same inks in both, so that the head is the only difference
        shutil.copy2(set_inks_path(adapted_model(work / "inks")),
                     set_inks_path(adapted_model(work / "head")))
        detectors = {"shipped": Detector(), "inks": Detector(adapted_model(work / "inks")),
                     "head": Detector(adapted_model(work / "head"))}
        measure = set(split.measure)
        runs: dict[str, list[Any]] = {way: [] for way in WAYS}
        annotations = folder / "rummikub-tiles" / "annotations.jsonl"
        names = [json.loads(line)["image"] for line in annotations.read_text().splitlines()
                 if line.strip()]
        for name, (picture, truth) in zip(names, labelled_truths(annotations), strict=True):
            if photo_name(name) not in measure:
                continue
            for way, detector in detectors.items():
                runs[way].append((truth, detector(picture)))
    result: dict[str, Any] = {
        "layout_places_filled_from_other_numbers": len(filled),
        "head_labels": shown, "head_fit": (headed.head or {}).get("reader"),
        "inks_adapted": list(inks.adapted), "head_adapted": list(headed.adapted),
        "adapt_photos": len(split.adapt), "measure_photos": len(runs["shipped"])}
    for way in WAYS:
        result[way] = evaluate_truths(runs[way], way).to_json()
    for first, second in (("shipped", "inks"), ("shipped", "head"), ("inks", "head")):
        result[f"{first}_vs_{second}"] = compare(runs[first], runs[second], "measure",
                                                 (first, second)).to_json()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.layout_adapt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--realdata", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    result = run(args.realdata, args.seed)
    print(f"layout from {result['adapt_photos']} adapt photos "
          f"({result['layout_places_filled_from_other_numbers']} places from other numbers; "
          f"the head fitted on the other places, {result['head_labels']} labels); "
          f"measured on {result['measure_photos']} photos")
    for name in WAYS:
        part = result[name]
        low, high = part["intervals"]["identity"]
        plow, phigh = part["intervals"]["precision"]
        print(f"  {name:<8} found {part['found']:.3f}  identity {part['identity']:.3f} "
              f"({low:.3f}-{high:.3f})  precision {part['precision']:.3f} "
              f"({plow:.3f}-{phigh:.3f})")
    for first, second in (("shipped", "inks"), ("shipped", "head"), ("inks", "head")):
        both = result[f"{first}_vs_{second}"]
        print(f"  only {first} {both['only_first_right']}, only {second} "
              f"{both['only_second_right']}, McNemar p {both['mcnemar_p']:.3g}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
