"""bench.reader_blur on real tile crops: the shipped reader against itself, sharp and
blurred, through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.reader_blur import item_crops, main
from tabletop.studio.replay import TILES_FOLDER, photo_split
from tests.shared import REALDATA, SHIPPED_MODELS


def test_real_tiles_read_worse_as_they_blur_and_a_reader_ties_with_itself(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reader = str(SHIPPED_MODELS / "tabletop.reader.onnx")
    out = tmp_path / "blur.json"
    assert main(["--readers", f"{reader},{reader}", "--photos", "adapt", "--sigmas", "0,4",
                 "--realdata", str(REALDATA), "--json", str(out)]) == 0
    (rows,) = json.loads(out.read_text()).values()
    adapt_tiles = len(item_crops(REALDATA / TILES_FOLDER, "tile",
                                 set(photo_split(REALDATA).adapt))[1])
    assert [(row["sigma"], "p" in row) for row in rows] == [
        (0, False), (0, True), (4, False), (4, True)]
    sharp, _, soft, _ = rows
    assert sharp["items"] == soft["items"] == adapt_tiles > 100
    assert sharp["share"] > 0.95 and soft["share"] < sharp["share"] - 0.2
    assert (rows[1]["only_first"], rows[1]["only_this"], rows[1]["p"]) == (0, 0, 1.0)
    assert "rummikub-tiles adapt" in capsys.readouterr().out


@pytest.mark.parametrize(("extra", "said"), [
    (["--readers", "no/such.onnx", "--photos", "none"],
     "reader model 'no/such.onnx' does not exist"),
    (["--rendered", "no/such/folder", "--photos", "none"],
     "No such file or directory: 'no/such/folder/annotations.jsonl'"),
    (["--realdata", "no/such/realdata"], "no real-data folder at 'no/such/realdata'"),
    (["--sigmas", "1,soft", "--photos", "none"], "could not convert string to float: 'soft'"),
])
def test_bad_input_is_one_line(extra: list[str], said: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    reader = str(SHIPPED_MODELS / "tabletop.reader.onnx")
    assert main(["--readers", reader, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reader_blur: ") and said in err and "\n" not in err
