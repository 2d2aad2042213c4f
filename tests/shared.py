"""Paths the tests share: the checkout, its bundled samples, the shipped models and the
real photos (where this machine has them)."""

from __future__ import annotations

from pathlib import Path

from tabletop.vision.detector import SHIPPED_MODELS
from tabletop.vision.replay import find_realdata

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "tabletop" / "samples"
SCENARIOS = SAMPLES / "scenarios"
VIDEOS = SAMPLES / "videos"
FINDER = SHIPPED_MODELS / "tabletop.onnx"
"""The shipped two-stage model's finder (its reader beside it)."""
REALDATA = find_realdata()
"""The real labelled photos (``shared/realdata``), or None where they are missing."""

__all__ = ["FINDER", "REALDATA", "REPO", "SAMPLES", "SCENARIOS", "SHIPPED_MODELS", "VIDEOS"]
