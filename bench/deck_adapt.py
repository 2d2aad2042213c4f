"""Decks the model never saw, read out of the box and after one layout photo.

    python -m bench.deck_adapt [--decks 10] [--tables 4] [--seed 52000] [--model M] [--json OUT]

Per deck: a deck design drawn as the renderer draws them (``studio.synth.cards``'
``random_design``, from seed ``[SEED, i]``, which no training render drew), one photo
of it laid out in order (``studio.synth.scene.render_deck_layout``: rows A..K of each
suit and two jokers, cards 150 pixels tall) and ``--tables`` rendered card tables of the
same deck (``render_scene`` with ``RenderOptions(deck=...)``, 1280x720).  The layout is
labelled by the shipped detector in the layout's order, as ``tabletop adapt --layout
PHOTO --order cards`` labels it, and the light adapt (``studio.adapt.adapt_light``:
the card reader's head, in seconds, without PyTorch) is fitted on it.

Each table is read by the shipped model (or ``--model``'s, named *shipped* in the
figures all the same) and by the adapted one (the whole detector, as
``tabletop detect`` runs it).  A layout the command cannot label (a row short of more
indices than the finder may miss, or holding more too many) counts as a deck whose
layout failed: its tables are read by the shipped model both ways.  Figures: identity of
the card indices (found with their label, Wilson 95 % interval), precision, and the
exact McNemar test of the two ways on the same indices; the share of indices the
finder's own boxes cover (IoU 0.5, before the reader names them: a detection needs the
finder's confidence times the reader's to be 0.25 or more); the share the shipped card
reader names right at the true boxes (as ``bench.reader_blur`` cuts them: the reader
alone, without the finder, the suit's ink or the spade odds); the shipped reading's share
read right, and the card reader's at the true boxes, by the index's length (its true
box's longer side) and by deck; how many layout
indices the command labelled and how many of them wrongly (not on a true index of their
label).
Tables of one deck share its design, so the intervals are narrower than the truth.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.reader_blur import named_right
from bench.set_inks import way_figures
from tabletop.studio.adapt import AdaptError, adapt_light, adapted_model, layout_to_jsonl
from tabletop.studio.evaluate import Truth, compare
from tabletop.studio.synth.cards import random_design
from tabletop.studio.synth.scene import RenderOptions, render_deck_layout, render_scene
from tabletop.vision.crops import crops
from tabletop.vision.detections import (
    Detections,
    iou_matrix,
    overlap_of_smaller,
    read_jsonl,
)
from tabletop.vision.detector import Detector

WAYS = ("shipped", "adapted")


def labelled_right(labelled: Detections, truth: Detections) -> int:
    """How many of a layout's labelled boxes lie on a true index of their label: the
    index it overlaps most, half of which or more it covers (the finder may box an index
    with a pip beside it, which the head's crops then see too)."""
    if not len(labelled) or not len(truth):
        return 0
    best = iou_matrix(labelled.boxes, truth.boxes).argmax(axis=1)
    covered = overlap_of_smaller(labelled.boxes, truth.boxes)
    return sum(1 for i, j in enumerate(best) if covered[i, j] >= 0.5
               and labelled.labels[i] == truth.labels[j])


def finder_boxed(found: Detections, truth: Detections) -> int:
    """How many of ``truth``'s indices the finder's own card boxes (before the reader
    names them) overlap by IoU 0.5: what the reader then names, or leaves unnamed."""
    cards = found.of_kind("card") if len(found) else found
    if not len(cards) or not len(truth):
        return 0
    return int((iou_matrix(truth.boxes, cards.boxes).max(axis=1) >= 0.5).sum())


LENGTH_EDGES = (0, 12, 16, 20, 26, 34)
"""Index lengths (pixels, the longer side of the true box) the shipped reading is broken
down by; the last bucket holds every longer index."""


def read_right(truth: Detections, read: Detections) -> list[bool]:
    """Per true index of ``truth``: whether a detection of its label overlaps it by IoU
    0.5 or more."""
    if not len(truth):
        return []
    if not len(read):
        return [False] * len(truth)
    overlaps = iou_matrix(truth.boxes, read.boxes)
    return [bool(any(overlaps[i, j] >= 0.5 and read.labels[j] == truth.labels[i]
                     for j in range(len(read)))) for i in range(len(truth))]


def breakdown(rows: Sequence[tuple[int, float, bool]]) -> dict[str, Any]:
    """Shares read right of (deck, index length, read right) rows, by length and by deck."""
    def share(picked: Sequence[tuple[int, float, bool]]) -> dict[str, Any]:
        return {"indices": len(picked),
                "right": round(sum(r for _, _, r in picked) / len(picked), 3) if picked else None}

    edges = (*LENGTH_EDGES, float("inf"))
    by_length = {f"{low}-{high:g}" if high != float("inf") else f"{low}+":
                 share([row for row in rows if low <= row[1] < high])
                 for low, high in itertools.pairwise(edges)}
    by_deck = {str(deck): share([row for row in rows if row[0] == deck])
               for deck in sorted({row[0] for row in rows})}
    return {"by_length": by_length, "by_deck": by_deck}


def run(decks: int, tables: int, seed: int, log: Any = print,
        model: Path | None = None) -> dict[str, Any]:
    base = Detector(model) if model is not None else Detector()
    runs: dict[str, list[tuple[Truth, Detections]]] = {way: [] for way in WAYS}
    failed: list[str] = []
    layouts: list[dict[str, Any]] = []
    adapt_seconds: list[float] = []
    boxed = 0
    lengths: list[tuple[int, float, bool]] = []
    at_true_boxes: list[tuple[int, float, bool]] = []
    card_reader = base.card_reader if base.card_reader is not None else base.reader
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(decks):
            design = random_design(np.random.default_rng([seed, index]), beside=True)
            layout = render_deck_layout(design, seed + 10_000 + index)
            photo = Path(scratch) / f"layout-{index}.jpg"
            photo.write_bytes(layout.encoded)
            adapted = None
            try:
                annotations = layout_to_jsonl([photo], Path(scratch) / f"layout-{index}.jsonl",
                                              "cards", base)
                labelled = read_jsonl(annotations)[0].detections
                layouts.append({"indices": len(layout.detections), "labelled": len(labelled),
                                "right": labelled_right(labelled, layout.detections)})
                folder = Path(scratch) / f"model-{index}"
                started = time.monotonic()
                adapt_light([annotations], folder, base_model=model)
                adapt_seconds.append(time.monotonic() - started)
                adapted = Detector(adapted_model(folder))
            except AdaptError as error:
                failed.append(f"deck {index}"
                              f"{' (four indices)' if design.four_indices else ''}: {error}")
                log(f"deck {index}: layout not read ({error})")
            for table in range(tables):
                scene = render_scene(seed + 20_000 + 100 * index + table, 1280, 720, "cards",
                                     RenderOptions(deck=design))
                truth = Truth(scene.detections)
                read = base(scene.image)
                boxed += finder_boxed(base.find(scene.image), scene.detections)
                cards = scene.detections.of_kind("card")
                sides = np.maximum(cards.boxes[:, 2] - cards.boxes[:, 0],
                                   cards.boxes[:, 3] - cards.boxes[:, 1])
                lengths.extend((index, float(side), right) for side, right in
                               zip(sides, read_right(cards, read), strict=True))
                if len(cards):
                    named = named_right(card_reader, crops(scene.image, cards.boxes),
                                        cards.labels, "card")
                    at_true_boxes.extend((index, float(side), bool(right)) for side, right
                                         in zip(sides, named, strict=True))
                runs["shipped"].append((truth, read))
                runs["adapted"].append((truth, read if adapted is None
                                        else adapted(scene.image)))
            log(f"deck {index + 1}/{decks} done")
    result: dict[str, Any] = {
        "decks": decks, "tables": decks * tables, "seed": seed, "failed_layouts": failed,
        "layouts": layouts,
        "adapt_seconds": ([round(min(adapt_seconds), 1), round(max(adapt_seconds), 1)]
                          if adapt_seconds else None)}
    for way in WAYS:
        result[way] = way_figures(runs[way], way)
    result["finder_boxed"] = round(boxed / max(1, result["shipped"]["labelled"]), 4)
    result["shipped"].update(breakdown(lengths))
    result["reader_at_true_boxes"] = {
        "right": round(sum(r for _, _, r in at_true_boxes) / max(1, len(at_true_boxes)), 4),
        **breakdown(at_true_boxes)}
    result["adapted"]["against_shipped"] = compare(runs["shipped"], runs["adapted"], "decks",
                                                   ("shipped", "adapted")).to_json()
    return result


def report(result: dict[str, Any]) -> str:
    labelled = sum(row["labelled"] for row in result["layouts"])
    wrong = labelled - sum(row["right"] for row in result["layouts"])
    lines = [f"{result['decks']} decks, {result['tables']} tables; "
             f"{len(result['failed_layouts'])} layout photo(s) not read; the others' "
             f"{labelled} indices labelled, {wrong} wrongly"
             + (f"; adapting took {result['adapt_seconds'][0]:.1f}-"
                f"{result['adapt_seconds'][1]:.1f} s" if result["adapt_seconds"] else "")]
    for way in WAYS:
        row = result[way]
        low, high = row["interval"]
        line = (f"  {way:<8} identity {row['identity']:.3f} ({low:.3f}-{high:.3f}) of "
                f"{row['labelled']} indices, found {row['found']:.3f}, precision "
                f"{row['precision']:.3f}")
        if "against_shipped" in row:
            both = row["against_shipped"]
            line += (f"; only shipped {both['only_first_right']}, only adapted "
                     f"{both['only_second_right']}, McNemar p {both['mcnemar_p']:.3g}")
        lines.append(line)
    lines.append(f"  the finder's own boxes (before the reader names them) cover "
                 f"{result['finder_boxed']:.3f} of the indices")

    def shares(table: dict[str, Any]) -> str:
        return ", ".join(f"{key} {row['right']:.2f} ({row['indices']})"
                         for key, row in table.items() if row["indices"])

    shipped = result["shipped"]
    if "by_length" in shipped:
        lines.append(f"  shipped, read right by index length (px): {shares(shipped['by_length'])}")
        lines.append(f"  shipped, read right by deck: {shares(shipped['by_deck'])}")
    if "reader_at_true_boxes" in result:
        alone = result["reader_at_true_boxes"]
        lines.append(f"  the card reader alone at the true boxes names {alone['right']:.3f}; "
                     f"by index length (px): {shares(alone['by_length'])}")
        lines.append(f"  the card reader alone at the true boxes, by deck: "
                     f"{shares(alone['by_deck'])}")
    lines.extend(f"  {text}" for text in result["failed_layouts"])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.deck_adapt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=10)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--seed", type=int, default=52_000)
    parser.add_argument("--model", type=Path, default=None,
                        help="the model to read with and adapt (default: the shipped one)")
    parser.add_argument("--json", default=None, help="also write the result here")
    args = parser.parse_args(argv)
    if args.decks < 1 or args.tables < 1:
        parser.error("--decks and --tables must be 1 or more")
    if args.model is not None and not args.model.is_file():
        parser.error(f"--model {str(args.model)!r} is not a file")
    result = run(args.decks, args.tables, args.seed,
                 log=lambda text: print(text, file=sys.stderr, flush=True), model=args.model)
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
