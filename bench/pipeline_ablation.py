"""The reading pipeline's stages on labelled sets, one stage at a time: each setting
against the shipped model's plain reading, item by item.

    python -m bench.pipeline_ablation DATA [DATA ...] [--json OUT]

Settings (``vision.detector.DetectorSettings``): ``plain`` (the reader alone, no
zoomed-out pass), ``palette`` (tile colours against the table's inks, ``--palette
on``), ``zoom-out`` (the zoomed-out pass for large tiles, a default), ``both``.  Per set and
setting: found, identity and precision with Wilson 95 % intervals, and the exact
McNemar test against ``plain``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from tabletop.studio.evaluate import compare, evaluate_truths, labelled_truths
from tabletop.vision.detector import Detector, DetectorSettings

SETTINGS = {
    "plain": DetectorSettings(palette="off", zoom_out=1.0),
    "palette": DetectorSettings(palette="on", zoom_out=1.0),
    "zoom-out": DetectorSettings(palette="off"),
    "both": DetectorSettings(palette="on"),
}


def ablate(data: str, model: str | None = None) -> dict[str, Any]:
    detectors = {name: Detector(model, settings) for name, settings in SETTINGS.items()}
    runs: dict[str, list[Any]] = {name: [] for name in SETTINGS}
    for image, truth in labelled_truths(data):
        for name, detector in detectors.items():
            runs[name].append((truth, detector(image)))
    result: dict[str, Any] = {"set": data}
    for name in SETTINGS:
        evaluation = evaluate_truths(runs[name], data).to_json()
        result[name] = {key: evaluation[key] for key in
                        ("images", "labelled", "found", "identity", "precision", "intervals")}
        if name != "plain":
            result[name]["against_plain"] = compare(runs["plain"], runs[name], data,
                                                    ("plain", name)).to_json()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline_ablation",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="+")
    parser.add_argument("--model", default=None, help="the model (default: the shipped one)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    results = []
    for data in args.data:
        row = ablate(data, args.model)
        results.append(row)
        print(f"{data}: {row['plain']['labelled']} items in {row['plain']['images']} photos")
        for name in SETTINGS:
            part = row[name]
            low, high = part["intervals"]["identity"]
            line = (f"  {name:<9} found {part['found']:.3f}  identity {part['identity']:.3f} "
                    f"({low:.3f}-{high:.3f})  precision {part['precision']:.3f}")
            if "against_plain" in part:
                both = part["against_plain"]
                line += (f"  [only plain {both['only_first_right']}, only {name} "
                         f"{both['only_second_right']}, p {both['mcnemar_p']:.3g}]")
            print(line, flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
