"""bench/panel_load.py at a tiny size: the real panel, writers and viewers, and what it
counts (every acknowledged write stored once, every viewer pushed to), and the panel's
memory beside viewers that never read, and hints asked at once."""

from __future__ import annotations

from bench.panel_load import bench, database, hints, stalled


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


def test_the_memory_bench_reads_the_panels_memory_round_by_round() -> None:
    with database("sqlite") as url:
        result = stalled(url, count=3, writers=2, seconds=1.0)
    assert result["stalled"] == 3 and len(result["rounds"]) == 3
    assert 20 < result["mb_before"] < 2000
    for round_ in result["rounds"]:
        assert round_["writes_per_second"] > 0
        assert round_["mb_while"] > 20 and round_["mb_after"] > 20


def test_the_hint_bench_times_each_round_against_the_promise() -> None:
    with database("sqlite") as url:
        result = hints(url, count=4, budget_s=0.4, rounds=1)
    assert result["promise_s"] == 0.49
    (round_,) = result["rounds"]
    assert round_["answered"] + round_["refused"] == 4 and round_["other"] == 0
    assert round_["answered"] >= 1  # two workers at least: the first ones are answered
    assert 0 < round_["slowest_answer_s"] < 60
    assert set(round_["placed"]) <= {12, 13} and round_["placed"]
    assert 0 <= round_["over_promise"] <= 4
