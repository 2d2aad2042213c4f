"""Reader crops of card indices at a table's distance: every labelled box lies on a
printed index in full view, of the size asked, and light decks print thinner."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tabletop.studio.synth import shapes
from tabletop.studio.synth.index_crops import (
    INDEX_SIDES,
    index_crops,
    index_design,
    render_meld,
)
from tabletop.vision.reader import NONE_INDEX, READER_CLASSES


@pytest.mark.parametrize("seed", range(8))
def test_every_box_lies_in_the_image_on_printed_ink_of_the_asked_size(seed: int) -> None:
    image, boxes, labels = render_meld(np.random.default_rng(seed))
    assert boxes, "a meld always shows at least its last card's two indices"
    h, w = image.shape[:2]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float64)
    for box, label in zip(boxes, labels, strict=True):
        x1, y1, x2, y2 = box
        assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
        # a turned index's upright box is up to sqrt(2) times its longer side
        assert INDEX_SIDES[0] * 0.8 <= max(x2 - x1, y2 - y1) <= INDEX_SIDES[1] * 1.5
        inside = grey[int(y1) : int(np.ceil(y2)), int(x1) : int(np.ceil(x2))]
        assert inside.max() - inside.min() > 40, f"no printed index under {label}'s box"
        assert label in READER_CLASSES or label == "JK"


def test_a_covered_index_is_never_labelled() -> None:
    rng = np.random.default_rng(5)
    shown = [len(render_meld(rng)[1]) for _ in range(40)]
    # a meld of n cards shows at most n + 1 indices; tight melds hide some of them
    assert min(shown) >= 1 and max(shown) <= 6


def test_crops_are_seeded_and_carry_indices_and_bare_places() -> None:
    images, classes = index_crops(60, seed=3, size=48)
    again, same = index_crops(60, seed=3, size=48)
    np.testing.assert_array_equal(images, again)
    np.testing.assert_array_equal(classes, same)
    assert images.shape[1:] == (48, 48, 3) and len(images) == len(classes) >= 60
    assert (classes == NONE_INDEX).any() and (classes != NONE_INDEX).mean() > 0.6
    assert all(READER_CLASSES[c] == "none" or READER_CLASSES[c][-1] in "SHDC"
               or READER_CLASSES[c].startswith("JK") for c in classes)


@pytest.mark.parametrize("font", ["liberation-sans", "serif"])
def test_a_light_weight_wears_a_face_files_strokes_thinner(font: str) -> None:
    regular = shapes.text_mask("8", font, 400, 60, 36).mean()
    light = shapes.text_mask("8", font, 200, 60, 36).mean()
    assert light < 0.85 * regular


def test_half_the_decks_print_light_indices() -> None:
    rng = np.random.default_rng(0)
    light = [index_design(rng).weight < shapes.THIN_BELOW for _ in range(200)]
    assert 0.35 < np.mean(light) < 0.65
