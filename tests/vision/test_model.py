"""The shipped model (models/tabletop.*): loads offline, by default, in both
runtimes, agrees between them, and reads rendered held-out scenes.

The held-out scenes are rendered here from a seed no training image used
(the training set is seed 1, its held-out set seed 2; models/README.md), so
this checks the model, not a file of remembered answers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.studio.evaluate import evaluate
from tabletop.vision.detector import (
    DEFAULT_MODELS,
    SHIPPED_MODELS,
    Detector,
    DetectorSettings,
    card_finder_path,
    card_reader_path,
    reader_path,
)
from tests.shared import VIDEOS, need, needs

SHIPPED_ONNX = SHIPPED_MODELS / "tabletop.onnx"
SHIPPED_PT = SHIPPED_MODELS / "tabletop.pt"
HELD_OUT_SEED = 31337
HELD_OUT_IDENTITY_FLOOR = 0.70
HELD_OUT_PRECISION_FLOOR = 0.80
"""Below the shipped model's figures on these 12 scenes (identity 0.944,
precision 0.951 with session 16's card reader; 0.937 / 0.950 with session 15's
card finder; 0.888 / 0.944 without it, as
session 14's renderer draws them, its close-up scenes
showing cards close up too; 0.822 / 0.911 as session 13's drew them, with the
zoomed finder pass and card indices read twice; session 12's reading once
0.809 / 0.906; session 11's model 0.765 / 0.905
with one pass, as today's renderer draws them; session 3's finder got 0.63
once the decks varied the gap under the rank) and on the model card's 200
held-out images (0.85, 0.91),
leaving room for a retrained model's variance; a model that stopped reading
falls far below them."""



@pytest.fixture(scope="module")
def scenes() -> list[tuple[object, object]]:
    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene

    out = []
    for index in range(12):
        scene = render_scene(image_seed(HELD_OUT_SEED, index), 1280, 720, "mixed")
        image = cv2.imdecode(np.frombuffer(scene.encoded, np.uint8), cv2.IMREAD_COLOR)
        out.append((image, scene.detections))
    return out


def test_the_shipped_model_is_small_and_complete() -> None:
    assert DEFAULT_MODELS[0] == SHIPPED_ONNX
    for path in (SHIPPED_ONNX, reader_path(SHIPPED_ONNX), card_finder_path(SHIPPED_ONNX),
                 card_reader_path(SHIPPED_ONNX)):
        assert path.is_file() and path.stat().st_size < 8_000_000
    assert (SHIPPED_MODELS / "README.md").is_file()


def test_default_model_reads_held_out_scenes(scenes: list[tuple[object, object]]) -> None:
    detector = Detector()  # no path: the shipped ONNX model, nothing downloaded
    assert detector.path == SHIPPED_ONNX and detector.reader is not None
    result = evaluate(((truth, detector(image)) for image, truth in scenes), "held-out")
    assert result.identity >= HELD_OUT_IDENTITY_FLOOR, result.to_text()
    assert result.precision >= HELD_OUT_PRECISION_FLOOR, result.to_text()


CARD_FINDER_GAIN_FLOOR = 0.03
"""Of the card indices in these 12 scenes, the share more read right with the
shipped card finder than without it: it was 0.089 (129 -> 143 of 158) when
it shipped, +0.032 to +0.071 of identity on 200-image rendered sets, and
+0.114 beside the finder trained on racks (80 card scenes, 1012 indices)."""
CARD_FINDER_PRECISION_COST = 0.05
"""What the card finder's extra boxes may cost in precision: on 80 rendered card
scenes (1012 indices) 0.031 beside the previous finder (0.780 -> 0.749) and 0.045
beside the shipped one (0.800 -> 0.755), where it lifts identity by 0.037 and 0.114."""


def test_the_card_finder_reads_more_card_indices(scenes: list[tuple[object, object]]) -> None:
    with_it, without = Detector(), Detector(settings=DetectorSettings(card_finder="off"))
    assert with_it.card_finder_way == "merge" and without.card_finder_way == "off"
    results = [dict(evaluate(((truth, detector(image)) for image, truth in scenes),
                             "held-out").by_kind)["card"]
               for detector in (with_it, without)]
    gain = results[0].identity - results[1].identity
    assert gain >= CARD_FINDER_GAIN_FLOOR, (results[0].to_text(), results[1].to_text())
    assert results[0].precision >= results[1].precision - CARD_FINDER_PRECISION_COST


CARD_READER_GAIN_FLOOR = 0.01
"""Of the card indices of 24 rendered card scenes, read from their labelled
boxes, the share more read right by the shipped card reader than by the reader
that names tiles: it was 0.021 (0.9377 -> 0.9585 of 337) when it shipped, and
+0.012-0.026 of identity on 200-image rendered mixed and card sets; 0.074 (28
cards only it reads right, 3 only the tile reader does) with the full set of
faces installed, as scripts/test installs them."""
CARD_READER_SIGNIFICANCE = 0.01
"""The chance, were both readers equally good, of the card reader winning at least as many
of the cards the two disagree on (exact sign test): the gain is not luck of the scenes."""


@needs("fonts")  # the scenes' decks are drawn from the installed faces
def test_the_card_reader_reads_card_indices_better() -> None:
    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene
    from tabletop.vision.reader import Reader

    readers = (Reader(card_reader_path(SHIPPED_ONNX)), Reader(reader_path(SHIPPED_ONNX)))
    right, labelled, only = [0, 0], 0, [0, 0]
    for index in range(24):
        scene = render_scene(image_seed(31339, index), 1280, 720, "cards")
        image = cv2.imdecode(np.frombuffer(scene.encoded, np.uint8), cv2.IMREAD_COLOR)
        cards = np.asarray(scene.detections.kinds) == "card"
        labels = [label for label, is_card in zip(scene.detections.labels, cards, strict=True)
                  if is_card]
        labelled += len(labels)
        hits = []
        for i, reader in enumerate(readers):
            read, _ = reader(image, scene.detections.boxes[cards], ["card"] * len(labels), 1, 2)
            hits.append([got == want for got, want in zip(read, labels, strict=True)])
            right[i] += sum(hits[i])
        only[0] += sum(a and not b for a, b in zip(*hits, strict=True))
        only[1] += sum(b and not a for a, b in zip(*hits, strict=True))
    assert labelled > 200
    gain = (right[0] - right[1]) / labelled
    assert gain >= CARD_READER_GAIN_FLOOR, (right, labelled)
    disagreed = sum(only)
    p_value = sum(math.comb(disagreed, k) for k in range(only[0], disagreed + 1)) / 2**disagreed
    assert p_value < CARD_READER_SIGNIFICANCE, (only, p_value)


def test_the_default_detector_names_card_indices_with_the_card_reader() -> None:
    assert Detector().card_reader_way == "on"
    assert Detector(settings=DetectorSettings(card_reader="off")).card_reader is None


@pytest.mark.skipif(not SHIPPED_PT.is_file(), reason="no PyTorch copy shipped")
def test_onnx_and_pytorch_copies_agree(scenes: list[tuple[object, object]]) -> None:
    need("ultralytics")
    from tabletop.vision.detections import iou_matrix

    onnx = Detector(SHIPPED_ONNX)
    torch_copy = Detector(SHIPPED_PT, DetectorSettings(imgsz=onnx.imgsz))
    for image, _ in scenes[:4]:
        a, b = onnx(image), torch_copy(image)
        if len(a) == 0 or len(b) == 0:
            assert len(a) == len(b) == 0
            continue
        overlap = iou_matrix(a.boxes, b.boxes)
        matched = overlap.max(axis=1) >= 0.9
        # NMS differs in detail (OpenCV's against torchvision's); almost every box agrees
        assert matched.mean() >= 0.95
        same_label = [a.labels[i] == b.labels[int(overlap[i].argmax())]
                      for i in np.nonzero(matched)[0]]
        assert np.mean(same_label) >= 0.95


def test_detect_command_uses_the_shipped_model(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               scenes: list[tuple[object, object]]) -> None:
    from tabletop.cli import main

    path = tmp_path / "frame.jpg"
    cv2.imwrite(str(path), scenes[0][0])
    assert main(["detect", str(path), "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (line["width"], line["height"]) == (1280, 720)
    assert len(line["detections"]) > 0


def test_the_model_reads_the_sabra_sample_video() -> None:
    """Issue 5's sample video (640x360, tiles only) read frame by frame by the
    shipped model against the renderer's truth; the model card gives identity
    0.997 and precision 0.997 on every 5th frame."""
    from tabletop.live.oracle import EXACT, OracleDetector
    from tabletop.live.sources import open_source

    video = VIDEOS / "sabra.mp4"
    truth = OracleDetector.for_video(video, noise=EXACT)
    detector = Detector()
    source = open_source(video)
    try:
        pairs = [(truth.at(i), detector(frame.image)) for i, frame in enumerate(source)
                 if i % 10 == 0]
    finally:
        source.close()
    result = evaluate(pairs, "sabra video")
    assert result.identity >= 0.95, result.to_text()
    assert result.precision >= 0.95, result.to_text()
