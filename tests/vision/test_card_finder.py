"""The card finder: a second finder trained for card indices (``NAME.cards.onnx``)
whose boxes join or replace the finder's card boxes on frames where the finder
boxed a card index (vision.detector; models/README.md, "Model")."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tabletop.vision.detections import Detections
from tabletop.vision.detector import (
    CARD_FINDER_WAYS,
    SHIPPED_MODELS,
    Detector,
    DetectorSettings,
    ModelError,
    card_finder_path,
    check_card_finder,
    reader_path,
)
from tests.shared import need, need_module

FINDER = SHIPPED_MODELS / "tabletop.onnx"


def as_rows(detections: Detections) -> set[tuple[str, tuple[float, ...], float]]:
    return {(kind, tuple(round(float(v), 2) for v in box), round(float(confidence), 3))
            for kind, box, confidence in zip(detections.kinds, detections.boxes,
                                             detections.confidences, strict=True)}


def scene(kind: str, index: int) -> Any:
    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene

    rendered = render_scene(image_seed(1597, index), 1280, 720, kind)
    return cv2.imdecode(np.frombuffer(rendered.encoded, np.uint8), cv2.IMREAD_COLOR)


def model_dir(tmp_path: Path, card_finder: Path | None, shipped: Path = FINDER) -> Path:
    """The shipped finder (``shipped``: its .onnx or .pt) and reader copied to
    ``tmp_path``, with ``card_finder`` (when given) as their card finder."""
    finder = tmp_path / f"model{shipped.suffix}"
    shutil.copyfile(shipped, finder)
    shutil.copyfile(reader_path(FINDER), reader_path(finder))
    if card_finder is not None:
        shutil.copyfile(card_finder, card_finder_path(finder))
    return finder


@pytest.mark.parametrize("way", CARD_FINDER_WAYS)
def test_a_known_way_is_kept(way: str) -> None:
    assert check_card_finder(way) == way


@pytest.mark.parametrize("way", ["", "Merge", "both", "on"])
def test_an_unknown_way_is_refused_quoting_it(way: str) -> None:
    with pytest.raises(ValueError, match=f"not {way!r}"):
        check_card_finder(way)


def test_the_command_line_offers_the_detector_s_ways() -> None:
    from tabletop.commands_vision import CARD_FINDER_CHOICES

    assert CARD_FINDER_CHOICES == CARD_FINDER_WAYS


def test_card_finder_lives_beside_the_finder_in_its_format() -> None:
    assert card_finder_path(Path("m/x.pt")) == Path("m/x.cards.pt")
    assert card_finder_path(Path("m/x.onnx")) == Path("m/x.cards.onnx")


@pytest.mark.parametrize(("way", "error"), [
    (None, None),
    ("off", None),
    ("merge", "is missing"),
    ("replace", "is missing"),
])
def test_a_model_without_a_card_finder(tmp_path: Path, way: str | None,
                                       error: str | None) -> None:
    finder = model_dir(tmp_path, None)
    if error is None:
        assert Detector(finder, DetectorSettings(card_finder=way)).card_finder_way == "off"
    else:
        with pytest.raises(ModelError, match=error):
            Detector(finder, DetectorSettings(card_finder=way))


@pytest.mark.parametrize("content", [b"", b"not an onnx graph", b"\x08\x07" * 64],
                         ids=["empty", "text", "garbage"])
def test_a_corrupt_card_finder_is_refused_naming_it(tmp_path: Path, content: bytes) -> None:
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(content)
    finder = model_dir(tmp_path, corrupt)
    with pytest.raises(ModelError, match=r"cannot load .*model\.cards\.onnx"):
        Detector(finder, DetectorSettings(card_finder="merge"))


def test_a_card_finder_with_other_classes_is_refused(tmp_path: Path) -> None:
    onnx = need_module("onnx")
    model = onnx.load(str(FINDER))
    for entry in model.metadata_props:
        if entry.key == "names":
            entry.value = "{0: 'tile', 1: 'card', 2: 'coin'}"
    wrong = tmp_path / "wrong.onnx"
    onnx.save(model, str(wrong))
    finder = model_dir(tmp_path, wrong)
    with pytest.raises(ModelError, match="has classes"):
        Detector(finder, DetectorSettings(card_finder="merge"))


@pytest.mark.parametrize(("way", "runtime"), [
    ("merge", ".onnx"), ("replace", ".onnx"), ("merge", ".pt")])
def test_the_finder_as_its_own_card_finder_changes_nothing(tmp_path: Path, way: str,
                                                            runtime: str) -> None:
    """Its card boxes are the finder's own, so either way gives the finder's boxes,
    in ONNX Runtime and in ultralytics alike."""
    shipped = FINDER.with_suffix(runtime)
    if runtime == ".pt":
        need("ultralytics")
        if not shipped.is_file():
            pytest.skip("no .pt weights shipped")
    finder = model_dir(tmp_path, shipped, shipped)
    plain = Detector(finder, DetectorSettings(card_finder="off"))
    joined = Detector(finder, DetectorSettings(card_finder=way))
    for kind, index in (("cards", 0), ("mixed", 1)):
        image = scene(kind, index)
        boxes = plain.find(image)
        assert "card" in boxes.kinds
        assert as_rows(joined.find(image)) == as_rows(boxes)
        assert as_rows(joined(image)) == as_rows(plain(image))


class CountingFinder:
    """Wraps a loaded card finder and counts its passes."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.passes = inner, 0
        self.names = inner.names

    def __call__(self, *args: Any) -> Detections:
        self.passes += 1
        result: Detections = self.inner(*args)
        return result


def test_the_card_finder_runs_only_where_the_finder_saw_a_card(tmp_path: Path) -> None:
    detector = Detector(model_dir(tmp_path, FINDER), DetectorSettings(card_finder="merge"))
    counter = CountingFinder(detector._card_finder)
    detector._card_finder = counter  # type: ignore[assignment]
    tiles = scene("tiles", 2)
    assert "card" not in detector.find(tiles).kinds
    assert counter.passes == 0
    detector.find(scene("cards", 0))
    # the base pass, the zoomed one and, as the finder boxed an index over 43 px, the
    # card indices' two zoomed-out ones
    assert counter.passes == 4
    blank = np.full((720, 1280, 3), 128, np.uint8)
    assert len(detector(blank)) == 0 and counter.passes == 4


@pytest.mark.parametrize(("way", "code", "message"), [
    ("merge", 2, "is missing"),
    ("sideways", 2, "invalid choice"),
])
def test_the_command_line_refuses_a_card_finder_it_cannot_use(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], way: str, code: int,
        message: str) -> None:
    from tabletop.cli import main

    finder = model_dir(tmp_path, None)
    image = tmp_path / "frame.jpg"
    cv2.imwrite(str(image), np.full((72, 128, 3), 90, np.uint8))
    try:
        result = main(["detect", str(image), "--model", str(finder), "--card-finder", way])
    except SystemExit as exit_:  # argparse refuses a choice itself
        result = int(exit_.code or 0)
    assert result == code
    assert message in capsys.readouterr().err


def test_the_live_command_refuses_a_missing_card_finder_before_watching(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import EXIT_BAD_INPUT, main

    finder = model_dir(tmp_path, None)
    frames = tmp_path / "frames"
    frames.mkdir()
    code = main(["run", "--source", str(frames), "--variant", "rommee", "--players", "A,B",
                 "--headless", "--model", str(finder), "--card-finder", "merge"])
    assert code == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "is missing" in err and len(err.strip().splitlines()) == 1
