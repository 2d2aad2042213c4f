"""Card indices read at several turns (vision.reader.Reader's ``card_turns``): the
arithmetic of the averaged reading, that tiles are read once, that an index upside
down reads as one upright does, and the option's range on every entry point."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.vision.crops import CONTEXT, CROP_SIZE, crops
from tabletop.vision.reader import (
    DEFAULT_CARD_TURNS,
    QUARTER_TURNS,
    VIEW_SHIFTS,
    Reader,
    check_card_turns,
    decide,
    softmax,
)
from tests.shared import SHIPPED_MODELS

SHIPPED_READER = SHIPPED_MODELS / "tabletop.reader.onnx"


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader(SHIPPED_READER)


@pytest.fixture(scope="module")
def mixed_scene() -> tuple[np.ndarray, np.ndarray, list[str]]:
    from tabletop.studio.synth.scene import render_scene

    scene = render_scene(21, kind="mixed")
    kinds = list(scene.detections.kinds)
    assert {"tile", "card"} <= set(kinds)  # the test needs both kinds
    return scene.image, scene.detections.boxes, kinds


@pytest.mark.parametrize(("turns", "views"), [(2, 1), (4, 1), (2, 3)])
def test_card_indices_average_their_turned_readings_and_tiles_are_read_once(
        reader: Reader, mixed_scene: tuple[np.ndarray, np.ndarray, list[str]],
        turns: int, views: int) -> None:
    image, boxes, kinds = mixed_scene
    per_view = [crops(image, boxes, reader.size, shift=shift) for shift in VIEW_SHIFTS[:views]]
    plain = np.mean([softmax(reader.logits(batch)) for batch in per_view], axis=0)
    turned = np.mean([softmax(reader.logits(np.ascontiguousarray(np.rot90(batch, turn, (1, 2)))))
                      for batch in per_view for turn in QUARTER_TURNS[:turns]], axis=0)
    is_card = np.array([kind == "card" for kind in kinds])
    expected = np.where(is_card[:, None], turned, plain)
    labels, probabilities = reader(image, boxes, kinds, views, card_turns=turns)
    expected_labels, expected_probabilities = decide(expected, kinds)
    assert labels == expected_labels
    assert np.allclose(probabilities, expected_probabilities)
    # the tiles' readings are exactly those of one turn
    once_labels, once_probabilities = reader(image, boxes, kinds, views)
    tiles = ~is_card
    assert [label for label, tile in zip(labels, tiles, strict=True) if tile] == [
        label for label, tile in zip(once_labels, tiles, strict=True) if tile]
    assert np.array_equal(probabilities[tiles], once_probabilities[tiles])
    assert not np.allclose(probabilities[is_card], once_probabilities[is_card])


def test_an_index_upside_down_reads_as_it_does_upright(
        reader: Reader, mixed_scene: tuple[np.ndarray, np.ndarray, list[str]]) -> None:
    image, boxes, kinds = mixed_scene
    height, width = image.shape[:2]
    # Square boxes whose crop is the frame's own pixels (scale 1, whole-pixel
    # centres), so the crop of the frame turned upside down is exactly the
    # crop turned upside down.
    half = CROP_SIZE / CONTEXT / 2
    centres = [np.round([(x1 + x2) / 2, (y1 + y2) / 2])
               for (x1, y1, x2, y2), kind in zip(boxes, kinds, strict=True) if kind == "card"]
    upright_boxes = np.array([[x - half, y - half, x + half, y + half] for x, y in centres])
    turned_boxes = np.array([[width - x - half, height - y - half, width - x + half,
                              height - y + half] for x, y in centres])
    upside_down = np.ascontiguousarray(image[::-1, ::-1])
    card_kinds = ["card"] * len(centres)
    for turns, alike in ((1, False), (2, True), (4, True)):
        upright = reader(image, upright_boxes, card_kinds, card_turns=turns)
        turned = reader(upside_down, turned_boxes, card_kinds, card_turns=turns)
        same = upright[0] == turned[0] and np.allclose(upright[1], turned[1], atol=1e-5)
        # one reading sees two different crops; two or four turns the same ones
        assert same == alike, (turns, upright, turned)


@pytest.mark.parametrize("turns", [0, 3, 5, -2])
def test_card_turns_out_of_range_are_refused(reader: Reader, turns: int) -> None:
    from tabletop.vision.detector import DetectorSettings

    message = f"card turns must be 1, 2 or 4, not {turns}"
    with pytest.raises(ValueError, match=message):
        check_card_turns(turns)
    with pytest.raises(ValueError, match=message):
        reader(np.zeros((64, 64, 3), np.uint8), [[0, 0, 9, 9]], ["card"], card_turns=turns)
    with pytest.raises(ValueError, match=message):
        DetectorSettings(card_turns=turns)


def test_the_detector_reads_cards_at_the_default_turns_unless_told() -> None:
    from tabletop.vision.detector import Detector, DetectorSettings

    assert DEFAULT_CARD_TURNS in (2, len(QUARTER_TURNS))
    assert Detector().settings.card_turns == DEFAULT_CARD_TURNS
    assert Detector(settings=DetectorSettings(card_turns=1)).settings.card_turns == 1


def test_the_command_line_refuses_bad_card_turns(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import EXIT_BAD_INPUT, main

    image = tmp_path / "frame.jpg"
    cv2.imwrite(str(image), np.full((72, 128, 3), 90, np.uint8))
    assert main(["detect", str(image), "--card-turns", "3"]) == EXIT_BAD_INPUT
    assert "card turns must be 1, 2 or 4, not 3" in capsys.readouterr().err
    assert main(["detect", str(image), "--card-turns", "1", "--json"]) == 0
