"""How well tiles are found by how they are seen: on a rack, flat, from a steep angle or the side.

    python -m bench.finder_views [--scenes 80] [--seed 44902] [--against MODEL]
                                 [--json OUT]

Renders ``--scenes`` tile tables (``studio.synth.scene.render_scene``, 1280x720, the
renderer's own mix of racks, melds, loose tiles and camera angles) and runs the model
(default: the shipped one) and, with ``--against``, a second model folder or finder file
on the same frames.  Each labelled tile counts as *found* when a tile box overlaps it by
IoU 0.5 or more, and as *read* when that box carries its label.  Tiles are grouped by
how they are seen: standing on a rack (their face at a slant), lying flat, and, across
both, in a scene whose camera looks steeply (the table's far side more than twice as
wide as its near side), in a steep scene seen from the table's side (its far side at
the picture's left or right: tiles squeezed across, smaller towards that flank), and
in a block of tiles laid in close rows (a laid-out set).  Per group: the share found
and read, Wilson 95 % intervals, and for two models the items only one of them finds,
with the exact McNemar test.  Rendered tables are not photos: the figures compare
models and groups, they do not predict real ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tabletop.studio.evaluate import mcnemar_exact, wilson_interval
from tabletop.studio.synth.scene import SceneItem, render_scene
from tabletop.vision.detections import iou_matrix
from tabletop.vision.detector import Detector

IOU = 0.5
STEEP_RATIO = 2.0
"""A scene is steep when its far side is this many times as wide as its near side."""


def _outcomes(items: Sequence[SceneItem], boxes: np.ndarray, predicted: Any
              ) -> list[tuple[bool, bool]]:
    """(found, read) of each kept tile of the scene, in order."""
    tiles = predicted.of_kind("tile")
    out = []
    for item, box in zip(items, boxes, strict=True):
        if len(tiles) == 0:
            out.append((False, False))
            continue
        overlap = iou_matrix(box[None, :], tiles.boxes)[0]
        best = int(overlap.argmax())
        found = bool(overlap[best] >= IOU)
        out.append((found, found and tiles.labels[best] == item.label))
    return out


def _steep(items: Sequence[SceneItem]) -> bool:
    """Whether the scene's camera looks steeply, judged from its tiles' foreshortening:
    the widest tile box over the narrowest of the scene's tiles lying flat."""
    widths = [float(np.ptp(item.polygon[:, 0])) for item in items
              if not item.on_rack and item.kept]
    return len(widths) >= 2 and max(widths) > STEEP_RATIO * min(widths)


def run(scenes: int, seed: int, models: dict[str, Detector], log: Any = print
        ) -> dict[str, Any]:
    groups = ("rack", "flat", "steep", "side", "grid", "all")
    results: dict[str, dict[str, list[tuple[bool, bool]]]] = {
        name: {group: [] for group in groups} for name in models}
    for index in range(scenes):
        scene = render_scene(seed + index, kind="tiles")
        kept = [item for item in scene.items if item.kept and item.kind == "tile"]
        boxes = scene.detections.of_kind("tile").boxes
        if not kept:
            continue
        steep = _steep(kept)
        for name, detector in models.items():
            outcomes = _outcomes(kept, boxes, detector(scene.image))
            for item, outcome in zip(kept, outcomes, strict=True):
                results[name]["rack" if item.on_rack else "flat"].append(outcome)
                if steep:
                    results[name]["steep"].append(outcome)
                if scene.far_side != "top":
                    results[name]["side"].append(outcome)
                if item.in_grid:
                    results[name]["grid"].append(outcome)
                results[name]["all"].append(outcome)
        if (index + 1) % 10 == 0:
            log(f"{index + 1}/{scenes} scenes")
    report: dict[str, Any] = {"scenes": scenes, "seed": seed, "models": {}}
    for name, by_group in results.items():
        rows = {}
        for group, outcomes in by_group.items():
            n = len(outcomes)
            found = sum(f for f, _ in outcomes)
            read = sum(r for _, r in outcomes)
            rows[group] = {"tiles": n, "found": found / max(n, 1),
                           "found_interval": wilson_interval(found, n),
                           "read": read / max(n, 1), "read_interval": wilson_interval(read, n)}
        report["models"][name] = rows
    names = list(models)
    if len(names) == 2:
        first, second = (results[name] for name in names)
        report["compare"] = {}
        for group in groups:
            pairs = list(zip(first[group], second[group], strict=True))
            only = [sum(a[0] and not b[0] for a, b in pairs),
                    sum(b[0] and not a[0] for a, b in pairs)]
            report["compare"][group] = {"only_found_by": dict(zip(names, only, strict=True)),
                                        "p": mcnemar_exact(*only)}
    return report


def _print(report: dict[str, Any]) -> None:
    print(f"{report['scenes']} rendered tile tables, seed {report['seed']}")
    for name, rows in report["models"].items():
        print(f"{name}:")
        for group, row in rows.items():
            lo, hi = row["found_interval"]
            rlo, rhi = row["read_interval"]
            print(f"  {group:6} {row['tiles']:5} tiles  found {row['found']:.3f} "
                  f"({lo:.3f}-{hi:.3f})  read {row['read']:.3f} ({rlo:.3f}-{rhi:.3f})")
    for group, row in report.get("compare", {}).items():
        only = ", ".join(f"only {name} {count}" for name, count in row["only_found_by"].items())
        print(f"  {group:6} found: {only}, p {row['p']:.2g}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, default=80)
    parser.add_argument("--seed", type=int, default=44902)
    parser.add_argument("--model", default=None, help="the model measured (default: shipped)")
    parser.add_argument("--against", default=None, help="a second model, measured beside it")
    parser.add_argument("--json", default=None, help="also write the report here")
    args = parser.parse_args(argv)
    if args.scenes < 1:
        parser.error("--scenes must be 1 or more")
    models = {"model": Detector(args.model)}
    if args.against:
        models["against"] = Detector(args.against)
    report = run(args.scenes, args.seed, models,
                 log=lambda text: print(text, file=sys.stderr))
    _print(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
