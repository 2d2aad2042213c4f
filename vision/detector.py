"""The one adapter to the detection model: ultralytics (.pt) or ONNX Runtime (.onnx).

Nothing here downloads anything: ``YOLO_OFFLINE=1`` is set before ultralytics
is imported, models are local files, training starts from a yaml architecture.
The rest of the project sees only :class:`Detector` and :class:`Detections`.

A model is one-stage (a YOLO with every label of :mod:`vision.labels`) or
two-stage, as shipped: a YOLO *finder* with the classes ``tile`` and ``card``
and, beside it as ``NAME.reader.onnx``, the crop classifier of
:mod:`vision.reader` that names each found box.  A two-stage model may also
have a card finder (``NAME.cards.onnx``, more card-index boxes) and a card
reader (``NAME.cards.reader.onnx``, which names the card-index boxes while the
reader names the tiles).
"""

from __future__ import annotations

import ast
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.detections import EDGE_PX, Detections, iou_matrix, without_duplicates
from vision.labels import CLASS_NAMES, label_of

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODELS = (REPO_ROOT / "models" / "tabletop.onnx", REPO_ROOT / "models" / "tabletop.pt")
"""Looked for in this order when no ``--model`` is given."""
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
the largest tiles (models/README.md, "Session 12").  1 turns the second pass off."""
MAX_ZOOM = 3.0
DEFAULT_CARD_SHRINK = 1.0
"""The card finder's third pass, at this fraction of the input size, is off by
default (1).  At 2/3 (640 for 960) it boxes card indices too large for the other
two passes: both finders box 0.97-0.98 of rendered card indices 14-50 pixels
across, but 0.94 of those 50-70 and 0.75 of larger ones (close-ups).  On two
fresh rendered sets it gained 0.0045 and 0.0042 of identity but lost 0.0004 of
precision on one, so the rule written before it ran kept it off
(models/README.md, session 17); ``--card-shrink 0.667`` turns it on."""
MIN_CARD_SHRINK = 0.25
SHRUNK_CARD_MIN_SIDE = 30.0
"""The shrunk pass keeps card-index boxes at least this many frame pixels across
(on their shorter side): smaller ones are the other passes' to find."""
SHRUNK_CARD_MIN_CONFIDENCE = 0.4
"""... and of at least this finder confidence, so that it replaces the other
passes' boxes or adds its own only where it is sure."""
ZOOM_TILE_LIMIT = 128
"""The zoomed pass keeps tile boxes shorter than this many pixels of its own
input: larger ones are the base pass's to find, and there the zoomed pass
boxes parts of big tiles."""


class ModelError(ValueError):
    """A model that is missing, unreadable or trained on other labels."""


def _offline() -> None:
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


FINDER_NAMES = ("tile", "card")
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


def check_zoom(zoom: float) -> float:
    """``zoom`` if it is a usable second-pass factor, else ValueError."""
    if not 1.0 <= zoom <= MAX_ZOOM:
        raise ValueError(f"zoom must be from 1 (no second pass) to {MAX_ZOOM:g}, not {zoom!r}")
    return float(zoom)


def check_card_shrink(shrink: float) -> float:
    """``shrink`` if it is a usable third-pass fraction, else ValueError."""
    if not MIN_CARD_SHRINK <= shrink <= 1.0:
        raise ValueError(f"card shrink must be from {MIN_CARD_SHRINK:g} to 1 (no third "
                         f"pass), not {shrink!r}")
    return float(shrink)


def large_card_boxes(shrunk: Detections, min_side: float = SHRUNK_CARD_MIN_SIDE,
                     min_confidence: float = SHRUNK_CARD_MIN_CONFIDENCE) -> Detections:
    """The shrunk pass's card-index boxes worth joining to the other passes' (frame
    pixels): at least ``min_side`` across and ``min_confidence`` sure."""
    if len(shrunk) == 0:
        return shrunk
    sides = np.minimum(shrunk.boxes[:, 2] - shrunk.boxes[:, 0],
                       shrunk.boxes[:, 3] - shrunk.boxes[:, 1])
    return shrunk[(np.asarray(shrunk.kinds) == "card") & (sides >= min_side)
                  & (shrunk.confidences >= min_confidence)]


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
    labels, kinds = [], []
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
                      tuple(kind for kind, k in zip(kinds, keep, strict=True) if k),  # type: ignore[arg-type]
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
        _offline()
        try:
            from ultralytics import YOLO
        except ImportError:
            raise ModelError(
                "a .pt model needs the 'train' extra: pip install 'tabletop[train]'") from None
        try:
            self.yolo = YOLO(str(path), task="detect")
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


class Detector:
    """A loaded model: ``detector(image_bgr) -> Detections`` in the image's pixels,
    with each item's ``alternatives`` when a reader named it (a two-stage model).

    ``views``: how many nudged crops the reader of a two-stage model averages per
    box (:data:`vision.reader.VIEW_SHIFTS`), at that many times the reader's cost.
    ``zoom``: the second finder pass's input size as a multiple of ``imgsz``
    (None for :data:`DEFAULT_ZOOM`; 1 for one pass only, and always 1 for an ONNX model
    exported with a fixed input size).
    ``card_turns``: how many turns of each card index's crop the reader averages
    (None for :data:`vision.reader.DEFAULT_CARD_TURNS`; 1, 2 or 4).
    ``card_scorer``: judge faint card-index boxes by the model's card scorer
    (``NAME.scorer.json``, :mod:`vision.scoring`) when it has one.  Off by default:
    it gained on rendered sets but lost real card indices (models/README.md).
    ``card_finder``: how the boxes of a second finder trained for card indices
    (:func:`card_finder_path`) join the finder's (:data:`CARD_FINDER_WAYS`; None for
    :data:`DEFAULT_CARD_FINDER`, or ``off`` when the model has none).  It runs only
    on frames where the finder boxed a card index, so tile-only tables neither pay
    for it nor get its false card boxes.
    ``card_shrink``: the card finder's third pass's input size as a fraction of
    ``imgsz`` (None for :data:`DEFAULT_CARD_SHRINK`; 1 for none, as always for an
    ONNX model exported with a fixed input size); its large, sure card-index boxes
    (:func:`large_card_boxes`) join the others by non-maximum suppression.
    ``card_reader``: ``on`` to name card-index boxes with the model's card reader
    (:func:`card_reader_path`, a reader fine-tuned on card indices alone), ``off`` to
    name them with the reader that names tiles (None: ``on`` when the model has one).
    """

    def __init__(self, path: str | Path | None = None, imgsz: int | None = None,
                 confidence: float = DEFAULT_CONFIDENCE, device: str | None = None,
                 views: int = 1, zoom: float | None = None,
                 card_turns: int | None = None, card_scorer: bool = False,
                 card_finder: str | None = None, card_reader: str | None = None,
                 card_shrink: float | None = None) -> None:
        self.path = Path(path) if path is not None else default_model()
        if not self.path.is_file():
            raise ModelError(f"model file {str(self.path)!r} does not exist")
        self.confidence = confidence
        self.device = device
        from vision.reader import DEFAULT_CARD_TURNS, check_card_turns, check_views

        self.views = check_views(views)
        self.card_turns = check_card_turns(DEFAULT_CARD_TURNS if card_turns is None
                                           else card_turns)
        self.zoom = check_zoom(DEFAULT_ZOOM if zoom is None else zoom)
        self.card_shrink = check_card_shrink(DEFAULT_CARD_SHRINK if card_shrink is None
                                             else card_shrink)
        self.use_scorer = card_scorer
        self._card_reader_way = None if card_reader is None else check_card_reader(card_reader)
        self._fixed_input = False
        if self.path.suffix == ".onnx":
            self.backend = "onnxruntime"
            self._load_onnx(imgsz)
        elif self.path.suffix == ".pt":
            self.backend = "ultralytics"
            self._load_ultralytics(imgsz)
        else:
            raise ModelError(f"model {str(self.path)!r}: want a .pt or .onnx file")
        self._load_card_finder(card_finder)

    def _load_ultralytics(self, imgsz: int | None) -> None:
        self._finder: OnnxFinder | UltralyticsFinder = UltralyticsFinder(self.path, self.device)
        self.classes = len(self._finder.names)
        self._load_reader(_check_names(self._finder.names, self.path))
        self.imgsz = int(imgsz or self._finder.imgsz or DEFAULT_IMGSZ)

    def _load_onnx(self, imgsz: int | None) -> None:
        finder = OnnxFinder(self.path)
        self._finder = finder
        self.classes = len(finder.names) if finder.names is not None else len(CLASS_NAMES)
        self._load_reader(_check_names(finder.names, self.path) if finder.names is not None
                          else False)
        self._fixed_input = finder.fixed_input is not None
        self.imgsz = int(finder.fixed_input or imgsz or finder.imgsz or DEFAULT_IMGSZ)

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
                             else UltralyticsFinder(path, self.device))
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

    def card_finder_boxes(self, image: npt.NDArray[np.uint8]) -> Detections:
        """The card finder's own card-index boxes, its passes merged as the finder's
        are, whether or not the first finder saw a card index (:meth:`find` runs it
        only where it did): every box a card reader could be handed on such a frame,
        false alarms on tiles included.  A model without a card finder has none."""
        if self._card_finder is None:
            return Detections.empty()
        return self._passes(image, self._card_finder_pass)

    @property
    def shrunk_imgsz(self) -> int | None:
        """The card finder's third pass's input size, or None when there is none."""
        if self._card_finder is None or self.card_shrink == 1.0 or self._fixed_input:
            return None
        return int(round(self.imgsz * self.card_shrink / 32) * 32)

    # --- the reader of a two-stage model ----------------------------------------------
    def _load_reader(self, two_stage: bool) -> None:
        self.reader: Any = None
        self.card_reader: Any = None
        self.scorer: Any = None
        if not two_stage:
            if self._card_reader_way == "on":
                raise ModelError(f"{str(self.path)!r} is a one-stage model; a card reader "
                                 "works beside a two-stage finder only")
            self.card_reader_way = "off"
            return
        path = reader_path(self.path)
        if not path.is_file():
            raise ModelError(f"{str(self.path)!r} is a two-stage finder, but its reader "
                             f"{str(path)!r} is missing")
        from vision.reader import Reader

        try:
            self.reader = Reader(path)
        except Exception as error:
            raise ModelError(f"cannot load reader {str(path)!r}: {error}") from None
        self._load_card_reader()
        from vision.scoring import CardScorer, ScorerError, scorer_path

        if self.use_scorer and scorer_path(self.path).is_file():
            try:
                self.scorer = CardScorer.load(scorer_path(self.path))
            except ScorerError as error:
                raise ModelError(str(error)) from None

    def _load_card_reader(self) -> None:
        from vision.reader import Reader

        path = card_reader_path(self.path)
        way = self._card_reader_way or ("on" if path.is_file() else "off")
        self.card_reader_way = way
        if way == "off":
            return
        if not path.is_file():
            raise ModelError(f"card reader {str(path)!r} is missing (or pass "
                             "--card-reader off)")
        try:
            self.card_reader = Reader(path)
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
        if self.card_reader is None:
            return self.reader.probabilities(  # type: ignore[no-any-return]
                image, found.boxes, kinds, self.views, self.card_turns, shifts)
        is_card = np.array([kind == "card" for kind in kinds])
        from vision.reader import READER_CLASSES

        probabilities = np.zeros((len(kinds), len(READER_CLASSES)))
        for reader, rows in ((self.reader, ~is_card), (self.card_reader, is_card)):
            if rows.any():
                probabilities[rows] = reader.probabilities(
                    image, found.boxes[rows], [k for k, r in zip(kinds, rows, strict=True)
                                               if r], self.views, self.card_turns, shifts)
        return probabilities

    def _read(self, image: npt.NDArray[np.uint8], found: Detections) -> Detections:
        """Name every found box (:meth:`named`)."""
        if len(found) == 0:
            return found
        return self.named(found, self.probabilities(image, found), image.shape[:2])

    def named(self, found: Detections, probabilities: npt.NDArray[np.float64],
              frame_shape: tuple[int, ...]) -> Detections:
        """The found boxes named by their reader ``probabilities``; those the reader calls
        ``none`` dropped.  The confidence is the finder's times the reader's, and must
        pass the same threshold as the finder's alone; with a card scorer, a card
        index's confidence is its score (:mod:`vision.scoring`) and it keeps its best
        label.  Each box's alternatives are the reader's alone
        (:func:`vision.reader.alternatives`), without the finder's confidence."""
        if len(found) == 0:
            return found
        from vision.reader import alternatives, decide

        kinds = list(found.kinds)
        labels, scores = decide(probabilities, kinds)
        confidences = found.confidences * scores
        keep = np.array([label is not None for label in labels]) & (
            confidences >= self.confidence)
        cards = np.flatnonzero([kind == "card" for kind in kinds])
        if self.scorer is not None and len(cards):
            from vision.scoring import best_labels, card_features

            card_labels, _ = best_labels(probabilities[cards], [kinds[i] for i in cards])
            card_confidences = self.scorer(
                card_features(found[cards], probabilities[cards], frame_shape[:2]),
                DEFAULT_CONFIDENCE)
            for i, label in zip(cards, card_labels, strict=True):
                labels[i] = label
            confidences[cards] = card_confidences
            keep[cards] = card_confidences >= self.confidence
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
                    spot = Detections(shifted[best][None], ("JK",), (kind,),  # type: ignore[arg-type]
                                      [max(float(seen.confidences[best]), LOOK_AGAIN_PRIOR)])
            found.append(spot)
        if not found:
            return Detections.empty()
        return self._read(image, Detections.concatenate(found))

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
        if self.zoom == 1.0 or self._fixed_input:
            return None
        return int(round(self.imgsz * self.zoom / 32) * 32)

    def find(self, image: npt.NDArray[np.uint8]) -> Detections:
        """The first stage's boxes (a one-stage model's final ones), both passes
        merged, the card finder's joined where it runs."""
        found = self._passes(image, self._pass)
        if self._card_finder is None or "card" not in found.kinds:
            return found
        cards = self.card_finder_boxes(image)
        if self.card_finder_way == "replace":
            joined = Detections.concatenate([found[np.asarray(found.kinds) == "tile"], cards])
        else:
            joined = merge_boxes([found, cards])
        shrunk_size = self.shrunk_imgsz
        if shrunk_size is None:
            return joined
        large = large_card_boxes(self._card_finder_pass(image, shrunk_size))
        return merge_boxes([joined, large]) if len(large) else joined

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
                cards = self._passes(region, self._card_finder_pass, frame_long)
                if self.card_finder_way == "replace":
                    found = Detections.concatenate(
                        [found[np.asarray(found.kinds) == "tile"], cards])
                else:
                    found = merge_boxes([found, cards])
                if self.shrunk_imgsz is not None:
                    size = max(32, round(max(region.shape[:2]) * self.shrunk_imgsz
                                         / frame_long))
                    large = large_card_boxes(self._card_finder_pass(region, size))
                    found = merge_boxes([found, large]) if len(large) else found
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
                frame_long: int | None = None) -> Detections:
        """A finder's pass at the base size and, with a zoom, its zoomed pass, merged.
        ``frame_long``: the long side of the frame ``image`` is a region of (None: it is
        the frame); the passes run at the frame's scales."""
        long_side = max(image.shape[:2])
        share = 1.0 if frame_long is None else long_side / frame_long
        found = run(image, max(32, round(self.imgsz * share)))
        zoomed_size = self.zoom_imgsz
        if zoomed_size is None:
            return found
        zoomed_size = max(32, round(zoomed_size * share))
        h, w = image.shape[:2]
        return merge_zoomed(found, run(image, zoomed_size),
                            min(zoomed_size / w, zoomed_size / h))

    def _pass(self, image: npt.NDArray[np.uint8], size: int) -> Detections:
        """One finder pass with the frame's long side at ``size``."""
        return self._finder(image, size, self._floors(), self.reader is not None)

    def _floors(self) -> npt.NDArray[np.float64]:
        """The least finder confidence kept, per class: the threshold, but a card
        scorer's floor for card indices (it judges the faint ones itself)."""
        floors = np.full(self.classes, self.confidence)
        if self.scorer is not None:
            floors[FINDER_NAMES.index("card")] = min(self.confidence,
                                                     self.scorer.finder_floor)
        return floors


FINDER_YAML = Path(__file__).resolve().parent / "models" / "finder.yaml"


MIN_CROPPED_SHARE = 0.6
"""An item cut by a finder crop stays labelled when this much of its box is inside."""


def kind_dataset(data: Path, out: Path, scale: float = 1.0, crop: int | None = None,
                 seed: int = 0) -> Path:
    """A copy of a rendered set for the finder, labels reduced to the kind (0 tile,
    1 card).  Returns the new folder.

    With ``scale`` and ``crop`` every image is resized by ``scale`` and one
    ``crop``-pixel window of it (at a seeded random place) is kept: ultralytics
    fits each training image into ``imgsz``, so a crop of that size trains the
    finder at ``scale`` of the rendered resolution for the price of ``imgsz``.
    Small card indices stay large enough to find.  Items cut by the window keep
    their label when ``MIN_CROPPED_SHARE`` of their box is inside it.
    """
    import shutil

    from vision.detections import read_jsonl
    from vision.synth.dataset import yolo_lines

    def class_of(_label: str, kind: str) -> int:
        return FINDER_NAMES.index(kind)

    target = out / data.name
    (target / "labels").mkdir(parents=True, exist_ok=True)
    (target / "images").mkdir(parents=True, exist_ok=True)
    records = read_jsonl(data / "annotations.jsonl")
    if crop is None:
        # Hard links, not a linked folder: ultralytics resolves links and would
        # find the item labels beside the real images.
        for image in (data / "images").iterdir():
            copy = target / "images" / image.name
            if not copy.exists():
                try:
                    copy.hardlink_to(image)
                except OSError:
                    shutil.copy2(image, copy)
        for record in records:
            lines = yolo_lines(record.detections, record.width, record.height, class_of)
            stem = Path(record.image).stem
            (target / "labels" / f"{stem}.txt").write_text("".join(f"{x}\n" for x in lines))
        return target
    import cv2

    rng = np.random.default_rng(seed)
    for record in records:
        picture = cv2.imread(str(data / record.image), cv2.IMREAD_COLOR)
        if picture is None:
            raise ValueError(f"cannot read {str(data / record.image)!r}")
        if scale != 1.0:
            picture = cv2.resize(picture, (round(picture.shape[1] * scale),
                                           round(picture.shape[0] * scale)),
                                 interpolation=cv2.INTER_AREA)
        h, w = picture.shape[:2]
        cw, ch = min(crop, w), min(crop, h)
        x0 = int(rng.integers(0, w - cw + 1))
        y0 = int(rng.integers(0, h - ch + 1))
        window = picture[y0 : y0 + ch, x0 : x0 + cw]
        found = record.detections
        shifted = found.boxes * scale - [x0, y0, x0, y0]
        clipped = shifted.copy()
        clipped[:, [0, 2]] = clipped[:, [0, 2]].clip(0, cw)
        clipped[:, [1, 3]] = clipped[:, [1, 3]].clip(0, ch)
        inside = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
        keep = inside >= MIN_CROPPED_SHARE * np.maximum(found.areas * scale * scale, 1e-9)
        chosen = found.filter(keep)
        kept = Detections(clipped[keep], chosen.labels, chosen.kinds, chosen.confidences)
        stem = Path(record.image).stem
        cv2.imwrite(str(target / "images" / f"{stem}.jpg"), window,
                    [cv2.IMWRITE_JPEG_QUALITY, 95])
        lines = yolo_lines(kept, cw, ch, class_of)
        (target / "labels" / f"{stem}.txt").write_text("".join(f"{x}\n" for x in lines))
    return target


def training_yaml(data: Path | Sequence[Path], out: Path, val: Path | None,
                  names: Sequence[str] = CLASS_NAMES) -> Path:
    """A data.yaml with absolute paths (ultralytics resolves relative ones elsewhere);
    several training folders are listed together."""
    import json

    folders = [data] if isinstance(data, Path) else list(data)
    if not folders:
        raise ValueError("no training folder given")
    for folder in (*folders, *( [val] if val else [])):
        if not (folder / "images").is_dir():
            raise ValueError(f"{str(folder)!r} has no images/ folder (make one with "
                             "'tabletop synth')")
    listed = "\n".join(f"  {i}: {json.dumps(name)}" for i, name in enumerate(names))
    train_images = [str(folder / "images") for folder in folders]
    text = (f"train: {json.dumps(train_images[0] if len(folders) == 1 else train_images)}\n"
            f"val: {json.dumps(str((val or folders[0]) / 'images'))}\n"
            f"nc: {len(names)}\nnames:\n{listed}\n")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "data.yaml"
    path.write_text(text)
    return path


def train(data: str | Path | Sequence[str | Path], out: str | Path, epochs: int = 100,
          imgsz: int = 960, model: str | None = None, resume: bool = False,
          val: str | Path | None = None, batch: int = 16, workers: int | None = None,
          device: str | None = None, seed: int = 0, patience: int = 50, finder: bool = False,
          cache: bool = False, scale: float = 1.0, warmup_epochs: float | None = None) -> Path:
    """Train (or resume) a detector; returns the best weights' path.

    ``finder`` trains the two-class finder of the two-stage model (its reader is
    trained by :mod:`vision.reader_training`); otherwise one detector with every
    label.  Starts from an architecture yaml, so no weights are downloaded.
    Flips are off: a mirrored numeral is not a numeral.  Runs on CUDA when it is
    there.  ``data`` may be several rendered folders, trained on together.

    A finder with ``scale`` below 1 trains on ``imgsz`` crops of its images
    resized by ``scale`` (see :func:`kind_dataset`); the frame size it should
    then be run at (the rendered frame's long side times ``scale``) is stamped
    into the weights and read by :class:`Detector` and :func:`export_onnx`.

    ``warmup_epochs`` overrides ultralytics' three epochs of warm-up, whose
    bias learning rate starts at 0.1: right for a net that starts from
    nothing, but in a short fine-tune of trained weights it unsettles their
    confidences (0 or a fraction of an epoch there).
    """
    import json

    _offline()
    try:
        import torch
        from ultralytics import YOLO
    except ImportError:
        raise ModelError(
            "training needs the 'train' extra: pip install 'tabletop[train]'") from None
    if device == "cpu" or (device is None and not torch.cuda.is_available()):
        # ultralytics keeps one core free for its data loader (cpu_count - 1
        # threads), but loads on the main thread on CPU: a 2-core machine at half.
        torch.set_num_threads(os.cpu_count() or 1)
    out = Path(out).resolve()
    run_dir = out / "train"
    last = run_dir / "weights" / "last.pt"
    if resume:
        if not last.is_file():
            raise ModelError(f"nothing to resume: {str(last)!r} does not exist")
        YOLO(str(last)).train(resume=True)
    else:
        data_dirs = [Path(folder).resolve() for folder in
                     ([data] if isinstance(data, (str, Path)) else data)]
        if not data_dirs:
            raise ValueError("no training folder given")
        val_dir = Path(val).resolve() if val is not None else None
        names: Sequence[str] = CLASS_NAMES
        if finder:
            names = FINDER_NAMES
            crop = imgsz if scale != 1.0 else None
            if crop is not None:
                from vision.detections import read_jsonl

                sizes = {(first.width, first.height) for first in
                         (read_jsonl(folder / "annotations.jsonl")[0] for folder in data_dirs)}
                if len(sizes) > 1:
                    raise ValueError(f"the training folders have frames of different sizes "
                                     f"{sorted(sizes)}: a scaled finder runs at one size")
                frame = max(next(iter(sizes))) * scale
                (out / "inference.json").parent.mkdir(parents=True, exist_ok=True)
                (out / "inference.json").write_text(
                    json.dumps({"imgsz": int(round(frame / 32) * 32)}))
            # folder i is cropped with seed + 2i (the validation folder has seed + 1);
            # each gets its own place, as two may share a name
            data_dirs = [kind_dataset(folder, out / "finder-data" / (str(i) if i else ""),
                                      scale, crop, seed + 2 * i)
                         for i, folder in enumerate(data_dirs)]
            val_dir = (kind_dataset(val_dir, out / "finder-data", scale, crop, seed + 1)
                       if val_dir else None)
        data_path = training_yaml(data_dirs, out, val_dir, names)
        device = device or ("0" if torch.cuda.is_available() else "cpu")
        YOLO(model or str(FINDER_YAML if finder else "yolov8n.yaml")).train(
            data=str(data_path), epochs=epochs, imgsz=imgsz, batch=batch, device=device,
            project=str(out), name="train", exist_ok=True, plots=False, seed=seed,
            deterministic=True, fliplr=0.0, flipud=0.0, cache="ram" if cache else False,
            workers=workers if workers is not None else min(8, os.cpu_count() or 1),
            patience=patience, amp=device != "cpu", verbose=True,
            # the last third without mosaic, as the camera sees whole frames
            close_mosaic=min(10, max(1, epochs // 3)),
            **({} if warmup_epochs is None else {"warmup_epochs": warmup_epochs}),
        )
    best = run_dir / "weights" / "best.pt"
    stamp = out / "inference.json"
    if stamp.is_file():
        for weights in (best, last):
            if weights.is_file():
                stamp_inference(weights, int(json.loads(stamp.read_text())["imgsz"]))
    return best if best.is_file() else last


INFERENCE_KEY = "tabletop_inference"
"""Checkpoint entry with the frame size a scaled finder is to be run at."""


def stamp_inference(weights: str | Path, imgsz: int) -> None:
    """Record in a checkpoint the frame size its finder is to be run at."""
    import torch

    checkpoint = torch.load(weights, map_location="cpu", weights_only=False)
    checkpoint[INFERENCE_KEY] = {"imgsz": int(imgsz)}
    torch.save(checkpoint, weights)


def inference_imgsz(model: Any) -> int | None:
    """The stamped inference size of a loaded ultralytics ``YOLO``, if any."""
    checkpoint = getattr(model, "ckpt", None)
    if isinstance(checkpoint, dict) and isinstance(checkpoint.get(INFERENCE_KEY), dict):
        return int(checkpoint[INFERENCE_KEY]["imgsz"])
    return None


def export_onnx(weights: str | Path, imgsz: int | None = None) -> Path:
    """An ONNX copy of trained weights beside them (same stem), for ONNX Runtime.
    A finder's reader is looked up beside the ``.onnx`` as beside the ``.pt``."""
    _offline()
    from ultralytics import YOLO

    weights = Path(weights)
    model = YOLO(str(weights))
    trained = getattr(model.model, "args", {}) or {}
    size = int(imgsz or inference_imgsz(model) or trained.get("imgsz") or DEFAULT_IMGSZ)
    written = Path(model.export(format="onnx", imgsz=size, dynamic=True, simplify=True,
                                opset=17, device="cpu", verbose=False))
    return written
