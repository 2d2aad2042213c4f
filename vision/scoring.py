"""Which of the finder's faint card-index boxes to keep: a logistic score.

The finder finds far more card indices than its confidence admits: on a rendered
held-out set, 0.94 of them have a box at confidence 0.1 against 0.78 at 0.25,
but most faint boxes are false.  The reader's opinion of a box separates them
better than the finder's alone, so a two-stage model may carry a *card scorer*
beside its reader (``NAME.scorer.json``): the finder's card boxes are taken down
to :attr:`CardScorer.finder_floor`, read, and kept by a logistic model of both
stages' confidences and the box's geometry (:func:`card_features`), fitted on
rendered scenes by :func:`fit_logistic` (``python -m vision.scoring``).

The score is shifted so that the detector's default threshold keeps the boxes
whose fitted chance of being read right is the scorer's ``operating_point``;
raising ``--conf`` keeps fewer, as with any confidence.

It is used only when asked for (``--card-scorer``): the shipped scorer raised
card identity on fresh rendered sets (mixed 0.826 -> 0.837, cards 0.730 -> 0.752)
but lost 8 of the 104 real card indices, and found fewer on the Rommé sample
video; its fit to rendered confidences does not carry over (models/README.md).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.detections import Detections, iou_matrix
from vision.labels import label_of
from vision.reader import NONE_INDEX, kind_mask

FEATURES: tuple[str, ...] = (
    "logit_finder", "logit_label", "logit_none", "label_margin", "log_size",
    "abs_log_aspect", "edge_distance", "logit_finder_x_label", "bias")
"""The score's inputs per box, in order (see :func:`card_features`)."""

FORMAT = "tabletop-card-scorer/1"
_EPSILON = 1e-4


class ScorerError(ValueError):
    """A scorer file that cannot be used; the message names the file and the fault."""


def logit(p: Any) -> Any:
    clipped = np.clip(p, _EPSILON, 1 - _EPSILON)
    return np.log(clipped / (1 - clipped))


def best_labels(probabilities: npt.NDArray[Any], kinds: Sequence[str]
                ) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Per box: its most probable label of its kind, never ``none``, and the
    kind-masked, renormalised probabilities (N, classes)."""
    within = np.stack([np.where(kind_mask(kind), row, 0.0)
                       for row, kind in zip(probabilities, kinds, strict=True)]
                      ) if len(kinds) else np.zeros((0, probabilities.shape[-1]))
    within = within / np.maximum(within.sum(axis=1, keepdims=True), 1e-12)
    labelled = within.copy()
    labelled[:, NONE_INDEX] = 0.0
    return [label_of(int(i))[0] for i in labelled.argmax(axis=1)], within


def card_features(found: Detections, probabilities: npt.NDArray[Any],
                  frame: tuple[int, int]) -> npt.NDArray[np.float64]:
    """(N, len(FEATURES)) inputs of the score for boxes ``found`` (the finder's
    confidences), the reader's class probabilities of each, in a frame of
    (height, width) pixels."""
    count = len(found)
    if count == 0:
        return np.zeros((0, len(FEATURES)))
    _, within = best_labels(probabilities, list(found.kinds))
    labelled = within.copy()
    labelled[:, NONE_INDEX] = 0.0
    top_two = -np.sort(-labelled, axis=1)[:, :2]
    height, width = frame
    boxes = found.boxes
    box_w = np.maximum(boxes[:, 2] - boxes[:, 0], 1.0)
    box_h = np.maximum(boxes[:, 3] - boxes[:, 1], 1.0)
    side = np.maximum(box_w, box_h)
    edge = np.minimum.reduce([boxes[:, 0], boxes[:, 1], width - boxes[:, 2],
                              height - boxes[:, 3]]) / side
    finder = logit(found.confidences)
    label = logit(top_two[:, 0])
    return np.stack([finder, label, logit(within[:, NONE_INDEX]), top_two[:, 0] - top_two[:, 1],
                     np.log(side / max(height, width)), np.abs(np.log(box_w / box_h)),
                     np.minimum(edge, 1.0), finder * label, np.ones(count)], axis=1)


def fit_logistic(features: npt.NDArray[Any], right: npt.NDArray[Any], l2: float = 1e-2,
                 iterations: int = 30) -> npt.NDArray[np.float64]:
    """Weights of a logistic model of ``right`` (bool per row) by Newton's method
    with a small ridge ``l2`` (the features already hold a bias column)."""
    x = np.asarray(features, np.float64)
    y = np.asarray(right, np.float64)
    if x.ndim != 2 or len(x) != len(y) or len(x) == 0:
        raise ValueError(f"want (N, F) features and N outcomes, not {x.shape} and {y.shape}")
    weights = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ weights)))
        gradient = x.T @ (p - y) + l2 * weights
        hessian = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        weights = weights - np.linalg.solve(hessian, gradient)
    return weights


class CardScorer:
    """A fitted card scorer: ``scorer(features, default_confidence) -> confidences``."""

    def __init__(self, weights: Sequence[float], operating_point: float,
                 finder_floor: float) -> None:
        if len(weights) != len(FEATURES):
            raise ScorerError(f"want {len(FEATURES)} weights ({', '.join(FEATURES)}), "
                              f"not {len(weights)}")
        if not (0.0 < operating_point < 1.0 and 0.0 < finder_floor < 1.0):
            raise ScorerError(f"operating point {operating_point!r} and finder floor "
                              f"{finder_floor!r} must both lie between 0 and 1")
        self.weights = np.asarray(weights, np.float64)
        self.operating_point = float(operating_point)
        self.finder_floor = float(finder_floor)

    def __call__(self, features: npt.NDArray[Any], default_confidence: float
                 ) -> npt.NDArray[np.float64]:
        """Confidences, shifted so a box whose fitted chance of being right is the
        operating point gets exactly ``default_confidence``."""
        shift = math.log(default_confidence / (1 - default_confidence)) - float(
            logit(self.operating_point))
        return 1.0 / (1.0 + np.exp(-(np.asarray(features) @ self.weights + shift)))  # type: ignore[no-any-return]

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "features": list(FEATURES),
                "weights": [round(float(w), 6) for w in self.weights],
                "operating_point": self.operating_point, "finder_floor": self.finder_floor}

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> CardScorer:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ScorerError(f"cannot read card scorer {str(path)!r}: {error}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ScorerError(f"{str(path)!r} is not a {FORMAT} file")
        if data.get("features") != list(FEATURES):
            raise ScorerError(f"{str(path)!r} scores other features: {data.get('features')!r}")
        try:
            return cls([float(w) for w in data["weights"]], float(data["operating_point"]),
                       float(data["finder_floor"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ScorerError(f"{str(path)!r}: {error}") from None


def scorer_path(finder: Path) -> Path:
    """Where a finder's card scorer lives: ``NAME.scorer.json`` beside it."""
    return finder.with_name(f"{finder.stem}.scorer.json")


def read_right(found: Detections, labels: Sequence[str], truth: Detections
               ) -> npt.NDArray[np.bool_]:
    """Per found box: is there a labelled item of its kind and label at IoU >= 0.5?"""
    right = np.zeros(len(found), bool)
    if len(found) == 0 or len(truth) == 0:
        return right
    overlaps = iou_matrix(found.boxes, truth.boxes)
    for i in range(len(found)):
        for j in np.flatnonzero(overlaps[i] >= 0.5):
            if truth.labels[j] == labels[i] and truth.kinds[j] == found.kinds[i]:
                right[i] = True
                break
    return right


def collect(detector: Any, data: str | Path, finder_floor: float
            ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Features and outcomes of every card box ``detector``'s finder finds at
    ``finder_floor`` or more in the labelled set ``data``."""
    import cv2

    from vision.detections import read_jsonl
    from vision.evaluate import annotations_path

    path = annotations_path(data)
    rows, outcomes = [], []
    saved = detector.confidence, detector.scorer
    detector.confidence, detector.scorer = finder_floor, None
    try:
        for record in read_jsonl(path):
            image = cv2.imread(str(path.parent / record.image), cv2.IMREAD_COLOR)
            if image is None:
                raise ValueError(f"cannot read image {str(path.parent / record.image)!r}")
            found = detector.find(image)
            found = found[np.array([kind == "card" for kind in found.kinds], bool)]
            if not len(found):
                continue
            probabilities = detector.reader.probabilities(
                image, found.boxes, list(found.kinds), detector.views, detector.card_turns)
            labels, _ = best_labels(probabilities, list(found.kinds))
            rows.append(card_features(found, probabilities, image.shape[:2]))
            outcomes.append(read_right(found, labels, record.detections))
    finally:
        detector.confidence, detector.scorer = saved
    if not rows:
        raise ValueError(f"no card boxes found in {str(data)!r}")
    return np.concatenate(rows), np.concatenate(outcomes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="fit a card scorer on rendered labelled sets (never the real photos)")
    parser.add_argument("--data", action="append", required=True,
                        help="annotations.jsonl or its folder (repeatable)")
    parser.add_argument("--model", default=None, help="the finder (default: models/)")
    parser.add_argument("--out", required=True, help="the scorer JSON to write")
    parser.add_argument("--operating-point", dest="operating_point", type=float, default=0.45)
    parser.add_argument("--finder-floor", dest="finder_floor", type=float, default=0.05)
    args = parser.parse_args(argv)
    from vision.detector import Detector

    detector = Detector(args.model)
    tables = [collect(detector, data, args.finder_floor) for data in args.data]
    features = np.concatenate([table[0] for table in tables])
    right = np.concatenate([table[1] for table in tables])
    scorer = CardScorer(fit_logistic(features, right).tolist(), args.operating_point,
                        args.finder_floor)
    scorer.save(args.out)
    print(json.dumps({"boxes": len(right), "right": round(float(right.mean()), 4),
                      **scorer.to_json()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
