"""Round scoring of the card games, as known-answer tables worked out by hand from the rule texts.

Every expected number below was added up by hand from the card values the
texts give; the comment above a case quotes the rule it checks.
"""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine import find_variant, parse_items
from tabletop.engine.card_scoring import wiener_hand
from tabletop.engine.rounds import (
    MeldContribution,
    PlayerRound,
    RoundInput,
    RoundResult,
    check_round,
    round_from_json,
)


def _contribution(text: str) -> MeldContribution:
    """``"AH 2H 3H 4H > AH"``: the meld as it lies, then (after ``>``) this player's part."""
    meld_text, _, own_text = text.partition(">")
    meld = parse_items(meld_text)
    own = parse_items(own_text) if own_text.strip() else meld
    return MeldContribution(meld, own)


def _player(name: str, melds: str = "", hand: str = "", **flags: Any) -> PlayerRound:
    contributions = tuple(_contribution(part) for part in melds.split("|") if part.strip())
    return PlayerRound(name, contributions, parse_items(hand), **flags)


def _score(
    variant_id: str,
    players: list[PlayerRound],
    options: dict[str, Any] | None = None,
    pool_exhausted: bool = False,
) -> RoundResult:
    round_ = RoundInput(find_variant(variant_id, options), tuple(players), pool_exhausted)
    check_round(round_)
    return round_.variant.score_round(round_)


# --- 500 Rum ------------------------------------------------------------------
RUM500_CASES = [
    # "Ausnahme: Ein Ass, das mit den 2 und 3 derselben Farbe ... erhält 1 Punkt": 1+2+3.
    ("ace low in A-2-3", {}, [("Ana", "AS 2S 3S", "", True)], {"Ana": 6}),
    # "Ass, Joker je 15 Punkte": the ace after the king is 15; "Jack, Queen, King je 10".
    ("ace high in Q-K-A", {}, [("Ana", "QS KS AS", "", True)], {"Ana": 35}),
    # An ace in a group is not low: 3 x 15.
    ("aces in a group", {}, [("Ana", "AS AH AD", "", True)], {"Ana": 45}),
    # "Ass, Joker je 15 Punkte": a joker standing for the low ace still counts 15: 15+2+3.
    ("joker as low ace", {}, [("Ana", "JK 2S 3S", "", True)], {"Ana": 20}),
    # The real ace stays low when a joker is its 2: 1+15+3.
    ("joker as the 2", {}, [("Ana", "AS JK 3S", "", True)], {"Ana": 19}),
    # "2 ... 10 Nennwert": 8+9+10, and a group of jacks 30.
    ("pips and faces", {}, [("Ana", "8C 9C 10C | JS JH JD", "", True)], {"Ana": 57}),
    # Lay-off ("Entlassung") scores for the one who laid it, valued in its meld: the AH
    # laid on 2-3-4 is low, 1; the AD laid after Q-K is high, 15.
    (
        "lay-offs valued in the whole meld",
        {},
        [
            ("Ana", "AH 2H 3H 4H > 2H 3H 4H | QD KD AD > QD KD", "", True),
            ("Ben", "AH 2H 3H 4H > AH | QD KD AD > AD", "9C", False),
        ],
        {"Ana": 9 + 20, "Ben": 1 + 15 - 9},
    ),
    # "Wenn die in Ihrer Hand verbleibenden Karten mehr ... ergeben, ist Ihre Punktzahl für
    # diese Hand negativ": 7+8+9 melded, Q+K+A+joker = 10+10+15+15 held.
    (
        "negative round score",
        {},
        [("Ana", "5D 6D 7D", "", True), ("Ben", "7C 8C 9C", "QD KD AD JK", False)],
        {"Ana": 18, "Ben": 24 - 50},
    ),
    # A player who melded nothing loses the whole hand: 2+10+15.
    ("nothing melded", {}, [("Ana", "5D 6D 7D", "", True), ("Ben", "", "2C 10H AC", False)],
     {"Ana": 18, "Ben": -27}),
    # "Kartenwerte 5/10/15": pips 2-9 five, 10-K ten, "Das Ass zählt als 5 Punkte anstelle von
    # 15, wenn es in einer Sequenz wie A-2-3 als niedrige Karte verwendet wird".
    ("5-10-15 ace low", {"values": "5-10-15"}, [("Ana", "AS 2S 3S", "", True)], {"Ana": 15}),
    ("5-10-15 ace high", {"values": "5-10-15"}, [("Ana", "QS KS AS", "", True)], {"Ana": 35}),
    (
        "5-10-15 pips, tens and hand",
        {"values": "5-10-15"},
        [("Ana", "8C 9C 10C", "", True), ("Ben", "2H 3H 4H", "AD 4C JK", False)],
        # 5+5+10 ; 5+5+5 - (15+5+15)
        {"Ana": 20, "Ben": 15 - 35},
    ),
]


@pytest.mark.parametrize(
    ("label", "options", "players", "expected"), RUM500_CASES, ids=[c[0] for c in RUM500_CASES]
)
def test_rum500(
    label: str,
    options: dict[str, Any],
    players: list[tuple[str, str, str, bool]],
    expected: dict[str, int],
) -> None:
    result = _score(
        "rum500",
        [_player(name, melds, hand, out=out) for name, melds, hand, out in players]
        + ([_player("Cem", "", "")] if len(players) == 1 else []),
        options,
    )
    assert {name: result.scores[name] for name in expected} == expected
    assert result.problems == ()
    assert result.winner == "Ana"


def test_rum500_details_show_the_arithmetic() -> None:
    result = _score(
        "rum500",
        [
            _player("Ana", "AH 2H 3H 4H > 2H 3H 4H", "", out=True),
            _player("Ben", "AH 2H 3H 4H > AH", "KC"),
        ],
    )
    # The low ace laid off by Ben shows as 1, his king in hand as 10.
    assert any("AH=1" in line for line in result.details["Ben"])
    assert any("KC=10" in line for line in result.details["Ben"])
    assert result.details["Ben"][-1] == "round: 1 - 10 = -9"


def test_rum500_pool_exhausted_counts_the_same() -> None:
    # "wenn ... keine Karten mehr auf Lager sind ... Alle Spieler zählen den Gesamtwert":
    # no winner; 10+10+10 - 4 and 7+7+7 - (15+15).
    result = _score(
        "rum500",
        [_player("Ana", "KS KH KD", "4C"), _player("Ben", "7S 7H 7D", "AC JK")],
        pool_exhausted=True,
    )
    assert result.scores == {"Ana": 26, "Ben": -9}
    assert result.winner is None
    assert result.problems == ()


@pytest.mark.parametrize(
    ("label", "options", "players", "expected", "problem_words"),
    [
        # "Ein Spieler hat keine Karten mehr auf der Hand": the one out cannot hold a card;
        # it still counts against him like everyone's hand: 4+5+6 - 9.
        (
            "winner holds a card",
            {},
            [("Ana", "4D 5D 6D", "9S", True), ("Ben", "", "2C", False)],
            {"Ana": 15 - 9, "Ben": -2},
            "went out but still holds 9S",
        ),
        # "eine Sequenz besteht aus drei oder mehr aufeinanderfolgenden Karten": 5-6-8 is
        # none; its cards count as held: -(5+6+8).
        (
            "invalid meld",
            {},
            [("Ana", "4D 5D 6D", "", True), ("Ben", "5H 6H 8H", "", False)],
            {"Ana": 15, "Ben": -19},
            "5H 6H 8H is not a legal meld",
        ),
        # "K Eine 2 ist ungültig": no run round the corner.
        (
            "no K-A-2",
            {},
            [("Ana", "4D 5D 6D", "", True), ("Ben", "KC AC 2C", "", False)],
            {"Ana": 15, "Ben": -(10 + 15 + 2)},
            "KC AC 2C is not a legal meld",
        ),
        # One deck of 52 ("Standard-Kartenspiel mit 52 Karten"): a second 7H cannot exist;
        # it still counts its 7.
        (
            "second copy in one deck",
            {},
            [("Ana", "7H 7S 7D", "", True), ("Ben", "", "7H", False)],
            {"Ana": 21, "Ben": -7},
            "2 copies of 7H",
        ),
        # "Spielen ohne Joker": with jokers=false a joker is a misread; it counts nothing.
        (
            "joker without jokers",
            {"jokers": False},
            [("Ana", "7H 7S 7D", "", True), ("Ben", "", "JK 3C", False)],
            {"Ana": 21, "Ben": -3},
            "played without jokers",
        ),
        # A lay-off must be part of the meld it is laid on.
        (
            "lay-off not in its meld",
            {},
            [("Ana", "4D 5D 6D", "", True), ("Ben", "4D 5D 6D > 9C", "", False)],
            {"Ana": 15, "Ben": -9},
            "9C is not part of the meld 4D 5D 6D",
        ),
    ],
)
def test_rum500_problems(
    label: str,
    options: dict[str, Any],
    players: list[tuple[str, str, str, bool]],
    expected: dict[str, int],
    problem_words: str,
) -> None:
    result = _score(
        "rum500", [_player(n, m, h, out=o) for n, m, h, o in players], options
    )
    assert result.scores == expected
    assert any(problem_words in problem for problem in result.problems), result.problems


# --- American Rummy -----------------------------------------------------------
@pytest.mark.parametrize(
    ("scheme", "card", "value"),
    [
        # "As – 1 Punkt / König, Dame, Bube, Zehner – 10 Punkte, alle übrigen ... nach ihrem Wert"
        ("standard", "AS", 1),
        ("standard", "KS", 10),
        ("standard", "JD", 10),
        ("standard", "10H", 10),
        ("standard", "9C", 9),
        ("standard", "2C", 2),
        # "As – 15 Punkte, König – 13 Punkte, Dame – 12 Punkte, Bube – 11 Punkte. Alle übrigen
        # Karten nach ihrem Wert."
        ("high", "AS", 15),
        ("high", "KS", 13),
        ("high", "QS", 12),
        ("high", "JS", 11),
        ("high", "10S", 10),
        ("high", "7S", 7),
        # "Zweier bis Zehner je 5 Punkte, Bube bis As je 10 Punkte."
        ("flat", "2H", 5),
        ("flat", "10H", 5),
        ("flat", "JH", 10),
        ("flat", "AH", 10),
    ],
)
def test_american_rummy_card_values(scheme: str, card: str, value: int) -> None:
    # The loser's one card is what the winner collects.
    result = _score(
        "american-rummy",
        [_player("Ana", "4C 5C 6C", "", out=True), _player("Ben", "", card)],
        {"values": scheme},
    )
    assert result.scores == {"Ana": value, "Ben": -value}
    assert result.extras["collected"] == {"Ana": value}


@pytest.mark.parametrize(
    ("scheme", "all_at_once", "ben", "cem"),
    [
        # "Der Gewinner ... erhält von allen Spielern die Summe der Punktebewertung jener Karten,
        # die der Verlierer ... noch in der Hand hat": Ben AS 10D QH 5C, Cem KC 2D.
        ("standard", False, 1 + 10 + 10 + 5, 10 + 2),
        ("high", False, 15 + 10 + 12 + 5, 13 + 2),
        ("flat", False, 10 + 5 + 10 + 5, 10 + 5),
        # "Bei Hand-Rummy werden alle Punkte doppelt gerechnet."
        ("standard", True, 2 * 26, 2 * 12),
        ("high", True, 2 * 42, 2 * 15),
    ],
)
def test_american_rummy_collects(scheme: str, all_at_once: bool, ben: int, cem: int) -> None:
    result = _score(
        "american-rummy",
        [
            _player("Ana", "7C 8C 9C | KH KS KD", "", out=True, all_at_once=all_at_once),
            _player("Ben", "", "AS 10D QH 5C"),
            _player("Cem", "", "KC 2D"),
        ],
        {"values": scheme},
    )
    assert result.scores == {"Ana": ben + cem, "Ben": -ben, "Cem": -cem}
    assert result.extras["collected"] == {"Ana": ben + cem}
    assert result.doubled is all_at_once
    assert sum(result.scores.values()) == 0
    assert result.problems == ()


def test_american_rummy_losers_melds_do_not_count() -> None:
    # Only "jener Karten, die der Verlierer ... noch in der Hand hat" count: Ben's melded
    # 2-3-4 neither earns nor costs; his hand 6+10 does.
    result = _score(
        "american-rummy",
        [_player("Ana", "7C 8C 9C", "", out=True), _player("Ben", "2S 3S 4S", "6D JD")],
    )
    assert result.scores == {"Ana": 16, "Ben": -16}


@pytest.mark.parametrize(
    ("label", "options", "players", "expected", "problem_words"),
    [
        # "In diesem Falle dürfen vorher keine Figuren herausgelegt worden sein": Ben had
        # melded, so Hand-Rummy is doubtful; the flag is trusted (doubled) and reported.
        (
            "Hand-Rummy after another meld",
            {},
            # "In diesem Falle dürfen vorher keine Figuren herausgelegt worden sein": no Hand-Rummy,
            # nothing doubled
            [("Ana", "7C 8C 9C", "", True, True), ("Ben", "2S 3S 4S", "6D", False, False)],
            {"Ana": 6, "Ben": -6},
            "Ben had melded before",
        ),
        # "In einer Sequenz darf das As nicht an den König angelegt werden, es sei denn, ...
        # vereinbart": Q-K-A is no meld, so Ana still holds those cards.
        (
            "ace after king not agreed",
            {},
            [("Ana", "QS KS AS", "", True, False), ("Ben", "", "6D", False, False)],
            {"Ana": 6, "Ben": -6},
            "QS KS AS is not a legal meld",
        ),
        # Played with 52 cards, no jokers.
        (
            "joker in American Rummy",
            {},
            [("Ana", "7C 8C 9C", "", True, False), ("Ben", "", "JK 6D", False, False)],
            {"Ana": 6, "Ben": -6},
            "played without jokers",
        ),
    ],
)
def test_american_rummy_problems(
    label: str,
    options: dict[str, Any],
    players: list[tuple[str, str, str, bool, bool]],
    expected: dict[str, int],
    problem_words: str,
) -> None:
    result = _score(
        "american-rummy",
        [_player(n, m, h, out=o, all_at_once=a) for n, m, h, o, a in players],
        options,
    )
    assert result.scores == expected
    assert any(problem_words in problem for problem in result.problems), result.problems


def test_american_rummy_ace_after_king_when_agreed() -> None:
    # "... es sei denn, daß das vor dem Spiel ausdrücklich vereinbart wird".
    result = _score(
        "american-rummy",
        [_player("Ana", "QS KS AS", "", out=True), _player("Ben", "", "6D")],
        {"ace_high": True},
    )
    assert result.scores == {"Ana": 6, "Ben": -6}
    assert result.problems == ()


def test_american_rummy_stock_exhausted_is_no_end() -> None:
    # "Wenn die Karten vom Stoß aufgebraucht sind ... wird der Talon ... umgedreht und mit
    # diesen Karten weitergespielt": an exhausted stock ends nothing.
    result = _score(
        "american-rummy",
        [_player("Ana", "", "6D"), _player("Ben", "", "KD")],
        pool_exhausted=True,
    )
    assert result.scores == {"Ana": 0, "Ben": 0}
    assert any("turned over" in problem for problem in result.problems)


# --- Rommé and Räuber-Rommé ---------------------------------------------------
@pytest.mark.parametrize("variant_id", ["rommee", "raeuber"])
@pytest.mark.parametrize(
    ("card", "value"),
    [
        # "Die Bildkarten König, Dame und Bube zählen je zehn Punkte"
        ("KH", 10),
        ("QH", 10),
        ("JH", 10),
        # "die Zählkarten Zwei bis Zehn zählen nach ihren Augen"
        ("2C", 2),
        ("10C", 10),
        ("7D", 7),
        # "das Ass zählt ... bei der Endabrechnung elf Punkte"
        ("AS", 11),
        # "bei der Schlussabrechnung zählt ein Joker zwanzig Punkte"
        ("JK", 20),
    ],
)
def test_rommee_penalty_values(variant_id: str, card: str, value: int) -> None:
    result = _score(
        variant_id,
        [_player("Ana", "7S 8S 9S", "", out=True), _player("Ben", "3H 4H 5H", card)],
    )
    # "Alle übrigen Spieler erhalten so viele Schlechtpunkte, wie sie noch an Augen in der
    # Hand halten" - the melded 3-4-5 does not matter; the winner gets nothing.
    assert result.scores == {"Ana": 0, "Ben": -value}
    assert result.problems == ()


@pytest.mark.parametrize("variant_id", ["rommee", "raeuber"])
@pytest.mark.parametrize(
    ("all_at_once", "ben", "cem"),
    [
        # Ben holds AS KH 7D JK = 11+10+7+20, Cem 2C 3C = 5.
        (False, 48, 5),
        # Hand-Rommé: "Die Schlechtpunkte der übrigen Spieler werden in diesem Spiel doppelt
        # gezählt."
        (True, 96, 10),
    ],
)
def test_rommee_round(variant_id: str, all_at_once: bool, ben: int, cem: int) -> None:
    result = _score(
        variant_id,
        [
            _player("Ana", "7S 8S 9S | QD QH QC JK", "", out=True, all_at_once=all_at_once),
            _player("Ben", "", "AS KH 7D JK"),
            _player("Cem", "", "2C 3C"),
        ],
    )
    assert result.scores == {"Ana": 0, "Ben": -ben, "Cem": -cem}
    assert result.doubled is all_at_once
    assert result.winner == "Ana"
    assert result.problems == ()


@pytest.mark.parametrize(
    ("label", "players", "expected", "problem_words"),
    [
        # Hand-Rommé needs "bevor irgendein anderer Spieler Karten gemeldet hat": Ben had.
        # The flag is trusted (doubled: 2 x 6) and the contradiction reported.
        (
            "Hand-Rommé after another meld",
            # Hand-Rommé is laying everything "bevor irgendein anderer Spieler Karten gemeldet
            # hat": Ben had, so his 6D is not doubled
            [("Ana", "7S 8S 9S", "", True, True), ("Ben", "2H 3H 4H", "6D", False, False)],
            {"Ana": 0, "Ben": -6},
            "Ben had melded before",
        ),
        # "Es ist nicht gestattet, eine Figur mit nur einer natürlichen Karte und zwei Jokern
        # auszulegen": Ben's 5H JK JK goes back to his hand, 5+20+20.
        (
            "one natural and two jokers",
            [("Ana", "7S 8S 9S", "", True, False), ("Ben", "5H JK JK", "", False, False)],
            {"Ana": 0, "Ben": -45},
            "5H JK JK is not a legal meld",
        ),
        # "♠K–♠A–♠2" is no Folge.
        (
            "no K-A-2",
            [("Ana", "7S 8S 9S", "", True, False), ("Ben", "KS AS 2S", "", False, False)],
            {"Ana": 0, "Ben": -(10 + 11 + 2)},
            "KS AS 2S is not a legal meld",
        ),
        # The winner "kann alle Karten auslegen": one who holds a card is reported.
        (
            "winner holds a card",
            [("Ana", "7S 8S 9S", "4C", True, False), ("Ben", "", "6D", False, False)],
            {"Ana": 0, "Ben": -6},
            "went out but still holds 4C",
        ),
        # Two packs of 52: a third queen of hearts cannot exist.
        (
            "third copy",
            [("Ana", "QH QS QD | QH QC QS", "", True, False), ("Ben", "", "QH", False, False)],
            {"Ana": 0, "Ben": -10},
            "3 copies of QH",
        ),
    ],
)
def test_rommee_problems(
    label: str,
    players: list[tuple[str, str, str, bool, bool]],
    expected: dict[str, int],
    problem_words: str,
) -> None:
    result = _score(
        "rommee", [_player(n, m, h, out=o, all_at_once=a) for n, m, h, o, a in players]
    )
    assert result.scores == expected
    assert any(problem_words in problem for problem in result.problems), result.problems


def test_rommee_ace_after_king_is_a_run() -> None:
    # "♣D–♣K–♣A" is a Folge: no problem, and the melds do not change the penalty.
    result = _score(
        "rommee", [_player("Ana", "QC KC AC", "", out=True), _player("Ben", "", "AD")]
    )
    assert result.scores == {"Ana": 0, "Ben": -11}
    assert result.problems == ()


def test_rommee_stock_exhausted() -> None:
    # Not in the text: everyone loses the value of the hand, nothing doubled.
    result = _score(
        "rommee",
        [_player("Ana", "2S 3S 4S", "9S"), _player("Ben", "", "JK AC")],
        pool_exhausted=True,
    )
    assert result.scores == {"Ana": -9, "Ben": -31}
    assert result.winner is None
    assert result.doubled is False


# --- Wiener Rummy -------------------------------------------------------------
# Ten cards each: [wiener] "Jeder Spieler erhält zehn Karten, der Geber nimmt sich selbst elf."
ROMME_CALLER = ("Ana", "7S 8S 9S | 3H 3D 3C | KH KD KC JK", "")


@pytest.mark.parametrize(
    ("label", "ben_melds", "ben_hand", "ben_deadwood"),
    [
        # Melds given, hand = the rest, where the rest still fits into melds: bad cards are
        # "derjenigen Karten, die nicht in Figuren untergebracht werden können", so the joker
        # goes as the KS into QS-KS-AS and 2H 9D 9H 4D = 2+9+9+4 count, not all seven (65).
        ("given melds, rest in hand", "5C 6C 7C", "AS 2H 9D 9H QS JK 4D", 24),
        # The same with all ten cards in the hand: the melded ones are taken out.
        ("given melds, whole hand", "5C 6C 7C", "5C 6C 7C AS 2H 9D 9H QS JK 4D", 24),
        # Melds given and the rest fits nowhere: the rest counts as it is, 2+10+4+10.
        ("given melds, rest fits nowhere", "5C 6C 7C | 9S 9H 9D", "2H QC 4D KS", 26),
        # A leftover joker joins the player's own set (or run): "nicht in Figuren
        # untergebracht" are only 3D 2S QH, 3+2+10.
        ("leftover joker joins own set", "5C 6C 7C | 9S 9H 9D", "JK 3D 2S QH", 15),
        # No melds given: the least deadwood.  The joker saves most as the KS in QS-KS-AS
        # (10+11 = 21, "♣D–♣K–♣A" is a Folge) rather than in 9D 9H JK (18); with 5C-6C-7C
        # that leaves 2H 9H 4D 9D.
        ("computed melds", "", "5C 6C 7C AS 2H 9D 9H QS JK 4D", 2 + 9 + 4 + 9),
        # Computed: Q-K-A is a Folge in Rommé ("♣D–♣K–♣A"), K-A-2 is not; the 2D stays.
        ("computed ace high", "", "QD KD AD 2D 5S 5H 5C 8C 9C 10C", 2),
        # Computed, nothing fits: all ten cards count: 2+3+5+7+9+J+K+A+4+6 (suits mixed).
        (
            "computed no melds",
            "",
            "2S 3H 5D 7C 9S JH KD AC 4S 6H",
            2 + 3 + 5 + 7 + 9 + 10 + 10 + 11 + 4 + 6,
        ),
    ],
)
def test_wiener_deadwood(label: str, ben_melds: str, ben_hand: str, ben_deadwood: int) -> None:
    result = _score(
        "wiener",
        [_player(*ROMME_CALLER, out=True), _player("Ben", ben_melds, ben_hand)],
    )
    assert result.scores == {"Ana": 0, "Ben": -ben_deadwood}
    assert result.problems == ()


@pytest.mark.parametrize(
    ("label", "options", "ana_hand", "ana_deadwood", "problem_words"),
    [
        # "Hat ein Spieler nur mehr fünf oder weniger Augen in schlechten Karten, so kann er
        # klopfen": deadwood 5D = 5 is allowed.
        ("knock at five", {}, "7S 8S 9S 3H 3D 3C KH KD KC 5D", 5, None),
        ("knock at two", {}, "7S 8S 9S 3H 3D 3C KH KD KC 2D", 2, None),
        # Six is too many.
        ("knock at six", {}, "7S 8S 9S 3H 3D 3C KH KD KC 6D", 6, "knocked with 6"),
        # An ace left over is 11, far too many.
        ("knock with an ace", {}, "7S 8S 9S 3H 3D 3C KH KD KC AD", 11, "knocked with 11"),
        # The knock limit as an option: 10 allows the six.
        ("knock limit 10", {"knock_limit": 10}, "7S 8S 9S 3H 3D 3C KH KD KC 6D", 6, None),
    ],
)
def test_wiener_knock(
    label: str,
    options: dict[str, Any],
    ana_hand: str,
    ana_deadwood: int,
    problem_words: str | None,
) -> None:
    result = _score(
        "wiener",
        [
            _player("Ana", "", ana_hand, out=True, knocked=True),
            # Ben: 4S-5S-6S and JS JH JD, deadwood 2C 8H 9D QC = 2+8+9+10.
            _player("Ben", "", "4S 5S 6S JS JH JD 2C 8H 9D QC"),
        ],
        options,
    )
    assert result.scores == {"Ana": -ana_deadwood, "Ben": -29}
    if problem_words is None:
        assert result.problems == ()
    else:
        assert any(problem_words in problem for problem in result.problems), result.problems
    assert result.extras["chips"] == {"Ana": 1, "Ben": -1}


@pytest.mark.parametrize(
    ("label", "players", "expected", "problem_words"),
    [
        # Rommé called (not knocked) with a card left over: "zehn Karten in Meldungen auslegt".
        (
            "Rommé caller with deadwood",
            [
                ("Ana", "7S 8S 9S | 3H 3D 3C | KH KD KC", "4C", True),
                ("Ben", "", "4S 5S 6S JS JH JD 2C 8H 9D QC", False),
            ],
            {"Ana": -4, "Ben": -29},
            "called Rommé but has deadwood 4C",
        ),
        # "Ein Anlegen an Figuren anderer Spieler ist nicht gestattet": Ben's 10S laid on Ana's
        # 7S-8S-9S stays deadwood with the rest of his hand (JS JH JD are melded).
        (
            "lay-off on another's meld",
            [
                ("Ana", "7S 8S 9S | 3H 3D 3C | KH KD KC JK", "", True),
                ("Ben", "JS JH JD | 7S 8S 9S 10S > 10S", "2C 8H 9D QC 4D 5H", False),
            ],
            {"Ana": 0, "Ben": -(10 + 2 + 8 + 9 + 10 + 4 + 5)},
            "laying off on another player's meld is not allowed",
        ),
        # A given meld that is none: its cards are deadwood (4+5+7 + 2+8+9+10).
        (
            "invalid given meld",
            [
                ("Ana", "7S 8S 9S | 3H 3D 3C | KH KD KC JK", "", True),
                ("Ben", "JS JH JD | 4S 5S 7S", "2C 8H 9D QC", False),
            ],
            {"Ana": 0, "Ben": -(4 + 5 + 7 + 2 + 8 + 9 + 10)},
            "4S 5S 7S is not a legal meld",
        ),
        # "mit zwei Paketen ... und nur je einem Joker": a third joker is a misread.
        (
            "three jokers",
            [
                ("Ana", "7S 8S 9S | 3H 3D 3C | KH KD KC JK", "", True),
                ("Ben", "", "JK JK 2C 8H 9D QC 4D 5H 6S 7C", False),
            ],
            # Ben: "in einer Folge aus mindestens vier Karten dürfen ... auch zwei Joker
            # unmittelbar aufeinanderfolgen": 5H JK JK 8H; the rest (ranks all different,
            # no two in reach in one suit) 2C 9D QC 4D 6S 7C count.
            {"Ana": 0, "Ben": -(2 + 9 + 10 + 4 + 6 + 7)},
            "3 jokers were seen, but Wiener Rummy has only 2",
        ),
        # Ten cards each at the count; nine are a misread.
        (
            "nine cards",
            [
                ("Ana", "7S 8S 9S | 3H 3D 3C | KH KD KC JK", "", True),
                ("Ben", "", "4S 5S 6S JS JH JD 2C 8H 9D", False),
            ],
            {"Ana": 0, "Ben": -19},
            "Ben shows 9 cards",
        ),
    ],
)
def test_wiener_problems(
    label: str,
    players: list[tuple[str, str, str, bool]],
    expected: dict[str, int],
    problem_words: str,
) -> None:
    result = _score("wiener", [_player(n, m, h, out=o) for n, m, h, o in players])
    assert result.scores == expected
    assert any(problem_words in problem for problem in result.problems), result.problems


@pytest.mark.parametrize(
    ("players", "winner", "chips"),
    [
        # "erhält der Klopfer bzw. Rommé-Rufer von allen übrigen noch im Spiel befindlichen
        # Teilnehmern ... einen Chip": four players, the winner +3, each other -1.
        (4, "Ana", {"Ana": 3, "Ben": -1, "Cem": -1, "Dan": -1}),
        (3, "Cem", {"Ana": -1, "Ben": -1, "Cem": 2}),
        (2, "Ben", {"Ana": -1, "Ben": 1}),
    ],
)
def test_wiener_chips(players: int, winner: str, chips: dict[str, int]) -> None:
    hands = [
        ("Ana", "7S 8S 9S 3H 3D 3C KH KD KC 2S"),
        ("Ben", "7H 8H 9H 4H 4D 4C QH QD QC 3S"),
        ("Cem", "7D 8D 9D 5H 5D 5C JH JD JC AS"),
        ("Dan", "2C 3C 4C 6H 6D 6C 10H 10D 10C 9C"),
    ][:players]
    result = _score(
        "wiener",
        [
            _player(name, "", hand, out=name == winner, knocked=name == winner)
            for name, hand in hands
        ],
    )
    assert result.extras["chips"] == chips
    assert sum(result.extras["chips"].values()) == 0
    # Deadwood: Ana 2, Ben 3, Cem the ace 11 (so Cem knocking is a problem), Dan 9.
    expected = {"Ana": -2, "Ben": -3, "Cem": -11, "Dan": -9}
    assert result.scores == {name: expected[name] for name, _ in hands}
    assert any("knocked with 11" in p for p in result.problems) is (winner == "Cem")


def test_wiener_stock_exhausted_pays_no_chips() -> None:
    # Not in the text: everyone counts deadwood, no Klopfgeld.
    result = _score(
        "wiener",
        [
            _player("Ana", "", "7S 8S 9S 3H 3D 3C KH KD KC 2S"),
            _player("Ben", "", "7H 8H 9H 4H 4D 4C QH QD QC 3S"),
        ],
        pool_exhausted=True,
    )
    assert result.scores == {"Ana": -2, "Ben": -3}
    assert result.extras["chips"] == {"Ana": 0, "Ben": 0}
    assert result.winner is None


def test_wiener_hand_on_its_own() -> None:
    variant = find_variant("wiener")
    hand = wiener_hand(variant, _player("Ben", "", "5C 6C 7C AS 2H 9D 9H QS JK 4D"))
    assert hand.computed
    # As in test_wiener_deadwood: QS JK AS and 5C 6C 7C, leaving 2+9+4+9.
    assert hand.deadwood_value == 24
    assert sorted(map(str, hand.deadwood)) == ["2H", "4D", "9D", "9H"]
    assert len(hand.melds) == 2


# --- through the JSON form ----------------------------------------------------
def test_round_from_json_lay_off() -> None:
    # The documented JSON form: Ben's lay-off of the low AH on Ana's 2-3-4 counts 1 for him.
    round_ = round_from_json(
        {
            "variant": "rum500",
            "players": [
                {"name": "Ana", "out": True,
                 "melds": [{"meld": "AH 2H 3H 4H", "own": "2H 3H 4H"}]},
                {"name": "Ben", "melds": [{"meld": "AH 2H 3H 4H", "own": "AH"}], "hand": "5S"},
            ],
        }
    )
    result = round_.variant.score_round(round_)
    assert result.scores == {"Ana": 9, "Ben": 1 - 5}


def test_score_round_dispatches_to_card_scoring() -> None:
    from tabletop.engine.rounds import score_round

    round_ = RoundInput(
        find_variant("rommee"),
        (_player("Ana", "7S 8S 9S", "", out=True), _player("Ben", "", "AS")),
    )
    assert score_round(round_).scores == {"Ana": 0, "Ben": -11}
