"""The four corner markers: which ArUco dictionary and ids, a printable sheet, finding them.

The markers are fixed so a sheet printed once works with every setup:
dictionary ``DICT_4X4_50``, ids 0 (top left), 1 (top right), 2 (bottom right)
and 3 (bottom left) as the camera's usual player (seat 0, at the bottom)
sees the table.  Each marker's *centre* goes on a corner of the play area;
the table size is the distance between the centres.  The centre is taken as
the crossing of the marker's diagonals, which a perspective view keeps (the
mean of the four corners it does not).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.calibration.printing import write_page

DICTIONARY_NAME = "DICT_4X4_50"
CORNER_IDS = (0, 1, 2, 3)
"""Marker ids at the table's top-left, top-right, bottom-right, bottom-left corners."""
CORNER_NAMES = ("top left", "top right", "bottom right", "bottom left")

Points = npt.NDArray[np.float64]


def dictionary() -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, DICTIONARY_NAME))


def marker_image(marker_id: int, side_px: int) -> npt.NDArray[np.uint8]:
    """One marker, black on white, ``side_px`` square, no quiet zone."""
    if marker_id not in range(50):
        raise ValueError(f"marker id must be 0..49 in {DICTIONARY_NAME}, not {marker_id!r}")
    return cv2.aruco.generateImageMarker(dictionary(), marker_id, side_px)


def diagonal_centre(corners: Points) -> tuple[float, float]:
    """Where the diagonals of a quadrilateral cross (projective centre of the square)."""
    p = np.asarray(corners, np.float64).reshape(4, 2)
    d1, d2 = p[2] - p[0], p[3] - p[1]
    matrix = np.array([d1, -d2]).T
    if abs(np.linalg.det(matrix)) < 1e-9:
        centre = p.mean(axis=0)
        return float(centre[0]), float(centre[1])
    s = np.linalg.solve(matrix, p[1] - p[0])[0]
    centre = p[0] + s * d1
    return float(centre[0]), float(centre[1])


@dataclass(frozen=True)
class FoundMarker:
    marker_id: int
    corners: Points  # 4 x 2, image pixels, ArUco's order (clockwise from the marker's top left)

    @property
    def centre(self) -> tuple[float, float]:
        return diagonal_centre(self.corners)


def find_markers(image: npt.NDArray[np.uint8]) -> dict[int, FoundMarker]:
    """Every marker of the dictionary in ``image`` (BGR or grey), by id; a repeated id keeps
    its largest instance (the real marker, not a small print of it elsewhere)."""
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    parameters = cv2.aruco.DetectorParameters()
    parameters.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(dictionary(), parameters)
    corners, ids, _ = detector.detectMarkers(grey)
    found: dict[int, FoundMarker] = {}
    if ids is None:
        return found
    for quad, marker_id in zip(corners, ids.reshape(-1), strict=True):
        points = np.asarray(quad, np.float64).reshape(4, 2)
        marker = FoundMarker(int(marker_id), points)
        old = found.get(marker.marker_id)
        if old is None or cv2.contourArea(points.astype(np.float32)) > cv2.contourArea(
                old.corners.astype(np.float32)):
            found[marker.marker_id] = marker
    return found


def marker_sheet(side_mm: float = 60.0, dpi: int = 200,
                 page_mm: tuple[float, float] = (210.0, 297.0)) -> npt.NDArray[np.uint8]:
    """An A4 page (portrait) with the four corner markers, to cut out.

    Each marker is ``side_mm`` wide when printed at 100 % scale, with a white
    margin round it (ArUco needs the quiet zone) and its id, corner and a
    cross at its centre written below.
    """
    if not 10 <= side_mm <= 95:
        raise ValueError(f"marker side must be 10..95 mm to fit four on a page, not {side_mm!r}")
    px_per_mm = dpi / 25.4
    width, height = (round(v * px_per_mm) for v in page_mm)
    page = np.full((height, width), 255, np.uint8)
    side = round(side_mm * px_per_mm)
    cells = [(0, 0), (1, 0), (1, 1), (0, 1)]  # same layout as on the table
    for marker_id, name, (col, row) in zip(CORNER_IDS, CORNER_NAMES, cells, strict=True):
        cx = round(width * (0.25 + 0.5 * col))
        cy = round(height * (0.27 + 0.5 * row))
        x0, y0 = cx - side // 2, cy - side // 2
        page[y0:y0 + side, x0:x0 + side] = marker_image(marker_id, side)
        # a thin cut line well outside the quiet zone
        pad = round(side * 0.3)
        cv2.rectangle(page, (x0 - pad, y0 - pad), (x0 + side + pad, y0 + side + pad), 180, 1)
        text = f"id {marker_id}: {name} ({DICTIONARY_NAME}, {side_mm:g} mm)"
        scale = max(0.4, dpi / 300)
        cv2.putText(page, text, (x0 - pad, y0 + side + pad + round(14 * scale * 2)),
                    cv2.FONT_HERSHEY_SIMPLEX, scale, 0, max(1, round(scale * 1.5)), cv2.LINE_AA)
    note = "Print at 100 %. Put each marker's CENTRE on its corner of the play area."
    cv2.putText(page, note, (round(10 * px_per_mm), round(10 * px_per_mm)),
                cv2.FONT_HERSHEY_SIMPLEX, max(0.4, dpi / 300), 0, 1, cv2.LINE_AA)
    return page


def write_marker_sheet(path: str | Path, *, side_mm: float = 60.0, dpi: int = 200,
                       pdf: bool = False) -> Path:
    """Write the sheet as PNG (its resolution recorded) or PDF (its page A4): either prints
    the markers ``side_mm`` wide at 100 %."""
    return write_page(path, marker_sheet(side_mm, dpi), dpi, pdf=pdf)
