"""A card laid beside a meld's end rather than over it (live.grouping).

Laying a card on to a meld, a player often puts it down next to the meld's end card
instead of over it: its index then lies a card's width out, farther than the meld's
pitch, too far to link into the row.  A meld holds three cards or more, so in a zone
of melds a lone card in line with a meld's end, within about a card's width, was laid
on to that meld; one lying between two melds' ends joins the one meld the rules allow,
and stays alone where the indices and the rules cannot tell which it was laid on to.
Where a card laid over the meld's end shows its far corner right beside the next card's
index, that pair of overlapping boxes is no step of the row and must not cut it.

Sizes as in ``test_grouping_four_index``: cards 57 x 89 mm, indices 10 x 25 mm.
"""

from __future__ import annotations

import math

import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.decoding import LegalityCache
from tabletop.live.grouping import Placed, group_items
from tests.live.test_grouping_four_index import (
    BOTTOM_Y,
    CARD_MM,
    FAR_X,
    INDEX_MM,
    NEAR_X,
    TOP_Y,
    box_side,
    labels_of,
    laid_meld,
)

GAP_MM = 2.0
"""Between a card laid beside a meld's end card and that card."""


def beside(label: str, *, corners: int, at_x: float, angle_deg: float = 0.0,
           origin: tuple[float, float] = (200.0, 200.0), first_key: int = 100,
           far_corners: bool = True, offset_across: float = 0.0) -> list[Placed]:
    """The indices of one card lying whole with its left edge ``at_x`` along a meld laid
    by ``laid_meld`` with the same angle and origin."""
    a = math.radians(angle_deg)
    along, across = (math.cos(a), math.sin(a)), (-math.sin(a), math.cos(a))
    spots = [(NEAR_X, TOP_Y)]
    if corners == 4:
        spots.append((NEAR_X, BOTTOM_Y))
    if far_corners:
        spots += [(FAR_X, TOP_Y), (FAR_X, BOTTOM_Y)] if corners == 4 else [(FAR_X, BOTTOM_Y)]
    out = []
    for n, (x, y) in enumerate(spots):
        x += at_x
        y += offset_across
        centre = (origin[0] + x * along[0] + y * across[0],
                  origin[1] + x * along[1] + y * across[1])
        out.append(Placed(first_key + n, "card", centre, box_side(angle_deg), label))
    return out


def reading(angle_deg: float) -> tuple[float, float]:
    a = math.radians(angle_deg)
    return (math.cos(a), math.sin(a))


@pytest.mark.parametrize("corners", [2, 4])
@pytest.mark.parametrize("angle_deg", [0.0, 33.0, 90.0, 180.0])
@pytest.mark.parametrize(("label", "read"), [("7C", "7C 8C 9C 10C"), ("JK", "JK 8C 9C 10C")])
@pytest.mark.parametrize("far_corners", [True, False])
def test_a_card_laid_beside_a_melds_first_card_joins_the_meld(
        corners: int, angle_deg: float, label: str, read: str, far_corners: bool) -> None:
    meld, _ = laid_meld("8C 9C 10C", corners=corners, angle_deg=angle_deg, pitch=22.0)
    card = beside(label, corners=corners, at_x=-CARD_MM[0] - GAP_MM, angle_deg=angle_deg,
                  far_corners=far_corners)
    items = meld + card
    grouping = group_items(items, reading(angle_deg), melds=True)
    assert [labels_of(row, items) for row in grouping.groups] == [read]
    assert grouping.singles == ()


@pytest.mark.parametrize("corners", [2, 4])
@pytest.mark.parametrize("angle_deg", [0.0, 33.0, 90.0, 180.0])
@pytest.mark.parametrize("far_corners", [True, False])
def test_a_card_laid_beside_a_melds_last_card_joins_the_meld(
        corners: int, angle_deg: float, far_corners: bool) -> None:
    # the last card shows its far corners: the card's near index lies a step past one of
    # them, and the two must not pair as a row of their own (10C JC)
    meld, _ = laid_meld("8C 9C 10C", corners=corners, angle_deg=angle_deg, pitch=22.0)
    card = beside("JC", corners=corners, at_x=2 * 22.0 + CARD_MM[0] + GAP_MM,
                  angle_deg=angle_deg, far_corners=far_corners)
    items = meld + card
    grouping = group_items(items, reading(angle_deg), melds=True)
    assert [labels_of(row, items) for row in grouping.groups] == ["8C 9C 10C JC"]
    assert grouping.singles == ()


@pytest.mark.parametrize("corners", [2, 4])
def test_without_melds_in_the_zone_a_card_beside_a_row_stays_alone(corners: int) -> None:
    # a discard pile spread as a row: the next discard laid beside it is no meld's card
    pile, _ = laid_meld("4D 2S 5C", corners=corners, pitch=22.0)
    card = beside("KH", corners=corners, at_x=-CARD_MM[0] - GAP_MM, far_corners=False)
    items = pile + card
    grouping = group_items(items)
    assert [labels_of(row, items) for row in grouping.groups] == ["4D 2S 5C"]
    assert len(grouping.singles) == 1


@pytest.mark.parametrize(("at_x", "offset_across", "why"), [
    (-CARD_MM[0] - GAP_MM - 30.0, 0.0, "half a card farther out than beside"),
    (-CARD_MM[0] - GAP_MM, 2.5 * INDEX_MM[0], "off the meld's line"),
])
def test_a_card_not_in_line_beside_a_melds_end_stays_alone(
        at_x: float, offset_across: float, why: str) -> None:
    meld, _ = laid_meld("8C 9C 10C", corners=2, pitch=22.0)
    card = beside("JK", corners=2, at_x=at_x, far_corners=False, offset_across=offset_across)
    items = meld + card
    grouping = group_items(items, melds=True)
    assert [labels_of(row, items) for row in grouping.groups] == ["8C 9C 10C"], why
    assert len(grouping.singles) == 1, why


def _between_two_melds(label: str) -> list[Placed]:
    """AS AH AD, a card beside its last card, and 8C 9C 10C beside that card: the card is
    as near to either meld's end."""
    left, _ = laid_meld("AS AH AD", corners=2, pitch=22.0)
    # the left meld's last card ends at 2 * 22 + 57 = 101 mm
    card = beside(label, corners=2, at_x=101.0 + GAP_MM, far_corners=False)
    right, _ = laid_meld("8C 9C 10C", corners=2, pitch=22.0,
                         origin=(200.0 + 101.0 + 2 * GAP_MM + CARD_MM[0], 200.0),
                         first_key=200)
    return left + card + right


@pytest.mark.parametrize(("label", "rules", "read"), [
    # without the rules the indices cannot tell which meld the card was laid on to
    ("JK", False, ["8C 9C 10C", "AS AH AD"]),
    ("7C", False, ["8C 9C 10C", "AS AH AD"]),
    # the one meld it makes legal takes it
    ("7C", True, ["7C 8C 9C 10C", "AS AH AD"]),
    ("AC", True, ["8C 9C 10C", "AS AH AD AC"]),
    # a joker completes either: it stays alone
    ("JK", True, ["8C 9C 10C", "AS AH AD"]),
    # and a card that completes neither
    ("5D", True, ["8C 9C 10C", "AS AH AD"]),
])
def test_a_card_between_two_melds_ends_joins_the_one_the_rules_allow(
        label: str, rules: bool, read: list[str]) -> None:
    items = _between_two_melds(label)
    fits = LegalityCache(find_variant("rommee")) if rules else None
    grouping = group_items(items, melds=True, fits=fits)
    assert sorted(labels_of(row, items) for row in grouping.groups) == read
    assert len(grouping.singles) == (0 if len(" ".join(read).split()) == 7 else 1)


def test_a_far_corner_lying_over_the_next_index_does_not_cut_the_row() -> None:
    # as seen in the rendered Rommé game (table millimetres): a joker laid over the end of
    # 8C 9C 10C, a meld laid by the player across the table and so read right to left,
    # shows its far top corner 12 mm from the 10C's index, a step far shorter than the
    # row's pitch
    seen = [  # key, label, centre, the box's smaller and longer side
        (63, "JK", (855.0, 37.6), 15.9, 29.8), (72, "JK", (900.6, 39.5), 23.9, 33.1),
        (71, "10C", (911.9, 34.5), 18.8, 23.3), (55, "9C", (947.9, 31.6), 15.5, 26.2),
        (50, "8C", (965.1, 33.1), 17.0, 20.2),
        (66, "JK", (854.8, 81.2), 14.8, 31.1), (51, "10C", (914.3, 88.1), 21.1, 25.9),
        (54, "9C", (942.4, 89.5), 16.0, 20.0), (42, "8C", (964.7, 87.7), 18.8, 23.8)]
    items = [Placed(key, "card", centre, size, label, length)
             for key, label, centre, size, length in seen]
    grouping = group_items(items, (-1.0, 0.0), melds=True)
    assert [labels_of(row, items) for row in grouping.groups] == ["8C 9C 10C JK"]
    assert grouping.singles == ()
