"""bench/panel_load.py at a tiny size: the real panel, writers and viewers, and what it
counts (every acknowledged write stored once, every viewer pushed to)."""

from __future__ import annotations

from bench.panel_load import bench, database


def test_the_load_bench_counts_writes_and_pushes() -> None:
    with database("sqlite") as url:
        result = bench(url, viewers=3, writers=2, seconds=1.0)
    quiet, watched = result["runs"]
    assert quiet["viewers"] == 0 and watched["viewers"] == 3
    for run in (quiet, watched):
        assert run["writes"] > 0 and run["failed"] == 0
        assert run["writes_per_second"] > 0 and run["p99_ms"] >= run["p50_ms"] > 0
    assert quiet["pushes"] == 0
    assert watched["pushes"] >= 3  # each viewer saw the match change while it was written
    assert 0 < watched["bytes_per_push"] < 2000  # patches: one table event is a few lines
    assert watched["viewers_dropped"] == 0
    assert result["lost"] == 0 and result["doubled"] == 0
