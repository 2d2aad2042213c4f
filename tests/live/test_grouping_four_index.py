"""Card indices of decks printed in two or in all four corners (live.grouping).

Many decks, most German Rommé decks among them, print an index in every corner.
A meld laid on the table (each card over the right part of the one before)
then shows each card's top-left and bottom-left index, and the last card all
four: a second row of indices beside the first, the same labels in the same
order, and a repeat of the last label at each row's end.  A two-index deck
shows each card's top-left index and the last card's bottom-right one.  Either
way the meld must read once, each card once, and the other corners must be
dropped as second corners.

Sizes are a real deck's, in table millimetres: cards 57 x 89 mm, a corner
index 10 x 25 mm, 3 mm from the card's edges.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tabletop.live.grouping import Placed, group_items, loose_corner_partners

CARD_MM = (57.0, 89.0)
INDEX_MM = (10.0, 25.0)
MARGIN_MM = 3.0
NEAR_X, FAR_X = MARGIN_MM + INDEX_MM[0] / 2, CARD_MM[0] - MARGIN_MM - INDEX_MM[0] / 2
TOP_Y, BOTTOM_Y = MARGIN_MM + INDEX_MM[1] / 2, CARD_MM[1] - MARGIN_MM - INDEX_MM[1] / 2


def box_side(angle_deg: float) -> float:
    """The smaller side of the axis-aligned box round an index turned by ``angle_deg``."""
    a = math.radians(angle_deg)
    w, h = INDEX_MM
    return min(w * abs(math.cos(a)) + h * abs(math.sin(a)),
               w * abs(math.sin(a)) + h * abs(math.cos(a)))


def laid_meld(labels: str, *, corners: int, angle_deg: float = 0.0, pitch: float = 20.0,
              origin: tuple[float, float] = (200.0, 200.0), first_key: int = 0,
              jitter_mm: float = 0.0, seed: int = 0) -> tuple[list[Placed], list[int]]:
    """The index boxes a camera sees of ``labels`` laid as a meld along ``angle_deg``
    (clockwise as the camera sees the table), and the keys of each card's top-left index."""
    rng = np.random.default_rng(seed)
    a = math.radians(angle_deg)
    along, across = (math.cos(a), math.sin(a)), (-math.sin(a), math.cos(a))
    cards = labels.split()
    seen: list[Placed] = []
    top_left: list[int] = []
    key = first_key
    for i, label in enumerate(cards):
        spots = [(NEAR_X, TOP_Y)]
        if corners == 4:
            spots.append((NEAR_X, BOTTOM_Y))
        if i == len(cards) - 1:
            spots += [(FAR_X, TOP_Y), (FAR_X, BOTTOM_Y)] if corners == 4 else [(FAR_X, BOTTOM_Y)]
        for n, (x, y) in enumerate(spots):
            x += i * pitch
            centre = (origin[0] + x * along[0] + y * across[0] + rng.normal(0, jitter_mm),
                      origin[1] + x * along[1] + y * across[1] + rng.normal(0, jitter_mm))
            seen.append(Placed(key, "card", centre, box_side(angle_deg), label))
            if n == 0:
                top_left.append(key)
            key += 1
    return seen, top_left


def labels_of(row: tuple[int, ...], items: list[Placed]) -> str:
    by_key = {it.key: it.label for it in items}
    return " ".join(by_key[k] for k in row)


MELDS = [
    # labels, the row's angle, the pitch between cards
    ("10H JH QH", 0.0, 20.0),
    ("8C 9C 10C JK", 0.0, 22.0),
    ("JK 5H 6H 7H", 180.0, 18.0),
    ("AS AH AD AC", 90.0, 18.0),
    ("9H 10H JH QH KH", 33.0, 24.0),
    ("7D 8D JK JK", -60.0, 21.0),
    ("QS QD JK", 270.0, 19.0),
]


@pytest.mark.parametrize("corners", [2, 4])
@pytest.mark.parametrize(("labels", "angle_deg", "pitch"), MELDS)
def test_a_laid_meld_reads_once_whatever_corners_its_deck_prints(
        labels: str, angle_deg: float, pitch: float, corners: int) -> None:
    for seed in range(4):
        items, top_left = laid_meld(labels, corners=corners, angle_deg=angle_deg, pitch=pitch,
                                    jitter_mm=0.5, seed=seed)
        a = math.radians(angle_deg)
        grouping = group_items(items, (math.cos(a), math.sin(a)))
        assert len(grouping.groups) == 1, (seed, grouping)
        assert labels_of(grouping.groups[0], items) == labels, seed
        assert grouping.singles == ()
        kept = set(grouping.groups[0])
        assert set(grouping.second_corners) == {it.key for it in items} - kept
        if corners == 2:
            assert grouping.groups[0] == tuple(top_left)


@pytest.mark.parametrize(("labels", "angle_deg", "pitch"), MELDS)
def test_each_dropped_corner_names_an_index_of_its_own_card(
        labels: str, angle_deg: float, pitch: float) -> None:
    items, _ = laid_meld(labels, corners=4, angle_deg=angle_deg, pitch=pitch)
    card_of: dict[int, int] = {}
    n = 0
    for i, _card in enumerate(labels.split()):  # the keys laid_meld gives each card
        count = 4 if i == len(labels.split()) - 1 else 2
        for key in range(n, n + count):
            card_of[key] = i
        n += count
    a = math.radians(angle_deg)
    grouping = group_items(items, (math.cos(a), math.sin(a)))
    partners = dict(grouping.corner_of)
    assert set(partners) == set(grouping.second_corners)
    kept = set(grouping.groups[0])
    for corner, index in partners.items():
        assert index in kept
        assert card_of[corner] == card_of[index], (corner, index)


@pytest.mark.parametrize("missing", [0, 1, 2])
def test_a_four_index_meld_with_one_index_missed_still_reads_whole(missing: int) -> None:
    items, top_left = laid_meld("9S 10S JS QS", corners=4, pitch=22.0)
    items = [it for it in items if it.key != top_left[missing]]
    grouping = group_items(items)
    assert [labels_of(row, items) for row in grouping.groups] == ["9S 10S JS QS"]


@pytest.mark.parametrize(("card", "as_label"), [(1, "KH"), (2, "9S"), (2, "JC")])
def test_a_misread_in_the_second_row_of_corners_does_not_make_a_meld(
        card: int, as_label: str) -> None:
    # seen by a camera: the second row of corners loses its first index and misreads one
    items, top_left = laid_meld("9S 9H 9C", corners=4, angle_deg=90.0, pitch=22.0)
    second_row = [it for it in items if it.key not in top_left][:3]  # each card's other
    items = [it for it in items if it.key != second_row[0].key]
    wrong = second_row[card]
    items = [Placed(it.key, it.kind, it.position, it.size, as_label) if it.key == wrong.key
             else it for it in items]
    grouping = group_items(items, (0.0, 1.0))
    assert [labels_of(row, items) for row in grouping.groups] == ["9S 9H 9C"]


def test_two_melds_side_by_side_sharing_one_label_stay_two() -> None:
    # a player's two melds, one a card's length below the other, one label in common
    upper, _ = laid_meld("9S 9H 9C", corners=2)
    lower, _ = laid_meld("9H 10H JH", corners=2, origin=(200.0 - 20.0, 200.0 + CARD_MM[1]),
                         first_key=100)
    grouping = group_items(upper + lower)
    assert sorted(labels_of(row, upper + lower) for row in grouping.groups) == [
        "9H 10H JH", "9S 9H 9C"]


def test_two_equal_melds_one_below_the_other_stay_two() -> None:
    # a two-deck game: the same run twice, the second a card's length and 15 mm lower
    upper, _ = laid_meld("10H JH QH", corners=4)
    lower, _ = laid_meld("10H JH QH", corners=4, origin=(200.0, 200.0 + CARD_MM[1] + 15.0),
                         first_key=100)
    grouping = group_items(upper + lower)
    assert [labels_of(row, upper + lower) for row in grouping.groups] == ["10H JH QH"] * 2


def test_two_jokers_side_by_side_in_a_two_index_meld_both_count() -> None:
    items, top_left = laid_meld("5C 6C JK JK", corners=2, pitch=20.0)
    grouping = group_items(items)
    assert grouping.groups == (tuple(top_left),)


def test_a_lone_four_index_card_is_one_item() -> None:
    items, _ = laid_meld("KD", corners=4)
    grouping = group_items(items)
    assert grouping.groups == ()
    assert len(grouping.singles) == 1
    assert len(grouping.second_corners) == 3


# --- corners outside every meld (live.grouping.loose_corner_partners) ---------------
def test_a_discards_other_corners_in_the_stock_are_dropped() -> None:
    # the top discard lies across the discard zone's edge: two corners in the pile, two in
    # the stock beside it; the pile's first (along its reading direction) stays
    pile = [Placed(1, "card", (856.5, 319.7), 8.6, "4D"), Placed(2, "card", (910.6, 319.9),
                                                                     8.6, "4D")]
    stock = [Placed(3, "card", (910.8, 280.3), 8.6, "4D"), Placed(4, "card", (856.7, 280.1),
                                                                      8.6, "4D")]
    assert loose_corner_partners(pile + stock, []) == {2: 1, 3: 1, 4: 1}


def test_a_loose_index_near_its_card_in_a_meld_is_dropped_and_far_copies_stay() -> None:
    meld, _ = laid_meld("10H JH QH", corners=2)
    near = Placed(50, "card", (meld[-1].position[0] + 40.0, meld[-1].position[1]), 10.0, "QH")
    far_copy = Placed(51, "card", (900.0, 500.0), 10.0, "QH")
    other = Placed(52, "card", (near.position[0] + 5.0, near.position[1]), 10.0, "5S")
    assert loose_corner_partners([near, far_copy, other], meld) == {50: meld[-1].key}


def test_loose_corners_ignore_tiles_and_unread_indices() -> None:
    tile = Placed(1, "tile", (100.0, 100.0), 20.0, "R5")
    twin_tile = Placed(2, "tile", (110.0, 100.0), 20.0, "R5")
    unread = Placed(3, "card", (120.0, 100.0), 10.0, "")
    unread_twin = Placed(4, "card", (125.0, 100.0), 10.0, "")
    assert loose_corner_partners([tile, twin_tile, unread, unread_twin], []) == {}


def _meld_with_inner_far_corner(far_top_label: str, far_bottom_label: str) -> list[Placed]:
    """A four-index meld as the camera saw one laid by the player across the table: read
    AS AH AD, the last card lying over the one before it, so its far corners lie inside
    the row, between its near corners and the card before."""
    top, bottom, size = TOP_Y, BOTTOM_Y, INDEX_MM[0]
    rows = [(0, "AS", 0.0, top), (1, "AH", 24.0, top), (2, far_top_label, 43.0, top),
            (3, "AD", 77.0, top),
            (4, "AS", 3.0, bottom), (5, "AH", 21.0, bottom), (6, far_bottom_label, 42.0, bottom),
            (7, "AD", 74.0, bottom)]
    return [Placed(key, "card", (100.0 + x, 100.0 + y), size, label)
            for key, label, x, y in rows]


@pytest.mark.parametrize(("far_top", "far_bottom"), [
    ("AD", "AD"),
    ("4D", "AD"),  # the far top corner misread; its twin below names the card
    ("AD", "4D"),
])
def test_a_last_card_whose_far_corners_lie_inside_the_row_reads_once(
        far_top: str, far_bottom: str) -> None:
    items = _meld_with_inner_far_corner(far_top, far_bottom)
    grouping = group_items(items)
    assert len(grouping.groups) == 1
    assert len(grouping.groups[0]) == 3, labels_of(grouping.groups[0], items)
    assert labels_of(grouping.groups[0], items)[:5] == "AS AH"
    # every dropped corner of the last card names an index the meld keeps for that card
    kept_last = grouping.groups[0][-1]
    corners = dict(grouping.corner_of)
    assert {corners[key] for key in (2, 3, 6, 7) if key != kept_last} == {kept_last}


def test_a_twin_misread_as_the_next_cards_label_keeps_both_cards() -> None:
    # 9H 9S 9C, four corners a card: the second card's twin read 9C must not drop the real 9C
    items, top_left = laid_meld("9H 9S 9C", corners=4, pitch=22.0)
    second_row = [it for it in items if it.key not in top_left]
    wrong = second_row[1].key  # 9S's other corner
    items = [Placed(it.key, it.kind, it.position, it.size, "9C") if it.key == wrong else it
             for it in items]
    grouping = group_items(items)
    assert [labels_of(row, items) for row in grouping.groups] == ["9H 9S 9C"]


def test_a_last_card_whose_far_corner_inside_the_row_is_misread_reads_once() -> None:
    # as seen in the rendered Rommé game (table millimetres): 8C 9C 10C laid by the player
    # across the table (read right to left), the 10C over the 9C; its far bottom corner,
    # read 10S, lies 1.3 pitches out, its far top corner (read right) across from it
    seen = [  # key, label, centre, the box's smaller and longer side
        (61, "10C", (883.6, 29.5), 17.4, 21.9), (57, "10C", (914.4, 35.1), 18.2, 18.9),
        (55, "9S", (942.5, 32.2), 14.9, 20.9), (56, "8C", (963.5, 33.7), 16.4, 17.4),
        (62, "10S", (882.3, 91.6), 12.8, 20.7), (51, "10C", (914.8, 90.3), 20.5, 23.4),
        (60, "9C", (941.6, 88.8), 16.1, 23.5), (49, "8C", (964.0, 87.2), 20.1, 22.7)]
    items = [Placed(key, "card", centre, size, label, length)
             for key, label, centre, size, length in seen]
    grouping = group_items(items, (-1.0, 0.0))
    assert [labels_of(row, items) for row in grouping.groups] == ["8C 9C 10C"]
    assert dict(grouping.corner_of)[62] == 51


@pytest.mark.parametrize("misread", ["top", "bottom"])
def test_a_last_card_whose_other_corner_reads_as_the_card_before_keeps_both_cards(
        misread: str) -> None:
    # 8C 9C 10C JC, four corners a card, laid at the row's pitch: one near corner of the JC
    # read 10C is dropped as the 10C's far corner; the JC's other near corner is a card
    items, _ = laid_meld("8C 9C 10C JC", corners=4, pitch=22.0)
    near_jc = [it for it in items if it.label == "JC"][:2]  # its near top, near bottom
    wrong = near_jc[0 if misread == "top" else 1].key
    items = [Placed(it.key, it.kind, it.position, it.size, "10C") if it.key == wrong else it
             for it in items]
    grouping = group_items(items)
    assert len(grouping.groups) == 1
    assert labels_of(grouping.groups[0], items).split()[:3] == ["8C", "9C", "10C"]
    assert len(grouping.groups[0]) == 4


def test_a_court_figures_detail_between_the_last_cards_corners_is_no_card() -> None:
    # as seen in the rendered Rommé game (table millimetres): a hand laid open at the left
    # seat, JK 2H 5S QC, each card over the one before, read top to bottom; the whole QC
    # shows its far corners, and between its corners its court figure boxed as a joker
    seen = [  # key, label, centre, the box's smaller and longer side
        (111, "JK", (40.3, 154.6), 10.2, 36.8), (109, "2H", (32.0, 178.8), 9.9, 22.6),
        (104, "5S", (33.8, 201.7), 11.6, 25.3), (102, "QC", (32.5, 226.1), 13.9, 26.0),
        (123, "JK", (31.2, 250.0), 10.8, 26.8), (108, "QC", (32.8, 262.1), 13.7, 28.6),
        (110, "JK", (86.9, 155.0), 9.3, 26.4), (103, "2H", (87.8, 179.4), 11.9, 24.1),
        (105, "5S", (87.7, 201.8), 13.7, 26.9), (106, "QC", (88.8, 225.9), 14.0, 25.0),
        (107, "QC", (87.2, 263.7), 11.7, 28.1)]
    items = [Placed(key, "card", centre, size, label, length)
             for key, label, centre, size, length in seen]
    grouping = group_items(items, (0.0, 1.0), melds=True)
    assert [labels_of(row, items) for row in grouping.groups] == ["JK 2H 5S QC"]
    assert 123 in grouping.second_corners and 123 not in dict(grouping.corner_of)


@pytest.mark.parametrize("corners", [2, 4])
@pytest.mark.parametrize("detail", ["JK", "5S", ""])
@pytest.mark.parametrize("share", [0.3, 0.7])
def test_a_detail_on_the_last_cards_face_is_dropped_with_its_far_corner(
        corners: int, detail: str, share: float) -> None:
    # the last card lies whole in view: a box between its near and far top corners, off
    # the row's pitch, is on its face, whatever it reads
    items, _ = laid_meld("JK 2H 5S QC", corners=corners, pitch=24.0)
    qc_near = next(it for it in items if it.label == "QC")
    if corners == 2:  # a two-index card's far top corner is hidden: show it
        items.append(Placed(98, "card", (qc_near.position[0] + FAR_X - NEAR_X,
                                         qc_near.position[1]), qc_near.size, "QC"))
    centre = (qc_near.position[0] + share * (FAR_X - NEAR_X), qc_near.position[1])
    items.append(Placed(99, "card", centre, qc_near.size, detail))
    grouping = group_items(items, melds=True)
    assert [labels_of(row, items) for row in grouping.groups] == ["JK 2H 5S QC"]
    assert 99 in grouping.second_corners


def test_one_card_twice_two_apart_at_the_pitch_is_two_cards() -> None:
    # a fanned pile of two decks: 4D, 2S, then the other deck's 4D, each at the pitch
    items, _ = laid_meld("KH 5C 4D 2S 4D", corners=2, pitch=20.0)
    grouping = group_items(items)
    assert [labels_of(row, items) for row in grouping.groups] == ["KH 5C 4D 2S 4D"]



def _index(key: int, x: float, y: float, label: str) -> Placed:
    """A card index 10 x 25 pixels, upright, centred at (x, y)."""
    return Placed(key, "card", (x, y), 10.0, label, 25.0)


@pytest.mark.parametrize(("loose", "partners"), [
    # a squared pile's top card: its far corner read as another card
    ([_index(1, 1110, 410, "QH"), _index(2, 1180, 497, "10H")], {2: 1}),
    # turned a quarter: the diagonal runs the other way
    ([_index(1, 1180, 410, "QH"), _index(2, 1093, 480, "10H")], {2: 1}),
    # both corners read alike, and a corner of the card under it peeking out beside the
    # far one: that is another card
    ([_index(1, 1110, 410, "5S"), _index(2, 1180, 497, "5S"), _index(3, 1188, 503, "KH")],
     {2: 1}),
    # a fanned pile: every index along the reading direction is a card of its own
    ([_index(k, 1100 + 24 * k, 410, label) for k, label in enumerate(["4D", "8C", "KH",
                                                                      "2S", "QH", "9C"])],
     {}),
    # two cards side by side, too near to be one card's corners, and too far
    ([_index(1, 1110, 410, "QH"), _index(2, 1140, 450, "10H")], {}),
    ([_index(1, 1110, 410, "QH"), _index(2, 1230, 560, "10H")], {}),
    # a card under it, peeking out at its side, is a card of its own
    ([_index(1, 1110, 410, "QH"), _index(2, 1180, 497, "10H"), _index(3, 1200, 430, "7C")],
     {2: 1}),
])
def test_a_loose_card_s_opposite_corner_read_as_another_card_is_that_card(
        loose: list[Placed], partners: dict[int, int]) -> None:
    assert loose_corner_partners(loose, []) == partners
