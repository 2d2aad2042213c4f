"""Finder training frames of real card indices: every label box lies on an index drawn
in the frame, every index drawn in sight has a label, only the adapt photo's cards are
used, and the folder is a finder data set (class ``card`` = 1)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.studio.card_frames import compose_card_frame, write_card_frames
from tabletop.studio.card_replay import (
    CARD_SPLIT,
    INDEX_MARGIN,
    PAPER_LEVEL,
    card_face,
    load_card_bank,
)
from tabletop.studio.replay import Crop, CropBank, ReplayError
from tabletop.vision.detector import FINDER_NAMES
from tests.shared import REALDATA

pytestmark = pytest.mark.skipif(
    REALDATA is None,
    reason="no real-data folder ($TABLETOP_REALDATA or <repo>/../shared/realdata) to cut "
           "card indices from")

INK_STEP = 60
"""A grey-level change this large is ink, not the camera's noise or JPEG ringing."""


@pytest.fixture(scope="module")
def bank() -> CropBank:
    return load_card_bank(REALDATA, use_images=CARD_SPLIT["adapt"])


def _blank(bank: CropBank) -> CropBank:
    """``bank`` with every card's index replaced by bare paper: the same cards, sizes and
    index boxes, nothing printed."""
    paper = np.full((40, 24, 3), PAPER_LEVEL, np.uint8)
    crops = [Crop(c.label, card_face(paper), c.photo, c.box, c.covered, c.turned)
             for label in bank.labels() for c in bank.of(label)]
    return CropBank(crops, bank.photos, bank.used)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_every_label_box_lies_on_an_index_drawn_in_sight(bank: CropBank, seed: int) -> None:
    table = np.full((720, 1280, 3), (70, 110, 60), np.uint8)
    printed, found = compose_card_frame(bank, np.random.default_rng([seed]), background=table)
    blank, same = compose_card_frame(_blank(bank), np.random.default_rng([seed]),
                                     background=table)
    np.testing.assert_array_equal(found.boxes, same.boxes)  # geometry never reads pixels
    assert len(found) >= 3
    assert set(found.kinds) == {"card"}
    ink = np.abs(cv2.cvtColor(printed, cv2.COLOR_BGR2GRAY).astype(int)
                 - cv2.cvtColor(blank, cv2.COLOR_BGR2GRAY).astype(int)) >= INK_STEP
    labelled = np.zeros_like(ink)
    for x1, y1, x2, y2 in found.boxes:
        # each label box holds ink: an index is printed there (a box on bare paper or
        # on a card covering the index would hold none)
        inside = ink[int(y1):int(np.ceil(y2)), int(x1):int(np.ceil(x2))]
        assert inside.sum() >= 3, (seed, (x1, y1, x2, y2))
        grow = INDEX_MARGIN * max(x2 - x1, y2 - y1) + 3
        top, left = max(0, int(y1 - grow)), max(0, int(x1 - grow))
        labelled[top:int(y2 + grow), left:int(x2 + grow)] = True
    # and every index in sight is labelled: nearly all ink lies round a label box (the
    # rest is what the cut's margin shows of the photo's neighbouring indices)
    assert ink[labelled].sum() >= 0.97 * ink.sum(), seed


def test_writes_a_finder_data_set_of_card_indices(bank: CropBank, tmp_path: Path) -> None:
    out = write_card_frames(tmp_path / "frames", 2, seed=9, bank=bank)
    records = [json.loads(line) for line in (out / "annotations.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        stem = Path(record["image"]).stem
        lines = (out / "labels" / f"{stem}.txt").read_text().splitlines()
        assert len(lines) == len(record["detections"]) > 0
        assert {line.split()[0] for line in lines} == {str(FINDER_NAMES.index("card"))}
        assert all(d["label"] in bank.labels() for d in record["detections"])
        assert cv2.imread(str(out / record["image"])).shape == (720, 1280, 3)
    assert '"tile"' in (out / "data.yaml").read_text() and "nc: 2" in (
        out / "data.yaml").read_text()


def test_refuses_the_measure_photos_cards(tmp_path: Path) -> None:
    measured = load_card_bank(REALDATA, use_images=CARD_SPLIT["measure"])
    with pytest.raises(ReplayError, match="only measured on"):
        write_card_frames(tmp_path / "frames", 1, seed=0, bank=measured)
