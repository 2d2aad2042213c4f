"""Round scoring of Sabra, American Rummikub and Remi (engine/tile_scoring.py).

Every expected score below is worked out by hand from the rule texts
(rules/rummikub-sabra-american-international.de.txt, rules/remi-romanian-tile-rummy.de.txt);
the arithmetic is written next to each case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabletop.engine.items import parse_item, parse_items
from tabletop.engine.rounds import MeldContribution, PlayerRound, RoundError, RoundInput
from tabletop.engine.tile_scoring import score_remi, score_rummikub, value_contribution
from tabletop.engine.variants import find_variant


def contribution(meld: str, own: str | None = None, taken: int = 0) -> MeldContribution:
    items = parse_items(meld)
    return MeldContribution(items, items if own is None else parse_items(own), taken)


def player(
    name: str,
    hand: str = "",
    melds: Sequence[MeldContribution | str] = (),
    **flags: Any,
) -> PlayerRound:
    contributions = tuple(contribution(m) if isinstance(m, str) else m for m in melds)
    if "last_discard" in flags and isinstance(flags["last_discard"], str):
        flags["last_discard"] = parse_item(flags["last_discard"])
    return PlayerRound(name, contributions, parse_items(hand), **flags)


def round_of(
    variant_id: str, *players: PlayerRound, pool_exhausted: bool = False, **options: Any
) -> RoundInput:
    return RoundInput(find_variant(variant_id, options), players, pool_exhausted)


def case(table: Sequence[Any], case_id: str) -> RoundInput:
    """The round of the parametrised case ``case_id`` in ``table``."""
    (found,) = [param.values[0] for param in table if param.id == case_id]
    assert isinstance(found, RoundInput)
    return found


# --- Sabra and American Rummikub ----------------------------------------------
RUMMIKUB_CASES = [
    pytest.param(
        # [sabra] "Die anderen Spieler zählen die Werte ... wobei ein Joker 30 Punkte zählt ...
        # der Gewinner erhält die Gesamtsumme": Ben 5+13+30 = 48, Cem 1+2 = 3, Ana 51
        round_of(
            "sabra",
            player("Ana", out=True),
            player("Ben", "R5 K13 JK"),
            player("Cem", "B1 O2"),
        ),
        {"Ana": 51, "Ben": -48, "Cem": -3},
        "Ana",
        id="sabra-went-out",
    ),
    pytest.param(
        # [sabra] "ein Joker ... 25 Punkte anstatt 30": Ben 25+10 = 35
        round_of("sabra", player("Ana", out=True), player("Ben", "JK K10"), joker_penalty=25),
        {"Ana": 35, "Ben": -35},
        "Ana",
        id="sabra-joker-25",
    ),
    pytest.param(
        # [american] "Ein Joker ... zählt 30 Punkte, und Spielsteine mit der '1' zählen 1 Punkt":
        # Ben 1+1+1 = 3, Cem 30; the winner sits last
        round_of(
            "rummikub-american",
            player("Ben", "R1 B1 K1"),
            player("Cem", "JK"),
            player("Ana", out=True),
        ),
        {"Ben": -3, "Cem": -30, "Ana": 33},
        "Ana",
        id="american-went-out-ones",
    ),
    pytest.param(
        # [american] "Wie bei Sabra ... 25 Punkte statt 30"
        round_of(
            "rummikub-american",
            player("Ana", out=True),
            player("Ben", "JK JK R9"),
            joker_penalty=25,
        ),
        {"Ana": 59, "Ben": -59},
        "Ana",
        id="american-joker-25",
    ),
    pytest.param(
        # [sabra] "Der Spieler mit der niedrigsten Punktzahl gewinnt. Jeder der anderen ...
        # Differenz ... als Minus": racks Ana 3+4 = 7, Ben 10+8 = 18, Cem 13;
        # Ben -11, Cem -6, Ana +17
        round_of(
            "sabra",
            player("Ana", "R3 K4"),
            player("Ben", "B10 O8"),
            player("Cem", "R13"),
            pool_exhausted=True,
        ),
        {"Ana": 17, "Ben": -11, "Cem": -6},
        "Ana",
        id="sabra-pool-exhausted",
    ),
    pytest.param(
        # [sabra] pool exhausted, joker 30 on the rack: Ana 30 is worst, Ben 12+13 = 25,
        # Cem 9 lowest; Ana -21, Ben -16, Cem +37
        round_of(
            "sabra",
            player("Ana", "JK"),
            player("Ben", "K12 K13"),
            player("Cem", "O9"),
            pool_exhausted=True,
        ),
        {"Ana": -21, "Ben": -16, "Cem": 37},
        "Cem",
        id="sabra-pool-exhausted-joker",
    ),
    pytest.param(
        # [american] "Ich schlage vor, dass dieselbe Regel angewendet wird wie bei Sabra":
        # Ana 1+1 = 2 lowest, Ben 30+2 = 32 -> -30
        round_of(
            "rummikub-american",
            player("Ana", "R1 K1"),
            player("Ben", "JK B2"),
            pool_exhausted=True,
        ),
        {"Ana": 30, "Ben": -30},
        "Ana",
        id="american-pool-exhausted",
    ),
    pytest.param(
        # Tie for the lowest rack (not in the text; shared, documented choice):
        # Ana 7, Ben 3+4 = 7, Cem 13+12 = 25 -> Cem -18, Ana and Ben 9 each
        round_of(
            "sabra",
            player("Ana", "R7"),
            player("Ben", "K3 B4"),
            player("Cem", "R13 K12"),
            pool_exhausted=True,
        ),
        {"Ana": 9, "Ben": 9, "Cem": -18},
        None,
        id="sabra-tie-even",
    ),
    pytest.param(
        # Tie, odd gain: Cem 13+11 = 24 -> -17; 17 = 8 + 8 + 1 leftover to the tied player
        # earliest in seating, which is Ana (Cem sits first but is not tied)
        round_of(
            "sabra",
            player("Cem", "R13 K11"),
            player("Ana", "R7"),
            player("Ben", "K3 B4"),
            pool_exhausted=True,
        ),
        {"Cem": -17, "Ana": 9, "Ben": 8},
        None,
        id="sabra-tie-leftover",
    ),
    pytest.param(
        # Three-way tie at 5, Dan 10 -> -5 = 1 + 1 + 1 and 2 left over to Ana (first seat)
        round_of(
            "rummikub-american",
            player("Ana", "R5"),
            player("Ben", "K2 K3"),
            player("Cem", "O1 O4"),
            player("Dan", "B10"),
            pool_exhausted=True,
        ),
        {"Ana": 3, "Ben": 1, "Cem": 1, "Dan": -5},
        None,
        id="american-three-way-tie",
    ),
    pytest.param(
        # Everybody tied: nothing to share
        round_of("sabra", player("Ana", "R5"), player("Ben", "K5"), pool_exhausted=True),
        {"Ana": 0, "Ben": 0},
        None,
        id="sabra-all-tied",
    ),
]


@pytest.mark.parametrize("round_, expected, winner", RUMMIKUB_CASES)
def test_rummikub_known_answers(
    round_: RoundInput, expected: dict[str, int], winner: str | None
) -> None:
    result = score_rummikub(round_)
    assert result.scores == expected
    assert list(result.scores) == [p.name for p in round_.players]
    assert result.winner == winner
    assert sum(result.scores.values()) == 0  # [sabra] "zusammengezählt wie üblich Null ergibt"
    assert not result.problems
    assert set(result.details) == set(expected)


def test_rummikub_details_explain_the_score() -> None:
    result = score_rummikub(
        round_of("sabra", player("Ana", out=True), player("Ben", "R5 K13 JK"), player("Cem", "B1"))
    )
    assert result.details["Ben"] == ["rack R5 K13 JK: -48"]
    assert result.details["Ana"] == ["went out", "from Ben: +48", "from Cem: +1"]


def test_rummikub_tie_is_reported() -> None:
    result = score_rummikub(case(RUMMIKUB_CASES, "sabra-tie-leftover"))
    assert result.extras["winners"] == ["Ana", "Ben"]
    assert any("leftover" in line for line in result.details["Ana"])
    assert not any("leftover" in line for line in result.details["Ben"])


def test_rummikub_winner_with_tiles_is_a_problem_but_scored() -> None:
    # [sabra] "Der Spieler, der zuerst alle seine Spielsteine gespielt hat, gewinnt":
    # an out player still holding R5 breaks that; Ben's 2 still go to Ana.
    result = score_rummikub(round_of("sabra", player("Ana", "R5", out=True), player("Ben", "K2")))
    assert result.scores == {"Ana": 2, "Ben": -2}
    assert len(result.problems) == 1 and "Ana" in result.problems[0] and "R5" in result.problems[0]


def test_rummikub_round_without_an_end_is_scored_as_exhausted_with_a_problem() -> None:
    result = score_rummikub(round_of("sabra", player("Ana", "R3"), player("Ben", "K9")))
    assert result.scores == {"Ana": 6, "Ben": -6}
    assert result.problems


def test_rummikub_cards_in_a_tile_game_are_a_problem() -> None:
    result = score_rummikub(round_of("sabra", player("Ana", out=True), player("Ben", "QH R2")))
    assert any("QH" in problem for problem in result.problems)


@pytest.mark.parametrize("scorer", [score_rummikub, score_remi])
def test_two_winners_cannot_be_scored(scorer: Any) -> None:
    bad = round_of("sabra", player("Ana", out=True), player("Ben", out=True))
    with pytest.raises(RoundError, match="Ana, Ben"):
        scorer(bad)


_TILE_TOKENS = [f"{c}{n}" for c in "KBOR" for n in range(1, 14)] + ["JK"]


@st.composite
def rummikub_rounds(draw: st.DrawFn) -> RoundInput:
    count = draw(st.integers(2, 4))
    racks = [draw(st.lists(st.sampled_from(_TILE_TOKENS), max_size=14)) for _ in range(count)]
    winner = draw(st.one_of(st.none(), st.integers(0, count - 1)))
    players = tuple(
        PlayerRound(
            f"P{i}",
            hand=() if i == winner else parse_items(rack),
            out=i == winner,
        )
        for i, rack in enumerate(racks)
    )
    variant = find_variant(
        draw(st.sampled_from(["sabra", "rummikub-american"])),
        {"joker_penalty": draw(st.sampled_from([30, 25]))},
    )
    return RoundInput(variant, players, pool_exhausted=winner is None)


@given(rummikub_rounds())
def test_rummikub_rounds_are_zero_sum(round_: RoundInput) -> None:
    # [sabra]/[american] "Dadurch ergeben die Punktzahlen aller Spieler zusammengenommen
    # immer Null"
    result = score_rummikub(round_)
    assert sum(result.scores.values()) == 0
    racks = {p.name: round_.variant.hand_total(p.hand) for p in round_.players}
    lowest = min(racks.values())
    for p in round_.players:
        if p.out:
            assert result.scores[p.name] == sum(racks.values())
        elif round_.winner is not None:
            assert result.scores[p.name] == -racks[p.name]
        elif racks[p.name] == lowest:
            assert result.scores[p.name] >= 0
        else:
            assert result.scores[p.name] == lowest - racks[p.name]
    assert not result.problems


# --- Remi: one contribution ---------------------------------------------------------
CONTRIBUTION_CASES = [
    # [remi] table "1 in einer Folge von 1-2-3-… 5 Punkte": 5 + 5 + 5
    pytest.param("R1 R2 R3", None, 0, 15, id="one-low"),
    # "1 in einer Folge von …-12-13-1 10 Punkte": 10 + 10 + 10
    pytest.param("R12 R13 R1", None, 0, 30, id="one-high"),
    # "Jede 1 in einem Satz von Einsen 25 Punkte": 3 x 25
    pytest.param("K1 B1 R1", None, 0, 75, id="ones-set"),
    # a lone 1 laid on 12-13 counts in the whole meld: 10
    pytest.param("R12 R13 R1", "R1", 0, 10, id="lone-one-high"),
    pytest.param("R1 R2 R3", "R1", 0, 5, id="lone-one-low"),
    pytest.param("K1 B1 R1 O1", "O1", 0, 25, id="lone-one-set"),
    # the owner of R12 R13 gets 10 + 10 without the 1 another laid
    pytest.param("R12 R13 R1", "R12 R13", 0, 20, id="rest-of-meld"),
    # "2 bis 9 jeder Stein 5 Punkte", "10 bis 13 ... 10 Punkte": 5 + 10 + 10 + 10
    pytest.param("B9 B10 B11 B12", None, 0, 35, id="plain-run"),
    # "der Joly, der + 50 Punkte für den Spieler bringt, der ihn zuerst gemeldet hat": 5+50+5
    pytest.param("R5 JK R7", None, 0, 60, id="joker-first-melded"),
    pytest.param("K5 B5 JK", None, 0, 60, id="joker-in-set"),
    # "der Spieler, der ihn später genommen hat, bekommt nur die Punkte für den Stein":
    # JK stands for B10: 5 + 10 + 10
    pytest.param("B9 JK B11", None, 1, 25, id="taken-joker-as-ten"),
    # taken joker standing for a high 1: 10 + 10 + 10
    pytest.param("R12 R13 JK", None, 1, 30, id="taken-joker-as-high-one"),
    # taken joker standing for a 1 in a set of ones: 3 x 25
    pytest.param("K1 B1 JK", None, 1, 75, id="taken-joker-as-one-in-set"),
    # taken joker standing for a low 1: 5 + 5 + 5
    pytest.param("JK R2 R3", None, 1, 15, id="taken-joker-as-low-one"),
    # declared jokers in own pick the slot: JK=R6 taken -> 5, JK=R4 first melded -> 50
    pytest.param("R3 JK R5 JK R7 R8", "JK=R6", 1, 5, id="declared-taken"),
    pytest.param("R3 JK R5 JK R7 R8", "JK=R4", 0, 50, id="declared-first"),
    # two jokers, one taken: the first in own is the taken one (documented convention):
    # JK=R11 taken 10 + JK=R9 50 = 60; the other way round 5 + 50 = 55
    pytest.param("R8 JK R10 JK R12 R13", "JK=R11 JK=R9", 1, 60, id="two-jokers-first-taken"),
    pytest.param("R8 JK R10 JK R12 R13", "JK=R9 JK=R11", 1, 55, id="two-jokers-other-taken"),
    # both jokers and the four tiles first melded: 5+50+10+50+10+10
    pytest.param("R8 JK R10 JK R12 R13", None, 0, 135, id="two-jokers-first-melded"),
]


@pytest.mark.parametrize("meld, own, taken, expected", CONTRIBUTION_CASES)
def test_remi_contribution_values(meld: str, own: str | None, taken: int, expected: int) -> None:
    value = value_contribution(find_variant("remi"), contribution(meld, own, taken))
    assert value.points == expected
    assert value.problems == ()
    assert value.line.endswith(f": +{expected}")


INVALID_CONTRIBUTION_CASES = [
    # not a run (R6 instead of R5): by rank 5 + 5 + 5, a problem
    pytest.param("R3 R4 R6", None, 0, 15, "R3 R4 R6", id="gap"),
    # a 1 in an invalid meld counts as a low 1 (5)
    pytest.param("R1 R5 K9", None, 0, 15, "R1 R5 K9", id="one-by-rank"),
    # [remi] "mindestens doppelt so viele echte Steine ... wie Jolys": R5 JK JK is invalid;
    # the jokers still count 50 each for their first melder: 5 + 50 + 50
    pytest.param("R5 JK JK", None, 0, 105, "jokers", id="too-many-jokers"),
    # a taken joker of an invalid meld counts as what it is declared to be (R12: 10), a bare
    # one 0
    pytest.param("R3 R4 R6 JK=R12", "JK=R12", 1, 10, "R3 R4 R6", id="taken-declared"),
    pytest.param("R3 K4 R6 JK", "JK", 1, 0, "R3 K4 R6", id="taken-bare"),
    # own items that are not in the meld: valued by rank, a problem
    pytest.param("R3 R4 R5", "R6", 0, 5, "R6", id="own-not-in-meld"),
    # more taken jokers than jokers laid
    pytest.param("R3 R4 R5", None, 1, 15, "taken jokers", id="taken-without-joker"),
]


@pytest.mark.parametrize("meld, own, taken, expected, problem", INVALID_CONTRIBUTION_CASES)
def test_remi_invalid_contributions_are_problems(
    meld: str, own: str | None, taken: int, expected: int, problem: str
) -> None:
    value = value_contribution(find_variant("remi"), contribution(meld, own, taken))
    assert value.points == expected
    assert len(value.problems) == 1
    assert problem in value.problems[0]


# --- Remi: whole rounds -------------------------------------------------------------
def remi(*players: PlayerRound, pool_exhausted: bool = False, **options: Any) -> RoundInput:
    return round_of("remi", *players, pool_exhausted=pool_exhausted, **options)


FOURTEEN_AT_ONCE = ["R1 R2 R3 R4", "K10 K11 K12 K13", "B7 O7 R7", "K2 B2 O2"]
# 5*4 + 10*4 + 5*3 + 5*3 = 90 points in 4 + 4 + 3 + 3 = 14 tiles

REMI_CASES = [
    pytest.param(
        # [remi] "Der Gewinner bekommt 100 Punkte und den Wert der Steine, die er gemeldet hat":
        # Ana 100 + 30 + 15; "Die anderen ... vermindert um den Wert der Steine ... auf ihren
        # Ständern": Ben (5 + 10 + 10) - (5 + 25 for the joker) = -5;
        # "überhaupt keine Meldungen ... verliert 200 Punkte": Cem -200
        remi(
            player("Ana", melds=["R12 R13 R1", "K5 B5 O5"], out=True),
            player("Ben", "K5 JK", melds=["B9 B10 B11"]),
            player("Cem", "R2 R3 K13"),
        ),
        {"Ana": 145, "Ben": -5, "Cem": -200},
        False,
        id="basic",
    ),
    pytest.param(
        # [remi] Varianten: "100 Punkte und den Punktwert der Steine auf seinem Ständer":
        # Cem -100 - (5 + 10 + 25) = -140
        remi(
            player("Ana", melds=["R3 R4 R5"], out=True),
            player("Cem", "R2 K13 JK"),
            unmelded_penalty="rack",
        ),
        {"Ana": 115, "Cem": -140},
        False,
        id="unmelded-rack-option",
    ),
    pytest.param(
        # fixed penalty with the same rack: "die Punktwerte der Steine ... spielen keine Rolle"
        remi(player("Ana", melds=["R3 R4 R5"], out=True), player("Cem", "R2 K13 JK")),
        {"Ana": 115, "Cem": -200},
        False,
        id="unmelded-fixed",
    ),
    pytest.param(
        # "– 25 Punkte für einen Spieler, der ihn am Ende des Spiels noch auf seinem Ständer hat":
        # Ben 15 - 25 = -10
        remi(
            player("Ana", melds=["R3 R4 R5"], out=True),
            player("Ben", "JK", melds=["K7 B7 O7"]),
        ),
        {"Ana": 115, "Ben": -10},
        False,
        id="joker-on-rack",
    ),
    pytest.param(
        # "alle 14 Steine auf einmal meldet ... 100 Punkte für den Gewinn, 100 Punkte
        # Extraprämie plus den Wert seiner Meldungen": 100 + 100 + 90
        remi(
            player("Ana", melds=FOURTEEN_AT_ONCE, out=True, all_at_once=True),
            player("Ben", "K5", melds=["B9 B10 B11"]),
        ),
        {"Ana": 290, "Ben": 20},
        False,
        id="all-at-once",
    ),
    pytest.param(
        # "den gleichen Stein wie den aufgedeckten Anfangsstein ... erhält er 25 Extrapunkte":
        # Ben 25 - 5 + 25 = 45; the trump bonus also for a player who never melded: -200 + 25
        remi(
            player("Ana", melds=["R3 R4 R5"], out=True),
            player("Ben", "K5", melds=["B9 B10 B11"], trump_declared=True),
            player("Cem", "K9 K8"),
        ),
        {"Ana": 115, "Ben": 45, "Cem": -200},
        False,
        id="trump-declared",
    ),
    pytest.param(
        remi(
            player("Ana", melds=["R3 R4 R5"], out=True),
            player("Cem", "K9 K8", trump_declared=True),
        ),
        {"Ana": 115, "Cem": -175},
        False,
        id="trump-declared-unmelded",
    ),
    pytest.param(
        # Varianten: "indem man einen Joly ablegt ... wird der Punktgewinn ... verdoppelt":
        # (100 + 30) x 2 = 260; the others are not doubled
        remi(
            player("Ana", melds=["R12 R13 R1"], out=True, last_discard="JK"),
            player("Ben", "K5", melds=["B9 B10 B11"]),
        ),
        {"Ana": 260, "Ben": 20},
        True,
        id="joker-out-doubles",
    ),
    pytest.param(
        # doubling covers the winner's bonuses: (100 + 100 + 90 + 25) x 2 = 630
        remi(
            player(
                "Ana",
                melds=FOURTEEN_AT_ONCE,
                out=True,
                all_at_once=True,
                trump_declared=True,
                last_discard="JK",
            ),
            player("Ben", "K5 R5"),
        ),
        {"Ana": 630, "Ben": -200},
        True,
        id="doubled-with-bonuses",
    ),
    pytest.param(
        # the doubling is a variant: switched off, 100 + 30
        remi(
            player("Ana", melds=["R12 R13 R1"], out=True, last_discard="JK"),
            player("Ben", "K5", melds=["B9 B10 B11"]),
            joker_out_doubles=False,
        ),
        {"Ana": 130, "Ben": 20},
        False,
        id="joker-out-option-off",
    ),
    pytest.param(
        # discarding a plain tile does not double
        remi(
            player("Ana", melds=["R12 R13 R1"], out=True, last_discard="R9"),
            player("Ben", "K5", melds=["B9 B10 B11"]),
        ),
        {"Ana": 130, "Ben": 20},
        False,
        id="plain-discard",
    ),
    pytest.param(
        # "ohne Gewinner ... jeder bekommt die Pluspunkte für alle Steine, die er gemeldet hat,
        # und Minuspunkte für die Steine, die noch auf dem Ständer sind. Keiner bekommt die 100":
        # Ana 30 - 5 = 25, Ben 75 - (25 + 5) = 45; Cem never melded: -200 (documented choice)
        remi(
            player("Ana", "K5", melds=["R12 R13 R1"]),
            player("Ben", "JK R3", melds=["K1 B1 R1"]),
            player("Cem", "R2"),
            pool_exhausted=True,
        ),
        {"Ana": 25, "Ben": 45, "Cem": -200},
        False,
        id="pool-exhausted",
    ),
    pytest.param(
        remi(
            player("Ana", "K5", melds=["R12 R13 R1"]),
            player("Cem", "R2"),
            pool_exhausted=True,
            unmelded_penalty="rack",
        ),
        {"Ana": 25, "Cem": -105},
        False,
        id="pool-exhausted-unmelded-rack",
    ),
    pytest.param(
        # laying on another's meld counts for the layer, in the context of the whole meld:
        # Ben laid R1 on Ana's R12 R13 -> Ben 10 - 5 (K5) = 5; Ana 100 + 20
        remi(
            player("Ana", melds=[contribution("R12 R13 R1", "R12 R13")], out=True),
            player("Ben", "K5", melds=[contribution("R12 R13 R1", "R1")]),
        ),
        {"Ana": 120, "Ben": 5},
        False,
        id="laid-on-others-meld",
    ),
    pytest.param(
        # "erhält der Spieler, der ihn zuerst gemeldet hat, trotzdem 50 Punkte ... der Spieler,
        # der ihn später genommen hat, bekommt nur die Punkte für den Stein": Ana melded
        # B9 JK B11 first (5 + 50 + 10), Ben exchanged the B10 (his tile, 10, returned to him)
        # and used the joker as R7 in R5 R6 JK (5 + 5 + 5); Ben's rack R13 -10
        remi(
            player("Ana", melds=["B9 JK B11"], out=True),
            player(
                "Ben",
                "R13",
                melds=[contribution("B9 B10 B11", "B10"), contribution("R5 R6 JK", taken=1)],
            ),
        ),
        {"Ana": 165, "Ben": 15},
        False,
        id="taken-joker",
    ),
]


@pytest.mark.parametrize("round_, expected, doubled", REMI_CASES)
def test_remi_known_answers(round_: RoundInput, expected: dict[str, int], doubled: bool) -> None:
    result = score_remi(round_)
    assert result.scores == expected
    assert result.doubled is doubled
    assert not result.problems, result.problems
    assert result.winner == (round_.winner.name if round_.winner else None)
    assert set(result.details) == set(expected)


def test_remi_details_explain_the_score() -> None:
    result = score_remi(case(REMI_CASES, "basic"))
    assert result.details["Ana"] == [
        "won: +100",
        "melded R12 R13 R1: +30",
        "melded K5 B5 O5: +15",
    ]
    assert result.details["Ben"] == ["melded B9 B10 B11: +25", "rack K5 JK: -30"]
    assert result.details["Cem"] == ["never melded: -200 (rack R2 R3 K13 not counted)"]


def test_remi_details_of_a_doubled_win() -> None:
    result = score_remi(case(REMI_CASES, "joker-out-doubles"))
    assert result.details["Ana"][-1] == "went out discarding a joker, doubled: 2 x 130 = +260"


def test_remi_details_of_a_taken_joker_and_a_lone_tile() -> None:
    result = score_remi(case(REMI_CASES, "taken-joker"))
    assert result.details["Ben"] == [
        "melded B10 on B9 B10 B11: +10",
        "melded R5 R6 JK (taken joker as R7): +15",
        "rack R13: -10",
    ]


REMI_PROBLEM_CASES = [
    pytest.param(
        # an invalid meld is a problem, valued by rank: 100 + 5 + 5 + 5
        remi(player("Ana", melds=["R3 R4 R6"], out=True), player("Ben", "K5", melds=["K7 B7 O7"])),
        {"Ana": 115, "Ben": 10},
        "R3 R4 R6",
        id="invalid-meld",
    ),
    pytest.param(
        # "muss man alle Steine ... melden bis auf einen ... abgelegt": the winner still holds
        # K5 -- a problem; the rack is not counted
        remi(
            player("Ana", "K5", melds=["R3 R4 R5"], out=True),
            player("Ben", "K6", melds=["K7 B7 O7"]),
        ),
        {"Ana": 115, "Ben": 10},
        "K5",
        id="winner-holds-tiles",
    ),
    pytest.param(
        # "alle 14 Steine auf einmal": only 3 tiles melded -- a problem, the bonus still given
        remi(
            player("Ana", melds=["R3 R4 R5"], out=True, all_at_once=True),
            player("Ben", "K6", melds=["K7 B7 O7"]),
        ),
        {"Ana": 215, "Ben": 10},
        "14",
        id="all-at-once-not-14",
    ),
    pytest.param(
        # all_at_once only counts for the one who went out ("Wenn ein Spieler dadurch gewinnt")
        remi(
            player("Ana", melds=["R3 R4 R5"], out=True),
            player("Ben", "K6", melds=["K7 B7 O7"], all_at_once=True),
        ),
        {"Ana": 115, "Ben": 10},
        "Ben",
        id="all-at-once-not-winner",
    ),
    pytest.param(
        # only one other copy of the trump tile exists, so two declarations cannot both be right
        remi(
            player("Ana", melds=["R3 R4 R5"], out=True, trump_declared=True),
            player("Ben", "K6", melds=["K7 B7 O7"], trump_declared=True),
        ),
        {"Ana": 140, "Ben": 35},
        "trump",
        id="two-trump-declarations",
    ),
    pytest.param(
        # nobody out, pool not marked exhausted: scored as exhausted (no 100), with a problem
        remi(player("Ana", "K5", melds=["R3 R4 R5"]), player("Ben", "K6", melds=["K7 B7 O7"])),
        {"Ana": 10, "Ben": 10},
        "exhausted",
        id="no-end",
    ),
]


@pytest.mark.parametrize("round_, expected, problem", REMI_PROBLEM_CASES)
def test_remi_problems_do_not_stop_scoring(
    round_: RoundInput, expected: dict[str, int], problem: str
) -> None:
    result = score_remi(round_)
    assert result.scores == expected
    assert len(result.problems) == 1, result.problems
    assert problem in result.problems[0]


# --- dispatch -----------------------------------------------------------------------
def test_score_round_dispatches_here() -> None:
    from tabletop.engine.rounds import score_round

    result = score_round(case(RUMMIKUB_CASES, "sabra-went-out"))
    assert result.scores == {"Ana": 51, "Ben": -48, "Cem": -3}
