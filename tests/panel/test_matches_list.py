"""The match list (GET /api/matches), the state's result and feed, and a panel that cannot
start: it leaves no match behind."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tabletop.live.bus import EventBus
from tabletop.live.corrections import inbox_for
from tabletop.panel.embed import PanelAddressError, start_panel
from tabletop.panel.settings import PanelSettings
from tabletop.panel.store import EventStore


def _match(client: TestClient, name: str, variant: str = "sabra", **setup: Any) -> int:
    match_id = int(client.post("/api/matches", json={"name": name}).json()["id"])
    body = {"who": "Ana", "variant": variant, "players": ["Ana", "Ben"], **setup}
    assert client.post(f"/api/matches/{match_id}/setup", json=body).status_code == 201
    return match_id


def _round(client: TestClient, match_id: int, winner: str, loser_points: int) -> None:
    loser = "Ben" if winner == "Ana" else "Ana"
    entry = {
        "who": "Ana",
        "players": [{"name": winner, "out": True}, {"name": loser, "points": loser_points}],
    }
    assert client.post(f"/api/matches/{match_id}/rounds", json=entry).status_code == 201


def _event(client: TestClient, match_id: int, event: dict[str, Any]) -> None:
    response = client.post(f"/api/matches/{match_id}/events", json=event)
    assert response.status_code == 201, response.text


def _state(client: TestClient, match_id: int) -> dict[str, Any]:
    return dict(client.get(f"/api/matches/{match_id}/state").json())


# --- the list --------------------------------------------------------------------------------
def test_live_first_then_open_then_finished_each_newest_activity_first(
    client: TestClient,
) -> None:
    early_done = _match(client, "early, finished", rounds_limit=1)
    quiet = _match(client, "open, quiet")
    late_done = _match(client, "late, finished", rounds_limit=1)
    busy = _match(client, "open, busy")
    live = _match(client, "at the table")
    bare = int(client.post("/api/matches", json={"name": "no setup"}).json()["id"])
    # activity, oldest first: the order the list must not simply follow
    _round(client, busy, "Ana", 5)
    _round(client, early_done, "Ben", 7)
    _round(client, quiet, "Ana", 3)
    _round(client, late_done, "Ana", 9)
    _round(client, busy, "Ben", 4)
    client.app.state.service.live_inboxes[live] = inbox_for(EventBus())  # type: ignore[attr-defined]
    listed = client.get("/api/matches").json()
    assert [(m["id"], m["status"]) for m in listed] == [
        (live, "live"),
        (busy, "open"),
        (quiet, "open"),
        (bare, "open"),  # no events: its activity is its creation, before every round
        (late_done, "finished"),
        (early_done, "finished"),
    ]
    first_busy = listed[1]
    assert first_busy == {
        "id": busy,
        "name": "open, busy",
        "created_at": first_busy["created_at"],
        "updated_at": first_busy["updated_at"],
        "status": "open",
        "variant": "sabra",
        "variant_name": "Rummikub (Sabra)",
        "players": ["Ana", "Ben"],
        "rounds": 2,
        "winner": None,
        "totals": {"Ana": 1, "Ben": -1},
        "penalty": False,
    }
    assert first_busy["updated_at"] > first_busy["created_at"]
    done = listed[-1]
    assert (done["winner"], done["totals"], done["rounds"]) == ("Ben", {"Ana": -7, "Ben": 7}, 1)
    assert listed[3]["players"] == [] and listed[3]["totals"] == {}
    assert listed[3]["updated_at"] == listed[3]["created_at"]


def test_a_match_leaves_the_live_ones_when_its_table_ends(client: TestClient) -> None:
    match_id = _match(client, "m")
    inbox = inbox_for(EventBus())
    client.app.state.service.live_inboxes[match_id] = inbox  # type: ignore[attr-defined]
    assert client.get("/api/matches").json()[0]["status"] == "live"
    inbox.close()
    assert client.get("/api/matches").json()[0]["status"] == "open"


def test_the_list_follows_new_events(client: TestClient) -> None:
    match_id = _match(client, "m", rounds_limit=2)
    _round(client, match_id, "Ana", 5)
    assert client.get("/api/matches").json()[0]["totals"] == {"Ana": 5, "Ben": -5}
    _round(client, match_id, "Ana", 6)
    listed = client.get("/api/matches").json()[0]
    assert (listed["status"], listed["winner"], listed["totals"]) == (
        "finished",
        "Ana",
        {"Ana": 11, "Ben": -11},
    )


# --- the result: consistent with the live game's match_over --------------------------------
def test_the_games_match_over_ends_the_match_in_the_state(client: TestClient) -> None:
    # the game played to a rounds limit its setup event does not name (tabletop run
    # --rounds 1 before the limit was written into the setup)
    match_id = _match(client, "m")
    _event(
        client,
        match_id,
        {
            "seq": 1,
            "t": 1.0,
            "type": "round_scored",
            "seat": None,
            "round": 1,
            "scores": {"Ana": 12, "Ben": -12},
            "winner": "Ana",
        },
    )
    assert _state(client, match_id)["result"]["over"] is False
    _event(
        client,
        match_id,
        {
            "seq": 2,
            "t": 1.0,
            "type": "match_over",
            "seat": None,
            "winner": "Ana",
            "totals": {"Ana": 12, "Ben": -12},
        },
    )
    state = _state(client, match_id)
    assert (state["result"]["over"], state["result"]["winner"]) == (True, "Ana")
    assert (state["match"]["over"], state["match"]["winner"]) == (True, "Ana")
    assert state["feed"][0]["type"] == "match_over"
    assert client.get("/api/matches").json()[0]["status"] == "finished"
    # the game took the last change back, to the counting before the score (its undo
    # comes through the bus, not the API, where "undo" is the panel's own)
    service = client.app.state.service  # type: ignore[attr-defined]
    service.record(
        match_id,
        {
            "seq": 3,
            "t": 2.0,
            "type": "undo",
            "seat": None,
            "melds": [],
            "phase": "counting",
            "rounds": 0,
        },
    )
    state = _state(client, match_id)
    assert (state["result"]["over"], state["result"]["winner"]) == (False, None)
    assert state["result"]["rounds_played"] == 0


def test_a_match_the_game_ended_is_not_gone_on_with(client: TestClient) -> None:
    # tabletop run --resume looks for an unfinished match of the same players
    service = client.app.state.service  # type: ignore[attr-defined]
    match_id = _match(client, "m")
    _round(client, match_id, "Ana", 4)
    assert service.unfinished_match("sabra", ["Ana", "Ben"])[0] == match_id
    _event(
        client,
        match_id,
        {
            "seq": 1,
            "t": 1.0,
            "type": "match_over",
            "seat": None,
            "winner": "Ana",
            "totals": {"Ana": 4, "Ben": -4},
        },
    )
    assert service.unfinished_match("sabra", ["Ana", "Ben"]) is None


def test_the_result_of_a_match_with_a_target(client: TestClient) -> None:
    match_id = _match(client, "m", target=100, rounds_limit=10)
    _round(client, match_id, "Ana", 30)
    result = _state(client, match_id)["result"]
    assert result == {
        "over": False,
        "winner": None,
        "target": 100,
        "rounds_limit": 10,
        "elimination": None,
        "rounds_played": 1,
        "penalty": False,
        # the nearer end: Ana 30 of 100; Ben has nothing toward the target, 1 of 10 rounds
        "progress": {"Ana": {"total": 30, "share": 0.3}, "Ben": {"total": -30, "share": 0.1}},
        "closed": None,
    }


# --- the feed ---------------------------------------------------------------------------------
def _game(
    client: TestClient, match_id: int, *events: tuple[str, int | None, dict[str, Any]]
) -> None:
    for seq, (kind, seat, fields) in enumerate(events, start=1):
        _event(
            client, match_id, {"seq": seq, "t": float(seq), "type": kind, "seat": seat, **fields}
        )


def test_feed_entries_say_who_and_what_a_meld_is_worth(client: TestClient) -> None:
    match_id = _match(client, "m")
    _game(
        client,
        match_id,
        ("turn_started", 0, {"round": 1, "turn": 1}),
        ("meld_laid", 0, {"meld": "R10 R11 R12"}),
        ("initial_meld_progress", 0, {"value": 33, "required": 30, "meets": True}),
        ("turn_ended", 0, {"valid": True, "laid": ["R10", "R11", "R12"]}),
        ("turn_started", 1, {"round": 1, "turn": 2}),
        ("meld_laid", 1, {"meld": "K5 B5 O5"}),
        ("meld_laid", 1, {"meld": "B7 B8 B9"}),
        ("turn_ended", 1, {"valid": True, "laid": ["K5", "B5", "O5", "B7", "B8", "B9"]}),
        ("turn_started", 0, {"round": 1, "turn": 3}),
        ("item_added", 0, {"meld": "R10 R11 R12 R13", "items": ["R13"]}),
        ("joker_exchanged", 0, {"meld": "K5 B5 O5 R5", "items": ["R5"]}),
        ("meld_laid", 0, {"meld": "R3 R4 R6"}),
        ("warning", 0, {"message": "R3 R4 R6 is not a run", "items": ["R3", "R4", "R6"]}),
    )
    feed = {e["seq"]: e for e in _state(client, match_id)["feed"] if "seq" in e}
    # [sabra] "mindestens 30 Punkte": "Ana legt R10 R11 R12 — Eröffnung 33 von 30"
    assert feed[2]["player"] == "Ana" and feed[2]["value"] == 33
    assert feed[2]["opening"] == {"value": 33, "required": 30}
    # Ben's opening grows meld by meld in his turn: 15, then 15 + 24
    assert (feed[6]["value"], feed[6]["opening"]) == (15, {"value": 15, "required": 30})
    assert (feed[7]["value"], feed[7]["opening"]) == (24, {"value": 39, "required": 30})
    # Ana has opened: no opening any more
    assert feed[10] == {**feed[10], "player": "Ana", "value": 46} and "opening" not in feed[10]
    assert feed[11]["value"] == 20 and feed[11]["player"] == "Ana"
    assert feed[12]["value"] is None and "opening" not in feed[12]
    assert feed[13]["player"] == "Ana"
    # a new round: nobody has opened
    _event(
        client,
        match_id,
        {
            "seq": 14,
            "t": 20.0,
            "type": "round_scored",
            "seat": None,
            "scores": {"Ana": 5, "Ben": -5},
        },
    )
    _event(
        client,
        match_id,
        {"seq": 15, "t": 21.0, "type": "turn_started", "seat": 0, "round": 2, "turn": 1},
    )
    _event(
        client, match_id, {"seq": 16, "t": 22.0, "type": "meld_laid", "seat": 0, "meld": "K1 K2 K3"}
    )
    newest = _state(client, match_id)["feed"][0]
    assert newest["opening"] == {"value": 6, "required": 30}


def test_a_variant_without_an_opening_rule_has_no_opening(client: TestClient) -> None:
    match_id = _match(client, "m", variant="rum500")
    _game(
        client,
        match_id,
        ("turn_started", 1, {"round": 1, "turn": 1}),
        ("meld_laid", 1, {"meld": "7H 7S 7D"}),
    )
    entry = _state(client, match_id)["feed"][0]
    assert entry["player"] == "Ben" and entry["value"] == 21 and "opening" not in entry


# --- a panel that cannot start leaves nothing behind --------------------------------------
@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_panel_new_on_a_port_in_use_creates_no_match(
    tmp_path: Path, busy_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabletop.cli import main

    url = f"sqlite:///{tmp_path / 'matches.sqlite3'}"
    status = main(["panel", "--database", url, "--port", str(busy_port), "--new", "Friday"])
    assert status == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"tabletop: error: the panel cannot listen on 127.0.0.1:{busy_port}: Address already"
        " in use (another panel or program listens there: choose another --port)"
    ]
    assert EventStore(url).matches() == []


def test_the_embedded_panel_on_a_port_in_use_creates_no_match(
    tmp_path: Path, busy_port: int
) -> None:
    url = f"sqlite:///{tmp_path / 'matches.sqlite3'}"
    with pytest.raises(PanelAddressError, match=f"127.0.0.1:{busy_port}"):
        start_panel(
            EventBus(),
            variant_id="sabra",
            options={},
            players=["Ana", "Ben"],
            name="m",
            settings=PanelSettings(database_url=url, port=busy_port),
        )
    assert EventStore(url).matches() == []


def test_the_embedded_panel_writes_the_games_end_into_the_setup(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'matches.sqlite3'}"
    panel = start_panel(
        EventBus(),
        variant_id="sabra",
        options={},
        players=["Ana", "Ben"],
        name="m",
        settings=PanelSettings(database_url=url, port=_free_port()),
        rounds_limit=3,
    )
    try:
        setup = panel.service.state(panel.match_id)["setup"]
        assert setup["rounds_limit"] == 3 and setup["target"] is None
        assert panel.service.overview()[0]["status"] == "live"
    finally:
        panel.stop()
