"""A zone's rows in its player's reading order (live.grouping.rows_in_reading_order): a
player across the table reads right to left as the camera sees it, line by line from the
far side of their view."""

from __future__ import annotations

import pytest

from tabletop.live.grouping import Placed, rows_in_reading_order

# three rows of two card indices (10 mm wide), table millimetres, y pointing down: two
# side by side at y 30, one a line further from y 30 (at y 80)
ITEMS = [Placed(k, "card", position, 10.0) for k, position in [
    (1, (100.0, 30.0)), (2, (115.0, 30.0)),   # row A, left
    (3, (300.0, 32.0)), (4, (315.0, 32.0)),   # row B, right, the same line
    (5, (200.0, 80.0)), (6, (215.0, 80.0)),   # row C, the next line down the picture
]]
A, B, C = (1, 2), (3, 4), (5, 6)


@pytest.mark.parametrize(("direction", "order"), [
    ((1.0, 0.0), [A, B, C]),    # the near edge's player, facing up the picture
    ((-1.0, 0.0), [C, B, A]),   # the far edge's: the picture's lower line is their first
    ((0.0, -1.0), [A, C, B]),   # the right edge's, facing left: each row a line of its own
    ((0.0, 1.0), [B, C, A]),    # the left edge's, facing right
])
def test_rows_read_in_the_zone_s_reading_direction(
    direction: tuple[float, float], order: list[tuple[int, ...]],
) -> None:
    assert rows_in_reading_order([C, B, A], ITEMS, direction) == order
