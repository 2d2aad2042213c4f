"""The accelerator's campaign: render, train the finder and both readers within a
budget, and make a model folder of what it trained.  Runs end to end on the CPU at a
tiny size (about a minute on 2 cores)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tabletop.studio.campaign import MIN_SCENES, _card_classes, fitted_count, labelled_crops, main
from tabletop.vision.labels import TILE_LABELS
from tabletop.vision.reader import NONE_INDEX, READER_CLASSES
from tests.shared import need, needs


@pytest.mark.parametrize(("count", "pace", "rest", "left", "expected"), [
    (100, 0.1, 200, 60.0, 100),          # 20 s wanted, 60 s left: all of it
    (100, 0.1, 200, 10.0, 50),           # half the time the rest needs: half of each
    (100, 0.1, 200, 0.0, MIN_SCENES),    # out of time: the floor
    (100, 0.1, 200, -5.0, MIN_SCENES),   # past it: the floor too
    (10, 0.1, 2000, 1.0, 10),            # the floor is never more than was asked for
    (100, 0.0, 200, 1.0, 100),           # no pace measured yet: as asked
])
def test_the_kinds_left_share_the_render_time(count: int, pace: float, rest: int, left: float,
                                              expected: int) -> None:
    assert fitted_count(count, pace, rest, left) == expected


def test_the_card_reader_learns_card_indices_and_none_alone() -> None:
    names = [READER_CLASSES[i] for i in _card_classes()]
    assert NONE_INDEX in _card_classes()
    assert not set(names) & set(TILE_LABELS)
    assert len(names) == len(READER_CLASSES) - len(TILE_LABELS)


def test_labelled_crops_cut_every_item_of_the_chosen_photos(tmp_path: Path) -> None:
    from tabletop.studio.synth import generate_dataset
    from tabletop.vision.detections import read_jsonl

    data = generate_dataset(tmp_path / "data", 3, seed=4, kind="tiles", size=(320, 192),
                            workers=1)
    records = read_jsonl(data / "annotations.jsonl")
    out = labelled_crops(data / "annotations.jsonl", None, tmp_path / "all.npz")
    stored = np.load(out)
    assert len(stored["labels"]) == sum(len(r.detections) for r in records)
    assert stored["images"].shape[1:] == (96, 96, 3)
    first = Path(records[0].image).stem
    one = np.load(labelled_crops(data / "annotations.jsonl", [first], tmp_path / "one.npz"))
    assert len(one["labels"]) == len(records[0].detections)
    with pytest.raises(ValueError, match="no labelled item"):
        labelled_crops(data / "annotations.jsonl", ["nothing-of-that-name"],
                       tmp_path / "none.npz")


@needs("ultralytics")
def test_a_campaign_trains_within_its_budget_and_leaves_a_model_folder(tmp_path: Path) -> None:
    need("onnx")
    from tabletop.studio.synth import generate_dataset
    from tabletop.vision.detector import Detector

    real = generate_dataset(tmp_path / "real", 2, seed=9, kind="tiles", size=(640, 360),
                            workers=1)
    crops = labelled_crops(real / "annotations.jsonl", None, tmp_path / "real.npz")
    out = tmp_path / "out"
    assert main(["run", "--out", str(out), "--work", str(tmp_path / "work"),
                 "--real", str(crops), "--tiles", "3", "--cards", "3", "--mixed", "0",
                 "--held", "2", "--seconds", "60", "--finder-imgsz", "160",
                 "--finder-batch", "2", "--workers", "1", "--real-repeats", "2"]) == 0
    stages = json.loads((out / "campaign.json").read_text())
    assert stages["rendered tiles"]["scenes"] == 3
    assert stages["cut crops"]["real"] == 2 * len(np.load(crops)["labels"])
    # the finder ends on its own clock, or is stopped at the budget with its last epoch
    assert stages["finder"]["exit"] in (0, "stopped at the budget")
    assert stages["finder"]["at_s"] < 60 + 35
    for name in ("finder.pt", "reader.pt", "cards.reader.pt", "results.csv"):
        assert (out / name).is_file(), name
    assert "held-out accuracy" in (out / "readers.log").read_text()

    folder = tmp_path / "model"
    assert main(["export", str(out), "--out", str(folder)]) == 0
    detector = Detector(folder / "tabletop.onnx")
    import cv2

    image = cv2.imread(str(real / "images" / "000000.jpg"))
    found = detector(image)
    assert set(found.kinds) <= {"tile", "card"}
    # the exported readers are the campaign's, not copies of the shipped ones
    shipped = Path(__file__).resolve().parents[2] / "models"
    for name in ("tabletop.reader.onnx", "tabletop.cards.reader.onnx"):
        assert (folder / name).read_bytes() != (shipped / name).read_bytes(), name
    assert (folder / "tabletop.cards.onnx").read_bytes() == (
        shipped / "tabletop.cards.onnx").read_bytes()
