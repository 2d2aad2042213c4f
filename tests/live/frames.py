"""Detections and frames made up for the live tests: items at given centres on a plain
table, a hand over it."""

from __future__ import annotations

import cv2
import numpy as np

from tabletop.vision.detections import Detections


def dets(rows: list[tuple[str, float, float, float]], size: tuple[float, float] = (26, 35),
         kind: str = "tile") -> Detections:
    """Detections from (label, centre x, centre y, confidence)."""
    if not rows:
        return Detections.empty()
    w, h = size
    return Detections(np.array([[x - w / 2, y - h / 2, x + w / 2, y + h / 2]
                                for _, x, y, _ in rows]),
                      tuple(r[0] for r in rows), tuple(kind for _ in rows),  # type: ignore[misc]
                      np.array([r[3] for r in rows]))


def table_frame(hand_at: tuple[int, int] | None = None) -> np.ndarray:
    frame = np.full((480, 640, 3), 90, np.uint8)
    if hand_at is not None:
        cv2.circle(frame, hand_at, 60, (120, 160, 220), -1)
    return frame
