"""Square crops around detected boxes: what the reader (crop classifier) sees.

One affine warp per crop: the box's centre goes to the crop's centre and the
box's longer side, times :data:`CONTEXT`, fills the crop.  The same geometry is
used when training (with random jitter) and when reading, so a crop of a
tile looks the same in both.  Pixels outside the image are grey (114, as
YOLO's letterbox).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

CROP_SIZE = 64
"""Side of a reader crop in pixels."""
CONTEXT = 1.25
"""Crop side / the box's longer side: a little of the surroundings shows."""
PAD_VALUE = 114


def crop_matrix(box: Any, size: int = CROP_SIZE, context: float = CONTEXT,
                scale: float = 1.0, shift: tuple[float, float] = (0.0, 0.0),
                angle_deg: float = 0.0) -> npt.NDArray[np.float64]:
    """The 2x3 affine matrix taking image pixels to crop pixels.

    ``scale`` > 1 zooms out, ``shift`` moves the centre by fractions of the
    box's longer side, ``angle_deg`` turns the crop (training jitter only).
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    side = max(x2 - x1, y2 - y1, 1.0)
    cx = (x1 + x2) / 2 + shift[0] * side
    cy = (y1 + y2) / 2 + shift[1] * side
    zoom = size / (side * context * scale)
    turn = math.radians(angle_deg)
    cos, sin = math.cos(turn) * zoom, math.sin(turn) * zoom
    return np.array([[cos, sin, size / 2 - cos * cx - sin * cy],
                     [-sin, cos, size / 2 + sin * cx - cos * cy]], np.float64)


def crop(image: npt.NDArray[np.uint8], box: Any, size: int = CROP_SIZE,
         context: float = CONTEXT, **jitter: Any) -> npt.NDArray[np.uint8]:
    """A ``size`` x ``size`` BGR crop around ``box`` ([x1, y1, x2, y2] pixels)."""
    import cv2

    matrix = crop_matrix(box, size, context, **jitter)
    zoom = math.hypot(matrix[0, 0], matrix[0, 1])
    # Shrinking by more than 2x with bilinear sampling aliases thin strokes.
    source: npt.NDArray[Any] = image
    if zoom < 0.5:
        factor = min(int(1 / zoom), 8)
        source = cv2.resize(image, (max(1, image.shape[1] // factor),
                                    max(1, image.shape[0] // factor)),
                            interpolation=cv2.INTER_AREA)
        matrix = matrix.copy()
        matrix[:, 0] *= image.shape[1] / source.shape[1]
        matrix[:, 1] *= image.shape[0] / source.shape[0]
    warped = cv2.warpAffine(source, matrix, (size, size), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_CONSTANT,
                            borderValue=(PAD_VALUE, PAD_VALUE, PAD_VALUE))
    return np.asarray(warped, np.uint8)


def crops(image: npt.NDArray[np.uint8], boxes: Any, size: int = CROP_SIZE,
          context: float = CONTEXT, **jitter: Any) -> npt.NDArray[np.uint8]:
    """Crops of every box, shape (N, size, size, 3); ``jitter`` as for :func:`crop`."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    out = np.empty((len(boxes), size, size, 3), np.uint8)
    for i, box in enumerate(boxes):
        out[i] = crop(image, box, size, context, **jitter)
    return out
