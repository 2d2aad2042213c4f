"""Grouping a fanned hand laid on the table: the card indices lie on an arc.

Sizes are a real deck's, in table millimetres: cards 57 x 89 mm, a corner index
(rank over suit) about 10 x 25 mm, and in a held fan the indices 12..20 mm
apart on an arc round the hand's pivot, each card turned a little more than
the one before.  The detector boxes are axis-aligned, so a turned index gives
a larger, squarer box; each centre wobbles by half a millimetre, about what
a box jittering by 3 % of its size gives (live/oracle.py's default noise).
A hand spreads its cards unevenly and they shift as it lays them down, so
the gaps differ by up to 15 % and each index sits up to a millimetre or so
off the arc.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tabletop.live.grouping import Placed, group_items

CARD_MM = (57.0, 89.0)
INDEX_MM = (10.0, 25.0)
JITTER_MM = 0.5
WOBBLE_MM = 0.5  # each card's index off the arc (standard deviation)
UNEVEN = 0.15  # each gap up to this share wider or narrower
SEEDS = range(8)


def index_box_side(turn_deg: float) -> float:
    """The smaller side of the axis-aligned box round an index turned by ``turn_deg``."""
    a = math.radians(turn_deg)
    w, h = INDEX_MM
    return min(w * abs(math.cos(a)) + h * abs(math.sin(a)),
               w * abs(math.sin(a)) + h * abs(math.cos(a)))


def turned(vector: tuple[float, float], turn_deg: float) -> tuple[float, float]:
    """``vector`` turned clockwise as the camera sees the table (y points down)."""
    a = math.radians(turn_deg)
    x, y = vector
    return x * math.cos(a) - y * math.sin(a), x * math.sin(a) + y * math.cos(a)


def fan(first_key: int, n: int, radius: float, spacing: float, *,
        pivot: tuple[float, float] = (300.0, 300.0), facing_deg: float = 0.0,
        uneven: float = UNEVEN, wobble_mm: float = WOBBLE_MM, seed: int = 0) -> list[Placed]:
    """``n`` cards fanned clockwise round ``pivot``, their indices ``radius`` from it and
    ``spacing`` apart (each gap varied by up to ``uneven`` of it, and each index
    ``wobble_mm`` off the arc, as a hand spreads them); ``facing_deg`` 0 opens the fan
    upwards, 90 to the right."""
    rng = np.random.default_rng(seed)
    gaps = [spacing * (1 + rng.uniform(-uneven, uneven)) for _ in range(n - 1)]
    steps = [math.degrees(g / radius) for g in gaps]
    turns = [facing_deg - sum(steps) / 2 + sum(steps[:i]) for i in range(n)]
    cards = []
    for i, turn in enumerate(turns):
        dx, dy = turned((0.0, -radius - rng.normal(0, wobble_mm)), turn)
        x, y = pivot[0] + dx, pivot[1] + dy
        cards.append(Placed(first_key + i, "card",
                            (x + rng.normal(0, JITTER_MM), y + rng.normal(0, JITTER_MM)),
                            index_box_side(turn), f"C{first_key + i}"))
    return cards


def fan_width(n: int, radius: float, spacing: float) -> float:
    """From the first index centre to the last card's right edge."""
    total = spacing / radius * (n - 1)
    return 2 * radius * math.sin(min(total, math.pi) / 2) + CARD_MM[0]


def straight(first_key: int, n: int, start: tuple[float, float], spacing: float,
             angle_deg: float = 0.0, seed: int = 0) -> list[Placed]:
    """Overlapped cards of a meld, their indices ``spacing`` apart along ``angle_deg``."""
    rng = np.random.default_rng(seed + 1000)
    a = math.radians(angle_deg)
    return [Placed(first_key + i, "card",
                   (start[0] + i * spacing * math.cos(a) + rng.normal(0, JITTER_MM),
                    start[1] + i * spacing * math.sin(a) + rng.normal(0, JITTER_MM)),
                   index_box_side(angle_deg), f"S{first_key + i}")
            for i in range(n)]


def as_sets(groups: tuple[tuple[int, ...], ...]) -> set[frozenset[int]]:
    return {frozenset(g) for g in groups}


# (cards, radius mm, spacing mm): the whole turn of the fan is spacing / radius per card
FANS = [
    (3, 80, 12), (3, 65, 20), (4, 60, 20), (5, 70, 15), (6, 90, 18), (7, 55, 16),
    (8, 75, 14), (9, 100, 20), (10, 70, 13), (11, 85, 15), (12, 65, 12),
    (13, 90, 13),  # 99 degrees in all
    (13, 70, 12),  # 118 degrees
    (13, 110, 20),  # 125 degrees
    (13, 60, 14),  # 160 degrees: a wide spread
]


@pytest.mark.parametrize("n, radius, spacing", FANS)
@pytest.mark.parametrize("facing, reading", [
    (0.0, (1.0, 0.0)),  # laid by the player at the bottom edge
    (180.0, (-1.0, 0.0)),  # by the player at the top: upside down to the camera
    (90.0, (0.0, 1.0)),  # by a player at the side
])
def test_a_fan_is_one_row_in_card_order(n: int, radius: float, spacing: float, facing: float,
                                        reading: tuple[float, float]) -> None:
    assert (n - 1) * math.degrees(spacing / radius) >= 15  # a real arc, not a line
    for seed in SEEDS:
        cards = fan(0, n, radius, spacing, facing_deg=facing, seed=seed)
        grouping = group_items(cards, reading)
        assert grouping.groups == (tuple(range(n)),), (seed, grouping)
        assert grouping.singles == ()


@pytest.mark.parametrize("n, radius", [(5, 60), (8, 70), (13, 85)])
def test_a_fan_spread_unevenly_is_still_one_row(n: int, radius: float) -> None:
    # a hand pushes some cards further than others: gaps 12..20 mm in one fan
    for seed in SEEDS:
        cards = fan(0, n, radius, 16.0, uneven=0.25, wobble_mm=0.0, seed=seed)
        assert group_items(cards).groups == (tuple(range(n)),), seed


def test_the_top_cards_far_corner_is_dropped_from_a_fan() -> None:
    # the last card of the fan shows its bottom-right index too (turned half round)
    cards = fan(0, 7, 70, 15, uneven=0.0)
    last_turn = 0.0 + 3 * math.degrees(15 / 70)
    to_far_corner = turned((CARD_MM[0] - 2 * 5.0, CARD_MM[1] - 2 * 12.5 - 70), last_turn)
    far = (300 + to_far_corner[0], 300 + to_far_corner[1])
    cards.append(Placed(99, "card", far, index_box_side(last_turn), cards[-1].label))
    grouping = group_items(cards)
    assert grouping.groups == (tuple(range(7)),)
    assert grouping.second_corners == (99,) and grouping.singles == ()


@pytest.mark.parametrize("n, radius, spacing", [(3, 80, 12), (5, 55, 20), (7, 55, 20),
                                                (10, 90, 16), (13, 70, 12)])
@pytest.mark.parametrize("apart_mm", [5.0, 25.0])
def test_two_fans_side_by_side_stay_two(n: int, radius: float, spacing: float,
                                        apart_mm: float) -> None:
    # the second fan starts apart_mm right of the first fan's last card
    offset = fan_width(n, radius, spacing) + apart_mm
    for seed in SEEDS:
        left = fan(0, n, radius, spacing, seed=seed)
        right = fan(100, n, radius, spacing, pivot=(300 + offset, 300), seed=seed + 50)
        grouping = group_items(left + right)
        assert as_sets(grouping.groups) == {frozenset(range(n)), frozenset(range(100, 100 + n))}
        assert grouping.groups[0] in (tuple(range(n)), tuple(range(100, 100 + n)))


@pytest.mark.parametrize("n, radius, spacing", [(5, 55, 20), (7, 55, 20), (9, 70, 15),
                                                (13, 90, 13)])
@pytest.mark.parametrize("where", ["right", "right_top", "above", "below"])
def test_a_fan_next_to_a_straight_meld(n: int, radius: float, spacing: float,
                                       where: str) -> None:
    half = fan_width(n, radius, spacing) / 2
    starts = {  # each clear of the fan's cards, as a player lays a meld beside a hand
        "right": ((300 + half + 30, 300 - 0.6 * radius), 4),
        "right_top": ((300 + half + 20, 300 - radius - 10), 4),
        "above": ((260, 300 - radius - 45), 5),
        "below": ((260, 370), 5),
    }
    start, count = starts[where]
    for seed in SEEDS:
        cards = fan(0, n, radius, spacing, seed=seed) + straight(100, count, start, 17, seed=seed)
        grouping = group_items(cards)
        assert as_sets(grouping.groups) == {frozenset(range(n)),
                                            frozenset(range(100, 100 + count))}, (seed, grouping)


@pytest.mark.parametrize("corner_deg", [90, -90, 60, 45, 120])
@pytest.mark.parametrize("first_angle", [0, 30, 135])
@pytest.mark.parametrize("lengths, spacing", [((3, 3), 12), ((4, 5), 16), ((6, 3), 20)])
def test_two_straight_rows_meeting_at_an_angle_split(corner_deg: float, first_angle: float,
                                                     lengths: tuple[int, int],
                                                     spacing: float) -> None:
    # the second row starts a little more than one spacing past the first row's end
    first_n, second_n = lengths
    a = math.radians(first_angle)
    end = (300 + (first_n - 1) * spacing * math.cos(a), 300 + (first_n - 1) * spacing * math.sin(a))
    b = math.radians(first_angle + corner_deg)
    start = (end[0] + 1.4 * spacing * math.cos(b), end[1] + 1.4 * spacing * math.sin(b))
    for seed in SEEDS:
        cards = (straight(0, first_n, (300, 300), spacing, first_angle, seed=seed)
                 + straight(100, second_n, start, spacing, first_angle + corner_deg,
                            seed=seed + 7))
        grouping = group_items(cards)
        assert as_sets(grouping.groups) == {frozenset(range(first_n)),
                                            frozenset(range(100, 100 + second_n))}, seed


def test_a_fan_ending_against_a_row_at_a_right_angle_splits() -> None:
    # a meld laid straight down from the fan's last index, square to where the arc runs
    n, radius, spacing = 7, 70.0, 15.0
    for seed in SEEDS:
        cards = fan(0, n, radius, spacing, seed=seed)
        last, before = cards[-1].position, cards[-2].position
        along = math.degrees(math.atan2(last[1] - before[1], last[0] - before[0]))
        b = math.radians(along + 90)
        start = (last[0] + 20 * math.cos(b), last[1] + 20 * math.sin(b))
        row = straight(100, 4, start, 15, along + 90, seed=seed)
        grouping = group_items(cards + row)
        assert as_sets(grouping.groups) == {frozenset(range(n)), frozenset(range(100, 104))}
