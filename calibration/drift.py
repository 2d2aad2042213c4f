"""Noticing that the camera moved after calibration.

Two witnesses: the corner markers, when they are in sight (their centres
compared with the calibrated corners), and otherwise corner features of the
first frame followed with optical flow.  Hands pass over the table all the
time, so one frame proves nothing: the camera counts as moved only when the
median drift stays above the threshold for ``patience`` checks in a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.calibration.markers import CORNER_IDS, find_markers
from tabletop.calibration.table import TableCalibration

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class DriftReading:
    drift_px: float | None  # median displacement; None when nothing could be compared
    witness: str  # "markers", "features" or "none"
    moved: bool  # the threshold was passed ``patience`` times in a row


def _grey(image: Image) -> Image:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


class CameraDriftMonitor:
    """``check(frame)`` after a calibration; ``moved`` says to calibrate again."""

    def __init__(self, calibration: TableCalibration | None, reference: Image, *,
                 threshold_px: float = 4.0, patience: int = 3, max_features: int = 200) -> None:
        self.calibration = calibration
        self.threshold_px = threshold_px
        self.patience = patience
        grey = _grey(reference)
        self._reference = grey
        mask = None
        if calibration is not None:
            # features on the table border are the least likely to be items that move
            mask = np.full(grey.shape, 255, np.uint8)
            polygon = calibration.table_polygon_in_image().astype(np.int32)
            inner = np.zeros_like(mask)
            cv2.fillPoly(inner, [polygon], 255)
            shrunk = cv2.erode(inner, np.ones((31, 31), np.uint8))
            mask[shrunk > 0] = 0
        points = cv2.goodFeaturesToTrack(grey, max_features, 0.01, 12, mask=mask)
        if points is None or len(points) < 8:
            points = cv2.goodFeaturesToTrack(grey, max_features, 0.01, 12)
        self._features = points
        self._over = 0
        self.moved = False

    def _marker_drift(self, frame: Image) -> float | None:
        if self.calibration is None or self.calibration.source != "markers":
            return None
        found = find_markers(frame)
        drifts = [np.hypot(*(np.subtract(found[i].centre, corner)))
                  for i, corner in zip(CORNER_IDS, self.calibration.image_corners, strict=True)
                  if i in found]
        return float(np.median(drifts)) if len(drifts) >= 2 else None

    def _feature_drift(self, grey: Image) -> float | None:
        if self._features is None or len(self._features) == 0:
            return None
        moved, status, _ = cv2.calcOpticalFlowPyrLK(self._reference, grey, self._features, None,
                                                    winSize=(21, 21), maxLevel=3)
        if moved is None:
            return None
        ok = status.reshape(-1) == 1
        if ok.sum() < max(4, 0.3 * len(ok)):
            # most features lost: the view changed completely
            return float("inf")
        shift = np.linalg.norm((moved - self._features).reshape(-1, 2)[ok], axis=1)
        return float(np.median(shift))

    def check(self, frame: Image) -> DriftReading:
        drift = self._marker_drift(frame)
        witness = "markers"
        if drift is None:
            drift = self._feature_drift(_grey(frame))
            witness = "features" if drift is not None else "none"
        if drift is not None and drift > self.threshold_px:
            self._over += 1
        elif drift is not None:
            self._over = 0
        self.moved = self._over >= self.patience
        return DriftReading(drift, witness, self.moved)
