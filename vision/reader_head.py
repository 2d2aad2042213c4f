"""A light head: the reader's last layer corrected for the players' own set, in NumPy.

``tabletop adapt --light`` runs without PyTorch, so it cannot fine-tune the reader's
convolutions; it corrects the reader's last linear layer instead, on the pooled
features the reader file outputs beside its logits
(:data:`tabletop.vision.reader.FEATURES_OUTPUT`).  From the labelled items of the
photos (one layout photo of the whole set is enough):

1. :func:`recuts`: :data:`RECUTS` crops of every labelled item, each cut as the
   reader's crop is (:mod:`tabletop.vision.crops`) but moved by up to :data:`SHIFT`
   of the box's side, zoomed by :data:`ZOOM`, turned by up to :data:`TURN_DEGREES`
   (card indices also by a random quarter turn, :data:`TURNED_KINDS`), and with the
   light, contrast, resolution, blur and noise jittered (:func:`jitter_light`): the
   boxes, sizes and light the reader will meet on a table differ from the photo's;
2. as many crops of bare table between the items (:func:`bare_table_boxes`,
   :data:`BARE_TABLE_PER_ITEM` places per item) labelled ``none``, so that the finder's
   false alarms stay rejected;
3. :func:`fit_part`: per reader file, a multinomial logistic regression on those crops'
   features, started from the file's own last layer: logits + features @ dW.T + db,
   each crop's softmax over its kind's labels and ``none`` as the reader reads it.  Only
   the rows of the labels the crops show (``none`` among them) are refit; the
   correction starts at zero (the shipped layer) and its squared size is penalised
   (:data:`PENALTY`), so that one photo nudges the reader rather than replaces it.

The corrections are stored beside the adapted model as ``NAME.head.npz``
(:func:`save_head`, :data:`HEAD_FILE`), per reader file, with the kinds they apply to
and a digest of the file they were fitted on; the detector adds them to that reader's
logits for crops of those kinds (:class:`HeadPart`), a matrix product of a few
thousand multiply-adds per crop.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.crops import CROP_SIZE, crop
from tabletop.vision.detections import iou_matrix
from tabletop.vision.reader import NONE_INDEX, READER_CLASSES, Reader, kind_mask

HEAD_FILE = "head.npz"
"""The file beside an adapted model's finder (``NAME.head.npz``) holding its head."""
RECUTS = 24
"""Crops cut of each labelled item (and of each place of bare table)."""
MAX_CROPS = 3000
"""The most crops a head is fitted on: photos of many items get fewer re-cuts of each
(:func:`recuts_per_item`), so that adapting stays a matter of seconds."""
MIN_RECUTS = 6
"""The fewest crops cut of each item, however many items the photos show."""
SHIFT = 0.05
"""The most a crop's centre moves, as a share of the box's longer side, each way."""
ZOOM = (0.9, 1.1)
"""The range of a crop's zoom (over 1 shows more of the surroundings)."""
TURN_DEGREES = 12.0
"""The most a crop turns, each way."""
TURNED_KINDS = ("card",)
"""The kinds whose crops are also turned by a random quarter turn: card indices are
read as found and upside down (:data:`tabletop.vision.reader.DEFAULT_CARD_TURNS`).
A tile's label does not change either when it turns, but the shipped reader already
reads a layout's tiles at every quarter turn (0.997 of the crops of six development
sets), and turning them gained nothing on those sets' tables (0.943 of their tiles
read right, against 0.948 unturned, with an earlier form of the fit), so a tile's crops
only turn a little."""
LOW_RESOLUTION_SHARE = 0.5
"""The share of crops seen at a lower resolution (:func:`jitter_light`)."""
LOW_RESOLUTION = (0.35, 0.9)
"""The range of that resolution, as a share of the crop's side."""
BARE_TABLE_PER_ITEM = 0.5
"""Places of bare table cut (as ``none``) per labelled item of a fully labelled photo."""
PENALTY = 0.1
"""The weight of the squared size of the correction (dW and db, on standardised features)
against the crops' mean cross-entropy.  Chosen on development renders, never the
reported ones (seed 5100: six modern and six vintage sets of three tables each, and
three sets in each of two made-up inks the reader misreads; 0.3, 0.1, 0.03 and 0.01
tried): the plain sets' tables read the same or up to 3 tiles of 348 better from 0.3 to
0.03, and the vintage ones a tile worse at 0.01; a green orange went 0.765 -> 0.840 of
its tables' tiles at 0.3, 0.882 at 0.1, and a navy black 0.924 -> 0.950 from 0.3 to
0.03 but 0.933 at 0.01."""
MAX_ITERATIONS = 300
"""L-BFGS iterations of a fit (it converges in fewer on a layout photo)."""
BATCH = 256
"""Crops per reader run while features are gathered."""


# --- the head ---------------------------------------------------------------------------
@dataclass(frozen=True)
class HeadPart:
    """One reader file's correction: ``weight`` (classes x features) and ``bias``
    (classes) added to its last layer, rows over :data:`READER_CLASSES` (zero for the
    labels not refit), applied to crops of ``kinds`` only.  ``reader``: the SHA-256 of
    the file it was fitted on."""

    kinds: tuple[str, ...]
    weight: npt.NDArray[np.float32]
    bias: npt.NDArray[np.float32]
    reader: str
    labels: tuple[str, ...] = ()
    """The reader classes refit: the photos' labels, and ``none`` where bare table was cut."""

    @functools.cached_property
    def _weight_t(self) -> npt.NDArray[np.float32]:
        # OpenBLAS multiplies by a transposed view a hundred times slower (10 ms a frame
        # on a busy machine) than by the same matrix laid out transposed
        return np.ascontiguousarray(self.weight.T)

    def apply(self, logits: npt.NDArray[np.float32], features: npt.NDArray[np.float32],
              rows: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
        """``logits`` with the correction added to the ``rows`` chosen (crops of its kinds)."""
        out = np.array(logits, np.float32)
        if rows.any():
            out[rows] += features[rows] @ self._weight_t + self.bias
        return out

    @property
    def size(self) -> float:
        """The correction's largest change of a weight or bias."""
        return float(max(np.abs(self.weight).max(initial=0.0),
                         np.abs(self.bias).max(initial=0.0)))


def reader_digest(path: str | Path) -> str:
    """The SHA-256 of a reader file: a head is used with the file it was fitted on only."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def save_head(path: str | Path, parts: Mapping[str, HeadPart]) -> Path:
    """Write the head's parts, by reader role (``reader``, ``card_reader``), to ``path``."""
    arrays: dict[str, Any] = {"classes": np.array(READER_CLASSES)}
    for role, part in parts.items():
        arrays[f"{role}.weight"] = part.weight.astype(np.float32)
        arrays[f"{role}.bias"] = part.bias.astype(np.float32)
        arrays[f"{role}.kinds"] = np.array(part.kinds)
        arrays[f"{role}.reader"] = np.array(part.reader)
        arrays[f"{role}.labels"] = np.array(part.labels, dtype=str)
    path = Path(path)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
    return path


def load_head(path: str | Path) -> dict[str, HeadPart]:
    """The head's parts by reader role; empty where there is no file.  ValueError for a
    file that is not a head of this reader's classes."""
    path = Path(path)
    if not path.is_file():
        return {}
    with np.load(path, allow_pickle=False) as stored:
        if "classes" not in stored or tuple(stored["classes"]) != READER_CLASSES:
            raise ValueError(f"{str(path)!r} is not a reader head of these classes")
        roles = sorted({name.rsplit(".", 1)[0] for name in stored.files if "." in name})
        parts = {}
        for role in roles:
            weight = stored[f"{role}.weight"]
            bias = stored[f"{role}.bias"]
            if weight.ndim != 2 or weight.shape[0] != len(READER_CLASSES) or bias.shape != (
                    len(READER_CLASSES),):
                raise ValueError(f"{str(path)!r}: the {role} head has the shape "
                                 f"{weight.shape}, not (classes, features)")
            parts[role] = HeadPart(tuple(str(k) for k in stored[f"{role}.kinds"]),
                                   weight.astype(np.float32), bias.astype(np.float32),
                                   str(stored[f"{role}.reader"]),
                                   tuple(str(label) for label in stored[f"{role}.labels"]))
    return parts


# --- the crops --------------------------------------------------------------------------
def jitter_light(batch: npt.NDArray[np.uint8], rng: np.random.Generator
                 ) -> npt.NDArray[np.uint8]:
    """Each crop under other light and through another lens: brightness, contrast and
    each channel's gain jittered, half of them seen at a lower resolution (the tile
    smaller in the frame: a layout photo shows its items large), half blurred a
    little, all with a little noise."""
    import cv2

    n = len(batch)
    out = batch.astype(np.float32)
    size = batch.shape[1]
    for i in np.flatnonzero(rng.random(n) < LOW_RESOLUTION_SHARE):
        side = max(8, round(size * float(rng.uniform(*LOW_RESOLUTION))))
        small = cv2.resize(out[i], (side, side), interpolation=cv2.INTER_AREA)
        out[i] = cv2.resize(small, (size, size), interpolation=cv2.INTER_LINEAR)
    mean = out.mean(axis=(1, 2, 3), keepdims=True)
    contrast = rng.uniform(0.75, 1.25, (n, 1, 1, 1))
    gain = rng.uniform(0.92, 1.08, (n, 1, 1, 3))
    shift = rng.uniform(-25.0, 25.0, (n, 1, 1, 1))
    out = ((out - mean) * contrast + mean) * gain + shift
    for i in np.flatnonzero(rng.random(n) < 0.5):
        out[i] = cv2.GaussianBlur(out[i], (0, 0), float(rng.uniform(0.4, 1.2)))
    out += rng.normal(0.0, rng.uniform(0.0, 4.0, (n, 1, 1, 1)), out.shape)
    clipped: npt.NDArray[np.uint8] = np.clip(out, 0, 255).astype(np.uint8)
    return clipped


def recuts(image: npt.NDArray[np.uint8], box: Sequence[float] | npt.NDArray[np.float64],
           kind: str, count: int,
           rng: np.random.Generator, size: int = CROP_SIZE) -> npt.NDArray[np.uint8]:
    """``count`` reader crops of ``box`` (see the module's docstring, step 1)."""
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1, 1.0)
    # cut from the box's neighbourhood only: a crop that shrinks a large photo resizes
    # its whole source
    margin = side * 1.1
    h, w = image.shape[:2]
    left, top = max(0, int(x1 - margin)), max(0, int(y1 - margin))
    right, bottom = min(w, math.ceil(x2 + margin)), min(h, math.ceil(y2 + margin))
    region = image[top:bottom, left:right]
    moved = (x1 - left, y1 - top, x2 - left, y2 - top)
    out = np.empty((count, size, size, 3), np.uint8)
    for i in range(count):
        out[i] = crop(region, moved, size, scale=float(rng.uniform(*ZOOM)),
                      shift=(float(rng.uniform(-SHIFT, SHIFT)),
                             float(rng.uniform(-SHIFT, SHIFT))),
                      angle_deg=float(rng.uniform(-TURN_DEGREES, TURN_DEGREES)))
        if kind in TURNED_KINDS:
            out[i] = np.rot90(out[i], int(rng.integers(4)))
    return jitter_light(out, rng)


def bare_table_boxes(shape: tuple[int, ...], boxes: npt.NDArray[np.float64], count: int,
                     rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """Up to ``count`` boxes the size of the items that overlap none of them by IoU 0.1
    or more: table between and around the items."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    if not len(boxes) or count < 1:
        return np.zeros((0, 4))
    h, w = shape[:2]
    sides = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    found: list[npt.NDArray[np.float64]] = []
    for _ in range(count * 20):
        if len(found) == count:
            break
        side = float(rng.choice(sides)) * rng.uniform(0.7, 1.3)
        aspect = rng.uniform(0.6, 1.6)
        bw, bh = side * min(1.0, aspect), side * min(1.0, 1 / aspect)
        x1, y1 = rng.uniform(0, max(1.0, w - bw)), rng.uniform(0, max(1.0, h - bh))
        candidate = np.array([x1, y1, x1 + bw, y1 + bh])
        if iou_matrix(candidate[None], boxes).max() < 0.1:
            found.append(candidate)
    return np.array(found).reshape(-1, 4)


def recuts_per_item(items: int) -> int:
    """How many crops to cut of each of ``items`` labelled items (and of each place of
    bare table beside them): :data:`RECUTS`, fewer where that would pass
    :data:`MAX_CROPS`, never fewer than :data:`MIN_RECUTS`."""
    places = items * (1 + BARE_TABLE_PER_ITEM)
    return max(MIN_RECUTS, min(RECUTS, int(MAX_CROPS // max(places, 1))))


@dataclass
class HeadCrops:
    """The crops one reader file is to be corrected on: images, reader classes, the kind
    each is read as, and the labelled items (not crops) of each kind."""

    images: list[npt.NDArray[np.uint8]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    items: dict[str, int] = field(default_factory=dict)

    def add(self, images: npt.NDArray[np.uint8], label: int, kind: str) -> None:
        self.images.extend(images)
        self.labels.extend([label] * len(images))
        self.kinds.extend([kind] * len(images))

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def bare(self) -> int:
        """Crops of bare table (``none``)."""
        return sum(label == NONE_INDEX for label in self.labels)


def photo_head_crops(image: npt.NDArray[np.uint8], boxes: npt.NDArray[np.float64],
                     classes: Sequence[int], kinds: Sequence[str], rng: np.random.Generator,
                     partial: bool = False, recut: int = RECUTS) -> dict[str, HeadCrops]:
    """The crops one labelled photo gives, by kind: :data:`RECUTS` of each item and, of
    a fully labelled photo (not ``partial``), as many of each place of bare table."""
    out: dict[str, HeadCrops] = {}
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    for box, label, kind in zip(boxes, classes, kinds, strict=True):
        part = out.setdefault(kind, HeadCrops())
        part.add(recuts(image, box, kind, recut, rng), int(label), kind)
        part.items[kind] = part.items.get(kind, 0) + 1
    if partial:
        return out
    for kind, part in out.items():
        mine = boxes[[k == kind for k in kinds]]
        places = bare_table_boxes(image.shape, boxes,
                                  round(BARE_TABLE_PER_ITEM * len(mine)), rng)
        for place in places:
            part.add(recuts(image, place, kind, recut, rng), NONE_INDEX, kind)
    return out


# --- the fit ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FitReport:
    """How a part was fitted: crops, their cross-entropy and the share read right
    before and after (the crops it was fitted on)."""

    crops: int
    bare: int
    loss_before: float
    loss_after: float
    right_before: float
    right_after: float


def _masked_log_softmax(logits: npt.NDArray[np.float64], masks: npt.NDArray[np.bool_]
                        ) -> npt.NDArray[np.float64]:
    shown = np.where(masks, logits, -np.inf)
    top = shown.max(axis=1, keepdims=True)
    return shown - top - np.log(np.exp(shown - top).sum(axis=1, keepdims=True))  # type: ignore[no-any-return]


def lbfgs(loss: Callable[[npt.NDArray[np.float64]], tuple[float, npt.NDArray[np.float64]]],
          start: npt.NDArray[np.float64], iterations: int = MAX_ITERATIONS, memory: int = 10,
          tolerance: float = 1e-5) -> npt.NDArray[np.float64]:
    """The minimum of a smooth convex ``loss`` (value and gradient) by L-BFGS with a
    backtracking line search, from ``start``.  SciPy's L-BFGS-B does the same, but its
    bookkeeping calls BLAS many times an iteration, and OpenBLAS's threads wait for
    cores a busy machine does not give them (20 times slower here with another job
    running); these few vector operations do not."""
    x = start.copy()
    value, gradient = loss(x)
    steps: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]] = []
    for _ in range(iterations):
        if float(np.abs(gradient).max()) <= tolerance:
            break
        direction = -gradient
        alphas = []
        for s, y, rho in reversed(steps):
            alpha = rho * float(s @ direction)
            direction -= alpha * y
            alphas.append(alpha)
        if steps:
            s, y, _ = steps[-1]
            direction *= float(s @ y) / float(y @ y)
        for (s, y, rho), alpha in zip(steps, reversed(alphas), strict=True):
            direction += (alpha - rho * float(y @ direction)) * s
        slope = float(gradient @ direction)
        if slope >= 0:  # not a descent direction: start the memory afresh
            steps.clear()
            direction, slope = -gradient, -float(gradient @ gradient)
        size = 1.0 if steps else min(1.0, 1.0 / float(np.abs(gradient).sum()))
        while True:
            moved = x + size * direction
            new_value, new_gradient = loss(moved)
            if new_value <= value + 1e-4 * size * slope or size < 1e-10:
                break
            size *= 0.5
        s, y = moved - x, new_gradient - gradient
        curvature = float(s @ y)
        if curvature > 1e-12:
            steps.append((s, y, 1.0 / curvature))
            del steps[:-memory]
        x, value, gradient = moved, new_value, new_gradient
        if size < 1e-10:
            break
    return x


def fit_part(logits: npt.NDArray[np.float32], features: npt.NDArray[np.float32],
             labels: Sequence[int] | npt.NDArray[np.integer[Any]], kinds: Sequence[str],
             reader: str,
             penalty: float = PENALTY) -> tuple[HeadPart, FitReport]:
    """The correction of one reader file's last layer (see the module's docstring,
    step 3) from its ``logits`` and ``features`` of crops labelled ``labels`` (reader
    classes) read as items of ``kinds``; ``reader``: the file's digest.

    The correction is fitted on standardised features (each less its mean over the
    crops, over its spread), so that the penalty weighs every feature alike and L-BFGS
    converges in a few dozen steps, and is then turned back into a correction of the
    file's own weights and bias."""
    y = np.asarray(labels, np.int64)
    n = len(y)
    masks = np.stack([kind_mask(kind) for kind in kinds])
    # only the classes some crop may be read as take part, in one contiguous block
    columns = np.flatnonzero(masks.any(axis=0))
    masks = np.ascontiguousarray(masks[:, columns])
    z = np.ascontiguousarray(np.asarray(logits, np.float64)[:, columns])
    position = {int(c): i for i, c in enumerate(columns)}
    target = np.array([position[int(label)] for label in y])
    refit_classes = np.array(sorted(set(y.tolist())), np.int64)
    refit = np.array([position[int(c)] for c in refit_classes])
    raw = np.asarray(features, np.float64)
    mean = raw.mean(axis=0)
    spread = np.maximum(raw.std(axis=0), 1e-6)
    f = np.hstack([(raw - mean) / spread, np.ones((n, 1))])
    # (features x crops) @ (crops x rows) is several times faster in OpenBLAS than the
    # same product the other way round
    f_t = np.ascontiguousarray(f.T)
    rows, width = len(refit), f.shape[1]
    picked = np.zeros((n, rows))
    for i, label in enumerate(target):
        if label in refit:
            picked[i, int(np.flatnonzero(refit == label)[0])] = 1.0

    def loss(theta: npt.NDArray[np.float64]) -> tuple[float, npt.NDArray[np.float64]]:
        change = theta.reshape(rows, width)
        moved = z.copy()
        moved[:, refit] += f @ np.ascontiguousarray(change.T)
        logs = _masked_log_softmax(moved, masks)
        value = -float(logs[np.arange(n), target].mean()) + 0.5 * penalty * float(theta @ theta)
        slope = (np.exp(logs[:, refit]) - picked) / n
        return value, (f_t @ slope).T.ravel() + penalty * theta

    change = lbfgs(loss, np.zeros(rows * width)).reshape(rows, width)
    weight = np.zeros((len(READER_CLASSES), raw.shape[1]), np.float32)
    bias = np.zeros(len(READER_CLASSES), np.float32)
    weight[refit_classes] = change[:, :-1] / spread
    bias[refit_classes] = change[:, -1] - (change[:, :-1] / spread) @ mean
    part = HeadPart(tuple(sorted(set(kinds), key=("tile", "card").index)), weight, bias,
                    reader, tuple(READER_CLASSES[i] for i in refit_classes))
    after = part.apply(np.asarray(logits, np.float32), np.asarray(features, np.float32),
                       np.ones(n, bool))[:, columns].astype(np.float64)
    before_logs = _masked_log_softmax(z, masks)
    after_logs = _masked_log_softmax(after, masks)
    report = FitReport(n, int((y == NONE_INDEX).sum()),
                       -float(before_logs[np.arange(n), target].mean()),
                       -float(after_logs[np.arange(n), target].mean()),
                       float((before_logs.argmax(axis=1) == target).mean()),
                       float((after_logs.argmax(axis=1) == target).mean()))
    return part, report


def read_crops(reader: Reader, images: Sequence[npt.NDArray[np.uint8]]
               ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The reader's logits and features of ``images``, :data:`BATCH` at a time."""
    stacked = np.asarray(images, np.uint8)
    parts = [reader.read(stacked[i : i + BATCH]) for i in range(0, len(stacked), BATCH)]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def fit_reader(reader: Reader, examples: HeadCrops, penalty: float = PENALTY
               ) -> tuple[HeadPart, FitReport]:
    """The head of the reader file ``reader`` (which must output its features) fitted
    on ``examples``."""
    logits, features = read_crops(reader, examples.images)
    return fit_part(logits, features, examples.labels, examples.kinds,
                    reader_digest(reader.path), penalty)
