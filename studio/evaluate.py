"""Scoring a detector on a labelled set (annotations.jsonl in the contract format).

Works with any predictor, a function image -> Detections, so the same numbers
come out for the ultralytics model, its ONNX export, or a test's fake.

Definitions (per set):

* matching: per image, predictions in falling confidence each take the
  unmatched labelled item they overlap most, if IoU >= 0.5 (labels ignored);
* found = matched labelled items / labelled items;
* identity = matched items whose predicted label (and kind) is right / labelled items;
* precision = predictions matched to an item and labelled right / predictions;
* mAP50 = mean over the classes present in the labels of the all-point
  interpolated average precision (VOC 2010+), matching within each class;
* confusions = the most common (true label, predicted label) pairs among matches;
* by kind: where a set labels tiles and cards, the same figures for each kind
  alone, labels and predictions of the other kind left out (so a card box on a
  tile is a miss among the tiles and a false alarm among the cards);
* named anywhere: the labelled items whose label some detection in their picture
  carries, boxes ignored (a multiset: two R5 tiles need two R5 detections), so a
  box placed off its item, which IoU matching counts as a miss, is told from an
  item never read;
* by size: found and identity of the labelled items grouped by their box's
  longer side in the image's pixels (:data:`SIZE_EDGES`), to tell items too
  small to read from items the model should have read;
* intervals: a Wilson score interval (:data:`INTERVAL_Z`, 95 %) around found,
  identity and precision, since a real set of a hundred cards moves by 0.01 a
  card: a target inside the interval is neither met nor missed with confidence.
  The items count as independent trials; items in one photo share its light
  and angle, so the real spread is wider still;
* sets labelled otherwise (:attr:`ImageDetections.meaning`): where a box
  surrounds a whole card, the card is found when a card detection's centre
  lies inside its box and read right when one of its label does; a detection
  is right when it lies inside a box of its label.  Where a picture only lists
  its labels, the distinct labels read there are compared with the list: an
  item is read right when its label was read (a card's two indices name it
  once), found as far as as many labels were read as listed, and precision is
  the share of the distinct labels read that are listed.  Neither has an mAP or
  sizes;
* comparison (:func:`compare`): two predictors on the same set, item by item:
  how many items each alone read right, and the exact McNemar test of those
  discordant items, the fair way to ask whether one reads better than the
  other when most items are read right (or wrong) by both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.detections import (
    ITEM_BOXES,
    LABEL_LIST,
    WHOLE_CARD_BOXES,
    Detections,
    ImageDetections,
    iou_matrix,
    read_jsonl,
)
from tabletop.vision.labels import KINDS

IOU_THRESHOLD = 0.5
SIZE_EDGES = (16, 32, 64, 128)
"""Bounds of the size groups (a labelled box's longer side, pixels): under 16,
16-32, 32-64, 64-128, 128 and over."""
Predictor = Callable[[npt.NDArray[np.uint8]], Detections]
INTERVAL_Z = 1.959964
"""The normal quantile of the intervals' 95 % two-sided coverage."""


def wilson_interval(successes: int, trials: int, z: float = INTERVAL_Z) -> tuple[float, float]:
    """The Wilson score interval of a share ``successes / trials``: unlike the
    normal approximation it stays within 0..1 and is sensible at 0 or all.  No
    trials give (0, 1): nothing is known."""
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must lie in 0..trials, not {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    share = successes / trials
    z2 = z * z
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * np.sqrt(share * (1 - share) / trials + z2 / (4 * trials**2))
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


@dataclass(frozen=True)
class SizeGroup:
    """Labelled items whose box's longer side lies in [low, high) pixels."""

    low: float
    high: float
    labelled: int
    found: int
    right: int

    @property
    def name(self) -> str:
        return f"{self.low:g}+ px" if self.high == np.inf else f"{self.low:g}-{self.high:g} px"

    @property
    def found_share(self) -> float:
        return self.found / self.labelled if self.labelled else 0.0

    @property
    def identity(self) -> float:
        return self.right / self.labelled if self.labelled else 0.0


@dataclass(frozen=True)
class Evaluation:
    name: str
    images: int
    labelled: int
    predicted: int
    found: float
    identity: float
    precision: float
    map50: float | None
    """None where the set has no item boxes to rank detections by."""
    confusions: tuple[tuple[str, str, int], ...] = field(default=())
    per_class_ap: tuple[tuple[str, float], ...] = field(default=())
    by_kind: tuple[tuple[str, Evaluation], ...] = field(default=())
    by_size: tuple[SizeGroup, ...] = field(default=())
    named_anywhere: int | None = None
    """Labelled items whose label a detection anywhere in their picture carries, each
    detection answering one item (boxes ignored); None where the set has no item boxes.
    Beside ``identity`` it tells a box that missed its item (a box straddling two
    neighbours, a box on the face where the label boxes the whole tile) from an item
    never read."""

    @property
    def named_share(self) -> float | None:
        """``named_anywhere`` as a share of the labelled items."""
        if self.named_anywhere is None:
            return None
        return self.named_anywhere / self.labelled if self.labelled else 0.0

    def intervals(self) -> dict[str, tuple[float, float]]:
        """Wilson 95 % intervals of found, identity (out of the labelled items)
        and precision (out of the predictions)."""
        def count(share: float, trials: int) -> int:
            return round(share * trials)

        return {"found": wilson_interval(count(self.found, self.labelled), self.labelled),
                "identity": wilson_interval(count(self.identity, self.labelled),
                                            self.labelled),
                "precision": wilson_interval(count(self.precision, self.predicted),
                                             self.predicted)}

    def to_json(self) -> dict[str, Any]:
        return {
            "set": self.name,
            "images": self.images,
            "labelled": self.labelled,
            "predicted": self.predicted,
            "found": round(self.found, 4),
            "identity": round(self.identity, 4),
            "precision": round(self.precision, 4),
            "map50": None if self.map50 is None else round(self.map50, 4),
            "intervals": {key: [round(low, 4), round(high, 4)]
                          for key, (low, high) in self.intervals().items()},
            "confusions": [{"true": t, "predicted": p, "count": n} for t, p, n in self.confusions],
            "by_kind": {kind: {key: value for key, value in part.to_json().items()
                               if key not in ("set", "images", "by_kind")}
                        for kind, part in self.by_kind},
            "by_size": [{"longer_side_px": [group.low, None if group.high == np.inf
                                            else group.high],
                         "labelled": group.labelled,
                         "found": round(group.found_share, 4),
                         "identity": round(group.identity, 4)}
                        for group in self.by_size if group.labelled],
            "named_anywhere": (None if self.named_anywhere is None else {
                "items": self.named_anywhere,
                "share": round(self.named_share or 0.0, 4),
                "interval": [round(value, 4) for value in
                             wilson_interval(self.named_anywhere, self.labelled)]}),
        }

    def to_text(self) -> str:
        lines = [
            f"{self.name}: {self.images} images, {self.labelled} labelled, "
            f"{self.predicted} predicted",
            f"  found {self.found:.3f}  identity {self.identity:.3f}  "
            f"precision {self.precision:.3f}"
            + ("" if self.map50 is None else f"  mAP50 {self.map50:.3f}"),
            "  95% intervals: " + "  ".join(f"{key} {low:.3f}-{high:.3f}" for key, (low, high)
                                            in self.intervals().items()),
        ]
        if self.named_anywhere is not None and self.labelled:
            low, high = wilson_interval(self.named_anywhere, self.labelled)
            lines.append(f"  named anywhere in their picture (boxes ignored) "
                         f"{self.named_share:.3f} ({low:.3f}-{high:.3f})")
        lines.extend(f"  {kind + 's:':<7}{part.labelled:>5} labelled  found {part.found:.3f}  "
                     f"identity {part.identity:.3f}  precision {part.precision:.3f}  "
                     f"mAP50 {part.map50:.3f}" for kind, part in self.by_kind)
        if any(group.labelled for group in self.by_size):
            lines.append("  by box size (longer side):")
            lines.extend(f"    {group.name:<11}{group.labelled:>6} labelled  "
                         f"found {group.found_share:.3f}  identity {group.identity:.3f}"
                         for group in self.by_size if group.labelled)
        if self.confusions:
            lines.append("  most common mistakes (true -> predicted):")
            lines.extend(f"    {t:>6} -> {p:<6} {n}" for t, p, n in self.confusions)
        return "\n".join(lines)


def _key(label: str, kind: str) -> str:
    # A tile joker and a card joker are different classes.
    return f"{label}.card" if label == "JK" and kind == "card" else label


def _matched_keys(truth: Detections, predicted: Detections) -> Iterator[tuple[int, str, str]]:
    """Per matched labelled item: its index, its key and its prediction's key."""
    for t, p in match(truth, predicted):
        yield t, _key(truth.labels[t], truth.kinds[t]), _key(predicted.labels[p],
                                                            predicted.kinds[p])


def match(truth: Detections, predicted: Detections, threshold: float = IOU_THRESHOLD
          ) -> list[tuple[int, int]]:
    """(truth index, prediction index) pairs, greedy by falling confidence, labels ignored."""
    if not len(truth) or not len(predicted):
        return []
    ious = iou_matrix(predicted.boxes, truth.boxes)
    taken = np.zeros(len(truth), dtype=bool)
    pairs = []
    for p in np.argsort(-predicted.confidences, kind="stable"):
        candidates = np.where(taken, -1.0, ious[p])
        t = int(np.argmax(candidates))
        if candidates[t] >= threshold:
            taken[t] = True
            pairs.append((t, int(p)))
    return pairs


def average_precision(recall: npt.NDArray[np.float64], precision: npt.NDArray[np.float64]
                      ) -> float:
    """All-point interpolated AP: area under the precision envelope."""
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[0.0], precision, [0.0]])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    steps = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[steps + 1] - mrec[steps]) * mpre[steps + 1]))


def evaluate(pairs: Iterable[tuple[Detections, Detections]], name: str = "set",
             top_confusions: int = 10) -> Evaluation:
    """Score (truth, predicted) detections of a set of images, and of each kind
    alone where both kinds are labelled.  A set labelling one kind gets no
    breakdown: the other kind's boxes there are false alarms only, already in
    the whole set's precision."""
    pairs = list(pairs)
    kinds = [kind for kind in KINDS if any(kind in truth.kinds for truth, _ in pairs)]
    by_kind = (tuple((kind, _score([(truth.of_kind(kind), pred.of_kind(kind))
                                    for truth, pred in pairs], f"{name} {kind}s", top_confusions))
                     for kind in kinds) if len(kinds) > 1 else ())
    whole = _score(pairs, name, top_confusions)
    return replace(whole, by_kind=by_kind)


def _score(pairs: list[tuple[Detections, Detections]], name: str, top_confusions: int
           ) -> Evaluation:
    labelled = sum(len(t) for t, _ in pairs)
    predicted = sum(len(p) for _, p in pairs)
    edges = np.array([0.0, *SIZE_EDGES, np.inf])
    size_counts = np.zeros((3, len(edges) - 1), np.int64)  # labelled, found, right
    confusions: Counter[tuple[str, str]] = Counter()
    # per class: (confidence, is true positive) of each prediction, and the count of items
    scored: dict[str, list[tuple[float, bool]]] = {}
    counts: Counter[str] = Counter()
    named_anywhere = 0
    for truth, pred in pairs:
        sides = (np.maximum(truth.boxes[:, 2] - truth.boxes[:, 0],
                            truth.boxes[:, 3] - truth.boxes[:, 1]) if len(truth) else np.zeros(0))
        groups = np.searchsorted(edges, sides, side="right") - 1
        np.add.at(size_counts[0], groups, 1)
        for t, tk, pk in _matched_keys(truth, pred):
            size_counts[1, groups[t]] += 1
            if tk == pk:
                size_counts[2, groups[t]] += 1
            else:
                confusions[(tk, pk)] += 1
        truth_keys = [_key(lab, k) for lab, k in zip(truth.labels, truth.kinds, strict=True)]
        pred_keys = [_key(lab, k) for lab, k in zip(pred.labels, pred.kinds, strict=True)]
        counts.update(truth_keys)
        named_anywhere += sum((Counter(truth_keys) & Counter(pred_keys)).values())
        for cls in set(pred_keys):
            t_idx = [i for i, key in enumerate(truth_keys) if key == cls]
            p_idx = [i for i, key in enumerate(pred_keys) if key == cls]
            sub_pairs = match(truth[t_idx] if t_idx else Detections.empty(), pred[p_idx])
            hits = {p for _, p in sub_pairs}
            scored.setdefault(cls, []).extend(
                (float(pred.confidences[p_idx[j]]), j in hits) for j in range(len(p_idx)))
    found, right = int(size_counts[1].sum()), int(size_counts[2].sum())
    aps = []
    for cls in sorted(counts):
        rows = sorted(scored.get(cls, []), key=lambda row: -row[0])
        if not rows:
            aps.append((cls, 0.0))
            continue
        tp = np.cumsum([hit for _, hit in rows], dtype=np.float64)
        fp = np.cumsum([not hit for _, hit in rows], dtype=np.float64)
        aps.append((cls, average_precision(tp / counts[cls], tp / (tp + fp))))
    return Evaluation(
        name=name,
        images=len(pairs),
        labelled=labelled,
        predicted=predicted,
        found=found / labelled if labelled else 0.0,
        identity=right / labelled if labelled else 0.0,
        precision=right / predicted if predicted else 0.0,
        map50=float(np.mean([ap for _, ap in aps])) if aps else 0.0,
        confusions=tuple((t, p, n) for (t, p), n in confusions.most_common(top_confusions)),
        per_class_ap=tuple(aps),
        by_size=tuple(SizeGroup(float(edges[i]), float(edges[i + 1]), *map(int, size_counts[:, i]))
                      for i in range(len(edges) - 1)),
        named_anywhere=named_anywhere,
    )


@dataclass(frozen=True)
class Truth:
    """What one labelled picture says is in it: its items' boxes (in the image's pixels)
    and what they mean (:attr:`ImageDetections.meaning`), or the list of its labels."""

    detections: Detections
    meaning: str = ITEM_BOXES
    labels: tuple[str, ...] = ()
    kind: str = "card"

    @property
    def items(self) -> int:
        return len(self.labels) if self.meaning == LABEL_LIST else len(self.detections)

    def item_labels(self) -> list[str]:
        if self.meaning == LABEL_LIST:
            return [_key(label, self.kind) for label in self.labels]
        return [_key(lab, k) for lab, k in zip(self.detections.labels, self.detections.kinds,
                                                strict=True)]


@dataclass(frozen=True)
class _Reading:
    """One picture's items scored without IoU matching (whole-card boxes, label lists)."""

    found: npt.NDArray[np.bool_]
    right: npt.NDArray[np.bool_]
    predicted: int
    predicted_right: int
    confusions: tuple[tuple[str, str], ...]


def _whole_card_reading(truth: Truth, predicted: Detections) -> _Reading:
    """Per whole-card box: whether a card detection's centre lies in it, and one of its
    label; per detection: whether it lies in a box of its label."""
    cards = truth.detections
    boxes = cards.boxes
    mine = predicted.of_kind("card") if len(predicted) else predicted
    centres = ((mine.boxes[:, :2] + mine.boxes[:, 2:]) / 2 if len(mine)
               else np.zeros((0, 2)))
    x, y = centres[:, None, 0], centres[:, None, 1]
    inside = ((x >= boxes[None, :, 0]) & (x <= boxes[None, :, 2])
              & (y >= boxes[None, :, 1]) & (y <= boxes[None, :, 3]))
    truth_keys = truth.item_labels()
    pred_keys = [_key(lab, "card") for lab in mine.labels]
    same = np.array([[p == t for t in truth_keys] for p in pred_keys], bool).reshape(
        len(pred_keys), len(truth_keys))
    found = inside.any(axis=0)
    right = (inside & same).any(axis=0)
    confusions = []
    for t in np.flatnonzero(found & ~right):
        candidates = np.flatnonzero(inside[:, t])
        best = candidates[np.argmax(mine.confidences[candidates])]
        confusions.append((truth_keys[t], pred_keys[best]))
    wrong_kind = len(predicted) - len(mine)
    return _Reading(found, right, len(mine) + wrong_kind, int((inside & same).any(axis=1).sum()),
                    tuple(confusions))


def _label_list_reading(truth: Truth, predicted: Detections) -> _Reading:
    """The distinct labels read of the list's kind against the listed labels."""
    listed = truth.item_labels()
    read = {_key(lab, k) for lab, k in zip(predicted.labels, predicted.kinds, strict=True)
            if k == truth.kind}
    right = np.zeros(len(listed), bool)
    unused = set(read)
    for i, key in enumerate(listed):
        if key in unused:
            right[i] = True
            unused.discard(key)
    found = np.zeros(len(listed), bool)
    found[: min(len(read), len(listed))] = True
    found |= right
    missed = [key for key, hit in zip(listed, right, strict=True) if not hit]
    extra = sorted(unused)
    confusions = tuple(zip(missed, extra, strict=False))
    wrong_kind = sum(k != truth.kind for k in predicted.kinds)
    return _Reading(found, right, len(read) + wrong_kind, int(right.sum()), confusions)


def _reading(truth: Truth, predicted: Detections) -> _Reading:
    if truth.meaning == LABEL_LIST:
        return _label_list_reading(truth, predicted)
    if truth.meaning == WHOLE_CARD_BOXES:
        return _whole_card_reading(truth, predicted)
    flags = np.zeros(len(truth.detections), bool)
    found = flags.copy()
    for t, tk, pk in _matched_keys(truth.detections, predicted):
        found[t] = True
        flags[t] = tk == pk
    return _Reading(found, flags, len(predicted), int(flags.sum()), ())


def evaluate_truths(pairs: Iterable[tuple[Truth, Detections]], name: str = "set",
                    top_confusions: int = 10) -> Evaluation:
    """Score (truth, predicted) pairs of a set whose pictures are labelled in one way:
    :func:`evaluate` for item boxes, else the whole-card and label-list rules above."""
    pairs = list(pairs)
    meanings = {truth.meaning for truth, _ in pairs}
    if len(meanings) > 1:
        raise ValueError(f"set {name!r} mixes pictures labelled by "
                         f"{' and '.join(sorted(meanings))}: score them apart")
    if not meanings or meanings == {ITEM_BOXES}:
        return evaluate([(truth.detections, pred) for truth, pred in pairs], name,
                        top_confusions)
    readings = [_reading(truth, pred) for truth, pred in pairs]
    labelled = sum(truth.items for truth, _ in pairs)
    predicted = sum(reading.predicted for reading in readings)
    found = sum(int(reading.found.sum()) for reading in readings)
    right = sum(int(reading.right.sum()) for reading in readings)
    confusions = Counter(pair for reading in readings for pair in reading.confusions)
    return Evaluation(
        name=name, images=len(pairs), labelled=labelled, predicted=predicted,
        found=found / labelled if labelled else 0.0,
        identity=right / labelled if labelled else 0.0,
        precision=(sum(reading.predicted_right for reading in readings) / predicted
                   if predicted else 0.0),
        map50=None,
        confusions=tuple((t, p, n) for (t, p), n in confusions.most_common(top_confusions)))


def items_read_right(pairs: Iterable[tuple[Detections | Truth, Detections]]
                     ) -> npt.NDArray[np.bool_]:
    """Per labelled item (images in order, items in their order): whether it was read
    right: a prediction matched it (:func:`match`) with its label and kind, or as the
    picture's :class:`Truth` says for whole-card boxes and label lists."""
    right = [_reading(truth if isinstance(truth, Truth) else Truth(truth), pred).right
             for truth, pred in pairs]
    return np.concatenate(right) if right else np.zeros(0, bool)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value: the chance of a split of the discordant
    items at least this lopsided if each is equally likely to fall either way."""
    if only_first < 0 or only_second < 0:
        raise ValueError(f"counts must not be negative, not {only_first} and {only_second}")
    discordant = only_first + only_second
    tail = sum(comb(discordant, k) for k in range(min(only_first, only_second) + 1))
    return min(1.0, 2 * tail / 2**discordant)


@dataclass(frozen=True)
class Comparison:
    """Two predictors, ``first`` and ``second``, item by item on one set."""

    name: str
    first: str
    second: str
    both: int
    only_first: int
    only_second: int
    neither: int

    @property
    def labelled(self) -> int:
        return self.both + self.only_first + self.only_second + self.neither

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_first, self.only_second)

    def to_json(self) -> dict[str, Any]:
        labelled = max(self.labelled, 1)
        return {"set": self.name, "first": self.first, "second": self.second,
                "labelled": self.labelled, "both_right": self.both,
                "only_first_right": self.only_first, "only_second_right": self.only_second,
                "neither_right": self.neither,
                "identity_first": round((self.both + self.only_first) / labelled, 4),
                "identity_second": round((self.both + self.only_second) / labelled, 4),
                "mcnemar_p": float(f"{self.p_value:.3g}")}

    def to_text(self) -> str:
        return (f"{self.name}: {self.first} against {self.second}, {self.labelled} labelled\n"
                f"  read right by both {self.both}, only {self.first} {self.only_first}, "
                f"only {self.second} {self.only_second}, neither {self.neither}; "
                f"exact McNemar p = {self.p_value:.3g}")


def compare(first: Sequence[tuple[Detections | Truth, Detections]],
            second: Sequence[tuple[Detections | Truth, Detections]], name: str = "set",
            names: tuple[str, str] = ("first", "second")) -> Comparison:
    """Item by item, two predictors' (truth, predictions) pairs of the same images."""
    def counts(pairs: Sequence[tuple[Detections | Truth, Detections]]) -> list[int]:
        return [truth.items if isinstance(truth, Truth) else len(truth) for truth, _ in pairs]

    if counts(first) != counts(second):
        raise ValueError(f"set {name!r}: the two runs do not label the same items, "
                         "so they cannot be compared item by item")
    right_first, right_second = items_read_right(first), items_read_right(second)
    return Comparison(name, names[0], names[1],
                      int((right_first & right_second).sum()),
                      int((right_first & ~right_second).sum()),
                      int((~right_first & right_second).sum()),
                      int((~right_first & ~right_second).sum()))


def annotations_path(data: str | Path) -> Path:
    """A JSONL file, or a folder holding annotations.jsonl."""
    path = Path(data)
    if path.is_dir():
        path = path / "annotations.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no labelled set at {str(data)!r} (want a JSONL file or a "
                                "folder with annotations.jsonl)")
    return path


def labelled_truths(data: str | Path, limit: int | None = None
                    ) -> Iterator[tuple[npt.NDArray[np.uint8], Truth]]:
    """Each image of a labelled set (a JSONL file or a folder holding annotations.jsonl)
    with what its line says is in it (:class:`Truth`), boxes in the image file's pixels."""
    import cv2

    path = annotations_path(data)
    records: Sequence[ImageDetections] = read_jsonl(path)
    if limit is not None:
        records = records[:limit]
    for record in records:
        image_path = path.parent / record.image
        image = cv2.imread(str(image_path), cv2.IMREAD_COLOR)
        if image is None:
            raise FileNotFoundError(f"cannot read image {str(image_path)!r} of {str(path)!r}")
        truth = record.detections
        if image.shape[:2] != (record.height, record.width):
            # Labels are in the pixels the line states; bring them to the file's pixels.
            truth = truth.scaled(image.shape[1] / record.width, image.shape[0] / record.height)
        yield image, Truth(truth, record.meaning, record.labels or (), record.kind or "card")


def labelled_images(data: str | Path, limit: int | None = None
                    ) -> Iterator[tuple[npt.NDArray[np.uint8], Detections]]:
    """Each image of a labelled set with its labelled boxes, in the image file's pixels
    (a label list's picture has none)."""
    for image, truth in labelled_truths(data, limit):
        yield image, truth.detections


def evaluate_predictor(predictor: Predictor, data: str | Path, name: str | None = None,
                       limit: int | None = None) -> Evaluation:
    """Run ``predictor`` on every image of a labelled set and score it."""
    path = annotations_path(data)
    pairs = [(truth, predictor(image)) for image, truth in labelled_truths(path, limit)]
    return evaluate_truths(pairs, name or set_name(path))


def set_name(path: Path) -> str:
    """A labelled set's name: its folder's, or its JSONL file's stem."""
    return path.parent.name if path.name == "annotations.jsonl" else path.stem


def compare_predictors(first: Predictor, second: Predictor, data: str | Path,
                       names: tuple[str, str] = ("first", "second"),
                       limit: int | None = None
                       ) -> tuple[Evaluation, Evaluation, Comparison]:
    """Both predictors on every image of a labelled set (each image read once
    from disk): each one's scores and their item-by-item comparison."""
    path = annotations_path(data)
    name = set_name(path)
    runs: tuple[list[tuple[Truth, Detections]], list[tuple[Truth, Detections]]] = ([], [])
    for image, truth in labelled_truths(path, limit):
        runs[0].append((truth, first(image)))
        runs[1].append((truth, second(image)))
    return (evaluate_truths(runs[0], name), evaluate_truths(runs[1], name),
            compare(runs[0], runs[1], name, names))
