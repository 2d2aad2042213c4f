"""The reader: a small crop classifier that names what the finder found.

The shipped model is two-stage: a two-class YOLO finder (tile, card index)
and this reader, run on a square crop of every found box (:mod:`tabletop.vision.crops`).
Its classes are :data:`READER_CLASSES`, the detector's classes plus ``none``
(the finder's false alarms).  The finder's kind restricts the reading to that
kind's labels, so a tile is never read as a card: :func:`decide` names each box,
:func:`alternatives` gives its most probable labels with their probabilities.

Inference runs in ONNX Runtime (no torch needed); the model is trained by
:mod:`tabletop.studio.reader_training`.  A reader file may also output its pooled
features (:data:`FEATURES_OUTPUT`), on which a light head fitted to the players' own
set (:mod:`tabletop.vision.reader_head`) corrects its logits.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.crops import CROP_SIZE, crops
from tabletop.vision.detections import NONE_LABEL
from tabletop.vision.labels import CLASS_NAMES, TILE_LABELS, Kind, label_of

if TYPE_CHECKING:
    from tabletop.vision.reader_head import HeadPart

NONE_CLASS = NONE_LABEL
READER_CLASSES: tuple[str, ...] = (*CLASS_NAMES, NONE_CLASS)
NONE_INDEX = len(CLASS_NAMES)
FEATURES_OUTPUT = "features"
"""The name of a reader file's second output, where it has one: the input of its last
linear layer (the pooled features, one row per crop), beside ``logits``."""

_KIND_MASKS: dict[str, npt.NDArray[np.bool_]] = {}
for _kind in ("tile", "card"):
    _mask = np.zeros(len(READER_CLASSES), bool)
    if _kind == "tile":
        _mask[: len(TILE_LABELS)] = True
    else:
        _mask[len(TILE_LABELS) : len(CLASS_NAMES)] = True
    _mask[NONE_INDEX] = True
    _KIND_MASKS[_kind] = _mask


def kind_mask(kind: str) -> npt.NDArray[np.bool_]:
    """Which of :data:`READER_CLASSES` a box of ``kind`` may be read as (``none`` too)."""
    return _KIND_MASKS[kind]


def preprocess(batch: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """(N, H, W, 3) BGR uint8 crops -> (N, 3, H, W) RGB floats in 0..1."""
    return np.ascontiguousarray(batch[..., ::-1].transpose(0, 3, 1, 2), np.float32) / 255.0


def softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    shifted = logits.astype(np.float64) - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


VIEW_SHIFTS: tuple[tuple[float, float], ...] = (
    (0.0, 0.0), (0.04, 0.0), (-0.04, 0.0), (0.0, 0.04), (0.0, -0.04))
"""Where the crops of a box read from several views are centred (fractions of the
box's longer side): the box itself, then nudged right, left, down and up.
Averaging five measured +0.8 points on tiles and +1.5 on card indices of the
rendered held-out set given the true boxes, but only +0.4 points of identity
with the finder's boxes (see models/README.md), so one view is the default."""


QUARTER_TURNS: tuple[int, ...] = (0, 2, 1, 3)
"""The quarter turns a card index's crop is read at, in order: as found, upside
down, then on either side.  A label does not change when its crop turns, and the
reader, trained on items at every angle, errs differently at each turn."""

DEFAULT_CARD_TURNS = 2
"""Card indices are read as found and upside down, the probabilities averaged.
Chosen on rendered sets (models/README.md): held-out crops of card
indices and false alarms went 0.943 -> 0.950 read right, and two fresh rendered
sets gained identity (mixed 0.832 -> 0.836, cards 0.704 -> 0.714) and precision.
Tiles are read once: averaging their turns lowered their confidences, so fewer
were found.  Four turns read 0.004-0.009 more card indices right on
two fresh rendered sets at higher precision, but one fewer on the real card photos,
so it is an option (``card_turns=4``, about 7 % slower on a card table)."""


def check_views(views: int) -> int:
    """``views`` if it is a number of :data:`VIEW_SHIFTS` to read from, else ValueError."""
    if not 1 <= views <= len(VIEW_SHIFTS):
        raise ValueError(f"views must be 1..{len(VIEW_SHIFTS)}, not {views!r}")
    return views


def check_card_turns(turns: int) -> int:
    """``turns`` if it is a usable number of card readings (1, 2 or 4), else ValueError."""
    if turns not in (1, 2, len(QUARTER_TURNS)):
        raise ValueError(f"card turns must be 1, 2 or {len(QUARTER_TURNS)}, not {turns!r}")
    return turns


def within_kind(probabilities: npt.NDArray[np.float64], kinds: Any
                ) -> npt.NDArray[np.float64]:
    """(N, classes) class probabilities of each crop restricted to its kind's labels and
    ``none`` (:func:`kind_mask`) and scaled to sum to 1 again."""
    if len(probabilities) == 0:
        return np.zeros((0, len(READER_CLASSES)))
    within = np.where(np.stack([_KIND_MASKS[kind] for kind in kinds]), probabilities, 0.0)
    return within / np.maximum(within.sum(axis=1, keepdims=True), 1e-12)  # type: ignore[no-any-return]


def decide(probabilities: npt.NDArray[np.float64], kinds: Any
           ) -> tuple[list[str | None], npt.NDArray[np.float64]]:
    """Per crop, from its class probabilities: the label within its kind (None for
    ``none``) and that label's probability among the kind's labels (:func:`within_kind`)."""
    within = within_kind(probabilities, kinds)
    best = within.argmax(axis=1)
    labels = [None if b == NONE_INDEX else label_of(int(b))[0] for b in best]
    return labels, within[np.arange(len(within)), best]


TOP_ALTERNATIVES = 5
"""How many labels of its kind an item's alternatives name, besides ``none``."""


def alternatives(probabilities: npt.NDArray[np.float64], kinds: Any,
                 top: int = TOP_ALTERNATIVES) -> list[dict[str, float]]:
    """Per crop, from its class probabilities: its kind's ``top`` most probable labels
    and ``none``, each with its probability among the kind's labels (as :func:`decide`
    gives the label's), largest first: the ``alternatives`` of
    :class:`tabletop.vision.detections.Detections`."""
    within = within_kind(probabilities, kinds)
    labelled = within.copy()
    labelled[:, NONE_INDEX] = -1.0  # never among the labels
    ranked = np.argsort(-labelled, axis=1, kind="stable")[:, :top]
    listed = []
    for row, order in zip(within, ranked, strict=True):
        pairs = [(label_of(int(j))[0], float(row[j])) for j in order]
        pairs.append((NONE_CLASS, float(row[NONE_INDEX])))
        listed.append(dict(sorted(pairs, key=lambda pair: -pair[1])))
    return listed


def cpu_session(path: Path) -> Any:
    """An ONNX Runtime session of a reader file on the CPU, on every core."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    # constant folding, node fusions and the CPU's own kernel layouts
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Several sessions run one after the other per frame; a spinning thread pool
    # would hold the cores the next session needs.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class Reader:
    """A loaded reader: ``reader(image, boxes, kinds) -> (labels, probabilities)``.

    ``head``: a correction of its last layer fitted to the players' set
    (:class:`tabletop.vision.reader_head.HeadPart`), added to the logits of the crops of
    the head's kinds; it needs a file with the :data:`FEATURES_OUTPUT` output
    (ValueError otherwise).  A file without that output reads as before, without a head."""

    def __init__(self, path: str | Path, head: HeadPart | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"reader model {str(self.path)!r} does not exist")
        self._session = cpu_session(self.path)
        shape = self._session.get_inputs()[0].shape
        self.size = int(shape[2]) if isinstance(shape[2], int) else CROP_SIZE
        outputs = self._session.get_outputs()
        if outputs[0].shape[-1] != len(READER_CLASSES):
            raise ValueError(f"reader {str(self.path)!r} has {outputs[0].shape[-1]} classes, "
                             f"not {len(READER_CLASSES)}")
        self._logits_name = outputs[0].name
        self.has_features = any(output.name == FEATURES_OUTPUT for output in outputs[1:])
        if head is not None and not self.has_features:
            raise ValueError(f"reader {str(self.path)!r} has no {FEATURES_OUTPUT!r} output "
                             "for a head to read")
        self.head = head

    def _run(self, batch: npt.NDArray[np.uint8], names: list[str]) -> list[Any]:
        name = self._session.get_inputs()[0].name
        return self._session.run(names, {name: preprocess(batch)})  # type: ignore[no-any-return]

    def logits(self, batch: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """(N, classes) logits of (N, H, W, 3) BGR crops, as the file computes them (no head)."""
        if len(batch) == 0:
            return np.zeros((0, len(READER_CLASSES)), np.float32)
        return self._run(batch, [self._logits_name])[0]  # type: ignore[no-any-return]

    def read(self, batch: npt.NDArray[np.uint8]
             ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """The file's logits and features of (N, H, W, 3) BGR crops, from one run;
        ValueError for a file without the :data:`FEATURES_OUTPUT` output."""
        if not self.has_features:
            raise ValueError(f"reader {str(self.path)!r} has no {FEATURES_OUTPUT!r} output")
        if len(batch) == 0:
            return np.zeros((0, len(READER_CLASSES)), np.float32), np.zeros(
                (0, self._session.get_outputs()[1].shape[-1]), np.float32)
        logits, features = self._run(batch, [self._logits_name, FEATURES_OUTPUT])
        return logits, features

    def features(self, batch: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        """(N, features) of (N, H, W, 3) BGR crops (:meth:`read`)."""
        return self.read(batch)[1]

    def _logits(self, batch: npt.NDArray[np.uint8], kinds: Sequence[str]
                ) -> npt.NDArray[np.float32]:
        """The logits of crops of items of ``kinds``, the head's correction added to the
        crops of its kinds."""
        head = self.head
        if head is None or not any(kind in head.kinds for kind in kinds):
            return self.logits(batch)
        logits, features = self.read(batch)
        return head.apply(logits, features, np.array([kind in head.kinds for kind in kinds]))

    def probabilities(self, image: npt.NDArray[np.uint8], boxes: Any, kinds: list[Kind],
                      views: int = 1, card_turns: int = 1,
                      shifts: Sequence[tuple[float, float]] | None = None
                      ) -> npt.NDArray[np.float64]:
        """(N, classes) averaged class probabilities of each box: from ``views``
        crops (:data:`VIEW_SHIFTS`; ``shifts``: these views instead) and, for card
        indices, ``card_turns`` turns of each (:data:`QUARTER_TURNS`)."""
        check_views(views)
        check_card_turns(card_turns)
        # the plain crop is the first view, so one view is the plain reading
        chosen = tuple(shifts) if shifts is not None else VIEW_SHIFTS[:views]
        views = len(chosen)
        batch = np.concatenate([crops(image, boxes, self.size, shift=shift)
                                for shift in chosen])
        probabilities = softmax(self._logits(batch, list(kinds) * views)).reshape(
            views, -1, len(READER_CLASSES))
        cards = np.flatnonzero([kind == "card" for kind in kinds])
        if card_turns > 1 and len(cards):
            count = len(kinds)
            card_crops = batch.reshape(views, count, *batch.shape[1:])[:, cards]
            card_crops = card_crops.reshape(-1, *batch.shape[1:])
            turned = np.concatenate([np.rot90(card_crops, turn, axes=(1, 2))
                                     for turn in QUARTER_TURNS[1:card_turns]])
            readings = softmax(self._logits(np.ascontiguousarray(turned),
                                            ["card"] * len(turned))).reshape(
                card_turns - 1, views, len(cards), len(READER_CLASSES))
            probabilities[:, cards] = (probabilities[:, cards] + readings.sum(axis=0)
                                       ) / card_turns
        return probabilities.mean(axis=0)  # type: ignore[no-any-return]

    def __call__(self, image: npt.NDArray[np.uint8], boxes: Any, kinds: list[Kind],
                 views: int = 1, card_turns: int = 1
                 ) -> tuple[list[str | None], npt.NDArray[np.float64]]:
        """Name each box.  With ``views`` > 1 each box is read from that many crops
        (:data:`VIEW_SHIFTS`) and their probabilities are averaged, at ``views``
        times the cost; with ``card_turns`` > 1 each card index's crops are also
        read turned (:data:`QUARTER_TURNS`) and averaged in."""
        return decide(self.probabilities(image, boxes, kinds, views, card_turns), kinds)
