"""Adapting the two-stage model to the players' own tile set or deck (issue 33, item 3).

Tile sets and decks differ in fonts and colours; a few labelled photos of the set
on the table teach the shipped model what it looks like.  :func:`adapt` works on
the CPU in a few minutes, starting from the shipped ONNX files, and writes a
complete model folder that :class:`tabletop.vision.detector.Detector` loads as
``Detector(DIR / "tabletop.onnx")``:

* ``tabletop.onnx``, ``tabletop.cards.onnx``: the base model's finders, their
  boxes moved and scaled as the photos' labels draw them (:class:`BoxFit`, fitted
  per kind on the finder's boxes of the labelled items, kept where they then overlap
  their labels more on average and no fewer by IoU 0.5; baked into the ONNX graph by
  :func:`fitted_finder`), else copied unchanged.  Retraining a finder does not
  fit in the minutes this has on two cores;
* ``tabletop.reader.onnx``: the reader fine-tuned on the photos' tiles, or the
  base's when the photos label no tile;
* ``tabletop.cards.reader.onnx``: the card reader fine-tuned on the photos'
  card indices, or the base's when they label none;
* ``adapted.json``: what was done (base model, photos, label counts, box fits,
  steps, time, date).

What the readers are taught, per labelled photo (:func:`photo_crops`):

* a crop of every labelled box, cut as the reader's training crops are
  (:data:`studio.reader_training.STORED_CONTEXT` around the box, re-cut to the
  reader's 64 x 64 crop at :data:`vision.crops.CONTEXT` with random jitter while
  training, :func:`tabletop.studio.reader_training._augment`), card indices also at a
  random quarter turn (:data:`TURNED_KINDS`);
* a crop of every box the base finder gives on the photo (at confidence
  :data:`FINDER_CONFIDENCE`), labelled by its overlap with the labels
  (:func:`tabletop.studio.reader_training.label_found`): the boxes the reader will be
  handed, slightly off the labelled ones, and the finder's false alarms as
  ``none`` so that the adapted reader keeps rejecting them;
* a few crops of bare table (``none``), as in the reader's training;
* beside them, as many crops of rendered scenes of the reader's kind
  (:func:`rehearsal_crops`, every label): a few photos hold a few labels, and a
  reader taught those alone forgets the others.

A photo whose line says ``"partial": true`` (a correction made during play,
:func:`corrections_to_jsonl`) labels only some of its items: it gives crops of
those items alone, as neither the finder's other boxes nor bare table can be
told from an unlabelled item there.

Inputs (:func:`read_labelled`): the contract's detect JSONL form, one line per
photo, ``{"image": "images/x.jpg", "width": W, "height": H, "detections":
[{"label": "R7", "kind": "tile", "box": [x1, y1, x2, y2]}, ...]}``, image paths
relative to the JSONL file's folder, boxes in the pixels of ``width`` x
``height`` (scaled to the image file's if it differs).  Two more ways make that
form: :func:`layout_to_jsonl` labels a photo of the set laid out in a known
order (rows of 1..13 per colour, then the jokers; a deck in rows by suit), and
:func:`corrections_to_jsonl` turns the panel's corrections into lines.

Needs torch (the ``train`` extra) for :func:`adapt` only; the rest is numpy and
OpenCV.  :func:`adapt_light`, the way without torch, keeps the base's files and adds the
set's inks and a light head on the readers' features (:mod:`tabletop.vision.reader_head`).
"""

from __future__ import annotations

import datetime
import itertools
import json
import math
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.paths import adapted_models_dir
from tabletop.vision.detections import Detections, ImageDetections, iou_matrix, read_jsonl
from tabletop.vision.labels import (
    CARD_RANKS,
    CARD_SUITS,
    JOKER,
    TILE_COLOURS,
    Kind,
    class_id,
    kind_of,
)
from tabletop.vision.palette import SetInks, ink_features
from tabletop.vision.reader import NONE_INDEX, READER_CLASSES

MODEL_NAME = "tabletop"
"""The stem of the files of an adapted model folder: ``DIR/tabletop.onnx`` and its siblings."""
ADAPTED_INFO = "adapted.json"
"""The record of what an adapted folder was made from, beside its model files."""
DEFAULT_ADAPTED_NAME = "default"
"""The folder, in the user data folder's adapted models, that ``tabletop adapt`` writes
when no ``--out`` is given: the active set's model."""

FINDER_CONFIDENCE = 0.1
"""The base finder's boxes kept for the readers' crops: fainter than the detector's 0.25,
so the readers also see the near-misses they will be handed at a lower ``--conf``."""
DEFAULT_EPOCHS = 6
"""Passes over the crops (each at least :data:`MIN_STEPS_PER_EPOCH` batches)."""
MIN_STEPS_PER_EPOCH = 25
"""A pass over the crops of one or two photos is a batch or two; each pass takes at
least this many batches (drawn with the pass's shuffles), so that few photos get as
many updates as many photos do and the run's length hardly depends on their count."""
BATCH = 32
LEARNING_RATE = 2e-4
"""The one-cycle schedule's peak (AdamW).  The shipped readers' last fine-tunes ran at
3e-4 to 1e-3 on 100-250 k rendered crops; these are a few hundred real ones.  Adapted
on three development photos at 5e-4, the reader misread three 6 and 9 tiles of the
other five (6 for 9 or 9 for 6; the shipped reader none), at 2e-4 two."""
WEIGHT_DECAY = 5e-4
TUNED_HALF_ITEMS = 50
"""The labelled items of a kind at which an adapted reader is half fine-tuned, half the
base reader (:func:`tuned_share`).  Adapted on three development photos (41 tiles) and
measured on the other five, the reader read 29 of 31 tiles right at 50 or 150, 27 fully
fine-tuned; on one photo (16 tiles) the reader's share made no difference."""
MAX_PHOTOS_HINT = 10
"""What the time target is stated for: up to this many photos in under 5 minutes."""
REHEARSAL_SCENES = 12
"""Rendered scenes (of the reader's kind) whose crops are rehearsed beside the photos'.
Adapted on three development photos without them, the reader called two tiles of the
other five ``none`` (a K1 and a K3, labels the three photos lacked); with them, none."""
REHEARSAL_SEED = 33_000_000
"""The rendered scenes' first seed: far from the seeds of the training sets."""
REHEARSAL_SIZE = (960, 540)
TURNED_KINDS = ("card",)
"""The kinds whose crops are also taught at random quarter turns.  Card indices are
read as found and upside down (:data:`vision.reader.DEFAULT_CARD_TURNS`) by a card
reader trained at every angle; a tile is read once, and a 6 tile turned over is a 9
but for its mark, so tiles' crops are not turned."""


class AdaptError(ValueError):
    """Input ``adapt`` cannot use (a missing photo, a bad label, nothing labelled); one line."""


# --- the labelled photos ---------------------------------------------------------------
@dataclass(frozen=True)
class LabelledPhoto:
    """One line of an annotations JSONL, resolved: the photo's file and its labels in
    the file's pixels (read when needed, see :meth:`read`)."""

    path: Path
    """The photo (the JSONL line's ``image`` taken from the JSONL file's folder)."""
    source: Path
    """The JSONL file it was listed in."""
    line: int
    record: ImageDetections
    partial: bool = False
    """Only some of its items are labelled (``"partial": true``, a correction)."""

    def read(self) -> tuple[npt.NDArray[np.uint8], Detections]:
        """The photo (BGR) and its labels in the photo file's pixels; AdaptError when
        the file cannot be read."""
        import cv2

        image = cv2.imread(str(self.path), cv2.IMREAD_COLOR)
        if image is None:
            raise AdaptError(f"{self.source}:{self.line}: cannot read the image "
                             f"{str(self.path)!r}")
        truth = self.record.detections
        height, width = image.shape[:2]
        if (height, width) != (self.record.height, self.record.width):
            truth = truth.scaled(width / self.record.width, height / self.record.height)
        return image, truth


def read_labelled(files: Iterable[str | Path]) -> list[LabelledPhoto]:
    """The labelled photos of one or more annotation JSONL files (the contract's detect
    form, image paths relative to each file's folder), every image checked to exist.
    AdaptError (one line) for a missing file or image, a label that is no contract
    token, or no labelled item at all."""
    photos: list[LabelledPhoto] = []
    listed = [Path(file) for file in files]
    if not listed:
        raise AdaptError("no annotations given: name one or more JSONL files of labelled "
                         "photos (or a layout photo)")
    for file in listed:
        if not file.is_file():
            raise AdaptError(f"no annotations file {str(file)!r}")
        records = read_jsonl(file)  # DetectionsError (a ValueError) names file and line
        partial = _partial_flags(file)
        for number, record in enumerate(records):
            path = Path(os.path.normpath(file.parent / record.image))
            if not path.is_file():
                raise AdaptError(f"{file}:{partial[number][0]}: the image {record.image!r} is "
                                 f"not at {str(path)!r} (paths are relative to the "
                                 "annotations file's folder)")
            photos.append(LabelledPhoto(path, file, partial[number][0], record,
                                        partial[number][1]))
    if not photos:
        raise AdaptError(f"no labelled photo in {', '.join(str(f) for f in listed)}")
    if not any(len(photo.record.detections) for photo in photos):
        raise AdaptError(f"no labelled item in the {len(photos)} photo(s) of "
                         f"{', '.join(str(f) for f in listed)}: nothing to adapt to")
    return photos


def _partial_flags(file: Path) -> list[tuple[int, bool]]:
    """Per non-empty line of an annotations file: its line number and its ``partial`` flag."""
    flags = []
    with open(file, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                value = json.loads(line)
                flags.append((number, bool(value.get("partial", False))
                              if isinstance(value, dict) else False))
    return flags


# --- crops -------------------------------------------------------------------------------
@dataclass
class CropSet:
    """Stored crops (:data:`studio.reader_training.STORED_SIZE`, BGR) and their reader
    classes, for one reader."""

    images: list[npt.NDArray[np.uint8]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)

    def add(self, image: npt.NDArray[np.uint8], label: int) -> None:
        self.images.append(image)
        self.labels.append(label)

    def extend(self, other: CropSet) -> None:
        self.images.extend(other.images)
        self.labels.extend(other.labels)

    def __len__(self) -> int:
        return len(self.labels)

    def arrays(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
        from tabletop.studio.reader_training import STORED_SIZE

        if not self.images:
            return np.zeros((0, STORED_SIZE, STORED_SIZE, 3), np.uint8), np.zeros(0, np.int64)
        return np.stack(self.images), np.asarray(self.labels, np.int64)

    def counts(self) -> dict[str, int]:
        """Crops per reader class name (``none`` included)."""
        counted = Counter(READER_CLASSES[label] for label in self.labels)
        return dict(sorted(counted.items()))


def _kind_of_class(index: int) -> str | None:
    """The kind a reader class belongs to (None for ``none``)."""
    if index == NONE_INDEX:
        return None
    from tabletop.vision.labels import label_of

    return label_of(index)[1]


def photo_crops(image: npt.NDArray[np.uint8], truth: Detections, found: Detections,
                seed: int, partial: bool = False) -> dict[str, CropSet]:
    """The crops one labelled photo gives each reader (see the module's docstring):
    ``{"tile": ..., "card": ...}``.  ``found``: the base finder's boxes on it."""
    from tabletop.studio.reader_training import (
        STORED_CONTEXT,
        STORED_SIZE,
        label_found,
        stored_crops,
    )
    from tabletop.vision.crops import crop

    out = {"tile": CropSet(), "card": CropSet()}
    classes = [class_id(label, kind) for label, kind in zip(truth.labels, truth.kinds,
                                                            strict=True)]
    if partial:
        for box, kind, label in zip(truth.boxes, truth.kinds, classes, strict=True):
            out[kind].add(crop(image, box, STORED_SIZE, STORED_CONTEXT), label)
    else:
        # the labelled boxes and bare table, exactly as the reader's training cuts them
        stored, labels = stored_crops(image, truth.boxes.tolist(), classes, seed)
        for index, (picture, label) in enumerate(zip(stored, labels, strict=True)):
            if index < len(classes):
                out[truth.kinds[index]].add(picture, label)
            else:  # bare table: a false alarm for either reader
                out["tile"].add(picture, label)
                out["card"].add(picture, label)
    for box, kind, label in zip(found.boxes, found.kinds, label_found(found, truth),
                                strict=True):
        if label is None or (partial and label == NONE_INDEX):
            continue
        out[kind].add(crop(image, box, STORED_SIZE, STORED_CONTEXT), label)
    return out


# --- fine-tuning ---------------------------------------------------------------------------
def _quarter_turns(x: Any, generator: Any) -> Any:
    """Each crop of a (N, 3, S, S) batch turned by a random multiple of 90 degrees."""
    torch = _torch()
    turns = torch.randint(0, 4, (x.shape[0],), generator=generator)
    out = x.clone()
    for k in (1, 2, 3):
        chosen = turns == k
        if bool(chosen.any()):
            out[chosen] = torch.rot90(x[chosen], k, dims=(2, 3))
    return out


def _torch() -> Any:
    import torch

    return torch


def rehearsal_crops(kind: str, scenes: int = REHEARSAL_SCENES, seed: int = REHEARSAL_SEED,
                    size: tuple[int, int] = REHEARSAL_SIZE) -> CropSet:
    """Stored crops of rendered scenes of ``kind`` (``tile`` or ``card``): every labelled
    item and some bare table, as :mod:`tabletop.studio.reader_training` cuts them.  The same
    arguments give the same crops."""
    from tabletop.studio.reader_training import stored_crops
    from tabletop.studio.synth.scene import render_scene

    out = CropSet()
    for index in range(scenes):
        scene = render_scene(seed + index, size[0], size[1], kind=f"{kind}s")
        truth = scene.detections.of_kind(kind)  # type: ignore[arg-type]
        classes = [class_id(label, kind) for label in truth.labels]
        images, labels = stored_crops(scene.image, truth.boxes.tolist(), classes, seed + index)
        for image, label in zip(images, labels, strict=True):
            out.add(image, label)
    return out


def fine_tune(reader: str | Path, images: npt.NDArray[np.uint8], labels: npt.NDArray[np.int64],
              out: str | Path, *, rehearsal: CropSet | None = None,
              epochs: int = DEFAULT_EPOCHS, batch: int = BATCH, lr: float = LEARNING_RATE,
              seed: int = 0, turns: bool = False, tuned_share: float = 1.0,
              log: Callable[[str], None] | None = None) -> tuple[Path, int]:
    """Fine-tune the exported reader at ``reader`` on stored crops and export the result
    to ``out``; returns it and the number of training steps.

    The net starts as the file reads (:func:`tabletop.studio.reader_training.net_from_onnx`,
    its batchnorm statistics taken from these crops and then kept: a few hundred crops
    give batches too small to re-estimate them), and every batch is re-cut with the
    reader's training jitter; with ``turns`` each crop is also turned by a random
    quarter turn (:data:`TURNED_KINDS`).  Each step takes ``batch`` of the crops and,
    with ``rehearsal``, as many of those (rendered crops of every label, so that labels
    the photos lack are not forgotten)."""
    from tabletop.studio.reader_training import _as_tensor, _augment, export_onnx, net_from_onnx

    torch = _torch()
    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    net = net_from_onnx(reader, images)
    start = {name: value.detach().clone() for name, value in net.state_dict().items()}
    norms = [m for m in net if isinstance(m, torch.nn.BatchNorm2d)]
    steps_per_epoch = max(math.ceil(len(images) / batch), MIN_STEPS_PER_EPOCH)
    total = max(1, epochs) * steps_per_epoch
    optimiser = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=WEIGHT_DECAY)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, lr, total_steps=total,
                                                   pct_start=0.15)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    sources = [(_as_tensor(images), torch.from_numpy(np.asarray(labels, np.int64)))]
    if rehearsal is not None and len(rehearsal):
        kept, classes = rehearsal.arrays()
        sources.append((_as_tensor(kept), torch.from_numpy(classes)))
    orders = [torch.zeros(0, dtype=torch.long) for _ in sources]
    started = time.monotonic()
    for step in range(total):
        parts, targets = [], []
        for index, (stored, target) in enumerate(sources):
            if len(orders[index]) < batch:
                orders[index] = torch.cat([orders[index],
                                           torch.randperm(len(stored), generator=generator)])
            pick, orders[index] = orders[index][:batch], orders[index][batch:]
            parts.append(stored[pick])
            targets.append(target[pick])
        x = torch.cat(parts)
        net.train()
        for norm in norms:
            norm.eval()
        x = _augment(_quarter_turns(x, generator) if turns else x, generator, train=True)
        loss = loss_fn(net(x), torch.cat(targets))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if log is not None and (step + 1) % steps_per_epoch == 0:
            log(f"  epoch {(step + 1) // steps_per_epoch}/{epochs}: loss {loss.item():.3f} "
                f"({time.monotonic() - started:.0f} s)")
    if tuned_share < 1.0:
        tuned = net.state_dict()
        net.load_state_dict({
            name: (tuned_share * value + (1.0 - tuned_share) * start[name])
            if value.is_floating_point() else value for name, value in tuned.items()})
    return export_onnx(net, out), total


def tuned_share(items: int) -> float:
    """How much of the fine-tuned reader's weights an adapted reader takes (the rest are
    the base reader's): ``items / (items + TUNED_HALF_ITEMS)``.  Fine-tuned on a photo
    or three, a reader learns those photos' items and their light too well and reads
    other photos of the same set worse than before; averaging the weights of the
    fine-tuned and the starting net keeps most of the gain and little of that loss
    (weight-space ensembling, Wortsman et al. 2022, "Robust fine-tuning of zero-shot
    models"), and the more items the photos hold, the more the fine-tuned net is
    trusted."""
    return items / (items + TUNED_HALF_ITEMS) if items > 0 else 0.0


# --- the finder's boxes, as the players' labels draw them ---------------------------------
BOX_FIT_MIN_PAIRS = 30
"""Labelled items of a kind, each with a finder box on it, needed to fit that kind's boxes.
Fitted on the 16 tiles of one development photo, the boxes read the other seven
development photos' tiles far worse (identity 0.64 against 0.93 unmoved): medians of so
few pairs follow one photo's view.  Three photos (41 tiles) and one photo of a deck
(52 card indices) fit boxes that help."""
BOX_PAIR_IOU = 0.3
"""A labelled item and the finder's box of its kind overlapping it most are a pair when
they overlap by this IoU or more."""


@dataclass(frozen=True)
class BoxFit:
    """How the labels' boxes of one kind sit on the finder's: the labelled box's width
    and height as multiples of the finder box's, and its centre's shift in the finder
    box's width and height (medians over the pairs).  The real tile photos' labels take
    in the side of the tile the camera sees, so they are taller than the finder's boxes
    and lower; where they differ enough, items found are matched to no label (IoU under
    0.5) and count as missed."""

    width: float = 1.0
    height: float = 1.0
    dx: float = 0.0
    dy: float = 0.0
    pairs: int = 0

    @property
    def is_identity(self) -> bool:
        return (self.width, self.height, self.dx, self.dy) == (1.0, 1.0, 0.0, 0.0)

    def apply(self, boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``boxes`` (N x 4, x1 y1 x2 y2) moved and scaled as the labels draw them."""
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        cx = (boxes[:, 0] + boxes[:, 2]) / 2 + self.dx * w
        cy = (boxes[:, 1] + boxes[:, 3]) / 2 + self.dy * h
        w, h = w * self.width, h * self.height
        return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)

    def to_json(self) -> dict[str, float]:
        return {"width": round(self.width, 4), "height": round(self.height, 4),
                "dx": round(self.dx, 4), "dy": round(self.dy, 4), "pairs": self.pairs}


def box_pairs(found: Detections, truth: Detections, kind: str
              ) -> list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    """(finder box, labelled box) of every labelled item of ``kind`` that a finder box of
    its kind overlaps by :data:`BOX_PAIR_IOU` or more (the one overlapping most)."""
    from tabletop.vision.detections import iou_matrix

    mine, labelled = found.of_kind(kind), truth.of_kind(kind)  # type: ignore[arg-type]
    if not len(mine) or not len(labelled):
        return []
    overlaps = iou_matrix(labelled.boxes, mine.boxes)
    best = overlaps.argmax(axis=1)
    return [(mine.boxes[j], labelled.boxes[i]) for i, j in enumerate(best)
            if overlaps[i, j] >= BOX_PAIR_IOU]


def fit_boxes(pairs: Sequence[tuple[Any, Any]]) -> BoxFit:
    """The :class:`BoxFit` of (finder box, labelled box) pairs: the medians of the
    labelled boxes' sizes and shifts relative to the finder's; the identity with fewer
    than :data:`BOX_FIT_MIN_PAIRS` pairs."""
    if len(pairs) < BOX_FIT_MIN_PAIRS:
        return BoxFit(pairs=len(pairs))
    found = np.asarray([pair[0] for pair in pairs], np.float64)
    labelled = np.asarray([pair[1] for pair in pairs], np.float64)
    fw = np.maximum(found[:, 2] - found[:, 0], 1e-6)
    fh = np.maximum(found[:, 3] - found[:, 1], 1e-6)
    lw = np.maximum(labelled[:, 2] - labelled[:, 0], 1e-6)
    lh = np.maximum(labelled[:, 3] - labelled[:, 1], 1e-6)
    dx = ((labelled[:, 0] + labelled[:, 2]) - (found[:, 0] + found[:, 2])) / 2 / fw
    dy = ((labelled[:, 1] + labelled[:, 3]) - (found[:, 1] + found[:, 3])) / 2 / fh
    return BoxFit(float(np.exp(np.median(np.log(lw / fw)))),
                  float(np.exp(np.median(np.log(lh / fh)))),
                  float(np.median(dx)), float(np.median(dy)), len(pairs))


def _overlaps(pairs: Sequence[tuple[Any, Any]], fit: BoxFit) -> npt.NDArray[np.float64]:
    """Each pair's IoU once ``fit`` moves the finder's box."""
    from tabletop.vision.detections import iou_matrix

    if not pairs:
        return np.zeros(0)
    found = fit.apply(np.asarray([pair[0] for pair in pairs], np.float64))
    labelled = np.asarray([pair[1] for pair in pairs], np.float64)
    return np.array([iou_matrix(f[None], t[None])[0, 0]
                     for f, t in zip(found, labelled, strict=True)])


def fitted_boxes(pairs: Sequence[tuple[Any, Any]]) -> BoxFit:
    """:func:`fit_boxes`, kept only where it helps: where the pairs overlap more on
    average with the fit than without, and no fewer of them by IoU 0.5 (what
    :mod:`tabletop.studio.evaluate` counts as found)."""
    from tabletop.studio.evaluate import IOU_THRESHOLD

    fit = fit_boxes(pairs)
    if fit.is_identity:
        return fit
    moved, unmoved = _overlaps(pairs, fit), _overlaps(pairs, BoxFit())
    if moved.mean() <= unmoved.mean() or (
            (moved >= IOU_THRESHOLD).sum() < (unmoved >= IOU_THRESHOLD).sum()):
        return BoxFit(pairs=len(pairs))
    return fit


def apply_fits(found: Detections, fits: dict[str, BoxFit]) -> Detections:
    """``found`` with each kind's boxes moved by its fit (as the adapted finder gives them)."""
    boxes = np.array(found.boxes, np.float64)
    for kind, fit in fits.items():
        chosen = np.asarray(found.kinds) == kind
        if chosen.any() and not fit.is_identity:
            boxes[chosen] = fit.apply(boxes[chosen])
    return Detections(boxes, found.labels, found.kinds, found.confidences)


def fitted_finder(source: str | Path, out: str | Path, fits: dict[str, BoxFit]) -> Path:
    """A copy of the exported finder at ``source`` whose boxes each kind's fit moves:
    nodes added after its output (x, y, w, h and a score per class, per anchor) move
    every anchor's box by the fit of the class it scores highest, before the detector's
    non-maximum suppression, so both passes and the merging see the moved boxes."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from tabletop.vision.detector import FINDER_NAMES

    model = onnx.load(str(source))
    graph = model.graph
    output = graph.output[0]
    dims = output.type.tensor_type.shape.dim
    classes = len(FINDER_NAMES)
    if len(graph.output) != 1 or len(dims) != 3 or dims[1].dim_value != 4 + classes:
        raise AdaptError(f"{str(source)!r} is not an exported finder (want one output of "
                         f"shape batch x {4 + classes} x anchors)")
    raw = f"{output.name}_unmoved"
    for node in graph.node:
        for index, name in enumerate(node.output):
            if name == output.name:
                node.output[index] = raw
    tile, card = (fits.get(kind, BoxFit()) for kind in FINDER_NAMES)

    def constant(name: str, value: float) -> str:
        graph.initializer.append(numpy_helper.from_array(np.array(value, np.float32),
                                                         f"adapt_{name}"))
        return f"adapt_{name}"

    parts = [f"adapt_part{i}" for i in range(4 + classes)]
    nodes = [helper.make_node("Split", [raw, constant_split(graph, 4 + classes)], parts,
                              axis=1, name="adapt_split"),
             helper.make_node("GreaterOrEqual", [parts[4], parts[5]], ["adapt_tile_bool"],
                              name="adapt_is_tile"),
             helper.make_node("Cast", ["adapt_tile_bool"], ["adapt_tile"],
                              to=TensorProto.FLOAT, name="adapt_tile_float")]

    def by_kind(name: str, tile_value: float, card_value: float) -> str:
        # card_value + (tile_value - card_value) * is_tile, per anchor
        nodes.append(helper.make_node("Mul", ["adapt_tile", constant(f"{name}_step",
                                                                     tile_value - card_value)],
                                      [f"adapt_{name}_steps"], name=f"adapt_{name}_mul"))
        nodes.append(helper.make_node("Add", [f"adapt_{name}_steps",
                                              constant(f"{name}_card", card_value)],
                                      [f"adapt_{name}"], name=f"adapt_{name}_add"))
        return f"adapt_{name}"

    sw = by_kind("width", tile.width, card.width)
    sh = by_kind("height", tile.height, card.height)
    dx = by_kind("dx", tile.dx, card.dx)
    dy = by_kind("dy", tile.dy, card.dy)
    x, y, w, h = parts[:4]
    nodes += [
        helper.make_node("Mul", [dx, w], ["adapt_shift_x"], name="adapt_shift_x"),
        helper.make_node("Add", [x, "adapt_shift_x"], ["adapt_x"], name="adapt_x"),
        helper.make_node("Mul", [dy, h], ["adapt_shift_y"], name="adapt_shift_y"),
        helper.make_node("Add", [y, "adapt_shift_y"], ["adapt_y"], name="adapt_y"),
        helper.make_node("Mul", [w, sw], ["adapt_w"], name="adapt_w"),
        helper.make_node("Mul", [h, sh], ["adapt_h"], name="adapt_h"),
        helper.make_node("Concat", ["adapt_x", "adapt_y", "adapt_w", "adapt_h", *parts[4:]],
                         [output.name], axis=1, name="adapt_concat"),
    ]
    graph.node.extend(nodes)
    entry = model.metadata_props.add()
    entry.key, entry.value = "tabletop_box_fit", json.dumps(
        {kind: fits.get(kind, BoxFit()).to_json() for kind in FINDER_NAMES})
    onnx.checker.check_model(model)
    out = Path(out)
    onnx.save(model, str(out))
    return out


def constant_split(graph: Any, pieces: int) -> str:
    """An initializer of ``pieces`` ones (the sizes of a Split into single rows)."""
    from onnx import numpy_helper

    graph.initializer.append(numpy_helper.from_array(np.ones(pieces, np.int64), "adapt_split"))
    return "adapt_split"


# --- the model folder ------------------------------------------------------------------------
def model_files(finder: Path) -> dict[str, Path]:
    """The files of the two-stage model whose finder is ``finder``, by role."""
    from tabletop.vision.detector import (
        card_finder_path,
        card_reader_path,
        face_reader_path,
        reader_path,
    )

    return {"finder": finder, "reader": reader_path(finder),
            "card_finder": card_finder_path(finder), "card_reader": card_reader_path(finder),
            "faces": face_reader_path(finder)}


def adapted_model(folder: str | Path) -> Path:
    """The finder file of an adapted model folder (``DIR/tabletop.onnx``, what
    :class:`tabletop.vision.detector.Detector` takes); AdaptError when ``folder`` is not one."""
    folder = Path(folder)
    finder = folder / f"{MODEL_NAME}.onnx"
    if not (folder / ADAPTED_INFO).is_file() or not finder.is_file():
        raise AdaptError(f"{str(folder)!r} is not an adapted model folder (no {ADAPTED_INFO} "
                         f"and {finder.name}; make one with 'tabletop adapt')")
    return finder


def default_adapted_dir() -> Path:
    """Where ``tabletop adapt`` writes without ``--out``: the active set's model in the
    user data folder (``tabletop.paths.adapted_models_dir()``)."""
    return adapted_models_dir() / DEFAULT_ADAPTED_NAME


def active_adapted_model() -> Path | None:
    """The active set's adapted finder (:func:`default_adapted_dir`), or None when no
    model has been adapted there; looking creates nothing."""
    try:
        return adapted_model(adapted_models_dir(create=False) / DEFAULT_ADAPTED_NAME)
    except AdaptError:
        return None


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise AdaptError(f"--out {str(out)!r} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / ADAPTED_INFO).is_file():
        raise AdaptError(f"--out {str(out)!r} holds other files and no {ADAPTED_INFO}: "
                         "give an empty or new folder (or an adapted model's, to replace it)")


def base_finder(base_model: str | Path | None = None) -> Path:
    """The finder file of the model to adapt: ``base_model`` (a two-stage ``.onnx``
    finder, or an adapted model folder) or the shipped ``models/tabletop.onnx``."""
    from tabletop.vision.detector import DEFAULT_MODELS

    finder = Path(base_model) if base_model is not None else DEFAULT_MODELS[0]
    if finder.is_dir():
        finder = adapted_model(finder)
    if finder.suffix != ".onnx" or not finder.is_file():
        raise AdaptError(f"base model {str(finder)!r}: want an existing two-stage .onnx "
                         "finder with its reader beside it")
    return finder


def _base_files(base_model: str | Path | None) -> dict[str, Path]:
    finder = base_finder(base_model)
    files = model_files(finder)
    if not files["reader"].is_file():
        raise AdaptError(f"base model {str(finder)!r} has no reader "
                         f"{files['reader'].name!r} beside it: only a two-stage model adapts")
    return files


# --- adapting ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class AdaptResult:
    """What :func:`adapt` did."""

    out: Path
    """The model folder; ``Detector(out / "tabletop.onnx")`` loads it."""
    base: Path
    photos: tuple[str, ...]
    items: dict[str, int]
    """Labelled items per kind."""
    labels: dict[str, int]
    """Labelled items per label (a card joker as ``JK.card``)."""
    crops: dict[str, int]
    """Training crops per reader adapted (``reader``, ``card_reader``)."""
    adapted: tuple[str, ...]
    """The files adapted: readers fine-tuned (``reader``, ``card_reader``), finders whose
    boxes were moved (``finder``, ``card_finder``); the others are the base's."""
    epochs: int
    steps: dict[str, int]
    boxes: dict[str, dict[str, float]]
    """Per kind, how the finders' boxes were moved (:class:`BoxFit`; 1, 1, 0, 0: not)."""
    tuned_shares: dict[str, float]
    """Per reader fine-tuned, the share of its weights taken from the fine-tuned net
    (:func:`tuned_share`)."""
    seconds: float
    cpu_seconds: float
    """Processor time of the run, all threads together (on a busy machine the wall time
    says more about the other jobs)."""
    seed: int
    set_inks: dict[str, Any] | None = None
    """The set's inks fitted on the labelled tiles (:class:`tabletop.vision.palette.SetInks`),
    None where the photos show tiles of fewer than two colours."""
    head: dict[str, dict[str, Any]] | None = None
    """Per reader given a light head (:func:`fit_light_head`): what it was fitted on; None
    where no head was fitted (the fine-tune, or too few labels)."""

    def to_json(self) -> dict[str, Any]:
        return {"out": str(self.out), "model": str(self.out / f"{MODEL_NAME}.onnx"),
                "set_inks": self.set_inks, "head": self.head,
                "base": str(self.base), "photos": list(self.photos), "items": self.items,
                "labels": self.labels, "crops": self.crops, "adapted": list(self.adapted),
                "epochs": self.epochs, "steps": self.steps, "boxes": self.boxes,
                "tuned_shares": self.tuned_shares,
                "seconds": round(self.seconds, 1), "cpu_seconds": round(self.cpu_seconds, 1),
                "seed": self.seed}

    def to_text(self) -> str:
        items = ", ".join(f"{count} {kind}s" for kind, count in self.items.items() if count)
        readers = " and ".join(name.replace("_", " ") for name in self.adapted) or "nothing"
        if not self.epochs:
            learnt = [part for part, done in (("the set's inks", self.set_inks),
                                              ("a reader head", self.head)) if done]
            heads = "".join(f"\n{describe_head(role, row)}"
                            for role, row in (self.head or {}).items())
            inks = ("" if self.set_inks is None
                    else f"\nthe set's inks: {_judged_colours(SetInks.from_json(self.set_inks))}")
            return (f"learnt {' and '.join(learnt)} from {len(self.photos)} photo(s) "
                    f"({items or 'no items'}) in {self.seconds:.1f} s{heads}{inks}\n"
                    f"model: {self.out / (MODEL_NAME + '.onnx')}")
        return (f"adapted {readers} on {len(self.photos)} photo(s) ({items or 'no items'}; "
                f"{sum(self.crops.values())} crops, {self.epochs} epochs) in "
                f"{self.seconds:.0f} s\nmodel: {self.out / (MODEL_NAME + '.onnx')}")


def adapt(annotation_files: Iterable[str | Path], out_dir: str | Path, *,
          base_model: str | Path | None = None, epochs: int = DEFAULT_EPOCHS, seed: int = 0,
          lr: float = LEARNING_RATE, batch: int = BATCH,
          log: Callable[[str], None] | None = None) -> AdaptResult:
    """Fine-tune the base model's readers on labelled photos of the players' set and
    write the adapted model folder ``out_dir`` (see the module's docstring).

    ``annotation_files``: JSONL files in the contract's detect form (:func:`read_labelled`).
    ``base_model``: the two-stage finder to start from (default ``models/tabletop.onnx``;
    an adapted folder too, to go on from it).  AdaptError for unusable input; raises
    ModuleNotFoundError (torch) without the ``train`` extra."""
    _torch()  # fail before the slow part without the train extra
    started, cpu_started = time.monotonic(), time.process_time()
    say = log or (lambda _text: None)
    if epochs < 1:
        raise AdaptError(f"epochs must be 1 or more, not {epochs!r}")
    out = Path(out_dir)
    _check_out(out)
    base = _base_files(base_model)
    photos = read_labelled(annotation_files)
    from tabletop.vision.detector import DEFAULT_CONFIDENCE, Detector, DetectorSettings

    finder = Detector(base["finder"], DetectorSettings(confidence=FINDER_CONFIDENCE))
    labels: Counter[str] = Counter()
    items: Counter[str] = Counter()
    seen: list[tuple[Detections, Detections]] = []
    for photo in photos:
        image, truth = photo.read()
        found = finder.find(image)
        seen.append((found, truth))
        labels.update(f"{label}.card" if label == JOKER and kind == "card" else label
                      for label, kind in zip(truth.labels, truth.kinds, strict=True))
        items.update(truth.kinds)
        say(f"{photo.path.name}: {len(truth)} labelled, {len(found)} found")
    # the finder's boxes as the labels draw them, from its boxes it is sure of
    fits = {kind: fitted_boxes([pair for found, truth in seen for pair in box_pairs(
        found.with_confidence_at_least(DEFAULT_CONFIDENCE), truth, kind)])
        for kind in ("tile", "card")}
    for kind, fit in fits.items():
        if not fit.is_identity:
            say(f"{kind} boxes: {fit.width:.3f} x wide, {fit.height:.3f} x tall, moved "
                f"{fit.dx:+.3f}, {fit.dy:+.3f} ({fit.pairs} pairs)")
    crops = {"tile": CropSet(), "card": CropSet()}
    for index, (photo, (found, _)) in enumerate(zip(photos, seen, strict=True)):
        image, truth = photo.read()
        for kind, part in photo_crops(image, truth, apply_fits(found, fits),
                                      seed * 1_000_003 + index, photo.partial).items():
            crops[kind].extend(part)
    roles = {"tile": "reader", "card": "card_reader"}
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=_existing_parent(out)))
    try:
        steps: dict[str, int] = {}
        crop_counts: dict[str, int] = {}
        shares: dict[str, float] = {}
        for kind, role in roles.items():
            target = staging / model_files(staging / f"{MODEL_NAME}.onnx")[role].name
            has_items = any(_kind_of_class(label) == kind for label in crops[kind].labels)
            source = base[role]
            if kind == "card" and not source.is_file():
                # a base without a card reader names card indices with its reader
                source = base["reader"]
            if not has_items:
                if base[role].is_file():
                    shutil.copy2(base[role], target)
                continue
            images, classes = crops[kind].arrays()
            rehearsal = rehearsal_crops(kind, seed=REHEARSAL_SEED + 1000 * seed)
            say(f"fine-tuning the {role.replace('_', ' ')} on {len(images)} crops "
                f"(and {len(rehearsal)} rendered)")
            share = tuned_share(items.get(kind, 0))
            _, steps[role] = fine_tune(source, images, classes, target, rehearsal=rehearsal,
                                       epochs=epochs, batch=batch, lr=lr, seed=seed,
                                       turns=kind in TURNED_KINDS, tuned_share=share,
                                       log=say)
            shares[role] = round(share, 3)
            crop_counts[role] = len(images)
        inks = fit_set_inks(photos, base["reader"])
        if inks is not None:
            _write_set_inks(inks, staging)
        moved = any(not fit.is_identity for fit in fits.values())
        for role in ("finder", "card_finder"):
            if not base[role].is_file():
                continue
            target = staging / model_files(staging / f"{MODEL_NAME}.onnx")[role].name
            if moved:
                fitted_finder(base[role], target, fits)
                steps.setdefault(role, 0)
            else:
                shutil.copy2(base[role], target)
        if base["faces"].is_file():
            shutil.copy2(base["faces"], staging / base["faces"].name)
        if not any(steps.get(role) for role in roles.values()) and not moved:
            raise AdaptError("the photos label no tile and no card index: nothing to adapt")
        seconds = time.monotonic() - started
        result = AdaptResult(out=out, base=base["finder"],
                             photos=tuple(str(photo.path) for photo in photos),
                             items={kind: items.get(kind, 0) for kind in ("tile", "card")},
                             labels=dict(sorted(labels.items())), crops=crop_counts,
                             adapted=tuple(steps), epochs=epochs,
                             steps={role: n for role, n in steps.items() if n},
                             boxes={kind: fit.to_json() for kind, fit in fits.items()},
                             tuned_shares=shares, seconds=seconds,
                             cpu_seconds=time.process_time() - cpu_started,
                             seed=seed, set_inks=None if inks is None else inks.to_json())
        _finish(staging, out, result, photos, method="fine-tune")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return result


def fit_set_inks(photos: Sequence[LabelledPhoto], reader_file: Path | None = None
                 ) -> SetInks | None:
    """The set's inks from the labelled tiles of ``photos`` (their labelled boxes), or None
    where they show tiles of fewer than two colours.  With ``reader_file`` (the base
    model's reader) also which colours it misreads on these tiles
    (:attr:`tabletop.vision.palette.SetInks.misread`)."""
    from tabletop.vision.palette import colour_marginals
    from tabletop.vision.reader import Reader

    reader = None if reader_file is None or not reader_file.is_file() else Reader(reader_file)
    features, colours, read_as = [], [], []
    for photo in photos:
        image, truth = photo.read()
        tiles = truth.of_kind("tile")
        measured_features, measured = ink_features(image, tiles.boxes)
        named = [""] * len(tiles)
        if reader is not None and len(tiles):
            marginals = colour_marginals(reader.probabilities(image, tiles.boxes,
                                                              ["tile"] * len(tiles)))
            named = [TILE_COLOURS[c] for c in marginals.argmax(axis=1)]
        for label, row, ok, name in zip(tiles.labels, measured_features, measured, named,
                                        strict=True):
            if ok and label != JOKER:
                features.append(row)
                colours.append(label[0])
                read_as.append(name)
    if len(set(colours)) < 2:
        return None
    return SetInks.fit(np.array(features), colours, None if reader is None else read_as)


def _judged_colours(inks: SetInks) -> str:
    """Which colours the set's inks judge, and why, in a few words."""
    if inks.misread is None:
        return "they judge every colour"
    judged = [f"{colour} (the reader named {share:.0%} of its tiles another colour)"
              for colour, share, used in zip(TILE_COLOURS, inks.misread, inks.judged,
                                             strict=True) if used]
    if not judged:
        return "they judge no colour: the reader reads each of the set's inks itself"
    return "they judge " + ", ".join(judged)


def _write_set_inks(inks: SetInks, folder: Path) -> None:
    from tabletop.vision.detector import set_inks_path

    path = set_inks_path(folder / f"{MODEL_NAME}.onnx")
    path.write_text(json.dumps(inks.to_json(), indent=1) + "\n", encoding="utf-8")


HEAD_MIN_LABELS = 40
"""The labels of a kind the photos must show for its reader to get a light head: three
quarters of a tile set's 53 or a deck's 53.  The head refits only the labels shown, and
a label shown without its neighbours pulls every crop of its kind towards itself."""


def describe_head(role: str, row: dict[str, Any]) -> str:
    """One line on a reader's head: what it was fitted on and how it reads those crops."""
    labels = " and ".join(f"{count} {kind} labels" for kind, count in row["labels"].items())
    return (f"{role.replace('_', ' ')} head: {labels} from {row['photos']} photo(s), "
            f"{row['crops']} crops ({row['bare']} of bare table); read right "
            f"{row['right_before']:.3f} -> {row['right_after']:.3f} of them")


def fit_light_head(photos: Sequence[LabelledPhoto], base: dict[str, Path], seed: int = 0,
                   log: Callable[[str], None] | None = None,
                   min_labels: int = HEAD_MIN_LABELS
                   ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The readers' light head (:mod:`tabletop.vision.reader_head`) fitted on the labelled
    items of ``photos``: per reader file of ``base`` (the card reader's for card indices
    where there is one, else the reader's), a :class:`HeadPart` and what it was fitted on.
    A kind whose labels the photos show fewer than ``min_labels`` of gets none, as does a
    reader file without the features output (one exported before it had it)."""
    from tabletop.vision.reader import FEATURES_OUTPUT, Reader
    from tabletop.vision.reader_head import (
        HeadCrops,
        fit_reader,
        photo_head_crops,
        recuts_per_item,
    )

    say = log or (lambda _text: None)
    shown: dict[str, set[str]] = {"tile": set(), "card": set()}
    for photo in photos:
        for label, kind in zip(photo.record.detections.labels, photo.record.detections.kinds,
                               strict=True):
            shown[kind].add(label)
    kinds = [kind for kind in ("tile", "card") if len(shown[kind]) >= max(1, min_labels)]
    for kind in ("tile", "card"):
        if shown[kind] and kind not in kinds:
            say(f"no reader head for {kind}s: the photos show {len(shown[kind])} of their "
                f"labels, a head wants {min_labels}")
    if not kinds:
        return {}, {}
    role_of = {"tile": "reader",
               "card": "card_reader" if base["card_reader"].is_file() else "reader"}
    examples: dict[str, HeadCrops] = {}
    used: dict[str, int] = {}
    rng = np.random.default_rng(seed)
    recut = recuts_per_item(sum(kind in kinds for photo in photos
                                for kind in photo.record.detections.kinds))
    for photo in photos:
        image, truth = photo.read()
        chosen = [i for i, kind in enumerate(truth.kinds) if kind in kinds]
        if not chosen:
            continue
        classes = [class_id(truth.labels[i], truth.kinds[i]) for i in chosen]
        parts = photo_head_crops(image, truth.boxes[chosen], classes,
                                 [truth.kinds[i] for i in chosen], rng, photo.partial, recut)
        for kind, part in parts.items():
            mine = examples.setdefault(role_of[kind], HeadCrops())
            mine.images.extend(part.images)
            mine.labels.extend(part.labels)
            mine.kinds.extend(part.kinds)
            for counted, count in part.items.items():
                mine.items[counted] = mine.items.get(counted, 0) + count
            used[role_of[kind]] = used.get(role_of[kind], 0) + 1
    heads: dict[str, Any] = {}
    info: dict[str, dict[str, Any]] = {}
    for role, crops in examples.items():
        reader = Reader(base[role])
        if not reader.has_features:
            say(f"no reader head for {base[role].name}: it has no {FEATURES_OUTPUT!r} "
                "output (a reader exported before it had one)")
            continue
        heads[role], report = fit_reader(reader, crops)
        info[role] = {"kinds": list(heads[role].kinds),
                      "labels": {kind: len(shown[kind]) for kind in heads[role].kinds},
                      "items": dict(crops.items), "photos": used[role],
                      "crops": report.crops, "bare": report.bare,
                      "right_before": round(report.right_before, 4),
                      "right_after": round(report.right_after, 4),
                      "loss_before": round(report.loss_before, 4),
                      "loss_after": round(report.loss_after, 4)}
        say(describe_head(role, info[role]))
    return heads, info


def adapt_light(annotation_files: Iterable[str | Path], out_dir: str | Path, *,
                base_model: str | Path | None = None, seed: int = 0,
                log: Callable[[str], None] | None = None,
                head_min_labels: int = HEAD_MIN_LABELS) -> AdaptResult:
    """Adapt without PyTorch, in seconds: the base model's files unchanged beside

    * the set's own inks (:class:`tabletop.vision.palette.SetInks`), measured on the
      labelled tiles of the photos, against which the detector then judges the tiles
      of the colours the base reader misread on them;
    * a light head (:func:`fit_light_head`, :mod:`tabletop.vision.reader_head`): the
      readers' last layer corrected in NumPy on the features of many re-cut crops of the
      labelled items, which the detector adds to the readers' logits.

    One layout photo of the whole set is enough for both.  ``head_min_labels``: the labels
    of a kind the photos must show for a head (:data:`HEAD_MIN_LABELS`).  AdaptError
    where the photos give neither (tiles of fewer than two colours, and too few labels
    of a kind for a head)."""
    from tabletop.vision.detector import head_path
    from tabletop.vision.reader_head import save_head

    started, cpu_started = time.monotonic(), time.process_time()
    say = log or (lambda _text: None)
    out = Path(out_dir)
    _check_out(out)
    base = _base_files(base_model)
    photos = read_labelled(annotation_files)
    inks = fit_set_inks(photos, base["reader"])
    heads, head_info = fit_light_head(photos, base, seed, say, head_min_labels)
    if inks is None and not heads:
        raise AdaptError("the photos show tiles of fewer than two colours and fewer than "
                         f"{head_min_labels} labels of a kind: nothing to learn without "
                         "PyTorch (a layout photo of the whole set gives both; or the "
                         "fine-tune of the train extra)")
    items: Counter[str] = Counter()
    labels: Counter[str] = Counter()
    for photo in photos:
        truth = photo.record.detections
        items.update(truth.kinds)
        labels.update(f"{label}.card" if label == JOKER and kind == "card" else label
                      for label, kind in zip(truth.labels, truth.kinds, strict=True))
    if inks is not None:
        say("inks: " + ", ".join(f"{colour} from {row['tiles']} tiles"
                                 for colour, row in inks.to_json().items() if row)
            + "; " + _judged_colours(inks))
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=_existing_parent(out)))
    try:
        finder = staging / f"{MODEL_NAME}.onnx"
        for role, source in base.items():
            if source.is_file():
                shutil.copy2(source, model_files(finder)[role])
        if inks is not None:
            _write_set_inks(inks, staging)
        if heads:
            save_head(head_path(finder), heads)
        adapted = tuple(name for name, done in (("inks", inks), ("head", heads)) if done)
        result = AdaptResult(out=out, base=base["finder"],
                             photos=tuple(str(photo.path) for photo in photos),
                             items={kind: items.get(kind, 0) for kind in ("tile", "card")},
                             labels=dict(sorted(labels.items())),
                             crops={role: row["crops"] for role, row in head_info.items()},
                             adapted=adapted, epochs=0, steps={}, boxes={}, tuned_shares={},
                             seconds=time.monotonic() - started,
                             cpu_seconds=time.process_time() - cpu_started, seed=seed,
                             set_inks=None if inks is None else inks.to_json(),
                             head=head_info or None)
        _finish(staging, out, result, photos, method="light")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return result


def _finish(staging: Path, out: Path, result: AdaptResult, photos: Sequence[LabelledPhoto],
            method: str) -> None:
    """Write what was done (:data:`ADAPTED_INFO`) into the staging folder and put it in
    ``out``'s place."""
    info = {**result.to_json(), "method": method,
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "annotations": [str(Path(f)) for f in dict.fromkeys(p.source for p in photos)]}
    (staging / ADAPTED_INFO).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    _replace_folder(staging, out)


def _existing_parent(out: Path) -> Path:
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _replace_folder(staging: Path, out: Path) -> None:
    """Put the finished ``staging`` folder at ``out``, replacing an older adapted model."""
    if out.is_dir():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
        staging.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        staging.rename(out)


# --- (a) a photo of the set laid out in a known order -----------------------------------------
TILE_ORDER: tuple[tuple[str, ...], ...] = (
    *(tuple(f"{colour}{number}" for number in range(1, 14)) for colour in TILE_COLOURS),
    (JOKER, JOKER),
)
"""A tile set laid out: rows K1..K13, B1..B13, O1..O13, R1..R13 (top to bottom, each
left to right), then the jokers (one or two; the row may be left out)."""
CARD_ORDER: tuple[tuple[str, ...], ...] = (
    *(tuple(f"{rank}{suit}" for rank in CARD_RANKS) for suit in CARD_SUITS),
    (JOKER, JOKER),
)
"""A deck laid out by suit: rows of A..K of spades, hearts, diamonds, clubs, then the
jokers (one or two; the row may be left out).  Where both corner indices of each card
show, each row of cards is two rows of indices (the top ones, then the bottom ones)."""
ORDERS = {"tiles": ("tile", TILE_ORDER), "cards": ("card", CARD_ORDER)}
ROW_GAP = 0.5
"""Boxes whose centres lie further apart, top to bottom, than this many median box
heights begin a new row."""


class LayoutError(AdaptError):
    """A layout photo whose boxes do not fit the order; the line says which row."""


def _is_joker_row(row: Sequence[str]) -> bool:
    return len(row) > 0 and all(label == JOKER for label in row)


def _order(order: str | Sequence[Sequence[str]], kind: Kind | None
           ) -> tuple[Kind, tuple[tuple[str, ...], ...]]:
    if isinstance(order, str):
        if order not in ORDERS:
            raise LayoutError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
        named_kind, rows = ORDERS[order]
        return kind or named_kind, rows  # type: ignore[return-value]
    rows = tuple(tuple(str(label).strip().upper() for label in row) for row in order)
    if not rows or not all(rows):
        raise LayoutError("an order needs one or more rows of labels")
    if kind is None:
        plain = [label for row in rows for label in row if label != JOKER]
        if not plain:
            raise LayoutError("an order of jokers alone needs its kind")
        kind = kind_of(plain[0])
    for row in rows:
        for label in row:
            class_id(label, kind)  # LabelError (a ValueError) for a label of another kind
    return kind, rows


def layout_rows(boxes: npt.NDArray[np.float64], gap: float = ROW_GAP) -> list[list[int]]:
    """The boxes' indices in rows: rows top to bottom, each left to right.  A row ends
    where the next box's centre, in order of height, lies more than ``gap`` median box
    heights below the one before it."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    if len(boxes) == 0:
        return []
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    height = float(np.median(boxes[:, 3] - boxes[:, 1]))
    order = np.argsort(cy, kind="stable")
    rows: list[list[int]] = [[int(order[0])]]
    for previous, current in itertools.pairwise(order):
        if cy[current] - cy[previous] > gap * height:
            rows.append([])
        rows[-1].append(int(current))
    return [sorted(row, key=lambda i: cx[i]) for row in rows]


def label_layout(detections: Detections, order: str | Sequence[Sequence[str]] = "tiles",
                 kind: Kind | None = None, *, short_rows: bool = True) -> Detections:
    """The boxes of ``detections`` of the order's kind, labelled by ``order``: the rows of
    boxes (:func:`layout_rows`, top to bottom, each left to right) take the order's rows
    of labels.  ``order``: ``"tiles"`` (:data:`TILE_ORDER`), ``"cards"``
    (:data:`CARD_ORDER`) or rows of labels (``kind`` then names their kind where the
    labels do not tell it).  A last row of jokers may hold fewer boxes than it lists, or
    be left out; each row of cards may show as two rows of indices (both corners of each
    card), and each card as two indices side by side (a four-index deck).  With
    ``short_rows`` a row short of up to :data:`LAYOUT_MISSING` boxes, or holding as many
    too many, takes its labels by the columns of the complete rows; a row further off, or
    one that no complete row gives columns, by the columns of a grid fitted to all the
    rows of its kind (:func:`_grid_columns`) while no more than half of them stay empty;
    a row of jokers holding more boxes than jokers keeps the surest.  LayoutError saying
    which row when the boxes do not fit."""
    kind, rows = _order(order, kind)
    mine = detections.of_kind(kind)
    found = layout_rows(mine.boxes)
    jokers = rows[-1] if _is_joker_row(rows[-1]) and len(rows) > 1 else None
    body = rows[:-1] if jokers is not None else rows
    shapes: list[list[tuple[str, ...]]] = []
    # a deck's cards may show both corners' indices (a row of cards, two rows of
    # indices), and a four-index deck two indices a corner side by side (each label
    # twice in its row)
    for across in ((1, 2) if kind == "card" else (1,)):
        for repeat in ((1, 2) if kind == "card" else (1,)):
            repeated = [_doubled(row, across) for row in body for _ in range(repeat)]
            tails = ([[]] if jokers is None else
                     [[_doubled(jokers, across)] * repeat, [_doubled(jokers, across)], []])
            for tail in tails:
                if repeated + tail not in shapes:
                    shapes.append(repeated + tail)
    fitting = [shape for shape in shapes if len(shape) == len(found)]
    # of shapes with as many rows, the one most rows fill exactly
    plan = max(fitting, key=lambda shape: sum(len(row) == len(wanted) for row, wanted
                                              in zip(found, shape, strict=True)),
               default=None)
    if plan is None:
        expected = sorted({len(shape) for shape in shapes})
        raise LayoutError(f"found {len(found)} row(s) of {kind} boxes ({_row_sizes(found)}), "
                          f"the order has {' or '.join(map(str, expected))} "
                          f"({_describe(rows)})")
    labels: list[str] = [""] * len(mine)
    centres = (mine.boxes[:, 0] + mine.boxes[:, 2]) / 2
    period = 2 if len(plan) > 1 and kind == "card" and plan[0] == plan[1] else 1
    keep: list[int] = []
    for number, (row, wanted) in enumerate(zip(found, plan, strict=True), start=1):
        fits = len(row) == len(wanted) or (_is_joker_row(wanted) and 1 <= len(row)
                                           <= len(wanted))
        placed: Sequence[tuple[int, str]] = list(zip(row, wanted, strict=False))
        if not fits and short_rows and _is_joker_row(wanted) and len(row) > len(wanted):
            # a joker's face holds more than its index to box (its figure, the word):
            # the surest boxes are the jokers
            surest = sorted(row, key=lambda i: -mine.confidences[i])[:len(wanted)]
            placed = [(i, JOKER) for i in sorted(surest, key=lambda i: centres[i])]
            fits = True
        if not fits:
            columns = _columns(found, plan, centres, number - 1, period) if short_rows else None
            placed = (_row_by_columns(row, wanted, centres, mine.confidences, columns)
                      if columns is not None else [])
            if not placed and short_rows:
                # no complete row says where the columns lie, or this row is off by more
                # than a few: the columns fitted as a grid to every row of its kind
                grid = _grid_columns(found, plan, centres, number - 1, period)
                placed = (_row_by_columns(row, wanted, centres, mine.confidences, grid,
                                          len(wanted) // 2, lenient=True)
                          if grid is not None else [])
            if not placed:
                raise LayoutError(f"row {number} from the top has {len(row)} {kind} box(es), "
                                  f"the order wants {len(wanted)} ({_span(wanted)}); the "
                                  f"rows found hold {_row_sizes(found)}")
        for index, label in placed:
            labels[index] = label
            keep.append(index)
    return Detections(mine.boxes[keep], tuple(labels[i] for i in keep),
                      tuple(kind for _ in keep), np.ones(len(keep)))


LAYOUT_MISSING = 3
"""A layout row may lack this many boxes (items the finder missed), or hold this many
too many (a pip or a rim boxed beside the items), where complete rows above or below it
say where its columns lie: its boxes then take the labels of their columns, the places
missed and the boxes too many are left out."""


def _columns(found: Sequence[Sequence[int]], plan: Sequence[Sequence[str]],
             centres: npt.NDArray[np.float64], at: int, period: int
             ) -> npt.NDArray[np.float64] | None:
    """The column centres (x) of row ``at`` from the complete rows of its kind (the same
    labels' count, every ``period``-th row: a row of cards shows its top indices and its
    bottom ones in turn), or None where there is none."""
    complete = [found[r] for r in range(at % period, len(found), period)
                if r != at and len(found[r]) == len(plan[r]) == len(plan[at])
                and not _is_joker_row(plan[r])]
    if not complete or _is_joker_row(plan[at]):
        return None
    return np.median(np.array([centres[row] for row in complete]), axis=0)


GRID_SPREAD = 0.15
"""A box lies on a fitted grid's column when its centre is within this many column
pitches of it."""
GRID_PITCHES = 240
"""How many column pitches a grid fit tries."""


def _grid_columns(found: Sequence[Sequence[int]], plan: Sequence[Sequence[str]],
                  centres: npt.NDArray[np.float64], at: int, period: int
                  ) -> npt.NDArray[np.float64] | None:
    """The column centres (x) of row ``at`` as a grid of evenly spaced columns fitted to
    the boxes of every row of its kind (every ``period``-th row wanting as many labels,
    :func:`_columns`' rows, complete or not): a layout's cards lie in columns, so rows
    that each miss or add a few boxes still say together where the columns are.  Of the
    pitches between a tenth under and over the one the rows' spans suggest, the grid
    whose ``len(plan[at])`` columns hold most centres within :data:`GRID_SPREAD` pitches
    of a column.  None where the plan's row is jokers or names a label twice, or where
    the boxes are fewer than the columns."""
    count = len(plan[at])
    if count < 2 or _is_joker_row(plan[at]) or len(set(plan[at])) != count:
        return None  # each label once a row: a four-index deck's pairs are no even grid
    rows = [found[r] for r in range(at % period, len(found), period)
            if len(plan[r]) == count and not _is_joker_row(plan[r])]
    xs = np.array([centres[i] for row in rows for i in row], np.float64)
    if len(xs) < count:
        return None
    # a row spans the grid or less (it may miss an end column): the wider half of the
    # rows' spans over the gaps between the columns suggests the pitch
    spans = sorted(float(np.ptp(centres[list(row)])) for row in rows if len(row) > 1)
    if not spans or spans[-1] <= 0:
        return None
    suggested = float(np.median(spans[len(spans) // 2:])) / (count - 1)
    best: tuple[int, float, float] | None = None
    for pitch in np.linspace(0.9 * suggested, 1.1 * suggested, GRID_PITCHES):
        steps = xs / pitch
        # the phase that puts most centres near a column: the circular mean of the
        # fractions, then the columns' window of ``count`` holding most of them
        angles = 2 * np.pi * (steps % 1.0)
        phase = float(np.angle(np.exp(1j * angles).mean()) / (2 * np.pi)) % 1.0
        nearest = np.round(steps - phase)
        on_grid = np.abs(steps - phase - nearest) <= GRID_SPREAD
        if not on_grid.any():
            continue
        columns = nearest[on_grid].astype(int)
        low, high = int(columns.min()), int(columns.max())
        for first in range(low, max(low, high - count + 1) + 1):
            held = int(((columns >= first) & (columns < first + count)).sum())
            if best is None or held > best[0]:
                best = (held, pitch, (first + phase) * pitch)
    if best is None:
        return None
    _, pitch, start = best
    return start + pitch * np.arange(count)


def _row_by_columns(row: Sequence[int], wanted: Sequence[str],
                    centres: npt.NDArray[np.float64], confidences: npt.NDArray[np.float64],
                    columns: npt.NDArray[np.float64], missing: int = LAYOUT_MISSING,
                    lenient: bool = False) -> list[tuple[int, str]]:
    """Each box of a ``row`` that is short of a few boxes, or holds a few too many, with
    the label of the column it lies in.  Of a row too long, the boxes between columns and
    the less sure of two in one column are left out (a pip or a rim boxed beside the
    indices).  Empty where the row is more than ``missing`` boxes short or long, or where
    a box of a short row lies between columns or two in one.  ``lenient`` (columns fitted
    to the whole layout): any row's boxes off the columns are left out, and the row
    keeps its labels while no more than ``missing`` columns are left empty."""
    extra = len(row) - len(wanted)
    if not 0 < abs(extra) <= missing or len(columns) < 2:
        return []
    pitch = float(np.median(np.diff(columns)))
    xs = centres[list(row)]
    # the row may lie a little to one side of the others: its best shift first
    shifts = [float(x - columns[np.argmin(np.abs(columns - x))]) for x in xs]
    shift = float(np.median(shifts))
    chosen: dict[int, int] = {}
    # the surest boxes choose their columns first
    for index, x in sorted(zip(row, xs, strict=True), key=lambda ix: -confidences[ix[0]]):
        column = int(np.argmin(np.abs(columns + shift - x)))
        if abs(columns[column] + shift - x) > 0.35 * pitch or column in chosen:
            if extra < 0 and not lenient:
                return []
            continue  # one too many: left out
        chosen[column] = index
    if len(chosen) < len(wanted) - (missing if lenient else 0 if extra > 0 else -extra):
        return []
    return [(chosen[column], wanted[column]) for column in sorted(chosen)]


def _doubled(row: tuple[str, ...], times: int) -> tuple[str, ...]:
    return tuple(label for label in row for _ in range(times))


def _span(row: Sequence[str]) -> str:
    return row[0] if len(row) == 1 else f"{row[0]}..{row[-1]}"


def _describe(rows: Sequence[Sequence[str]]) -> str:
    return ", ".join(_span(row) for row in rows)


def _row_sizes(rows: Sequence[Sequence[int]]) -> str:
    return "+".join(str(len(row)) for row in rows) or "none"


def layout_record(photo: str | Path, order: str | Sequence[Sequence[str]] = "tiles",
                  detector: Any = None, kind: Kind | None = None,
                  relative_to: str | Path | None = None) -> ImageDetections:
    """The labelled record of a layout photo: ``detector``'s boxes on it (default: the
    shipped model, whose reader drops the finder's false alarms), labelled by
    :func:`label_layout`; where they do not fill the order, the finder's boxes alone
    (a tile the reader took for nothing).  The record's image path is relative to ``relative_to`` (a
    folder) where it can be, else absolute."""
    import cv2

    photo = Path(photo)
    image = cv2.imread(str(photo), cv2.IMREAD_COLOR)
    if image is None:
        raise AdaptError(f"cannot read the layout photo {str(photo)!r}")
    if detector is None:
        from tabletop.vision.detector import Detector

        detector = Detector()
    read = detector(image)
    # every box of a layout photo is an item: where the reader dropped one as `none`, the
    # finder's own boxes may still fill the order; only where they do not are rows left
    # short (items neither stage boxed)
    find = getattr(detector, "find", None)
    found: list[Detections] = []  # the finder runs only where the read boxes do not fit

    def candidates() -> Iterator[Detections]:
        yield read
        if find is not None:
            if not found:
                found.append(find(image))
            yield from _filled_from_the_finder(read, found[0])

    labelled = None
    first_error: LayoutError | None = None
    for short_rows in (False, True):
        for candidate in candidates():
            try:
                labelled = label_layout(candidate, order, kind, short_rows=short_rows)
                break
            except LayoutError as error:
                first_error = first_error or error
        if labelled is not None:
            break
    if labelled is None:
        raise LayoutError(f"layout photo {str(photo)!r}: {first_error}") from None
    return ImageDetections(_relative(photo, relative_to), image.shape[1], image.shape[0],
                           labelled)


LAYOUT_FILLS = 4
"""At most this many of the finder's boxes are added to a layout's read boxes."""


def _filled_from_the_finder(read: Detections, found: Detections) -> Iterator[Detections]:
    """The read boxes with the finder's boxes that no read box covers added one by one, the
    surest first (a tile the reader took for nothing, before a false alarm), then the
    finder's boxes alone."""
    if len(read) and len(found):
        covered = iou_matrix(found.boxes, read.boxes).max(axis=1) >= 0.5
    else:
        covered = np.zeros(len(found), bool)
    extra = np.flatnonzero(~covered)
    extra = extra[np.argsort(-found.confidences[extra], kind="stable")][:LAYOUT_FILLS]
    for count in range(1, len(extra) + 1):
        yield Detections.concatenate([read, found[extra[:count]]])
    yield found


def layout_to_jsonl(photos: Sequence[str | Path], out: str | Path,
                    order: str | Sequence[Sequence[str]] = "tiles", detector: Any = None,
                    kind: Kind | None = None) -> Path:
    """Label layout photos (:func:`layout_record`) and write them as an annotations
    JSONL at ``out`` that :func:`adapt` takes."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if detector is None:
        from tabletop.vision.detector import Detector

        detector = Detector()
    lines = [json.dumps(layout_record(photo, order, detector, kind, out.parent).to_json(
        with_confidence=False)) for photo in photos]
    out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return out


def _relative(path: Path, folder: str | Path | None) -> str:
    if folder is None:
        return str(path.absolute())
    try:
        return os.path.relpath(path.absolute(), Path(folder).absolute())
    except ValueError:  # another drive (Windows)
        return str(path.absolute())


# --- (c) corrections made during play ---------------------------------------------------------
# what the live table keeps of a correction (CorrectedItem, corrections_to_jsonl) is
# tabletop.vision.corrections: adapt reads the lines it writes


# --- helpers for the bench and the tests -----------------------------------------------------
def subset_jsonl(source: str | Path, images: Sequence[str], out: str | Path) -> Path:
    """A copy of an annotations JSONL holding only the lines of ``images`` (as the lines
    name them), image paths rewritten to be relative to ``out``'s folder."""
    source = Path(source)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    wanted = set(images)
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        value = json.loads(line)
        if value["image"] in wanted:
            value["image"] = _relative(source.parent / value["image"], out.parent)
            lines.append(json.dumps(value))
    missing = wanted - {json.loads(line)["image"] for line in
                        source.read_text(encoding="utf-8").splitlines() if line.strip()}
    if missing:
        raise AdaptError(f"no line for {sorted(missing)[0]!r} in {str(source)!r}")
    out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return out


def image_names(annotations: str | Path) -> list[str]:
    """The ``image`` of every line of an annotations JSONL, in order."""
    return [record.image for record in read_jsonl(annotations)]


def iter_chunks(values: Sequence[Any], parts: int) -> Iterator[list[Any]]:
    """``values`` in ``parts`` nearly equal consecutive pieces."""
    size, extra = divmod(len(values), parts)
    start = 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        yield list(values[start:end])
        start = end
