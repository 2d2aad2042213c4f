"""The one adapter to the detection model: ultralytics (.pt) or ONNX Runtime (.onnx).

Nothing here downloads anything: ``YOLO_OFFLINE=1`` is set before ultralytics
is imported and models are local files.  The rest of the project sees only
:class:`Detector`, its :class:`DetectorSettings` and :class:`Detections`;
training and export are in :mod:`tabletop.studio.training`.

A model is one-stage (a YOLO with every label of :mod:`tabletop.vision.labels`) or
two-stage, as shipped: a YOLO *finder* with the classes ``tile`` and ``card``
and, beside it as ``NAME.reader.onnx``, the crop classifier of
:mod:`tabletop.vision.reader` that names each found box.  A two-stage model may also
have a card finder (``NAME.cards.onnx``, more card-index boxes) and a card
reader (``NAME.cards.reader.onnx``, which names the card-index boxes while the
reader names the tiles).  A folder ``tabletop adapt`` made may hold the set's inks
(``NAME.palette.json``) and a head correcting the readers' last layer
(``NAME.head.npz``, :mod:`tabletop.vision.reader_head`); both are used where present.
"""

from __future__ import annotations

import ast
import json
import math
import os
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.card_faces import FaceReader, find_faces, join_faces
from tabletop.vision.detections import EDGE_PX, Detections, iou_matrix, without_duplicates
from tabletop.vision.labels import CLASS_NAMES, Kind, label_of
from tabletop.vision.palette import SET_INKS_FILE, SetInks, TablePalette
from tabletop.vision.reader import (
    DEFAULT_CARD_TURNS,
    READER_CLASSES,
    Reader,
    alternatives,
    check_card_turns,
    check_views,
    decide,
)
from tabletop.vision.reader_head import HEAD_FILE, HeadPart, load_head, reader_digest
from tabletop.vision.suit_colour import judge_suit_colours, suit_inks, weigh_spades

SHIPPED_MODELS = Path(__file__).resolve().parent.parent / "models"
"""The package ``tabletop.models``: ``models/`` in a checkout, ``tabletop/models`` installed."""
DEFAULT_MODELS = (SHIPPED_MODELS / "tabletop.onnx", SHIPPED_MODELS / "tabletop.pt")
"""Looked for in this order when no ``--model`` is given (the ``.pt`` file, for training,
is only in a checkout)."""
DEFAULT_CONFIDENCE = 0.25
LOOK_AGAIN_REGION = 5.0
"""How many item sizes across the region is that :meth:`Detector.look_again` runs the
finder on, centred on the spot."""
LOOK_AGAIN_SCALE = 1.5
"""The region's scale in that pass, relative to the frame's pixels (the frame's own
passes run at 0.75 and 1.125 of a 1280-pixel frame)."""
LOOK_AGAIN_FLOOR_SHARE = 0.4
"""The finder's floor there, as a share of the detector's threshold."""
LOOK_AGAIN_PRIOR = 0.5
"""The least finder confidence a looked-again box counts with: the meld's row says an
item lies there, so the reader alone must be fairly sure (0.5 of the threshold 0.25)."""
LOOK_AGAIN_IOU = 0.3
DEFAULT_IMGSZ = 960
NMS_IOU = 0.5
"""Tiles lie flat side by side and card indices overlap little, so two boxes
overlapping this much are one item (ultralytics defaults to 0.7)."""
DEFAULT_ZOOM = 1.5
"""The finder runs a second time at this many times its input size and the two
passes' boxes are merged.  A YOLO finds well only a band of object sizes: at
960 the shipped finder misses most card indices under 16 pixels of the frame
and two fifths of those at 16-32, while at 1440 it finds more of them but fewer of
the largest tiles (models/README.md).  1 turns the second pass off."""
MAX_ZOOM = 3.0
ZOOM_TILE_LIMIT = 128
"""The zoomed pass keeps tile boxes shorter than this many pixels of its own
input: larger ones are the base pass's to find, and there the zoomed pass
boxes parts of big tiles."""


class ModelError(ValueError):
    """A model that is missing, unreadable or trained on other labels."""


def offline_ultralytics() -> None:
    """Keep ultralytics from reaching the network (and quiet); call before importing it."""
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ.setdefault("YOLO_VERBOSE", "False")


def default_model() -> Path:
    for path in DEFAULT_MODELS:
        if path.is_file():
            return path
    raise ModelError(
        "no model given and none shipped in models/ ("
        + ", ".join(p.name for p in DEFAULT_MODELS)
        + "); train one with 'tabletop train' or pass --model PATH"
    )


FINDER_NAMES: tuple[Kind, Kind] = ("tile", "card")
"""The two-stage model's finder classes: a whole tile, a card's corner index."""


def reader_path(finder: Path) -> Path:
    """Where a finder's reader lives: ``NAME.reader.onnx`` beside ``NAME.pt|.onnx``."""
    return finder.with_name(f"{finder.stem}.reader.onnx")


def card_finder_path(finder: Path) -> Path:
    """Where a finder's card finder lives: ``NAME.cards.onnx`` beside ``NAME.onnx``,
    ``NAME.cards.pt`` beside ``NAME.pt`` (it runs in the finder's runtime)."""
    return finder.with_name(f"{finder.stem}.cards{finder.suffix}")


CARD_FINDER_WAYS = ("merge", "replace", "off")
"""How a card finder's boxes join the finder's: ``merge`` adds them to the
finder's card boxes (one item where they overlap), ``replace`` takes them
instead of the finder's, ``off`` leaves the card finder unused."""
DEFAULT_CARD_FINDER = "merge"


def card_reader_path(finder: Path) -> Path:
    """Where a finder's card reader lives: ``NAME.cards.reader.onnx`` beside
    ``NAME.pt|.onnx``: it names every card-index box, whichever finder gave it and
    whichever runtime runs the finders."""
    return finder.with_name(f"{finder.stem}.cards.reader.onnx")


def face_reader_path(finder: Path) -> Path:
    """Where a finder's face reader lives (:mod:`tabletop.vision.card_faces`):
    ``NAME.faces.onnx`` beside ``NAME.pt|.onnx``."""
    return finder.with_name(f"{finder.stem}.faces.onnx")


FACE_WAYS = ("on", "off")


def check_faces(way: str) -> str:
    if way not in FACE_WAYS:
        raise ValueError(f"faces must be one of {', '.join(FACE_WAYS)}, not {way!r}")
    return way


def set_inks_path(finder: Path) -> Path:
    """Where an adapted model keeps its set's inks: ``NAME.palette.json`` beside its finder."""
    return finder.with_name(f"{finder.stem}.{SET_INKS_FILE}")


def load_set_inks(path: Path) -> SetInks | None:
    """The set's inks in ``path``, or None where there is no such file; ModelError for one
    that cannot be read."""
    if not path.is_file():
        return None
    try:
        return SetInks.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ModelError(f"cannot read the set's inks {str(path)!r}: {error}") from None


def head_path(finder: Path) -> Path:
    """Where an adapted model keeps its readers' head (:mod:`tabletop.vision.reader_head`):
    ``NAME.head.npz`` beside its finder."""
    return finder.with_name(f"{finder.stem}.{HEAD_FILE}")


def load_reader_head(path: Path) -> dict[str, HeadPart]:
    """The head's parts by reader role in ``path`` (none where there is no such file);
    ModelError for one that cannot be read."""
    try:
        return load_head(path)
    except (OSError, ValueError, KeyError) as error:
        raise ModelError(f"cannot read the readers' head {str(path)!r}: {error}") from None


CARD_READER_WAYS = ("on", "off")
"""Whether card-index boxes are named by the model's card reader (``on``) or by the
reader that names the tiles too (``off``)."""


def check_card_reader(way: str) -> str:
    """``way`` if it is one of :data:`CARD_READER_WAYS`, else ValueError."""
    if way not in CARD_READER_WAYS:
        raise ValueError(f"card reader must be one of {', '.join(CARD_READER_WAYS)}, "
                         f"not {way!r}")
    return way


def check_card_finder(way: str) -> str:
    """``way`` if it is one of :data:`CARD_FINDER_WAYS`, else ValueError."""
    if way not in CARD_FINDER_WAYS:
        raise ValueError(f"card finder must be one of {', '.join(CARD_FINDER_WAYS)}, "
                         f"not {way!r}")
    return way


def _check_names(names: dict[int, str] | Sequence[str], path: Path) -> bool:
    """True for a two-stage finder, False for a one-stage detector; else ModelError."""
    listed = [names[i] for i in range(len(names))] if isinstance(names, dict) else list(names)
    if listed == list(FINDER_NAMES):
        return True
    if listed != list(CLASS_NAMES):
        raise ModelError(f"model {str(path)!r} has {len(listed)} classes that are not "
                         f"vision.labels.CLASS_NAMES (first: {listed[:3]})")
    return False


def _nms(boxes: npt.NDArray[Any], classes: npt.NDArray[Any], scores: npt.NDArray[Any],
         min_score: float) -> npt.NDArray[np.int_]:
    """Indices of the boxes (x1, y1, x2, y2) scoring ``min_score`` or more that
    survive non-maximum suppression at ``NMS_IOU`` within each class, most
    confident first."""
    import cv2

    if len(boxes) == 0:
        return np.zeros(0, int)
    rects = [[float(x1), float(y1), float(x2 - x1), float(y2 - y1)] for x1, y1, x2, y2 in boxes]
    return np.asarray(cv2.dnn.NMSBoxesBatched(rects, [float(s) for s in scores],
                                              [int(c) for c in classes], min_score, NMS_IOU),
                      int).reshape(-1)


PALETTE_WAYS = ("auto", "on", "off")
"""How tile colours are judged beyond the reader: ``auto`` against the set's own inks
where the model has them (a folder ``tabletop adapt`` made), for the colours the reader
misread on the set's photos (:attr:`tabletop.vision.palette.SetInks.judged`), ``on``
against the inks of the other tiles in the frame as well, ``off`` as the reader reads
each tile alone."""


def check_palette(way: str) -> str:
    """``way`` if it is one of :data:`PALETTE_WAYS`, else ValueError."""
    if way not in PALETTE_WAYS:
        raise ValueError(f"palette must be one of {', '.join(PALETTE_WAYS)}, not {way!r}")
    return way


DEFAULT_ZOOM_OUT = 0.667
"""Where the base pass finds a large tile (or few items), the finder runs once more at
this many times its input size, for large tiles it misses, and again at this factor's
powers while tiles stay large (:data:`ZOOM_OUT_DEPTH`): at 960 the shipped finder boxes
fewer tiles over about 96 input pixels (0.924 of those over 128 frame pixels on rendered
tables against 0.973 at 64-128), and a tile 300 input pixels long piecemeal or not at
all.  1 turns it off."""
ZOOM_OUT_TRIGGER = 96
"""A pass's largest tile box, in its input pixels, from which the next zoomed-out pass
runs: tables of small tiles, the usual live view, never pay for it."""
ZOOM_OUT_TILE_FLOOR = 48
"""A zoomed-out pass keeps tile boxes this many of its input pixels long or longer:
smaller ones are the larger passes' to find."""
ZOOM_OUT_DEPTH = 3
"""The tiles' zoomed-out passes at most, each at ``zoom_out`` times the size of the one
before (0.667, 0.444, 0.296 of the input size): the next runs where the last one still
boxes a tile of :data:`ZOOM_OUT_TRIGGER` of its input pixels, or found almost nothing
(:data:`CLOSE_UP_ITEMS`), so a tile filling a third of the frame is boxed at the size
the finder was trained on."""
CLOSE_UP_ITEMS = 6
"""A whole frame whose pass boxes fewer items than this may be a close-up, whose
tiles the pass boxes piecemeal or not at all: the tiles' next zoomed-out pass runs
there whatever the sizes of its boxes.  A region of the frame (the live table's look
at one spot) never counts as one."""
CARD_ZOOM_OUT = 0.5
"""The card indices' first zoomed-out pass's input size as a multiple of ``imgsz``: a
close-up of a few cards (indices 100-200 pixels long at 1280x720) is boxed at half the
size, where the base pass boxes the pips instead."""
CARD_ZOOM_OUT_DEEPER = 0.35
"""The card indices' second zoomed-out pass, run with the first: indices 200 pixels long
at 1280x720 are boxed surely enough to keep only at about a third of the size."""
CARD_ZOOM_OUT_TRIGGER = 32
"""The base pass's largest card box, in its input pixels, from which the card indices'
zoomed-out passes run: tables seen from their usual distance never pay for them."""
CARD_ZOOM_OUT_FLOOR = 24
"""The card indices' zoomed-out pass keeps card boxes this many of its input pixels long
or longer."""


SUIT_COLOUR_WAYS = ("on", "off")


def check_suit_colour(way: str) -> str:
    if way not in SUIT_COLOUR_WAYS:
        raise ValueError(f"suit colour must be one of {', '.join(SUIT_COLOUR_WAYS)}, "
                         f"not {way!r}")
    return way


SMALLEST_INDEX_PX = 12.0
"""A card index boxed shorter than this (pixels, its longer side) is not named.  On
rendered melds under 12 pixels both card readers name most indices wrongly (models/README.md,
"Limits"), and a card read wrongly costs the players more than one not read: the run
says instead that the camera is too far (:mod:`tabletop.live.table_view`)."""
SMALL_INDICES_KEPT = 64
"""How many of the last indices left unnamed for their size the detector remembers."""
DEFAULT_SPADE_ODDS = 3.0
"""What each rank's spade-to-club odds are multiplied by before a card index is named
(:func:`tabletop.vision.suit_colour.weigh_spades`).  Card readers trained on rendered
decks lean to clubs where a real spade is small.  Chosen on real indices of the adapt
deck (bridge-cards' deal1) composed into Rommé games, 125 and 90 pixel cards: the
shipped card reader reads 555 of 592 at 3 and 554 at 1, and with the deck's head
(:mod:`tabletop.vision.reader_head`) 563 at 3 and 560 at 1; 3 leaves rendered
indices as read (figures in models/README)."""
SPADE_ODDS_RANGE = (0.25, 8.0)


def check_spade_odds(odds: float) -> float:
    low, high = SPADE_ODDS_RANGE
    if not low <= float(odds) <= high:
        raise ValueError(f"spade odds must be between {low:g} and {high:g}, not {odds!r}")
    return float(odds)


MIN_ZOOM_OUT = 0.25
"""The smallest zoomed-out pass, as a share of the input size."""


def check_zoom_out(zoom_out: float) -> float:
    """``zoom_out`` if it is a usable zoomed-out pass factor (0.25..1), else ValueError."""
    if not MIN_ZOOM_OUT <= zoom_out <= 1.0:
        raise ValueError(f"zoom out must be from {MIN_ZOOM_OUT:g} to 1 (no such pass), "
                         f"not {zoom_out!r}")
    return float(zoom_out)


def check_zoom(zoom: float) -> float:
    """``zoom`` if it is a usable second-pass factor, else ValueError."""
    if not 1.0 <= zoom <= MAX_ZOOM:
        raise ValueError(f"zoom must be from 1 (no second pass) to {MAX_ZOOM:g}, not {zoom!r}")
    return float(zoom)


def merge_zoomed(base: Detections, zoomed: Detections, zoomed_scale: float,
                 tile_limit: float = ZOOM_TILE_LIMIT) -> Detections:
    """One set of boxes from a frame's base pass and its zoomed pass (both in the
    frame's pixels; ``zoomed_scale`` is the zoomed pass's input pixels per frame
    pixel).  The zoomed pass's tiles of ``tile_limit`` input pixels or more are
    dropped; then boxes of one kind overlapping by IoU ``NMS_IOU`` or more are one
    item, the most confident box kept."""
    if len(zoomed):
        sides = np.maximum(zoomed.boxes[:, 2] - zoomed.boxes[:, 0],
                           zoomed.boxes[:, 3] - zoomed.boxes[:, 1]) * zoomed_scale
        zoomed = zoomed[~((np.asarray(zoomed.kinds) == "tile") & (sides >= tile_limit))]
    return merge_boxes([base, zoomed])


def _longest(detections: Detections) -> float:
    """The longest side of any box, in pixels."""
    boxes = detections.boxes
    return float(np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]).max())


def merge_boxes(parts: Sequence[Detections]) -> Detections:
    """Boxes from several passes as one set: boxes of one kind overlapping by IoU
    ``NMS_IOU`` or more are one item, the most confident box kept."""
    both = Detections.concatenate(parts)
    if len(both) < 2:
        return both
    kinds = np.array([0 if kind == "tile" else 1 for kind in both.kinds])
    return both[_nms(both.boxes, kinds, both.confidences, 0.0)]


def _from_arrays(boxes: npt.NDArray[Any], classes: npt.NDArray[Any],
                 scores: npt.NDArray[Any], width: int, height: int,
                 finder: bool = False) -> Detections:
    labels: list[str] = []
    kinds: list[Kind] = []
    for c in classes:
        # A finder's boxes carry their kind only; the reader names them later.
        label, kind = (("JK", FINDER_NAMES[int(c)]) if finder else label_of(int(c)))
        labels.append(label)
        kinds.append(kind)
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
    # a box wholly off the image is empty once clipped: dropped before it is checked
    keep = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    return Detections(boxes[keep], tuple(lab for lab, k in zip(labels, keep, strict=True) if k),
                      tuple(kind for kind, k in zip(kinds, keep, strict=True) if k),
                      np.clip(np.asarray(scores, np.float64)[keep], 0, 1))


class OnnxFinder:
    """A YOLO exported to ONNX, run by ONNX Runtime: one pass at a time, the frame's
    long side letterboxed to the pass's size."""

    def __init__(self, path: Path) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise ModelError("an .onnx model needs onnxruntime: pip install onnxruntime") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        # constant folding, node fusions and the CPU's own kernel layouts
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Several sessions run one after the other per frame; a spinning thread
        # pool would hold the cores the next session needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(str(path), options,
                                                 providers=["CPUExecutionProvider"])
        except Exception as error:
            raise ModelError(f"cannot load {str(path)!r}: {error}") from None
        meta = self._session.get_modelmeta().custom_metadata_map
        self.names: list[str] | None = None
        if "names" in meta:
            names = ast.literal_eval(meta["names"])
            self.names = ([names[i] for i in range(len(names))] if isinstance(names, dict)
                          else list(names))
        shape = self._session.get_inputs()[0].shape
        self.fixed_input: int | None = shape[2] if isinstance(shape[2], int) else None
        self.imgsz: int | None = (ast.literal_eval(meta["imgsz"])[0] if "imgsz" in meta
                                  else None)

    def __call__(self, image: npt.NDArray[np.uint8], size: int,
                 floors: npt.NDArray[np.float64], finder: bool) -> Detections:
        """The boxes of one pass whose class scores its ``floors`` entry or more."""
        import cv2

        h, w = image.shape[:2]
        scale = min(size / w, size / h)
        nw, nh = round(w * scale), round(h * scale)
        # The smallest padded rectangle (sides multiples of the stride), as
        # ultralytics does: a 16:9 frame costs 56 % of the square.
        cw, ch = ((size, size) if self.fixed_input is not None
                  else (-(-nw // 32) * 32, -(-nh // 32) * 32))
        px, py = (cw - nw) // 2, (ch - nh) // 2
        canvas = np.full((ch, cw, 3), 114, np.uint8)
        canvas[py : py + nh, px : px + nw] = cv2.resize(image, (nw, nh),
                                                        interpolation=cv2.INTER_LINEAR)
        blob = canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255.0
        out = self._session.run(None, {self._session.get_inputs()[0].name: blob})[0][0]
        if out.shape[0] != 4 + len(floors):
            out = out.T  # (anchors, 4 + classes) exports
        scores = out[4:]
        classes = scores.argmax(axis=0)
        best = scores[classes, np.arange(scores.shape[1])]
        keep = best >= floors[classes]
        cx, cy, bw, bh = out[:4, keep]
        boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=1)
        classes, best = classes[keep], best[keep]
        if len(boxes):
            picked = _nms(boxes, classes, best, float(floors.min()))
            boxes, classes, best = boxes[picked], classes[picked], best[picked]
        boxes = (boxes - [px, py, px, py]) / scale
        return _from_arrays(boxes, classes, best, w, h, finder)


class UltralyticsFinder:
    """A YOLO's ultralytics weights (.pt), run by ultralytics' ``predict`` on PyTorch."""

    def __init__(self, path: Path, device: str | None) -> None:
        offline_ultralytics()
        try:
            from ultralytics import YOLO
        except ImportError:
            raise ModelError(
                "a .pt model needs the 'train' extra: pip install 'tabletop[train]'") from None
        try:
            self.yolo: Any = YOLO(str(path), task="detect")
        except Exception as error:  # torch raises many kinds for a broken file
            raise ModelError(f"cannot load {str(path)!r}: {error}") from None
        self.device = device
        names = self.yolo.names
        self.names: list[str] = [names[i] for i in range(len(names))]
        trained = getattr(self.yolo.model, "args", {}) or {}
        size = inference_imgsz(self.yolo) or trained.get("imgsz")
        self.imgsz: int | None = int(size) if size else None

    def __call__(self, image: npt.NDArray[np.uint8], size: int,
                 floors: npt.NDArray[np.float64], finder: bool) -> Detections:
        """The boxes of one pass whose class scores its ``floors`` entry or more."""
        result = self.yolo.predict(image, imgsz=size, conf=float(floors.min()), iou=NMS_IOU,
                                   device=self.device or "cpu", verbose=False)[0]
        boxes = result.boxes
        classes, scores = boxes.cls.cpu().numpy(), boxes.conf.cpu().numpy()
        keep = scores >= floors[classes.astype(int)]
        return _from_arrays(boxes.xyxy.cpu().numpy()[keep], classes[keep], scores[keep],
                            image.shape[1], image.shape[0], finder)


@dataclass(frozen=True)
class DetectorSettings:
    """How a :class:`Detector` runs its model; the defaults are the shipped pipeline's.
    Each field is checked when the settings are made (ValueError)."""

    imgsz: int | None = None
    """The finder's input size on the frame's long side (None: the size stamped in the
    model, else :data:`DEFAULT_IMGSZ`).  An ONNX model exported with a fixed input size
    always runs at that size."""
    confidence: float = DEFAULT_CONFIDENCE
    """The least confidence a detection keeps: the finder's, and for a two-stage model
    the finder's times the reader's as well."""
    views: int = 1
    """How many nudged crops the reader of a two-stage model averages per box
    (:data:`vision.reader.VIEW_SHIFTS`), at that many times the reader's cost."""
    zoom: float = DEFAULT_ZOOM
    """The second finder pass's input size as a multiple of ``imgsz`` (1: one pass only,
    as always for an ONNX model exported with a fixed input size)."""
    zoom_out: float = DEFAULT_ZOOM_OUT
    """The first zoomed-out pass's input size as a multiple of ``imgsz``, run where the
    base pass boxed a tile of :data:`ZOOM_OUT_TRIGGER` input pixels or more or, on a whole
    frame, fewer than :data:`CLOSE_UP_ITEMS` items; the next ones at its powers
    (:data:`ZOOM_OUT_DEPTH`).  1: none, and no card indices' zoomed-out pass either
    (:data:`CARD_ZOOM_OUT`)."""
    card_turns: int = DEFAULT_CARD_TURNS
    """How many turns of each card index's crop the reader averages (1, 2 or 4)."""
    card_finder: str | None = None
    """How the boxes of a second finder trained for card indices
    (:func:`card_finder_path`) join the finder's (:data:`CARD_FINDER_WAYS`; None:
    :data:`DEFAULT_CARD_FINDER` when the model has one, else ``off``).  It runs only on
    frames where the finder boxed a card index, so tile-only tables neither pay for it
    nor get its false card boxes."""
    card_reader: str | None = None
    """``on`` to name card-index boxes with the model's card reader
    (:func:`card_reader_path`, a reader fine-tuned on card indices alone), ``off`` to
    name them with the reader that names tiles (None: ``on`` when the model has one)."""
    palette: str = "auto"
    """How tile colours are judged beyond the reader (:data:`PALETTE_WAYS`,
    :class:`tabletop.vision.palette.TablePalette`)."""
    suit_colour: str = "on"
    """``on`` to judge each card index's suit colour (red or black) by its ink as well as
    by the reader (:mod:`tabletop.vision.suit_colour`), ``off`` for the reader alone."""
    spade_odds: float | None = None
    """What each rank's spade-to-club odds from the card reader are multiplied by (1 for
    the reader's own; None: :data:`DEFAULT_SPADE_ODDS`)."""
    faces: str = "on"
    """``on`` to read the cards lying in full view from their whole face as well, where
    the model has a face reader (:func:`face_reader_path`,
    :mod:`tabletop.vision.card_faces`); ``off`` for the indices alone."""
    smallest_index: float = SMALLEST_INDEX_PX
    """Card indices boxed shorter than this on their longer side (pixels) are not named
    (0: every index is named)."""
    device: str | None = None
    """The torch device a ``.pt`` model runs on (None: the CPU); ONNX Runtime runs on
    the CPU."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.smallest_index < 1000.0:
            raise ValueError(f"the smallest card index must be 0 to 1000 pixels, not "
                             f"{self.smallest_index!r}")
        check_views(self.views)
        check_card_turns(self.card_turns)
        object.__setattr__(self, "zoom", check_zoom(self.zoom))
        object.__setattr__(self, "zoom_out", check_zoom_out(self.zoom_out))
        if self.card_finder is not None:
            check_card_finder(self.card_finder)
        if self.card_reader is not None:
            check_card_reader(self.card_reader)
        check_palette(self.palette)
        check_suit_colour(self.suit_colour)
        check_faces(self.faces)
        if self.spade_odds is not None:
            object.__setattr__(self, "spade_odds", check_spade_odds(self.spade_odds))


class Detector:
    """A loaded model: ``detector(image_bgr) -> Detections`` in the image's pixels,
    with each item's ``alternatives`` when a reader named it (a two-stage model).

    ``path``: the model file (None: the shipped one, :func:`default_model`); a
    two-stage model's reader, card finder and card reader are found beside it.
    ``settings``: how it runs (None: :class:`DetectorSettings`' defaults).
    """

    def __init__(self, path: str | Path | None = None,
                 settings: DetectorSettings | None = None) -> None:
        self.path = Path(path) if path is not None else default_model()
        if not self.path.is_file():
            raise ModelError(f"model file {str(self.path)!r} does not exist")
        self.settings = settings if settings is not None else DetectorSettings()
        self.spade_odds = (DEFAULT_SPADE_ODDS if self.settings.spade_odds is None
                           else self.settings.spade_odds)
        """The spade odds card indices are named with (see the settings' ``spade_odds``)."""
        self.small_indices: deque[float] = deque(maxlen=SMALL_INDICES_KEPT)
        """The longer sides (pixels) of the last card indices left unnamed as too small
        (the settings' ``smallest_index``), newest last."""
        self._fixed_input = False
        if self.path.suffix == ".onnx":
            self.backend = "onnxruntime"
            self._load_onnx()
        elif self.path.suffix == ".pt":
            self.backend = "ultralytics"
            self._load_ultralytics()
        else:
            raise ModelError(f"model {str(self.path)!r}: want a .pt or .onnx file")
        self._load_card_finder(self.settings.card_finder)
        set_inks = load_set_inks(set_inks_path(self.path))
        # inks that judge no colour would only cost each frame a measure of every tile's ink
        self._palette: TablePalette | None = (
            None if self.settings.palette == "off"
            or (self.settings.palette == "auto"
                and (set_inks is None or not set_inks.judged.any()))
            else TablePalette(set_inks=set_inks, use_table=self.settings.palette == "on"))

    def _load_ultralytics(self) -> None:
        self._finder: OnnxFinder | UltralyticsFinder = UltralyticsFinder(
            self.path, self.settings.device)
        self.classes = len(self._finder.names)
        self._load_reader(_check_names(self._finder.names, self.path))
        self.imgsz = int(self.settings.imgsz or self._finder.imgsz or DEFAULT_IMGSZ)

    def _load_onnx(self) -> None:
        finder = OnnxFinder(self.path)
        self._finder = finder
        self.classes = len(finder.names) if finder.names is not None else len(CLASS_NAMES)
        self._load_reader(_check_names(finder.names, self.path) if finder.names is not None
                          else False)
        self._fixed_input = finder.fixed_input is not None
        self.imgsz = int(finder.fixed_input or self.settings.imgsz or finder.imgsz
                         or DEFAULT_IMGSZ)

    # --- the card finder of a two-stage model ------------------------------------------
    def _load_card_finder(self, way: str | None) -> None:
        path = card_finder_path(self.path)
        if way is None:
            way = DEFAULT_CARD_FINDER if path.is_file() else "off"
        self.card_finder_way = check_card_finder(way)
        self._card_finder: OnnxFinder | UltralyticsFinder | None = None
        if self.card_finder_way == "off":
            return
        if self.reader is None:
            raise ModelError(f"{str(self.path)!r} is a one-stage model; a card finder "
                             "works beside a two-stage finder only")
        if not path.is_file():
            raise ModelError(f"card finder {str(path)!r} is missing (or pass "
                             "--card-finder off)")
        self._card_finder = (OnnxFinder(path) if path.suffix == ".onnx"
                             else UltralyticsFinder(path, self.settings.device))
        if self._card_finder.names != list(FINDER_NAMES):
            raise ModelError(f"card finder {str(path)!r} has classes "
                             f"{self._card_finder.names}, not {list(FINDER_NAMES)}")

    def _card_finder_pass(self, image: npt.NDArray[np.uint8], size: int) -> Detections:
        """One card-finder pass: its card-index boxes only."""
        card_finder = self._card_finder
        assert card_finder is not None
        floors = self._floors()
        floors[FINDER_NAMES.index("tile")] = np.inf
        return card_finder(image, size, floors, True)

    def card_finder_boxes(self, image: npt.NDArray[np.uint8],
                          sized_by: Detections | None = None) -> Detections:
        """The card finder's own card-index boxes, its passes merged as the finder's
        are, whether or not the first finder saw a card index (:meth:`find` runs it
        only where it did): every box a card reader could be handed on such a frame,
        false alarms on tiles included.  ``sized_by``: the boxes whose sizes decide its
        zoomed-out passes (:meth:`find` gives the first finder's; None: its own).  A
        model without a card finder has none."""
        if self._card_finder is None:
            return Detections.empty()
        return self._passes(image, self._card_finder_pass, sized_by=sized_by, tiles=False)

    # --- the reader of a two-stage model ----------------------------------------------
    def _load_reader(self, two_stage: bool) -> None:
        self.reader: Any = None
        self.card_reader: Any = None
        self.face_reader: FaceReader | None = None
        self._head: dict[str, HeadPart] = {}
        if not two_stage:
            if self.settings.card_reader == "on":
                raise ModelError(f"{str(self.path)!r} is a one-stage model; a card reader "
                                 "works beside a two-stage finder only")
            self.card_reader_way = "off"
            return
        path = reader_path(self.path)
        if not path.is_file():
            raise ModelError(f"{str(self.path)!r} is a two-stage finder, but its reader "
                             f"{str(path)!r} is missing")
        self._head = load_reader_head(head_path(self.path))
        head = self._head_for("reader", path)
        try:
            self.reader = Reader(path, head)
        except Exception as error:
            raise ModelError(f"cannot load reader {str(path)!r}: {error}") from None
        self._load_card_reader()
        self._load_face_reader()

    def _load_face_reader(self) -> None:
        path = face_reader_path(self.path)
        if self.settings.faces == "off" or not path.is_file():
            return
        try:
            self.face_reader = FaceReader(path)
        except Exception as error:
            raise ModelError(f"cannot load face reader {str(path)!r}: {error}") from None

    def _head_for(self, role: str, path: Path) -> HeadPart | None:
        """The head's part for the reader file ``path`` (``role``: ``reader`` or
        ``card_reader``), None where the head has none; ModelError where it was fitted
        on another file."""
        part = self._head.get(role)
        if part is None:
            return None
        if not path.is_file() or reader_digest(path) != part.reader:
            raise ModelError(f"the readers' head {str(head_path(self.path))!r} was fitted on "
                             f"another {role.replace('_', ' ')} than {str(path)!r}: adapt "
                             "again, or remove the head")
        return part

    def _load_card_reader(self) -> None:
        path = card_reader_path(self.path)
        way = self.settings.card_reader or ("on" if path.is_file() else "off")
        self.card_reader_way = way
        if way == "off":
            return
        if not path.is_file():
            raise ModelError(f"card reader {str(path)!r} is missing (or pass "
                             "--card-reader off)")
        head = self._head_for("card_reader", path)
        try:
            self.card_reader = Reader(path, head)
        except Exception as error:
            raise ModelError(f"cannot load card reader {str(path)!r}: {error}") from None

    def probabilities(self, image: npt.NDArray[np.uint8], found: Detections,
                      shifts: Sequence[tuple[float, float]] | None = None
                      ) -> npt.NDArray[np.float64]:
        """Each found box's reader probabilities (rows over
        :data:`vision.reader.READER_CLASSES`), all crops in one batch per reader: the
        card reader's for card indices when there is one, the reader's for the rest.
        ``shifts``: the views read (:data:`vision.reader.VIEW_SHIFTS`), instead of the
        detector's ``views`` first ones."""
        kinds = list(found.kinds)
        is_card = np.array([kind == "card" for kind in kinds], bool)
        if self.card_reader is None:
            probabilities = np.asarray(self.reader.probabilities(
                image, found.boxes, kinds, self.settings.views, self.settings.card_turns,
                shifts), np.float64)
        else:
            probabilities = np.zeros((len(kinds), len(READER_CLASSES)))
            for reader, rows in ((self.reader, ~is_card), (self.card_reader, is_card)):
                if rows.any():
                    probabilities[rows] = reader.probabilities(
                        image, found.boxes[rows], [k for k, r in zip(kinds, rows, strict=True)
                                                   if r], self.settings.views,
                        self.settings.card_turns, shifts)
        if self.settings.suit_colour == "on" and is_card.any():
            probabilities[is_card] = judge_suit_colours(
                probabilities[is_card], suit_inks(image, found.boxes[is_card]))
        return probabilities

    def _read(self, image: npt.NDArray[np.uint8], found: Detections,
              faces: bool = True) -> Detections:
        """Name every found box (:meth:`named`), tile colours decided against the frame's
        inks where the settings say so (:meth:`with_palette`), and with ``faces`` the
        cards lying in full view read from their faces too (:meth:`with_faces`)."""
        if len(found) == 0:
            return found
        probabilities = self.with_palette(image, found, self.probabilities(image, found))
        if not faces:
            return self.named(found, probabilities)
        return self.named(*self.with_faces(image, found, probabilities))

    def with_faces(self, image: npt.NDArray[np.uint8], found: Detections,
                   probabilities: npt.NDArray[np.float64]
                   ) -> tuple[Detections, npt.NDArray[np.float64]]:
        """The found boxes and their ``probabilities`` with the faces of the cards in
        full view read and joined in (:func:`tabletop.vision.card_faces.join_faces`):
        only on frames where a card index was found, and where the model has a face
        reader and the settings' ``faces`` is on."""
        if self.face_reader is None or "card" not in found.kinds:
            return found, probabilities
        faces = find_faces(image)
        if not faces:
            return found, probabilities
        return join_faces(found, probabilities, faces,
                          self.face_reader.probabilities(image, faces))

    @property
    def palette(self) -> TablePalette | None:
        """The stage judging tile colours against the inks: None with ``palette`` off, with
        ``auto`` and no set's inks beside the model or inks that judge no colour
        (:attr:`tabletop.vision.palette.SetInks.judged`), or for a one-stage model."""
        return None if self.reader is None else self._palette

    def with_palette(self, image: npt.NDArray[np.uint8], found: Detections,
                     probabilities: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The found boxes' reader ``probabilities`` with each tile's colour blended with
        the colour of its ink among the inks of all the tiles found
        (:class:`tabletop.vision.palette.TablePalette`); unchanged where the settings and
        the model leave no palette (:attr:`palette`)."""
        if self.palette is None:
            return probabilities
        tiles = np.array([kind == "tile" for kind in found.kinds])
        return self.palette.update(image, found.boxes, probabilities, tiles)

    def named(self, found: Detections, probabilities: npt.NDArray[np.float64]
              ) -> Detections:
        """The found boxes named by their reader ``probabilities``; those the reader calls
        ``none`` dropped.  The confidence is the finder's times the reader's, and must
        pass the same threshold as the finder's alone.  Each box's alternatives are the
        reader's alone (:func:`tabletop.vision.reader.alternatives`), without the finder's
        confidence.  Card indices are named after :attr:`spade_odds` (the settings'
        ``spade_odds``) has weighed their spades against their clubs, which
        changes which black suit is named, never whether an index is kept: the confidence
        is the reader's before.  A card index boxed under the settings' ``smallest_index``
        is dropped, and its size kept in :attr:`small_indices`."""
        if len(found) == 0:
            return found
        kinds = list(found.kinds)
        _, scores = decide(probabilities, kinds)
        is_card = np.array([kind == "card" for kind in kinds], bool)
        if is_card.any() and self.spade_odds != 1.0:
            probabilities = np.array(probabilities, np.float64, copy=True)
            probabilities[is_card] = weigh_spades(probabilities[is_card], self.spade_odds)
        labels, _ = decide(probabilities, kinds)
        confidences = found.confidences * scores
        sides = np.maximum(found.boxes[:, 2] - found.boxes[:, 0],
                           found.boxes[:, 3] - found.boxes[:, 1])
        small = is_card & (sides < self.settings.smallest_index)
        self.small_indices.extend(sides[small].tolist())
        keep = np.array([label is not None for label in labels]) & (
            confidences >= self.settings.confidence) & ~small
        kept_kinds = tuple(k for k, kept in zip(found.kinds, keep, strict=True) if kept)
        return without_duplicates(Detections(
            found.boxes[keep],
            tuple(str(label) for label, kept in zip(labels, keep, strict=True) if kept),
            kept_kinds,
            confidences[keep],
            alternatives=tuple(alternatives(probabilities[keep], kept_kinds))))

    def look_again(self, image: npt.NDArray[np.uint8], boxes: Any,
                   kinds: Sequence[str]) -> Detections:
        """What lies on each spot (frame pixels) where the table suggests an item the
        frame's pass did not find (a gap one item wide in a meld row, the end of a row one
        short of a meld): the finder on the region around the spot
        (:data:`LOOK_AGAIN_REGION` item sizes across) at :data:`LOOK_AGAIN_SCALE` times
        the frame's scale and a lower floor, its box on the spot kept; where it finds
        none, the spot itself.  Each is read, and kept only where the reader names an
        item of the spot's kind with the detector's confidence (the finder's, at least
        :data:`LOOK_AGAIN_PRIOR` for the meld's word, times the reader's)."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        if self.reader is None or not len(boxes):
            return Detections.empty()
        h, w = image.shape[:2]
        found: list[Detections] = []
        for box, kind in zip(boxes, kinds, strict=True):
            side = float(max(box[2] - box[0], box[3] - box[1], 1.0))
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            half = LOOK_AGAIN_REGION * side / 2
            x1, y1 = int(max(0, cx - half)), int(max(0, cy - half))
            x2, y2 = int(min(w, cx + half)), int(min(h, cy + half))
            if x2 - x1 < 8 or y2 - y1 < 8:
                continue
            region = np.ascontiguousarray(image[y1:y2, x1:x2])
            size = int(min(self.imgsz, max(160, round(
                max(x2 - x1, y2 - y1) * LOOK_AGAIN_SCALE / 32) * 32)))
            seen = self._finder(region, size, self._floors() * LOOK_AGAIN_FLOOR_SHARE, True)
            # a finder's box carries its kind only (the placeholder label JK)
            spot = Detections(box[None], ("JK",), (kind,), [LOOK_AGAIN_PRIOR])  # type: ignore[arg-type]
            if len(seen):
                shifted = seen.boxes + np.array([x1, y1, x1, y1], np.float64)
                overlap = iou_matrix(spot.boxes, shifted)[0]
                best = int(overlap.argmax())
                if overlap[best] >= LOOK_AGAIN_IOU and seen.kinds[best] == kind:
                    spot = Detections(shifted[best][None], ("JK",), (kind,),
                                      np.array([max(float(seen.confidences[best]),
                                                    LOOK_AGAIN_PRIOR)]))
            found.append(spot)
        if not found:
            return Detections.empty()
        # a spot is one item the table asks about, not a frame to look for faces in
        return self._read(image, Detections.concatenate(found), faces=False)

    # --- both ------------------------------------------------------------------------
    def __call__(self, image: npt.NDArray[np.uint8]) -> Detections:
        """Detect in one BGR image (as cv2.imread gives it)."""
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"want a BGR image of shape (H, W, 3), not {image.shape}")
        found = self.find(image)
        return self._read(image, found) if self.reader is not None else found

    @property
    def zoom_imgsz(self) -> int | None:
        """The second pass's input size, or None when there is none."""
        if self.settings.zoom == 1.0 or self._fixed_input:
            return None
        return int(round(self.imgsz * self.settings.zoom / 32) * 32)

    def find(self, image: npt.NDArray[np.uint8]) -> Detections:
        """The first stage's boxes (a one-stage model's final ones), both passes
        merged, the card finder's joined where it runs."""
        found = self._passes(image, self._pass)
        if self._card_finder is None or "card" not in found.kinds:
            return found
        cards = self.card_finder_boxes(image, sized_by=found)
        if self.card_finder_way == "replace":
            return Detections.concatenate([found[np.asarray(found.kinds) == "tile"], cards])
        return merge_boxes([found, cards])

    def find_in(self, image: npt.NDArray[np.uint8], rect: Sequence[float]) -> Detections:
        """:meth:`find`'s boxes (frame pixels) of the items lying wholly inside ``rect``
        (x1, y1, x2, y2 in frame pixels): every pass runs on that region alone, at the
        scale it runs at on the whole frame, so an item is seen there as the whole
        frame's pass sees it, for the share of the cost the region is of the frame.
        Boxes cut by the region's edges (not the frame's) are dropped: the region's
        margin is there for the items that matter to lie wholly inside it.  A model
        with a fixed input size runs on the whole frame."""
        h, w = image.shape[:2]
        x1, y1 = max(0, int(rect[0])), max(0, int(rect[1]))
        x2, y2 = min(w, math.ceil(rect[2])), min(h, math.ceil(rect[3]))
        if x2 - x1 < 8 or y2 - y1 < 8:
            return Detections.empty()
        if self._fixed_input or (x1, y1, x2, y2) == (0, 0, w, h):
            found = self.find(image)
        else:
            region = np.ascontiguousarray(image[y1:y2, x1:x2])
            frame_long = max(w, h)
            found = self._passes(region, self._pass, frame_long)
            if self._card_finder is not None and "card" in found.kinds:
                cards = self._passes(region, self._card_finder_pass, frame_long, found,
                                     tiles=False)
                if self.card_finder_way == "replace":
                    found = Detections.concatenate(
                        [found[np.asarray(found.kinds) == "tile"], cards])
                else:
                    found = merge_boxes([found, cards])
            if len(found):
                found = Detections(found.boxes + np.array([x1, y1, x1, y1], np.float64),
                                   found.labels, found.kinds, found.confidences)
        if not len(found):
            return found
        b = found.boxes
        edge = EDGE_PX
        cut = (((b[:, 0] <= x1 + edge) & (x1 > 0)) | ((b[:, 1] <= y1 + edge) & (y1 > 0))
               | ((b[:, 2] >= x2 - edge) & (x2 < w)) | ((b[:, 3] >= y2 - edge) & (y2 < h)))
        outside = (b[:, 2] <= x1) | (b[:, 0] >= x2) | (b[:, 3] <= y1) | (b[:, 1] >= y2)
        return found[~(cut | outside)]

    def _passes(self, image: npt.NDArray[np.uint8],
                run: Callable[[npt.NDArray[np.uint8], int], Detections],
                frame_long: int | None = None,
                sized_by: Detections | None = None, tiles: bool = True) -> Detections:
        """A finder's pass at the base size and, with a zoom, its zoomed pass, merged.
        ``frame_long``: the long side of the frame ``image`` is a region of (None: it is
        the frame); the passes run at the frame's scales.  ``sized_by``: the boxes whose
        sizes decide the zoomed-out passes (the finder's, for the card finder's passes;
        None: this finder's own base pass).  ``tiles``: the finder boxes tiles (the card
        finder boxes card indices only)."""
        long_side = max(image.shape[:2])
        h, w = image.shape[:2]
        share = 1.0 if frame_long is None else long_side / frame_long
        base_size = max(32, round(self.imgsz * share))
        found = run(image, base_size)
        found = self._zoomed_out(image, found, run, base_size, share,
                                 found if sized_by is None else sized_by,
                                 tiles=tiles, whole_frame=frame_long is None)
        zoomed_size = self.zoom_imgsz
        if zoomed_size is None:
            return found
        zoomed_size = max(32, round(zoomed_size * share))
        return merge_zoomed(found, run(image, zoomed_size),
                            min(zoomed_size / w, zoomed_size / h))

    def _zoomed_out(self, image: npt.NDArray[np.uint8], found: Detections,
                    run: Callable[[npt.NDArray[np.uint8], int], Detections],
                    base_size: int, share: float, sized_by: Detections,
                    tiles: bool = True, whole_frame: bool = True) -> Detections:
        """``found`` with the large items of passes at smaller input sizes: with
        ``tiles`` (a finder that boxes tiles; ``sized_by`` its own base pass), the tiles
        of up to :data:`ZOOM_OUT_DEPTH` passes, each at ``zoom_out`` times the size of
        the one before, the first where ``sized_by`` holds a large tile
        (:data:`ZOOM_OUT_TRIGGER`) or, on a ``whole_frame``, few items
        (:data:`CLOSE_UP_ITEMS`), each next one where the last pass does; the card
        indices of two passes, at :data:`CARD_ZOOM_OUT` and :data:`CARD_ZOOM_OUT_DEEPER`
        times the input size, where ``sized_by`` holds a large card box
        (:data:`CARD_ZOOM_OUT_TRIGGER`) or, on a ``whole_frame``, few items, and this
        finder boxed a card index itself or boxes nothing else (the card finder, which
        runs only where the first finder saw one)."""
        if self.settings.zoom_out >= 1.0 or self._fixed_input:
            return found
        h, w = image.shape[:2]
        kept = [found]
        runs: dict[int, Detections] = {}

        def pass_at(factor: float, kind: str, least: float) -> tuple[Detections, float]:
            """The pass at ``factor`` times the input size (run once) and its input pixels
            per frame pixel; its ``kind`` boxes ``least`` input pixels long or more kept."""
            size = max(32, round(self.imgsz * factor * share / 32) * 32)
            if size not in runs:
                runs[size] = run(image, size)
            out = runs[size]
            scale = min(size / w, size / h)
            sides = np.maximum(out.boxes[:, 2] - out.boxes[:, 0],
                               out.boxes[:, 3] - out.boxes[:, 1])
            kept.append(out[(np.asarray(out.kinds) == kind) & (sides * scale >= least)])
            return out, scale

        if tiles:
            last, last_scale = sized_by, min(base_size / w, base_size / h)
            for depth in range(1, ZOOM_OUT_DEPTH + 1):
                last_tiles = last[np.asarray(last.kinds) == "tile"]
                large = (bool(len(last_tiles))
                         and _longest(last_tiles) * last_scale >= ZOOM_OUT_TRIGGER)
                if not (large or (whole_frame and len(last) < CLOSE_UP_ITEMS)):
                    break
                factor = self.settings.zoom_out ** depth
                if factor < MIN_ZOOM_OUT:
                    break
                last, last_scale = pass_at(factor, "tile", ZOOM_OUT_TILE_FLOOR)
        cards = sized_by[np.asarray(sized_by.kinds) == "card"]
        large = bool(len(cards)) and _longest(cards) * min(
            base_size / w, base_size / h) >= CARD_ZOOM_OUT_TRIGGER
        if ("card" in found.kinds or not tiles) and (
                large or (whole_frame and len(sized_by) < CLOSE_UP_ITEMS)):
            for factor in (CARD_ZOOM_OUT, CARD_ZOOM_OUT_DEEPER):
                pass_at(factor, "card", CARD_ZOOM_OUT_FLOOR)
        return merge_boxes(kept) if len(kept) > 1 else found

    def _pass(self, image: npt.NDArray[np.uint8], size: int) -> Detections:
        """One finder pass with the frame's long side at ``size``."""
        return self._finder(image, size, self._floors(), self.reader is not None)

    def _floors(self) -> npt.NDArray[np.float64]:
        """The least finder confidence kept, per class: the threshold for every one."""
        return np.full(self.classes, self.settings.confidence)


INFERENCE_KEY = "tabletop_inference"
"""Checkpoint entry with the frame size a scaled finder is to be run at."""


def inference_imgsz(model: Any) -> int | None:
    """The stamped inference size of a loaded ultralytics ``YOLO``, if any."""
    checkpoint = getattr(model, "ckpt", None)
    if isinstance(checkpoint, dict) and isinstance(checkpoint.get(INFERENCE_KEY), dict):
        return int(checkpoint[INFERENCE_KEY]["imgsz"])
    return None
