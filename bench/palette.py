"""Tile colours against the table's own inks (``vision.palette``): the ink prior's fit
and the stage's effect, item by item, palette off against on.

    python -m bench.palette --prior DATA [DATA ...]        fit INK_PRIOR on labelled sets
    python -m bench.palette DATA [DATA ...] [--json OUT]   palette off vs on per set

``--prior`` measures the ink of every labelled tile (its labelled box) and prints each
colour's mean and spread of the three ink features, the values of
``vision.palette.INK_PRIOR``; the shipped ones were fitted on rendered sets of the
training palette families (``tabletop synth --kind tiles``) and the real photos of
``rummikub-tiles``.  Fitting on ``other-sets`` would make their figures meaningless.

The comparison runs the shipped model once per photo (finder boxes and reader
probabilities) and names the boxes without and with the palette stage, so the two
differ by the stage alone; per set: identity of each with its Wilson 95 % interval,
the items only one reads right and the exact McNemar p-value.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from tabletop.studio.evaluate import compare, evaluate_truths, labelled_truths
from tabletop.vision.detector import Detector, DetectorSettings
from tabletop.vision.labels import TILE_COLOURS
from tabletop.vision.palette import TablePalette, ink_features


def fit_prior(sets: Sequence[str]) -> dict[str, Any]:
    """Per colour, the mean and spread of the ink features of every labelled tile."""
    by_colour: dict[str, list[np.ndarray]] = {colour: [] for colour in TILE_COLOURS}
    for data in sets:
        for image, truth in labelled_truths(data):
            tiles = truth.detections.of_kind("tile")
            features, measured = ink_features(image, tiles.boxes)
            for label, row, ok in zip(tiles.labels, features, measured, strict=True):
                if ok and label != "JK":
                    by_colour[label[0]].append(row)
    return {colour: {"tiles": len(rows), "mean": np.mean(rows, axis=0).round(1).tolist(),
                     "spread": np.std(rows, axis=0).round(1).tolist()}
            for colour, rows in by_colour.items() if rows}


def compare_palette(data: str) -> dict[str, Any]:
    """The shipped model on one labelled set, palette off and on."""
    detector = Detector(settings=DetectorSettings(palette="off"))
    runs: tuple[list[Any], list[Any]] = ([], [])
    for image, truth in labelled_truths(data):
        found = detector.find(image)
        probabilities = (detector.probabilities(image, found) if len(found)
                         else np.zeros((0, 0)))
        runs[0].append((truth, detector.named(found, probabilities)))
        on = (TablePalette().update(image, found.boxes, probabilities,
                                    np.array([k == "tile" for k in found.kinds]))
              if len(found) else probabilities)
        runs[1].append((truth, detector.named(found, on)))
    off, with_palette = evaluate_truths(runs[0], data), evaluate_truths(runs[1], data)
    comparison = compare(runs[0], runs[1], data, ("off", "on"))
    return {"set": data, "off": off.to_json(), "on": with_palette.to_json(),
            "comparison": comparison.to_json()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.palette", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="+", help="labelled sets (folders or JSONL files)")
    parser.add_argument("--prior", action="store_true", help="fit the ink prior instead")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    if args.prior:
        result: Any = fit_prior(args.data)
        for colour, row in result.items():
            print(f"{colour}: {row['tiles']:>5} tiles  mean {row['mean']}  "
                  f"spread {row['spread']}")
    else:
        result = [compare_palette(data) for data in args.data]
        for row in result:
            off, on, both = row["off"], row["on"], row["comparison"]
            print(f"{row['set']}: {off['labelled']} items in {off['images']} photos")
            for name, part in (("off", off), ("on", on)):
                low, high = part["intervals"]["identity"]
                print(f"  palette {name:<3} identity {part['identity']:.3f} "
                      f"({low:.3f}-{high:.3f})  found {part['found']:.3f}")
            print(f"  only off {both['only_first_right']}, only on {both['only_second_right']}, "
                  f"McNemar p {both['mcnemar_p']:.3g}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
