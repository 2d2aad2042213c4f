"""TableState holds impossible positions and names every problem at once."""

from __future__ import annotations

import pytest

from tabletop.engine import find_variant, parse_items, parse_melds
from tabletop.engine.state import TableState


@pytest.mark.parametrize(
    ("variant", "melds", "hands", "codes"),
    [
        # A legal Sabra table: nothing to report.
        ("sabra", "R3 R4 R5 | K7 B7 O7", {}, []),
        # [sabra] "Von jeder Zahl und Farbe gibt es zwei Spielsteine": a third R3 is a misread.
        ("sabra", "R3 R4 R5 | R3 B3 K3 | R1 R2 R3", {}, ["too_many_copies"]),
        # Three jokers in a 106-tile set with two jokers, and an invalid meld, reported together.
        ("sabra", "R3 JK R5 | K7 JK JK", {}, ["too_many_jokers"]),
        ("sabra", "R3 R4 R6 | K7 B7", {}, ["invalid_meld", "invalid_meld"]),
        # A card on a tile table.
        ("sabra", "R3 R4 R5", {"Ana": "QH"}, ["wrong_material"]),
        # [rum500] one deck: a second ace of spades is impossible.
        ("rum500", "AS 2S 3S", {"Ben": "AS"}, ["too_many_copies"]),
        # [rommee] two decks: two kings of hearts are fine, three are not.
        ("rommee", "KH KS KD | KH KC KS", {"Cem": "KH"}, ["too_many_copies"]),
        # [rommee] six jokers in the game.
        ("rommee", "3S JK 5S | 7H JK 9H", {"Cem": "JK JK JK JK JK"}, ["too_many_jokers"]),
    ],
)
def test_problems(variant: str, melds: str, hands: dict[str, str], codes: list[str]) -> None:
    state = TableState(
        find_variant(variant),
        parse_melds(melds),
        {name: parse_items(hand) for name, hand in hands.items()},
    )
    found = sorted(problem.code for problem in state.problems())
    assert found == sorted(codes)
    assert state.valid is (not codes)


def test_problems_name_the_items() -> None:
    state = TableState.from_melds(find_variant("sabra"), parse_melds("R3 R4 R6 | R3 R3 K3"))
    problems = state.problems()
    copies = next(p for p in problems if p.code == "too_many_copies")
    assert [str(item) for item in copies.items] == ["R3", "R3", "R3"]
    invalid = [p for p in problems if p.code == "invalid_meld"]
    assert [p.meld for p in invalid] == [0, 1]
    assert "R3 R4 R6" in invalid[0].message
