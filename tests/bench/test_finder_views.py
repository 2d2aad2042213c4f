"""bench.finder_views: rendered tiles found and read, grouped by how they are seen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_every_view_is_counted_in_its_groups_and_a_model_against_itself_ties(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    import tabletop.studio.synth.scene as scene_module
    from bench import finder_views

    # every table steep and seen from a flank, each with a block of close rows
    monkeypatch.setattr(scene_module, "STEEP_SHARE", 1.0)
    monkeypatch.setattr(scene_module, "SIDE_SHARE", 1.0)
    monkeypatch.setattr(scene_module, "GRID_SHARE", 1.0)
    out = tmp_path / "views.json"
    from tabletop.vision.detector import default_model

    assert finder_views.main(["--scenes", "2", "--seed", "44990", "--against",
                              str(default_model()), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    rows = report["models"]["model"]
    assert rows["side"]["tiles"] == rows["all"]["tiles"] > 20
    assert rows["rack"]["tiles"] + rows["flat"]["tiles"] == rows["all"]["tiles"]
    assert 0 < rows["grid"]["tiles"] < rows["all"]["tiles"]
    for row in rows.values():
        assert row["read"] <= row["found"]
        low, high = row["found_interval"]
        assert low <= row["found"] <= high
    assert report["models"]["against"] == rows
    assert all(set(c["only_found_by"].values()) == {0} for c in report["compare"].values())
    printed = capsys.readouterr().out
    assert "side" in printed and "grid" in printed


def test_a_bench_of_no_tables_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import finder_views

    with pytest.raises(SystemExit) as exit_:
        finder_views.main(["--scenes", "0"])
    assert exit_.value.code == 2
    assert "--scenes must be 1 or more" in capsys.readouterr().err
