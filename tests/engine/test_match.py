"""Match-level rules: totals, targets, end and winner, elimination, buy-back, dealer, undo.

Rule tags: [remi], [rum500], [american-rummy], [rommee], [wiener], [sabra],
[american], [international] -- the match sentences of /work/shared/rules/*.de.txt.
Round scores are given directly as RoundResult (the round scorers are tested elsewhere).
"""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine.match import BuyBack, Match, MatchError, PlayedRound
from tabletop.engine.rounds import RoundResult
from tabletop.engine.variants import find_variant

ABC = ("Ana", "Ben", "Cem")
ABCD = ("Ana", "Ben", "Cem", "Dan")


def rr(scores: dict[str, int], winner: str | None = None, **extras: Any) -> RoundResult:
    return RoundResult(scores=dict(scores), winner=winner, extras=dict(extras))


def play(match: Match, rounds: list[RoundResult]) -> Match:
    for result in rounds:
        match.record(result)
    return match


def scores(players: tuple[str, ...], *points: int) -> dict[str, int]:
    return dict(zip(players, points, strict=True))


# --- 500 Rum -------------------------------------------------------------------
# [rum500] "Weitere Hände werden gespielt, bis die Punktzahl eines oder mehrerer Spieler 500
# überschreitet ... der Spieler mit der höchsten Punktzahl gewinnt. Bei einem Unentschieden
# werden weitere Hände gespielt"
RUM500_CASES = [
    # (options, rounds as (Ana, Ben) points, over, winner)
    ({}, [(300, 100), (150, 50)], False, None),  # 450 / 150: nobody at 500 yet
    ({}, [(300, 100), (210, 50)], True, "Ana"),  # 510: over, highest wins
    ({}, [(300, 100), (200, 50)], True, "Ana"),  # exactly 500 counts (>=)
    ({}, [(400, 400), (105, 120)], True, "Ben"),  # both over: 505 / 520, the highest wins
    ({}, [(400, 400), (120, 120)], False, None),  # 520 / 520: "Unentschieden" -> play on
    ({}, [(400, 400), (120, 120), (10, 0)], True, "Ana"),  # the next hand breaks the tie
    ({}, [(-40, 20), (300, 100)], False, None),  # a negative total is possible: 260 / 120
    ({"target": 300}, [(300, 100)], True, "Ana"),  # option target
    ({"target": 300}, [(250, 100)], False, None),
]


@pytest.mark.parametrize(("options", "rounds", "over", "winner"), RUM500_CASES)
def test_rum500_target(
    options: dict[str, Any], rounds: list[tuple[int, int]], over: bool, winner: str | None
) -> None:
    match = Match(find_variant("rum500", options), ("Ana", "Ben"))
    play(match, [rr({"Ana": a, "Ben": b}) for a, b in rounds])
    assert match.over is over
    assert match.winner == winner
    assert match.totals == {"Ana": sum(a for a, _ in rounds), "Ben": sum(b for _, b in rounds)}


# [rum500] "Um das Spiel zu gewinnen, müssen Sie ausgehen ... und eine kumulative Punktzahl
# von 500 oder mehr haben. Sie können nicht gewinnen, wenn ein anderer Spieler ausfällt ...
# Wenn beispielsweise Spieler A ausfällt und eine Punktzahl von 505 hat, während Spieler B
# eine Punktzahl von 520 hat, hat Spieler A gewonnen."
MUST_GO_OUT_CASES = [
    # (rounds as (Ana, Ben, who went out), over, winner)
    ([(300, 400, "Ana"), (205, 120, "Ana")], True, "Ana"),  # 505 out beats 520
    ([(300, 400, "Ana"), (120, 205, "Ana")], False, None),  # Ben 605 but did not go out
    ([(300, 400, "Ana"), (120, 205, "Ana"), (0, 5, "Ben")], True, "Ben"),  # now he does
    ([(300, 400, "Ana"), (150, 50, "Ana")], False, None),  # went out with 450 < 500
    ([(300, 400, None), (300, 300, None)], False, None),  # stock ran out: nobody went out
]


@pytest.mark.parametrize(("rounds", "over", "winner"), MUST_GO_OUT_CASES)
def test_rum500_must_go_out(
    rounds: list[tuple[int, int, str | None]], over: bool, winner: str | None
) -> None:
    match = Match(find_variant("rum500", {"must_go_out": True}), ("Ana", "Ben"))
    play(match, [rr({"Ana": a, "Ben": b}, out) for a, b, out in rounds])
    assert (match.over, match.winner) == (over, winner)


def test_rum500_target_is_the_variant_option() -> None:
    with pytest.raises(MatchError, match="option target=500"):
        Match(find_variant("rum500"), ("Ana", "Ben"), target=300)
    assert Match(find_variant("rum500", {"target": 300}), ("Ana", "Ben")).match_target == 300


# --- American Rummy ------------------------------------------------------------
# [american-rummy] "die Partie ... bis zu 100 oder mehr Punkten spielen, d.h. die Partie
# beenden, sobald einer der Spieler 100 oder mehr Punkte geschrieben hat"; the winner
# "erhält von allen Spielern die Summe der Punktebewertung jener Karten"
AMERICAN_RUMMY_CASES = [
    # (options, rounds as (scores Ana/Ben/Cem, winner, collected), totals, over, winner)
    (  # written points are what the winner collected, not the losers' minus points
        {},
        [((40, -25, -15), "Ana", 40), ((-30, 70, -40), "Ben", 70)],
        (40, 70, 0),
        False,
        None,
    ),
    (
        {},
        [((40, -25, -15), "Ana", 40), ((-30, 70, -40), "Ben", 70), ((65, -60, -5), "Ana", 65)],
        (105, 70, 0),
        True,
        "Ana",
    ),
    ({}, [((100, -60, -40), "Cem", {"Cem": 100})], (0, 0, 100), True, "Cem"),  # exactly 100
    ({}, [((99, -50, -49), "Ana", None)], (99, 0, 0), False, None),  # no extras: positive scores
    ({"target": 150}, [((120, -60, -60), "Ana", 120)], (120, 0, 0), False, None),
    (
        {"target": 150},
        [((120, -60, -60), "Ana", 120), ((-20, -10, 30), "Cem", 30)],
        (120, 0, 30),
        False,
        None,
    ),
]


@pytest.mark.parametrize(("options", "rounds", "totals", "over", "winner"), AMERICAN_RUMMY_CASES)
def test_american_rummy_target_on_collected_points(
    options: dict[str, Any],
    rounds: list[tuple[tuple[int, int, int], str, Any]],
    totals: tuple[int, int, int],
    over: bool,
    winner: str | None,
) -> None:
    match = Match(find_variant("american-rummy", options), ABC)
    for points, out, collected in rounds:
        extras = {} if collected is None else {"collected": collected}
        match.record(rr(scores(ABC, *points), out, **extras))
    assert match.totals == scores(ABC, *totals)
    assert (match.over, match.winner) == (over, winner)


def test_american_rummy_collected_needs_a_winner() -> None:
    match = Match(find_variant("american-rummy"), ABC)
    with pytest.raises(MatchError, match="collected=30"):
        match.record(rr(scores(ABC, 30, -30, 0), None, collected=30))


# --- Wiener: elimination, pot, Klopfgeld, buy-back ----------------------------------
def test_wiener_elimination_at_101_and_pot_to_the_last_player() -> None:
    # [wiener] "Sobald ein Spieler 101 oder mehr Schlechtpunkte gesammelt hat, scheidet er
    # aus; sind alle bis auf einen Spieler ausgeschieden, so gewinnt der verbleibende Spieler
    # den Pot"; "Vor Beginn einer Partie zahlt jeder Spieler einen Einsatz ... fünf Chips";
    # "erhält der Klopfer ... von allen übrigen noch im Spiel befindlichen Teilnehmern ...
    # einen Chip"
    match = Match(find_variant("wiener"), ABC)
    assert match.chips == {"Ana": -5, "Ben": -5, "Cem": -5} and match.pot == 15
    match.record(rr(scores(ABC, 0, -40, -100), "Ana"))
    assert match.penalty_totals == {"Ana": 0, "Ben": 40, "Cem": 100}
    assert match.eliminated == set()  # 100 is not yet 101
    assert match.chips == {"Ana": -3, "Ben": -6, "Cem": -6}  # Ana got a chip from each
    match.record(rr(scores(ABC, -3, 0, -1), "Ben"))
    assert match.eliminated == {"Cem"}  # 101
    assert match.chips == {"Ana": -4, "Ben": -4, "Cem": -7}
    assert not match.over and match.active_players == ("Ana", "Ben")
    with pytest.raises(MatchError, match="'Cem' is out of the match"):
        match.record(rr(scores(ABC, 0, -5, -5), "Ana"))
    # Cem left out; Klopfgeld now only from the players still in
    match.record(rr({"Ana": 0, "Ben": -90}, "Ana"))
    assert match.penalty_totals == {"Ana": 3, "Ben": 130, "Cem": 101}
    assert match.over and match.winner == "Ana"
    # Ana: -5 stake +2 -1 +1 Klopfgeld, +15 pot
    assert match.chips == {"Ana": 12, "Ben": -5, "Cem": -7} and match.pot == 0
    assert sum(match.chips.values()) == 0
    # the later out ranks above the earlier out, whatever the points
    assert match.standings() == [("Ana", -3), ("Ben", -130), ("Cem", -101)]
    with pytest.raises(MatchError, match="over"):
        match.record(rr({"Ana": 0, "Ben": 0}))


def test_wiener_chips_from_the_round_extras() -> None:
    match = Match(find_variant("wiener"), ABC)
    match.record(rr(scores(ABC, 0, -10, -20), "Ana", chips={"Ana": 4, "Ben": -2, "Cem": -2}))
    assert match.chips == {"Ana": -1, "Ben": -7, "Cem": -7}
    with pytest.raises(MatchError, match="sum to 0"):
        match.record(rr(scores(ABC, 0, -10, -20), "Ana", chips={"Ana": 4}))


def test_wiener_options_move_the_thresholds() -> None:
    match = Match(find_variant("wiener", {"elimination": 51, "buy_back_from": 41}), ABC)
    match.record(rr(scores(ABC, 0, -40, -50)))
    assert match.eliminated == set()  # 50 < 51
    with pytest.raises(MatchError, match="at least 41"):
        match.buy_back("Ben")
    match.buy_back("Cem")  # 50 >= 41: down to the second-worst, Ben's 40
    assert match.penalty_totals == {"Ana": 0, "Ben": 40, "Cem": 40}
    match.record(rr(scores(ABC, 0, -11, 0)))
    assert match.eliminated == {"Ben"}  # 51


# [wiener] "Hat ein Spieler bereits 81 oder mehr aber noch nicht 101 Schlechtpunkte
# angesammelt, so darf er sich gegen Bezahlung eines zusätzlichen Einsatzes von fünf Chips
# in den Pot zurückkaufen und seine Zahl von Schlechtpunkten auf die Anzahl des
# zweitschlechtesten noch im Spiel befindlichen Teilnehmers reduzieren."
BUY_BACK_CASES = [
    # (penalties before (Ana, Ben, Cem, Dan), buyer, penalties after or error text)
    ((0, 50, 90, 10), "Cem", (0, 50, 50, 10)),  # to the second-worst: Ben's 50
    ((0, 50, 81, 10), "Cem", (0, 50, 50, 10)),  # 81 is enough
    ((0, 50, 100, 10), "Cem", (0, 50, 50, 10)),  # 100 is still "noch nicht 101"
    ((0, 50, 80, 10), "Cem", "at least 81"),  # 80 is too few
    ((0, 85, 95, 10), "Cem", (0, 85, 85, 10)),  # second-worst may be over 81 as well
    ((0, 85, 95, 10), "Ben", "would not lower"),  # Ben is the second-worst himself
    ((0, 90, 90, 10), "Cem", "would not lower"),  # tied worst: the second-worst is also 90
    ((0, 40, 90, 120), "Cem", (0, 40, 40, 120)),  # Dan is out: only players "noch im Spiel"
    ((0, 40, 90, 120), "Dan", "already out"),  # 101 or more: out, no buy-back
]


@pytest.mark.parametrize(("before", "buyer", "after"), BUY_BACK_CASES)
def test_wiener_buy_back(
    before: tuple[int, int, int, int], buyer: str, after: tuple[int, int, int, int] | str
) -> None:
    match = Match(find_variant("wiener"), ABCD)
    match.record(rr(scores(ABCD, *(-p for p in before)), "Ana"))
    chips_before, pot_before = match.chips, match.pot
    if isinstance(after, str):
        with pytest.raises(MatchError, match=after):
            match.buy_back(buyer)
        assert match.penalty_totals == scores(ABCD, *before)
        assert match.chips == chips_before and match.pot == pot_before
    else:
        match.buy_back(buyer)
        assert match.penalty_totals == scores(ABCD, *after)
        # "gegen Bezahlung eines zusätzlichen Einsatzes von fünf Chips in den Pot"
        assert match.chips[buyer] == chips_before[buyer] - 5
        assert match.pot == pot_before + 5
        assert match.bought_back == {buyer}
        assert isinstance(match.history[-1].event, BuyBack)


def test_wiener_buy_back_only_once() -> None:
    # [wiener] "Das Recht auf Rückkauf steht jedem Spieler im Laufe der Partie aber nur einmal zu."
    match = Match(find_variant("wiener"), ABC)
    match.record(rr(scores(ABC, 0, -20, -90), "Ana"))
    match.buy_back("Cem")
    assert match.penalty_totals == {"Ana": 0, "Ben": 20, "Cem": 20}
    match.record(rr(scores(ABC, 0, -10, -70), "Ana"))
    assert match.penalty_totals["Cem"] == 90
    with pytest.raises(MatchError, match="once already"):
        match.buy_back("Cem")
    match.record(rr(scores(ABC, 0, -10, -11), "Ana"))
    assert match.eliminated == {"Cem"}  # 101 after the buy-back: out for good


def test_wiener_buy_back_needs_a_wiener_match() -> None:
    match = Match(find_variant("rommee"), ABC, target=100)
    match.record(rr(scores(ABC, 0, -20, -90), "Ana"))
    with pytest.raises(MatchError, match="wiener rule"):
        match.buy_back("Cem")


def test_wiener_everyone_over_in_one_round() -> None:
    # Not in the text (house decision): if one round puts every remaining player over 101,
    # the one with the fewest penalty points is the last player in and wins the pot.
    match = Match(find_variant("wiener"), ("Ana", "Ben"))
    match.record(rr({"Ana": -95, "Ben": -98}))
    match.record(rr({"Ana": -10, "Ben": -20}))
    assert match.over and match.winner == "Ana" and match.eliminated == {"Ben"}
    tied = Match(find_variant("wiener"), ("Ana", "Ben"))
    tied.record(rr({"Ana": -95, "Ben": -95}))
    tied.record(rr({"Ana": -10, "Ben": -10}))
    assert not tied.over and tied.eliminated == set()  # a tie plays on, as in 500 Rum


def test_wiener_has_no_rounds_limit_or_target() -> None:
    with pytest.raises(MatchError, match="elimination"):
        Match(find_variant("wiener"), ABC, rounds_limit=5)


# --- rounds limits and targets (remi, rommee, raeuber, Rummikub) --------------------
# [remi] "Die Spieler können wählen, ob die Partie nach einer bestimmten Anzahl von Spielen
# enden soll oder ob ein Spieler eine bestimmte Punktzahl erreichen muss."
# Rommé/Räuber: the text sets no end; a rounds limit or a penalty limit, fewest points win.
LIMIT_CASES = [
    # (variant, rounds_limit, target, rounds (Ana, Ben, Cem), over, winner, leaders)
    ("remi", 2, None, [(120, -60, -60)], False, None, ("Ana",)),
    ("remi", 2, None, [(120, -60, -60), (-80, 200, -120)], True, "Ben", ("Ben",)),
    ("remi", 2, None, [(100, -50, -50), (-50, 100, -50)], True, None, ("Ana", "Ben")),  # draw
    ("remi", None, 300, [(200, -100, -100), (90, -40, -50)], False, None, ("Ana",)),
    ("remi", None, 300, [(200, -100, -100), (100, -40, -60)], True, "Ana", ("Ana",)),
    ("remi", 3, 300, [(200, -100, -100), (100, -40, -60)], True, "Ana", ("Ana",)),  # target first
    ("sabra", 1, None, [(30, -10, -20)], True, "Ana", ("Ana",)),
    ("rummikub-american", None, 50, [(30, -10, -20), (-5, 25, -20)], False, None, ("Ana",)),
    ("rummikub-american", None, 50, [(30, -10, -20), (25, -5, -20)], True, "Ana", ("Ana",)),
    ("rummikub-international", 2, None, [(100, -40, -60), (-30, 130, -100)], True, "Ben", ("Ben",)),
    # penalty games: a penalty limit ends the match, the fewest penalty points win
    ("rommee", None, 100, [(0, -60, -40), (-30, 0, -60)], True, "Ana", ("Ana",)),  # Cem 100
    ("rommee", None, 100, [(0, -60, -40), (-30, 0, -59)], False, None, ("Ana",)),  # 99 < 100
    ("raeuber", None, 100, [(0, -60, -40), (-60, 0, -70)], False, None, ("Ana", "Ben")),  # tie
    ("raeuber", None, 100, [(0, -60, -40), (-60, 0, -70), (0, -5, -5)], True, "Ana", ("Ana",)),
    ("rommee", 2, None, [(0, -60, -40), (-70, 0, -10)], True, "Cem", ("Cem",)),
]


@pytest.mark.parametrize(
    ("variant_id", "rounds_limit", "target", "rounds", "over", "winner", "leaders"), LIMIT_CASES
)
def test_rounds_limit_and_target(
    variant_id: str,
    rounds_limit: int | None,
    target: int | None,
    rounds: list[tuple[int, int, int]],
    over: bool,
    winner: str | None,
    leaders: tuple[str, ...],
) -> None:
    match = Match(find_variant(variant_id), ABC, rounds_limit=rounds_limit, target=target)
    play(match, [rr(scores(ABC, *points)) for points in rounds])
    assert (match.over, match.winner) == (over, winner)
    assert match.leaders() == leaders
    assert match.rounds_played == len(rounds)
    # "die erreichten Punkte werden fortlaufend addiert"
    assert match.totals == {name: sum(p[i] for p in rounds) for i, name in enumerate(ABC)}


def test_penalty_totals_and_standings() -> None:
    match = Match(find_variant("rommee"), ABC)
    play(match, [rr(scores(ABC, 0, -60, -40)), rr(scores(ABC, -30, 0, -50))])
    assert match.penalty_totals == {"Ana": 30, "Ben": 60, "Cem": 90}
    assert match.standings() == [("Ana", -30), ("Ben", -60), ("Cem", -90)]
    with pytest.raises(MatchError, match="'Ana' has 5"):
        match.record(rr(scores(ABC, 5, -5, 0)))
    assert Match(find_variant("remi"), ABC).penalty_totals == {}


def test_international_settlement() -> None:
    # [international] "Am Ende des Spiels zahlt jeder Spieler den anderen Spielern eine Summe,
    # die sich aus dem Verhältnis der Differenz zwischen ihren Punktzahlen errechnet."
    match = Match(find_variant("rummikub-international"), ABC, rounds_limit=2)
    play(match, [rr(scores(ABC, 400, -100, -300)), rr(scores(ABC, -100, 0, 100))])
    assert match.totals == {"Ana": 300, "Ben": -100, "Cem": -200}
    assert sorted(match.settlement()) == [
        ("Ben", "Ana", 400),
        ("Cem", "Ana", 500),
        ("Cem", "Ben", 100),
    ]
    assert match.net_settlement() == {"Ana": 900, "Ben": -300, "Cem": -600}
    assert match.to_json()["settlement"][0] == {"payer": "Ben", "payee": "Ana", "amount": 400}


# --- dealer / first player ----------------------------------------------------------
# Seats clockwise (Ana, Ben, Cem, Dan): the seat after a player is to his left.
DEALER_CASES = [
    # [remi] "es gibt immer der Spieler rechts vom letzten Geber"
    ("remi", ["Ana", "Dan", "Cem", "Ben", "Ana"]),
    # [american-rummy] "Das nächste Spiel wird jeweils von dem zur Linken des Teilers ... geteilt"
    ("american-rummy", ["Ana", "Ben", "Cem", "Dan", "Ana"]),
    # [rommee] "wechselt das Geben nach jedem Spiel im Uhrzeigersinn"
    ("rommee", ["Ana", "Ben", "Cem", "Dan", "Ana"]),
    ("wiener", ["Ana", "Ben", "Cem", "Dan", "Ana"]),
    # [sabra] "es wird im Uhrzeigersinn gespielt": the first player moves clockwise
    ("sabra", ["Ana", "Ben", "Cem", "Dan", "Ana"]),
    # [american] "Nach jeder Runde ist immer der nächste Spieler rechts an der Reihe"
    ("rummikub-american", ["Ana", "Dan", "Cem", "Ben", "Ana"]),
    ("rummikub-international", ["Ana", "Dan", "Cem", "Ben", "Ana"]),
]


@pytest.mark.parametrize(("variant_id", "dealers"), DEALER_CASES)
def test_dealer_rotation(variant_id: str, dealers: list[str]) -> None:
    match = Match(find_variant(variant_id), ABCD)
    seen = []
    for _ in dealers:
        seen.append(match.dealer_name)
        match.record(rr(scores(ABCD, 0, 0, 0, 0)))
    assert seen == dealers
    assert [entry.dealer for entry in match.history] == dealers


def test_dealer_start_seat_and_eliminated_players_are_skipped() -> None:
    match = Match(find_variant("wiener"), ABCD, dealer=1)
    assert match.dealer_name == "Ben"
    match.record(rr(scores(ABCD, 0, 0, -101, 0)))  # Ben deals; Cem is out
    assert match.dealer_name == "Dan"  # Cem's turn to deal is skipped
    match = Match(find_variant("remi"), ABCD, dealer=2)
    match.record(rr(scores(ABCD, 0, 0, 0, 0)))
    assert match.dealer_name == "Ben"  # to the right of Cem
    with pytest.raises(MatchError, match="dealer 4"):
        Match(find_variant("remi"), ABCD, dealer=4)


# --- undo ---------------------------------------------------------------------------
def test_undo_restores_exactly() -> None:
    match = Match(find_variant("wiener"), ABC)
    events: list[RoundResult | str] = [
        rr(scores(ABC, 0, -30, -85), "Ana"),
        "Cem",  # buy-back
        rr(scores(ABC, -2, 0, -40), "Ben", chips={"Ana": -1, "Ben": 2, "Cem": -1}),
        rr(scores(ABC, 0, -75, -20), "Ana"),  # Ben out at 105, Cem at 90
        rr({"Ana": 0, "Cem": -11}, "Ana"),  # Cem out at 101: Ana is left and wins the pot
    ]
    snapshots = [match.to_json()]
    for event in events:
        if isinstance(event, str):
            match.buy_back(event)
        else:
            match.record(event)
        snapshots.append(match.to_json())
    assert snapshots[-1]["over"] is True
    for expected in reversed(snapshots[:-1]):
        match.undo()
        assert match.to_json() == expected
    with pytest.raises(MatchError, match="nothing to undo"):
        match.undo()


def test_undo_returns_the_event_and_reopens_the_match() -> None:
    match = Match(find_variant("remi"), ("Ana", "Ben"), rounds_limit=1)
    last = rr({"Ana": 100, "Ben": -100}, "Ana")
    match.record(last)
    assert match.over
    removed = match.undo()
    assert isinstance(removed, PlayedRound) and removed.result is last
    assert not match.over and match.totals == {"Ana": 0, "Ben": 0}
    assert match.dealer_name == "Ana"
    match.record(rr({"Ana": -10, "Ben": 10}, "Ben"))
    assert match.winner == "Ben"


# --- bad input ----------------------------------------------------------------------
BAD_ROUNDS = [
    (rr({"Ana": 10, "Ben": -5, "Eve": -5}), "'Eve' is not a player"),
    (rr({"Ana": 10, "Ben": -10}), "no score for 'Cem'"),
    (rr(scores(ABC, 10, -5, -5), "Eve"), "winner 'Eve'"),
    (rr({"Ana": True, "Ben": 0, "Cem": 0}), "whole number"),
]


@pytest.mark.parametrize(("result", "message"), BAD_ROUNDS)
def test_bad_rounds_change_nothing(result: RoundResult, message: str) -> None:
    match = Match(find_variant("remi"), ABC)
    match.record(rr(scores(ABC, 50, -20, -30)))
    before = match.to_json()
    with pytest.raises(MatchError, match=message):
        match.record(result)
    assert match.to_json() == before and len(match.events) == 1


@pytest.mark.parametrize(
    ("players", "kwargs", "message"),
    [
        (("Ana",), {}, "at least two players"),
        (("Ana", "Ana"), {}, "must differ"),
        (("Ana", ""), {}, "needs a name"),
        (ABC, {"rounds_limit": 0}, "rounds_limit"),
        (ABC, {"target": -5}, "target"),
    ],
)
def test_bad_match_settings(players: tuple[str, ...], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MatchError, match=message):
        Match(find_variant("remi"), players, **kwargs)
