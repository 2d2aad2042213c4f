"""Tile sets the model never saw, read out of the box and after one layout photo.

    python -m bench.set_inks [--sets 12] [--tables 4] [--family modern] [--seed 7100]
                             [--json OUT]

Per set: a tile set drawn from one palette family (``studio.synth.tiles.PALETTES``;
``unusual`` is the held-out family no training render uses), one photo of it laid out
in order (``studio.synth.scene.render_layout``) and ``--tables`` rendered tables of the
same set.  The shipped model runs once per table (finder boxes, reader
probabilities); the boxes are then named five ways, so that the figures differ by the
colour stage and the head alone:

* ``reader``: the reader alone (``--palette off``);
* ``table``: colours judged against the table's own inks (``vision.palette``,
  ``--palette on``);
* ``inks``: the set's inks from its layout photo (labelled by the shipped detector in
  the layout's order and learnt by ``tabletop adapt --layout --light``), without the
  head, judging the colours the reader misread on the layout;
* ``head``: the light head the adapt fitted (``vision.reader_head``) on the reader's
  features, without the set's inks (``--palette off`` on the adapted folder);
* ``adapted``: the adapted folder as the detector uses it by default: the head, then
  the set's inks.

A layout photo the detector cannot label (a row one tile short) counts as a set whose
layout failed, and its tables are read by the reader alone in the last three ways.

Per way: identity (tiles found with their label, Wilson 95 % interval), precision, and
the exact McNemar test against ``reader`` on the same tiles (``adapted`` also against
``head``: what the set's inks add to it).  Tables of one set share its inks, so the
intervals are narrower than the truth.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tabletop.studio.adapt import AdaptError, adapt_light, adapted_model, layout_to_jsonl
from tabletop.studio.evaluate import Truth, compare, evaluate_truths
from tabletop.studio.synth.scene import RenderOptions, render_layout, render_scene
from tabletop.studio.synth.tiles import PALETTES, random_style
from tabletop.vision.detector import Detector, DetectorSettings, load_set_inks, set_inks_path
from tabletop.vision.labels import TILE_COLOURS
from tabletop.vision.palette import TablePalette

WAYS = ("reader", "table", "inks", "head", "adapted")


def way_figures(pairs: Sequence[tuple[Truth, Any]], way: str) -> dict[str, Any]:
    """One way's identity and precision on its (truth, read) pairs, with their Wilson
    intervals, and the share found."""
    evaluation = evaluate_truths(pairs, way)
    intervals = evaluation.intervals()
    return {"labelled": evaluation.labelled,
            "identity": round(evaluation.identity, 4),
            "interval": [round(v, 4) for v in intervals["identity"]],
            "found": round(evaluation.found, 4),
            "precision": round(evaluation.precision, 4),
            "precision_interval": [round(v, 4) for v in intervals["precision"]]}


def run(sets: int, tables: int, family: str, seed: int, log: Any = print) -> dict[str, Any]:
    if family not in PALETTES:
        raise ValueError(f"unknown palette family {family!r}; known: {', '.join(PALETTES)}")
    detector = Detector(settings=DetectorSettings(palette="off"))
    runs: dict[str, list[tuple[Truth, Any]]] = {way: [] for way in WAYS}
    failed_layouts = 0
    adapt_seconds: list[float] = []
    heads: list[dict[str, Any]] = []
    judged: list[str] = []
    misread: list[list[float]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(sets):
            style = random_style(np.random.default_rng(seed + index), palettes=(family,))
            layout = render_layout(style, seed + 10_000 + index)
            photo = Path(scratch) / f"layout-{index}.jpg"
            photo.write_bytes(layout.encoded)
            set_inks = None
            adapted = None
            try:
                labelled = layout_to_jsonl([photo], Path(scratch) / f"layout-{index}.jsonl",
                                           "tiles", detector)
                folder = Path(scratch) / f"model-{index}"
                started = time.monotonic()
                done = adapt_light([labelled], folder)
                adapt_seconds.append(time.monotonic() - started)
                set_inks = load_set_inks(set_inks_path(folder / "tabletop.onnx"))
                adapted = Detector(adapted_model(folder))
                if done.head:
                    heads.append(done.head["reader"])
            except AdaptError as error:
                failed_layouts += 1
                log(f"set {index}: layout not read ({error})")
            if set_inks is not None:
                judged.append("".join(colour for colour, used in zip(
                    TILE_COLOURS, set_inks.judged, strict=True) if used))
                misread.append(list(set_inks.misread or ()))
            inks_alone = (None if set_inks is None
                          else TablePalette(set_inks=set_inks, use_table=False))
            for table in range(tables):
                scene = render_scene(seed + 20_000 + 100 * index + table, 1280, 720, "tiles",
                                     RenderOptions(tile_style=style))
                truth = Truth(scene.detections)
                found = detector.find(scene.image)
                if not len(found):
                    for way in WAYS:
                        runs[way].append((truth, found))
                    continue
                read = detector.probabilities(scene.image, found)
                tiles = np.array([kind == "tile" for kind in found.kinds])
                named = {"reader": read,
                         "table": TablePalette().update(scene.image, found.boxes, read, tiles),
                         "inks": read, "head": read, "adapted": read}
                if inks_alone is not None:
                    named["inks"] = inks_alone.update(scene.image, found.boxes, read, tiles)
                if adapted is not None:
                    named["head"] = adapted.probabilities(scene.image, found)
                    named["adapted"] = adapted.with_palette(scene.image, found, named["head"])
                for way in WAYS:
                    runs[way].append((truth, detector.named(found, named[way])))
            log(f"set {index + 1}/{sets} done")
    result: dict[str, Any] = {
        "family": family, "sets": sets, "tables": sets * tables,
        "failed_layouts": failed_layouts, "seed": seed,
        "adapt_seconds": [round(min(adapt_seconds), 1), round(max(adapt_seconds), 1)]
        if adapt_seconds else None,
        "head_crops_right": [[row["right_before"], row["right_after"]] for row in heads],
        "inks_judge": judged, "inks_misread": misread}
    for way in WAYS:
        result[way] = way_figures(runs[way], way)
        if way != "reader":
            result[way]["against_reader"] = compare(runs["reader"], runs[way], way,
                                                    ("reader", way)).to_json()
    result["adapted"]["against_head"] = compare(runs["head"], runs["adapted"], "adapted",
                                                ("head", "adapted")).to_json()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.set_inks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", type=int, default=12)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--family", default="modern")
    parser.add_argument("--seed", type=int, default=7100)
    parser.add_argument("--json", default=None, help="also write the result here")
    args = parser.parse_args(argv)
    result = run(args.sets, args.tables, args.family, args.seed,
                 log=lambda text: print(text, file=sys.stderr, flush=True))
    seconds = result["adapt_seconds"]
    print(f"{args.family}: {args.sets} sets, {result['tables']} tables, "
          f"{result['failed_layouts']} layout photo(s) not read"
          + (f"; adapting took {seconds[0]:.1f}-{seconds[1]:.1f} s" if seconds else ""))
    judging = [colours for colours in result["inks_judge"] if colours]
    print(f"  the set's inks judge a colour in {len(judging)} of "
          f"{len(result['inks_judge'])} sets" + (f" ({', '.join(judging)})" if judging else ""))
    for way in WAYS:
        row = result[way]
        low, high = row["interval"]
        plow, phigh = row["precision_interval"]
        line = (f"  {way:<10} identity {row['identity']:.3f} ({low:.3f}-{high:.3f}) "
                f"of {row['labelled']} tiles, precision {row['precision']:.3f} "
                f"({plow:.3f}-{phigh:.3f})")
        for other in ("reader", "head"):
            if f"against_{other}" in row:
                both = row[f"against_{other}"]
                line += (f"; only {other} {both['only_first_right']}, only {way} "
                         f"{both['only_second_right']}, McNemar p {both['mcnemar_p']:.3g}")
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
