"""How readers name tiles or card indices as the picture grows blurred: defocus in the crop.

    python -m bench.reader_blur --readers A.onnx[,B.onnx...] [--kind tile|card]
                                [--rendered DIR] [--photos adapt|measure|none]
                                [--sigmas 0,1,2,3] [--realdata DIR] [--json FILE]

Every labelled item of the kind in a ``tabletop synth`` folder (``--rendered``) and in
the real photos of one half of their fixed split (``--photos``: ``rummikub-tiles``, or
``bridge-cards`` for card indices) is cut as the reader cuts it, at its true box, then
blurred by a Gaussian of each ``--sigmas`` (in pixels of the 64-pixel crop, where a
tile's face is about 51 pixels wide; a phone's defocused far row measures 2-3) and
named by each reader within the kind's labels (a card index as found and upside down,
averaged, as the detector reads it).  Per source, reader and blur: items named right
with a Wilson 95 % interval, and against the first reader the items only one of the two
names right with the exact McNemar p.

The blur is applied to the crop, not the photo, so it is the same relative blur on a
tile of any size; the crops keep the photo's own blur besides.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.studio.card_replay import CARD_SPLIT, CARDS_FOLDER
from tabletop.studio.evaluate import mcnemar_exact, wilson_interval
from tabletop.studio.replay import TILES_FOLDER, photo_name, photo_split, require_realdata
from tabletop.vision.crops import CROP_SIZE, crops
from tabletop.vision.detections import read_jsonl
from tabletop.vision.labels import class_id
from tabletop.vision.reader import QUARTER_TURNS, Reader, decide, softmax

SIGMAS = (0.0, 1.0, 2.0, 3.0)


def item_crops(folder: Path, kind: str = "tile", names: set[str] | None = None
               ) -> tuple[npt.NDArray[np.uint8], list[str]]:
    """Reader crops of every labelled item of ``kind`` in a detect-format folder (of its
    photos whose short name, :func:`photo_name`, is in ``names``, where given), and their
    labels."""
    import cv2

    batches, labels = [], []
    for record in read_jsonl(folder / "annotations.jsonl"):
        if names is not None and photo_name(record.image) not in names:
            continue
        picked = [k for k, found in enumerate(record.detections.kinds) if found == kind]
        if not picked:
            continue
        image = cv2.imread(str(folder / record.image))
        if image is None:
            raise FileNotFoundError(f"cannot read {str(folder / record.image)!r}")
        batches.append(crops(image, record.detections.boxes[picked]))
        labels += [record.detections.labels[k] for k in picked]
    if not batches:
        return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), []
    return np.concatenate(batches), labels


def blurred(batch: npt.NDArray[np.uint8], sigma: float) -> npt.NDArray[np.uint8]:
    """Each crop blurred by a Gaussian of ``sigma`` pixels (none at 0)."""
    import cv2

    if sigma <= 0:
        return batch
    return np.stack([cv2.GaussianBlur(crop, (0, 0), sigma) for crop in batch])


def named_right(reader: Reader, batch: npt.NDArray[np.uint8], labels: Sequence[str],
                kind: str = "tile") -> npt.NDArray[np.bool_]:
    """Per crop, whether the reader names it its label among the labels of ``kind``
    (a card index from its crop and the crop upside down, averaged)."""
    if not len(batch):
        return np.zeros(0, bool)
    probabilities = softmax(reader.logits(batch))
    if kind == "card":
        # the detector's second reading of a card index (card turns 2)
        turned = np.ascontiguousarray(np.rot90(batch, QUARTER_TURNS[1], axes=(1, 2)))
        probabilities = (probabilities + softmax(reader.logits(turned))) / 2
    named, _ = decide(probabilities, [kind] * len(batch))
    return np.array([name == label for name, label in zip(named, labels, strict=True)])


def measure(readers: Sequence[Reader], batch: npt.NDArray[np.uint8], labels: Sequence[str],
            sigmas: Sequence[float], kind: str = "tile") -> list[dict[str, Any]]:
    """One row per blur and reader: right, share, interval, and against the first reader."""
    for label in labels:
        class_id(label, kind)  # refuses a label that is not of the kind
    rows = []
    for sigma in sigmas:
        cut = blurred(batch, sigma)
        rights = [named_right(reader, cut, labels, kind) for reader in readers]
        for reader, right in zip(readers, rights, strict=True):
            count = int(right.sum())
            low, high = wilson_interval(count, len(right))
            row: dict[str, Any] = {"sigma": sigma, "reader": str(reader.path), "items": len(right),
                                   "right": count, "share": count / max(len(right), 1),
                                   "interval": [low, high]}
            if reader is not readers[0]:
                only_first = int((rights[0] & ~right).sum())
                only_this = int((right & ~rights[0]).sum())
                row.update(only_first=only_first, only_this=only_this,
                           p=mcnemar_exact(only_first, only_this))
            rows.append(row)
    return rows


def table(source: str, rows: Sequence[dict[str, Any]]) -> str:
    lines = [f"{source}: items named right by blur (sigma in crop pixels)",
             "| sigma | reader | right | share (95 %) | only first / only this, p |",
             "|---|---|---|---|---|"]
    for row in rows:
        against = (f"{row['only_first']} / {row['only_this']}, p {row['p']:.2g}"
                   if "p" in row else "")
        low, high = row["interval"]
        lines.append(f"| {row['sigma']:g} | {Path(row['reader']).parent.name}/"
                     f"{Path(row['reader']).name} | {row['right']}/{row['items']} | "
                     f"{row['share']:.3f} ({low:.3f}-{high:.3f}) | {against} |")
    return "\n".join(lines)


def sources(args: argparse.Namespace) -> dict[str, tuple[npt.NDArray[np.uint8], list[str]]]:
    """The crops and labels of each source the arguments name."""
    found: dict[str, tuple[npt.NDArray[np.uint8], list[str]]] = {}
    if args.rendered:
        found[f"rendered {args.rendered}"] = item_crops(Path(args.rendered), args.kind)
    if args.photos != "none":
        if args.kind == "tile":
            split = photo_split(args.realdata)
            names = set(split.adapt if args.photos == "adapt" else split.measure)
            folder = TILES_FOLDER
        else:
            names, folder = set(CARD_SPLIT[args.photos]), CARDS_FOLDER
        found[f"{folder} {args.photos}"] = item_crops(
            require_realdata(args.realdata) / folder, args.kind, names)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readers", required=True,
                        help="reader .onnx files, comma-separated; the first is the baseline")
    parser.add_argument("--kind", choices=("tile", "card"), default="tile")
    parser.add_argument("--rendered", help="a tabletop synth folder")
    parser.add_argument("--photos", choices=("adapt", "measure", "none"), default="measure")
    parser.add_argument("--sigmas", default=",".join(f"{s:g}" for s in SIGMAS))
    parser.add_argument("--realdata", help="the realdata folder (default: ../shared/realdata)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    try:
        sigmas = [float(s) for s in args.sigmas.split(",")]
        readers = [Reader(path) for path in args.readers.split(",")]
        report = {}
        for source, (batch, labels) in sources(args).items():
            rows = measure(readers, batch, labels, sigmas, args.kind)
            report[source] = rows
            print(table(source, rows), flush=True)
    except (ValueError, OSError) as error:
        print(f"reader_blur: {error}", file=sys.stderr)
        return 2
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
