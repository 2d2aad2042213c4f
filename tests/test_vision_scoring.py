"""The card scorer (vision.scoring): its features, its fit, its file, and how the
detector uses it to keep faint card-index boxes."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
cv2 = pytest.importorskip("cv2")

from vision.detections import Detections  # noqa: E402
from vision.reader import NONE_INDEX, READER_CLASSES  # noqa: E402
from vision.scoring import (  # noqa: E402
    FEATURES,
    CardScorer,
    ScorerError,
    best_labels,
    card_features,
    fit_logistic,
    logit,
    read_right,
    scorer_path,
)

MODELS = Path(__file__).resolve().parent.parent / "models"
SHIPPED_SCORER = MODELS / "tabletop.scorer.json"


def card_boxes(rows: list[tuple[list[float], float]]) -> Detections:
    return Detections(np.array([box for box, _ in rows], np.float64),
                      tuple("JK" for _ in rows), tuple("card" for _ in rows),  # type: ignore[arg-type]
                      np.array([confidence for _, confidence in rows]))


def reading(label: str, p_label: float, runner_up: str, p_runner_up: float,
            p_none: float) -> np.ndarray:
    row = np.zeros(len(READER_CLASSES))
    row[READER_CLASSES.index(label)] = p_label
    row[READER_CLASSES.index(runner_up)] = p_runner_up
    row[NONE_INDEX] = p_none
    row[READER_CLASSES.index("K1")] = 1.0 - p_label - p_runner_up - p_none  # a tile label
    return row


@pytest.mark.parametrize(("box", "frame", "size", "aspect", "edge"), [
    pytest.param([100, 100, 120, 140], (720, 1280), math.log(40 / 1280), math.log(2), 1.0,
                 id="inside, tall"),
    pytest.param([0, 300, 40, 320], (720, 1280), math.log(40 / 1280), math.log(2), 0.0,
                 id="on the left edge, wide"),
    pytest.param([600, 700, 630, 715], (720, 1280), math.log(30 / 1280), math.log(2), 5 / 30,
                 id="near the bottom"),
    pytest.param([10, 10, 74, 74], (100, 80), math.log(64 / 100), 0.0, 6 / 64,
                 id="portrait frame, square box"),
])
def test_card_features_measure_the_box(box: list[float], frame: tuple[int, int], size: float,
                                       aspect: float, edge: float) -> None:
    found = card_boxes([(box, 0.2)])
    probabilities = reading("7H", 0.6, "7D", 0.2, 0.1)[None]
    features = card_features(found, probabilities, frame)[0]
    named = dict(zip(FEATURES, features, strict=True))
    # the tile label's share is masked away: 0.6 / 0.9 and 0.2 / 0.9 within cards
    assert named["logit_finder"] == pytest.approx(math.log(0.2 / 0.8))
    assert named["logit_label"] == pytest.approx(logit(0.6 / 0.9))
    assert named["logit_none"] == pytest.approx(logit(0.1 / 0.9))
    assert named["label_margin"] == pytest.approx(0.4 / 0.9)
    assert named["log_size"] == pytest.approx(size)
    assert named["abs_log_aspect"] == pytest.approx(aspect)
    assert named["edge_distance"] == pytest.approx(edge)
    assert named["logit_finder_x_label"] == pytest.approx(
        named["logit_finder"] * named["logit_label"])
    assert named["bias"] == 1.0
    assert card_features(Detections.empty(), np.zeros((0, len(READER_CLASSES))),
                         frame).shape == (0, len(FEATURES))


def test_a_card_keeps_its_best_label_even_when_none_is_likelier() -> None:
    probabilities = np.stack([reading("QS", 0.2, "QC", 0.1, 0.6),
                              reading("10D", 0.5, "10H", 0.3, 0.1)])
    labels, within = best_labels(probabilities, ["card", "card"])
    assert labels == ["QS", "10D"]
    assert within.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert within[:, READER_CLASSES.index("K1")].tolist() == [0.0, 0.0]


def test_the_fit_recovers_a_known_logistic_model() -> None:
    rng = np.random.default_rng(5)
    truth = np.array([1.5, -2.0, 0.5])
    features = np.column_stack([rng.normal(size=(20000, 2)), np.ones(20000)])
    right = rng.random(20000) < 1 / (1 + np.exp(-(features @ truth)))
    assert fit_logistic(features, right) == pytest.approx(truth, abs=0.1)


@pytest.mark.parametrize(("features", "right"), [
    pytest.param(np.zeros((0, 3)), np.zeros(0, bool), id="empty"),
    pytest.param(np.zeros((4, 3)), np.zeros(3, bool), id="lengths differ"),
    pytest.param(np.zeros(4), np.zeros(4, bool), id="not a table"),
])
def test_the_fit_refuses_tables_it_cannot_use(features: np.ndarray, right: np.ndarray) -> None:
    with pytest.raises(ValueError, match="want \\(N, F\\) features"):
        fit_logistic(features, right)


def test_the_operating_point_meets_the_default_threshold() -> None:
    weights = [0.0] * (len(FEATURES) - 1) + [1.0]  # the score is the bias alone
    bias = np.zeros((3, len(FEATURES)))
    bias[:, -1] = [logit(0.45), logit(0.45) - 1.0, logit(0.45) + 1.0]
    scored = CardScorer(weights, operating_point=0.45, finder_floor=0.05)(bias, 0.25)
    assert scored[0] == pytest.approx(0.25)
    assert scored[1] < 0.25 < scored[2]


def test_a_scorer_file_round_trips(tmp_path: Path) -> None:
    scorer = CardScorer([0.1 * i for i in range(len(FEATURES))], 0.4, 0.08)
    loaded = CardScorer.load(scorer.save(tmp_path / "x.scorer.json"))
    assert loaded.weights.tolist() == pytest.approx(scorer.weights.tolist())
    assert (loaded.operating_point, loaded.finder_floor) == (0.4, 0.08)
    assert scorer_path(tmp_path / "x.onnx") == tmp_path / "x.scorer.json"


GOOD = {"format": "tabletop-card-scorer/1", "features": list(FEATURES),
        "weights": [0.0] * len(FEATURES), "operating_point": 0.45, "finder_floor": 0.05}


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("{not json", "cannot read card scorer", id="corrupt"),
    pytest.param(json.dumps([1, 2]), "is not a tabletop-card-scorer/1 file", id="a list"),
    pytest.param(json.dumps({**GOOD, "format": "other/2"}), "is not a tabletop-card-scorer",
                 id="another format"),
    pytest.param(json.dumps({**GOOD, "features": ["bias"]}), "scores other features",
                 id="other features"),
    pytest.param(json.dumps({**GOOD, "weights": [1.0]}), "want 9 weights", id="too few weights"),
    pytest.param(json.dumps({**GOOD, "operating_point": 1.5}), "must both lie between 0 and 1",
                 id="operating point out of range"),
    pytest.param(json.dumps({k: v for k, v in GOOD.items() if k != "finder_floor"}),
                 "finder_floor", id="a field missing"),
    pytest.param(json.dumps({**GOOD, "weights": ["a"] * len(FEATURES)}), "could not convert",
                 id="weights not numbers"),
])
def test_a_bad_scorer_file_is_refused_with_its_fault(tmp_path: Path, text: str,
                                                     message: str) -> None:
    path = tmp_path / "bad.scorer.json"
    path.write_text(text)
    with pytest.raises(ScorerError, match=message) as caught:
        CardScorer.load(path)
    assert str(path) in str(caught.value)


def test_read_right_needs_kind_label_and_overlap() -> None:
    truth = Detections(np.array([[0, 0, 20, 30], [100, 100, 120, 130]], np.float64),
                       ("7H", "QS"), ("card", "card"), np.ones(2))
    found = card_boxes([([1, 0, 21, 30], 0.5), ([100, 100, 120, 130], 0.5),
                        ([50, 50, 70, 80], 0.5)])
    assert read_right(found, ["7H", "QC", "7H"], truth).tolist() == [True, False, False]
    assert read_right(found, ["7H", "QS", "7H"], Detections.empty()).tolist() == [False] * 3


shipped = pytest.mark.skipif(not SHIPPED_SCORER.is_file(), reason="no scorer shipped")


@pytest.fixture(scope="module")
def card_scenes() -> list[tuple[np.ndarray, Detections]]:
    from vision.synth.dataset import image_seed
    from vision.synth.scene import render_scene

    scenes = []
    for index in range(8):
        scene = render_scene(image_seed(2718, index), 1280, 720, "cards")
        image = cv2.imdecode(np.frombuffer(scene.encoded, np.uint8), cv2.IMREAD_COLOR)
        scenes.append((image, scene.detections))
    return scenes


@shipped
def test_the_shipped_scorer_judges_faint_card_boxes_and_finds_more_rendered_ones(
        card_scenes: list[tuple[np.ndarray, Detections]]) -> None:
    pytest.importorskip("onnxruntime")
    from vision.detector import Detector
    from vision.evaluate import evaluate

    # The scorer was fitted to the reader's probabilities (session 13); with session
    # 16's card reader naming the card indices it read these scenes no better.
    scored = Detector(card_scorer=True, card_reader="off")
    plain = Detector(card_reader="off")
    assert scored.scorer is not None and plain.scorer is None
    faint = [float(c) for image, _ in card_scenes
             for c, kind in zip(scored.find(image).confidences, scored.find(image).kinds,
                                strict=True) if kind == "card"]
    assert min(faint) < 0.25 <= min(float(c) for image, _ in card_scenes
                                    for c in plain.find(image).confidences)
    with_scorer = evaluate(((truth, scored(image)) for image, truth in card_scenes), "scored")
    without = evaluate(((truth, plain(image)) for image, truth in card_scenes), "plain")
    assert with_scorer.identity > without.identity
    assert with_scorer.precision >= without.precision - 0.02


@shipped
def test_a_broken_scorer_beside_a_model_stops_it_loading(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    from vision.detector import Detector, ModelError

    for name in ("tabletop.onnx", "tabletop.reader.onnx"):
        shutil.copy(MODELS / name, tmp_path / name)
    (tmp_path / "tabletop.scorer.json").write_text("{broken")
    with pytest.raises(ModelError, match="cannot read card scorer"):
        Detector(tmp_path / "tabletop.onnx", card_scorer=True)
    assert Detector(tmp_path / "tabletop.onnx").scorer is None  # not asked for: not read
    (tmp_path / "tabletop.scorer.json").unlink()
    # asked for, none beside the model: none used
    assert Detector(tmp_path / "tabletop.onnx", card_scorer=True).scorer is None


@shipped
def test_fitting_a_scorer_from_the_command_line_writes_a_usable_file(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    from vision.detector import Detector
    from vision.scoring import main
    from vision.synth.dataset import generate_dataset

    data = tmp_path / "cards"
    generate_dataset(data, images=4, seed=77, kind="cards", workers=1)
    out = tmp_path / "fitted.scorer.json"
    assert main(["--data", str(data), "--out", str(out), "--operating-point", "0.5"]) == 0
    fitted = CardScorer.load(out)
    assert fitted.operating_point == 0.5 and fitted.finder_floor == 0.05
    # the finder's confidence and the reader's label both raise the odds of being right
    named = dict(zip(FEATURES, fitted.weights, strict=True))
    assert named["logit_finder"] > 0 and named["logit_label"] > 0
    shutil.copy(MODELS / "tabletop.onnx", tmp_path / "fitted.onnx")
    shutil.copy(MODELS / "tabletop.reader.onnx", tmp_path / "fitted.reader.onnx")
    assert Detector(tmp_path / "fitted.onnx", card_scorer=True).scorer is not None


@shipped
@pytest.mark.parametrize("finder", ["tabletop.onnx", "tabletop.pt"])
def test_both_runtimes_take_card_boxes_down_to_the_floor_and_tiles_to_the_threshold(
        card_scenes: list[tuple[np.ndarray, Detections]], finder: str) -> None:
    if finder.endswith(".pt"):
        pytest.importorskip("ultralytics")
    else:
        pytest.importorskip("onnxruntime")
    from vision.detector import Detector
    from vision.synth.scene import render_scene

    detector = Detector(MODELS / finder, card_scorer=True)
    floor = detector.scorer.finder_floor
    image = card_scenes[0][0]
    mixed = render_scene(21, kind="mixed").image
    found = [detector.find(frame) for frame in (image, mixed)]
    cards = np.concatenate([f.confidences[np.array(f.kinds) == "card"] for f in found])
    tiles = np.concatenate([f.confidences[np.array(f.kinds) == "tile"] for f in found])
    assert cards.min() >= floor and (cards < 0.25).any()
    assert len(tiles) and tiles.min() >= 0.25
