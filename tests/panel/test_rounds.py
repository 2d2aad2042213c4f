"""Rounds scored by hand through the panel's API (panel/routers/rounds.py): whole matches
entered round by round and scored by the engine, earlier rounds entered again, the
preview that stores nothing, refusals and repeats.

Scores are worked out by hand from the rule texts (/work/shared/rules), as in
tests/engine/test_tile_scoring.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tabletop.engine.base import ROUND_FLAGS
from tabletop.engine.variants import VARIANTS
from tabletop.panel.schemas import RoundPlayerIn
from tests.panel.clients import panel_client


def _match(
    client: TestClient, variant: str, players: list[str], headers: Any = None, **setup: Any
) -> int:
    made = client.post("/api/matches", json={"name": "Friday"}, headers=headers)
    match_id = int(made.json()["id"])
    body = {"who": "Ana", "variant": variant, "players": players, **setup}
    assert (
        client.post(f"/api/matches/{match_id}/setup", json=body, headers=headers).status_code == 201
    )
    return match_id


def _entry(*players: dict[str, Any], **round_: Any) -> dict[str, Any]:
    return {"who": "Ana", "players": list(players), **round_}


def _enter(client: TestClient, match_id: int, entry: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/api/matches/{match_id}/rounds", json=entry)
    assert response.status_code == 201, response.text
    return dict(response.json())


def _state(client: TestClient, match_id: int) -> dict[str, Any]:
    return dict(client.get(f"/api/matches/{match_id}/state").json())


def _events(client: TestClient, match_id: int) -> list[dict[str, Any]]:
    return list(client.get(f"/api/matches/{match_id}/events").json())


# --- whole matches ---------------------------------------------------------------------
SABRA_ROUNDS = [
    # [sabra] "Der Gesamtwert ihrer noch übrigen Spielsteine wird ihnen als Minus angerechnet
    # und der Gewinner erhält die Gesamtsumme aller Punkte der Verlierer als Plus
    # gutgeschrieben": Ben counted 23, Cem's R5 JK are 5 + 30 ("ein Joker 30 Punkte")
    (
        _entry(
            {"name": "Ana", "out": True},
            {"name": "Ben", "points": 23},
            {"name": "Cem", "hand": "R5 JK"},
        ),
        {"Ana": 58, "Ben": -23, "Cem": -35},
        "Ana",
    ),
    # entered in another order than the seats: Ben went out, Ana 12, Cem 7
    (
        _entry(
            {"name": "Cem", "points": 7},
            {"name": "Ben", "out": True},
            {"name": "Ana", "points": 12},
        ),
        {"Ana": -12, "Ben": 19, "Cem": -7},
        "Ben",
    ),
    # the pool used up: the lowest rack (Ben's 4) wins what the others are over it,
    # Ana 10 - 4, Cem R9 B3 = 12 - 4
    (
        _entry(
            {"name": "Ana", "points": 10},
            {"name": "Ben", "points": 4},
            {"name": "Cem", "hand": "R9 B3"},
            pool_exhausted=True,
        ),
        {"Ana": -6, "Ben": 14, "Cem": -8},
        "Ben",
    ),
]


def test_a_sabra_match_scored_by_hand_is_zero_sum_and_ends_at_its_rounds(
    client: TestClient,
) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben", "Cem"], rounds_limit=3)
    for number, (entry, scores, winner) in enumerate(SABRA_ROUNDS, start=1):
        answer = _enter(client, match_id, entry)
        assert answer["type"] == "round_scored" and answer["round"] == number
        assert answer["result"]["scores"] == scores and answer["result"]["winner"] == winner
        assert sum(answer["result"]["scores"].values()) == 0
        result = _state(client, match_id)["result"]
        assert result["rounds_played"] == number and result["over"] is (number == 3)
        assert result["progress"]["Ana"]["share"] == round(number / 3, 4)
    state = _state(client, match_id)
    assert state["match"]["totals"] == {"Ana": 40, "Ben": 10, "Cem": -50}
    assert state["result"] == {
        "over": True,
        "winner": "Ana",
        "target": None,
        "rounds_limit": 3,
        "elimination": None,
        "rounds_played": 3,
        "penalty": False,
        "progress": {
            "Ana": {"total": 40, "share": 1.0},
            "Ben": {"total": 10, "share": 1.0},
            "Cem": {"total": -50, "share": 1.0},
        },
        "closed": None,
    }
    assert state["match"]["over"] and state["match"]["winner"] == "Ana"
    first = state["rounds"][0]
    assert first["manual"] and first["winner"] == "Ana"
    assert first["details"]["Ben"] == ["rack counted 23: -23"]
    assert first["input"]["players"][1] == {**first["input"]["players"][1], "points": 23}
    logged = [e for e in _events(client, match_id) if e["type"] == "round_scored"]
    assert [e["round"] for e in logged] == [1, 2, 3]
    assert logged[0]["who"] == "Ana" and logged[0]["manual"] is True and logged[0]["seat"] is None
    assert logged[0]["totals"] == {"Ana": 58, "Ben": -23, "Cem": -35}
    assert "who" not in logged[0]["input"]
    # the match is over: a fourth round is refused and nothing is logged
    refused = client.post(f"/api/matches/{match_id}/rounds", json=SABRA_ROUNDS[0][0])
    assert refused.status_code == 422
    assert refused.json()["detail"] == "match 1 is over (Ana won); no further round is scored"
    assert len(_events(client, match_id)) == 4
    # the feed says so, with the final totals; taking the last round back takes it away
    assert state["feed"][0] == {
        "type": "match_over", "seat": None, "id": logged[2]["id"],
        "recorded_at": logged[2]["recorded_at"], "winner": "Ana",
        "totals": {"Ana": 40, "Ben": 10, "Cem": -50}, "from_rounds": True,
    }
    assert sum(entry["type"] == "match_over" for entry in state["feed"]) == 1
    undone = client.post(f"/api/matches/{match_id}/undo", json={"who": "Ana"})
    assert undone.status_code == 201, undone.text
    assert all(entry["type"] != "match_over" for entry in _state(client, match_id)["feed"])


def test_a_remi_match_scored_by_hand_ends_at_its_target(client: TestClient) -> None:
    # [remi] "Der Gewinner bekommt 100 Punkte und den Wert der Steine, die er gemeldet hat.
    # Die anderen Spieler bekommen den Wert der Steine, die sie gemeldet haben, vermindert um
    # den Wert der Steine, die sie noch auf ihren Ständern haben."  10-13 count 10, 2-9
    # count 5: R10 R11 R12 = 30, K5 K6 K7 = 15, B2 B3 B4 = 15, O10..O13 = 40, B5 B6 B7 = 15.
    match_id = _match(client, "remi", ["Ana", "Ben"], target=250)
    rounds = [
        (
            _entry(
                {"name": "Ana", "out": True, "melds": "R10 R11 R12 | K5 K6 K7"},
                {"name": "Ben", "melds": "B2 B3 B4", "points": 40},
            ),
            {"Ana": 145, "Ben": -25},
        ),
        (
            _entry(
                {"name": "Ana", "melds": "B5 B6 B7", "points": 20},
                {"name": "Ben", "out": True, "melds": "O10 O11 O12 O13"},
            ),
            {"Ana": -5, "Ben": 140},
        ),
        # "Ein Spieler, der überhaupt keine Meldungen gemacht hat, verliert 200 Punkte – die
        # Punktwerte der Steine auf seinem Ständer spielen keine Rolle."
        (
            _entry(
                {"name": "Ana", "out": True, "melds": "R10 R11 R12 | K5 K6 K7"},
                {"name": "Ben", "points": 30},
            ),
            {"Ana": 145, "Ben": -200},
        ),
    ]
    for entry, scores in rounds:
        assert _enter(client, match_id, entry)["result"]["scores"] == scores
    result = _state(client, match_id)["result"]
    # "ob ein Spieler eine bestimmte Punktzahl erreichen muss": Ana 285 of 250
    assert (result["over"], result["winner"], result["target"]) == (True, "Ana", 250)
    assert result["progress"]["Ana"] == {"total": 285, "share": 1.0}
    assert result["progress"]["Ben"] == {"total": -85, "share": 0.0}
    assert result["penalty"] is False


@pytest.mark.parametrize(
    ("setup", "second", "totals", "over", "progress"),
    [
        pytest.param(
            {"rounds_limit": 2},
            {"name": "Cem", "hand": "AS JK 7D"},  # Ass 11, Joker 20, 7
            {"Ana": -20, "Ben": -45, "Cem": -68},
            True,
            {"Ana": 1.0, "Ben": 1.0, "Cem": 1.0},
            id="rounds-limit",
        ),
        pytest.param(
            {"target": 100},
            {"name": "Cem", "points": 75},
            {"Ana": -20, "Ben": -45, "Cem": -105},
            True,  # Cem reached the penalty limit; the fewest penalty points win
            {"Ana": 0.2, "Ben": 0.45, "Cem": 1.0},
            id="penalty-limit",
        ),
        pytest.param(
            {"target": 200},
            {"name": "Cem", "points": 75},
            {"Ana": -20, "Ben": -45, "Cem": -105},
            False,
            {"Ana": 0.1, "Ben": 0.225, "Cem": 0.525},
            id="limit-not-reached",
        ),
    ],
)
def test_a_rommee_match_counts_penalty_points_to_its_end(
    client: TestClient,
    setup: dict[str, Any],
    second: dict[str, Any],
    totals: dict[str, int],
    over: bool,
    progress: dict[str, float],
) -> None:
    # [rommee] "Alle übrigen Spieler erhalten so viele Schlechtpunkte, wie sie noch an
    # Augen in der Hand halten."
    match_id = _match(client, "rommee", ["Ana", "Ben", "Cem"], **setup)
    first = _enter(
        client,
        match_id,
        _entry(
            {"name": "Ana", "out": True},
            {"name": "Ben", "points": 45},
            {"name": "Cem", "points": 30},
        ),
    )
    assert first["result"]["scores"] == {"Ana": 0, "Ben": -45, "Cem": -30}
    _enter(
        client,
        match_id,
        _entry({"name": "Ana", "points": 20}, {"name": "Ben", "out": True}, second),
    )
    state = _state(client, match_id)
    assert state["match"]["totals"] == totals
    assert state["match"]["penalty_totals"] == {name: -t for name, t in totals.items()}
    result = state["result"]
    assert result["penalty"] is True
    assert result["over"] is over and result["winner"] == ("Ana" if over else None)
    assert {name: p["share"] for name, p in result["progress"].items()} == progress
    assert {name: p["penalty"] for name, p in result["progress"].items()} == {
        name: -t for name, t in totals.items()
    }


def test_a_wiener_match_ends_when_all_but_one_are_out(client: TestClient) -> None:
    # [wiener] "Sobald ein Spieler 101 oder mehr Schlechtpunkte gesammelt hat, scheidet er
    # aus; sind alle bis auf einen Spieler ausgeschieden, so gewinnt der verbleibende
    # Spieler den Pot": the deadwood as each player counted it
    match_id = _match(client, "wiener", ["Ana", "Ben"])
    knock = _enter(
        client,
        match_id,
        _entry(
            {"name": "Ana", "out": True, "knocked": True, "points": 3},
            {"name": "Ben", "points": 60},
        ),
    )
    assert knock["result"]["scores"] == {"Ana": -3, "Ben": -60}
    assert knock["result"]["chips"] == {"Ana": 1, "Ben": -1}
    _enter(
        client,
        match_id,
        _entry({"name": "Ana", "out": True, "points": 0}, {"name": "Ben", "points": 45}),
    )
    result = _state(client, match_id)["result"]
    assert (result["over"], result["winner"], result["elimination"]) == (True, "Ana", 101)
    assert result["progress"]["Ben"]["share"] == 1.0
    assert result["progress"]["Ana"]["share"] == round(3 / 101, 4)


# --- entering a round again ---------------------------------------------------------------
def test_an_edited_round_is_scored_again_and_replaces_scores_and_winner(
    client: TestClient,
) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben", "Cem"], rounds_limit=1)
    _enter(client, match_id, SABRA_ROUNDS[0][0])
    assert _state(client, match_id)["result"]["winner"] == "Ana"
    again = _entry(
        {"name": "Ana", "points": 10},
        {"name": "Ben", "out": True},
        {"name": "Cem", "points": 5},
        who="Cem",
    )
    response = client.put(f"/api/matches/{match_id}/rounds/1", json=again)
    assert response.status_code == 201, response.text
    assert response.json()["type"] == "score_edited"
    state = _state(client, match_id)
    played = state["rounds"][0]
    assert played["scores"] == {"Ana": -10, "Ben": 15, "Cem": -5}
    assert played["winner"] == "Ben" and played["edited_by"] == "Cem"
    assert played["details"]["Ana"] == ["rack counted 10: -10"]
    assert played["input"]["players"][0]["points"] == 10
    assert state["match"]["totals"] == {"Ana": -10, "Ben": 15, "Cem": -5}
    # the edit decides the finished match anew
    assert (state["result"]["over"], state["result"]["winner"]) == (True, "Ben")
    logged = _events(client, match_id)[-1]
    assert logged["type"] == "score_edited" and logged["round"] == 1 and logged["who"] == "Cem"
    assert logged["winner"] == "Ben" and logged["scores"] == played["scores"]
    assert logged["details"] == played["details"] and logged["input"] == played["input"]


def test_a_round_the_camera_scored_can_be_entered_again(client: TestClient) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben"])
    camera = {
        "seq": 9,
        "t": 80.0,
        "type": "round_scored",
        "seat": None,
        "round": 1,
        "scores": {"Ana": 41, "Ben": -41},
        "winner": "Ana",
    }
    assert client.post(f"/api/matches/{match_id}/events", json=camera).status_code == 201
    entry = _entry({"name": "Ana", "out": True}, {"name": "Ben", "hand": "R13 K13 JK"})
    assert client.put(f"/api/matches/{match_id}/rounds/1", json=entry).status_code == 201
    played = _state(client, match_id)["rounds"][0]
    assert played["scores"] == {"Ana": 56, "Ben": -56} and played["manual"] is False
    assert played["details"]["Ben"] == ["rack R13 K13 JK: -56"]


def test_scores_typed_as_numbers_keep_the_winner_and_drop_the_explanation(
    client: TestClient,
) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben", "Cem"])
    _enter(client, match_id, SABRA_ROUNDS[0][0])
    edit = {"who": "Ben", "round": 1, "scores": {"Ana": 50, "Ben": -20, "Cem": -30}}
    assert client.post(f"/api/matches/{match_id}/corrections/score", json=edit).status_code == 201
    played = _state(client, match_id)["rounds"][0]
    assert played["winner"] == "Ana" and played["details"] is None and played["input"] is None


@pytest.mark.parametrize("number", [2, 7])
def test_a_round_not_played_cannot_be_entered_again(client: TestClient, number: int) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben", "Cem"])
    _enter(client, match_id, SABRA_ROUNDS[0][0])
    response = client.put(f"/api/matches/{match_id}/rounds/{number}", json=SABRA_ROUNDS[1][0])
    assert response.status_code == 409
    assert response.json()["detail"] == f"round {number} has not been played (1 so far)"


# --- the preview ----------------------------------------------------------------------------
def test_the_preview_scores_and_stores_nothing(client: TestClient) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben", "Cem"])
    before = _events(client, match_id)
    entry = SABRA_ROUNDS[0][0]
    preview = client.post(f"/api/matches/{match_id}/rounds/preview", json=entry)
    assert preview.status_code == 200
    assert _events(client, match_id) == before
    assert _state(client, match_id)["rounds"] == []
    assert preview.json()["result"] == _enter(client, match_id, entry)["result"]
    refused = client.post(
        f"/api/matches/{match_id}/rounds/preview",
        json=_entry(
            {"name": "Ana", "out": True}, {"name": "Ben", "out": True}, {"name": "Cem", "points": 3}
        ),
    )
    assert refused.status_code == 422 and "only one player can go out" in refused.json()["detail"]


# --- refusals ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("players", "detail"),
    [
        pytest.param(
            [
                {"name": "Ana", "out": True},
                {"name": "Ben", "points": 3},
                {"name": "Zed", "points": 4},
            ],
            "not players of this match: Zed (its players: Ana, Ben, Cem)",
            id="stranger",
        ),
        pytest.param(
            [{"name": "Ana", "out": True}, {"name": "Ben", "points": 3}],
            "the round has no entry for Cem",
            id="missing",
        ),
        pytest.param(
            [
                {"name": "Ana", "out": True},
                {"name": "Ben", "points": 3},
                {"name": "Ben", "points": 4},
                {"name": "Cem", "points": 1},
            ],
            "entered more than once: Ben",
            id="twice",
        ),
        pytest.param(
            [
                {"name": "Ana", "out": True},
                {"name": "Ben", "points": 3, "hand": "R3"},
                {"name": "Cem", "points": 1},
            ],
            "player 'Ben': give the rack as 'hand' (its items) or as 'points' (its value as"
            " counted), not both",
            id="hand-and-points",
        ),
        pytest.param(
            [{"name": "Ana", "out": True}, {"name": "Ben"}, {"name": "Cem", "points": 1}],
            "Ben did not go out: give the rack's items (hand) or its points",
            id="no-rack",
        ),
        pytest.param(
            [
                {"name": "Ana", "out": True},
                {"name": "Ben", "out": True},
                {"name": "Cem", "points": 1},
            ],
            "only one player can go out, not Ana, Ben",
            id="two-out",
        ),
        pytest.param(
            [
                {"name": "Ana", "out": True},
                {"name": "Ben", "hand": "R3 X9"},
                {"name": "Cem", "points": 1},
            ],
            "player 'Ben': unknown token 'X9'",
            id="unknown-token",
        ),
    ],
)
def test_entries_against_the_rules_are_refused_with_the_reason(
    client: TestClient, players: list[dict[str, Any]], detail: str
) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben", "Cem"])
    for path in ("rounds", "rounds/preview"):
        response = client.post(f"/api/matches/{match_id}/{path}", json=_entry(*players))
        assert response.status_code == 422
        assert response.json()["detail"].startswith(detail), response.json()["detail"]
    assert [e["type"] for e in _events(client, match_id)] == ["setup"]


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(
            _entry({"name": "Ana", "out": True}, {"name": "Ben", "points": -1}),
            id="negative-points",
        ),
        pytest.param(
            _entry({"name": "Ana", "out": True}, {"name": "Ben", "points": 10001}),
            id="too-many-points",
        ),
        pytest.param(
            _entry({"name": "Ana", "out": True}, {"name": "Ben", "points": "3"}),
            id="points-as-text",
        ),
        pytest.param(_entry({"name": "Ana", "out": True}), id="one-player"),
        pytest.param(
            _entry({"name": "Ana", "out": True}, {"name": "Ben", "rack": "R3"}), id="unknown-key"
        ),
        pytest.param(
            {"players": [{"name": "Ana", "out": True}, {"name": "Ben", "points": 3}]}, id="no-who"
        ),
        pytest.param(
            _entry({"name": "Ana", "out": True, "win": "big"}, {"name": "Ben", "points": 3}),
            id="unknown-win",
        ),
    ],
)
def test_entries_against_the_schema_are_refused(client: TestClient, entry: Any) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben"])
    assert client.post(f"/api/matches/{match_id}/rounds", json=entry).status_code == 422


def test_a_match_without_players_or_id_is_refused(client: TestClient) -> None:
    bare = client.post("/api/matches", json={"name": "bare"}).json()["id"]
    entry = SABRA_ROUNDS[0][0]
    response = client.post(f"/api/matches/{bare}/rounds", json=entry)
    assert response.status_code == 409
    assert response.json()["detail"] == "the match has no players yet: set it up first"
    for method, path in (("post", "rounds"), ("post", "rounds/preview"), ("put", "rounds/1")):
        assert client.request(method, f"/api/matches/99/{path}", json=entry).status_code == 404


# --- repeats and the token -------------------------------------------------------------------
def test_a_repeat_with_the_same_key_is_answered_as_logged(client: TestClient) -> None:
    match_id = _match(client, "sabra", ["Ana", "Ben", "Cem"], rounds_limit=1)
    entry = SABRA_ROUNDS[0][0]
    url = f"/api/matches/{match_id}/rounds"
    first = client.post(url, json=entry, headers={"Idempotency-Key": "phone-1-round-1"})
    # the answer was lost; the phone sends it again, after the match ended with it
    again = client.post(url, json=entry, headers={"Idempotency-Key": "phone-1-round-1"})
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert len(_state(client, match_id)["rounds"]) == 1
    edit = _entry(
        {"name": "Ana", "points": 1}, {"name": "Ben", "out": True}, {"name": "Cem", "points": 2}
    )
    put = f"/api/matches/{match_id}/rounds/1"
    one = client.put(put, json=edit, headers={"Idempotency-Key": "edit-1"})
    two = client.put(put, json=edit, headers={"Idempotency-Key": "edit-1"})
    assert one.json() == two.json()
    assert [e["type"] for e in _events(client, match_id)] == [
        "setup",
        "round_scored",
        "score_edited",
    ]
    # a key given to another kind of event is not a round
    reused = client.post(url, json=entry, headers={"Idempotency-Key": "edit-1"})
    assert reused.status_code == 422 and "score_edited" in reused.json()["detail"]


def test_entering_a_round_needs_the_token_and_the_preview_only_reads(tmp_path: Path) -> None:
    with panel_client(tmp_path, token="s3cret") as client:
        headers = {"X-Panel-Token": "s3cret"}
        match_id = _match(client, "sabra", ["Ana", "Ben"], headers=headers)
        entry = _entry({"name": "Ana", "out": True}, {"name": "Ben", "points": 9})
        url = f"/api/matches/{match_id}/rounds"
        assert client.post(url, json=entry).status_code == 401
        assert client.put(f"{url}/1", json=entry).status_code == 401
        assert client.post(f"{url}/preview", json=entry).status_code == 200
        assert client.post(url, json=entry, headers=headers).status_code == 201
        assert client.put(f"{url}/1", json=entry, headers=headers).status_code == 201


def test_the_round_form_takes_every_flag_a_round_may_have() -> None:
    # the engine declares a player's yes-or-no facts once (PlayerRound); the API's schema
    # spells them out for its documentation, and must name the same ones
    declared = {name for name, spec in RoundPlayerIn.model_fields.items()
                if spec.annotation is bool}
    assert declared == set(ROUND_FLAGS)
    variants_ask = {flag for cls in VARIANTS.values()
                    for flag in (*cls.round_entry.winner_flags, *cls.round_entry.anyone_flags)}
    assert variants_ask <= set(ROUND_FLAGS) - {"out"}
