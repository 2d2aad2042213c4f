"""The detector's second look at a spot (Detector.look_again), on the real tile photos."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop.studio.evaluate import labelled_images
from tabletop.vision.detections import iou_matrix
from tabletop.vision.detector import Detector
from tests.shared import REALDATA

pytestmark = [
    pytest.mark.skipif(REALDATA is None, reason="the real photos are missing"),
]


@pytest.fixture(scope="module")
def photos() -> list[tuple[object, object]]:
    assert REALDATA is not None
    return list(labelled_images(REALDATA / "rummikub-tiles" / "annotations.jsonl"))[:3]


def test_a_spot_on_a_tile_reads_the_tile(photos: list[tuple[object, object]]) -> None:
    detector = Detector()
    right = total = 0
    for image, truth in photos:
        # the labelled boxes as spots, a little off as a meld's geometry puts them
        spots = truth.boxes + np.array([3.0, -2.0, 3.0, -2.0])
        found = detector.look_again(image, spots, list(truth.kinds))
        overlap = iou_matrix(truth.boxes, found.boxes) if len(found) else None
        for i, label in enumerate(truth.labels):
            total += 1
            if overlap is not None and overlap[i].max() >= 0.5:
                right += found.labels[int(overlap[i].argmax())] == label
        assert found.alternatives is not None  # read like any detection: with evidence
    assert right >= 0.9 * total


def test_a_spot_on_bare_table_finds_nothing(photos: list[tuple[object, object]]) -> None:
    detector = Detector()
    for image, truth in photos:
        height, width = image.shape[:2]
        side = float(np.median(truth.boxes[:, 2] - truth.boxes[:, 0]))
        corners = np.array([[4, 4, 4 + side, 4 + 1.4 * side],
                            [width - 4 - side, height - 4 - 1.4 * side, width - 4, height - 4]])
        clear = [box for box in corners if len(truth) == 0
                 or iou_matrix(box[None], truth.boxes).max() == 0]
        if clear:
            assert len(detector.look_again(image, np.array(clear), ["tile"] * len(clear))) == 0
    assert len(detector.look_again(photos[0][0], np.zeros((0, 4)), [])) == 0
