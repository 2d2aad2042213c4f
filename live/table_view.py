"""Which part of the frame is the table, where each player's zone lies, and the watcher
that reads it: what ``tabletop run`` does with ``--calibration``, ``--zones`` and the
printed corner markers.

* ``--calibration FILE`` (``tabletop calibration table``): the table plane is known; the
  watcher works in table millimetres.
* Without one, the corner markers are looked for while the game runs
  (:class:`tabletop.calibration.auto.TableFinder`): once all four are in view the table is
  calibrated from them, and again when the camera has moved.  Until then, and for good
  when there are no markers, the whole frame is the table, in pixels; the run says so
  once (``notices``).
* ``--zones FILE`` (``tabletop calibration zones``, edited by hand): the meld area, each
  seat's zone, the discards and the stock.  Its ``table_size`` is the size its polygons
  were drawn for: they are stretched to the calibrated table (millimetres) or, without a
  calibration, to the frame (pixels); a layout drawn in the frame's own pixels is used as
  it is.  Without a file, a calibrated table gets the variant's default layout
  (:func:`tabletop.calibration.zones.default_layout`: a band along each player's edge, the
  meld area in the middle), and the whole frame without one is a single meld area.

Items laid in a seat's zone are that player's, not table melds: Rommé players' own
melds during play, and every player's rack laid open at the end of a round.

A new table (found, or found again after the camera moved) means a new
:class:`tabletop.live.watcher.TableWatcher`: positions, zones and the motion region all change,
so the old tracks mean nothing.  The next committed table is read afresh; the game
sees the same melds and emits nothing for them.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from tabletop.calibration.auto import Found, TableFinder
from tabletop.calibration.table import TableCalibration
from tabletop.calibration.zones import Zone, ZoneLayout, default_layout
from tabletop.engine.variants import Variant
from tabletop.live.corrections import Correction
from tabletop.live.snapshot import TableSnapshot
from tabletop.live.watcher import Corrected, TableWatcher, WatcherSettings
from tabletop.vision.detections import Detections

NO_MARKERS_AFTER_S = 3.0
"""How long the markers are looked for before the run says it uses the whole frame."""
SMALL_INDICES_TO_SAY = 20
"""How many card indices the detector must have left unread as too small before the run
says the camera is too far (one stray box is no reason to move it)."""


def whole_frame(width: float, height: float) -> ZoneLayout:
    corners = ((0.0, 0.0), (width, 0.0), (width, height), (0.0, height))
    return ZoneLayout((width, height), (Zone("meld area", "meld", corners),))


def fitted(zones: ZoneLayout, size: tuple[float, float]) -> ZoneLayout:
    """``zones`` stretched from the size they were drawn for to ``size``."""
    if tuple(zones.table_size) == tuple(size):
        return zones
    return zones.scaled(size[0] / zones.table_size[0], size[1] / zones.table_size[1])


class TableView:
    """The watcher of the table as it is now known; ``update`` and ``correct`` as the
    watcher's (see the module's docstring)."""

    def __init__(self, variant: Variant, players: int, *,
                 calibration: TableCalibration | None = None,
                 zones: ZoneLayout | None = None,
                 finder: TableFinder | None = None,
                 settings: WatcherSettings | None = None,
                 notice: Callable[[str], object] | None = None,
                 too_far: Callable[[float], object] | None = None) -> None:
        """``notice``: told each line the view has to say (the table found, the whole frame
        used, the camera too far); ``too_far``: told once the median length (pixels) of
        the card indices left unread as too small, as the panel shows it."""
        self.variant = variant
        self.players = players
        self.calibration = calibration
        self.zone_file = zones
        self.finder = None if calibration is not None else finder
        self.settings = settings
        self.notices: list[str] = []
        self._notice = notice
        self._too_far = too_far
        self._first_t: float | None = None
        self.watcher: TableWatcher | None = None
        self._detector: object = None
        self._said_too_far = False
        if calibration is not None:
            self._use(calibration, f"table from the calibration file: {_size(calibration)}")

    def attach(self, detector: object) -> None:
        """The detector's second look and word on settling, handed to every watcher this
        view makes (:meth:`tabletop.live.watcher.TableWatcher.attach`)."""
        self._detector = detector
        if self.watcher is not None:
            self.watcher.attach(detector)

    @property
    def mode(self) -> str:
        """``calibrated`` (a file or the markers) or ``whole frame``."""
        return "calibrated" if self.calibration is not None else "whole frame"

    def _say(self, text: str) -> None:
        self.notices.append(text)
        if self._notice is not None:
            self._notice(text)

    def _zones(self, size: tuple[float, float]) -> ZoneLayout:
        if self.zone_file is not None:
            return fitted(self.zone_file, size)
        if self.calibration is not None:
            return default_layout(self.variant.id, self.players, size)
        return whole_frame(*size)

    def _use(self, calibration: TableCalibration | None, why: str,
             frame_size: tuple[float, float] | None = None) -> None:
        self.calibration = calibration
        size = calibration.table_mm if calibration is not None else frame_size
        assert size is not None
        self.watcher = TableWatcher(self.variant, self._zones(size), calibration, self.settings)
        self.watcher.attach(self._detector)
        self._say(why)

    def update(self, t: float, frame: Any, detections: Detections) -> TableSnapshot | None:
        if self._first_t is None:
            self._first_t = t
        if self.finder is not None and frame is not None:
            found = self.finder.update(t, frame)
            if found is not None:
                self._found(found)
        if self.watcher is None:
            if frame is None:
                raise ValueError("without a calibration the table view needs the frame")
            height, width = frame.shape[:2]
            waited = t - self._first_t
            if self.finder is not None and waited < NO_MARKERS_AFTER_S:
                return None  # the markers get a moment before the whole frame is used
            why = ("no corner markers in view: the whole frame is the table"
                   " (print them with 'tabletop calibration markers' for seats and discards)"
                   if self.finder is not None else "the whole frame is the table")
            if self.zone_file is not None:
                why += "; zones from the file"
            self._use(None, why, (float(width), float(height)))
        assert self.watcher is not None
        self._tell_if_too_far()
        return self.watcher.update(t, frame, detections)

    def _tell_if_too_far(self) -> None:
        """Say once that card indices are left unread for their size (the detector's
        ``small_indices``)."""
        if self._said_too_far:
            return
        sides = list(getattr(self._detector, "small_indices", ()))
        if len(sides) < SMALL_INDICES_TO_SAY:
            return
        self._said_too_far = True
        length = statistics.median(sides)
        self._say(f"card indices about {length:.0f} px long are too small to read and are"
                  " left unread: bring the camera closer or raise its resolution")
        if self._too_far is not None:
            self._too_far(length)

    def _found(self, found: Found) -> None:
        calibration = found.calibration
        if found.moved:
            why = f"the camera moved: table found again from the markers, {_size(calibration)}"
        else:
            why = f"table found from the corner markers: {_size(calibration)}"
        self._use(calibration, why)

    def correct(self, correction: Correction) -> Corrected:
        if self.watcher is None:
            from tabletop.live.corrections import CorrectionError

            raise CorrectionError("no table has been committed yet")
        return self.watcher.correct(correction)

    def take_camera_events(self) -> list[str]:
        """The watcher's camera events since the last call
        (:meth:`tabletop.live.watcher.TableWatcher.take_camera_events`)."""
        return self.watcher.take_camera_events() if self.watcher is not None else []

    @property
    def problems(self) -> Sequence[str]:
        return self.watcher.problems if self.watcher is not None else ()


def _size(calibration: TableCalibration) -> str:
    width, height = calibration.table_mm
    return f"{width:.0f} x {height:.0f} mm"
