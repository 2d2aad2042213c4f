"""``tabletop adapt --light`` on a real deck: one layout photo of the cards of the *adapt*
photo, measured card by card on games composed of the cards of the *measure* photo.

    python -m bench.card_adapt [--realdata DIR] [--games 16] [--seed 0]
        [--card-height 125] [--layout-height 150] [--keep DIR] [--json]

``bridge-cards`` is split by ``studio.card_replay.CARD_SPLIT`` (adapt: deal1, measure:
deal2).  The layout photo is the deck laid out in order (``compose_deck_layout``: rows
A..K of each suit, cards ``--layout-height`` pixels tall, apart on a plain table) from
the cards drawn round deal1's real indices; a card deal1 has no usable index of stays
out.  Its index boxes are labelled from the composition, not by the command's rows:
deal1 lacks 15 of the 52 cards, more than a row may lack
(``studio.adapt.LAYOUT_MISSING``).  The light adapt (``studio.adapt.adapt_light``) fits
the card reader's head on it, for every label the photo shows.

The shipped model and the adapted one then read the last frame of ``--games`` random
Rommé games composed of deal2's cards (``studio.card_replay``, seeds ``SEED*1000+i``,
cards ``--card-height`` pixels tall at 1280x720).  A card counts as *boxed* where a
card-index detection's centre lies in its top left index box grown by half, and as
*read* where that detection has its label.  Figures with Wilson 95 % intervals; the
two models compared card by card (exact McNemar).  ``--keep DIR`` keeps the layout
photo, its labels and the adapted model (for ``python -m bench.replays --game rommee
--photos measure --model DIR/model/tabletop.onnx``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from tabletop.studio.adapt import adapt_light, adapted_model
from tabletop.studio.card_replay import (
    CARD_SPLIT,
    compose_deck_layout,
    compose_random_card_game,
    index_boxes,
    load_card_bank,
)
from tabletop.studio.evaluate import mcnemar_exact, wilson_interval
from tabletop.studio.replay import CropBank, Replay
from tabletop.vision.detector import Detector

WAYS = ("shipped", "adapted")


def adapt_on_layout(bank: CropBank, out: Path, seed: int, layout_height: int,
                    base_model: Path | None = None) -> tuple[Path, dict[str, Any]]:
    """The layout photo of ``bank``'s deck and its labels in ``out``, and the model adapted
    on it (its ``tabletop.onnx``), with what the adapt reports."""
    image, labelled = compose_deck_layout(bank, np.random.default_rng([seed, 5]),
                                          layout_height)
    out.mkdir(parents=True, exist_ok=True)
    photo = out / "layout.jpg"
    cv2.imwrite(str(photo), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    record = {"image": str(photo.resolve()), "width": image.shape[1],
              "height": image.shape[0], "detections": labelled}
    annotations = out / "layout.jsonl"
    annotations.write_text(json.dumps(record) + "\n", encoding="utf-8")
    labels = len({item["label"] for item in labelled})
    result = adapt_light([annotations], out / "model", base_model=base_model,
                         head_min_labels=labels)
    return adapted_model(out / "model"), {"labels": labels, "indices": len(labelled),
                                          "head": (result.head or {}).get("card_reader")}


def read_cards(detector: Detector, replay: Replay) -> list[tuple[str, bool, bool]]:
    """(label, boxed, read) of every card on ``replay``'s last frame (see the module)."""
    found = detector(replay.frame(replay.frame_count - 1))
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in found.boxes]
    out = []
    for item in replay.items(len(replay.steps) - 1):
        x1, y1, x2, y2 = index_boxes(item.box)[0]
        gx, gy = (x2 - x1) / 2, (y2 - y1) / 2
        hits = [i for i, (cx, cy) in enumerate(centres) if found.kinds[i] == "card"
                and x1 - gx <= cx <= x2 + gx and y1 - gy <= cy <= y2 + gy]
        out.append((item.label, bool(hits), any(found.labels[i] == item.label for i in hits)))
    return out


def run(realdata: str | None, games: int, seed: int, card_height: float, layout_height: int,
        keep: Path | None, base_model: Path | None = None) -> dict[str, Any]:
    adapt_bank = load_card_bank(realdata, use_images=CARD_SPLIT["adapt"])
    measure_bank = load_card_bank(realdata, use_images=CARD_SPLIT["measure"])
    scratch = Path(tempfile.mkdtemp(prefix="card-adapt-")) if keep is None else keep
    try:
        model, adapted = adapt_on_layout(adapt_bank, scratch, seed, layout_height,
                                         base_model)
        detectors = {"shipped": Detector(base_model), "adapted": Detector(model)}
        readings: dict[str, list[tuple[str, bool, bool]]] = {way: [] for way in WAYS}
        for index in range(games):
            replay = compose_random_card_game(seed=1000 * seed + index, bank=measure_bank,
                                              card_height=card_height, realdata=realdata)
            for way, detector in detectors.items():
                readings[way].extend(read_cards(detector, replay))
    finally:
        if keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    result: dict[str, Any] = {"adapt_photos": list(CARD_SPLIT["adapt"]),
                              "measure_photos": list(CARD_SPLIT["measure"]),
                              "games": games, "card_height": card_height, "layout": adapted,
                              "model": str(base_model) if base_model else "shipped",
                              "cards": len(readings["shipped"])}
    for way in WAYS:
        cards = readings[way]
        boxed = sum(b for _, b, _ in cards)
        read = sum(r for _, _, r in cards)
        misread = Counter(f"{label}" for label, b, r in cards if b and not r)
        result[way] = {"boxed": boxed, "read": read, "share_read": round(read / len(cards), 3),
                       "interval": [round(v, 3) for v in wilson_interval(read, len(cards))],
                       "misread_most": dict(misread.most_common(8))}
    only_shipped = sum(a[2] and not b[2] for a, b in zip(
        readings["shipped"], readings["adapted"], strict=True))
    only_adapted = sum(b[2] and not a[2] for a, b in zip(
        readings["shipped"], readings["adapted"], strict=True))
    result["only_shipped"], result["only_adapted"] = only_shipped, only_adapted
    result["p"] = float(f"{mcnemar_exact(only_shipped, only_adapted):.3g}")
    return result


def report(result: dict[str, Any]) -> str:
    lines = [f"layout of {', '.join(result['adapt_photos'])}: {result['layout']['labels']} "
             f"labels, {result['layout']['indices']} indices; measured on "
             f"{result['games']} games of {', '.join(result['measure_photos'])}'s cards "
             f"({result['cards']} cards, {result['card_height']:g} px tall)"]
    for way in WAYS:
        r = result[way]
        low, high = r["interval"]
        lines.append(f"{way:8s} boxed {r['boxed']}, read right {r['read']} "
                     f"({r['share_read']:.3f}, {low:.3f}-{high:.3f}); misread most: "
                     f"{r['misread_most']}")
    lines.append(f"cards only the shipped model reads right: {result['only_shipped']}, only "
                 f"the adapted one: {result['only_adapted']} (exact McNemar p "
                 f"{result['p']:.2g})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.card_adapt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--realdata", default=None)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--card-height", type=float, default=125.0)
    parser.add_argument("--layout-height", type=int, default=150)
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the layout photo, its labels and the adapted model here")
    parser.add_argument("--model", type=Path, default=None,
                        help="the base model's tabletop.onnx (default: the shipped one); "
                             "'shipped' below means this one, and it is the one adapted")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.games < 1 or not 60 <= args.layout_height <= 400:
        print("--games must be 1 or more and --layout-height 60 to 400 pixels",
              file=sys.stderr)
        return 2
    if args.model is not None and not args.model.is_file():
        print(f"--model {str(args.model)!r} is not a model file", file=sys.stderr)
        return 2
    result = run(args.realdata, args.games, args.seed, args.card_height, args.layout_height,
                 args.keep, args.model)
    print(json.dumps(result) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
