"""The seeing half of the live table: frames and detections in, committed snapshots out.

    watcher = TableWatcher(variant, zones, calibration)
    for frame in source:
        snapshot = watcher.update(frame.t, frame.image, detector(frame.image))
        if snapshot is not None:
            game.on_snapshot(snapshot)

Stages: motion in the table region (hands), the tracker (ids and label
evidence), the stillness rule, then, on a still table, table coordinates, zones,
grouping into melds and the rules-helped reading.  A snapshot is returned
only when the still table reads differently from the last one returned.
Without a calibration everything is in image pixels (a camera looking down),
and zones must be given in pixels too; without zones the whole view is the
shared meld area.

Corrections (see :mod:`tabletop.live.corrections`): ``correct(correction)`` names an
item by meld and item index in the last committed table (the shared melds in
table order, then each seat's rows in seat order, as the game's ``table``
event lists them).  Its label is pinned to that physical item, the track it
had at the commit: the pinned label replaces what the track read and wins
over the rules-helped reading, so no later frame brings the misreading back
while the track lives.  When the track is lost (a hand over the tile long enough
for the tracker to drop it), the pin waits up to ``forget_correction_s`` for
a new track at nearly the same place (within ``correction_reach`` of the
item's smaller side) read with the same wrong label (or the right one), and
passes to it.  An item taken away and laid elsewhere is a new item to the
camera and is read afresh.  ``correct`` re-reads the committed table with
the pin at once and returns it as :class:`Corrected`: the corrected snapshot,
and each item of the committed table that now reads differently (the pinned
one first; the rules-helped reading, knowing the pin, may read a neighbour in
its meld anew too), so the game can fix what it remembers of those items
(``live.game.Game.correct_items``) and take the snapshot without waiting for
the next commit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from tabletop.calibration.table import TableCalibration
from tabletop.calibration.zones import Zone, ZoneLayout
from tabletop.engine.items import JOKER, Family, Item, Joker, parse_item
from tabletop.engine.variants import Variant
from tabletop.live.corrections import Correction, CorrectionError
from tabletop.live.decoding import Kept, LegalityCache
from tabletop.live.grouping import (
    Placed,
    group_items,
    loose_corner_partners,
    row_angles,
    rows_in_reading_order,
)
from tabletop.live.permanence import (
    Held,
    is_camera_event,
    looks_otherwise,
    place_patch,
    still_shows,
)
from tabletop.live.reading import MotionMeter, StillnessRule, resolve_labels
from tabletop.live.snapshot import Box, SeenItem, TableSnapshot
from tabletop.live.spots import Spot, gap_spots
from tabletop.live.spots import iou as _overlap
from tabletop.live.stages import SecondLook, Settling
from tabletop.live.tracking import Track, Tracker
from tabletop.vision.detections import Detections, iou_matrix, without_nested
from tabletop.vision.labels import Kind

MISSED_DETECTION_GRACE_S = 0.25
"""An item unseen for less than this does not stop the table counting as still: one
missed detection is the detector's, a hand hides items for longer (and moves)."""

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class WatcherSettings:
    still_s: float = 0.4
    motion_threshold: float = 0.004
    confirm_frames: int = 3
    keep_lost_s: float = 0.6
    min_confidence: float = 0.25
    forget_correction_s: float = 60.0
    """How long a corrected item may stay unseen and still get its correction back when
    an item reappears where it lay (a hand resting over it, a player pondering)."""
    correction_reach: float = 0.5
    """How near, in the item's smaller box side, a reappearing item must lie to be it;
    half a side keeps a neighbour in the same meld (a whole side away) out."""
    look_past_row_ends: bool = True
    """With a second look (:attr:`TableWatcher.look_again`), also look one item past
    both ends of every meld row, not only past a row one short of a meld: a meld's last
    tile the frame's pass missed leaves a legal but wrong meld.  Over the 50 real-photo
    replays of ``bench.replays`` it took the committed states read right from 81 % to
    85 %, at about 25 ms a frame."""
    reread_still_s: float = 0.5
    """A still table whose tracks keep their ids, labels and places (to the pixel) is read
    again after this long only: its reading could change by the shares alone, which move
    slowly once an item lies still, and reading it costs milliseconds a frame."""


LookAgain = Callable[[Image, npt.NDArray[np.float64], list[str]], Detections]
"""``vision.detector.Detector.look_again``: (frame, spot boxes, their kinds) -> items."""
SPOT_LOOKS = 3
"""Empty second looks in a row after which a spot is given up (until the next commit)."""
SPOT_FOUND_IOU = 0.3
"""An item overlapping a spot by this IoU fills it."""
MAX_SPOTS_PER_FRAME = 4
"""Spots looked at again in one frame, at most (each costs a finder pass on its region)."""
HELD_SEEN_IOU = 0.3
"""A live item overlapping a held one by this IoU lies where it lay."""
CUT_STILL_S = 0.2
"""How long nothing may move after a frame that showed much less for it to be the camera
(a hand that came in between two frames moves on within a frame or two)."""
PILE_TOP_MOVED_IOU = 0.5
"""A top discard reading as before, found since the last commit, whose box overlaps its
committed box by less than this is another card (a hand lays a discard up to a tenth of
a card's width and a few degrees off the one under it; an index found again where it
lay overlaps itself by 0.8 or more)."""
PLACE_MEMORY_S = 300.0
"""How long an item's place is remembered after it was last committed."""


@dataclass(frozen=True)
class _Cut:
    """A frame in which most items seen went out of sight at once."""

    t: float
    seen_before: int
    vanished: tuple[Track, ...]


@dataclass(frozen=True)
class _Place:
    """Where a committed item lay and how its place looked then."""

    track: Track
    patch: Image | None
    t: float
    """When it was last committed."""


@dataclass
class _Looked:
    spot: Spot
    misses: int = 0
    """Empty looks in a row."""
    looked: bool = False
    """Looked at (or found filled by the frame's own pass) at least once."""
    found: bool = False
    """The last second look found an item there."""
    found_box: npt.NDArray[np.float64] | None = None
    """Where a second look boxed its item: the detector may keep that item under a box of
    its own that overlaps the spot less, and the spot is filled by it all the same (else
    it is looked at again every frame)."""

    def filled_by(self, boxes: npt.NDArray[np.float64]) -> bool:
        """Whether an item boxed at one of ``boxes`` (N x 4) fills the spot."""
        if not len(boxes):
            return False
        wanted = [self.spot.box] if self.found_box is None else [self.spot.box, self.found_box]
        return bool((iou_matrix(np.array(wanted), boxes) > SPOT_FOUND_IOU).any())


@dataclass(frozen=True)
class Pin:
    """A label a person gave one physical item: it wins over what the detector read."""

    label: str
    """The right token as the detector would write it (a joker bare: ``JK``)."""
    misread: str
    """What its track read when it was corrected: a new track read so is the same item."""
    who: str
    kind: str
    centre: tuple[float, float]
    """Where the item lies, in image pixels (the tracker's coordinates)."""
    reach: float
    """How far (pixels) from ``centre`` a new track may lie to inherit the pin."""
    lost_since: float | None = None
    """When its track was dropped; None while the track lives."""
    declared: str | None = None
    """What a joker stands for as the person declared it (``JK=R11``), None for any other
    item or a bare joker: the table read from then on carries it, so the game judges the
    meld as the players mean it."""


@dataclass(frozen=True)
class Reread:
    """One item of the committed table that a correction made read differently."""

    meld: int
    """Its meld's index in the table order corrections count in (see :func:`table_melds`)."""
    index: int
    """Its index in that meld."""
    before: Item
    after: Item
    row: tuple[Item, ...]
    """Its meld as read just before this change: the committed reading with the changes
    listed ahead of it applied, so a game applying them in order finds it as given."""


@dataclass(frozen=True)
class Corrected:
    """What :meth:`TableWatcher.correct` did: the table read again with the pin."""

    snapshot: TableSnapshot
    """The corrected table (also the watcher's new ``last``)."""
    before: Item
    """The corrected item as the committed table read it."""
    after: Item
    """The item as the person gave it (a joker bare, as the camera sees one)."""
    changes: tuple[Reread, ...]
    """Every item of the table's melds that reads differently now, the corrected one
    first, then the others in table order; empty when the person confirmed the
    reading."""
    frame: Image | None = None
    """The frame of the committed table the person corrected (None when the watcher was
    fed no frames): with ``box`` and ``kind``, what ``tabletop adapt`` learns from."""
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    """The corrected item's box in that frame (pixels)."""
    kind: Kind = "tile"


@dataclass(frozen=True)
class _Committed:
    """The reading behind the last committed snapshot, kept to resolve corrections."""

    tracks: tuple[Track, ...]
    """Copies of the confirmed tracks as they were (the tracker changes its own)."""
    rows: tuple[tuple[int, ...], ...]
    """Track ids of each meld in table order: shared melds, then each seat's rows."""
    frame: Image | None = None
    """The frame the table was committed at."""
    top_discard: tuple[str, npt.NDArray[np.float64]] | None = None
    """The top discard's label and box (frame pixels) as committed."""
    t: float = 0.0
    """When the table was committed."""


def _pooled(readings: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Readings of one card's corners, each a share per label, as one (their mean)."""
    labels = {label for reading in readings for label in reading}
    return {label: sum(r.get(label, 0.0) for r in readings) / len(readings)
            for label in sorted(labels)}


def _whole_view(width: float, height: float) -> ZoneLayout:
    corners = ((0.0, 0.0), (width, 0.0), (width, height), (0.0, height))
    return ZoneLayout((width, height), (Zone("meld area", "meld", corners),))


class TableWatcher:
    def __init__(self, variant: Variant, zones: ZoneLayout | None = None,
                 calibration: TableCalibration | None = None,
                 settings: WatcherSettings | None = None) -> None:
        self.variant = variant
        self.zones = zones
        self.calibration = calibration
        self.settings = settings or WatcherSettings()
        s = self.settings
        self.tracker = Tracker(confirm_frames=s.confirm_frames, keep_lost_s=s.keep_lost_s)
        region = calibration.table_polygon_in_image() if calibration else None
        self.motion = MotionMeter(region=region)
        self.rule = StillnessRule(still_s=s.still_s, motion_threshold=s.motion_threshold)
        self.problems: tuple[str, ...] = ()
        """What the last committed reading could not make sense of (shown, not hidden)."""
        self._legal = LegalityCache(variant)
        self.last: TableSnapshot | None = None
        self.last_motion = 0.0
        self._pins: dict[int, Pin] = {}
        self._committed: _Committed | None = None
        self.settling: Callable[[], bool] | None = None
        """The detector's word that part of the view changed and was not looked at yet
        (``vision.incremental.IncrementalDetector.settling``): the table is not judged
        before it has looked."""
        self.look_again: LookAgain | None = None
        """The detector's second look at spots where a meld row suggests a missed item
        (``vision.detector.Detector.look_again``); None: no second looks."""
        self._spots: dict[tuple[int, int, str], _Looked] = {}
        self._given_up: set[tuple[int, int, str]] = set()
        self._frame_size: tuple[int, int] | None = None
        self.looks = 0
        """Spots looked at again so far (each look at one spot counts)."""
        self._last_read_key: object = None
        self._last_read_t = float("-inf")
        self._held: dict[int, Held] = {}
        self._places: dict[int, _Place] = {}
        """Each item committed in the last ``PLACE_MEMORY_S``, by track id: its track and
        the picture of its place when it was last committed (an item gone while a hand
        rested over its place is held again once the picture shows it as it was)."""
        self._seen_before: dict[int, Track] = {}
        self._cut: _Cut | None = None
        """A frame that showed much less at once, until the view stays still after it."""
        self._motion_before = 0.0
        self._frame_before: Image | None = None
        self.camera_events: list[str] = []
        """What the camera did that is no move (see :mod:`tabletop.live.permanence`), each
        said once; whoever runs the game takes them (:meth:`take_camera_events`)."""

    def _read_key(self, tracks: Sequence[Track]) -> object:
        """What a still table's reading depends on but the tracks' shares: their ids,
        labels and places, the pins and the spots' looks."""
        return (tuple((tr.track_id, tr.label, *np.rint(tr.box).astype(int).tolist())
                      for tr in tracks),
                tuple(sorted((key, pin.label, pin.declared or "")
                             for key, pin in self._pins.items())),
                tuple((key, looked.looked, looked.found, looked.misses)
                      for key, looked in self._spots.items()),
                tuple(sorted(self._held)))

    def attach(self, detector: object) -> None:
        """Take the detector's second look and its word on settling, where it has them
        (``vision.detector.Detector.look_again``,
        ``vision.incremental.IncrementalDetector.settling``)."""
        self.look_again = detector.look_again if isinstance(detector, SecondLook) else None
        self.settling = detector.settling if isinstance(detector, Settling) else None

    @property
    def pins(self) -> Mapping[int, Pin]:
        """The corrected items by their current track id (read-only)."""
        return MappingProxyType(self._pins)

    def update(self, t: float, frame: Image | None, detections: Detections
               ) -> TableSnapshot | None:
        if self.zones is None:
            if frame is None:
                raise ValueError("without zones the watcher needs the frame to know the view")
            if self.calibration is not None:
                self.zones = _whole_view(*self.calibration.table_mm)
            else:
                self.zones = _whole_view(float(frame.shape[1]), float(frame.shape[0]))
        self.last_motion = self.motion.update(frame)
        if frame is not None:
            self._frame_size = (int(frame.shape[1]), int(frame.shape[0]))
        detections = detections.with_confidence_at_least(self.settings.min_confidence)
        # the variant's own material only: a tile box on a card table (or a card index
        # among tiles) is a false alarm of the finder, which boxes both kinds everywhere
        own: Kind = "tile" if self.variant.family is Family.TILES else "card"
        detections = detections.of_kind(own)
        # one card index boxed twice, the rank alone read as another card, must not become
        # two items on the table (a false meld); the frame loses at most one right label,
        # which the track's evidence over the next frames restores
        detections = without_nested(detections)
        if self.look_again is not None and frame is not None and self._spots:
            detections = self._looked_again(frame, detections)
        self.tracker.update(detections, t)
        self._follow_pins(t)
        if frame is not None:
            self._watch_the_view(t, frame)
        settling = self.settling is not None and self.settling()
        still = self.rule.update(
            t, 1.0 if settling else self.last_motion,
            missing=len(self.tracker.missing(MISSED_DETECTION_GRACE_S)),
            last_change_t=self.tracker.last_activity_t())
        if not still:
            return None
        tracks = self.tracker.confirmed()
        if frame is not None:
            tracks = [*tracks, *self._holding(frame, tracks)]
        key = self._read_key(tracks)
        if (key == self._last_read_key and t - self._last_read_t
                < self.settings.reread_still_s - 1e-9):
            return None  # the same tracks as read a moment ago: the same table
        self._last_read_key, self._last_read_t = key, t
        snapshot, problems, rows, discard_keys = self._read(t, tracks)
        if self._spots_pending(tracks):
            return None  # a gap to look at first: the meld is judged after
        by_key = {tr.track_id: tr for tr in tracks}
        top_track = by_key[discard_keys[-1]] if discard_keys else None
        top = (None if top_track is None
               else (str(snapshot.discards[-1]), top_track.box.copy()))
        if top_track is not None and self._laid_anew(snapshot, top_track.box,
                                                     top_track.first_t):
            snapshot = replace(snapshot, discard_laid_anew=True)
        elif self.last is not None and _content(snapshot) == _content(self.last):
            return None
        self.last, self.problems = snapshot, problems
        self._given_up.clear()  # a new table: its gaps are worth a look again
        self._committed = _Committed(tuple(_copy(tr) for tr in tracks), rows, frame, top, t)
        if frame is not None:
            self._remember_places(t, frame, tracks)
        return snapshot

    def _laid_anew(self, snapshot: TableSnapshot, top_box: npt.NDArray[np.float64],
                   top_found_t: float) -> bool:
        """Whether the top discard reads as at the last commit, on a pile of as many
        cards, but was found since (a track the commit did not know: a card's index
        relabelled when the card over it left is the old one) and its box overlaps the
        committed one by less than :data:`PILE_TOP_MOVED_IOU`: a card laid on
        its twin, or the top card taken from its twin (the game tells which)."""
        committed, last = self._committed, self.last
        if committed is None or committed.top_discard is None or last is None:
            return False
        label, box = committed.top_discard
        if (str(snapshot.discards[-1]) != label or len(snapshot.discards) != len(last.discards)
                or top_found_t <= committed.t):
            return False
        return float(iou_matrix(box[None], top_box[None])[0, 0]) < PILE_TOP_MOVED_IOU

    # --- item permanence (see tabletop.live.permanence) ----------------------------------
    def take_camera_events(self) -> list[str]:
        """The camera events said since the last call (each once)."""
        events, self.camera_events = self.camera_events, []
        return events

    @property
    def held(self) -> Mapping[int, Held]:
        """The committed items kept on the table that the detector no longer finds."""
        return MappingProxyType(self._held)

    def _watch_the_view(self, t: float, frame: Image) -> None:
        """Notice a camera event: most items seen a frame ago gone at once, with no hand
        moving before, the picture changed where they lay, and nothing moving after for a
        moment (a hand that came in between two frames moves on).  The committed ones are
        then held (whatever the picture shows) and the event is said."""
        seen_now = {tr.track_id: tr for tr in self.tracker.confirmed() if tr.last_t == t}
        # the tracker may have dropped them already (a reconnect takes longer than it
        # keeps a lost track): the frame before names them
        vanished = [tr for key, tr in self._seen_before.items() if key not in seen_now]
        seen_before, previous = len(self._seen_before), self._frame_before
        quiet_before = self._motion_before < self.settings.motion_threshold
        self._seen_before, self._motion_before = seen_now, self.last_motion
        self._frame_before = frame
        cut = self._cut
        if cut is not None:
            if self.last_motion >= self.settings.motion_threshold:
                self._cut = None  # something moves: a hand, not the camera
            elif t - cut.t >= CUT_STILL_S - 1e-9:
                self._cut = None
                self._camera_event(cut)
        if (previous is None or not quiet_before
                or not is_camera_event(len(vanished), seen_before)):
            return
        gone = [tr for tr in vanished
                if looks_otherwise(place_patch(previous, tr.box), frame, tr.box)]
        if is_camera_event(len(gone), seen_before):
            self._cut = _Cut(t, seen_before, tuple(vanished))

    def _camera_event(self, cut: _Cut) -> None:
        committed = {seen.track_id for seen in self.last.items} if self.last else set()
        frozen = {tr.track_id: tr for tr in self._committed.tracks} if self._committed else {}
        held = 0
        for track in cut.vanished:
            if track.track_id in committed and track.track_id in frozen:
                self._held[track.track_id] = Held(frozen[track.track_id], None, cut.t)
                held += 1
        self.camera_events.append(
            f"the camera's view changed at once: {len(cut.vanished)} of {cut.seen_before} items"
            " went out of sight with no hand over the table (a reconnected stream, a covered"
            f" lens, a moved camera?); the table is kept as it was ({held} item"
            f"{'s' * (held != 1)} held) until the camera sees it again")

    def _holding(self, frame: Image, live: Sequence[Track]) -> list[Track]:
        """The committed items held on a still table, as their frozen tracks: those
        held before and not let go now, and the items of the last committed table whose
        track is gone while the picture still shows them where they lay (each then
        looked at again before the table is judged)."""
        seen_again = _lie_over(live, [held.track for held in self._held.values()])
        for (key, held), seen in zip(list(self._held.items()), seen_again, strict=True):
            if seen or (not held.by_camera
                        and looks_otherwise(held.patch, frame, held.track.box)):
                del self._held[key]
        # an item that appeared since a camera event and reads as a held one is it, back
        # in view at another place (the camera moved)
        by_camera = [h for h in self._held.values() if h.by_camera]
        for track in live:
            same = next((h for h in by_camera if h.track.kind == track.kind
                         and track.first_t >= h.since
                         and _bare(h.track.label) == _bare(track.label)), None)
            if same is not None:
                by_camera.remove(same)
                del self._held[same.track.track_id]
        alive = {tr.track_id for tr in live}
        gone = [(key, place) for key, place in self._places.items()
                if key not in alive and key not in self._held]
        for (key, place), taken in zip(gone, _lie_over(live, [p.track for _, p in gone]),
                                       strict=True):
            if taken:
                del self._places[key]  # another item lies there now
            elif still_shows(place.patch, frame, place.track.box):
                self._held[key] = Held(place.track, place.patch, self.tracker.t)
                self._look_at(place.track)
        return [held.track for held in self._held.values()]

    def _remember_places(self, t: float, frame: Image, tracks: Sequence[Track]) -> None:
        for track in tracks:
            if track.track_id not in self._held:
                self._places[track.track_id] = _Place(_copy(track),
                                                      place_patch(frame, track.box), t)
        for key, place in list(self._places.items()):
            if t - place.t > PLACE_MEMORY_S:
                del self._places[key]

    def _look_at(self, track: Track) -> None:
        """Have the detector look again where a held item lies, before the table is
        judged (a second look that finds it gives it a live track again)."""
        if self.look_again is None:
            return
        x1, y1, x2, y2 = (float(v) for v in track.box)
        spot = Spot((x1, y1, x2, y2), track.kind)
        key = spot.key()
        if key not in self._spots and key not in self._given_up:
            self._spots[key] = _Looked(spot)

    # --- second looks ------------------------------------------------------------
    def _looked_again(self, frame: Image, detections: Detections) -> Detections:
        """``detections`` with what a second look finds on the spots (see
        :mod:`tabletop.live.spots`) the frame's pass left empty.  Not while a hand moves over
        the table; a spot is given up after :data:`SPOT_LOOKS` empty looks in a row."""
        assert self.look_again is not None
        if self.last_motion >= self.settings.motion_threshold:
            return detections
        boxes = detections.boxes
        todo = []
        for key, looked in self._spots.items():
            if looked.filled_by(boxes):
                looked.looked = True  # the frame's own pass found it this time
            else:
                todo.append((key, looked))
        todo = todo[:MAX_SPOTS_PER_FRAME]
        if not todo:
            return detections
        self.looks += len(todo)
        found = self.look_again(frame, np.array([looked.spot.box for _, looked in todo]),
                                [looked.spot.kind for _, looked in todo])
        for key, looked in todo:
            hits = [box for box in found.boxes if _overlap(looked.spot.box, box) > SPOT_FOUND_IOU]
            looked.looked, looked.found = True, bool(hits)
            if hits:
                looked.found_box = hits[0]
            looked.misses = 0 if hits else looked.misses + 1
            if looked.misses >= SPOT_LOOKS:
                del self._spots[key]
                self._given_up.add(key)
        return Detections.concatenate([detections, found]) if len(found) else detections

    def _spots_pending(self, tracks: Sequence[Track]) -> bool:
        """A spot not looked at yet, or one whose item a second look found but the
        tracker has not confirmed yet: the table is not judged before."""
        boxes = np.array([tr.box for tr in tracks]).reshape(-1, 4)
        for looked in self._spots.values():
            if not looked.looked:
                return True
            if looked.found and not looked.filled_by(boxes):
                return True
        return False

    def _new_spots(self, tracks: Mapping[int, Track], rows: Sequence[Sequence[int]]) -> None:
        """Add the spots the still table's rows suggest (:func:`tabletop.live.spots.gap_spots`),
        except those given up on since the last commit."""
        if self.look_again is None:
            return
        boxes = {key: np.asarray(tr.box, dtype=np.float64) for key, tr in tracks.items()}
        kinds = {key: tr.kind for key, tr in tracks.items()}
        for spot in gap_spots(boxes, kinds, rows, self._frame_size,
                              row_ends=self.settings.look_past_row_ends):
            key = spot.key()
            if key not in self._spots and key not in self._given_up:
                self._spots[key] = _Looked(spot)

    # --- corrections ---------------------------------------------------------------
    def correct(self, correction: Correction) -> Corrected:
        """Pin ``correction``'s token to the item it names in the last committed table and
        return that table read again with it (its snapshot is also the new ``last``) and
        what now reads differently.  Raises CorrectionError, changing nothing, for an item
        that is not there, one that no longer reads as the sender saw it, or a token that
        is not this game's."""
        committed, last = self._committed, self.last
        where = f"item {correction.index} of meld {correction.meld}"
        if committed is None or last is None:
            raise CorrectionError(f"no {where}: no table has been committed yet")
        rows = committed.rows
        if not 0 <= correction.meld < len(rows):
            raise CorrectionError(
                f"no meld {correction.meld} (asked for {where}): the table has {len(rows)}"
                f" meld{'s' * (len(rows) != 1)}")
        row = rows[correction.meld]
        if not 0 <= correction.index < len(row):
            raise CorrectionError(
                f"no item {correction.index} in meld {correction.meld}: it has {len(row)}")
        current = table_melds(last)[correction.meld][correction.index]
        if correction.was is not None and _bare(correction.was) != _bare(str(current)):
            raise CorrectionError(
                f"{where} reads {current} on the table now, not {correction.was} as shown:"
                " the table has changed")
        try:
            item = parse_item(correction.item)
        except ValueError as error:
            raise CorrectionError(f"{where} cannot become {correction.item!r}: {error}") from None
        if item.family is not None and item.family != self.variant.family:
            raise CorrectionError(
                f"{where} cannot become {correction.item!r}: not part of a {self.variant.name}"
                " set")
        key = row[correction.index]
        track = next(tr for tr in committed.tracks if tr.track_id == key)
        live = self.tracker.tracks.get(key)
        seen = live if live is not None else track
        label = str(item.bare()) if isinstance(item, Joker) else str(item)
        self._pins[key] = Pin(
            label=label,
            declared=str(item) if isinstance(item, Joker) and item.stands_for else None,
            misread=track.label,
            who=correction.who,
            kind=track.kind,
            centre=seen.centre,
            reach=self.settings.correction_reach * min(seen.size),
            lost_since=None if live is not None else self.tracker.t,
        )
        t = max(last.t, self.tracker.t)
        snapshot, problems, rows_now, _ = self._read(t, committed.tracks)
        self.last, self.problems = snapshot, problems
        self._committed = replace(committed, rows=rows_now)
        changes = _rereads(last, rows, snapshot, first=key)
        x1, y1, x2, y2 = (float(v) for v in track.box)
        return Corrected(snapshot, current, parse_item(label), changes, committed.frame,
                         (x1, y1, x2, y2), track.kind)

    def _follow_pins(self, t: float) -> None:
        """Keep each pin on its item: follow its track, and past the track's loss, hand it
        to a new track where the item lay, read as it was; forget it after a while."""
        pinned = set(self._pins)
        for key, pin in list(self._pins.items()):
            track = self.tracker.tracks.get(key)
            if track is not None:
                if track.last_t == t:  # seen now: remember where it lies
                    self._pins[key] = replace(pin, centre=track.centre,
                                              reach=self.settings.correction_reach
                                              * min(track.size), lost_since=None)
                continue
            heir = self._heir(pin, pinned)
            del self._pins[key]
            if heir is not None:
                self._pins[heir.track_id] = replace(pin, centre=heir.centre, lost_since=None)
                pinned.add(heir.track_id)
            elif pin.lost_since is None:
                self._pins[key] = replace(pin, lost_since=t)
            elif t - pin.lost_since <= self.settings.forget_correction_s:
                self._pins[key] = pin

    def _heir(self, pin: Pin, pinned: set[int]) -> Track | None:
        near = [
            (float(np.hypot(tr.centre[0] - pin.centre[0], tr.centre[1] - pin.centre[1])), tr)
            for tr in self.tracker.tracks.values()
            if tr.track_id not in pinned and tr.kind == pin.kind
            and tr.label in (pin.misread, pin.label)
        ]
        near = [(d, tr) for d, tr in near if d <= pin.reach]
        return min(near, key=lambda dt: (dt[0], dt[1].track_id))[1] if near else None

    def _label(self, track: Track) -> str:
        pin = self._pins.get(track.track_id)
        return pin.label if pin is not None else track.label

    def _shares(self, track: Track) -> dict[str, float]:
        pin = self._pins.get(track.track_id)
        return {pin.label: 1.0} if pin is not None else track.frame_shares()

    def _kept(self, tracks: Mapping[int, Track]) -> dict[int, Kept]:
        """The labels the last committed table gave the items that lay still since, with
        their shares then."""
        last = self.last
        if last is None:
            return {}
        return {seen.track_id: Kept(str(seen.item.bare()) if isinstance(seen.item, Joker)
                                    else str(seen.item), seen.confidence)
                for seen in last.items
                if seen.track_id in tracks and tracks[seen.track_id].still_since <= last.t}

    # --- reading a still table ----------------------------------------------------
    def _placed(self, tracks: Sequence[Track]) -> list[Placed]:
        placed = []
        for track in tracks:
            x1, y1, x2, y2 = (float(v) for v in track.box)
            if self.calibration is not None:
                quad = self.calibration.to_table([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
                centre = tuple(self.calibration.to_table([track.centre])[0])
                extent = quad.max(axis=0) - quad.min(axis=0)
                size, length = float(min(extent)), float(max(extent))
            else:
                centre = track.centre
                size, length = min(x2 - x1, y2 - y1), max(x2 - x1, y2 - y1)
            placed.append(Placed(track.track_id, track.kind, (float(centre[0]), float(centre[1])),
                                 size, self._label(track), length))
        return placed

    def read(self, t: float) -> tuple[TableSnapshot, tuple[str, ...]]:
        """The table as the confirmed tracks read now (corrections applied)."""
        snapshot, problems, _, _ = self._read(t, self.tracker.confirmed())
        return snapshot, problems

    @staticmethod
    def _loose_corners(placed: Sequence[Placed], by_zone: dict[str, list[Placed]],
                       zone_of: dict[str, Zone], rows: dict[str, tuple[tuple[int, ...], ...]],
                       singles: dict[str, tuple[int, ...]], dropped: set[int]
                       ) -> dict[int, int]:
        """Card indices outside every meld that are another corner of a card already read
        (:func:`tabletop.live.grouping.loose_corner_partners`): the discard pile's first, along
        its reading direction, then the stock's, then those outside every zone."""
        anchor_keys = {k for name, zone in zone_of.items() if zone.kind in ("meld", "seat")
                       for row in rows[name] for k in row}
        anchor_keys |= {k for name, zone in zone_of.items() if zone.kind in ("meld", "seat")
                        for k in singles[name]}
        by_key = {p.key: p for p in placed}
        rank = {"discard": 0, "stock": 1}
        loose: list[tuple[int, float, Placed]] = []
        in_zone = {p.key for items in by_zone.values() for p in items}
        directions: dict[int, tuple[float, float]] = {}
        for name, items in by_zone.items():
            zone = zone_of[name]
            if zone.kind in ("meld", "seat"):
                continue
            dx, dy = zone.reading_direction
            loose.extend((rank.get(zone.kind, 2), p.position[0] * dx + p.position[1] * dy, p)
                         for p in items if p.key not in dropped)
            directions.update((p.key, (dx, dy)) for p in items)
        loose.extend((3, 0.0, p) for p in placed if p.key not in in_zone and p.key not in dropped)
        loose.sort(key=lambda entry: (entry[0], entry[1], entry[2].key))
        anchors = [by_key[k] for k in sorted(anchor_keys) if k not in dropped]
        return loose_corner_partners([entry[2] for entry in loose], anchors,
                                     directions=directions)

    def _read(self, t: float, confirmed: Sequence[Track]
              ) -> tuple[TableSnapshot, tuple[str, ...], tuple[tuple[int, ...], ...],
                         tuple[int, ...]]:
        """(snapshot, problems, the track ids of each meld in table order, the track ids
        of the discards, oldest first)."""
        assert self.zones is not None
        tracks = {tr.track_id: tr for tr in confirmed}
        placed = self._placed(list(tracks.values()))
        problems: list[str] = []
        family = self.variant.family
        by_zone: dict[str, list[Placed]] = {}
        zone_of: dict[str, Zone] = {}
        outside: list[int] = []
        for one in placed:
            try:
                natural_family = parse_item(one.label).family
            except ValueError:
                natural_family = None
            if natural_family is not None and natural_family != family:
                problems.append(f"{one.label} is not part of a {self.variant.name} set")
            zone = self.zones.zone_at(one.position)
            if zone is None:
                outside.append(one.key)
                continue
            by_zone.setdefault(zone.name, []).append(one)
            zone_of[zone.name] = zone
        rows: dict[str, tuple[tuple[int, ...], ...]] = {}
        singles: dict[str, tuple[int, ...]] = {}
        dropped: set[int] = set()
        corner_of: dict[int, int] = {}
        angles: dict[int, float] = {}
        # a seat's rows are melds where the variant lays them before the players; else
        # they are the player's own rack, which need not read as melds
        meld_kinds = ("meld", "seat") if self.variant.melds_lie_before_players else ("meld",)
        for name, items in by_zone.items():
            grouping = group_items(items, zone_of[name].reading_direction,
                                   melds=zone_of[name].kind in meld_kinds, fits=self._legal)
            angles.update(row_angles(grouping, items, zone_of[name].reading_direction))
            rows[name], singles[name] = grouping.groups, grouping.singles
            dropped.update(grouping.second_corners)
            corner_of.update(grouping.corner_of)
        meld_rows = [row for name, zone in zone_of.items() if zone.kind in meld_kinds
                     for row in rows[name]]
        self._new_spots(tracks, [*meld_rows, *([key] for name, zone in zone_of.items()
                                               if zone.kind in meld_kinds
                                               for key in singles[name])])
        loose = self._loose_corners(placed, by_zone, zone_of, rows, singles, dropped)
        dropped.update(loose)
        corner_of.update(loose)
        shares = {key: self._shares(tr) for key, tr in tracks.items() if key not in dropped}
        from_distributions = {key for key in shares if tracks[key].evidence}
        # a card's other corners are read too: their shares join its kept index's
        readings: dict[int, list[Mapping[str, float]]] = {}
        for corner, card in corner_of.items():
            if card in shares and corner in tracks and card not in self._pins:
                readings.setdefault(card, [shares[card]]).append(self._shares(tracks[corner]))
                if not tracks[corner].evidence:
                    from_distributions.discard(card)
        shares.update((card, _pooled(both)) for card, both in readings.items())
        # a person's word beats the rules' guess too (a 6 they say is a 6 stays one), and
        # the rest of its meld is read knowing it
        fixed = {key: pin.label for key, pin in self._pins.items()}
        reading = resolve_labels(self.variant, shares, meld_rows, fixed, from_distributions,
                                 kept=self._kept(tracks), legal=self._legal)
        problems.extend(reading.problems)
        labels = dict(reading.labels)

        declared = {key: pin.declared for key, pin in self._pins.items() if pin.declared}

        def item(key: int) -> Item:
            if key in declared and labels[key] == str(JOKER):
                return parse_item(declared[key])  # the joker as the person declared it
            return parse_item(labels[key])

        position = {p.key: p.position for p in placed}
        meld_rows_found: list[tuple[int, ...]] = []
        seats: dict[int, list[tuple[Item, ...]]] = {}
        seat_keys: dict[int, list[tuple[int, ...]]] = {}
        discards: list[Item] = []
        discard_keys: list[int] = []
        unplaced: list[int] = list(outside)
        for name, zone in sorted(zone_of.items()):
            if zone.kind == "meld":
                meld_rows_found.extend(rows[name])
                unplaced.extend(singles[name])
            elif zone.kind == "seat":
                assert zone.seat is not None
                seat_rows = rows_in_reading_order(
                    [*rows[name], *((k,) for k in singles[name])], by_zone[name],
                    zone.reading_direction)
                seat_keys.setdefault(zone.seat, []).extend(seat_rows)
                seats.setdefault(zone.seat, []).extend(tuple(item(k) for k in row)
                                                       for row in seat_rows)
            elif zone.kind == "discard":
                keys = [k for row in rows[name] for k in row if k not in dropped]
                keys += [k for k in singles[name] if k not in dropped]
                d = zone.reading_direction
                positions = {p.key: p.position for p in by_zone[name]}
                keys.sort(key=lambda k: positions[k][0] * d[0] + positions[k][1] * d[1])
                discards.extend(item(k) for k in keys)
                discard_keys.extend(keys)
            else:  # face-up items on the stock are out of place
                unplaced.extend(k for row in rows[name] for k in row)
                unplaced.extend(singles[name])
        # top to bottom, then left to right, as a person scans the table
        meld_rows_found.sort(key=lambda row: (
            round(min(position[k][1] for k in row) / 10), min(position[k][0] for k in row)))
        seen = tuple(
            SeenItem(item(key), key, position[key], angles.get(key, 0.0),
                     round(shares[key].get(labels[key], 0.0), 4))
            for key in sorted(shares))
        snapshot = TableSnapshot(
            t=t,
            melds=tuple(tuple(item(k) for k in row) for row in meld_rows_found),
            seats={seat: tuple(rows_) for seat, rows_ in sorted(seats.items())},
            discards=tuple(discards),
            unplaced=tuple(item(k) for k in sorted(unplaced) if k not in dropped),
            items=seen,
            problems=tuple(problems),
            reading_problems=reading.reading_problems,
        )
        def around(row: Sequence[int]) -> Box:
            boxes = np.array([tracks[k].box for k in row], np.float64)
            x1, y1 = boxes[:, :2].min(axis=0)
            x2, y2 = boxes[:, 2:].max(axis=0)
            return (round(float(x1), 1), round(float(y1), 1),
                    round(float(x2), 1), round(float(y2), 1))

        if self._frame_size is not None:  # boxes in the frame's pixels, as the panel shows it
            snapshot = replace(snapshot,
                               meld_boxes=tuple(around(row) for row in meld_rows_found),
                               seat_boxes={seat: tuple(around(row) for row in rows_)
                                           for seat, rows_ in sorted(seat_keys.items())})
        table_rows = (*meld_rows_found, *(row for seat in sorted(seat_keys)
                                          for row in seat_keys[seat]))
        return snapshot, tuple(problems), tuple(table_rows), tuple(discard_keys)


def table_melds(snapshot: TableSnapshot) -> tuple[tuple[Item, ...], ...]:
    """The melds in the order the game's ``table`` event lists them: the shared melds,
    then each seat's, seat by seat; the order corrections count in."""
    return (*snapshot.melds, *(meld for seat in sorted(snapshot.seats)
                               for meld in snapshot.seats[seat]))


def _rereads(before: TableSnapshot, rows: Sequence[Sequence[int]], after: TableSnapshot,
             *, first: int) -> tuple[Reread, ...]:
    """The items of ``before``'s melds (track ids ``rows``) that ``after`` reads otherwise,
    the track ``first`` ahead of the rest, each with its meld as it reads at its turn."""
    now = {seen.track_id: seen.item for seen in after.items}
    melds = [list(meld) for meld in table_melds(before)]
    places = [(m, i, key) for m, row in enumerate(rows) for i, key in enumerate(row)]
    places.sort(key=lambda place: place[2] != first)  # stable: table order otherwise
    changes = []
    for m, i, key in places:
        old, new = melds[m][i], now.get(key)
        if new is None or new == old:
            continue
        changes.append(Reread(m, i, old, new, tuple(melds[m])))
        melds[m][i] = new
    return tuple(changes)


def _lie_over(live: Sequence[Track], held: Sequence[Track]) -> list[bool]:
    """For each held item, whether a live track lies where it lies: the item seen again
    (or another one laid in its place)."""
    if not live or not held:
        return [False] * len(held)
    overlaps = iou_matrix(np.array([tr.box for tr in held]), np.array([tr.box for tr in live]))
    same_kind = np.array([[h.kind == tr.kind for tr in live] for h in held])
    return [bool(row) for row in ((overlaps >= HELD_SEEN_IOU) & same_kind).any(axis=1)]


def _bare(token: str) -> str:
    """A token as the camera sees it: a joker is a joker whatever it stands for."""
    try:
        item = parse_item(token)
    except ValueError:
        return token.strip().upper()
    return str(item.bare()) if isinstance(item, Joker) else str(item)


def _copy(track: Track) -> Track:
    """A track frozen as it is: the tracker changes boxes, votes and evidence in place."""
    return replace(track, box=track.box.copy(), votes=dict(track.votes),
                   evidence=dict(track.evidence))


def _content(snapshot: TableSnapshot) -> tuple[object, ...]:
    return (snapshot.meld_strings(), sorted(snapshot.seats.items()), snapshot.discards,
            sorted(map(str, snapshot.unplaced)))
