"""bench.deck_adapt on rendered decks: the layout photo is labelled and adapted on through
the command's own path, both ways read the same indices, and a layout the command cannot
label is counted, not hidden."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from bench.deck_adapt import WAYS, labelled_right, main, report, run
from tabletop.studio.synth.cards import random_design
from tabletop.studio.synth.scene import render_deck_layout
from tabletop.vision.detections import Detections
from tabletop.vision.detector import default_model

SEED = 52_000
"""Deck 0 of this seed has two indices a card and a layout the shipped model labels by
its rows."""
UNREAD_SEED = 56_022
"""Deck 0 of this seed (four indices a card) has a layout the shipped model cannot
label: the finder boxes its indices piecemeal, 8-17 boxes a row."""


def test_a_deck_is_adapted_on_its_layout_and_read_both_ways_on_the_same_indices() -> None:
    said: list[str] = []
    result = run(decks=1, tables=1, seed=SEED, log=said.append)
    assert result["failed_layouts"] == []
    (layout,) = result["layouts"]
    assert layout["indices"] == 2 * 54
    assert layout["right"] >= 0.9 * layout["indices"]
    assert result["adapt_seconds"] is not None
    assert len({result[way]["labelled"] for way in WAYS}) == 1
    assert result["adapted"]["against_shipped"]["labelled"] == result["shipped"]["labelled"]
    # the finder's own boxes cover at least what the detector names
    assert result["shipped"]["found"] <= result["finder_boxed"] <= 1.0
    assert said == ["deck 1/1 done"]
    assert "0 layout photo(s) not read" in report(result)
    # the shipped reading broken down by index length and deck counts every index once
    shipped = result["shipped"]
    for table in (shipped["by_length"], shipped["by_deck"]):
        assert sum(row["indices"] for row in table.values()) == shipped["labelled"]
    read = sum(row["indices"] * row["right"] for row in shipped["by_length"].values()
               if row["indices"])
    assert read == pytest.approx(shipped["identity"] * shipped["labelled"], abs=2.0)
    assert "read right by index length" in report(result)
    # the card reader alone at the true boxes names the same indices, each once; deck 0
    # prints a plain index that it reads at least as well as the whole detector
    alone = result["reader_at_true_boxes"]
    assert sum(row["indices"] for row in alone["by_length"].values()) == shipped["labelled"]
    assert shipped["identity"] <= alone["right"] <= 1.0
    assert "the card reader alone at the true boxes names" in report(result)


def test_a_layout_the_command_cannot_label_is_counted_and_read_by_the_shipped_model() -> None:
    said: list[str] = []
    result = run(decks=1, tables=1, seed=UNREAD_SEED, log=said.append)
    (failed,) = result["failed_layouts"]
    assert failed.startswith("deck 0") and "row 1 from the top has 9 card box(es)" in failed
    assert result["layouts"] == [] and result["adapt_seconds"] is None
    assert any(line.startswith("deck 0: layout not read") for line in said)
    assert "1 layout photo(s) not read" in report(result)
    # its tables are read by the shipped model both ways
    assert result["adapted"]["identity"] == result["shipped"]["identity"]


def test_layout_labels_are_right_only_on_a_true_index_of_their_label() -> None:
    design = random_design(np.random.default_rng([SEED, 0]), beside=True)
    truth = render_deck_layout(design, 1).detections
    shifted = Detections(truth.boxes[:3] + 40.0, truth.labels[:3], truth.kinds[:3],
                         np.ones(3))
    renamed = Detections(truth.boxes[:3], ("KC", "KC", "KC"), truth.kinds[:3], np.ones(3))
    assert labelled_right(truth, truth) == len(truth)
    assert labelled_right(shifted, truth) == 0
    assert labelled_right(renamed, truth) == 0


def test_a_model_that_is_not_there_is_refused_in_one_line(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--decks", "1", "--model", str(tmp_path / "missing.onnx")])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "missing.onnx" in error and "is not a file" in error


def test_the_model_given_is_the_one_that_reads_and_is_adapted(tmp_path: Path) -> None:
    """A copy of the shipped model whose card reader is the tile reader reads the same
    tables otherwise: the figures follow the model given, not the shipped one."""
    folder = tmp_path / "model"
    folder.mkdir()
    for item in default_model().parent.glob("tabletop*.onnx"):
        shutil.copy(item, folder / item.name)
    shutil.copy(folder / "tabletop.reader.onnx", folder / "tabletop.cards.reader.onnx")
    given = run(decks=1, tables=1, seed=SEED, log=lambda _text: None,
                model=folder / "tabletop.onnx")
    shipped = run(decks=1, tables=1, seed=SEED, log=lambda _text: None)
    assert given["shipped"]["labelled"] == shipped["shipped"]["labelled"]
    assert given["shipped"]["identity"] != shipped["shipped"]["identity"]
