"""Variant.check_initial_meld: the first laying-out of each variant that has one.

Values are summed by hand from the rules quoted (see tests/test_values.py for
the per-item values); tags as in tests/test_melds.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine.items import parse_melds
from tabletop.engine.variants import find_variant


def case(
    variant: str, melds: str, value: int, meets: bool, *, hand_meld: bool = False, **options: Any
) -> Any:
    return pytest.param(
        variant, options, melds, hand_meld, value, meets, id=f"{variant}:{melds}:{options}"
    )


CASES = [
    # [sabra] "die Gesamtsumme der verwendeten Spielsteine muss mindesten 30 betragen. Wenn
    # ein Joker verwendet wird, zählt er jeweils so viel wie die Zahl, für die er steht."
    case("sabra", "R9 R10 R11", 30, True),
    case("sabra", "R8 R9 R10", 27, False),
    case("sabra", "R1 R2 R3 | K7 B7 O7", 27, False),
    case("sabra", "R1 R2 R3 | K8 B8 O8", 30, True),
    case("sabra", "R9 JK R11", 30, True),
    case("sabra", "K10 B10 JK", 30, True),
    # "R9 JK JK" is a set (27) or a run (30): the player declares, the better one counts
    case("sabra", "R9 JK JK", 30, True),
    # [sabra] "12-13-1 ist keine regelgerechte Folge": no value from an invalid meld
    case("sabra", "R12 R13 R1", 0, False),
    # [american] "mit einem Gesamtwert von mindestens 21 Punkten ... Zahlenwert"
    case("rummikub-american", "R6 R7 R8", 21, True),
    case("rummikub-american", "R5 R6 R7", 18, False),
    case("rummikub-american", "K7 B7 O7", 21, True),
    case("rummikub-american", "R12 R13 R1", 26, True),
    case("rummikub-american", "R1 R2 R3 | K5 B5 O5", 21, True),
    # [international] "Sie brauchen mindestens 50 Punkte für Ihre Anfangskombination, wobei
    # die Joker wie immer den Wert des Spielsteins haben, den sie ersetzen"
    case("rummikub-international", "R11 R12 R13 | K5 B5 O5", 51, True),
    case("rummikub-international", "R10 R11 R12 | K5 B5 O5", 48, False),
    case("rummikub-international", "R12 R13 R1 | K12 B12 JK", 62, True),
    case("rummikub-international", "R10 R11 R12 R13 | K1 B1 O1", 49, False),
    # [remi] "Bei den Meldungen muss mindestens eine eine Folge sein; Der Gesamtwert der
    # Meldungen muss mindestens 50 Punkte betragen"
    case("remi", "B10 B11 B12 B13 B1", 50, True),
    case("remi", "B10 B11 B12 B13", 40, False),
    case("remi", "R1 B1 O1", 75, False),  # worth enough, but no run
    case("remi", "R1 B1 O1 | K2 K3 K4", 90, True),
    case("remi", "K10 K11 K12 | O10 B10 R10", 60, True),
    case("remi", "K10 K11 JK | O7 O8 O9", 45, False),
    # [remi] Varianten: "Einige Runden fordern nur 45 Punkte und nicht 50 Punkte"
    case("remi", "K10 K11 JK | O7 O8 O9", 45, True, initial_meld=45),
    case("remi", "K10 B10 R10 | O7 B7 R7", 45, False, initial_meld=45),  # no run
    # [rommee] "müssen die insgesamt gemeldeten Karten einen Wert von mindestens 40 Punkten";
    # the ace "bei der Erstmeldung in der Folge A-2-3 jedoch nur einen Punkt"
    case("rommee", "QC KC AC | 3S 3H 3D", 40, True),
    case("rommee", "QC KC AC", 31, False),
    case("rommee", "AH 2H 3H | KS KH KD", 36, False),  # 46 if the ace counted 11
    case("rommee", "AH AS AD | KS KH KD", 63, True),
    case("rommee", "JC QC JK AC", 41, True),
    case("rommee", "8D 9D 10D | JK 5H 5S", 42, True),
    # [rommee] Varianten: "die für die Erstmeldung erforderliche Punktezahl (manchmal auch
    # nur 30, 35 ...)"
    case("rommee", "QC KC AC", 31, True, initial_meld=30),
    case("rommee", "QC KC AC", 31, False, initial_meld=35),
    case("rommee", "QC KC AC | 2S 2H 2D", 37, True, initial_meld=35),
    # [rommee] Hand-Rommé: "bei Hand-Rommé ist das Mindesterfordernis von 40 Punkten
    # aufgehoben"
    case("rommee", "AH 2H 3H | 4S 5S 6S", 21, False),
    case("rommee", "AH 2H 3H | 4S 5S 6S", 21, True, hand_meld=True),
    # [raeuber] "Ansonsten gelten alle Regeln des Spiels mit Auslegen"
    case("raeuber", "QC KC AC | 3S 3H 3D", 40, True),
    case("raeuber", "AH 2H 3H | KS KH KD", 36, False),
    case("raeuber", "AH 2H 3H | 4S 5S 6S", 21, True, hand_meld=True),
]


@pytest.mark.parametrize(("variant", "options", "melds", "hand_meld", "value", "meets"), CASES)
def test_initial_meld(
    variant: str, options: dict[str, Any], melds: str, hand_meld: bool, value: int, meets: bool
) -> None:
    check = find_variant(variant, options).check_initial_meld(
        parse_melds(melds), hand_meld=hand_meld
    )
    assert check.value == value
    assert check.meets is meets
    assert bool(check.problems) is not meets


@pytest.mark.parametrize(
    ("variant", "options", "required"),
    [
        ("sabra", {}, 30),
        ("rummikub-american", {}, 21),
        ("rummikub-international", {}, 50),
        ("remi", {}, 50),
        ("remi", {"initial_meld": "45"}, 45),
        ("rommee", {}, 40),
        ("rommee", {"initial_meld": 30}, 30),
        ("rommee", {"initial_meld": "35"}, 35),
        ("raeuber", {}, 40),
        # no initial-meld rule: [wiener] "Rommé ohne Auslegen"; [rum500] and
        # [american-rummy] lay out any meld at any time
        ("wiener", {}, 0),
        ("rum500", {}, 0),
        ("american-rummy", {}, 0),
    ],
)
def test_required(variant: str, options: dict[str, Any], required: int) -> None:
    assert find_variant(variant, options).initial_meld_required == required


@pytest.mark.parametrize("variant", ["wiener", "rum500", "american-rummy"])
def test_no_minimum_without_an_initial_meld_rule(variant: str) -> None:
    check = find_variant(variant).check_initial_meld(parse_melds("2C 3C 4C"))
    assert check.meets and check.required == 0


def test_problems_name_the_rule() -> None:
    remi = find_variant("remi").check_initial_meld(parse_melds("R1 B1 O1"))
    assert any("run" in p for p in remi.problems)
    sabra = find_variant("sabra").check_initial_meld(parse_melds("R1 R2 R3"))
    assert any("30" in p for p in sabra.problems)
    bad = find_variant("sabra").check_initial_meld(parse_melds("R10 R11 R13 | K12 B12 O12"))
    assert not bad.meets and any("R10 R11 R13" in p for p in bad.problems)


@pytest.mark.parametrize("variant", ["sabra", "remi", "rummikub-international"])
def test_hand_meld_waives_only_in_rommee(variant: str) -> None:
    # only [rommee]'s Hand-Rommé lifts the minimum; the tile games say nothing like it
    check = find_variant(variant).check_initial_meld(parse_melds("R1 R2 R3"), hand_meld=True)
    assert not check.meets


@pytest.mark.parametrize("option", [{"initial_meld": 40}, {"initial_meld": "55"}])
def test_remi_opening_option_takes_45_or_50(option: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="initial_meld"):
        find_variant("remi", option)
