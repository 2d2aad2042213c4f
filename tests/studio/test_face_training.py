"""The face reader's training (studio.face_training): rendered face crops in resumable
chunks, a short run from scratch, its ONNX file read by vision.card_faces.FaceReader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tabletop.studio import face_training
from tabletop.studio.synth.card_faces import face_crops
from tabletop.vision.card_faces import FACE_HEIGHT, FACE_WIDTH, FaceReader
from tabletop.vision.reader import NONE_INDEX, READER_CLASSES, kind_mask


def test_face_crops_are_upright_faces_of_cards_and_some_none() -> None:
    images, classes = face_crops(60, seed=4)
    assert images.shape == (60, FACE_HEIGHT, FACE_WIDTH, 3) and images.dtype == np.uint8
    cards = kind_mask("card")
    assert all(cards[c] for c in classes)
    assert 0 < int((classes == NONE_INDEX).sum()) < 30
    # the same seed, the same crops
    again, again_classes = face_crops(60, seed=4)
    assert np.array_equal(images, again) and np.array_equal(classes, again_classes)


def test_rendering_resumes_from_the_chunks_already_there(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(face_training, "CHUNK", 10)
    first = face_training.render(tmp_path, 25, seed=100)
    assert [p.name for p in first] == ["chunk000.npz", "chunk001.npz", "chunk002.npz"]
    stamps = [p.stat().st_mtime_ns for p in first]
    first[1].unlink()
    again = face_training.render(tmp_path, 25, seed=100)
    assert [p.stat().st_mtime_ns for p in again][::2] == stamps[::2]  # kept, not redrawn
    images, classes = face_training.load([tmp_path])
    assert len(images) == len(classes) == 25


def test_a_short_run_exports_a_face_reader_that_reads(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(face_training, "CHUNK", 64)
    crops = face_training.render(tmp_path / "crops", 64, seed=7)
    out = face_training.train(crops, tmp_path / "run", held=crops, epochs=1, batch=32,
                              threads=1, log=lambda _: None)
    reader = FaceReader(out)
    images, _ = face_training.load(crops)
    probabilities = reader.read_crops(images[:5])
    assert probabilities.shape == (5, len(READER_CLASSES))
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    assert np.all(probabilities[:, ~kind_mask("card")] == 0.0)  # cards and none only
    with pytest.raises(ValueError, match="is a run of 1 epochs, not 3"):
        face_training.train(crops, tmp_path / "run", epochs=3, threads=1, log=lambda _: None)


class Stopped(Exception):
    pass


def test_a_stopped_run_goes_on_after_its_last_epoch(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(face_training, "CHUNK", 48)
    crops = face_training.render(tmp_path / "crops", 48, seed=8)

    def stop_after_the_first(line: str) -> None:
        if line.startswith("epoch 1/2"):
            raise Stopped

    with pytest.raises(Stopped):
        face_training.train(crops, tmp_path / "run", epochs=2, batch=32, threads=1,
                            log=stop_after_the_first)
    said: list[str] = []
    face_training.train(crops, tmp_path / "run", epochs=2, batch=32, threads=1,
                        log=said.append)
    assert "resuming after epoch 1" in said
    assert [line.split(":")[0] for line in said if line.startswith("epoch")] == ["epoch 2/2"]
    assert (tmp_path / "run" / "face.onnx").is_file()


def test_training_without_crops_is_refused_naming_the_place(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no face crops in"):
        face_training.load([tmp_path])
