"""Tiles as a reader reads them: each with its distribution of labels."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tabletop.vision.detections import NONE_LABEL, Detections

Seen = tuple[float, float, Mapping[str, float]]
"""An item's centre and the reader's distribution of it."""


def read(items: list[Seen], size: tuple[float, float] = (24.0, 32.0)) -> Detections:
    """Tiles read by a reader: each labelled with its distribution's most probable label."""
    w, h = size
    labels = tuple(max((kv for kv in d.items() if kv[0] != NONE_LABEL),
                       key=lambda kv: kv[1])[0] for _, _, d in items)
    return Detections(np.array([[x - w / 2, y - h / 2, x + w / 2, y + h / 2]
                                for x, y, _ in items]).reshape(-1, 4),
                      labels, tuple("tile" for _ in items),
                      np.array([max(d.values()) for _, _, d in items]),
                      alternatives=tuple(d for _, _, d in items))
