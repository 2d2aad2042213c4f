"""bench.card_closeups' views: 16:9 windows a 1/k of a photo's width covering all of it,
and a view keeps the labelled items wholly inside, in the view's pixels."""

from __future__ import annotations

import numpy as np
import pytest

from bench.card_closeups import SIZE, close_up, windows
from tabletop.vision.detections import Detections


@pytest.mark.parametrize(("width", "height", "share", "count"), [
    (1200, 1200, 1, 3), (1200, 1200, 2, 18), (1280, 720, 1, 1), (1920, 1080, 4, 36),
])
def test_windows_cover_the_photo_at_16_to_9(width: int, height: int, share: int,
                                            count: int) -> None:
    placed = list(windows(width, height, share))
    assert len(placed) == count
    for x, y, w, h in placed:
        assert w / h == pytest.approx(SIZE[0] / SIZE[1])
        assert w == pytest.approx(min(width / share, height * 16 / 9))
        assert x >= 0 and x + w <= width + 1e-6 and y >= 0 and y + h <= height + 1e-6
    assert min(x for x, *_ in placed) == 0 and max(x + w for x, _, w, _ in placed) == (
        pytest.approx(width))
    assert max(y + h for _, y, _, h in placed) == pytest.approx(height)


def test_a_view_keeps_the_items_wholly_inside_in_its_pixels() -> None:
    image = np.zeros((720, 1280, 3), np.uint8)
    truth = Detections([[100, 100, 140, 150], [600, 300, 650, 360], [630, 350, 700, 430]],
                       ("QS", "7H", "2C"), ("card", "card", "card"), np.ones(3))
    view, kept = close_up(image, truth, (480.0, 240.0, 320.0, 180.0))  # type: ignore[misc]
    assert view.shape == (720, 1280, 3)
    assert kept.labels == ("7H",)  # 2C is cut by the window's lower edge
    assert np.allclose(kept.boxes, [[(600 - 480) * 4, (300 - 240) * 4,
                                     (650 - 480) * 4, (360 - 240) * 4]])
    assert close_up(image, truth, (0.0, 400.0, 320.0, 180.0)) is None
