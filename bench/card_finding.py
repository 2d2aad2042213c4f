"""Whether card indices are boxed and read, card by card, on games of real indices and on
rendered card scenes, for one or more models side by side.

    python -m bench.card_finding [--model NAME=PATH ...] [--photos adapt|measure]
        [--card-height 125 --card-height 90] [--games 16] [--seed 0]
        [--rendered 0] [--rendered-seed 61999] [--realdata DIR] [--json OUT]

The games are those of ``bench.card_adapt``: the last frame of ``--games`` random Rommé
games (``studio.card_replay``, seeds ``1000 * SEED + i``, 1280x720) whose cards are drawn
round the real indices of the ``--photos`` part of ``studio.card_replay.CARD_SPLIT``
(``adapt``: deal1, the part a model may be trained and chosen on; ``measure``: deal2,
only reported).  Each card's top left index gets one outcome, from the card-index
detections whose centre lies in that index box grown by half (``bench.card_adapt``'s
rule):

* ``unboxed``: there is none (what the finders miss);
* ``right``: one of them carries the card's label;
* ``spade_club``: the most confident one is the card's rank in the other black suit
  (a spade read as a club or the other way round);
* ``rank``: the most confident one names another rank;
* ``other``: anything else (a red suit for another, a red card for a black one).

Beside them, per model, the card-index detections whose centre lies on no index in sight
(every card's top left index, a meld's last card's bottom right one, each grown by
half): false alarms, which a finder that boxes more may also raise.

``--rendered N`` also renders ``N`` card scenes (``studio.synth.scene.render_scene``,
kind ``cards``, seeds ``--rendered-seed + i``) and counts each labelled index *found*
where a card-index box overlaps it by IoU 0.5, *read* where that box has its label,
and counts the card-index boxes that overlap no labelled index by IoU 0.5 (*unmatched*:
false alarms, or indices the renderer left unlabelled as mostly hidden): a finder
fine-tuned on real indices must not lose the rendered decks.

Every share has its Wilson 95 % interval; models are compared card by card (boxed) with
the exact McNemar test against the first ``--model``.  Models are named ``NAME=PATH``
(``PATH`` a model folder's ``tabletop.onnx``; its reader, card finder and card reader
are the files beside it, ``shipped`` the shipped model), ``@ODDS`` after the path runs it
with those spade odds (``DetectorSettings.spade_odds``); the default is the shipped
model.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tabletop.studio.card_replay import (
    CARD_SPLIT,
    compose_random_card_game,
    index_boxes,
    load_card_bank,
)
from tabletop.studio.evaluate import mcnemar_exact, wilson_interval
from tabletop.studio.replay import Replay
from tabletop.vision.detections import Detections, iou_matrix
from tabletop.vision.detector import Detector, DetectorSettings, check_spade_odds

OUTCOMES = ("unboxed", "spade_club", "rank", "other", "right")
OTHER_BLACK_SUIT = {"S": "C", "C": "S"}
RENDERED_IOU = 0.5


def outcome_of(label: str, hits: Sequence[tuple[str, float]]) -> str:
    """The outcome (see the module) of a card labelled ``label`` whose index box holds the
    card-index detections ``hits`` (label, confidence)."""
    if not hits:
        return "unboxed"
    if any(found == label for found, _ in hits):
        return "right"
    best = max(hits, key=lambda hit: hit[1])[0]
    rank, suit = label[:-1], label[-1]
    if best[:-1] == rank and best[-1:] == OTHER_BLACK_SUIT.get(suit):
        return "spade_club"
    if best[:-1] != rank:
        return "rank"
    return "other"


def card_outcomes(found: Detections, replay: Replay) -> list[tuple[str, str]]:
    """(label, outcome) of every card on ``replay``'s last frame, given the detections
    ``found`` of that frame."""
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in found.boxes]
    out = []
    for item in replay.items(len(replay.steps) - 1):
        x1, y1, x2, y2 = index_boxes(item.box)[0]
        gx, gy = (x2 - x1) / 2, (y2 - y1) / 2
        hits = [(found.labels[i], float(found.confidences[i]))
                for i, (cx, cy) in enumerate(centres) if found.kinds[i] == "card"
                and x1 - gx <= cx <= x2 + gx and y1 - gy <= cy <= y2 + gy]
        out.append((item.label, outcome_of(item.label, hits)))
    return out


def _grown(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = box
    gx, gy = (x2 - x1) / 2, (y2 - y1) / 2
    return x1 - gx, y1 - gy, x2 + gx, y2 + gy


def extra_boxes(found: Detections, replay: Replay) -> int:
    """How many card-index detections of ``replay``'s last frame lie on no index in sight
    (see the module)."""
    items = replay.items(len(replay.steps) - 1)
    last_of_meld = {item.meld: k for k, item in enumerate(items)}
    shown = [_grown(box) for k, item in enumerate(items)
             for box in index_boxes(item.box)[:2 if last_of_meld[item.meld] == k else 1]]
    extra = 0
    for box, kind in zip(found.boxes, found.kinds, strict=True):
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if kind == "card" and not any(x1 <= cx <= x2 and y1 <= cy <= y2
                                      for x1, y1, x2, y2 in shown):
            extra += 1
    return extra


def summary(outcomes: Sequence[str]) -> dict[str, Any]:
    """Counts of each outcome, with shares and Wilson intervals."""
    n = len(outcomes)
    counts = Counter(outcomes)
    return {"cards": n, **{
        name: {"count": counts[name], "share": round(counts[name] / max(n, 1), 3),
               "interval": [round(v, 3) for v in wilson_interval(counts[name], n)]}
        for name in OUTCOMES}}


def compared(first: Sequence[bool], second: Sequence[bool]) -> dict[str, Any]:
    """Items only the first / only the second gets, and the exact McNemar p."""
    only_first = sum(a and not b for a, b in zip(first, second, strict=True))
    only_second = sum(b and not a for a, b in zip(first, second, strict=True))
    return {"only_first": only_first, "only_second": only_second,
            "p": float(f"{mcnemar_exact(only_first, only_second):.3g}")}


def measure_games(detectors: Mapping[str, Detector], photos: str, card_height: float,
                  games: int, seed: int, realdata: str | None) -> dict[str, Any]:
    bank = load_card_bank(realdata, use_images=CARD_SPLIT[photos])
    outcomes: dict[str, list[str]] = {name: [] for name in detectors}
    extra: Counter[str] = Counter()
    for index in range(games):
        replay = compose_random_card_game(seed=1000 * seed + index, bank=bank,
                                          card_height=card_height, realdata=realdata)
        frame = replay.frame(replay.frame_count - 1)
        for name, detector in detectors.items():
            found = detector(frame)
            outcomes[name].extend(o for _, o in card_outcomes(found, replay))
            extra[name] += extra_boxes(found, replay)
    result: dict[str, Any] = {"photos": photos, "photo_names": list(CARD_SPLIT[photos]),
                              "card_height": card_height, "games": games, "seed": seed,
                              "models": {name: {**summary(o), "extra_boxes": extra[name]}
                                         for name, o in outcomes.items()}}
    names = list(detectors)
    base = [o != "unboxed" for o in outcomes[names[0]]]
    right = [o == "right" for o in outcomes[names[0]]]
    result["against_first"] = {
        name: {"boxed": compared(base, [o != "unboxed" for o in outcomes[name]]),
               "right": compared(right, [o == "right" for o in outcomes[name]])}
        for name in names[1:]}
    return result


def measure_rendered(detectors: Mapping[str, Detector], scenes: int, seed: int
                     ) -> dict[str, Any]:
    from tabletop.studio.synth.scene import render_scene

    found: dict[str, list[bool]] = {name: [] for name in detectors}
    read: dict[str, list[bool]] = {name: [] for name in detectors}
    unmatched: Counter[str] = Counter()
    boxes: Counter[str] = Counter()
    for index in range(scenes):
        scene = render_scene(seed + index, kind="cards")
        truth = scene.detections.of_kind("card")
        if len(truth) == 0:
            continue
        for name, detector in detectors.items():
            cards = detector(scene.image).of_kind("card")
            boxes[name] += len(cards)
            if len(cards):
                unmatched[name] += int((iou_matrix(cards.boxes, truth.boxes).max(axis=1)
                                        < RENDERED_IOU).sum())
            for box, label in zip(truth.boxes, truth.labels, strict=True):
                if len(cards) == 0:
                    found[name].append(False)
                    read[name].append(False)
                    continue
                overlap = iou_matrix(box[None, :], cards.boxes)[0]
                best = int(overlap.argmax())
                hit = bool(overlap[best] >= RENDERED_IOU)
                found[name].append(hit)
                read[name].append(hit and cards.labels[best] == label)
    names = list(detectors)
    result: dict[str, Any] = {"scenes": scenes, "seed": seed, "models": {}}
    for name in names:
        n, f, r = len(found[name]), sum(found[name]), sum(read[name])
        result["models"][name] = {
            "indices": n, "found": f, "found_share": round(f / max(n, 1), 3),
            "found_interval": [round(v, 3) for v in wilson_interval(f, n)],
            "read": r, "read_share": round(r / max(n, 1), 3),
            "read_interval": [round(v, 3) for v in wilson_interval(r, n)],
            "card_boxes": boxes[name], "unmatched": unmatched[name]}
    result["against_first"] = {
        name: {"found": compared(found[names[0]], found[name]),
               "read": compared(read[names[0]], read[name])} for name in names[1:]}
    return result


def report(results: Mapping[str, Any]) -> str:
    lines = []
    for games in results["games"]:
        lines.append(f"{games['games']} games of {', '.join(games['photo_names'])}'s cards "
                     f"({games['photos']}), {games['card_height']:g} px tall, seed "
                     f"{games['seed']}")
        for name, row in games["models"].items():
            cells = ", ".join(f"{o} {row[o]['count']} ({row[o]['share']:.3f}, "
                              f"{row[o]['interval'][0]:.3f}-{row[o]['interval'][1]:.3f})"
                              for o in OUTCOMES)
            lines.append(f"  {name}: {row['cards']} cards: {cells}; card boxes on no "
                         f"index in sight {row['extra_boxes']}")
        for name, row in games["against_first"].items():
            lines.append(f"  against the first, {name}: boxed only first/only it "
                         f"{row['boxed']['only_first']}/{row['boxed']['only_second']} "
                         f"(p {row['boxed']['p']:.2g}), right "
                         f"{row['right']['only_first']}/{row['right']['only_second']} "
                         f"(p {row['right']['p']:.2g})")
    rendered = results.get("rendered")
    if rendered:
        lines.append(f"{rendered['scenes']} rendered card scenes, seed {rendered['seed']}")
        for name, row in rendered["models"].items():
            lines.append(f"  {name}: {row['indices']} indices, found {row['found']} "
                         f"({row['found_share']:.3f}, {row['found_interval'][0]:.3f}-"
                         f"{row['found_interval'][1]:.3f}), read {row['read']} "
                         f"({row['read_share']:.3f}, {row['read_interval'][0]:.3f}-"
                         f"{row['read_interval'][1]:.3f}); card boxes {row['card_boxes']}, "
                         f"on no labelled index {row['unmatched']}")
        for name, row in rendered["against_first"].items():
            lines.append(f"  against the first, {name}: found only first/only it "
                         f"{row['found']['only_first']}/{row['found']['only_second']} "
                         f"(p {row['found']['p']:.2g}), read "
                         f"{row['read']['only_first']}/{row['read']['only_second']} "
                         f"(p {row['read']['p']:.2g})")
    return "\n".join(lines)


def _named_model(text: str) -> tuple[str, tuple[Path | None, float | None]]:
    """``NAME=PATH`` or ``NAME=PATH@ODDS`` (the detector's spade odds; None: its own)."""
    name, _, where = text.partition("=")
    path, _, odds = where.partition("@")
    if not name or not (Path(path).is_file() or path == "shipped"):
        raise argparse.ArgumentTypeError(
            f"want NAME=PATH[@SPADE_ODDS] (PATH a model file or 'shipped'), not {text!r}")
    try:
        spade_odds = check_spade_odds(float(odds)) if odds else None
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None
    return name, (None if path == "shipped" else Path(path), spade_odds)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.card_finding", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=_named_model, action="append", default=None,
                        help="NAME=PATH[@SPADE_ODDS] of a model's tabletop.onnx, or "
                             "NAME=shipped (repeatable; default: the shipped model)")
    parser.add_argument("--photos", choices=tuple(CARD_SPLIT), default="adapt")
    parser.add_argument("--card-height", type=float, action="append", default=None)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rendered", type=int, default=0,
                        help="also this many rendered card scenes")
    parser.add_argument("--rendered-seed", type=int, default=61999)
    parser.add_argument("--realdata", default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.games < 0 or args.rendered < 0:
        print("--games and --rendered must be 0 or more", file=sys.stderr)
        return 2
    models = dict(args.model or [("shipped", (None, None))])
    if len(models) != len(args.model or [None]):
        print("two --model share a name", file=sys.stderr)
        return 2
    detectors = {name: Detector(path, DetectorSettings(spade_odds=odds))
                 for name, (path, odds) in models.items()}
    results: dict[str, Any] = {
        "models": {name: f"{path or 'shipped'}@{detectors[name].spade_odds:g}"
                   for name, (path, _) in models.items()},
        "games": [measure_games(detectors, args.photos, height, args.games, args.seed,
                                args.realdata)
                  for height in (args.card_height or [125.0]) if args.games]}
    if args.rendered:
        results["rendered"] = measure_rendered(detectors, args.rendered, args.rendered_seed)
    print(report(results))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
