"""Each grouped item's rotation from its row's direction (live.grouping.row_angles).

Angles are degrees from the zone's reading direction, positive clockwise as
the camera sees the table (table y points down).  Detections are axis-aligned
boxes, so an item alone has no known rotation and gets no angle.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tabletop.live.grouping import Grouping, Placed, group_items, row_angles


def turned(vector: tuple[float, float], turn_deg: float) -> tuple[float, float]:
    """``vector`` turned clockwise as the camera sees the table (y points down)."""
    a = math.radians(turn_deg)
    x, y = vector
    return x * math.cos(a) - y * math.sin(a), x * math.sin(a) + y * math.cos(a)


def fan(first_key: int, n: int, radius: float, spacing: float, *,
        pivot: tuple[float, float] = (300.0, 300.0), facing_deg: float = 0.0) -> list[Placed]:
    """Card indices (10 x 25 mm) of a hand fanned clockwise round ``pivot``, each card turned
    ``spacing / radius`` further than the one before; 0 opens the fan upwards."""
    step = math.degrees(spacing / radius)
    cards = []
    for i in range(n):
        turn = facing_deg - step * (n - 1) / 2 + step * i
        dx, dy = turned((0.0, -radius), turn)
        a = math.radians(turn)
        box = min(10 * abs(math.cos(a)) + 25 * abs(math.sin(a)),
                  10 * abs(math.sin(a)) + 25 * abs(math.cos(a)))
        cards.append(Placed(first_key + i, "card", (pivot[0] + dx, pivot[1] + dy), box))
    return cards


def row(first_key: int, n: int, start: tuple[float, float], step: float, angle_deg: float,
        kind: str = "tile", size: float = 26.0, jitter: float = 0.0,
        seed: int = 0) -> list[Placed]:
    rng = np.random.default_rng(seed)
    a = math.radians(angle_deg)
    return [Placed(first_key + i, kind,
                   (start[0] + i * step * math.cos(a) + rng.normal(0, jitter),
                    start[1] + i * step * math.sin(a) + rng.normal(0, jitter)), size)
            for i in range(n)]


def angle_gap(a: float, b: float) -> float:
    return abs(math.remainder(a - b, 360.0))


@pytest.mark.parametrize("laid_deg, reading, expected", [
    (0, (1.0, 0.0), 0.0),  # along the reading direction
    (180, (1.0, 0.0), 0.0),  # laid the other way: still read left to right
    (20, (1.0, 0.0), 20.0),  # falling to the right as the bottom player sees it
    (-30, (1.0, 0.0), -30.0),  # rising to the right
    (135, (1.0, 0.0), -45.0),  # read from its lower left end: rising
    (90, (1.0, 0.0), 90.0),  # square to the reading: read top to bottom
    (-90, (1.0, 0.0), 90.0),
    (0, (-1.0, 0.0), 0.0),  # the top player reads it right to left, square to them
    (30, (-1.0, 0.0), 30.0),  # turned clockwise from the camera's view for everyone
    (30, (0.0, 1.0), -60.0),  # the player on the left edge reads downwards
])
def test_a_straight_row_gives_every_item_its_direction(laid_deg: float,
                                                       reading: tuple[float, float],
                                                       expected: float) -> None:
    items = row(0, 4, (400, 300), 27, laid_deg)
    grouping = group_items(items, reading)
    angles = row_angles(grouping, items, reading)
    assert sorted(angles) == [0, 1, 2, 3]
    assert all(angle_gap(angle, expected) < 0.05 for angle in angles.values()), angles


@pytest.mark.parametrize("spin", [0.0, 37.0, 90.0, 180.0, 251.0])
def test_turning_the_table_and_the_reader_together_changes_nothing(spin: float) -> None:
    # a meld and a fan in a zone; the same scene spun round the table centre, reader too
    scene = row(0, 4, (350, 200), 27, 10) + fan(10, 9, 80, 15, pivot=(400, 420))
    centre = (400.0, 300.0)

    def spun(items: list[Placed]) -> list[Placed]:
        out = []
        for it in items:
            dx, dy = turned((it.position[0] - centre[0], it.position[1] - centre[1]), spin)
            out.append(Placed(it.key, it.kind, (centre[0] + dx, centre[1] + dy), it.size))
        return out

    reading = turned((1.0, 0.0), spin)
    still = row_angles(group_items(scene), scene)
    moved = spun(scene)
    turned_angles = row_angles(group_items(moved, reading), moved, reading)
    assert still.keys() == turned_angles.keys() == set(range(4)) | set(range(10, 19))
    assert all(angle_gap(still[k], turned_angles[k]) < 0.2 for k in still), (still,
                                                                             turned_angles)


@pytest.mark.parametrize("laid_deg", [0.0, 8.0, -15.0, 90.0])
def test_a_wobbly_row_gets_one_steady_angle(laid_deg: float) -> None:
    # cards overlapped 15 mm apart, each index found half a millimetre off
    items = row(0, 6, (300, 300), 15, laid_deg, "card", 10.0, jitter=0.5, seed=4)
    angles = row_angles(group_items(items), items)
    assert len(set(angles.values())) == 1  # one line for the whole row
    expected = laid_deg if laid_deg != 90.0 else 90.0
    assert angle_gap(angles[0], expected) < 3.0, angles


@pytest.mark.parametrize("n, radius, spacing, facing", [
    (5, 70, 15, 0.0), (9, 80, 16, 0.0), (13, 90, 13, 0.0), (13, 70, 12, 25.0),
    (7, 60, 18, -20.0),
])
def test_along_a_fan_each_card_gets_its_own_turn(n: int, radius: float, spacing: float,
                                                 facing: float) -> None:
    cards = fan(0, n, radius, spacing, facing_deg=facing)
    grouping = group_items(cards)
    assert grouping.groups == (tuple(range(n)),)
    angles = row_angles(grouping, cards)
    step = math.degrees(spacing / radius)
    truth = [facing - step * (n - 1) / 2 + step * i for i in range(n)]  # how each card lies
    errors = [angle_gap(angles[i], truth[i]) for i in range(n)]
    assert max(errors) < 2.0, (errors, angles)
    # the outer cards of a wide fan lie far from the row's mean direction
    assert angles[n - 1] - angles[0] == pytest.approx(step * (n - 1), abs=3.0)


def test_singles_and_second_corners_get_no_angle() -> None:
    cards = [Placed(i, "card", (100 + 20 * i, 100), 12, lab)
             for i, lab in enumerate(["7H", "8H", "9H"])]
    cards.append(Placed(9, "card", (100 + 40 + 50, 100 + 75), 12, "9H"))  # 9H's far corner
    cards.append(Placed(20, "card", (400, 400), 12, "KS"))  # a card alone
    grouping = group_items(cards)
    assert grouping.second_corners == (9,) and grouping.singles == (20,)
    assert row_angles(grouping, cards) == {0: 0.0, 1: 0.0, 2: 0.0}


def test_bad_input_is_refused_with_what_was_wrong() -> None:
    items = row(0, 3, (100, 100), 27, 0)
    with pytest.raises(ValueError, match=r"reading direction must not be zero, not \(0.0, 0.0\)"):
        row_angles(group_items(items), items, (0.0, 0.0))
    with pytest.raises(ValueError, match=r"row \(0, 1, 7\) has keys \[7\] not among the items"):
        row_angles(Grouping(((0, 1, 7),), (), ()), items)
