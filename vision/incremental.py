"""Looking only where the table changed: the detector as a per-frame stage that keeps what it saw.

    looker = IncrementalDetector(Detector())
    for frame in source:
        detections = looker(frame.image)      # every item on the table, every frame

A table is still most of the time and changes in one place at a time, under one
hand.  :class:`IncrementalDetector` gives every frame the whole table's
detections, as :class:`tabletop.vision.detector.Detector` does, but runs the model only
where the picture changed:

* every frame, a small grey copy of it is compared with the previous frame
  (*motion*: a hand moving) and with the *reference*, the picture as it was when
  each place was last looked at (*changed*: something there is not as it was);
* items whose box is partly changed are *hidden* (a hand over them, or they were
  moved or taken away), as the whole frame's pass would not see them either;
* once nothing has moved in a changed region for ``settle_s`` (the hand has left
  it), the region, grown by a margin of about one item (a card index's by about
  its card: the finder boxes an index by the card around it), is looked at: the finder
  runs on that region alone at the frame's own scales
  (:meth:`tabletop.vision.detector.Detector.find_in`); the items there that did not change
  keep their reading, those whose crop changed around them are read again, the
  others are replaced by what the finder found now, and the reference takes the
  region as it is now; the region is looked at on ``looks_per_change`` quiet
  frames, and an item is shown while at least half of the last looks at its place
  found it (the finder misses a tile on one frame and boxes a shadow on another,
  and the every-frame pipeline's tracker smooths that over frames);
* a new item is read once when found and again on each of the next quiet
  frames until it has ``reads`` readings, each of its crop nudged another way;
  its label probabilities are their normalised geometric mean, as the tracker
  fuses frames;
* an item a hand lay over is read afresh, as a new one, once the hand has left
  it, even where the change map shows nothing changed there: a card discarded
  squarely on another, or a joker exchanged in place, changes a small index's
  pixels by less than the map's cells see;
* the whole frame is looked at when nothing was looked at yet, every
  ``refresh_s`` of still, unchanged table (to find what a region's look missed), and when
  the view moved as a whole against the reference, or most of it changed: the
  camera (or the light) moved.

An item the watcher's second look finds (:meth:`look_again`) joins what is kept.
The figures (frames kept up with, CPU, the replay results beside the every-frame
pipeline) are ``bench/live_fps.py``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.vision.crops import CONTEXT
from tabletop.vision.detections import (
    DUPLICATE_OVERLAP,
    EDGE_PX,
    Detections,
    iou_matrix,
    overlap_of_smaller,
    without_duplicates,
)
from tabletop.vision.labels import Kind
from tabletop.vision.palette import ink_features
from tabletop.vision.reader import VIEW_SHIFTS

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
EMPTY_SPOT_IOU = 0.3
"""A second look whose item overlaps its spot less than this found the spot empty."""
SAME_SPOT_IOU = 0.7
"""A spot overlapping one found empty this much is that spot."""


ENCLOSING_AREA = 1.5
"""A tile box this many times the area of a tile box lying within it boxes that tile and
what lies beside it (a shadow, a hand leaving, the next tile)."""


def without_enclosing(found: Detections, overlap: float = 0.8) -> Detections:
    """``found`` less each tile box that holds ``overlap`` of a smaller tile box found with
    it and is :data:`ENCLOSING_AREA` times its size: one tile cannot lie on another, and
    the tighter box is the tile (a region's pass sees a placement's last moments, when a
    box may still take in the hand's edge)."""
    tiles = np.array([kind == "tile" for kind in found.kinds], bool)
    if tiles.sum() < 2:
        return found
    b = found.boxes
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    holds = (overlap_of_smaller(b, b) >= overlap) & (area[:, None] >= ENCLOSING_AREA * area)
    holds &= tiles[:, None] & tiles[None, :]
    np.fill_diagonal(holds, False)
    return found[np.flatnonzero(~holds.any(axis=1))]


def crop_boxes(boxes: FloatArray) -> FloatArray:
    """The squares the reader crops around ``boxes`` (:func:`tabletop.vision.crops.crop`)."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    half = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) * CONTEXT / 2
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    return np.stack([cx - half, cy - half, cx + half, cy + half], axis=1)


def small_grey(image: Image, width: int) -> Image:
    """A blurred grey copy of a BGR ``image``, ``width`` pixels wide, each pixel the mean
    of the pixels it covers.  Halving by linear interpolation is that mean exactly, so
    the frame is halved that way first and only the rest is averaged by area: a 1280x720
    frame costs a third of one area resize."""
    h, w = image.shape[:2]
    height = max(1, round(h * width / w))
    source: npt.NDArray[Any] = image
    if w >= 4 * width:
        source = cv2.resize(image, (w // 2, h // 2), interpolation=cv2.INTER_LINEAR)
    small = cv2.resize(source, (width, height), interpolation=cv2.INTER_AREA)
    grey = small if small.ndim == 2 else cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.GaussianBlur(grey, (5, 5), 0), np.uint8)


@dataclass(frozen=True)
class IncrementalSettings:
    map_width: int = 320
    """Width of the grey copy the changes are measured on (a 1280-pixel frame: 4 pixels
    a cell)."""
    pixel_threshold: int = 18
    """Grey levels a blurred pixel must change by to count (sensor noise is ~2)."""
    motion_threshold: float = 0.004
    """Share of the view's pixels changing from one frame to the next above which a hand
    is moving (as :class:`tabletop.live.reading.StillnessRule` counts it)."""
    settle_s: float = 0.06
    """How long nothing may have moved in a changed region (with its margin) before it is
    looked at: the hand has left it (two frames at 30 a second); the whole view, before
    it is looked at whole."""
    margin_items: float = 1.0
    """How far around a changed region the finder looks, in item lengths."""
    card_context: float = 3.0
    """A card index's length, for the margin, in index lengths: the finder boxes an index
    by the card around it, which a window of an index or two does not show (on a card
    meld of the rendered Rommé video a 70-pixel window over 31-pixel indices found none
    of them, a 140 by 180 one all seven)."""
    default_item_px: float = 64.0
    """The item length assumed before any item was seen."""
    hide_share: float = 0.1
    """An item with this share of its box changed is hidden until it is looked at."""
    reads: int = 5
    """Readings of a new item fused (one when it is found, then one a still frame), each
    of its crop nudged another way (:data:`vision.reader.VIEW_SHIFTS`)."""
    looks_per_change: int = 3
    """Looks at a changed region, on as many quiet frames: what one look found and the
    others did not is dropped, what one missed and the others found is kept."""
    refresh_s: float = 10.0
    """Seconds of looking at regions only, after which a still table is looked at whole."""
    camera_moved_share: float = 0.5
    """Share of the view changed at which the whole frame is looked at afresh (the
    camera or the light moved)."""
    shift_check_share: float = 0.02
    """Share of the view changed at which the view is checked for a shift (the camera
    nudged: on a plain table that changes only the items' edges)."""
    shift_px: float = 1.0
    """A shift of the view by this many change-map pixels or more is the camera moving."""
    same_item_iou: float = 0.5
    """A box overlapping a kept item this much (same kind) is that item, as is one
    sharing :data:`vision.detections.DUPLICATE_OVERLAP` of the smaller box with it."""


@dataclass
class _Item:
    box: FloatArray
    kind: Kind
    finder_confidence: float
    log_sum: FloatArray | None
    """Summed log-probabilities of its readings (None: taken from a second look, read
    already)."""
    reads: int
    named: Detections
    """The item as the detector names it from the fused reading (empty: ``none``)."""
    read_frame: int = -1
    """The frame it was last read in (a frame is read once)."""
    hits: tuple[bool, ...] = (True,)
    """Whether each of the last looks at its place found it: it is shown while at least
    half of them did (a box one look alone found is the finder's flicker)."""
    ink: FloatArray | None = None
    """A tile's ink (:func:`tabletop.vision.palette.ink_features`), measured when it was
    first read; None where none was measured (a card index, a blank)."""
    covered: bool = False
    """A hand lay over it since it was last read: it is read afresh once the hand has
    left, even where the picture there looks as before at the change map's scale (a
    card discarded squarely on another, a joker exchanged in place)."""


def _fused(item: _Item) -> FloatArray:
    """An item's readings as one distribution: the normalised geometric mean."""
    assert item.log_sum is not None
    mean = item.log_sum / item.reads
    fused = np.exp(mean - mean.max())
    return fused / fused.sum()  # type: ignore[no-any-return]


@dataclass
class LookCounts:
    """What the incremental detector did so far (``bench/live_fps.py`` reports it)."""

    frames: int = 0
    region_looks: int = 0
    whole_looks: int = 0
    region_pixels: int = 0
    """Frame pixels of the regions looked at, together."""
    reads: int = 0
    """Item crops read."""
    uncovered: int = 0
    """Times an item a hand had covered was read afresh."""
    whole_reasons: dict[str, int] = field(default_factory=dict)


class IncrementalDetector:
    """``looker(image) -> Detections`` for every frame of one camera (see the module)."""

    def __init__(self, detector: Any, settings: IncrementalSettings | None = None) -> None:
        """``detector``: a two-stage :class:`tabletop.vision.detector.Detector` (``find_in``,
        ``probabilities``, ``named``, ``look_again``).  Time is the frames' own, fed by
        ``set_time`` (without it, a count of frames at 30 a second), so a replay's
        decisions do not depend on how fast it runs."""
        self.detector = detector
        self.settings = settings or IncrementalSettings()
        self.counts = LookCounts()
        self._items: list[_Item] = []
        self._reference: Image | None = None
        self._previous: Image | None = None
        self._moved_at: FloatArray = np.zeros((0, 0))
        """When each change-map pixel last moved (seconds)."""
        self._still_since = 0.0
        """Since when the view as a whole has been without motion."""
        self._t: float | None = None
        self._last_whole_t = -math.inf
        self._shape: tuple[int, int] | None = None
        self._scale = 1.0
        self._emitted: Detections | None = None
        self._hidden_key: bytes | None = None
        self._unsettled = False
        self._again: list[tuple[tuple[float, float, float, float], int, int]] = []
        """Regions to look at again: (rect, looks left, the frame of the last look)."""
        self._empty_spots: list[tuple[FloatArray, str]] = []
        """Spots a second look found empty, while their place has not changed."""

    @property
    def small_indices(self) -> Sequence[float]:
        """The sizes of the last card indices the detector left unnamed as too small
        (:attr:`tabletop.vision.detector.Detector.small_indices`)."""
        return tuple(getattr(self.detector, "small_indices", ()))

    # --- time ----------------------------------------------------------------------
    def set_time(self, t: float) -> None:
        """The coming frame's time (video or grab time, seconds)."""
        self._t = float(t)

    def _now(self) -> float:
        if self._t is not None:
            return self._t
        return self.counts.frames / 30.0

    # --- the stage -----------------------------------------------------------------
    def __call__(self, image: Image) -> Detections:
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"want a BGR image of shape (H, W, 3), not {image.shape}")
        s = self.settings
        self.counts.frames += 1
        now = self._now()
        small = self._small(image)
        if self._reference is None or self._reference.shape != small.shape:
            self._items = []
            self._look_whole(image, small, now, "first frame")
            self._previous = small
            self._moved_at = np.full(small.shape, -np.inf)
            self._still_since = now
            return self._emit(np.zeros(small.shape, bool))
        moving = cv2.absdiff(small, self._previous) > s.pixel_threshold  # type: ignore[arg-type]
        self._previous = small
        self._moved_at[moving] = now
        if float(moving.mean()) >= s.motion_threshold:
            self._still_since = now
        changed = self._changed(small)
        if now - self._still_since >= s.settle_s - 1e-9:
            share = float(changed.mean())
            if share >= s.camera_moved_share or (
                    share >= s.shift_check_share and self._shifted(small)):
                self._items, self._empty_spots, self._again = [], [], []
                self._look_whole(image, small, now, "camera moved")
                changed[:] = False
            elif now - self._last_whole_t >= s.refresh_s and not changed.any():
                self._look_whole(image, small, now, "refresh", changed)
                changed[:] = False
        looked = False
        if changed.any():
            for rect in self._regions(changed):
                if self._quiet(rect, now):
                    self._look(image, small, rect, changed)
                    self._again.append((rect, s.looks_per_change - 1, self.counts.frames))
                    looked = True
        again = []
        for rect, left, frame in self._again:
            if frame == self.counts.frames or not self._quiet(rect, now):
                again.append((rect, left, frame))
                continue
            self._look(image, small, rect, changed)
            looked = True
            if left > 1:
                again.append((rect, left - 1, self.counts.frames))
        self._again = again
        if looked:
            changed = self._changed(small)
        self._read_again(image, changed, now)
        self._unsettled = bool(changed.any() or self._again)
        return self._emit(changed)

    def settling(self) -> bool:
        """Whether part of the last frame changed and was not looked at yet (a hand still
        moving there), or a changed region waits for its next look: what the frame gave
        is not the table yet, and the table is not to be judged."""
        return self._unsettled

    def _quiet(self, rect: Sequence[float], now: float) -> bool:
        """Nothing moved in ``rect`` (frame pixels) for ``settle_s``: the hand has left it."""
        x1, y1, x2, y2 = (max(0.0, v / self._scale) for v in rect)
        area = self._moved_at[int(y1):math.ceil(y2), int(x1):math.ceil(x2)]
        return not area.size or now - float(area.max()) >= self.settings.settle_s - 1e-9

    def look_again(self, image: Image, boxes: Any, kinds: Sequence[str]) -> Detections:
        """The detector's second look at spots the watcher names; what it finds is kept
        like every other item (and so no spot is looked at twice for one item), and a
        spot where it found nothing is not looked at again while its place does not
        change."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        ask = [i for i, (box, kind) in enumerate(zip(boxes, kinds, strict=True))
               if not self._known_empty(box, kind)]
        if not ask:
            return Detections.empty()
        found = self.detector.look_again(image, boxes[ask], [kinds[i] for i in ask])
        for i in ask:
            if not len(found) or iou_matrix(boxes[i][None], found.boxes).max() < EMPTY_SPOT_IOU:
                self._empty_spots.append((boxes[i].copy(), kinds[i]))
        if len(found):
            kept = [item.box for item in self._items]
            same = (self._same_items(found.boxes, np.array(kept)) if kept
                    else np.zeros((len(found), 0), bool))
            for i in range(len(found)):
                matched = [int(j) for j in np.flatnonzero(same[i])] if same.shape[1] else []
                if matched and not any(len(self._items[j].named) for j in matched):
                    # the region looks boxed it but read no name there; the second look,
                    # closer, names it: else it stays unshown, the watcher's spot on it
                    # empty, and it is looked at again every frame
                    old = self._items[matched[0]]
                    self._items[matched[0]] = _Item(
                        found.boxes[i].copy(), found.kinds[i], float(found.confidences[i]),
                        None, self.settings.reads, found[[i]], old.read_frame,
                        (*old.hits, True)[-self.settings.looks_per_change:])
                    continue
                if matched:
                    # a kept item the last region looks missed (so not shown) that this
                    # look found counts it a hit, as a region look would: else it stays
                    # hidden, the watcher's spot on it stays empty and is looked at again
                    # every frame
                    for j in matched:
                        item = self._items[j]
                        item.hits = (*item.hits, True)[-self.settings.looks_per_change:]
                    continue
                self._items.append(_Item(found.boxes[i].copy(), found.kinds[i],
                                         float(found.confidences[i]), None,
                                         self.settings.reads, found[[i]]))
            self._emitted = None
        return found  # type: ignore[no-any-return]

    def _known_empty(self, box: FloatArray, kind: str) -> bool:
        return any(k == kind and iou_matrix(box[None], spot[None])[0, 0] >= SAME_SPOT_IOU
                   for spot, k in self._empty_spots)

    # --- change maps -----------------------------------------------------------------
    def _small(self, image: Image) -> Image:
        h, w = image.shape[:2]
        width = min(self.settings.map_width, w)
        self._scale = w / width
        self._shape = (h, w)
        return small_grey(image, width)

    def _changed(self, small: Image) -> npt.NDArray[np.bool_]:
        assert self._reference is not None
        changed = (cv2.absdiff(small, self._reference) > self.settings.pixel_threshold
                   ).astype(np.uint8)
        # single pixels are noise; what a hand or an item changes is a patch
        opened = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
        return np.asarray(opened, bool)

    def _shifted(self, small: Image) -> bool:
        """Whether the view as a whole moved against the reference (phase correlation)."""
        assert self._reference is not None
        (dx, dy), response = cv2.phaseCorrelate(self._reference.astype(np.float32),
                                                small.astype(np.float32))
        return bool(response >= 0.2 and math.hypot(dx, dy) >= self.settings.shift_px)

    def _item_px(self) -> float:
        if not self._items:
            return self.settings.default_item_px
        context = self.settings.card_context
        sides = [float(max(it.box[2] - it.box[0], it.box[3] - it.box[1]))
                 * (context if it.kind == "card" else 1.0) for it in self._items]
        return float(np.median(sides))

    def _regions(self, changed: npt.NDArray[np.bool_]) -> list[tuple[float, float, float, float]]:
        """The changed places as frame rectangles grown by the margin, overlapping ones
        joined."""
        assert self._shape is not None
        h, w = self._shape
        margin = self.settings.margin_items * self._item_px()
        count, _, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8),
                                                              connectivity=8)
        rects = []
        for x, y, cw, ch, _area in stats[1:count]:
            rects.append([max(0.0, x * self._scale - margin), max(0.0, y * self._scale - margin),
                          min(float(w), (x + cw) * self._scale + margin),
                          min(float(h), (y + ch) * self._scale + margin)])
        joined = True
        while joined and len(rects) > 1:
            joined = False
            for i in range(len(rects)):
                for j in range(i + 1, len(rects)):
                    a, b = rects[i], rects[j]
                    if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                        rects[i] = [min(a[0], b[0]), min(a[1], b[1]),
                                    max(a[2], b[2]), max(a[3], b[3])]
                        del rects[j]
                        joined = True
                        break
                if joined:
                    break
        return [(r[0], r[1], r[2], r[3]) for r in rects]

    def _changed_share(self, boxes: FloatArray, changed: npt.NDArray[np.bool_]) -> FloatArray:
        """Each box's share of changed map pixels."""
        out = np.zeros(len(boxes))
        if not changed.any():
            return out
        mh, mw = changed.shape
        for i, (x1, y1, x2, y2) in enumerate(boxes / self._scale):
            a, b = int(max(0, math.floor(x1))), int(min(mw, math.ceil(x2)))
            c, d = int(max(0, math.floor(y1))), int(min(mh, math.ceil(y2)))
            if b > a and d > c:
                out[i] = float(changed[c:d, a:b].mean())
        return out

    # --- looking -------------------------------------------------------------------
    def _look_whole(self, image: Image, small: Image, now: float, reason: str,
                    changed: npt.NDArray[np.bool_] | None = None) -> None:
        assert self._shape is not None
        h, w = self._shape
        self.counts.whole_looks += 1
        self.counts.whole_reasons[reason] = self.counts.whole_reasons.get(reason, 0) + 1
        self._last_whole_t = now
        if changed is None:
            changed = np.zeros(small.shape, bool)
        self._look(image, small, (0.0, 0.0, float(w), float(h)), changed, whole=True)

    def _look(self, image: Image, small: Image, rect: tuple[float, float, float, float],
              changed: npt.NDArray[np.bool_], whole: bool = False) -> None:
        """Run the finder on ``rect``; keep the items there that did not change, take the
        finder's boxes for the rest, and make the region the reference."""
        s = self.settings
        x1, y1, x2, y2 = rect
        if not whole:
            self.counts.region_looks += 1
        self.counts.region_pixels += int((x2 - x1) * (y2 - y1))
        found = without_enclosing(self.detector.find_in(image, rect))
        boxes = np.array([it.box for it in self._items]).reshape(-1, 4)
        inside = ((boxes[:, 0] < x2) & (boxes[:, 2] > x1) & (boxes[:, 1] < y2)
                  & (boxes[:, 3] > y1)) if len(boxes) else np.zeros(0, bool)
        touched = self._changed_share(boxes, changed) > 0.0 if len(boxes) else inside
        seen_near = (self._changed_share(crop_boxes(boxes), changed) > 0.0 if len(boxes)
                     else inside)
        # an item of the region that did not change stays as it was read; one that did
        # is gone, and the finder's box there is a new item; one whose crop (the reader
        # sees a little around it) changed is read again
        for item, near, gone in zip(self._items, seen_near, touched, strict=True):
            if near and not gone:
                item.log_sum, item.reads = np.zeros(0), 0
        self._items = [it for it, gone in zip(self._items, inside & touched, strict=True)
                       if not gone]
        if self._empty_spots:
            spots = np.array([spot for spot, _ in self._empty_spots])
            moved = self._changed_share(spots, changed) > 0.0
            self._empty_spots = [one for one, gone in zip(self._empty_spots, moved, strict=True)
                                 if not gone]
        kept = np.array([it.box for it in self._items]).reshape(-1, 4)
        if len(kept):
            # each kept item wholly inside the region: did this look find it too?
            within = ((kept[:, 0] > x1 + EDGE_PX) & (kept[:, 1] > y1 + EDGE_PX)
                      & (kept[:, 2] < x2 - EDGE_PX) & (kept[:, 3] < y2 - EDGE_PX))
            same = np.zeros((len(found), len(kept)), bool)
            if len(found):
                same = self._same_items(found.boxes, kept) & np.array(
                    [[f == it.kind for it in self._items] for f in found.kinds])
            # a kept box the reader called no item does not hold its place against a box
            # found now (one box over two tiles, then each tile boxed)
            named = np.array([len(it.named) > 0 for it in self._items])
            replaced = same[:, ~named].any(axis=0) if len(found) else np.zeros(0, bool)
            same[:, ~named] = False
            for item, is_within, hit in zip(self._items, within,
                                            np.asarray(same.any(axis=0), bool), strict=True):
                if is_within:
                    item.hits = (*item.hits, bool(hit))[-s.looks_per_change:]
            if replaced.any():
                gone = {id(it) for it, r in zip([it for it, n in zip(self._items, named,
                                                                      strict=True) if not n],
                                                 np.asarray(replaced, bool), strict=True) if r}
                self._items = [it for it in self._items if id(it) not in gone]
            found = found[np.flatnonzero(~same.any(axis=1))] if len(found) else found
        if len(found):
            self._add(image, found)
        # the reference takes the region as it is now
        sx1, sy1 = int(x1 / self._scale), int(y1 / self._scale)
        sx2, sy2 = math.ceil(x2 / self._scale), math.ceil(y2 / self._scale)
        if self._reference is None or self._reference.shape != small.shape:
            self._reference = small.copy()
        else:
            self._reference[sy1:sy2, sx1:sx2] = small[sy1:sy2, sx1:sx2]
        self._emitted = None

    def _same_items(self, a: FloatArray, b: FloatArray) -> npt.NDArray[np.bool_]:
        """Which boxes of ``a`` and ``b`` are one item: overlapping by ``same_item_iou``,
        or one lying mostly inside the other (a small card index boxed a little larger
        by one pass than by another)."""
        return ((iou_matrix(a, b) >= self.settings.same_item_iou)
                | (overlap_of_smaller(a, b) >= DUPLICATE_OVERLAP))

    def _add(self, image: Image, found: Detections) -> None:
        probabilities = self.detector.probabilities(image, found)
        self.counts.reads += len(found)
        logs = np.log(np.maximum(probabilities, 1e-6))
        inks: list[FloatArray | None] = [None] * len(found)
        tiles = np.flatnonzero([kind == "tile" for kind in found.kinds])
        if self.detector.palette is not None and len(tiles):
            features, measured = ink_features(image, found.boxes[tiles])
            for row, feature, ok in zip(tiles, features, measured, strict=True):
                inks[row] = feature if ok else None
        for i in range(len(found)):
            item = _Item(found.boxes[i].copy(), found.kinds[i], float(found.confidences[i]),
                         logs[i].copy(), 1, Detections.empty(), self.counts.frames,
                         ink=inks[i])
            item.named = self._name(item)
            self._items.append(item)

    def _read_again(self, image: Image, changed: npt.NDArray[np.bool_], now: float) -> None:
        """One more reading of each item read fewer than ``reads`` times whose crop is
        unchanged and quiet, all in one batch; an item a hand covered is read afresh."""
        todo = [it for it in self._items if it.log_sum is not None and it.read_frame
                != self.counts.frames and (it.reads < self.settings.reads or it.covered)]
        if todo:
            crops_ = crop_boxes(np.array([it.box for it in todo]))
            clear = self._changed_share(crops_, changed) == 0.0
            todo = [it for it, box, ok in zip(todo, crops_, clear, strict=True)
                    if ok and self._quiet(box, now)]
        for item in todo:
            if item.covered:
                item.covered, item.reads = False, 0  # its readings start again now
                self.counts.uncovered += 1
        if not todo:
            return
        # each reading of an item is of its crop nudged another way (the reader's views),
        # as the whole frame's pass boxes a lying item a little differently each frame
        views = [VIEW_SHIFTS[it.reads % len(VIEW_SHIFTS)] for it in todo]
        logs = np.zeros((len(todo), 0))
        for view in sorted(set(views)):
            rows = [i for i, v in enumerate(views) if v == view]
            part = [todo[i] for i in rows]
            found = Detections(np.array([it.box for it in part]), tuple("JK" for _ in part),
                               tuple(it.kind for it in part),
                               np.array([it.finder_confidence for it in part]))
            probabilities = self.detector.probabilities(image, found, shifts=[view])
            if logs.shape[1] == 0:
                logs = np.zeros((len(todo), probabilities.shape[1]))
            logs[rows] = np.log(np.maximum(probabilities, 1e-6))
        self.counts.reads += len(todo)
        for item, row in zip(todo, logs, strict=True):
            assert item.log_sum is not None
            item.log_sum = row if item.reads == 0 else item.log_sum + row
            item.reads += 1
            item.read_frame = self.counts.frames
            item.named = self._name(item)
        self._emitted = None

    def _name(self, item: _Item, probabilities: FloatArray | None = None) -> Detections:
        """The item named by ``probabilities`` (default: its readings fused)."""
        one = Detections(item.box[None], ("JK",), (item.kind,),
                         np.array([item.finder_confidence]))
        fused = _fused(item) if probabilities is None else probabilities
        return self.detector.named(one, fused[None])  # type: ignore[no-any-return]

    def _named_on_this_table(self, items: list[_Item]) -> list[Detections]:
        """Each item as named, its tile colours judged against the inks of every tile
        shown (the detector's palette, :mod:`tabletop.vision.palette`); items whose
        colour that changes are named again."""
        palette = self.detector.palette
        inked = [i for i, it in enumerate(items) if it.ink is not None and it.log_sum is not None]
        if palette is None or not inked:
            return [it.named for it in items]
        probabilities = np.stack([_fused(items[i]) for i in inked])
        features = np.stack([items[i].ink for i in inked])  # type: ignore[misc]
        judged = palette.update_inks(features, np.ones(len(inked), bool), probabilities)
        named = [it.named for it in items]
        for row, i in enumerate(inked):
            if not np.array_equal(judged[row], probabilities[row]):
                named[i] = self._name(items[i], judged[row])
        return named

    # --- what the frame gives ----------------------------------------------------------
    def _emit(self, changed: npt.NDArray[np.bool_]) -> Detections:
        boxes = np.array([it.box for it in self._items]).reshape(-1, 4)
        under = (self._changed_share(boxes, changed) >= self.settings.hide_share
                 if len(boxes) else np.zeros(0, bool))
        for item, covered in zip(self._items, under, strict=True):
            item.covered = item.covered or bool(covered)  # a hand over it now
        shown_at = [i for i, it in enumerate(self._items)
                    if len(it.named) and 2 * sum(it.hits) >= len(it.hits)]
        shown = [self._items[i] for i in shown_at]
        hidden = under[shown_at] if shown_at else np.zeros(0, bool)
        key = hidden.tobytes()
        if self._emitted is not None and key == self._hidden_key:
            return self._emitted
        visible = [it for it, gone in zip(shown, hidden, strict=True) if not gone]
        parts = self._named_on_this_table(visible)
        emitted = without_duplicates(Detections.concatenate(parts)) if parts \
            else Detections.empty()
        self._emitted, self._hidden_key = emitted, key
        return emitted

