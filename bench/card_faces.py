"""Cards lying apart, read from their index alone and with their whole face.

Rendered tables (no photo) of 4 to 9 cards of one deck design each, none over another,
at any turn, 110 to 320 pixels tall at 1280x720 (indices about 8 to 40 pixels long),
lit, blurred, noised and JPEG-compressed; designs drawn from seeds the face reader's
crops never used.  Each is read by the detector with its face stage off and on
(``DetectorSettings.faces``).  A card is *read* where a detection of its label lies on
it (its box's centre inside the card), *misread* where only other labels do, as
``other-sets``' whole-card photos are scored.

    python -m bench.card_faces [--scenes 40] [--seed 930000] [--model FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import numpy as np

from tabletop.studio.evaluate import mcnemar_exact, wilson_interval
from tabletop.studio.synth.card_faces import LaidCard, laid_out
from tabletop.vision.card_faces import inside
from tabletop.vision.detections import Detections
from tabletop.vision.detector import Detector, DetectorSettings


def score(found: Detections, cards: list[LaidCard]) -> list[str]:
    """Per card: ``read``, ``misread`` or ``missed`` (module docstring)."""
    centres = (found.boxes[:, :2] + found.boxes[:, 2:]) / 2 if len(found) else np.zeros((0, 2))
    out = []
    for card in cards:
        on = [found.labels[i] for i in range(len(found))
              if found.kinds[i] == "card" and inside(card.outline, centres[i])]
        out.append("read" if card.label in on else "misread" if on else "missed")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.card_faces",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=930000)
    parser.add_argument("--model", default=None, help="the finder file (default: shipped)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.scenes < 1:
        parser.error(f"--scenes must be at least 1, not {args.scenes}")
    ways = {way: Detector(args.model, DetectorSettings(faces=way)) for way in ("off", "on")}
    if ways["on"].face_reader is None:
        parser.error("the model has no face reader (tabletop.faces.onnx beside it)")
    results: dict[str, list[str]] = {way: [] for way in ways}
    for k in range(args.scenes):
        image, cards = laid_out(args.seed + k)
        for way, detector in ways.items():
            results[way] += score(detector(image), cards)
    total = len(results["off"])
    report: dict[str, object] = {"scenes": args.scenes, "cards": total}
    for way, outcome in results.items():
        read = outcome.count("read")
        low, high = wilson_interval(read, total)
        report[way] = {"read": read, "share": read / total, "interval": [low, high],
                       "misread": outcome.count("misread"), "missed": outcome.count("missed")}
    only_off = sum(a == "read" and b != "read" for a, b in zip(results["off"], results["on"],
                                                                 strict=True))
    only_on = sum(a != "read" and b == "read" for a, b in zip(results["off"], results["on"],
                                                                strict=True))
    report["only_off"], report["only_on"] = only_off, only_on
    report["p"] = mcnemar_exact(only_off, only_on)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{args.scenes} rendered tables, {total} cards lying apart")
    for way in ways:
        part = report[way]
        assert isinstance(part, dict)
        print(f"faces {way:3}: read {part['read']} ({part['share']:.3f}, "
              f"{part['interval'][0]:.3f}-{part['interval'][1]:.3f}), misread "
              f"{part['misread']}, missed {part['missed']}")
    print(f"only off / only on read: {only_off} / {only_on}, p {report['p']:.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
