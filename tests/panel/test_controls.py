"""The panel's game buttons: ``POST /api/matches/{id}/actions`` to a live table, and the
state the page needs for them (``live``, the paused timer, the racks, the round just scored).

The live table is a real :class:`tabletop.live.game.Game` on the panel's bus with a loop thread of
its own that, like ``live.pipeline.Pipeline``, takes the table snapshots and applies the panel's
queued actions between "frames" (the game is touched from that thread only).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tabletop.live.bus import EventBus
from tabletop.panel.app import create_app
from tabletop.panel.events import MatchSetUp
from tabletop.panel.routers import changes
from tabletop.panel.service import PanelService
from tabletop.panel.settings import PanelSettings
from tests.panel.clients import Follower
from tests.panel.live_table import BEN_OPENS, OPENING, LiveTable

PANEL_URL = "http://127.0.0.1:8765"
"""Where the panel serves by default: TestClient's own "testserver" is no name it answers to."""


def _settings(tmp_path: Path, **more: Any) -> PanelSettings:
    return PanelSettings(database_url=f"sqlite:///{tmp_path / 'panel.db'}", **more)


def _match(service: PanelService, players: tuple[str, ...] = ("Ana", "Ben")) -> int:
    match_id = service.store.create_match("Friday").id
    service.log(match_id, MatchSetUp(who="Ana", variant="sabra", players=tuple(players)))
    return match_id


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(_settings(tmp_path)), base_url=PANEL_URL) as client:
        yield client


@pytest.fixture
def live(client: TestClient) -> Iterator[tuple[TestClient, int, LiveTable]]:
    """A match played at a live table, attached as ``panel.embed.start_panel`` does."""
    service: PanelService = client.app.state.service  # type: ignore[attr-defined]
    match_id = _match(service)
    bus = EventBus()
    unsubscribe = service.attach(bus, match_id)
    table = LiveTable(bus)
    service.live_inboxes[match_id] = table.inbox
    table.start()
    try:
        yield client, match_id, table
    finally:
        table.stop()
        unsubscribe()


def _act(client: TestClient, match_id: int, kind: str, **more: Any) -> Any:
    body = {"who": "Ana", "kind": kind, **more}
    return client.post(f"/api/matches/{match_id}/actions", json=body)


def _state(client: TestClient, match_id: int) -> dict[str, Any]:
    return dict(client.get(f"/api/matches/{match_id}/state").json())


def _logged(client: TestClient, match_id: int) -> list[str]:
    return [event["type"] for event in client.get(f"/api/matches/{match_id}/events").json()]


def test_without_a_live_table_there_is_nothing_to_end(client: TestClient) -> None:
    match_id = _match(client.app.state.service)  # type: ignore[attr-defined]
    answer = _act(client, match_id, "end_turn")
    assert answer.status_code == 409
    assert answer.json()["detail"] == (
        f"no live table: match {match_id} is not being played at a watched table;"
        " end_turn (by Ana) was not made"
    )
    assert _logged(client, match_id) == ["setup"]
    assert _state(client, match_id)["live"] == {"attached": False, "phase": "play",
                                                "paused": False, "camera": None,
                                                "view": None}


def test_end_turn_reaches_the_game_and_its_events_the_store(
    live: tuple[TestClient, int, LiveTable],
) -> None:
    client, match_id, table = live
    table.lay(OPENING)
    assert _state(client, match_id)["turn"]["player"] == "Ana"
    answer = _act(client, match_id, "end_turn")
    assert answer.status_code == 200, answer.text
    done = answer.json()
    assert (done["kind"], done["phase"], done["seat"]) == ("end_turn", "play", 1)
    assert [event["type"] for event in done["events"]] == ["turn_ended", "turn_started"]
    # the game published them before it answered: they are in the log already
    assert _logged(client, match_id)[-2:] == ["turn_ended", "turn_started"]
    state = _state(client, match_id)
    assert state["turn"]["player"] == "Ben"
    assert state["live"] == {"attached": True, "phase": "play", "paused": False,
                             "camera": None, "view": None}


def test_a_refused_action_is_answered_422_with_the_games_reason(
    live: tuple[TestClient, int, LiveTable],
) -> None:
    client, match_id, _ = live
    refusals: list[tuple[str, dict[str, Any], str]] = [
        ("end_turn", {"seat": 1}, "it is Ana's turn, not Ben's"),
        ("next_round", {}, "the round has not ended: no one went out"),
        ("hand", {"seat": 0, "items": "R3"}, "a rack is counted once someone went out, not now"),
        ("resume_timer", {}, "the timer is not paused"),
    ]
    for kind, more, reason in refusals:
        answer = _act(client, match_id, kind, **more)
        assert (answer.status_code, answer.json()["detail"]) == (422, reason)


@pytest.mark.parametrize(
    "body, where",
    [
        ({"kind": "hand", "seat": 0, "items": "R3 " * 70}, "items"),
        ({"kind": "shuffle"}, "kind"),
        ({"kind": "out", "seat": 8}, "seat"),
        ({"kind": "out", "who": ""}, "who"),
        ({"kind": "out", "extra": 1}, "extra"),
    ],
)
def test_a_malformed_action_is_refused_before_the_live_table(
    live: tuple[TestClient, int, LiveTable], body: dict[str, Any], where: str
) -> None:
    client, match_id, table = live
    answer = client.post(f"/api/matches/{match_id}/actions", json={"who": "Ana", **body})
    assert answer.status_code == 422
    assert [error["loc"][-1] for error in answer.json()["detail"]] == [where]
    assert table.game.turn_number == 1 and "warning" not in _logged(client, match_id)


@pytest.mark.parametrize(
    "body, reason",
    [
        ({"kind": "hand", "items": "R3"}, "a rack needs the seat and the items"),
        ({"kind": "hand", "seat": 0, "items": "R3 X9"}, "rack 'R3 X9': unknown token 'X9'"),
        ({"kind": "undo", "items": "R3"}, "undo takes no items, only hand does"),
    ],
)
def test_an_action_that_makes_no_sense_gets_one_line(
    client: TestClient, body: dict[str, Any], reason: str
) -> None:
    match_id = _match(client.app.state.service)  # type: ignore[attr-defined]
    answer = client.post(f"/api/matches/{match_id}/actions", json={"who": "Ana", **body})
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith(reason)


def test_a_round_played_on_the_panel_buttons(live: tuple[TestClient, int, LiveTable]) -> None:
    client, match_id, table = live
    table.lay(OPENING)
    assert _act(client, match_id, "end_turn").status_code == 200
    table.lay(OPENING, BEN_OPENS)
    out = _act(client, match_id, "out").json()
    assert (out["phase"], [e["type"] for e in out["events"]]) == (
        "counting", ["turn_ended", "player_out"])
    state = _state(client, match_id)
    assert (state["live"]["phase"], state["turn"]) == ("counting", None)
    assert state["racks"] == [
        {"seat": 0, "player": "Ana", "out": False, "items": None, "value": None, "typed": False},
        {"seat": 1, "player": "Ben", "out": True, "items": None, "value": None, "typed": False},
    ]
    # Ana's rack is typed on the panel: R3 R4 JK = 3 + 4 + 30 ("ein Joker 30 Punkte")
    typed = _act(client, match_id, "hand", seat=0, items="R3 R4 JK")
    assert typed.status_code == 200, typed.text
    assert _state(client, match_id)["racks"][0] == {
        "seat": 0, "player": "Ana", "out": False, "items": ["R3", "R4", "JK"], "value": 37,
        "typed": True,
    }
    scored = _act(client, match_id, "next_round").json()
    assert [e["type"] for e in scored["events"]] == ["round_scored", "turn_started"]
    state = _state(client, match_id)
    assert state["rounds"][0]["scores"] == {"Ana": -37, "Ben": 37}
    assert state["rounds"][0]["winner"] == "Ben"
    assert (state["scored_round"], state["racks"], state["live"]["phase"]) == (1, [], "play")
    assert state["turn"]["player"] == "Ben"  # round 2 begins with the next player
    # the banner stays until the first turn of round 2 ends
    table.lay()
    assert _act(client, match_id, "end_turn").status_code == 200
    assert _state(client, match_id)["scored_round"] is None


def test_the_timer_stops_while_paused(live: tuple[TestClient, int, LiveTable]) -> None:
    client, match_id, table = live
    table.lay()  # the loop has run a frame: the game has started, Ana's turn is on
    since = _state(client, match_id)["turn"]["since"]
    assert _act(client, match_id, "pause_timer").status_code == 200
    paused = _state(client, match_id)
    assert paused["live"]["paused"] is True
    assert paused["turn"]["paused_at"] >= since
    time.sleep(0.2)
    assert _act(client, match_id, "resume_timer").status_code == 200
    resumed = _state(client, match_id)
    assert resumed["live"]["paused"] is False and resumed["turn"]["paused_at"] is None
    # the turn's clock counts from later by the pause's length
    assert resumed["turn"]["since"] >= since + 0.2


def test_an_unanswered_action_is_503_and_never_made(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    service: PanelService = client.app.state.service  # type: ignore[attr-defined]
    match_id = _match(service)
    bus = EventBus()
    service.attach(bus, match_id)
    table = LiveTable(bus)  # attached, but its loop is not running (busy, or not yet)
    service.live_inboxes[match_id] = table.inbox
    monkeypatch.setattr(changes, "LIVE_ANSWER_S", 0.2)
    answer = _act(client, match_id, "end_turn")
    assert answer.status_code == 503
    assert "did not answer within 0.2 s; end_turn (by Ana) was not made" in answer.json()["detail"]
    table.start()
    time.sleep(0.3)
    table.stop()
    assert table.game.turn_number == 1
    # the loop has ended: the table is no longer attached
    assert _state(client, match_id)["live"]["attached"] is False
    assert _act(client, match_id, "end_turn").status_code == 409


def test_an_action_needs_the_token_when_one_is_set(tmp_path: Path) -> None:
    with TestClient(
        create_app(_settings(tmp_path, token="s3cret")), base_url=PANEL_URL
    ) as client:
        match_id = _match(client.app.state.service)  # type: ignore[attr-defined]
        assert _act(client, match_id, "end_turn").status_code == 401
        answer = client.post(f"/api/matches/{match_id}/actions",
                             json={"who": "Ana", "kind": "end_turn"},
                             headers={"X-Panel-Token": "s3cret"})
        assert answer.status_code == 409


# --- the state from the log alone --------------------------------------------------------


def test_the_phase_follows_the_logged_events(client: TestClient) -> None:
    service: PanelService = client.app.state.service  # type: ignore[attr-defined]
    match_id = _match(service)
    steps: list[tuple[str, int | None, dict[str, Any], str, bool]] = [
        ("turn_started", 0, {"round": 1, "turn": 1}, "play", False),
        ("timer_paused", 0, {}, "play", True),
        ("timer_resumed", 0, {}, "play", False),
        ("timer_paused", 0, {}, "play", True),
        ("turn_ended", 0, {"valid": True, "laid": []}, "play", False),
        ("turn_started", 1, {"round": 1, "turn": 2}, "play", False),
        ("player_out", 1, {}, "counting", False),
        ("hand_shown", 0, {"items": ["R5"], "value": 5}, "counting", False),
        ("round_scored", None, {"scores": {"Ana": -5, "Ben": 5}, "winner": "Ben"}, "play",
         False),
        ("turn_started", 1, {"round": 2, "turn": 1}, "play", False),
        # the game takes the score back: counting again, round 1 unscored
        ("undo", 1, {"melds": [], "phase": "counting", "rounds": 0}, "counting", False),
        ("round_scored", None, {"scores": {"Ana": -5, "Ben": 5}, "winner": "Ben"}, "play",
         False),
        ("match_over", None, {"winner": "Ben", "totals": {"Ana": -5, "Ben": 5}}, "over", False),
    ]
    for seq, (kind, seat, more, phase, paused) in enumerate(steps, start=1):
        # logged as the bus hands the store a game's events
        service.record(match_id, {"seq": seq, "t": float(seq), "type": kind, "seat": seat,
                                  **more})
        state = _state(client, match_id)
        assert (state["live"]["phase"], state["live"]["paused"]) == (phase, paused), kind
        if kind == "hand_shown":
            assert state["racks"][0]["items"] == ["R5"] and state["racks"][1]["out"] is True
        if kind == "undo":
            assert (state["rounds"], state["turn"], state["scored_round"]) == ([], None, None)
    assert len(state["rounds"]) == 1 and state["scored_round"] == 1


def test_the_cameras_drop_out_is_in_the_state_and_pushed(
    live: tuple[TestClient, int, LiveTable],
) -> None:
    """The live table's camera state (``live.sources.SourceStatus``) reaches the pages."""
    client, match_id, _ = live
    service: PanelService = client.app.state.service  # type: ignore[attr-defined]
    page = Follower()
    with client.websocket_connect(f"ws://127.0.0.1:8765/ws/matches/{match_id}") as socket:
        assert page.take(socket.receive_json())["live"]["camera"] is None
        service.set_camera(match_id, "reconnecting", "the stream dropped out; reconnecting")
        pushed = page.take(socket.receive_json())
        assert pushed["live"]["camera"] == {"state": "reconnecting",
                                            "message": "the stream dropped out; reconnecting"}
        service.set_camera(match_id, "live", "the stream is live (1280x720)")
        assert page.take(socket.receive_json())["live"]["camera"]["state"] == "live"


def test_card_indices_too_small_to_read_are_in_the_state_and_pushed(
    live: tuple[TestClient, int, LiveTable],
) -> None:
    """The live table's view says it leaves card indices unread as too small
    (``live.table_view``): the pages are told, with the indices' length."""
    client, match_id, _ = live
    service: PanelService = client.app.state.service  # type: ignore[attr-defined]
    page = Follower()
    with client.websocket_connect(f"ws://127.0.0.1:8765/ws/matches/{match_id}") as socket:
        assert page.take(socket.receive_json())["live"]["view"] is None
        service.set_too_far(match_id, 9.64)
        assert page.take(socket.receive_json())["live"]["view"] == {"too_far_px": 9.6}
    assert _state(client, match_id)["live"]["view"] == {"too_far_px": 9.6}
