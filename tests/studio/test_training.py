"""The ultralytics path end to end: render, train one epoch, detect, eval.

Slow (tens of seconds on 2 cores); fails, naming the train extra, where ultralytics
is not installed; everything runs offline (YOLO_OFFLINE=1, a yaml architecture).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tabletop.cli import main
from tabletop.studio.synth import generate_dataset
from tabletop.vision.detector import Detector, DetectorSettings, ModelError
from tabletop.vision.labels import CLASS_NAMES
from tests.shared import needs

pytestmark = needs("ultralytics")


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        Detector(tmp_path / "nope.pt")


def test_train_one_epoch_then_detect_and_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    data = generate_dataset(tmp_path / "data", 8, seed=5, kind="tiles", size=(320, 192),
                            workers=1)
    code = main(["train", "--data", str(data), "--out", str(tmp_path / "run"), "--epochs", "1",
                 "--imgsz", "160", "--batch", "4", "--workers", "0", "--device", "cpu",
                 "--json"])
    assert code == 0
    weights = Path(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["weights"])
    assert weights.is_file()
    detector = Detector(weights, DetectorSettings(confidence=0.001))
    assert detector.imgsz == 160
    assert list(detector._finder.yolo.names.values()) == list(CLASS_NAMES)
    image = sorted((data / "images").glob("*.jpg"))[0]
    assert main(["detect", str(image), "--model", str(weights), "--conf", "0.001",
                 "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["image"] == str(image)
    assert (line["width"], line["height"]) == (320, 192)
    for item in line["detections"]:  # an untrained model finds junk, but well-formed junk
        x1, y1, x2, y2 = item["box"]
        assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 192
        assert 0 <= item["confidence"] <= 1
    assert main(["eval", "--model", str(weights), "--data", str(data), "--limit", "2",
                 "--json"]) == 0
    scores = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert scores["images"] == 2 and 0 <= scores["identity"] <= 1
    assert scores["card_finder"] == "off"  # a one-stage model has none
