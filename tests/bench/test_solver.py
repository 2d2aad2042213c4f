"""The optimiser against rummikub-solver on game positions (a small sample of bench/solver.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("rummikub_solver")

from bench.positions import play_games
from bench.solver import compare


def test_agrees_with_the_reference_on_every_position() -> None:
    result = compare(play_games(seed=7, count=40))
    assert result["positions"] == 40
    assert result["disagreements"] == []
