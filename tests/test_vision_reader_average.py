"""A reader file that averages several exported readers (``average_readers``):
it must read exactly as the mean of its members' probabilities, through the
same :class:`vision.reader.Reader` every other reader file goes through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from vision.crops import CROP_SIZE  # noqa: E402
from vision.reader import READER_CLASSES, Reader, decide, softmax  # noqa: E402
from vision.reader_training import average_readers, build_net, export_onnx  # noqa: E402

SMALL = (4, 4, 8, 8, 8, 8, 8)
WIDER = (4, 8, 8, 8, 16, 16, 16)


def _random_reader(path: Path, seed: int, widths: tuple[int, ...] = SMALL) -> Path:
    torch.manual_seed(seed)
    net = build_net(widths=widths)
    with torch.no_grad():
        # a fresh net's outputs are all near zero; spread them so members disagree
        net[-1].weight.mul_(40.0)
        net[-1].bias.uniform_(-3.0, 3.0)
    return export_onnx(net, path)


def _crops(count: int, seed: int) -> Any:
    return np.random.default_rng(seed).integers(0, 256, (count, CROP_SIZE, CROP_SIZE, 3),
                                                dtype=np.uint8)


@pytest.mark.parametrize("member_widths", [
    (SMALL, SMALL),
    (SMALL, WIDER),
    (SMALL, WIDER, SMALL),
])
def test_averaged_reader_reads_the_mean_of_its_members(tmp_path: Path,
                                                       member_widths: tuple[Any, ...]) -> None:
    members = [_random_reader(tmp_path / f"m{i}.onnx", seed=10 + i, widths=widths)
               for i, widths in enumerate(member_widths)]
    averaged = average_readers(members, tmp_path / "averaged.onnx")
    batch = _crops(9, seed=3)
    member_probabilities = [softmax(Reader(path).logits(batch)) for path in members]
    mean = np.mean(member_probabilities, axis=0)
    reader = Reader(averaged)
    got = softmax(reader.logits(batch))
    assert got.shape == (9, len(READER_CLASSES))
    assert np.allclose(got, mean, atol=1e-6)
    # the members really disagree, so the mean is not any one of them
    assert not any(np.allclose(got, one, atol=1e-3) for one in member_probabilities)
    # and the decision follows the mean, within a card index's labels
    labels, scores = decide(got, ["card"] * len(batch))
    assert (labels, list(scores)) == (decide(mean, ["card"] * len(batch))[0],
                                      pytest.approx(list(decide(mean, ["card"] * 9)[1]),
                                                    abs=1e-6))
    meta = {entry.key: entry.value for entry in onnx.load(str(averaged)).metadata_props}
    assert json.loads(meta["classes"]) == list(READER_CLASSES)
    assert json.loads(meta["averages"]) == [path.name for path in members]


def test_averaged_reader_reads_boxes_in_an_image_like_its_members(tmp_path: Path) -> None:
    members = [_random_reader(tmp_path / f"m{i}.onnx", seed=20 + i) for i in range(2)]
    averaged = Reader(average_readers(members, tmp_path / "averaged.onnx"))
    image = np.random.default_rng(4).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 40, 50], [60, 20, 100, 40], [100, 60, 150, 110]], float)
    kinds: list[Any] = ["card", "tile", "card"]
    got = averaged.probabilities(image, boxes, kinds, card_turns=2)
    mean = np.mean([Reader(path).probabilities(image, boxes, kinds, card_turns=2)
                    for path in members], axis=0)
    assert np.allclose(got, mean, atol=1e-6)


def test_averaging_refuses_one_reader(tmp_path: Path) -> None:
    only = _random_reader(tmp_path / "only.onnx", seed=1)
    with pytest.raises(ValueError, match="at least two"):
        average_readers([only], tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()


def test_averaging_refuses_readers_of_other_classes(tmp_path: Path) -> None:
    first = _random_reader(tmp_path / "first.onnx", seed=1)
    second = _random_reader(tmp_path / "second.onnx", seed=2)
    model = onnx.load(str(second))
    for entry in model.metadata_props:
        if entry.key == "classes":
            entry.value = json.dumps(list(READER_CLASSES[:-1]))
    onnx.save(model, str(second))
    with pytest.raises(ValueError, match=r"second\.onnx. names other classes"):
        average_readers([first, second], tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()


def test_averaging_refuses_a_model_that_is_not_a_reader(tmp_path: Path) -> None:
    first = _random_reader(tmp_path / "first.onnx", seed=1)
    other = tmp_path / "other.onnx"
    torch.onnx.export(torch.nn.Linear(4, len(READER_CLASSES)), (torch.zeros(1, 4),), str(other),
                      dynamo=False)
    with pytest.raises(ValueError, match=r"other\.onnx. is not an exported reader"):
        average_readers([first, other], tmp_path / "out.onnx")
