"""The table found by itself from the corner markers: its size from the printed marker side,
found again when the camera moves, nothing made up when the markers are not all in view."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tabletop.calibration.auto import TableFinder, table_size_from_markers
from tabletop.calibration.markers import find_markers
from tests.calibration.views import MARKER_MM, TABLE_MM, camera_view


@pytest.mark.parametrize("tilt", [0.0, 0.08, 0.16])
def test_the_table_size_comes_from_the_marker_side(tilt: float) -> None:
    image, _ = camera_view(tilt)
    width, height = table_size_from_markers(find_markers(image), MARKER_MM)
    # 900 x 600 mm between centres, from 50 mm markers about 60 px wide in the image
    assert width == pytest.approx(TABLE_MM[0], rel=0.03)
    assert height == pytest.approx(TABLE_MM[1], rel=0.03)


def test_found_once_then_again_only_when_the_camera_moved() -> None:
    still, image_to_mm = camera_view(0.08)
    shifted, _ = camera_view(0.08, (20, 10))
    finder = TableFinder(marker_mm=MARKER_MM, every_s=1.0, patience=2)
    first = finder.update(0.0, still)
    assert first is not None and not first.moved
    points = np.array([[100.0, 100.0], [800.0, 500.0]])
    image_points = cv2.perspectiveTransform(points.reshape(-1, 1, 2),
                                            np.linalg.inv(image_to_mm)).reshape(-1, 2)
    assert np.allclose(first.calibration.to_table(image_points), points, rtol=0.03, atol=5)
    assert finder.update(0.5, still) is None  # not looked: too soon
    assert finder.update(1.0, still) is None  # looked: the same table
    assert finder.update(2.0, shifted) is None  # one look is a hand, not a camera
    again = finder.update(3.0, shifted)
    assert again is not None and again.moved
    assert finder.looks == 4


def test_given_size_wins_and_missing_markers_give_nothing() -> None:
    image, _ = camera_view(0.0)
    finder = TableFinder(table_mm=(1000.0, 700.0))
    found = finder.update(0.0, image)
    assert found is not None and found.calibration.table_mm == (1000.0, 700.0)
    hidden = image.copy()
    x, y = (round(v) for v in found.calibration.image_corners[2])
    cv2.circle(hidden, (x, y), 70, (60, 60, 60), -1)
    assert TableFinder().update(0.0, hidden) is None
