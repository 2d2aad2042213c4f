"""Card indices boxed too small to read are left unnamed and their sizes kept
(vision.detector: ``DetectorSettings.smallest_index``, ``Detector.small_indices``)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from tabletop.vision.detector import SMALLEST_INDEX_PX, Detector, DetectorSettings
from tabletop.vision.incremental import IncrementalDetector
from tests.vision.test_card_reader import FINDER, scene


@pytest.mark.parametrize(("pixels", "accepted"), [
    (0.0, True), (SMALLEST_INDEX_PX, True), (999.0, True),
    (-1.0, False), (1000.0, False), (math.nan, False),
])
def test_the_smallest_index_is_a_size_in_pixels(pixels: float, accepted: bool) -> None:
    if accepted:
        assert DetectorSettings(smallest_index=pixels).smallest_index == pixels
    else:
        with pytest.raises(ValueError, match="the smallest card index must be 0 to 1000 pixels"):
            DetectorSettings(smallest_index=pixels)


def _longer_sides(boxes: np.ndarray) -> np.ndarray:
    return np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])


def test_indices_under_the_floor_are_not_named_and_everything_else_is() -> None:
    image = scene("cards", 0)
    every = Detector(FINDER, DetectorSettings(smallest_index=0.0))
    named = every(image)
    cards = np.array([kind == "card" for kind in named.kinds])
    sides = _longer_sides(named.boxes[cards])
    assert len(sides) >= 6 and not every.small_indices
    floor = float(np.median(sides))  # half the cards fall under it
    floored = Detector(FINDER, DetectorSettings(smallest_index=floor))
    kept = floored(image)
    kept_cards = np.array([kind == "card" for kind in kept.kinds])
    assert kept_cards.any() and (_longer_sides(kept.boxes[kept_cards]) >= floor).all()
    assert kept_cards.sum() < cards.sum()
    # the tiles are named as before
    assert sorted(label for label, kind in zip(kept.labels, kept.kinds, strict=True)
                  if kind == "tile") == sorted(
        label for label, kind in zip(named.labels, named.kinds, strict=True) if kind == "tile")
    small = list(floored.small_indices)
    assert len(small) >= int((sides < floor).sum()) and max(small) < floor


def test_a_far_view_names_only_the_indices_boxed_large_enough() -> None:
    """A card table at a sixth of its size: most indices are boxed under the floor."""
    image = scene("cards", 0)
    far = cv2.resize(image, (image.shape[1] // 6, image.shape[0] // 6),
                     interpolation=cv2.INTER_AREA)
    detector = Detector(FINDER)
    looker = IncrementalDetector(detector)
    seen = looker(far)
    cards = np.array([kind == "card" for kind in seen.kinds], bool)
    assert (_longer_sides(seen.boxes[cards]) >= SMALLEST_INDEX_PX).all()
    assert len(looker.small_indices) >= 4
    assert list(looker.small_indices) == list(detector.small_indices)
    assert max(looker.small_indices) < SMALLEST_INDEX_PX
