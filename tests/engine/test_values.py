"""What items are worth: in melds (initial meld / meld scoring) and left in the hand.

Every expected number is worked out by hand from the rule text quoted beside
it (tags as in tests/test_melds.py).  Meld values are given item by item in
the reading's order (lowest position first), then summed.
"""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine.items import parse_item, parse_items
from tabletop.engine.melds import MeldKind, Reading
from tabletop.engine.variants import find_variant


def only_reading(variant_id: str, meld: str, kind: str, options: dict[str, Any]) -> Reading:
    analysis = find_variant(variant_id, options).analyse(parse_items(meld))
    readings = [r for r in analysis.readings if r.kind is MeldKind(kind)]
    assert len(readings) == 1, (meld, analysis.reason, [str(r) for r in analysis.readings])
    return readings[0]


def case(variant: str, meld: str, kind: str, per_item: list[int], **options: Any) -> Any:
    return pytest.param(variant, options, meld, kind, per_item, id=f"{variant}:{meld}:{options}")


MELD_VALUES = [
    # --------------------------------------------------------------- Rummikub
    # [sabra] "Wenn ein Joker verwendet wird, zählt er jeweils so viel wie die Zahl, für die
    # er steht" (tiles count their number)
    case("sabra", "R3 R4 JK R6", "run", [3, 4, 5, 6]),
    case("sabra", "K10 B10 JK", "set", [10, 10, 10]),
    case("sabra", "R5 JK JK", "set", [5, 5, 5]),
    case("sabra", "R5 JK JK", "run", [5, 6, 7]),
    case("sabra", "R1 R2 R3", "run", [1, 2, 3]),
    case("sabra", "K13 B13 O13 R13", "set", [13, 13, 13, 13]),
    # [american] "wobei die Spielsteine mit Zahlen ihrem jeweiligen Zahlenwert entsprechen.
    # Wenn Sie Joker verwenden, zählen diese jeweils so viel, wie die Zahl für die sie stehen"
    case("rummikub-american", "R12 R13 R1", "run", [12, 13, 1]),
    case("rummikub-american", "R12 R13 JK", "run", [12, 13, 1]),
    case("rummikub-american", "K1 B1 O1", "set", [1, 1, 1]),
    # [international] "wobei die Joker wie immer den Wert des Spielsteins haben, den sie
    # ersetzen" (the meld value is the face value; 10 a piece is only for the hand)
    case("rummikub-international", "R11 R12 R13 R1", "run", [11, 12, 13, 1]),
    case("rummikub-international", "K10 B10 JK", "set", [10, 10, 10]),
    case("rummikub-international", "JK R2 R3", "run", [1, 2, 3]),
    # -------------------------------------------------------------------- remi
    # [remi] "2 bis 9 jeder Stein 5 Punkte / 10 bis 13 jeder Stein 10 Punkte / 1 in einer
    # Folge von 1-2-3-… 5 Punkte / 1 in einer Folge von …-12-13-1 10 Punkte / Jede 1 in
    # einem Satz von Einsen 25 Punkte / Ein Joly hat den Wert des Steines, den er ersetzt"
    case("remi", "B4 B5 B6", "run", [5, 5, 5]),
    case("remi", "B9 B10 B11", "run", [5, 10, 10]),
    case("remi", "R1 R2 R3", "run", [5, 5, 5]),
    case("remi", "R12 R13 R1", "run", [10, 10, 10]),
    case("remi", "R1 B1 O1", "set", [25, 25, 25]),
    case("remi", "R1 B1 JK", "set", [25, 25, 25]),
    case("remi", "B9 B10 JK", "run", [5, 10, 10]),
    case("remi", "JK B2 B3", "run", [5, 5, 5]),
    case("remi", "B12 B13 JK", "run", [10, 10, 10]),
    case("remi", "K9 B9 JK", "set", [5, 5, 5]),
    case("remi", "O3 JK O5 JK O7 O8", "run", [5, 5, 5, 5, 5, 5]),
    case(
        "remi",
        "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1",
        "run",
        [5] + [5] * 8 + [10] * 4 + [10],
    ),
    # ------------------------------------------------------------------ rommee
    # [rommee] "Die Bildkarten König, Dame und Bube zählen je zehn Punkte, die Zählkarten
    # Zwei bis Zehn zählen nach ihren Augen, das Ass zählt im Satz bzw. in einer Folge nach
    # dem König ... elf Punkte, bei der Erstmeldung in der Folge A-2-3 jedoch nur einen
    # Punkt. Ein Joker zählt bei der Erstmeldung so viele Punkte wie die Karte, die er
    # ersetzt"
    case("rommee", "AH 2H 3H", "run", [1, 2, 3]),
    case("rommee", "AH 2H 3H 4H", "run", [1, 2, 3, 4]),
    case("rommee", "QC KC AC", "run", [10, 10, 11]),
    case("rommee", "AS AH AD", "set", [11, 11, 11]),
    case("rommee", "8D 9D 10D JD", "run", [8, 9, 10, 10]),
    case("rommee", "KH KD KC", "set", [10, 10, 10]),
    case("rommee", "JC QC JK AC", "run", [10, 10, 10, 11]),
    case("rommee", "6S 6H JK", "set", [6, 6, 6]),
    case("rommee", "3S JK JK 6S", "run", [3, 4, 5, 6]),
    case("rommee", "JK 2H 3H", "run", [1, 2, 3]),
    case("rommee", "AS AH JK", "set", [11, 11, 11]),
    case("rommee", "KS AS 2S", "run", [10, 11, 2], ace_around=True),
    case("rommee", "AS 2S 3S", "run", [1, 2, 3], ace_around=True),
    # [raeuber] "Ansonsten gelten alle Regeln des Spiels mit Auslegen"
    case("raeuber", "AH 2H 3H", "run", [1, 2, 3]),
    case("raeuber", "QC KC AC", "run", [10, 10, 11]),
    # [wiener] no laying out, so no Erstmeldung: a meld counts what its cards would count
    # "bei der Endabrechnung" (Ass elf, Joker zwanzig), i.e. the Augen it keeps out of the
    # hand
    case("wiener", "AH 2H 3H", "run", [11, 2, 3]),
    case("wiener", "QC KC AC", "run", [10, 10, 11]),
    case("wiener", "3S JK JK 6S", "run", [3, 20, 20, 6]),
    # ------------------------------------------------------------------ rum500
    # [rum500] "2, 3, ... 10 Nennwert / Jack, Queen, King je 10 Punkte / Ass, Joker je 15
    # Punkte. Ausnahme: Ein Ass, das mit den 2 und 3 derselben Farbe als Teil einer
    # Sequenzverschmelzung verschmolzen ist, erhält 1 Punkt anstelle von 15."
    case("rum500", "AS 2S 3S 4S", "run", [1, 2, 3, 4]),
    case("rum500", "QH KH AH", "run", [10, 10, 15]),
    case("rum500", "AS AH AD", "set", [15, 15, 15]),
    case("rum500", "JS JH JD", "set", [10, 10, 10]),
    case("rum500", "8C 9C 10C", "run", [8, 9, 10]),
    case("rum500", "6H 7H JK", "run", [6, 7, 15]),
    case("rum500", "9S JK JK", "set", [9, 15, 15]),
    case("rum500", "JK 2S 3S", "run", [15, 2, 3]),
    # [rum500] "Kartenwerte 5/10/15: ... die Pip-Karten 2 bis 9 als alle 5 Punkte wert. Die
    # Zehner- und Bildkarten J, Q, K zählen immer noch 10 und die Joker sind 15. Das Ass
    # zählt als 5 Punkte anstelle von 15, wenn es in einer Sequenz wie A-2-3 als niedrige
    # Karte verwendet wird."
    case("rum500", "AS 2S 3S", "run", [5, 5, 5], values="5-10-15"),
    case("rum500", "QH KH AH", "run", [10, 10, 15], values="5-10-15"),
    case("rum500", "9S 10S JS", "run", [5, 10, 10], values="5-10-15"),
    case("rum500", "6H 7H JK", "run", [5, 5, 15], values="5-10-15"),
    case("rum500", "AS AH AD", "set", [15, 15, 15], values="5-10-15"),
    # ---------------------------------------------------------- american rummy
    # [american-rummy] "As – 1 Punkt; König, Dame, Bube, Zehner – 10 Punkte, alle übrigen
    # Karten nach ihrem Wert"
    case("american-rummy", "AH 2H 3H", "run", [1, 2, 3]),
    case("american-rummy", "9H 10H JH QH", "run", [9, 10, 10, 10]),
    case("american-rummy", "KS KH KD KC", "set", [10, 10, 10, 10]),
    case("american-rummy", "QH KH AH", "run", [10, 10, 1], ace_high=True),
    # "Andere Art der Bewertung: As – 15 Punkte, König – 13 Punkte, Dame – 12 Punkte,
    # Bube – 11 Punkte. Alle übrigen Karten nach ihrem Wert."
    case("american-rummy", "AS AH AD", "set", [15, 15, 15], values="high"),
    case("american-rummy", "9S 10S JS QS KS", "run", [9, 10, 11, 12, 13], values="high"),
    # "Weitere Art der Bewertung: Zweier bis Zehner je 5 Punkte, Bube bis As je 10 Punkte."
    case("american-rummy", "AS AH AD", "set", [10, 10, 10], values="flat"),
    case("american-rummy", "9S 10S JS", "run", [5, 5, 10], values="flat"),
    case("american-rummy", "2C 3C 4C", "run", [5, 5, 5], values="flat"),
]


@pytest.mark.parametrize(("variant", "options", "meld", "kind", "per_item"), MELD_VALUES)
def test_meld_values(
    variant: str, options: dict[str, Any], meld: str, kind: str, per_item: list[int]
) -> None:
    v = find_variant(variant, options)
    reading = only_reading(variant, meld, kind, options)
    assert [v.slot_value(reading, slot) for slot in reading.slots] == per_item
    assert v.meld_value(reading) == sum(per_item)


def test_remi_joker_scores_50_for_its_first_melder() -> None:
    # [remi] "Eine Ausnahme bildet der Joly, der + 50 Punkte für den Spieler bringt, der ihn
    # zuerst gemeldet hat": in meld scoring, not in the opening count
    v = find_variant("remi")
    reading = only_reading("remi", "B9 B10 JK", "run", {})
    assert [v.melded_score(reading, s) for s in reading.slots] == [5, 10, 50]
    assert v.meld_value(reading) == 25


def test_rum500_melded_cards_score_their_value() -> None:
    # [rum500] "Alle Spieler zählen den Gesamtwert der Karten, die sie verschmolzen haben"
    v = find_variant("rum500")
    reading = only_reading("rum500", "JK QH KH AH", "run", {})
    assert [v.melded_score(reading, s) for s in reading.slots] == [15, 10, 10, 15]


HAND_VALUES = [
    # [sabra] "zählen die Werte der Spielsteine, die Sie noch übrig haben, zusammen, wobei ein
    # Joker 30 Punkte zählt"; Varianten: "25 Punkte statt 30"
    ("sabra", {}, "R7", 7),
    ("sabra", {}, "K13", 13),
    ("sabra", {}, "B1", 1),
    ("sabra", {}, "JK", 30),
    ("sabra", {"joker_penalty": 25}, "JK", 25),
    # [american] "Ein Joker ... zählt 30 Punkte, und Spielsteine mit der '1' zählen 1 Punkt"
    ("rummikub-american", {}, "JK", 30),
    ("rummikub-american", {}, "O1", 1),
    ("rummikub-american", {}, "O12", 12),
    ("rummikub-american", {"joker_penalty": "25"}, "JK", 25),
    # [international] "zählen die Spielsteine 2-9 ihren Nennwert, aber die Spielsteine 10, 11,
    # 12, 13 und 1 zählen jeweils 10 Punkte" (the joker: text silent, 30 as American)
    ("rummikub-international", {}, "R2", 2),
    ("rummikub-international", {}, "R9", 9),
    ("rummikub-international", {}, "R10", 10),
    ("rummikub-international", {}, "R13", 10),
    ("rummikub-international", {}, "R1", 10),
    ("rummikub-international", {}, "JK", 30),
    # [remi] "Der Punktwert der Steine ist derselbe, wie in der Tabelle für die
    # Anfangsmeldung ... der Joly ... – 25 Punkte für einen Spieler, der ihn am Ende des
    # Spiels noch auf seinem Ständer hat"
    ("remi", {}, "B2", 5),
    ("remi", {}, "B9", 5),
    ("remi", {}, "B10", 10),
    ("remi", {}, "B13", 10),
    ("remi", {}, "JK", 25),
    # a 1 on the rack: the table gives 5, 10 or 25 by how it is melded; option one_in_rack
    ("remi", {}, "B1", 25),
    ("remi", {"one_in_rack": 5}, "B1", 5),
    ("remi", {"one_in_rack": 10}, "B1", 10),
    # [rommee] "Bildkarten ... zehn Punkte, die Zählkarten Zwei bis Zehn zählen nach ihren
    # Augen, das Ass zählt ... bei der Endabrechnung elf Punkte ... bei der
    # Schlussabrechnung zählt ein Joker zwanzig Punkte"
    ("rommee", {}, "AS", 11),
    ("rommee", {}, "KS", 10),
    ("rommee", {}, "JD", 10),
    ("rommee", {}, "10C", 10),
    ("rommee", {}, "7H", 7),
    ("rommee", {}, "2H", 2),
    ("rommee", {}, "JK", 20),
    ("raeuber", {}, "AS", 11),
    ("raeuber", {}, "JK", 20),
    # [wiener] "gelten sinngemäß die Regeln des Spiels mit Auslegen, so etwa in Bezug auf ...
    # die Bewertung der Karten"
    ("wiener", {}, "AS", 11),
    ("wiener", {}, "QH", 10),
    ("wiener", {}, "5C", 5),
    ("wiener", {}, "JK", 20),
    # [rum500] "2 ... 10 Nennwert, Jack, Queen, King je 10 Punkte, Ass, Joker je 15 Punkte"
    ("rum500", {}, "7S", 7),
    ("rum500", {}, "10S", 10),
    ("rum500", {}, "KS", 10),
    ("rum500", {}, "AS", 15),
    ("rum500", {}, "JK", 15),
    # 5/10/15: "Pip-Karten 2 bis 9 als alle 5 ... Zehner- und Bildkarten ... 10 ... Joker 15"
    ("rum500", {"values": "5-10-15"}, "7S", 5),
    ("rum500", {"values": "5-10-15"}, "10S", 10),
    ("rum500", {"values": "5-10-15"}, "AS", 15),
    ("rum500", {"values": "5-10-15"}, "JK", 15),
    # [american-rummy] the three schemes quoted above MELD_VALUES
    ("american-rummy", {}, "AS", 1),
    ("american-rummy", {}, "10S", 10),
    ("american-rummy", {}, "KS", 10),
    ("american-rummy", {}, "9S", 9),
    ("american-rummy", {"values": "high"}, "AS", 15),
    ("american-rummy", {"values": "high"}, "KS", 13),
    ("american-rummy", {"values": "high"}, "QS", 12),
    ("american-rummy", {"values": "high"}, "JS", 11),
    ("american-rummy", {"values": "high"}, "10S", 10),
    ("american-rummy", {"values": "flat"}, "2S", 5),
    ("american-rummy", {"values": "flat"}, "10S", 5),
    ("american-rummy", {"values": "flat"}, "JS", 10),
    ("american-rummy", {"values": "flat"}, "AS", 10),
]


@pytest.mark.parametrize(("variant", "options", "token", "value"), HAND_VALUES)
def test_hand_values(variant: str, options: dict[str, Any], token: str, value: int) -> None:
    assert find_variant(variant, options).hand_value(parse_item(token)) == value


def test_hand_total() -> None:
    # [sabra] "zählen die Werte der Spielsteine ... zusammen, wobei ein Joker 30 Punkte zählt"
    assert find_variant("sabra").hand_total(parse_items("R1 B13 JK")) == 1 + 13 + 30
    # [rommee] Ass 11, König 10, Joker 20
    assert find_variant("rommee").hand_total(parse_items("AS KH JK 4D")) == 11 + 10 + 20 + 4


def test_american_rummy_has_no_joker_value() -> None:
    with pytest.raises(ValueError, match="without jokers"):
        find_variant("american-rummy").hand_value(parse_item("JK"))
