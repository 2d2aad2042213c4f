"""What `tabletop run` does with --calibration, --zones and the corner markers: racks laid in a
seat's zone are that player's, the whole frame is used (and said so once) without markers,
and a table found from markers mid-run replaces the whole-frame view."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.calibration.zones import Zone, ZoneLayout, default_layout
from tabletop.engine.variants import find_variant
from tabletop.live.run import TableSetup
from tabletop.live.table_view import NO_MARKERS_AFTER_S, TableView, fitted
from tabletop.vision.detections import Detections
from tests.calibration.views import camera_view

SABRA = find_variant("sabra")
W, H = 1280, 720
TILE = (60, 80)


def tiles(*placed: tuple[str, float, float]) -> Detections:
    """Tiles by label and centre (image pixels)."""
    return Detections.from_items(
        {"label": label, "kind": "tile", "confidence": 0.95,
         "box": [x - TILE[0] / 2, y - TILE[1] / 2, x + TILE[0] / 2, y + TILE[1] / 2]}
        for label, x, y in placed)


def pixel_zones() -> ZoneLayout:
    """Seat 0 along the bottom of the frame, seat 1 along the top, melds between."""
    return ZoneLayout((W, H), (
        Zone("seat 0", "seat", ((0, 560), (W, 560), (W, H), (0, H)), 0, (1, 0)),
        Zone("seat 1", "seat", ((0, 0), (W, 0), (W, 160), (0, 160)), 1, (-1, 0)),
        Zone("meld area", "meld", ((0, 160), (W, 160), (W, 560), (0, 560))),
    ))


def settle(view: TableView, frame: np.ndarray, detections: Detections, start: float,
           seconds: float = 2.0) -> object:
    """Feed the same still frame for ``seconds`` at 10 fps; the last commit."""
    committed = None
    for k in range(round(seconds * 10)):
        snapshot = view.update(start + k / 10, frame, detections)
        committed = snapshot or committed
    return committed


def test_racks_laid_in_seat_zones_are_the_players_not_table_melds() -> None:
    notices: list[str] = []
    view = TableView(SABRA, 2, zones=pixel_zones(), notice=notices.append)
    frame = np.full((H, W, 3), 200, np.uint8)
    run = [("R10", 500, 360), ("R11", 562, 360), ("R12", 624, 360)]
    racks = [("K3", 300, 640), ("B7", 362, 640), ("O9", 900, 80)]
    snapshot = settle(view, frame, tiles(*run, *racks), 0.0)
    assert snapshot is not None
    assert snapshot.meld_strings() == ["R10 R11 R12"]
    seat0 = [" ".join(map(str, row)) for row in snapshot.seats[0]]
    assert seat0 == ["K3 B7"]
    assert [[str(i) for i in row] for row in snapshot.seats[1]] == [["O9"]]
    assert notices == ["the whole frame is the table; zones from the file"]


def test_without_markers_the_whole_frame_is_used_and_said_once() -> None:
    notices: list[str] = []
    view = TableSetup().view(SABRA, 2, notices.append)
    frame = np.full((H, W, 3), 200, np.uint8)
    run = tiles(("R10", 500, 660), ("R11", 562, 660), ("R12", 624, 660))
    # the markers get a moment first: nothing is committed before that
    assert settle(view, frame, run, 0.0, NO_MARKERS_AFTER_S - 0.5) is None
    snapshot = settle(view, frame, run, NO_MARKERS_AFTER_S, 3.0)
    assert snapshot is not None and snapshot.meld_strings() == ["R10 R11 R12"]
    assert len(notices) == 1 and notices[0].startswith("no corner markers in view")
    assert view.mode == "whole frame"


def test_markers_found_mid_run_give_the_table_and_its_seat_zones() -> None:
    notices: list[str] = []
    view = TableSetup(marker_mm=50.0).view(SABRA, 2, notices.append)
    image, image_to_mm = camera_view(0.08)
    blank = np.full_like(image, 90)
    settle(view, blank, Detections.empty(), 0.0, NO_MARKERS_AFTER_S + 0.5)
    assert view.mode == "whole frame"
    # the sheet's markers come into view; a run in the middle, a rack at seat 0's edge
    to_image = np.linalg.inv(image_to_mm)

    def at(x_mm: float, y_mm: float) -> tuple[float, float]:
        point = cv2.perspectiveTransform(np.array([[[x_mm, y_mm]]], np.float64), to_image)[0, 0]
        return float(point[0]), float(point[1])

    placed = [(label, *at(x, y)) for label, x, y in
              [("R10", 300, 300), ("R11", 340, 300), ("R12", 380, 300),
               ("K3", 300, 560), ("B7", 340, 560)]]
    snapshot = settle(view, image, tiles(*placed), 10.0, 3.0)
    assert view.mode == "calibrated"
    assert notices[-1].startswith("table found from the corner markers: 9")
    assert snapshot is not None and snapshot.meld_strings() == ["R10 R11 R12"]
    assert [[str(i) for i in row] for row in snapshot.seats[0]] == [["K3", "B7"]]


def test_zone_files_are_stretched_to_the_table_they_are_used_on(tmp_path: Path) -> None:
    layout = default_layout("sabra", 2, (900.0, 600.0))
    stretched = fitted(layout, (1800.0, 1200.0))
    assert stretched.table_size == (1800.0, 1200.0)
    assert stretched.zone_at((1700.0, 1150.0)).name == layout.zone_at((850.0, 575.0)).name
    assert fitted(layout, (900.0, 600.0)) is layout
    path = tmp_path / "zones.json"
    layout.save(path)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert TableSetup(zones=path).view(SABRA, 2).zone_file == layout
    with pytest.raises(ValueError, match="table_size and zones"):
        TableSetup(zones=bad).view(SABRA, 2)
