"""Calibration: markers found in a synthetic view, mm accuracy, JSON, a moved camera noticed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.calibration import (
    CalibrationError,
    CameraDriftMonitor,
    TableCalibration,
    find_markers,
    marker_sheet,
    write_marker_sheet,
)
from tests.calibration.printed import printed_pdf, printed_png
from tests.calibration.views import (
    TABLE_MM,
    camera_view,
)


def true_mm(image_to_mm: np.ndarray, points: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(points.reshape(-1, 1, 2), image_to_mm).reshape(-1, 2)


@pytest.mark.parametrize("tilt", [0.0, 0.08, 0.16])
def test_markers_give_table_mm_within_two_mm(tilt: float) -> None:
    image, image_to_mm = camera_view(tilt)
    calibration = TableCalibration.from_markers(image, TABLE_MM)
    assert calibration.source == "markers"
    rng = np.random.default_rng(1)
    # points all over the table (in mm), to the image through the truth, back through ours
    table_points = rng.uniform([0, 0], TABLE_MM, (200, 2))
    image_points = cv2.perspectiveTransform(table_points.reshape(-1, 1, 2),
                                            np.linalg.inv(image_to_mm)).reshape(-1, 2)
    error = np.linalg.norm(calibration.to_table(image_points) - table_points, axis=1)
    assert error.max() < 2.0, error.max()
    assert np.allclose(true_mm(image_to_mm, calibration.to_image(table_points)), table_points,
                       atol=2.0)


def test_manual_corners_and_json_round_trip(tmp_path: Path) -> None:
    _image, image_to_mm = camera_view(0.1)
    corners = cv2.perspectiveTransform(
        np.array([[[0, 0]], [[900, 0]], [[900, 600]], [[0, 600]]], np.float64),
        np.linalg.inv(image_to_mm)).reshape(-1, 2)
    calibration = TableCalibration.from_corners(corners.tolist(), TABLE_MM, (1280, 720))
    path = calibration.save(tmp_path / "setup.calibration.json")
    text = json.loads(path.read_text())
    assert text["table_mm"] == [900.0, 600.0] and len(text["image_corners"]) == 4
    again = TableCalibration.load(path)
    centre = again.to_table([corners.mean(axis=0)])[0]
    assert np.allclose(centre, true_mm(image_to_mm, corners.mean(axis=0))[0], atol=0.05)


@pytest.mark.parametrize("corners", [
    [[0, 0], [100, 0], [0, 100], [100, 100]],  # crossed: not in corner order
    [[0, 0], [100, 0]],  # too few
    [[0, 0], [0, 0], [0, 0], [0, 0]],  # no area
])
def test_bad_corners_are_refused(corners: list[list[float]]) -> None:
    with pytest.raises(CalibrationError):
        TableCalibration.from_corners(corners, TABLE_MM)


def test_missing_markers_are_named() -> None:
    image, _ = camera_view(0.05)
    image[:, :400] = 60  # the left markers (ids 0 and 3) covered
    with pytest.raises(CalibrationError, match=r"id 0 \(top left\).*id 3 \(bottom left\)"):
        TableCalibration.from_markers(image, TABLE_MM)


def test_marker_sheet_holds_the_four_markers(tmp_path: Path) -> None:
    sheet = marker_sheet(side_mm=50, dpi=150)
    assert sorted(find_markers(sheet)) == [0, 1, 2, 3]
    png = write_marker_sheet(tmp_path / "sheet.png")
    pdf = write_marker_sheet(tmp_path / "sheet.png", pdf=True)
    assert png.stat().st_size > 1000
    assert pdf.suffix == ".pdf" and pdf.read_bytes().startswith(b"%PDF")


def _marker_sides_mm(image: np.ndarray, mm_per_px: float) -> dict[int, float]:
    """Each corner marker found in ``image``: its side as printed (mean of its four edges)."""
    found = find_markers(image)
    assert sorted(found) == [0, 1, 2, 3]
    return {marker_id: float(np.mean(np.linalg.norm(
                marker.corners - np.roll(marker.corners, -1, axis=0), axis=1))) * mm_per_px
            for marker_id, marker in found.items()}


@pytest.mark.parametrize("side_mm", [60.0, 40.0])
@pytest.mark.parametrize("way", ["png", "pdf"])
def test_the_printed_sheet_holds_markers_of_their_nominal_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str, side_mm: float) -> None:
    """As a player makes and prints the sheet (README: ``tabletop calibration markers
    --pdf``), on a machine without Pillow: printed at 100 %, each marker is the size asked
    for, within half a millimetre, and the calibration finds all four in the file."""
    from tabletop.cli import main

    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL raises ModuleNotFoundError
    args = ["calibration", "markers", "--out", str(tmp_path / "sheet.png")]
    args += ["--side-mm", f"{side_mm:g}"] + (["--pdf"] if way == "pdf" else [])
    assert main(args) == 0
    if way == "pdf":
        image, mm_per_px, page_mm = printed_pdf(tmp_path / "sheet.pdf")
        assert page_mm == pytest.approx((210.0, 297.0), abs=0.5)  # A4
    else:
        image, mm_per_px = printed_png(tmp_path / "sheet.png")
        assert image.shape[1] * mm_per_px == pytest.approx(210.0, abs=0.5)
    sides = _marker_sides_mm(image, mm_per_px)
    assert all(abs(side - side_mm) <= 0.5 for side in sides.values()), sides


@pytest.mark.parametrize("shift, hide_markers, moved", [
    ((0, 0), False, False),
    ((12, 6), False, True),  # markers drifted 13 px
    ((0, 0), True, False),  # no markers in sight: features say it stayed
    ((12, 6), True, True),  # no markers: the features drifted
])
def test_a_moved_camera_is_noticed(shift: tuple[float, float], hide_markers: bool,
                                   moved: bool) -> None:
    reference, _ = camera_view(0.08)
    calibration = TableCalibration.from_markers(reference, TABLE_MM)
    monitor = CameraDriftMonitor(calibration, reference, threshold_px=4.0, patience=3)
    frame, _ = camera_view(0.08, shift)
    if hide_markers:
        for x, y in calibration.image_corners:
            cv2.circle(frame, (round(x + shift[0]), round(y + shift[1])), 70, (60, 60, 60), -1)
    readings = [monitor.check(frame) for _ in range(3)]
    assert readings[-1].witness == ("features" if hide_markers else "markers")
    assert readings[-1].moved is moved
    assert not readings[0].moved  # one frame is never enough (a hand passing)


def test_calibration_commands(tmp_path: Path) -> None:
    from tabletop.cli import main

    assert main(["calibration", "markers", "--out", str(tmp_path / "sheet.png"), "--pdf"]) == 0
    assert (tmp_path / "sheet.pdf").read_bytes().startswith(b"%PDF")
    image, _ = camera_view(0.05)
    cv2.imwrite(str(tmp_path / "frame.png"), image)
    out = tmp_path / "setup.json"
    assert main(["calibration", "table", "--image", str(tmp_path / "frame.png"),
                 "--table-mm", "900x600", "--out", str(out)]) == 0
    assert TableCalibration.load(out).source == "markers"
    assert main(["calibration", "zones", "--variant", "sabra", "--players", "4",
                 "--out", str(tmp_path / "zones.json")]) == 0
    assert main(["calibration", "table", "--corners", "1,2;3", "--table-mm", "900x600",
                 "--out", str(out)]) == 2  # bad input: exit 2 with the reason
