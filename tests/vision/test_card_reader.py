"""The card reader: a reader fine-tuned on card indices alone
(``NAME.cards.reader.onnx``) that names the card-index boxes while the reader
beside the finder names the tiles (vision.detector; models/README.md, "Model")."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tabletop.vision.detections import Detections
from tabletop.vision.detector import (
    CARD_READER_WAYS,
    SHIPPED_MODELS,
    Detector,
    DetectorSettings,
    ModelError,
    card_finder_path,
    card_reader_path,
    check_card_reader,
    reader_path,
)

FINDER = SHIPPED_MODELS / "tabletop.onnx"


def as_rows(detections: Detections) -> set[tuple[str, str, tuple[float, ...], float]]:
    return {(kind, label, tuple(round(float(v), 2) for v in box), round(float(confidence), 4))
            for kind, label, box, confidence in zip(detections.kinds, detections.labels,
                                                    detections.boxes, detections.confidences,
                                                    strict=True)}


def scene(kind: str, index: int) -> Any:
    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene

    rendered = render_scene(image_seed(1697, index), 1280, 720, kind)
    return cv2.imdecode(np.frombuffer(rendered.encoded, np.uint8), cv2.IMREAD_COLOR)


def model_dir(tmp_path: Path, card_reader: Path | None) -> Path:
    """The shipped finder, reader and card finder copied to ``tmp_path``, with
    ``card_reader`` (when given) as their card reader."""
    finder = tmp_path / "model.onnx"
    shutil.copyfile(FINDER, finder)
    shutil.copyfile(reader_path(FINDER), reader_path(finder))
    if card_finder_path(FINDER).is_file():
        shutil.copyfile(card_finder_path(FINDER), card_finder_path(finder))
    if card_reader is not None:
        shutil.copyfile(card_reader, card_reader_path(finder))
    return finder


@pytest.mark.parametrize("way", CARD_READER_WAYS)
def test_a_known_way_is_kept(way: str) -> None:
    assert check_card_reader(way) == way


@pytest.mark.parametrize("way", ["", "On", "yes", "merge"])
def test_an_unknown_way_is_refused_quoting_it(way: str) -> None:
    with pytest.raises(ValueError, match=f"not {way!r}"):
        check_card_reader(way)


def test_the_command_line_offers_the_detector_s_ways() -> None:
    from tabletop.commands_vision import (
        CARD_READER_CHOICES,
        FACE_CHOICES,
        PALETTE_CHOICES,
        SUIT_COLOUR_CHOICES,
    )
    from tabletop.vision.detector import FACE_WAYS, PALETTE_WAYS, SUIT_COLOUR_WAYS

    assert FACE_CHOICES == FACE_WAYS
    assert CARD_READER_CHOICES == CARD_READER_WAYS
    assert PALETTE_CHOICES == PALETTE_WAYS
    assert SUIT_COLOUR_CHOICES == SUIT_COLOUR_WAYS


@pytest.mark.parametrize("finder", ["m/x.onnx", "m/x.pt"])
def test_card_reader_lives_beside_the_finder_for_both_runtimes(finder: str) -> None:
    assert card_reader_path(Path(finder)) == Path("m/x.cards.reader.onnx")


@pytest.mark.parametrize(("way", "error"), [(None, None), ("off", None), ("on", "is missing")])
def test_a_model_without_a_card_reader(tmp_path: Path, way: str | None,
                                       error: str | None) -> None:
    finder = model_dir(tmp_path, None)
    if error is None:
        detector = Detector(finder, DetectorSettings(card_reader=way))
        assert detector.card_reader_way == "off" and detector.card_reader is None
    else:
        with pytest.raises(ModelError, match=error):
            Detector(finder, DetectorSettings(card_reader=way))


@pytest.mark.parametrize(("way", "used"), [(None, True), ("on", True), ("off", False)])
def test_a_model_with_a_card_reader(tmp_path: Path, way: str | None, used: bool) -> None:
    detector = Detector(model_dir(tmp_path, reader_path(FINDER)),
                        DetectorSettings(card_reader=way))
    assert detector.card_reader_way == ("on" if used else "off")
    assert (detector.card_reader is not None) == used


@pytest.mark.parametrize("content", [b"", b"not an onnx graph", b"\x08\x07" * 64],
                         ids=["empty", "text", "garbage"])
def test_a_corrupt_card_reader_is_refused_naming_it(tmp_path: Path, content: bytes) -> None:
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(content)
    with pytest.raises(ModelError, match=r"cannot load card reader .*model\.cards\.reader"):
        Detector(model_dir(tmp_path, corrupt))


def test_the_reader_as_its_own_card_reader_changes_nothing(tmp_path: Path) -> None:
    """Card boxes read apart from the tiles get the probabilities they got read
    together, so the same reader in both places gives the same detections."""
    finder = model_dir(tmp_path, reader_path(FINDER))
    plain = Detector(finder, DetectorSettings(card_reader="off"))
    split = Detector(finder, DetectorSettings(card_reader="on"))
    for kind, index in (("cards", 0), ("mixed", 1), ("tiles", 2)):
        image = scene(kind, index)
        expected = plain(image)
        assert len(expected) > 0
        assert as_rows(split(image)) == as_rows(expected)


class RecordingReader:
    """Wraps a loaded reader and records the kinds of the boxes it is asked to name."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kinds: list[str] = []

    def probabilities(self, image: Any, boxes: Any, kinds: list[str], *args: Any) -> Any:
        self.kinds.extend(kinds)
        return self.inner.probabilities(image, boxes, kinds, *args)


def test_each_reader_names_only_its_own_kind(tmp_path: Path) -> None:
    detector = Detector(model_dir(tmp_path, reader_path(FINDER)),
                        DetectorSettings(card_reader="on"))
    tiles_reader = RecordingReader(detector.reader)
    cards_reader = RecordingReader(detector.card_reader)
    detector.reader, detector.card_reader = tiles_reader, cards_reader
    found = detector.find(scene("mixed", 1))
    detector._read(scene("mixed", 1), found)
    assert sorted(tiles_reader.kinds + cards_reader.kinds) == sorted(found.kinds)
    assert set(tiles_reader.kinds) == {"tile"} and set(cards_reader.kinds) == {"card"}
    # a table where the finder boxes only tiles never calls the card reader
    tile_table = next(image for image in (scene("tiles", seed) for seed in range(2, 12))
                      if set(detector.find(image).kinds) == {"tile"})
    cards_reader.kinds.clear()
    detector(tile_table)
    assert cards_reader.kinds == []


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["--card-reader", "on"], 2, "is missing"),
    (["--card-reader", "both"], 2, "invalid choice"),
])
def test_the_command_line_refuses_a_card_reader_it_cannot_use(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int,
        message: str) -> None:
    from tabletop.cli import main

    finder = model_dir(tmp_path, None)
    image = tmp_path / "frame.jpg"
    cv2.imwrite(str(image), np.full((72, 128, 3), 90, np.uint8))
    try:
        result = main(["detect", str(image), "--model", str(finder), *argv])
    except SystemExit as exit_:  # argparse refuses a choice itself
        result = int(exit_.code or 0)
    assert result == code
    assert message in capsys.readouterr().err


def test_eval_names_the_card_reader_it_used(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tabletop.cli import main
    from tabletop.studio.synth.dataset import generate_dataset

    data = tmp_path / "set"
    generate_dataset(data, 2, seed=1699, kind="mixed", workers=1)
    finder = model_dir(tmp_path, reader_path(FINDER))
    for way in CARD_READER_WAYS:
        assert main(["eval", "--data", str(data), "--model", str(finder), "--json",
                     "--card-reader", way]) == 0
        assert json.loads(capsys.readouterr().out)["card_reader"] == way


def test_eval_against_a_second_model_compares_them_item_by_item(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tabletop.cli import main
    from tabletop.studio.synth.dataset import generate_dataset

    data = tmp_path / "set"
    generate_dataset(data, 2, seed=1699, kind="mixed", workers=1)
    (tmp_path / "other").mkdir()
    other = model_dir(tmp_path / "other", reader_path(FINDER))  # tiles' reader reads cards
    assert main(["eval", "--data", str(data), "--json", "--against", str(other)]) == 0
    shown = json.loads(capsys.readouterr().out)
    comparison = shown["comparison"]
    assert shown["against"]["model"] == str(other) and comparison["second"] == str(other)
    labelled = shown["labelled"]
    assert comparison["labelled"] == labelled == shown["against"]["labelled"]
    right_first = comparison["both_right"] + comparison["only_first_right"]
    right_second = comparison["both_right"] + comparison["only_second_right"]
    assert right_first == round(shown["identity"] * labelled)
    assert right_second == round(shown["against"]["identity"] * labelled)
    assert 0 < comparison["mcnemar_p"] <= 1
    assert main(["eval", "--data", str(data), "--against", str(other)]) == 0
    assert "exact McNemar p = " in capsys.readouterr().out


def test_the_live_command_refuses_a_missing_card_reader_before_watching(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import EXIT_BAD_INPUT, main

    finder = model_dir(tmp_path, None)
    frames = tmp_path / "frames"
    frames.mkdir()
    code = main(["run", "--source", str(frames), "--variant", "rommee", "--players", "A,B",
                 "--headless", "--model", str(finder), "--card-reader", "on"])
    assert code == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "is missing" in err and len(err.strip().splitlines()) == 1
