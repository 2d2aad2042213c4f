"""What the live table keeps of a correction (``vision.corrections``): partial annotation
lines, one per frame, that ``tabletop adapt --corrections`` reads back."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.studio.adapt import read_labelled
from tabletop.vision.corrections import CorrectedItem, CorrectionError, corrections_to_jsonl


def _photo(path: Path, size: tuple[int, int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = np.full((size[1], size[0], 3), 90, np.uint8)
    cv2.rectangle(image, (20, 20), (60, 80), (240, 240, 240), -1)
    cv2.imwrite(str(path), image)
    return path


def test_corrections_become_partial_lines_one_per_frame(tmp_path: Path) -> None:
    frame = np.full((120, 160, 3), 80, np.uint8)
    other = np.full((120, 160, 3), 60, np.uint8)
    saved = _photo(tmp_path / "frames" / "f1.png", size=(160, 120))
    out = tmp_path / "adapt" / "corrections.jsonl"
    written = corrections_to_jsonl([
        CorrectedItem(frame, (10, 10, 40, 50), "r7", "tile"),
        CorrectedItem(other, (0, 0, 30, 30), "7H", "card"),
        CorrectedItem(frame, (50, 10, 80, 50), "JK", "tile"),
        CorrectedItem(saved, (100, 90, 170, 130), "K1", "tile"),  # clipped to the frame
    ], out)
    assert written == 3
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(line["partial"] is True for line in lines)
    assert [[d["label"] for d in line["detections"]] for line in lines] == [
        ["R7", "JK"], ["7H"], ["K1"]]
    assert lines[0]["image"].startswith("images/correction-")
    assert lines[2]["image"] == "../frames/f1.png"
    assert lines[2]["detections"][0]["box"] == [100, 90, 160, 120]
    assert "confidence" not in lines[0]["detections"][0]
    # more corrections later are appended; the same frame is saved once
    assert corrections_to_jsonl([CorrectedItem(frame, (10, 10, 40, 50), "R8", "tile")],
                                out) == 1
    photos = read_labelled([out])
    assert len(photos) == 4 and all(p.partial for p in photos)
    assert photos[0].path == photos[3].path
    assert len(list((out.parent / "images").iterdir())) == 2


def test_a_bad_correction_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'R14' is not a tile token"):
        corrections_to_jsonl([CorrectedItem(np.zeros((8, 8, 3), np.uint8), (0, 0, 4, 4),
                                            "R14", "tile")], tmp_path / "c.jsonl")
    with pytest.raises(CorrectionError, match="must be a BGR image"):
        corrections_to_jsonl([CorrectedItem(np.zeros((8, 8), np.uint8), (0, 0, 4, 4),
                                            "R1", "tile")], tmp_path / "c.jsonl")
    with pytest.raises(CorrectionError, match="cannot read the corrected frame"):
        corrections_to_jsonl([CorrectedItem(tmp_path / "none.jpg", (0, 0, 4, 4), "R1",
                                            "tile")], tmp_path / "c.jsonl")
