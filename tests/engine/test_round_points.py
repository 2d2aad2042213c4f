"""A rack given as the points the players counted (``PlayerRound.hand_points``, the round
JSON's ``"points"``) instead of its items, in every variant's scorer.

The counted value stands where the scorer would add up the hand: the same round with
the items and with their value counted scores the same.  Rule sentences are quoted from
/work/shared/rules (the tags of engine/tile_scoring.py and engine/card_scoring.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tabletop.engine.base import PlayerRound, RoundError, RoundInput, check_round
from tabletop.engine.items import NotationError
from tabletop.engine.rounds import MAX_HAND_POINTS, round_from_json, score_round
from tabletop.engine.variants import find_variant


def scored(variant_id: str, *players: dict[str, Any], **round_: Any) -> Any:
    return score_round(round_from_json({"variant": variant_id, "players": list(players), **round_}))


# --- the same round, the rack as items and as its counted value ---------------------
# (variant, the round's players with racks as items, each rack's value as counted)
SAME_ROUND = [
    pytest.param(
        "sabra",
        [
            {"name": "Ana", "out": True},
            {"name": "Ben", "hand": "R5 K13 JK"},
            {"name": "Cem", "hand": "B1 O2"},
        ],
        {"Ben": 48, "Cem": 3},
        id="sabra",
    ),
    pytest.param(
        "rummikub-american",
        [{"name": "Ana", "hand": "R1 B1 K1"}, {"name": "Ben", "out": True}],
        {"Ana": 3},
        id="american",
    ),
    pytest.param(
        "rummikub-international",
        [
            {"name": "Ana", "out": True, "win": "open", "melds": "R3 R4 R5"},
            {"name": "Ben", "melds": "K10 K11 K12", "hand": "R5 K13 JK O1"},
        ],
        # 5 + 10 + 30 + 10: "die Spielsteine 10, 11, 12, 13 und 1 zählen jeweils 10 Punkte"
        {"Ben": 55},
        id="international",
    ),
    pytest.param(
        "remi",
        [
            {"name": "Ana", "out": True, "melds": "R10 R11 R12 | K5 K6 K7"},
            {"name": "Ben", "melds": "B2 B3 B4", "hand": "O9 O13 JK"},
        ],
        # rack 5 + 10 + 25 ("– 25 Punkte für einen Spieler, der ihn ... auf seinem Ständer hat")
        {"Ben": 40},
        id="remi",
    ),
    pytest.param(
        "rum500",
        [
            {"name": "Ana", "out": True, "melds": "7H 7S 7D"},
            {"name": "Ben", "melds": "2C 3C 4C", "hand": "KS AH"},
        ],
        # "Ass, Joker je 15 Punkte", a king 10
        {"Ben": 25},
        id="rum500",
    ),
    pytest.param(
        "american-rummy",
        [{"name": "Ana", "out": True, "melds": "7H 7S 7D"}, {"name": "Ben", "hand": "KS 3H"}],
        {"Ben": 13},
        id="american-rummy",
    ),
    pytest.param(
        "rommee",
        [{"name": "Ana", "out": True}, {"name": "Ben", "hand": "AS JK 7D"}],
        # Ass 11, Joker 20, 7
        {"Ben": 38},
        id="rommee",
    ),
    pytest.param(
        "raeuber",
        [{"name": "Ana", "out": True}, {"name": "Ben", "hand": "QS 2H"}],
        {"Ben": 12},
        id="raeuber",
    ),
    pytest.param(
        "wiener",
        [
            {"name": "Ana", "out": True, "hand": "2S 3S 4S 5S 6S 7H 7D 7C 9H 9D"},
            # nothing melds: all ten are deadwood, 2+5+9+10+10+10+3+8+4+6 = 67
            {"name": "Ben", "hand": "2C 5H 9S JD QH KC 3D 8H 4S 6C"},
        ],
        {"Ana": 18, "Ben": 67},
        id="wiener",
    ),
]


@pytest.mark.parametrize(("variant_id", "players", "counted"), SAME_ROUND)
def test_a_counted_rack_scores_as_its_items(
    variant_id: str, players: list[dict[str, Any]], counted: dict[str, int]
) -> None:
    with_items = scored(variant_id, *players)
    as_points = [
        {**{k: v for k, v in p.items() if k != "hand"}, "points": counted[p["name"]]}
        if p["name"] in counted
        else p
        for p in players
    ]
    with_points = scored(variant_id, *as_points)
    assert with_points.scores == with_items.scores
    assert with_points.winner == with_items.winner
    for name, value in counted.items():
        assert any(f"counted {value}" in line for line in with_points.details[name])


# --- what each variant makes of a counted rack --------------------------------------
def test_sabra_the_winner_gains_what_the_others_counted() -> None:
    # [sabra] "Der Gesamtwert ihrer noch übrigen Spielsteine wird ihnen als Minus
    # angerechnet und der Gewinner erhält die Gesamtsumme aller Punkte der Verlierer als
    # Plus gutgeschrieben."
    result = scored(
        "sabra",
        {"name": "Ana", "points": 23},
        {"name": "Ben", "out": True},
        {"name": "Cem", "points": 12},
    )
    assert result.scores == {"Ana": -23, "Ben": 35, "Cem": -12}
    assert sum(result.scores.values()) == 0 and result.winner == "Ben"


def test_sabra_pool_exhausted_the_lowest_count_wins_the_differences() -> None:
    # [sabra], pool used up: the lowest rack wins, the others lose the difference to it
    result = scored(
        "sabra",
        {"name": "Ana", "points": 10},
        {"name": "Ben", "points": 4},
        {"name": "Cem", "hand": "R9 B3"},
        pool_exhausted=True,
    )
    assert result.scores == {"Ana": -6, "Ben": 14, "Cem": -8}
    assert result.winner == "Ben"


def test_international_a_player_who_never_melded_loses_100_whatever_he_counted() -> None:
    # [international] "Jeder der anderen Spieler, der schon gemeldet hat, muss sich den
    # Gesamtwert seiner nicht gemeldeten Spielsteine als Minuspunkte aufschreiben" and
    # "Jeder der Spieler, der noch nicht gemeldet hat, erhält 100 Minuspunkte"
    result = scored(
        "rummikub-international",
        {"name": "Ana", "out": True, "win": "open", "melds": "R3 R4 R5"},
        {"name": "Ben", "melds": "K10 K11 K12", "points": 17},
        {"name": "Cem", "points": 4},
    )
    assert result.scores == {"Ana": 100, "Ben": -17, "Cem": -100}


@pytest.mark.parametrize(
    ("unmelded_penalty", "expected"),
    [
        # "Ein Spieler, der überhaupt keine Meldungen gemacht hat, verliert 200 Punkte – die
        # Punktwerte der Steine auf seinem Ständer spielen keine Rolle."
        pytest.param("fixed", -200, id="fixed-200"),
        # "100 Punkte und den Punktwert der Steine auf seinem Ständer"
        pytest.param("rack", -100 - 35, id="100-and-the-rack"),
    ],
)
def test_remi_unmelded_with_a_counted_rack(unmelded_penalty: str, expected: int) -> None:
    result = score_round(
        round_from_json(
            {
                "variant": "remi",
                "options": {"unmelded_penalty": unmelded_penalty},
                "players": [
                    {"name": "Ana", "out": True, "melds": "R10 R11 R12 | K5 K6 K7"},
                    {"name": "Ben", "points": 35},
                ],
            }
        )
    )
    assert result.scores["Ben"] == expected


def test_remi_melded_less_counted() -> None:
    # [remi] "Die anderen Spieler bekommen den Wert der Steine, die sie gemeldet haben,
    # vermindert um den Wert der Steine, die sie noch auf ihren Ständern haben."
    # B2 B3 B4: 3 x 5 = 15, less 40 counted
    result = scored(
        "remi",
        {"name": "Ana", "out": True, "melds": "R10 R11 R12"},
        {"name": "Ben", "melds": "B2 B3 B4", "points": 40},
    )
    assert result.scores["Ben"] == 15 - 40
    # the winner: "100 Punkte und den Wert der Steine, die er gemeldet hat"
    assert result.scores["Ana"] == 100 + 30


def test_rum500_melded_less_counted() -> None:
    # [rum500] "Alle Spieler zählen den Gesamtwert der Karten, die sie verschmolzen haben,
    # und subtrahieren den Wert der Karten, die sie in ihren Händen gelassen haben."
    result = scored(
        "rum500",
        {"name": "Ana", "out": True, "melds": "7H 7S 7D"},
        {"name": "Ben", "melds": "2C 3C 4C", "points": 31},
    )
    assert result.scores == {"Ana": 21, "Ben": 9 - 31}


def test_rum500_an_illegal_meld_adds_its_cards_to_the_count() -> None:
    # an illegal meld would have been taken back: its cards are held, on top of the count
    result = scored(
        "rum500",
        {"name": "Ana", "out": True, "melds": "7H 7S 7D"},
        {"name": "Ben", "melds": "2C 3C 5C", "points": 10},
    )
    assert result.scores["Ben"] == -(10 + 2 + 3 + 5)
    assert "counted 10 2C=2 3C=3 5C=5 -> 20" in " ".join(result.details["Ben"])


def test_american_rummy_the_caller_collects_the_counts() -> None:
    # [american-rummy] "Der Gewinner (Rummy-Rufer) erhält von allen Spielern die Summe der
    # Punktebewertung jener Karten, die der Verlierer beim Ausmachen des Spieles noch in
    # der Hand hat."
    result = scored(
        "american-rummy",
        {"name": "Ana", "out": True, "melds": "7H 7S 7D"},
        {"name": "Ben", "points": 13},
        {"name": "Cem", "points": 20},
    )
    assert result.scores == {"Ana": 33, "Ben": -13, "Cem": -20}
    assert result.extras["collected"] == {"Ana": 33}


@pytest.mark.parametrize("variant_id", ["rommee", "raeuber"])
def test_rommee_penalty_points_as_counted_and_doubled_by_hand_rommee(variant_id: str) -> None:
    # [rommee] "Alle übrigen Spieler erhalten so viele Schlechtpunkte, wie sie noch an Augen
    # in der Hand halten."
    plain = scored(variant_id, {"name": "Ana", "out": True}, {"name": "Ben", "points": 27})
    assert plain.scores == {"Ana": 0, "Ben": -27}
    # "Die Schlechtpunkte der übrigen Spieler werden in diesem Spiel doppelt gezählt."
    hand = scored(
        variant_id,
        {"name": "Ana", "out": True, "all_at_once": True, "melds": "7H 7S 7D"},
        {"name": "Ben", "points": 27},
    )
    assert hand.scores["Ben"] == -54 and hand.doubled


def test_wiener_the_count_is_the_penalty_as_counted() -> None:
    # [wiener] "zählen ... die Augensumme ihrer schlechten Karten": the count given is the
    # deadwood's sum; the best laying-out cannot be looked for without the cards.
    result = scored(
        "wiener",
        {"name": "Ana", "out": True, "knocked": True, "points": 4},
        {"name": "Ben", "points": 31},
    )
    assert result.scores == {"Ana": -4, "Ben": -31}
    assert result.extras["chips"] == {"Ana": 1, "Ben": -1}
    assert result.problems == ()  # no complaint about cards that were never shown


def test_wiener_a_knock_over_five_counted_is_reported() -> None:
    # [wiener] "Hat ein Spieler nur mehr fünf oder weniger Augen in schlechten Karten, so
    # kann er klopfen."
    result = scored(
        "wiener",
        {"name": "Ana", "out": True, "knocked": True, "points": 7},
        {"name": "Ben", "points": 31},
    )
    assert any("knocked with 7" in problem for problem in result.problems)


def test_wiener_a_hand_far_over_ten_cards_is_counted_as_laid_out_at_once() -> None:
    cards = "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH"
    cards += " AD 2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AC"
    start = time.monotonic()
    result = scored("wiener", {"name": "Ana", "out": True}, {"name": "Ben", "hand": cards})
    assert time.monotonic() - start < 2.0
    assert any("40 cards are too many" in problem for problem in result.problems)


def test_a_winner_with_points_left_is_reported() -> None:
    result = scored(
        "sabra", {"name": "Ana", "out": True, "points": 5}, {"name": "Ben", "points": 9}
    )
    assert result.scores == {"Ana": 9, "Ben": -9}
    assert result.problems == ("Ana went out but still holds counted 5 (the rack is not counted)",)


# --- what is refused ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("player", "message"),
    [
        pytest.param({"hand": "R5", "points": 5}, "not both", id="hand-and-points"),
        pytest.param({"hand": "", "points": 0}, "not both", id="empty-hand-and-points"),
        pytest.param({"points": -1}, "0 to", id="negative"),
        pytest.param({"points": MAX_HAND_POINTS + 1}, "0 to", id="too-many"),
        pytest.param({"points": True}, "whole number", id="bool"),
        pytest.param({"points": 2.5}, "whole number", id="fraction"),
        pytest.param({"points": "12"}, "whole number", id="text"),
    ],
)
def test_bad_points_are_refused(player: dict[str, Any], message: str) -> None:
    with pytest.raises(RoundError, match=message):
        round_from_json(
            {
                "variant": "sabra",
                "players": [{"name": "Ana", "out": True}, {"name": "Ben", **player}],
            }
        )


def test_points_null_is_not_given() -> None:
    round_ = round_from_json(
        {
            "variant": "sabra",
            "players": [
                {"name": "Ana", "out": True},
                {"name": "Ben", "hand": "R5", "points": None},
            ],
        }
    )
    assert round_.players[1].hand_points is None


def test_an_unknown_token_names_the_player() -> None:
    with pytest.raises(NotationError, match="player 'Ben'"):
        round_from_json(
            {
                "variant": "sabra",
                "players": [{"name": "Ana", "out": True}, {"name": "Ben", "hand": "R5 X9"}],
            }
        )


def test_check_round_refuses_both_given_directly() -> None:
    from tabletop.engine.items import parse_items

    round_ = RoundInput(
        find_variant("rommee"),
        (
            PlayerRound("Ana", out=True),
            PlayerRound("Ben", hand=parse_items("7S"), hand_points=7),
        ),
    )
    with pytest.raises(RoundError, match="Ben: give the rack's items or its counted points"):
        check_round(round_)
    with pytest.raises(RoundError, match="at least 0"):
        check_round(
            RoundInput(
                find_variant("rommee"),
                (PlayerRound("Ana", out=True), PlayerRound("Ben", hand_points=-3)),
            )
        )


# --- the command line ----------------------------------------------------------------
def test_rules_score_takes_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import main

    path = tmp_path / "round.json"
    path.write_text(
        json.dumps(
            {
                "variant": "sabra",
                "players": [
                    {"name": "Ana", "out": True},
                    {"name": "Ben", "points": 23},
                    {"name": "Cem", "hand": "R5 JK"},
                ],
            }
        ),
        encoding="utf-8",
    )
    assert main(["rules", "score", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"variant", "scores", "winner", "doubled", "details", "problems"}
    assert out["scores"] == {"Ana": 58, "Ben": -23, "Cem": -35}
    assert main(["rules", "score", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "         Ben    -23   rack counted 23: -23"
    path.write_text(
        json.dumps(
            {
                "variant": "sabra",
                "players": [
                    {"name": "Ana", "out": True},
                    {"name": "Ben", "hand": "R1", "points": 1},
                ],
            }
        ),
        encoding="utf-8",
    )
    assert main(["rules", "score", str(path)]) == 2
    assert capsys.readouterr().err.startswith("tabletop: error: player 'Ben': give the rack")
