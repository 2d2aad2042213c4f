"""bench.card_adapt: a deck layout of the adapt photo's cards, the light adapt on it, and
both models read card by card on a game of the measure photo's cards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shared import REALDATA

pytestmark = pytest.mark.skipif(REALDATA is None, reason="no real-data folder")


def test_the_card_adapt_bench_fits_a_head_on_the_layout_and_reads_both_ways(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench import card_adapt

    keep = tmp_path / "keep"
    assert card_adapt.main(["--realdata", str(REALDATA), "--games", "1", "--keep", str(keep),
                            "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["adapt_photos"] == ["deal1"] and result["measure_photos"] == ["deal2"]
    layout = result["layout"]
    assert layout["labels"] >= 30 and layout["indices"] == 2 * layout["labels"]
    assert layout["head"]["labels"]["card"] == layout["labels"]
    assert result["cards"] >= 9
    for way in card_adapt.WAYS:
        figures = result[way]
        assert result["cards"] >= figures["boxed"] >= figures["read"]
        low, high = figures["interval"]
        assert low <= figures["share_read"] <= high
    # the same cards both ways: what only one reads right is bounded by what each reads
    assert result["only_adapted"] <= result["adapted"]["read"]
    assert result["only_shipped"] <= result["shipped"]["read"]
    assert result["adapted"]["read"] - result["shipped"]["read"] == (
        result["only_adapted"] - result["only_shipped"])
    assert (keep / "layout.jpg").is_file() and (keep / "model" / "tabletop.head.npz").is_file()
    labelled = json.loads((keep / "layout.jsonl").read_text().splitlines()[0])
    assert len(labelled["detections"]) == layout["indices"]


@pytest.mark.parametrize("args", [["--games", "0"], ["--layout-height", "50"]])
def test_the_card_adapt_bench_refuses_bad_sizes(args: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from bench import card_adapt

    assert card_adapt.main(args) == 2
    assert "--games must be 1 or more" in capsys.readouterr().err
