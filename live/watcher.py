"""The seeing half of the live table: frames and detections in, committed snapshots out.

    watcher = TableWatcher(variant, zones, calibration)
    for frame in source:
        snapshot = watcher.update(frame.t, frame.image, detector(frame.image))
        if snapshot is not None:
            game.on_snapshot(snapshot)

Stages: motion in the table region (hands), the tracker (ids and label
votes), the stillness rule, then, on a still table, table coordinates, zones,
grouping into melds and the rules-helped reading.  A snapshot is returned
only when the still table reads differently from the last one returned.
Without a calibration everything is in image pixels (a camera looking down),
and zones must be given in pixels too; without zones the whole view is the
shared meld area.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from calibration.table import TableCalibration
from engine.items import Item, parse_item
from engine.variants import Variant
from live.grouping import Placed, group_items
from live.reading import MotionMeter, StillnessRule, resolve_labels
from live.snapshot import SeenItem, TableSnapshot
from live.tracking import Track, Tracker
from live.zones import Zone, ZoneLayout
from vision.detections import Detections

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
        self.last: TableSnapshot | None = None
        self.last_motion = 0.0

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
        detections = detections.with_confidence_at_least(self.settings.min_confidence)
        self.tracker.update(detections, t)
        still = self.rule.update(
            t, self.last_motion, missing=len(self.tracker.missing(MISSED_DETECTION_GRACE_S)),
            last_change_t=self.tracker.last_activity_t())
        if not still:
            return None
        snapshot, problems = self.read(t)
        if self.last is not None and _content(snapshot) == _content(self.last):
            return None
        self.last, self.problems = snapshot, problems
        return snapshot

    # --- reading a still table ----------------------------------------------------
    def _placed(self, tracks: Sequence[Track]) -> list[Placed]:
        placed = []
        for track in tracks:
            x1, y1, x2, y2 = (float(v) for v in track.box)
            if self.calibration is not None:
                quad = self.calibration.to_table([[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
                centre = tuple(self.calibration.to_table([track.centre])[0])
                extent = quad.max(axis=0) - quad.min(axis=0)
                size = float(min(extent))
            else:
                centre, size = track.centre, min(x2 - x1, y2 - y1)
            placed.append(Placed(track.track_id, track.kind, (float(centre[0]), float(centre[1])),
                                 size, track.label))
        return placed

    def read(self, t: float) -> tuple[TableSnapshot, tuple[str, ...]]:
        assert self.zones is not None
        tracks = {tr.track_id: tr for tr in self.tracker.confirmed()}
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
        for name, items in by_zone.items():
            grouping = group_items(items, zone_of[name].reading_direction)
            rows[name], singles[name] = grouping.groups, grouping.singles
            dropped.update(grouping.second_corners)
        meld_rows = [row for name, zone in zone_of.items() if zone.kind in ("meld", "seat")
                     for row in rows[name]]
        shares = {key: tr.shares() for key, tr in tracks.items() if key not in dropped}
        reading = resolve_labels(self.variant, shares, meld_rows)
        problems.extend(reading.problems)

        def item(key: int) -> Item:
            return parse_item(reading.labels[key])

        position = {p.key: p.position for p in placed}
        meld_rows_found: list[tuple[int, ...]] = []
        seats: dict[int, list[tuple[Item, ...]]] = {}
        discards: list[Item] = []
        unplaced: list[int] = list(outside)
        for name, zone in sorted(zone_of.items()):
            if zone.kind == "meld":
                meld_rows_found.extend(rows[name])
                unplaced.extend(singles[name])
            elif zone.kind == "seat":
                assert zone.seat is not None
                seat_rows = [tuple(item(k) for k in row) for row in rows[name]]
                seat_rows.extend((item(k),) for k in singles[name])
                seats.setdefault(zone.seat, []).extend(seat_rows)
            elif zone.kind == "discard":
                keys = [k for row in rows[name] for k in row] + list(singles[name])
                d = zone.reading_direction
                positions = {p.key: p.position for p in by_zone[name]}
                keys.sort(key=lambda k: positions[k][0] * d[0] + positions[k][1] * d[1])
                discards.extend(item(k) for k in keys)
            else:  # face-up items on the stock are out of place
                unplaced.extend(k for row in rows[name] for k in row)
                unplaced.extend(singles[name])
        # top to bottom, then left to right, as a person scans the table
        meld_rows_found.sort(key=lambda row: (
            round(min(position[k][1] for k in row) / 10), min(position[k][0] for k in row)))
        seen = tuple(
            SeenItem(item(key), key, position[key], 0.0,
                     round(tracks[key].shares().get(reading.labels[key], 0.0), 4))
            for key in sorted(shares))
        snapshot = TableSnapshot(
            t=t,
            melds=tuple(tuple(item(k) for k in row) for row in meld_rows_found),
            seats={seat: tuple(rows_) for seat, rows_ in sorted(seats.items())},
            discards=tuple(discards),
            unplaced=tuple(item(k) for k in sorted(unplaced) if k not in dropped),
            items=seen,
            problems=tuple(problems),
        )
        return snapshot, tuple(problems)


def _content(snapshot: TableSnapshot) -> tuple[object, ...]:
    return (snapshot.meld_strings(), sorted(snapshot.seats.items()), snapshot.discards,
            sorted(map(str, snapshot.unplaced)))
