"""Synthetic camera views of a table with the four corner markers."""

from __future__ import annotations

import cv2
import numpy as np

from tabletop.calibration import marker_image

TABLE_MM = (900.0, 600.0)
MARGIN_MM = 60.0
MARKER_MM = 50.0
PX_PER_MM = 2.0


def plane_image(seed: int = 0) -> np.ndarray:
    """A table seen straight from above, 2 px a mm, markers centred on the corners, some
    texture (wood grain stand-in) so corner features exist too."""
    rng = np.random.default_rng(seed)
    w = round((TABLE_MM[0] + 2 * MARGIN_MM) * PX_PER_MM)
    h = round((TABLE_MM[1] + 2 * MARGIN_MM) * PX_PER_MM)
    small = rng.integers(90, 200, (h // 16, w // 16, 3)).astype(np.uint8)
    image = cv2.resize(small, (w, h), interpolation=cv2.INTER_NEAREST)
    side = round(MARKER_MM * PX_PER_MM)
    pad = side // 5
    for marker_id, (x, y) in enumerate([(0, 0), (TABLE_MM[0], 0), TABLE_MM, (0, TABLE_MM[1])]):
        cx, cy = round((x + MARGIN_MM) * PX_PER_MM), round((y + MARGIN_MM) * PX_PER_MM)
        x0, y0 = cx - side // 2, cy - side // 2
        image[y0 - pad:y0 + side + pad, x0 - pad:x0 + side + pad] = 255
        image[y0:y0 + side, x0:x0 + side] = cv2.cvtColor(marker_image(marker_id, side),
                                                          cv2.COLOR_GRAY2BGR)
    return image


def plane_to_table_mm() -> np.ndarray:
    """Plane pixels -> table mm."""
    return np.array([[1 / PX_PER_MM, 0, -MARGIN_MM], [0, 1 / PX_PER_MM, -MARGIN_MM], [0, 0, 1]])


def camera_view(tilt: float, shift: tuple[float, float] = (0, 0), seed: int = 0
                ) -> tuple[np.ndarray, np.ndarray]:
    """Warp the plane into a 1280x720 camera view; returns the image and the true
    image -> table-mm homography."""
    plane = plane_image(seed)
    h, w = plane.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    inset = 1280 * tilt
    dst = np.float32([[60 + inset, 40], [1220 - inset, 40], [1240, 690], [40, 690]])
    dst += np.float32(shift)
    plane_to_image = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    image = cv2.warpPerspective(plane, plane_to_image, (1280, 720),
                                borderValue=(60, 60, 60))
    image_to_mm = plane_to_table_mm() @ np.linalg.inv(plane_to_image)
    return image, image_to_mm
