"""International Rummikub: the 40 closed hands and round scoring.

Every example hand below was built by hand from the row of the table in
rules/rummikub-sabra-american-international.de.txt ("Internationales
Rummikub"); points come from the columns "Keine Joker | Ein Joker | Zwei Joker".
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from tabletop.engine.international import (
    HAND_TYPES,
    ClosedHandError,
    classify_closed_hand,
    closed_hand_types,
    score_international,
    settlement,
)
from tabletop.engine.items import Joker, Tile, parse_item, parse_items, parse_melds
from tabletop.engine.rounds import MeldContribution, PlayerRound, RoundInput
from tabletop.engine.variants import find_variant

INTERNATIONAL = find_variant("rummikub-international")

# (row number, 14 tiles, points expected for that row, best row expected)
# "F " before the tiles: first_turn; "O ": original_hand.
HANDS = [
    # 1. Basic "14 Spielsteine in Sätzen und/oder Folgen" 500 | 400 | 300
    (1, "R2 R3 R4 R5 B5 B6 B7 K10 B10 O10 R10 K11 K12 K13", 500, 1),
    (1, "R2 R3 R4 R5 B5 JK B7 K10 B10 O10 R10 K11 K12 K13", 400, 1),
    (1, "R2 R3 R4 R5 B5 JK B7 K10 B10 O10 R10 K11 JK K13", 300, 1),
    # 12-13-1 is a run in this variant (as in the American game)
    (1, "R2 R3 R4 R5 B5 B6 B7 K10 B10 O10 R10 K12 K13 K1", 500, 1),
    # 2. Hand minor "kein Spielstein höher als eine 9" 800 | 700 | 600 (total 82)
    (2, "R1 R2 R3 R4 B4 B5 B6 K7 B7 O7 R9 B9 K9 O9", 800, 2),
    (2, "R1 R2 R3 R4 B4 JK B6 K7 B7 O7 R9 B9 K9 O9", 700, 2),
    # 3. Hand minor 51: total 15+21+3+3 = 42 (1er 1 Punkt) 1000 | 900 | 800
    (3, "R1 R2 R3 R4 R5 B6 B7 B8 K1 O1 B1 K1 O1 R1", 1000, 3),
    # with a joker for B7 the total is still 42 (the joker counts as B7) ...
    # ... but the joker can also be an eighth 1: Grand square pays more
    (3, "R1 R2 R3 R4 R5 B6 JK B8 K1 O1 B1 K1 O1 R1", 900, 12),
    # 4. Minor 51 Sätze "Nur Sätze; insgesamt 51 oder weniger" (8+12+12+15 = 47) 1600|1400|1200
    (4, "K2 B2 O2 R2 K3 B3 O3 R3 K4 B4 O4 K5 B5 O5", 1600, 4),
    (4, "JK B2 O2 R2 K3 B3 O3 R3 K4 B4 O4 K5 B5 O5", 1400, 5),
    # 5. Minor 51 Folgen "Nur Folgen" (15+15+14 = 44) 1600 | 1400 | 1200
    (5, "R1 R2 R3 R4 R5 B1 B2 B3 B4 B5 K2 K3 K4 K5", 1600, 5),
    # two jokers: read as B3 and K1 the total is 40, so Piccolo 41 Folgen (also 1200)
    (5, "R1 R2 R3 R4 R5 B1 B2 JK B4 B5 K2 K3 K4 JK", 1200, 8),
    # 6. Piccolo 41 ungerade "14 beliebige Spielsteine ... 41 oder weniger": 39, 1s count 1
    (6, "K1 K1 K3 K5 B1 B1 B3 B5 O2 O4 O6 R2 R4 R1", 800, 6),
    # a joker counts as the tile it stands for: a 1 here (35 + 1)
    (6, "K1 K1 K3 K5 B1 B1 B3 B5 O2 O4 O6 R2 JK R1", 700, 6),
    (6, "K1 K1 K3 JK B1 B1 B3 B5 O2 O4 O6 R2 JK R1", 600, 6),
    # 7. Piccolo 41 Gruppen "Sätze und/oder Folgen ... 41 oder weniger" (10+6+3+8 = 27)
    (7, "R1 R2 R3 R4 B1 B2 B3 K1 O1 R1 K2 O2 R2 B2", 1400, 7),
    # 8. Piccolo 41 Folgen (15+15+10 = 40); ties 5 at 1600, the stricter row is shown
    (8, "R1 R2 R3 R4 R5 B1 B2 B3 B4 B5 K1 K2 K3 K4", 1600, 8),
    # 9. Piccolo 41 Sätze (4+8+9+12 = 33)
    (9, "K1 B1 O1 R1 K2 B2 O2 R2 K3 B3 O3 K4 B4 O4", 1600, 9),
    (9, "JK B1 O1 R1 K2 B2 O2 R2 K3 B3 O3 K4 B4 JK", 1200, 9),
    # 10. Grand ungerade "kein Spielstein niedriger als 10 (1 zählt als hoch)" 700|600|500
    (10, "K10 K12 B10 B12 O11 O13 R11 R13 K1 O1 B11 R10 K13 O12", 700, 10),
    (10, "K10 K12 B10 B12 O11 O13 R11 R13 K1 O1 B11 JK K13 O12", 600, 10),
    # 11. Grand Gruppen: a run 10..13-1 and sets of 10, 11, 1 1400 | 1200 | 1000
    (11, "K10 K11 K12 K13 K1 B10 O10 R10 B11 O11 R11 B1 O1 R1", 1400, 11),
    (11, "K10 K11 K12 K13 JK B10 O10 R10 B11 O11 R11 B1 O1 R1", 1200, 11),
    # 12. Grand square "Acht Spielsteine derselben Zahl - die anderen sechs sind beliebig"
    (12, "K5 K5 B5 B5 O5 O5 R5 R5 R1 B3 K7 O9 R11 B13", 1600, 12),
    (12, "K5 K5 B5 B5 O5 O5 R5 JK R1 B3 K7 O9 R11 B13", 1400, 12),
    (12, "K5 K5 B5 B5 O5 O5 JK JK R1 B3 K7 O9 R11 B13", 1200, 12),
    # 13. Vier Farben "Vier Folgen aus unterschiedlichen Farben" 900 | 800 | 700
    (13, "K1 K2 K3 K4 B5 B6 B7 B8 O9 O10 O11 R11 R12 R13", 900, 13),
    (13, "K1 K2 JK K4 B5 B6 B7 B8 O9 O10 O11 R11 R12 R13", 800, 13),
    # 14. Vier Farben minor (total 66: not Hand minor 51)
    (14, "K1 K2 K3 K4 B2 B3 B4 B5 O5 O6 O7 R7 R8 R9", 1000, 14),
    # 15. Vier Farben major: also Grand Gruppen, which pays more
    (15, "K10 K11 K12 K13 B10 B11 B12 B13 O11 O12 O13 R12 R13 R1", 1000, 11),
    # 16. Drei Farben "Drei Folgen, jeder in einer anderen Farbe" 700 | 600 | 500
    (16, "K1 K2 K3 K4 K5 B6 B7 B8 B9 B10 O9 O10 O11 O12", 700, 16),
    (16, "K1 K2 K3 K4 K5 B6 B7 B8 B9 B10 O9 O10 JK JK", 500, 16),
    # 17. Drei Farben minor (total 65)
    (17, "K1 K2 K3 K4 K5 B2 B3 B4 B5 B6 O6 O7 O8 O9", 900, 17),
    # 18. Drei Farben major: Grand Gruppen pays more
    (18, "K10 K11 K12 K13 K1 B10 B11 B12 B13 B1 O11 O12 O13 O1", 900, 11),
    # 19. Zwei Farben "Zwei, drei oder vier Folgen aus nur zwei Farben" 1000 | 900 | 800
    (19, "K1 K2 K3 K4 K5 K6 K7 B6 B7 B8 B9 B10 B11 B12", 1000, 19),
    (19, "K1 K2 K3 K4 K5 K6 K7 B6 B7 JK B9 B10 B11 B12", 900, 19),
    # 20. Zwei Farben minor: three runs in black and blue (total 60)
    (20, "K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 K6 K7 K8 K9", 1400, 20),
    # 21. Zwei Farben major: ties Grand Gruppen at 1400, the later row is shown
    (21, "K10 K11 K12 K13 K1 B10 B11 B12 B13 B1 K11 K12 K13 K1", 1400, 21),
    # 22. Einzige Farbe vereinzelt "Beliebige 14 Spielsteine einer Farbe" 1600|1400|1200
    (22, "K1 K3 K5 K7 K9 K11 K13 K1 K3 K5 K7 K9 K11 K12", 1600, 22),
    (22, "K1 K3 K5 K7 K9 K11 K13 K1 K3 K5 K7 K10 JK JK", 1200, 22),
    # 23. Einzige Farbe Folgen "Zwei, drei oder vier Folgen derselben Farbe" 2000|1800|1600
    (23, "K1 K2 K3 K4 K5 K3 K4 K5 K6 K7 K9 K10 K11 K12", 2000, 23),
    (23, "K1 K2 K3 K4 K5 K3 K4 JK K6 K7 K9 K10 K11 K12", 1800, 23),
    # 24. Royal "Eine einzige Folge aus 14 Spielsteinen von 1 (niedrig) bis 1 (hoch)"
    (24, "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", 2400, 24),
    (24, "R1 R2 R3 R4 R5 R6 JK R8 R9 R10 R11 R12 R13 R1", 2200, 24),
    (24, "JK JK K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12", 2000, 24),
    # 25. Stöcke "Vier Sätze" 1000 | 900 | 800
    (25, "K5 B5 O5 R5 K9 B9 O9 R9 K12 B12 O12 K3 B3 O3", 1000, 25),
    (25, "K5 B5 O5 R5 K9 B9 O9 R9 K12 JK O12 K3 B3 O3", 900, 25),
    # 26. Stöcke minor (total 101)
    (26, "K5 B5 O5 R5 K9 B9 O9 R9 K8 B8 O8 K7 B7 O7", 1400, 26),
    # 27. Stöcke major "(1 ist hoch)": sets of 10, 11, 12 and 1; ties Grand Gruppen
    (27, "K10 B10 O10 R10 K11 B11 O11 R11 K12 B12 O12 K1 B1 O1", 1400, 27),
    (27, "K10 B10 O10 R10 K11 B11 O11 R11 K12 B12 O12 K1 JK JK", 1000, 27),
    # 28. Mosaik: one mixed run 1..13..1, "je zwei aufeinanderfolgende ... unterschiedliche
    # Farben" 1000 | 900 | 800
    (28, "K1 B2 K3 B4 K5 B6 K7 B8 K9 B10 K11 B12 K13 B1", 1000, 28),
    (28, "K1 B2 K3 B4 K5 JK K7 B8 K9 B10 K11 B12 K13 B1", 900, 28),
    (28, "JK B2 K3 B4 K5 JK K7 B8 K9 B10 K11 B12 K13 B1", 800, 28),
    # the 1s may stand at either end: B1 low, K1 high
    (28, "B1 K2 B3 K4 B5 K6 B7 K8 B9 K10 B11 K12 B13 K1", 1000, 28),
    # 29. Kleine Welle: two mixed runs 1..7 1200 | 1000 | 900
    (29, "K1 B2 K3 B4 K5 B6 K7 O1 R2 O3 R4 O5 R6 O7", 1200, 29),
    (29, "K1 B2 K3 JK K5 B6 K7 O1 R2 O3 R4 O5 R6 O7", 1000, 29),
    (29, "K1 B2 K3 JK K5 B6 K7 O1 R2 O3 R4 O5 JK O7", 900, 29),
    # 30. Grosse Welle: two mixed runs 8..13-1
    (30, "K8 B9 K10 B11 K12 B13 K1 O8 R9 O10 R11 O12 R13 O1", 1200, 30),
    (30, "K8 B9 K10 B11 K12 B13 JK O8 R9 O10 R11 O12 R13 O1", 1000, 30),
    # 31. Kleine Welle: einzige Farbe 2600 | 2400 | 2200; also seven pairs of one colour
    # (2200), Einzige Farbe Folgen (2000), ... : the highest wins
    (31, "K1 K2 K3 K4 K5 K6 K7 K1 K2 K3 K4 K5 K6 K7", 2600, 31),
    (31, "K1 K2 K3 JK K5 K6 K7 K1 K2 K3 K4 K5 K6 K7", 2400, 31),
    (31, "K1 K2 K3 JK K5 K6 K7 K1 K2 K3 K4 K5 JK K7", 2200, 31),
    # 32. Grosse Welle: einzige Farbe
    (32, "K8 K9 K10 K11 K12 K13 K1 K8 K9 K10 K11 K12 K13 K1", 2600, 32),
    # 33. Kleine Welle: zwei Farben 2200 | 2000 | 1800 (also a mixed Kleine Welle, 1200)
    (33, "K1 K2 K3 K4 K5 K6 K7 B1 B2 B3 B4 B5 B6 B7", 2200, 33),
    (33, "K1 K2 K3 K4 K5 K6 K7 B1 B2 B3 JK B5 B6 B7", 2000, 33),
    # 34. Grosse Welle: zwei Farben
    (34, "K8 K9 K10 K11 K12 K13 K1 B8 B9 B10 B11 B12 B13 B1", 2200, 34),
    (34, "K8 K9 K10 K11 K12 K13 JK B8 B9 B10 B11 B12 JK B1", 1800, 34),
    # 35. Sieben Paare "Sieben Paare aus identischen Spielsteinen" 1700 | 1500 | 1300
    (35, "K1 K1 B5 B5 O9 O9 R13 R13 K7 K7 B11 B11 O3 O3", 1700, 35),
    (35, "K1 JK B5 B5 O9 O9 R13 R13 K7 K7 B11 B11 O3 O3", 1500, 35),
    (35, "JK JK B5 B5 O9 O9 R13 R13 K7 K7 B11 B11 O3 O3", 1300, 35),
    # 36. Sieben Paare minor
    (36, "K1 K1 B5 B5 O9 O9 R2 R2 K7 K7 B8 B8 O3 O3", 2000, 36),
    (36, "K1 K1 B5 B5 O9 O9 R2 R2 K7 K7 B8 JK O3 O3", 1800, 36),
    # 37. Sieben Paare major "(1 ist hoch)"
    (37, "K1 K1 B10 B10 O11 O11 R12 R12 K13 K13 B1 B1 O10 O10", 2000, 37),
    (37, "K1 K1 B10 B10 O11 O11 R12 R12 K13 JK B1 B1 O10 JK", 1600, 37),
    # 38. Sieben Paare: einzige Farbe
    (38, "K1 K1 K3 K3 K5 K5 K7 K7 K9 K9 K11 K11 K13 K13", 2200, 38),
    (38, "K1 K1 K3 K3 K5 K5 K7 K7 K9 K9 K11 K11 K13 JK", 2000, 38),
    # 39. Kleiner Blitz "bei Ihrem ersten Spielzug" 1600 | 1400 | 1200
    (39, "F R2 R3 R4 R5 B5 B6 B7 K10 B10 O10 R10 K11 K12 K13", 1600, 39),
    (39, "F R2 R3 R4 R5 B5 JK B7 K10 B10 O10 R10 K11 JK K13", 1200, 39),
    # 40. Grosser Blitz "aus Ihrem ursprünglichen Blatt" 2000 | 1800 | 1600
    (40, "O R2 R3 R4 R5 B5 B6 B7 K10 B10 O10 R10 K11 K12 K13", 2000, 40),
    (40, "O R2 R3 R4 R5 B5 JK B7 K10 B10 O10 R10 K11 K12 K13", 1800, 40),
]


def _flags(text: str) -> tuple[str, bool, bool]:
    """The tiles, first_turn, original_hand."""
    if text.startswith("F "):
        return text[2:], True, False
    if text.startswith("O "):
        return text[2:], False, True
    return text, False, False


def test_every_row_has_an_example() -> None:
    assert {number for number, *_ in HANDS} == set(range(1, 41))


@pytest.mark.parametrize("number, text, points, best", HANDS)
def test_closed_hand_table(number: int, text: str, points: int, best: int) -> None:
    tiles, first, original = _flags(text)
    hands = closed_hand_types(
        parse_items(tiles), first_turn=first, original_hand=original, variant=INTERNATIONAL
    )
    by_number = {hand.number: hand for hand in hands}
    assert number in by_number, [h.number for h in hands]
    assert by_number[number].points == points
    assert by_number[number].jokers == tiles.split().count("JK")
    assert by_number[number].name == HAND_TYPES[number - 1].name
    top = classify_closed_hand(
        parse_items(tiles), first_turn=first, original_hand=original, variant=INTERNATIONAL
    )
    assert top is not None and top.number == best
    assert hands[0] == top
    # "wird nur die höchste Art gewertet": nothing pays more than the chosen hand
    assert all(hand.points <= top.points for hand in hands)


@pytest.mark.parametrize("number, text, points, best", HANDS)
def test_proof_uses_the_tiles(number: int, text: str, points: int, best: int) -> None:
    tiles, first, original = _flags(text)
    hands = closed_hand_types(
        parse_items(tiles), first_turn=first, original_hand=original, variant=INTERNATIONAL
    )
    hand = next(h for h in hands if h.number == number)
    if number in (6, 10, 12, 22):  # not arrangements: "beliebige Spielsteine"
        assert hand.melds is None
        return
    assert hand.melds is not None
    laid = sorted("JK" if item.is_joker else str(item) for m in hand.melds for item in m)
    assert laid == sorted(tiles.split())
    if number in (28, 29, 30):
        # Mosaik / Welle: numbers follow each other, neighbours differ in colour
        for line in hand.melds:
            shown = [item.stands_for if isinstance(item, Joker) else item for item in line]
            tiles_shown = [t for t in shown if isinstance(t, Tile)]
            assert len(tiles_shown) == len(line)
            numbers = [t.number for t in tiles_shown]
            start = 1 if number in (28, 29) else 8
            assert numbers == [(start + i - 1) % 13 + 1 for i in range(len(line))]
            assert all(a.color != b.color for a, b in itertools.pairwise(tiles_shown))
    elif number in (35, 36, 37, 38):
        assert len(hand.melds) == 7
        for pair in hand.melds:
            a, b = (item.stands_for if isinstance(item, Joker) else item for item in pair)
            assert a == b or (a is None and b is None)
    else:
        # ordinary melds: each is legal as written
        for meld in hand.melds:
            assert INTERNATIONAL.analyse(meld).valid, meld


NOT_THIS_HAND = [
    # 13-1-2 is not a run ("13-1-2 ist nicht regelgerecht"): no hand at all
    (None, "K13 K1 K2 B5 B6 B7 O8 O9 O10 R10 R11 R12 R13 B8"),
    # Basic needs every tile in a meld
    (1, "R2 R3 R4 R5 B5 B6 B7 K10 B10 O10 R10 K11 K12 O1"),
    # Hand minor: a 10 is higher than 9
    (2, "R1 R2 R3 R4 B4 B5 B6 K7 B7 O7 R10 B10 K10 O10"),
    # Piccolo 41 ungerade: 42 is too much (1s count 1: 39 - 1 + 4)
    (6, "K1 K1 K3 K5 B1 B1 B3 B5 O2 O4 O6 R2 R4 R4"),
    # Grand ungerade: a 9 is lower than 10
    (10, "K10 K12 B10 B12 O11 O13 R11 R13 K1 O1 B11 R10 K13 O9"),
    # Grand square: seven 5s and no joker
    (12, "K5 K5 B5 B5 O5 O5 R5 R6 R1 B3 K7 O9 R11 B13"),
    # Vier Farben: four runs but two of them black
    (13, "K1 K2 K3 K4 K5 K6 K7 B8 B9 B10 O11 O12 O13 R1"),
    # Mosaik: two neighbours of one colour (K3 K4)
    (28, "K1 B2 K3 K4 B5 K6 B7 K8 B9 K10 B11 K12 B13 O1"),
    # ... but a 1 may go to the other end: O1 K2 B3 ... B13 K1 is a Mosaik
    (-28, "K1 K2 B3 K4 B5 K6 B7 K8 B9 K10 B11 K12 B13 O1"),
    # Kleine Welle: a run of one colour is not a mixed Welle
    (29, "K1 K2 K3 K4 K5 K6 K7 K1 K2 K3 K4 K5 K6 K7"),
    # Sieben Paare: pairs must be identical tiles (K1 B1 are not)
    (35, "K1 B1 B5 B5 O9 O9 R13 R13 K7 K7 B11 B11 O3 O3"),
    # Kleiner/Grosser Blitz only with first_turn / original_hand
    (39, "R2 R3 R4 R5 B5 B6 B7 K10 B10 O10 R10 K11 K12 K13"),
    (40, "R2 R3 R4 R5 B5 B6 B7 K10 B10 O10 R10 K11 K12 K13"),
    # Royal: 14 tiles in one colour but two runs, not one
    (24, "K1 K2 K3 K4 K5 K3 K4 K5 K6 K7 K9 K10 K11 K12"),
]


# number None: no hand at all; a negative number: that hand after all
@pytest.mark.parametrize("number, text", NOT_THIS_HAND)
def test_hands_that_do_not_qualify(number: int | None, text: str) -> None:
    hands = closed_hand_types(parse_items(text), variant=INTERNATIONAL)
    if number is None:
        assert hands == []
        assert classify_closed_hand(parse_items(text), variant=INTERNATIONAL) is None
    elif number < 0:
        assert -number in {hand.number for hand in hands}
    else:
        assert number not in {hand.number for hand in hands}


@pytest.mark.parametrize(
    "text, message",
    [
        ("R1 R2 R3", "exactly 14"),
        ("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1 B5", "exactly 14"),
        ("JK JK JK R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11", "jokers"),
        ("R1 R1 R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12", "R1"),
        ("AS R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13", "AS"),
    ],
)
def test_not_a_closed_hand_at_all(text: str, message: str) -> None:
    with pytest.raises(ClosedHandError, match=message):
        closed_hand_types(parse_items(text), variant=INTERNATIONAL)


def test_declared_jokers_are_read_afresh() -> None:
    # the same Royal whether the joker was written JK or JK=R7 (or even JK=B2)
    plain = classify_closed_hand(
        parse_items("R1 R2 R3 R4 R5 R6 JK R8 R9 R10 R11 R12 R13 R1"), variant=INTERNATIONAL
    )
    declared = classify_closed_hand(
        parse_items("R1 R2 R3 R4 R5 R6 JK=B2 R8 R9 R10 R11 R12 R13 R1"), variant=INTERNATIONAL
    )
    assert plain is not None and declared is not None
    assert (plain.number, plain.points) == (declared.number, declared.points) == (24, 2200)


def test_table_matches_the_rule_text() -> None:
    path = Path("/work/shared/rules/rummikub-sabra-american-international.de.txt")
    if not path.exists():
        pytest.skip("rule text not available")
    rows = re.findall(r"^(\d+)\. (.+?)\. .*\| (\d+) \| (\d+) \| (\d+) \|$", path.read_text(), re.M)
    assert len(rows) == 40
    for number, _name, *points in rows:
        row = HAND_TYPES[int(number) - 1]
        assert row.number == int(number)
        assert row.points_by_jokers == tuple(int(p) for p in points)


# --- round scoring -------------------------------------------------------------
def _melded(text: str) -> tuple[MeldContribution, ...]:
    return tuple(MeldContribution(meld, meld) for meld in parse_melds(text))


def _round(*players: PlayerRound, pool_exhausted: bool = False, **options: object) -> RoundInput:
    return RoundInput(find_variant("rummikub-international", options), players, pool_exhausted)


ROYAL = "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1"


def test_open_win() -> None:
    # "Der Gewinner eines 'Open'-Blatts erhält 100 Punkte"; Ben has melded and loses his
    # tiles: R5 5, K13 10, JK 30, O1 10 ("10, 11, 12, 13 und 1 zählen jeweils 10");
    # Cem has not melded: 100
    result = score_international(
        _round(
            PlayerRound(
                "Ana",
                _melded("R3 R4 R5 | K7 B7 O7"),
                out=True,
                win="open",
                last_discard=parse_item("B2"),
            ),
            PlayerRound("Ben", _melded("K10 K11 K12"), hand=parse_items("R5 K13 JK O1")),
            PlayerRound("Cem", hand=parse_items("R9 B9")),
        )
    )
    assert result.scores == {"Ana": 100, "Ben": -55, "Cem": -100}
    assert result.winner == "Ana" and not result.doubled and not result.problems
    assert result.extras["win"] == "open"
    assert any("-55" in line for line in result.details["Ben"])


def test_open_win_nobody_else_melded_and_joker_penalty_option() -> None:
    # "oder 200 Punkte wenn keiner der anderen Spieler gemeldet hat"
    result = score_international(
        _round(
            PlayerRound("Ana", _melded("R3 R4 R5"), out=True, win="open"),
            PlayerRound("Ben", hand=parse_items("R5 K13 JK O1")),
        )
    )
    assert result.scores == {"Ana": 200, "Ben": -100}
    # the joker left on the rack: 25 instead of 30 as an option
    result = score_international(
        _round(
            PlayerRound("Ana", _melded("R3 R4 R5"), out=True, win="open"),
            PlayerRound("Ben", _melded("K10 K11 K12"), hand=parse_items("JK")),
            joker_penalty=25,
        )
    )
    assert result.scores == {"Ana": 100, "Ben": -25}


def test_foot_win() -> None:
    # "Ihre 14 Spielsteine müssen mindestens 50 Punkte ergeben": R8 laid on Ben's run,
    # then 8 + (3+4+5) + (7+7+7) + (10+11+12+13) + (1+1+1) = 90 in 14 tiles
    foot = (
        MeldContribution(parse_items("R5 R6 R7 R8"), parse_items("R8")),
        *_melded("B3 B4 B5 | K7 B7 O7 | O10 O11 O12 O13 | K1 B1 O1"),
    )
    result = score_international(
        _round(
            PlayerRound("Ana", foot, out=True, win="foot"),
            PlayerRound("Ben", _melded("R5 R6 R7"), hand=parse_items("R2 R2")),
            PlayerRound("Cem", hand=parse_items("R9 B9")),
        )
    )
    assert result.scores == {"Ana": 200, "Ben": -4, "Cem": -100}
    assert not result.problems


def test_foot_win_under_50_is_a_problem() -> None:
    small = (
        MeldContribution(parse_items("R5 R6 R7 R8"), parse_items("R8")),
        *_melded("B1 B2 B3 B4 | K1 B1 O1 | K2 B2 O2 | K3 B3 O3"),  # 8+10+3+6+9 = 36
    )
    result = score_international(
        _round(
            PlayerRound("Ana", small, out=True, win="foot"),
            PlayerRound("Ben", hand=parse_items("R9 B9")),
        )
    )
    assert result.winner is None
    assert result.scores == {"Ana": 0, "Ben": -100}
    assert any("50" in problem for problem in result.problems)


def test_closed_win() -> None:
    # Royal with no joker 2400; Ben has melded (B2 B3 = 5); Cem never melded loses
    # "den gleichen Betrag ..., den der Gewinner gewonnen hat"
    result = score_international(
        _round(
            PlayerRound("Ana", _melded(ROYAL), out=True, win="closed", all_at_once=True),
            PlayerRound("Ben", _melded("K7 B7 O7"), hand=parse_items("B2 B3")),
            PlayerRound("Cem", hand=parse_items("R9 B9")),
        )
    )
    assert result.scores == {"Ana": 2400, "Ben": -5, "Cem": -2400}
    assert result.extras["hand"]["number"] == 24
    assert result.extras["hand"]["name"] == "Royal"
    assert result.extras["hand"]["points"] == 2400


def test_closed_win_is_doubled_by_a_joker_discard() -> None:
    # "einen Joker als seinen letzten Spielstein ablegt, werden alle Punkte ... verdoppelt"
    result = score_international(
        _round(
            PlayerRound(
                "Ana", _melded(ROYAL), out=True, win="closed", last_discard=parse_item("JK")
            ),
            PlayerRound("Ben", _melded("K7 B7 O7"), hand=parse_items("B2 B3")),
            PlayerRound("Cem", hand=parse_items("R9 B9")),
        )
    )
    assert result.doubled
    assert result.scores == {"Ana": 4800, "Ben": -10, "Cem": -4800}


def test_closed_win_with_blitz_flags() -> None:
    basic = "R2 R3 R4 R5 | B5 B6 B7 | K10 B10 O10 R10 | K11 K12 K13"
    result = score_international(
        _round(
            PlayerRound("Ana", _melded(basic), out=True, win="closed", original_hand=True),
            PlayerRound("Ben", hand=parse_items("R9 B9")),
        )
    )
    assert result.scores == {"Ana": 2000, "Ben": -2000}  # 40. Grosser Blitz
    result = score_international(
        _round(
            PlayerRound("Ana", _melded(basic), out=True, win="closed"),
            PlayerRound("Ben", hand=parse_items("R9 B9")),
        )
    )
    assert result.scores == {"Ana": 500, "Ben": -500}  # 1. Basic


def test_closed_win_without_a_closed_hand_is_a_problem() -> None:
    result = score_international(
        _round(
            PlayerRound("Ana", _melded("R1 R2 R3"), out=True, win="closed"),
            PlayerRound("Ben", hand=parse_items("R9 B9")),
        )
    )
    assert result.winner is None and result.problems
    assert result.scores == {"Ana": 0, "Ben": -100}


def test_no_winner() -> None:
    # "endet das Spiel ohne einen Sieger": melded players lose their tiles, the others 100,
    # nobody gains, and a joker discard doubles nothing
    result = score_international(
        _round(
            PlayerRound(
                "Ana",
                _melded("R3 R4 R5"),
                hand=parse_items("K13 R2"),
                last_discard=parse_item("JK"),
            ),
            PlayerRound("Ben", hand=parse_items("R9 B9")),
            pool_exhausted=True,
        )
    )
    assert result.winner is None and not result.doubled
    assert result.scores == {"Ana": -12, "Ben": -100}


def test_trump_bonus_option() -> None:
    # "50 Zusatzpunkte ..., wenn Sie den gleichen Spielstein wie den Trumpf haben"
    players = (
        PlayerRound("Ana", _melded("R3 R4 R5"), out=True, win="open"),
        PlayerRound("Ben", _melded("K7 B7 O7"), hand=parse_items("R2"), trump_declared=True),
    )
    assert score_international(_round(*players)).scores == {"Ana": 100, "Ben": -2}
    assert score_international(_round(*players, trump_bonus=True)).scores == {
        "Ana": 100,
        "Ben": 48,
    }


@pytest.mark.parametrize(
    "scores, expected",
    [
        # each pair settles the difference: Ana gets 155 from Ben and 200 from Cem
        ({"Ana": 100, "Ben": -55, "Cem": -100}, {"Ana": 355, "Ben": -110, "Cem": -245}),
        ({"Ana": 0, "Ben": 0}, {"Ana": 0, "Ben": 0}),
        ({"Ana": 2400, "Ben": -2400}, {"Ana": 4800, "Ben": -4800}),
    ],
)
def test_settlement(scores: dict[str, int], expected: dict[str, int]) -> None:
    # "zahlt jeder Spieler den anderen Spielern ... Differenz zwischen ihren Punktzahlen"
    assert settlement(scores) == expected
    assert sum(settlement(scores).values()) == 0
