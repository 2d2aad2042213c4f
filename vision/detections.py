"""Detections: the one value passed between the camera pipeline's stages.

Like supervision's ``Detections``: parallel arrays, validated once when made,
so every later stage (``update(detections) -> detections``) can trust them.
Boxes are ``[x1, y1, x2, y2]`` in pixels of the original image, labels are
contract tokens (CONTRACT.md) and ``kinds`` tell a tile joker from a card
joker.  Items a reader named may carry its ``alternatives``: the probabilities
of the most probable labels of the item's kind and of ``none``, so later stages
can weigh more than the top label.  The JSON form is the one of
``tabletop detect --json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.labels import KINDS, Kind, normalise_label

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


NONE_LABEL = "none"
"""The reader's class for a box that is no item (a finder's false alarm); it may be
among an item's alternatives, never its label."""
ALTERNATIVES_SLACK = 1e-3
"""How far an item's alternatives may sum above 1: the JSON form rounds each
probability to four places."""


class DetectionsError(ValueError):
    """Detections that break an invariant; the message quotes the bad value."""


def _as_boxes(boxes: Any) -> FloatArray:
    try:
        array = np.asarray(boxes, dtype=np.float64)
    except (TypeError, ValueError):
        raise DetectionsError(f"boxes must be numbers, not {boxes!r}") from None
    if array.size == 0:
        return np.zeros((0, 4), dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != 4:
        raise DetectionsError(f"boxes must have shape (N, 4), not {array.shape}")
    if not np.all(np.isfinite(array)):
        bad = array[~np.all(np.isfinite(array), axis=1)][0].tolist()
        raise DetectionsError(f"box {bad} is not finite")
    wrong = (array[:, 0] >= array[:, 2]) | (array[:, 1] >= array[:, 3])
    if np.any(wrong):
        bad = array[wrong][0].tolist()
        raise DetectionsError(f"box {bad} does not have x1 < x2 and y1 < y2")
    return array


class _Alternatives(Mapping[str, float]):
    """One item's alternatives, checked for its label and kind: read-only, largest first."""

    __slots__ = ("_probabilities", "kind", "label")

    def __init__(self, probabilities: dict[str, float], label: str, kind: str) -> None:
        self._probabilities = probabilities
        self.label = label
        self.kind = kind

    def __getitem__(self, key: str) -> float:
        return self._probabilities[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._probabilities)

    def __len__(self) -> int:
        return len(self._probabilities)

    def __repr__(self) -> str:
        return repr(self._probabilities)


def _as_distribution(value: Any, label: str, kind: Kind) -> Mapping[str, float]:
    """``value`` as an item's alternatives (read-only, largest first), or DetectionsError."""
    if isinstance(value, _Alternatives) and value.label == label and value.kind == kind:
        return value  # checked when first made; slicing and joining keep it with its item
    if not isinstance(value, Mapping) or not value:
        raise DetectionsError(
            f"alternatives of {label} must map labels to probabilities, not {value!r:.120}")
    distribution: dict[str, float] = {}
    for key, p in value.items():
        try:
            token = key if key == NONE_LABEL else normalise_label(str(key), kind)
            probability = float(p)
        except (TypeError, ValueError):
            raise DetectionsError(
                f"alternative {key!r}: {p!r} of {label} is not a {kind} token or "
                f"{NONE_LABEL!r} with a probability") from None
        if not 0.0 <= probability <= 1.0:
            raise DetectionsError(
                f"probability {p!r} of {key!r} among the alternatives of {label} is not "
                f"in [0, 1]")
        distribution[token] = probability
    total = math.fsum(distribution.values())
    if total > 1.0 + ALTERNATIVES_SLACK:
        raise DetectionsError(
            f"alternatives of {label} sum to {total:.4f}, over 1: {distribution!r:.160}")
    if label not in distribution:
        raise DetectionsError(f"alternatives of {label} do not include it: {distribution!r:.160}")
    best = max(p for token, p in distribution.items() if token != NONE_LABEL)
    if distribution[label] < best:
        raise DetectionsError(
            f"{label} is not the most probable of its alternatives {distribution!r:.160}")
    ranked = sorted(distribution.items(), key=lambda kv: (-kv[1], kv[0] != label, kv[0]))
    return _Alternatives(dict(ranked), label, kind)


@dataclass(frozen=True, eq=False)
class Detections:
    """N detected items of one image; every field has N entries.

    ``alternatives``, when given, holds for each item the probabilities a reader gave
    the labels of its kind it found most probable and :data:`NONE_LABEL` (read-only
    mappings, largest first).  Each lies in [0, 1], they sum to at most 1, and the
    item's label is among them and no other label is more probable (``none`` may be:
    an item's label need not be the one its reader chose).  A confidence is not one of
    them: the detector's is the finder's times the reader's.  None: the items were
    not read so (ground truth, the oracle, a one-stage model).  Joined with read
    items (:meth:`concatenate`, :meth:`from_items`), an item without alternatives
    gets ``{label: confidence}``.
    """

    boxes: FloatArray
    labels: tuple[str, ...]
    kinds: tuple[Kind, ...]
    confidences: FloatArray
    track_ids: IntArray | None = field(default=None)
    alternatives: tuple[Mapping[str, float], ...] | None = field(default=None)

    def __post_init__(self) -> None:
        boxes = _as_boxes(self.boxes)
        n = len(boxes)
        labels = tuple(self.labels)
        kinds = tuple(self.kinds)
        if len(labels) != n or len(kinds) != n:
            raise DetectionsError(
                f"{n} boxes but {len(labels)} labels and {len(kinds)} kinds"
            )
        for kind in kinds:
            if kind not in KINDS:
                raise DetectionsError(f"kind must be 'tile' or 'card', not {kind!r}")
        try:
            labels = tuple(normalise_label(str(lab), k)
                           for lab, k in zip(labels, kinds, strict=True))
        except ValueError as error:
            raise DetectionsError(str(error)) from None
        confidences = np.asarray(self.confidences, dtype=np.float64).reshape(-1)
        if confidences.shape != (n,):
            raise DetectionsError(f"{n} boxes but {confidences.size} confidences")
        outside = ~((confidences >= 0.0) & (confidences <= 1.0))
        if np.any(outside):
            raise DetectionsError(f"confidence {confidences[outside][0]!r} is not in [0, 1]")
        track_ids = self.track_ids
        if track_ids is not None:
            track_ids = np.asarray(track_ids)
            if track_ids.shape != (n,) or not np.issubdtype(track_ids.dtype, np.integer):
                raise DetectionsError(f"track_ids must be {n} integers, not {self.track_ids!r}")
            track_ids = track_ids.astype(np.int64)
        alternatives = self.alternatives
        if alternatives is not None:
            alternatives = tuple(alternatives)
            if len(alternatives) != n:
                raise DetectionsError(f"{n} boxes but {len(alternatives)} alternatives")
            alternatives = tuple(_as_distribution(value, label, kind) for value, label, kind
                                 in zip(alternatives, labels, kinds, strict=True))
        for name, value in (
            ("boxes", boxes),
            ("labels", labels),
            ("kinds", kinds),
            ("confidences", confidences),
            ("track_ids", track_ids),
            ("alternatives", alternatives),
        ):
            object.__setattr__(self, name, value)
        boxes.setflags(write=False)
        confidences.setflags(write=False)
        if track_ids is not None:
            track_ids.setflags(write=False)

    # --- making -----------------------------------------------------------
    @classmethod
    def empty(cls) -> Detections:
        return cls(np.zeros((0, 4)), (), (), np.zeros(0))

    @classmethod
    def from_items(cls, items: Iterable[Mapping[str, Any]]) -> Detections:
        """From contract detection objects (``label``, ``kind``, ``box``, ``confidence``,
        and ``alternatives`` as :meth:`to_items` writes them).

        A missing confidence (as in labelled ground truth) reads as 1.0.
        """
        rows = list(items)
        for row in rows:
            if not isinstance(row, Mapping) or "label" not in row or "box" not in row:
                raise DetectionsError(f"a detection needs 'label' and 'box': {row!r}")
        if not rows:
            return cls.empty()
        kinds = tuple(row.get("kind") or _guess_kind(str(row["label"])) for row in rows)
        track = [row.get("track_id") for row in rows]
        confidences = np.array([row.get("confidence", 1.0) for row in rows], dtype=np.float64)
        read = any("alternatives" in row for row in rows)
        return cls(
            boxes=_as_boxes([row["box"] for row in rows]),
            labels=tuple(str(row["label"]) for row in rows),
            kinds=kinds,  # type: ignore[arg-type]
            confidences=confidences,
            track_ids=None if any(t is None for t in track) else np.array(track, dtype=np.int64),
            alternatives=tuple(
                _parse_alternatives(row["alternatives"]) if "alternatives" in row
                else {str(row["label"]): float(confidence)}
                for row, confidence in zip(rows, confidences, strict=True)) if read else None,
        )

    @staticmethod
    def concatenate(parts: Sequence[Detections]) -> Detections:
        parts = [part for part in parts if len(part)]
        if not parts:
            return Detections.empty()
        with_tracks = all(part.track_ids is not None for part in parts)
        read = any(part.alternatives is not None for part in parts)
        return Detections(
            boxes=np.concatenate([part.boxes for part in parts]),
            labels=tuple(label for part in parts for label in part.labels),
            kinds=tuple(kind for part in parts for kind in part.kinds),
            confidences=np.concatenate([part.confidences for part in parts]),
            track_ids=(
                np.concatenate([p.track_ids for p in parts if p.track_ids is not None])
                if with_tracks
                else None
            ),
            alternatives=(tuple(d for part in parts for d in part._distributions())
                          if read else None),
        )

    # --- reading ----------------------------------------------------------
    def __len__(self) -> int:
        return len(self.labels)

    def _distributions(self) -> tuple[Mapping[str, float], ...]:
        """Each item's alternatives, or ``{label: confidence}`` where there are none."""
        if self.alternatives is not None:
            return self.alternatives
        return tuple({label: float(p)}
                     for label, p in zip(self.labels, self.confidences, strict=True))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.to_items())

    def __getitem__(self, index: int | slice | Sequence[int] | npt.NDArray[Any]) -> Detections:
        """A subset: an int, a slice, a list of positions or a boolean mask."""
        if isinstance(index, (int, np.integer)):
            if not -len(self) <= int(index) < len(self):
                raise IndexError(f"detection {index} of {len(self)}")
            positions = np.array([int(index) % len(self)])
        else:
            selector = np.asarray(index) if not isinstance(index, slice) else index
            if isinstance(selector, np.ndarray) and selector.dtype == bool:
                if selector.shape != (len(self),):
                    raise IndexError(f"mask of {selector.shape} for {len(self)} detections")
                positions = np.flatnonzero(selector)
            else:
                positions = np.arange(len(self))[selector].reshape(-1)
        return Detections(
            boxes=self.boxes[positions],
            labels=tuple(self.labels[i] for i in positions),
            kinds=tuple(self.kinds[i] for i in positions),
            confidences=self.confidences[positions],
            track_ids=None if self.track_ids is None else self.track_ids[positions],
            alternatives=(None if self.alternatives is None
                          else tuple(self.alternatives[i] for i in positions)),
        )

    def filter(self, mask: npt.NDArray[np.bool_] | Sequence[bool]) -> Detections:
        return self[np.asarray(mask, dtype=bool)]

    def with_confidence_at_least(self, threshold: float) -> Detections:
        return self.filter(self.confidences >= threshold)

    def of_kind(self, kind: Kind) -> Detections:
        return self.filter(np.array([k == kind for k in self.kinds], dtype=bool))

    @property
    def areas(self) -> FloatArray:
        return (self.boxes[:, 2] - self.boxes[:, 0]) * (self.boxes[:, 3] - self.boxes[:, 1])

    def with_track_ids(self, track_ids: Sequence[int] | IntArray) -> Detections:
        return replace(self, track_ids=np.asarray(track_ids, dtype=np.int64))

    def clipped(self, width: int, height: int) -> Detections:
        """Boxes cut to the image; boxes left with no area are dropped."""
        boxes = self.boxes.copy()
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
        keep = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
        return replace(self[keep], boxes=boxes[keep])

    def scaled(self, sx: float, sy: float) -> Detections:
        if sx <= 0 or sy <= 0:
            raise DetectionsError(f"scale factors must be positive, not ({sx!r}, {sy!r})")
        return replace(self, boxes=self.boxes * np.array([sx, sy, sx, sy]))

    # --- JSON ---------------------------------------------------------------
    def to_items(self) -> list[dict[str, Any]]:
        """Contract detection objects; boxes to 0.1 px, confidences to 4 places.  Items
        with alternatives list them, largest first, under ``alternatives`` as
        ``{"label", "p"}`` objects, probabilities to 4 places."""
        items = []
        for i in range(len(self)):
            item: dict[str, Any] = {
                "label": self.labels[i],
                "kind": self.kinds[i],
                "box": [round(float(v), 1) for v in self.boxes[i]],
                "confidence": round(float(self.confidences[i]), 4),
            }
            if self.track_ids is not None:
                item["track_id"] = int(self.track_ids[i])
            if self.alternatives is not None:
                item["alternatives"] = [{"label": label, "p": round(p, 4)}
                                        for label, p in self.alternatives[i].items()]
            items.append(item)
        return items

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{lab}@{[round(float(v)) for v in box]}"
            for lab, box in zip(self.labels, self.boxes, strict=True)
        )
        return f"Detections({len(self)}: {shown})"


def _parse_alternatives(listed: Any) -> dict[str, Any]:
    """The JSON form's ``alternatives`` (``[{"label", "p"}, ...]``) as a mapping."""
    if not isinstance(listed, list) or not all(
            isinstance(entry, Mapping) and "label" in entry and "p" in entry
            for entry in listed):
        raise DetectionsError(
            f"'alternatives' must be a list of {{\"label\", \"p\"}} objects, not {listed!r:.120}")
    return {str(entry["label"]): entry["p"] for entry in listed}


def _guess_kind(label: str) -> str:
    from tabletop.vision.labels import kind_of

    try:
        return kind_of(label)
    except ValueError as error:
        raise DetectionsError(f"{error}; add \"kind\"") from None


ITEM_BOXES = "item"
"""Boxes drawn around each item as the detector boxes it (a tile, a card's index)."""
WHOLE_CARD_BOXES = "whole card"
"""Boxes drawn around each whole card."""
BOX_MEANINGS = (ITEM_BOXES, WHOLE_CARD_BOXES)
LABEL_LIST = "labels"
"""The :attr:`ImageDetections.meaning` of a line that lists its labels without boxes."""


@dataclass(frozen=True)
class ImageDetections:
    """One line of ``tabletop detect --json`` or of an annotations.jsonl.

    A labelled line says how it labels its items (:data:`BOX_MEANINGS`): by a box
    around each item as the detector boxes it (``item``, the default), by a box
    around each whole card (``whole card``: a card is read when a detection of its
    label lies inside its box), or only by the list of the labels in the picture
    (``labels``, with ``kind``; ``detections`` is then empty)."""

    image: str
    width: int
    height: int
    detections: Detections
    box_meaning: str = ITEM_BOXES
    labels: tuple[str, ...] | None = None
    kind: Kind | None = None

    def __post_init__(self) -> None:
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise DetectionsError(f"{name} must be a positive integer, not {value!r}")
        if self.box_meaning not in BOX_MEANINGS:
            raise DetectionsError(f"box_meaning must be one of {', '.join(BOX_MEANINGS)}, "
                                  f"not {self.box_meaning!r}")
        if self.labels is not None:
            if self.kind not in KINDS:
                raise DetectionsError(f"a label list needs 'kind' (tile or card), "
                                      f"not {self.kind!r}, in {self.image!r}")
            try:
                labels = tuple(normalise_label(str(label), self.kind) for label in self.labels)
            except ValueError as error:
                raise DetectionsError(f"{self.image!r}: {error}") from None
            object.__setattr__(self, "labels", labels)

    @property
    def meaning(self) -> str:
        """How the line labels its items: ``labels`` for a label list, else its boxes'
        meaning (:data:`BOX_MEANINGS`)."""
        return LABEL_LIST if self.labels is not None else self.box_meaning

    def to_json(self, *, with_confidence: bool = True) -> dict[str, Any]:
        """The JSON line; ``with_confidence=False`` (ground truth) leaves out each
        item's confidence and alternatives."""
        items = self.detections.to_items()
        if not with_confidence:
            for item in items:
                del item["confidence"]
                item.pop("alternatives", None)
        line: dict[str, Any] = {"image": self.image, "width": self.width,
                                "height": self.height}
        if self.kind is not None:
            line["kind"] = self.kind
        if self.box_meaning != ITEM_BOXES:
            line["box_meaning"] = self.box_meaning
        if self.labels is not None:
            line["labels"] = list(self.labels)
        line["detections"] = items
        return line

    @classmethod
    def from_json(cls, obj: Any) -> ImageDetections:
        if not isinstance(obj, Mapping):
            raise DetectionsError(f"an image line must be a JSON object, not {obj!r:.80}")
        for key in ("image", "width", "height", "detections"):
            if key not in obj:
                raise DetectionsError(f"image line lacks {key!r}: {json.dumps(obj)[:120]}")
        if not isinstance(obj["detections"], list):
            raise DetectionsError(f"'detections' must be a list in {obj['image']!r}")
        labels = obj.get("labels")
        if labels is not None and not isinstance(labels, list):
            raise DetectionsError(f"'labels' must be a list in {obj['image']!r}")
        if labels is not None and obj["detections"]:
            raise DetectionsError(f"{obj['image']!r} has both 'labels' and boxes")
        return cls(str(obj["image"]), obj["width"], obj["height"],
                   Detections.from_items(obj["detections"]),
                   str(obj.get("box_meaning", ITEM_BOXES)),
                   None if labels is None else tuple(labels), obj.get("kind"))


def read_jsonl(path: str | Path) -> list[ImageDetections]:
    """An annotations.jsonl; errors name the file and line."""
    lines = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                lines.append(ImageDetections.from_json(json.loads(line)))
            except (ValueError, TypeError) as error:
                raise DetectionsError(f"{path}:{number}: {error}") from None
    return lines


def _intersections(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Intersection areas of every box of ``a`` (N x 4) with every box of ``b`` (M x 4),
    and the two boxes' areas."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter, area_a, area_b


def iou_matrix(a: FloatArray, b: FloatArray) -> FloatArray:
    """Intersection over union of every box of ``a`` (N x 4) with every box of ``b`` (M x 4)."""
    inter, area_a, area_b = _intersections(a, b)
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def overlap_of_smaller(a: FloatArray, b: FloatArray) -> FloatArray:
    """Intersection over the smaller area, for every box of ``a`` with every box of ``b``:
    1.0 when one box lies inside the other, however different their sizes."""
    inter, area_a, area_b = _intersections(a, b)
    smaller = np.minimum(area_a[:, None], area_b[None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(smaller > 0, inter / smaller, 0.0)


EDGE_PX = 2.0
"""A box this many pixels or less from a region's inner edge is cut by it
(``vision.detector.Detector.find_in``)."""

DUPLICATE_OVERLAP = 0.6
"""Two boxes of one label that share this much of the smaller are one item seen twice."""


def without_duplicates(detections: Detections, overlap: float = DUPLICATE_OVERLAP
                       ) -> Detections:
    """Keep the most confident of each group of same-label boxes sharing ``overlap`` of
    the smaller box.  Two copies of a tile or card cannot lie in one place, but the
    finder's NMS keeps a shifted second box of one item when their IoU is under its
    threshold, and a reader names both alike."""
    if not 0.0 < overlap <= 1.0:
        raise ValueError(f"overlap must be in (0, 1], not {overlap!r}")
    if len(detections) < 2:
        return detections
    labels = np.asarray(detections.labels)
    return _most_confident_of_each_clash(detections, (labels[:, None] == labels[None, :]) & (
        overlap_of_smaller(detections.boxes, detections.boxes) >= overlap))


def _most_confident_of_each_clash(detections: Detections, clash: npt.NDArray[np.bool_]
                                  ) -> Detections:
    """``detections`` less every box that ``clash`` (N x N) pairs with a more confident one
    still kept."""
    np.fill_diagonal(clash, False)
    if not clash.any():
        return detections  # the usual frame: nothing to merge
    keep = np.ones(len(detections), bool)
    # most confident first: a box still kept here clashes with none kept before it
    for i in np.argsort(-detections.confidences, kind="stable"):
        if keep[i]:
            keep[clash[i]] = False
    return detections.filter(keep)


NESTED_OVERLAP = 0.8
"""Two card-index boxes of different labels that share this much of the smaller are one index
seen twice (a second pass boxing the rank alone, read as another card): indices of two cards
may overlap a little in a tight fan, but never lie one inside the other."""


def without_nested(detections: Detections, kind: str = "card",
                   overlap: float = NESTED_OVERLAP) -> Detections:
    """Keep the most confident of each group of ``kind`` boxes, whatever their labels, of
    which one shares ``overlap`` of the smaller box's area."""
    if not 0.0 < overlap <= 1.0:
        raise ValueError(f"overlap must be in (0, 1], not {overlap!r}")
    of_kind = np.array([k == kind for k in detections.kinds], bool)
    if of_kind.sum() < 2:
        return detections
    return _most_confident_of_each_clash(detections, (of_kind[:, None] & of_kind[None, :]) & (
        overlap_of_smaller(detections.boxes, detections.boxes) >= overlap))


__all__ = [
    "ALTERNATIVES_SLACK",
    "BOX_MEANINGS",
    "DUPLICATE_OVERLAP",
    "ITEM_BOXES",
    "LABEL_LIST",
    "NESTED_OVERLAP",
    "NONE_LABEL",
    "WHOLE_CARD_BOXES",
    "Detections",
    "DetectionsError",
    "ImageDetections",
    "iou_matrix",
    "overlap_of_smaller",
    "read_jsonl",
    "without_duplicates",
    "without_nested",
]
