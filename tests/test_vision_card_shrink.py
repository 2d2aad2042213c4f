"""The card finder's shrunk third pass, for card indices too large for the other
two (vision.detector, models/README.md "Session 17")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
cv2 = pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")

from vision.detections import Detections, iou_matrix  # noqa: E402
from vision.detector import (  # noqa: E402
    DEFAULT_CARD_SHRINK,
    MIN_CARD_SHRINK,
    SHRUNK_CARD_MIN_CONFIDENCE,
    SHRUNK_CARD_MIN_SIDE,
    Detector,
    card_finder_path,
    check_card_shrink,
    large_card_boxes,
)

MODELS = Path(__file__).resolve().parent.parent / "models"
FINDER = MODELS / "tabletop.onnx"
needs_model = pytest.mark.skipif(
    not (FINDER.is_file() and card_finder_path(FINDER).is_file()),
    reason="no model with a card finder shipped")


@pytest.mark.parametrize("shrink", [MIN_CARD_SHRINK, 0.5, 2 / 3, 1.0])
def test_a_usable_shrink_is_kept(shrink: float) -> None:
    assert check_card_shrink(shrink) == shrink


@pytest.mark.parametrize("shrink", [0.0, 0.1, -0.5, 1.01, 2.0])
def test_an_unusable_shrink_is_refused_quoting_it(shrink: float) -> None:
    with pytest.raises(ValueError, match=f"not {shrink!r}"):
        check_card_shrink(shrink)


def boxes(rows: list[tuple[str, float, float, float]]) -> Detections:
    """Detections from (kind, width, height, confidence) rows, side by side."""
    return Detections(
        np.array([[100.0 * i, 0.0, 100.0 * i + w, h] for i, (_, w, h, _) in enumerate(rows)]),
        tuple("JK" for _ in rows), tuple(kind for kind, *_ in rows),  # type: ignore[arg-type,misc]
        np.array([confidence for *_, confidence in rows]))


SIDE, SURE = SHRUNK_CARD_MIN_SIDE, SHRUNK_CARD_MIN_CONFIDENCE


@pytest.mark.parametrize(("row", "kept"), [
    (("card", SIDE, 2 * SIDE, SURE), True),
    (("card", 2 * SIDE, SIDE, 0.9), True),
    (("card", SIDE - 1, 2 * SIDE, 0.9), False),      # narrow: the other passes' to find
    (("card", 2 * SIDE, SIDE - 1, 0.9), False),      # short
    (("card", 2 * SIDE, 2 * SIDE, SURE - 0.01), False),  # not sure enough
    (("tile", 2 * SIDE, 2 * SIDE, 0.9), False),      # the pass joins card indices only
])
def test_large_card_boxes_keeps_large_sure_card_indices_only(
        row: tuple[str, float, float, float], kept: bool) -> None:
    assert len(large_card_boxes(boxes([row]))) == int(kept)


def test_large_card_boxes_of_nothing_is_nothing() -> None:
    assert len(large_card_boxes(Detections.empty())) == 0


@needs_model
@pytest.mark.parametrize(("shrink", "card_finder", "size"), [
    (None, None, int(round(960 * DEFAULT_CARD_SHRINK / 32) * 32) if DEFAULT_CARD_SHRINK < 1
     else None),
    (2 / 3, None, 640),
    (0.5, None, 480),
    (1.0, None, None),
    (0.5, "off", None),   # no card finder, no third pass
])
def test_the_third_pass_size_follows_the_input_size(shrink: float | None,
                                                    card_finder: str | None,
                                                    size: int | None) -> None:
    detector = Detector(FINDER, imgsz=960, card_shrink=shrink, card_finder=card_finder)
    assert detector.shrunk_imgsz == size


def card_scene(index: int) -> Any:
    from vision.synth.dataset import image_seed
    from vision.synth.scene import render_scene

    return render_scene(image_seed(1741, index), 1280, 720, "cards")


def boxed(truth: Detections, found: Detections) -> int:
    """How many of ``truth``'s boxes some card-index box of ``found`` covers at IoU 0.5."""
    cards = found.boxes[np.asarray(found.kinds) == "card"].reshape(-1, 4)
    if len(truth) == 0 or len(cards) == 0:
        return 0
    return int((iou_matrix(truth.boxes, cards).max(axis=1) >= 0.5).sum())


@needs_model
def test_the_third_pass_boxes_more_large_card_indices() -> None:
    """Close-up card scenes: the third pass boxes more of the card indices at least
    50 pixels across than the two passes alone, and never adds a tile box."""
    with_pass = Detector(FINDER, card_shrink=2 / 3)
    without = Detector(FINDER, card_shrink=1.0)
    large_truth = 0
    gained = []
    for index in range(40):
        scene = card_scene(index)
        truth = scene.detections
        sides = np.minimum(truth.boxes[:, 2] - truth.boxes[:, 0],
                           truth.boxes[:, 3] - truth.boxes[:, 1]) if len(truth) else np.zeros(0)
        large = truth[(np.asarray(truth.kinds) == "card") & (sides >= 50)]
        if len(large) == 0:
            continue
        large_truth += len(large)
        found_with, found_without = with_pass.find(scene.image), without.find(scene.image)
        assert (np.asarray(found_with.kinds) == "tile").sum() == (
            np.asarray(found_without.kinds) == "tile").sum()
        gained.append(boxed(large, found_with) - boxed(large, found_without))
    assert large_truth >= 20, "too few close-up card indices rendered to judge"
    assert sum(gained) > 0, gained


@needs_model
def test_a_tile_table_never_runs_the_third_pass() -> None:
    from vision.synth.dataset import image_seed
    from vision.synth.scene import render_scene

    detector = Detector(FINDER, card_shrink=0.5)
    calls: list[int] = []
    original = detector._card_finder_pass

    def counted(image: Any, size: int) -> Detections:
        calls.append(size)
        return original(image, size)

    detector._card_finder_pass = counted  # type: ignore[method-assign]
    tile_only = 0
    for index in range(3):
        calls.clear()
        scene = render_scene(image_seed(1743, index), 1280, 720, "tiles")
        found = detector.find(scene.image)
        if "card" not in found.kinds:
            tile_only += 1
            assert calls == []
        else:  # a false card box: the card finder's three passes run
            assert sorted(calls) == sorted([960, 1440, 480])
    assert tile_only >= 1


@needs_model
@pytest.mark.parametrize(("command", "value"), [("detect", "3"), ("detect", "0.1"),
                                                ("run", "3"), ("eval", "0")])
def test_the_command_line_refuses_an_unusable_shrink_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, value: str) -> None:
    from tabletop.cli import EXIT_BAD_INPUT, main

    image = tmp_path / "frame.jpg"
    cv2.imwrite(str(image), np.full((72, 128, 3), 90, np.uint8))
    argv = {"detect": ["detect", str(image)],
            "eval": ["eval", "--data", str(tmp_path)],
            "run": ["run", "--source", str(tmp_path), "--variant", "rommee",
                    "--players", "A,B", "--headless"]}[command]
    assert main([*argv, "--card-shrink", value]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "card shrink must be" in err and len(err.strip().splitlines()) == 1


@needs_model
def test_eval_names_the_shrink_it_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    import json

    from tabletop.cli import main
    from vision.synth.dataset import generate_dataset

    data = tmp_path / "set"
    generate_dataset(data, 1, seed=1745, kind="cards", workers=1)
    for shrink in ("1", "0.5"):
        assert main(["eval", "--data", str(data), "--json", "--card-shrink", shrink]) == 0
        assert json.loads(capsys.readouterr().out)["card_shrink"] == float(shrink)
