"""Checking a turn on a rearrangeable table (engine/turns.py).

Rule quotes: [sabra] = rules/rummikub-sabra-american-international.de.txt,
Sabra part and its "Varianten"; [rommee]/[raeuber] = rules/rommee-raeuber-wiener.de.txt.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop.engine.items import JOKER, Family, Item, natural, parse_items, parse_melds
from tabletop.engine.turns import TurnCheck, TurnError, check_turn, table_conserved
from tabletop.engine.variants import find_variant

# (id, variant, options, before, after, laid, opened, valid, problem codes, exchanged)
# Every expected result was worked out by hand from the quoted rule.
CASES: list[tuple[str, str, dict[str, Any], str, str, str, bool, bool, list[str], str]] = [
    # --- [sabra] the blue 8-7-joker example under the four freed-joker readings ---------
    # "auf dem Tisch liegt ein Satz aus 4ern und eine Folge aus blauer 8-7-Joker; Sie haben
    # zwei blaue Sechser und eine blaue Drei ... neue blaue Folge aus 6-Joker-4-3"
    (
        "blue-8-7-joker anywhere",
        "sabra", {"freed_joker": "anywhere"},
        "B8 B7 JK | K4 B4 O4 R4", "B8 B7 B6 | B6 JK B4 B3 | K4 O4 R4", "B6 B6 B3", True,
        True, [], "B6",
    ),
    (
        # Lemada: "als Teil einer neuen Gruppe"; 6-JK-4-3 lay nowhere before
        "blue-8-7-joker new_group",
        "sabra", {"freed_joker": "new_group"},
        "B8 B7 JK | K4 B4 O4 R4", "B8 B7 B6 | B6 JK B4 B3 | K4 O4 R4", "B6 B6 B3", True,
        True, [], "B6",
    ),
    (
        # "Die neue Folge enthält zwei Spielsteine aus Ihrem Blatt" (B6 and B3)
        "blue-8-7-joker with_hand",
        "sabra", {"freed_joker": "with_hand"},
        "B8 B7 JK | K4 B4 O4 R4", "B8 B7 B6 | B6 JK B4 B3 | K4 O4 R4", "B6 B6 B3", True,
        True, [], "B6",
    ),
    (
        # "dann ist das Beispiel aus Version 3 oben nicht erlaubt"
        "blue-8-7-joker hand_only",
        "sabra", {"freed_joker": "hand_only"},
        "B8 B7 JK | K4 B4 O4 R4", "B8 B7 B6 | B6 JK B4 B3 | K4 O4 R4", "B6 B6 B3", True,
        False, ["freed_joker_not_hand_group"], "B6",
    ),
    (
        # hand_only: JK R5 R6 is formed from the hand first; "später Spielsteine, die
        # woanders auf dem Tisch lagen, ... angelegt werden" (R4 from the 4s)
        "hand_only group later extended from the table",
        "sabra", {"freed_joker": "hand_only"},
        "B8 B7 JK | K4 B4 O4 R4", "B8 B7 B6 | R4 R5 R6 JK | K4 B4 O4", "B6 R5 R6", True,
        True, [], "B6",
    ),
    (
        "new_group: joker added to an old run",
        "sabra", {"freed_joker": "new_group"},
        "R4 R5 JK | K9 K10 K11", "R4 R5 R6 | K9 K10 K11 JK", "R6", True,
        False, ["freed_joker_not_new_group"], "R6",
    ),
    (
        # Goliath: "Sie müssen den Joker jedoch sofort, innerhalb desselben Spielzuges,
        # verwenden" -- any other meld will do
        "anywhere: joker added to an old run",
        "sabra", {"freed_joker": "anywhere"},
        "R4 R5 JK | K9 K10 K11", "R4 R5 R6 | K9 K10 K11 JK", "R6", True,
        True, [], "R6",
    ),
    (
        # new group R9 R10 JK holds only one tile from the hand (R10 comes from the table)
        "with_hand: one hand tile is not enough",
        "sabra", {"freed_joker": "with_hand"},
        "B8 B7 JK | R10 R11 R12 R13", "B8 B7 B6 | R9 R10 JK | R11 R12 R13", "B6 R9", True,
        False, ["freed_joker_without_hand_tiles"], "B6",
    ),
    (
        "new_group: a group made of table tiles is new",
        "sabra", {"freed_joker": "new_group"},
        "B8 B7 JK | R10 R11 R12 R13", "B8 B7 B6 | R9 R10 JK | R11 R12 R13", "B6 R9", True,
        True, [], "B6",
    ),
    # --- [sabra] melds holding a joker ---------------------------------------------------
    (
        # "An eine Meldung, die einen Joker enthält, können weitere Spielsteine angelegt werden"
        "extend a run holding a joker",
        "sabra", {}, "R4 R5 JK", "R3 R4 R5 JK", "R3", True, True, [], "",
    ),
    (
        "extend a set holding a joker (it now stands for the last colour)",
        "sabra", {}, "R5 B5 JK", "R5 B5 K5 JK", "K5", True, True, [], "",
    ),
    (
        # "kann der Joker nicht an das andere Ende gelegt werden, um einen weiteren
        # Spielstein anlegen zu können"
        "joker moved to the other end of its run",
        "sabra", {}, "R5 R6 JK", "JK R4 R5 R6", "R4", True,
        False, ["joker_meaning_changed"], "",
    ),
    (
        # a declared colour does not bind: K5 may join and the joker stands for O5
        "extend a set whose joker was declared as the tile laid",
        "sabra", {}, "R5 B5 JK=K5", "R5 B5 K5 JK=O5", "K5", True, True, [], "",
    ),
    (
        "extend a run whose joker is declared",
        "sabra", {}, "R4 R5 JK=R6", "R4 R5 JK=R6 R7", "R7", True, True, [], "",
    ),
    (
        # jokers look alike: the laid joker goes to the new meld, the table's stays
        "laid joker next to a table joker",
        "sabra", {}, "R4 R5 JK", "K1 K2 JK | R4 R5 JK", "K1 K2 JK", True, True, [], "",
    ),
    (
        # the joker taken without laying R6: gone from the table
        "table joker taken to the rack",
        "sabra", {}, "R4 R5 JK | K1 K2 K3", "R4 R5 | K1 K2 K3 K4", "K4", True,
        False, ["item_missing", "invalid_meld"], "",
    ),
    (
        # two jokers freed; JK JK B12 holds one tile from the hand, for each of them
        # ("zusammen mit 2 oder mehr Spielsteinen aus seinem Blatt")
        "with_hand: two freed jokers with one hand tile",
        "sabra", {"freed_joker": "with_hand"},
        "R4 R5 JK | K7 B7 JK", "R4 R5 R6 | K7 B7 O7 | JK JK B12", "R6 O7 B12", True,
        False, ["freed_joker_without_hand_tiles", "freed_joker_without_hand_tiles"], "R6 O7",
    ),
    (
        # two jokers in one meld: "da es keine Regel gibt, die dies untersagt, sollte es
        # erlaubt sein"
        "anywhere: two freed jokers in one new meld",
        "sabra", {}, "R4 R5 JK | K7 B7 JK", "R4 R5 R6 | K7 B7 O7 | JK JK B12", "R6 O7 B12", True,
        True, [], "R6 O7",
    ),
    (
        # "diese Art den Joker zu Ersetzen kann weiteren Einschränkungen unterliegen"
        "dutch exchange under new_group",
        "sabra", {"dutch": True, "freed_joker": "new_group"},
        "R4 R5 JK | K9 K10 K11", "R4 R5 R6 | K9 K10 K11 JK", "R6", True,
        False, ["freed_joker_not_new_group"], "R6",
    ),
    (
        # "es dürfen weder Spielsteine entfernt werden"
        "tile taken from a run holding a joker",
        "sabra", {}, "R4 R5 R6 JK | K8 B8 O8", "R5 R6 JK | R4 K4 B4", "K4 B4", True,
        False, ["joker_split", "item_missing"], "",
    ),
    (
        "run holding a joker split in two",
        "sabra", {}, "R4 R5 R6 JK", "R4 R5 R6 | JK R8 R9", "R8 R9", True,
        False, ["joker_split"], "",
    ),
    (
        # "durch den echten Spielstein ersetzt und den Joker dann in einer anderen
        # Zusammenstellung auf dem Tisch verwendet"
        "freed joker put back into its own meld",
        "sabra", {}, "R5 R6 JK", "JK R5 R6 R7", "R7", True,
        False, ["freed_joker_same_meld"], "R7",
    ),
    (
        # "kann nicht in das Blatt des Spielers zur späteren Verwendung aufgenommen werden"
        "freed joker taken to the rack",
        "sabra", {}, "R5 R6 JK", "R5 R6 R7", "R7", True,
        False, ["freed_joker_unused"], "R7",
    ),
    (
        # the tile laid must be the one the joker stands for (R7, not R8)
        "wrong tile cannot free a joker",
        "sabra", {}, "R5 R6 JK", "R5 R6 R8 | K1 K2 JK", "R8 K1 K2", True,
        False, ["joker_split", "invalid_meld"], "",
    ),
    (
        # "kann der Joker durch einen passenden Spielstein jeder der fehlenden Farben
        # ersetzt werden"
        "set joker freed by one missing colour",
        "sabra", {}, "R5 B5 JK", "R5 B5 K5 | R9 R10 JK", "K5 R9 R10", True, True, [], "K5",
    ),
    (
        "set joker freed by the other missing colour, though declared black",
        "sabra", {}, "R5 B5 JK=K5", "R5 B5 O5 | R9 R10 JK", "O5 R9 R10", True, True, [], "O5",
    ),
    (
        # Official Book / Pressman 1980: "die Spielsteine beider fehlenden Farben zu der
        # Gruppe hinzugefügt werden müssen, um den Joker an sich nehmen zu können"
        "set_joker_needs_both: one colour is not enough",
        "sabra", {"set_joker_needs_both": True},
        "R5 B5 JK", "R5 B5 K5 | R9 R10 JK", "K5 R9 R10", True,
        False, ["joker_exchange_incomplete"], "K5",
    ),
    (
        "set_joker_needs_both: both colours",
        "sabra", {"set_joker_needs_both": True},
        "R5 B5 JK", "R5 B5 K5 O5 | R9 R10 JK", "K5 O5 R9 R10", True, True, [], "K5 O5",
    ),
    (
        # the Räuber-Rommé example with tiles: the joker of K5 K6 JK goes elsewhere
        "Räuber recombination is not allowed in Sabra",
        "sabra", {}, "O5 O6 O7 | K5 K6 JK", "O5 K5 B5 | O6 R6 K6 | O7 JK O9", "B5 R6 O9", True,
        False, ["joker_split"], "",
    ),
    # --- [sabra Varianten] Dutch Sabra ------------------------------------------------------
    (
        # "vorausgesetzt, dass der Joker immer für denselben Spielstein steht": JK=R7 stays R7
        "dutch: split keeping the joker's tile",
        "sabra", {"dutch": True}, "R4 R5 R6 JK", "R4 R5 R6 | JK R8 R9", "R8 R9", True,
        True, [], "",
    ),
    (
        # the joker stood for K7 and now stands for O8
        "dutch: joker changes its tile",
        "sabra", {"dutch": True},
        "O5 O6 O7 | K5 K6 JK", "O5 K5 B5 | O6 R6 K6 | O7 JK O9", "B5 R6 O9", True,
        False, ["joker_meaning_changed"], "",
    ),
    (
        # "Die einzige Möglichkeit ... dass der Spieler aus seinem Blatt den Spielstein
        # ablegt, für den der Joker ursprünglich stand"
        "dutch: joker exchanged for its tile",
        "sabra", {"dutch": True},
        "O5 O6 O7 | K5 K6 JK", "O5 K5 B5 | O6 R6 K6 | O7 JK O9 | K7 B7 R7",
        "B5 R6 O9 K7 B7 R7", True, True, [], "K7",
    ),
    (
        "dutch: set joker moved to a run keeping its tile",
        "sabra", {"dutch": True}, "R5 B5 O5 JK | K6 K7 K8",
        "R5 B5 O5 | JK K6 K7 K8 | R9 B9 K9", "R9 B9 K9", True, True, [],
        "",
    ),
    # --- [sabra] initial meld -----------------------------------------------------------
    (
        # "mindesten 30 ... ausschließlich aus dem Blatt"
        "opening 33 from the hand",
        "sabra", {}, "K1 K2 K3", "K1 K2 K3 | R10 R11 R12", "R10 R11 R12", False, True, [], "",
    ),
    (
        # 21 + 8 = 29
        "opening 29 is too low",
        "sabra", {}, "", "K6 K7 K8 | R2 B2 O2 K2", "K6 K7 K8 R2 B2 O2 K2", False,
        False, ["initial_too_low"], "",
    ),
    (
        # the invalid R9 R10 does not count
        "opening with an invalid meld",
        "sabra", {}, "", "R9 R10 | K4 B4 O4 | K10 K11 K12", "R9 R10 K4 B4 O4 K10 K11 K12", False,
        False, ["invalid_meld"], "",
    ),
    (
        # "Wenn ein Joker verwendet wird, zählt er jeweils so viel wie die Zahl, für die er steht"
        "opening joker counts as its tile",
        "sabra", {}, "", "R9 JK R11", "R9 JK R11", False, True, [], "",
    ),
    (
        # most rule sets: after the 30 "noch im gleichen Spielzug die Sätze und Folgen auf dem
        # Tisch anders anordnen und weitere Spielsteine an sie anlegen"
        "opening then laying off in the same turn",
        "sabra", {}, "K9 K10 K11", "R10 R11 R12 | K9 K10 K11 K12", "R10 R11 R12 K12", False,
        True, [], "",
    ),
    (
        # Lemada 1999: "keine Umgruppierung in dem Spielzug, in dem Sie Ihre
        # Anfangskombination legen"
        "opening then laying off, rearrange_on_opening_turn=False",
        "sabra", {"rearrange_on_opening_turn": False},
        "K9 K10 K11", "R10 R11 R12 | K9 K10 K11 K12", "R10 R11 R12 K12", False,
        False, ["table_changed_before_opening", "not_from_hand"], "",
    ),
    (
        # table tiles do not count: R10 R11 R12 R13 uses R13 from the table, nothing is
        # laid from the hand alone
        "opening with a table tile",
        "sabra", {}, "R13 B13 O13 K13", "R10 R11 R12 R13 | B13 O13 K13", "R10 R11 R12", False,
        False, ["initial_too_low"], "",
    ),
    # --- conservation and the basic rules ------------------------------------------------------
    (
        # "muss mindestens ein Spielstein von seinem Blatt hinzugefügt worden sein"
        "nothing laid",
        "sabra", {}, "R1 R2 R3 R4", "R1 R2 R3 R4", "", True, False, ["nothing_laid"], "",
    ),
    (
        "rearranged but nothing laid",
        "sabra", {}, "R1 R2 R3 R4 R5 R6", "R1 R2 R3 | R4 R5 R6", "", True,
        False, ["nothing_laid"], "",
    ),
    (
        # a table tile back to the rack
        "table tile taken back",
        "sabra", {}, "R1 R2 R3 R4", "R1 R2 R3 | K5 B5 O5", "K5 B5 O5", True,
        False, ["item_missing"], "",
    ),
    (
        "laid tile not on the table",
        "sabra", {}, "R1 R2 R3", "R1 R2 R3 | K5 B5 O5", "K5 B5 O5 R5", True,
        False, ["item_missing"], "",
    ),
    (
        "tile from nowhere",
        "sabra", {}, "R1 R2 R3", "R1 R2 R3 R4 | K5 B5 O5", "K5 B5 O5", True,
        False, ["item_from_nowhere"], "",
    ),
    (
        # "alle Zusammenstellungen auf dem Tisch müssen regelgerechte Sätze und Folgen sein";
        # 12-13-1 "keine regelgerechte Folge"
        "invalid meld left on the table",
        "sabra", {}, "R11 R12 R13", "R11 R12 R13 R1", "R1", True, False, ["invalid_meld"], "",
    ),
    (
        "several problems at once",
        "sabra", {}, "R1 R2 R3 R4 | K7 K8 JK", "R1 R2 | K7 K8 | JK B9 B10", "B9 B10 B11", False,
        False,
        ["item_missing", "invalid_meld", "invalid_meld", "initial_too_low", "joker_split"],
        "",
    ),
    # --- [raeuber] Räuber-Rommé ------------------------------------------------------------
    (
        # "Auf dem Tisch liegt ♣5–♣6–♣7–♣8–♣9; ein Spieler hält die zweite ♣7 in der Hand"
        "raeuber clubs 5-9 with a second 7",
        "raeuber", {}, "5C 6C 7C 8C 9C", "5C 6C 7C | 7C 8C 9C", "7C", True, True, [], "",
    ),
    (
        # "♦5–♦7 und ♠5–♠6–J; der Spieler hält ♣5, ♥6 und ♦9 ... ♦5–♠5–♣5, ♦6–♥6–♠6 und
        # ♦7–J–♦9"; "ausliegende Joker dabei neue Verwendungen finden können"
        "raeuber diamonds and spades with joker",
        "raeuber", {}, "5D 6D 7D | 5S 6S JK", "5D 5S 5C | 6D 6H 6S | 7D JK 9D", "5C 6H 9D", True,
        True, [], "",
    ),
    (
        # "Einmal gemeldete Karten dürfen nicht mehr in die Hand zurückgenommen ... werden"
        "raeuber card taken back",
        "raeuber", {}, "5C 6C 7C 8C 9C", "5C 6C 7C | 7C 8C", "7C", True,
        False, ["item_missing", "invalid_meld"], "",
    ),
    (
        # [rommee] "einen Wert von mindestens 40 Punkten"; Bildkarten zählen zehn
        "raeuber opening 40",
        "raeuber", {}, "", "10S JS QS KS", "10S JS QS KS", False, True, [], "",
    ),
    (
        # 29 + 9 = 38
        "raeuber opening 38 too low",
        "raeuber", {}, "", "9S 10S JS | 2H 3H 4H", "9S 10S JS 2H 3H 4H", False,
        False, ["initial_too_low"], "",
    ),
    (
        "raeuber opening 30 with option initial_meld=30",
        "raeuber", {"initial_meld": 30}, "", "QS KS AS", "QS KS AS", False, True, [], "",
    ),
    (
        # [rommee] "Das Austauschen eines Jokers ist erst nach Auslage der Erstmeldung erlaubt";
        # "Hat ein Spieler seine Erstmeldung ausgelegt, so darf er ... anlegen": not in the
        # turn of the Erstmeldung
        "raeuber no robbing in the turn of the Erstmeldung",
        "raeuber", {}, "5S 6S JK", "5S 6S 7S | JK QH KH | 10D JD QD KD", "7S QH KH 10D JD QD KD",
        False, False, ["table_changed_before_opening", "not_from_hand", "not_from_hand"], "",
    ),
    (
        # [rommee] "nicht gestattet, eine Figur mit nur einer natürlichen Karte und zwei
        # Jokern auszulegen" holds for rebuilt melds too
        "raeuber: one natural card and two jokers",
        "raeuber", {}, "4S 5S 6S 7S | 9H 10H JK", "4S 5S 6S 7S | 9H JK JK | 10H JH QH",
        "JK JH QH", True, False, ["invalid_meld"], "",
    ),
    (
        # "in einer Folge aus mindestens vier Karten dürfen jedoch auch zwei Joker unmittelbar
        # aufeinanderfolgen, so ist zum Beispiel ♠3–J–J–♠6 eine erlaubte Kombination"
        "raeuber: 3S JK JK 6S rebuilt from the table",
        "raeuber", {}, "3S 4S 5S 6S | 9H 10H JK", "3S JK JK 6S | 4S 5S 6S | 9H 10H JH",
        "JK 6S JH", True, True, [], "",
    ),
]


def _check(variant_id: str, options: dict[str, Any], before: str, after: str, laid: str,
           opened: bool) -> TurnCheck:
    return check_turn(
        find_variant(variant_id, options),
        parse_melds(before) if before.strip() else (),
        parse_melds(after),
        parse_items(laid),
        opened=opened,
    )


@pytest.mark.parametrize(
    "variant_id, options, before, after, laid, opened, valid, codes, exchanged",
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_turn(
    variant_id: str,
    options: dict[str, Any],
    before: str,
    after: str,
    laid: str,
    opened: bool,
    valid: bool,
    codes: list[str],
    exchanged: str,
) -> None:
    result = _check(variant_id, options, before, after, laid, opened)
    assert Counter(p.code for p in result.problems) == Counter(codes), result.problems
    assert result.valid is valid
    assert [str(t) for t in result.exchanged_jokers] == exchanged.split()
    for problem in result.problems:
        # every message names (some of) its items
        assert not problem.items or any(str(i) in problem.message for i in problem.items)


def test_several_problems_name_their_items() -> None:
    result = _check("sabra", {}, "R1 R2 R3 R4 | K7 K8 JK", "R1 R2 | K7 K8 | JK B9 B10",
                    "B9 B10 B11", opened=False)
    by_code = {p.code: p for p in result.problems}
    assert by_code["item_missing"].items == parse_items("B11 R3 R4")
    assert by_code["joker_split"].items == parse_items("K7 K8 JK")
    invalid = [p.items for p in result.problems if p.code == "invalid_meld"]
    assert invalid == [parse_items("R1 R2"), parse_items("K7 K8")]


def test_invalid_sabra_turn_restores_the_table_and_draws_three() -> None:
    # [sabra] "müssen Sie die Spielsteine auf dem Tisch wieder in dieselbe Zusammenstellungen
    # legen ... und zur Strafe drei Spielsteine aus dem Pool ziehen"
    before = "R1 R2 R3 R4 | K7 K8 JK"
    result = _check("sabra", {}, before, "R1 R2 | R3 R4 K7 K8 JK", "R5", opened=True)
    assert not result.valid
    assert result.restored_table == parse_melds(before)
    assert result.penalty_draw == 3


def test_valid_turn_draws_nothing() -> None:
    result = _check("sabra", {}, "R1 R2 R3 R4", "R1 R2 R3 | R4 R5 R6", "R5 R6", opened=True)
    assert result.valid and result.penalty_draw == 0 and result.initial_value is None


def test_invalid_raeuber_turn_has_no_penalty_draw() -> None:
    # [raeuber] names no penalty (and is played without a discard pile)
    result = _check("raeuber", {}, "5C 6C 7C 8C 9C", "5C 6C | 7C 7C 8C 9C", "7C", opened=True)
    assert not result.valid
    assert result.penalty_draw == 0
    assert result.restored_table == parse_melds("5C 6C 7C 8C 9C")


@pytest.mark.parametrize(
    "variant_id, options, after, laid, value",
    [
        ("sabra", {}, "R10 R11 R12", "R10 R11 R12", 33),
        # JK stands for 10
        ("sabra", {}, "R9 JK R11 | K1 B1 O1", "R9 JK R11 K1 B1 O1", 33),
        # [rommee] Ass "bei der Erstmeldung in der Folge A-2-3 jedoch nur einen Punkt"
        ("raeuber", {}, "AS 2S 3S | KH KD KC", "AS 2S 3S KH KD KC", 36),
        ("raeuber", {}, "QS KS AS | 2H 3H 4H", "QS KS AS 2H 3H 4H", 40),
    ],
)
def test_initial_value(
    variant_id: str, options: dict[str, Any], after: str, laid: str, value: int
) -> None:
    result = _check(variant_id, options, "", after, laid, opened=False)
    assert result.initial_value == value
    assert result.valid is (value >= find_variant(variant_id, options).initial_meld_required)


def test_opening_counts_only_melds_from_the_hand() -> None:
    # R10 R11 R12 (33) is from the hand; K9 K10 K11 K12 uses table tiles and does not count
    result = _check("sabra", {}, "K9 K10 K11", "R10 R11 R12 | K9 K10 K11 K12",
                    "R10 R11 R12 K12", opened=False)
    assert result.initial_value == 33


def test_discard_pile_is_refused_where_there_is_none() -> None:
    # [raeuber] "Räuber-Rommé wird aber auch ohne Ablagestapel gespielt": the option
    without_pile = find_variant("raeuber", {"discard_pile": "false"})
    with pytest.raises(TurnError, match="raeuber"):
        check_turn(without_pile, (), parse_melds("5C 6C 7C"), parse_items("5C 6C 7C"),
                   opened=True, discard_taken=parse_items("5C"))


@pytest.mark.parametrize(
    "options, taken, laid, codes",
    [
        # [raeuber] "Ansonsten gelten alle Regeln des Spiels mit Auslegen": Rommé's pile
        ({}, "5C", "5C 6C 7C", []),
        ({}, "9D", "5C 6C 7C", []),
        ({}, "9D 5C", "5C 6C 7C", ["discard_below_top"]),
        # [rommee] "nur dann die oberste Karte des Abwurfstapels aufnehmen darf, wenn er sie
        # sofort in einer Meldung auslegt"
        ({"discard_must_meld": "true"}, "5C", "5C 6C 7C", []),
        ({"discard_must_meld": "true"}, "9D", "5C 6C 7C", ["discard_not_melded"]),
    ],
)
def test_raeuber_keeps_the_rommee_discard_pile(
    options: dict[str, str], taken: str, laid: str, codes: list[str]
) -> None:
    result = check_turn(find_variant("raeuber", options), (), parse_melds(laid),
                        parse_items(laid), opened=True, discard_taken=parse_items(taken))
    assert [p.code for p in result.problems] == codes
    assert result.valid is not codes


def test_variant_without_rearrangement_is_judged_as_extend_only() -> None:
    # [rommee] "Beim Räuber-Rommé dürfen ausgelegte Meldungen nicht nur erweitert, sondern
    # ... neu kombiniert werden": what Räuber allows, plain Rommé does not
    result = check_turn(find_variant("rommee"), parse_melds("5C 6C 7C 8C 9C"),
                        parse_melds("5C 6C 7C | 7C 8C 9C"), parse_items("7C"), opened=True)
    assert [p.code for p in result.problems] == ["meld_split"]
    assert result.penalty_draw == 0


def test_table_conserved() -> None:
    before = parse_melds("R1 R2 R3 | K5 K6 JK=K7")
    assert table_conserved(before, parse_melds("R1 R2 | R3 K5 K6 JK"), ())
    assert table_conserved(before, parse_melds("R1 R2 R3 R4 | K5 K6 JK"), parse_items("R4"))
    assert not table_conserved(before, parse_melds("R1 R2 R3 | K5 K6"), ())


# --- property: new melds on an untouched table ------------------------------------------------
@st.composite
def _meld(draw: st.DrawFn, family: Family, ranks: tuple[int, int]) -> tuple[Item, ...]:
    """A meld that is usually legal (a run or set, perhaps with a joker), sometimes junk."""
    low, high = ranks
    kind = draw(st.sampled_from(["run", "set", "junk"]))
    if kind == "run":
        length = draw(st.integers(3, min(5, high - low + 1)))
        start = draw(st.integers(low, high - length + 1))
        suit = draw(st.integers(0, 3))
        items: list[Item] = [natural(family, r, suit) for r in range(start, start + length)]
    elif kind == "set":
        rank = draw(st.integers(low, high))
        suits = draw(st.lists(st.integers(0, 3), min_size=3, max_size=4, unique=True))
        items = [natural(family, rank, s) for s in suits]
    else:
        items = draw(
            st.lists(
                st.builds(natural, st.just(family), st.integers(low, high), st.integers(0, 3)),
                min_size=2,
                max_size=4,
            )
        )
    if draw(st.booleans()) and len(items) >= 3:
        items[draw(st.integers(0, len(items) - 1))] = JOKER
    return tuple(items)


@settings(max_examples=250, deadline=None)
@given(
    st.sampled_from([("sabra", Family.TILES), ("raeuber", Family.CARDS)]),
    st.booleans(),
    st.data(),
)
def test_adding_new_melds_to_an_untouched_table(
    game: tuple[str, Family], opened: bool, data: st.DataObject
) -> None:
    """Accepted iff the new melds are legal and, before opening, worth enough.

    The table's melds use ranks 1..6 and the new ones 7..13 when the player has not
    opened, so no table meld could pass for one laid from the hand.
    """
    variant_id, family = game
    variant = find_variant(variant_id)
    table_ranks = (1, 6) if not opened else (1, 13)
    new_ranks = (7, 13) if not opened else (1, 13)
    legal_meld = _meld(family, table_ranks).filter(lambda m: variant.analyse(m).valid)
    before = data.draw(st.lists(legal_meld, max_size=4), label="before")
    new = data.draw(st.lists(_meld(family, new_ranks), max_size=3), label="new")
    after = list(before) + list(new)
    position = data.draw(st.permutations(range(len(after))), label="order")
    after = [after[i] for i in position]
    laid = [item for meld in new for item in meld]

    result = check_turn(variant, before, after, laid, opened=opened)

    legal = all(variant.analyse(meld).valid for meld in new)
    expected = bool(new) and legal
    if not opened:
        expected = expected and variant.check_initial_meld(new).meets
    assert result.valid is expected, result.problems
    assert {p.code for p in result.problems} <= {"invalid_meld", "initial_too_low", "nothing_laid"}
    if not opened and legal:
        assert result.initial_value == variant.check_initial_meld(new).value
