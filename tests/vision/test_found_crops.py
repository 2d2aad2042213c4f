"""Crops of a finder's own boxes for reader training (``extract_found``): each box is
labelled by its overlap with the rendered truth, the finder's false alarms as ``none``,
and boxes that are neither are left out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tabletop.studio.reader_training import (
    FOUND_NONE_CLEAR,
    STORED_SIZE,
    extract_found,
    label_found,
)
from tabletop.vision.detections import Detections, iou_matrix
from tabletop.vision.labels import CLASS_NAMES, TILE_LABELS, class_id
from tabletop.vision.reader import NONE_INDEX

TRUTH = Detections(np.array([[0, 0, 40, 60], [100, 0, 160, 80]], float), ("7H", "R5"),
                   ("card", "tile"), np.ones(2))
SEVEN_OF_HEARTS = class_id("7H", "card")
RED_FIVE = class_id("R5", "tile")


@pytest.mark.parametrize(("box", "kind", "expected"), [
    ([0, 0, 40, 60], "card", SEVEN_OF_HEARTS),          # on the index
    ([4, 4, 44, 64], "card", SEVEN_OF_HEARTS),          # shifted, IoU 0.67
    ([300, 200, 340, 260], "card", NONE_INDEX),         # bare table
    ([120, 20, 135, 40], "card", NONE_INDEX),           # a tile's print read as a card index
    ([15, 0, 55, 60], "card", None),                    # IoU 0.45: half on the index
    ([100, 0, 160, 80], "card", None),                  # a whole tile boxed as a card index
    ([100, 0, 160, 80], "tile", RED_FIVE),              # on the tile
    ([300, 200, 360, 280], "tile", NONE_INDEX),
    ([0, 0, 40, 60], "tile", None),                     # a card index boxed as a tile
])
def test_found_boxes_are_labelled_by_their_overlap_with_the_truth(
        box: list[float], kind: str, expected: int | None) -> None:
    found = Detections(np.array([box], float), ("JK",), (kind,), np.array([0.5]))  # type: ignore[arg-type]
    assert label_found(found, TRUTH) == [expected]


@pytest.mark.parametrize(("box", "expected"), [
    ([300, 200, 340, 260], NONE_INDEX),         # bare table: clear of everything
    ([0, 0, 40, 60], SEVEN_OF_HEARTS),          # on the index: still the item
    ([0, 0, 40, 20], None),                     # the index's rank alone (IoU 0.33, a third)
    ([-30, -20, 40, 100], None),                # round the index and more (IoU 0.29)
    ([120, 20, 135, 40], None),                 # a tile's print: on a labelled item
    ([35, 55, 60, 70], NONE_INDEX),             # grazing the index's corner (0.05)
])
def test_with_clear_a_false_alarm_on_part_of_an_item_is_left_out(
        box: list[float], expected: int | None) -> None:
    found = Detections(np.array([box], float), ("JK",), ("card",), np.array([0.5]))  # type: ignore[arg-type]
    assert label_found(found, TRUTH, clear=FOUND_NONE_CLEAR) == [expected]


def test_found_boxes_on_an_empty_table_are_all_false_alarms() -> None:
    empty = Detections(np.zeros((0, 4)), (), (), np.zeros(0))
    found = Detections(np.array([[0, 0, 10, 10], [20, 20, 30, 40]], float), ("JK", "JK"),
                       ("card", "tile"), np.array([0.5, 0.4]))
    assert label_found(found, empty) == [NONE_INDEX, NONE_INDEX]
    assert label_found(empty, TRUTH) == []


def test_extract_found_crops_the_finders_card_boxes(tmp_path: Path) -> None:
    from tabletop.studio.synth import generate_dataset
    from tabletop.vision.detector import Detector, DetectorSettings

    detector = Detector(settings=DetectorSettings(confidence=0.1))
    data = generate_dataset(tmp_path / "data", 2, seed=41, kind="mixed", size=(960, 540),
                            workers=1)
    calls: list[int] = []

    def find(image: object) -> Detections:
        calls.append(1)
        return detector.find(image)  # type: ignore[arg-type]

    out = extract_found(data, tmp_path / "found.npz", find)
    stored = np.load(out)
    images, labels = stored["images"], stored["labels"]
    assert len(calls) == 2
    assert images.shape[1:] == (STORED_SIZE, STORED_SIZE, 3) and images.dtype == np.uint8
    assert len(images) == len(labels) > 0
    # card-index boxes only: card labels or none, never a tile's
    cards = (labels >= len(TILE_LABELS)) & (labels < len(CLASS_NAMES))
    assert np.all(cards | (labels == NONE_INDEX))
    assert cards.sum() > 0
    tiles_too = np.load(extract_found(data, tmp_path / "both.npz", detector.find,
                                      kinds=("card", "tile")))["labels"]
    assert (tiles_too < len(TILE_LABELS)).sum() > 0
    assert len(tiles_too) > len(labels)


def test_the_card_finder_s_own_boxes_come_without_the_first_finder_s_gate(
        tmp_path: Path) -> None:
    from tabletop.studio.evaluate import labelled_images
    from tabletop.studio.synth import generate_dataset
    from tabletop.vision.detector import Detector, DetectorSettings

    detector = Detector(settings=DetectorSettings(confidence=0.1))
    data = generate_dataset(tmp_path / "data", 1, seed=41, kind="mixed", size=(960, 540),
                            workers=1)
    image, _ = next(labelled_images(data))
    own = detector.card_finder_boxes(image)
    assert len(own) > 0 and set(own.kinds) == {"card"}
    # find() joins the card finder's boxes to the first finder's: each of its own
    # boxes is there, or merged with one of the first finder's that overlaps it
    joined = detector.find(image)
    cards = joined[np.asarray(joined.kinds) == "card"]
    assert iou_matrix(own.boxes, cards.boxes).max(axis=1).min() > 0.5
    out = np.load(extract_found(data, tmp_path / "own.npz", detector.card_finder_boxes))
    assert len(out["labels"]) > 0


def test_a_model_without_a_card_finder_has_no_card_finder_boxes(tmp_path: Path) -> None:
    import shutil

    from tabletop.vision.detector import DEFAULT_MODELS, Detector, reader_path

    finder = tmp_path / "model.onnx"
    shutil.copyfile(DEFAULT_MODELS[0], finder)
    shutil.copyfile(reader_path(DEFAULT_MODELS[0]), reader_path(finder))
    detector = Detector(finder)
    assert len(detector.card_finder_boxes(np.full((360, 640, 3), 120, np.uint8))) == 0
