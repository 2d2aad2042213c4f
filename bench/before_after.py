"""One model and pipeline against another on labelled sets, item by item.

    python -m bench.before_after --before DIR [--before-plain] DATA [DATA ...] [--json OUT]

``--before``: a model folder (``DIR/tabletop.onnx`` and its siblings), read with the
detector's defaults, or with ``--before-plain`` as the pipeline read before the
palette and the zoomed-out pass (``palette=off``, ``zoom_out=1``).  The *after* is the
shipped model with the defaults.  Per set: found, identity and precision of each with
Wilson 95 % intervals (``tabletop eval``'s figures) and the exact McNemar test on the
items only one of them reads right.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabletop.studio.evaluate import compare_predictors
from tabletop.vision.detector import Detector, DetectorSettings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.before_after", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="+")
    parser.add_argument("--before", required=True, help="the earlier model's folder")
    parser.add_argument("--before-plain", action="store_true",
                        help="read the earlier model without the palette and zoom-out")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    settings = (DetectorSettings(palette="off", zoom_out=1.0) if args.before_plain
                else DetectorSettings())
    before = Detector(Path(args.before) / "tabletop.onnx", settings)
    after = Detector()
    results: list[dict[str, Any]] = []
    for data in args.data:
        first, second, both = compare_predictors(before, after, data, ("before", "after"))
        results.append({"set": data, "before": first.to_json(), "after": second.to_json(),
                        "comparison": both.to_json()})
        print(f"{data}: {first.images} photos, {first.labelled} items")
        for name, part in (("before", first), ("after", second)):
            low, high = part.intervals()["identity"]
            print(f"  {name:<6} found {part.found:.3f}  identity {part.identity:.3f} "
                  f"({low:.3f}-{high:.3f})  precision {part.precision:.3f}")
        print(f"  only before {both.only_first}, only after {both.only_second}, "
              f"McNemar p {both.p_value:.3g}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
