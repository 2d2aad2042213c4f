"""The match store: append-only log, durability under kill -9, replay, export."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

from tabletop.panel.events import ItemCorrected, ScoreEdited
from tabletop.panel.service import PanelService
from tabletop.panel.state import replay
from tabletop.panel.store import EventStore, StoreError, sqlite_url
from tests.shared import scaled

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    store = EventStore(sqlite_url(str(tmp_path / "matches.db")))
    yield store
    store.close()


def _setup(players: list[str], variant: str = "sabra", **extra: object) -> dict[str, object]:
    return {
        "type": "setup",
        "seat": None,
        "who": "Ana",
        "at": 0.0,
        "variant": variant,
        "players": players,
        **extra,
    }


def _round(scores: dict[str, int], seq: int = 1) -> dict[str, object]:
    return {"type": "round_scored", "seq": seq, "t": 1.0, "seat": None, "scores": scores}


def test_append_keeps_order_and_content(store: EventStore) -> None:
    match = store.create_match("Friday")
    first = store.append(
        match.id, {"type": "table", "seq": 1, "t": 0.5, "seat": 0, "melds": ["R3 R4 R5"]}
    )
    second = store.append(
        match.id,
        {"type": "warning", "seq": 2, "t": 0.6, "seat": 0, "message": "R3 R4 R6 is not a run"},
    )
    assert second.id > first.id
    events = store.events(match.id)
    assert [e.event for e in events] == [first.event, second.event]
    assert store.events(match.id, after=first.id)[0].id == second.id
    assert store.last_id(match.id) == second.id
    assert store.count(match.id) == 2


def test_matches_are_separate(store: EventStore) -> None:
    one, two = store.create_match("one"), store.create_match("two")
    store.append(one.id, {"type": "table", "melds": []})
    assert store.count(two.id) == 0
    assert [m.name for m in store.matches()] == ["one", "two"]


@pytest.mark.parametrize("event", [{"seq": 1}, {"type": 7}, ["type", "table"]])
def test_an_event_needs_a_string_type(store: EventStore, event: object) -> None:
    match = store.create_match("m")
    with pytest.raises(StoreError, match="string 'type'"):
        store.append(match.id, event)  # type: ignore[arg-type]


def test_unknown_match_is_refused(store: EventStore) -> None:
    with pytest.raises(StoreError, match="no match with id 99"):
        store.append(99, {"type": "table"})


def test_sqlite_runs_in_wal_mode(store: EventStore) -> None:
    with store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 2  # FULL


@pytest.mark.parametrize("statement", ["UPDATE events SET type = 'x'", "DELETE FROM events"])
def test_the_database_refuses_to_rewrite_the_log(store: EventStore, statement: str) -> None:
    match = store.create_match("m")
    store.append(match.id, {"type": "table", "melds": []})
    with pytest.raises(DatabaseError, match="append-only"), store.engine.begin() as connection:
        connection.execute(text(statement))
    assert store.count(match.id) == 1


WRITER = textwrap.dedent(
    """
    import sys
    from tabletop.panel.store import EventStore, sqlite_url
    store = EventStore(sqlite_url(sys.argv[1]))
    match = store.create_match("crash")
    seq = 0
    while True:
        seq += 1
        stored = store.append(match.id, {"type": "table", "seq": seq, "t": seq / 10,
                                         "seat": seq % 3, "melds": ["R3 R4 R5"] * (seq % 5)})
        print(match.id, seq, stored.id, flush=True)
    """
)


def test_kill_9_mid_game_loses_nothing_committed(tmp_path: Path) -> None:
    """A real writer process is killed with SIGKILL while writing; every event whose
    commit it reported is there after a restart, and writing goes on."""
    path = tmp_path / "crash.db"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert writer.stdout is not None
    reported: list[tuple[int, int, int]] = []
    deadline = time.monotonic() + scaled(30)
    while len(reported) < 60 and time.monotonic() < deadline:
        line = writer.stdout.readline()
        if not line:
            break
        match_id, seq, event_id = map(int, line.split())
        reported.append((match_id, seq, event_id))
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=scaled(10))
    assert writer.returncode == -signal.SIGKILL
    assert len(reported) >= 60, "the writer did not get going"

    store = EventStore(sqlite_url(str(path)))
    match_id = reported[0][0]
    events = store.events(match_id)
    by_id = {stored.id: stored for stored in events}
    for _, seq, event_id in reported:
        assert by_id[event_id].event["seq"] == seq
    # No gap and no torn event: the log is 1..n in order, each event whole.
    assert [stored.event["seq"] for stored in events] == list(range(1, len(events) + 1))
    assert replay(events)["table"]["melds"] == [
        {
            "meld": "R3 R4 R5",
            "valid": True,
            "value": 12,
            "kind": "run",
            "reason": None,
            "ambiguous": False,
        }
    ] * (len(events) % 5)
    after = store.append(match_id, {"type": "turn_started", "seq": len(events) + 1, "seat": 0})
    assert after.id > events[-1].id
    store.close()


# --- replay -------------------------------------------------------------------
def test_totals_are_a_replay_of_rounds(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, _setup(["Ana", "Ben", "Cem"]))
    # CONTRACT.md's round_scored example, then a second round.
    service.record(match.id, _round({"Ana": 41, "Ben": -23, "Cem": -18}))
    service.record(match.id, _round({"Ana": -10, "Ben": 25, "Cem": -15}, seq=2))
    state = service.state(match.id)
    assert state["match"]["totals"] == {"Ana": 31, "Ben": 2, "Cem": -33}
    assert state["totals_series"] == {"Ana": [0, 41, 31], "Ben": [0, -23, 2], "Cem": [0, -18, -33]}
    assert [row["player"] for row in state["match"]["standings"]] == ["Ana", "Ben", "Cem"]


def test_undo_is_a_new_event_and_the_replay_skips_what_it_takes_back(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, _setup(["Ana", "Ben"]))
    service.record(match.id, _round({"Ana": 10, "Ben": -10}))
    wrong = service.record(match.id, _round({"Ana": 99, "Ben": -99}, seq=2))
    undo = service.undo_last(match.id, "Ben")
    assert undo.event["target"] == wrong.id and undo.event["who"] == "Ben"
    assert store.count(match.id) == 4  # nothing deleted
    state = service.state(match.id)
    assert state["match"]["totals"] == {"Ana": 10, "Ben": -10}
    assert state["corrections"][0]["type"] == "undo"
    # The next undo takes back the round before (never the undo itself).
    service.undo_last(match.id, "Ben")
    assert service.state(match.id)["match"]["totals"] == {"Ana": 0, "Ben": 0}


def test_nothing_to_undo(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    with pytest.raises(StoreError, match="nothing to undo"):
        service.undo_last(match.id, "Ana")


def test_score_edit_replaces_a_round(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, _setup(["Ana", "Ben"]))
    service.record(match.id, _round({"Ana": 10, "Ben": -10}))
    service.record(match.id, _round({"Ana": -5, "Ben": 5}, seq=2))
    service.log(match.id, ScoreEdited(who="Ana", round=1, scores={"Ana": 12, "Ben": -12}))
    state = service.state(match.id)
    assert state["match"]["totals"] == {"Ana": 7, "Ben": -7}
    assert state["rounds"][0]["edited_by"] == "Ana"


def test_item_correction_fixes_the_table_until_the_camera_sends_a_new_one(
    store: EventStore,
) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, {"type": "table", "seq": 1, "seat": 0, "melds": ["R3 R4 R6"]})
    assert service.state(match.id)["table"]["melds"][0]["valid"] is False
    service.log(match.id, ItemCorrected(who="Cem", meld=0, index=2, item="R5"))
    meld = service.state(match.id)["table"]["melds"][0]
    assert (meld["meld"], meld["valid"], meld["value"]) == ("R3 R4 R5", True, 12)
    service.record(match.id, {"type": "table", "seq": 2, "seat": 0, "melds": ["K7 B7 O7"]})
    assert service.state(match.id)["table"]["melds"][0]["value"] == 21


def test_turn_and_initial_meld_progress(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, _setup(["Ana", "Ben"], turn_seconds=90))
    service.record(match.id, {"type": "turn_started", "seq": 1, "t": 3.0, "seat": 1,
                              "round": 1, "turn": 1})
    # Sabra: "mindestens 30 Punkte" to open; 24 laid so far.
    service.record(
        match.id,
        {
            "type": "initial_meld_progress",
            "seq": 2,
            "t": 4.0,
            "seat": 1,
            "value": 24,
            "required": 30,
            "meets": False,
        },
    )
    state = service.state(match.id)
    assert state["turn"]["player"] == "Ben" and state["setup"]["turn_seconds"] == 90
    assert state["initial_meld"] == {"seat": 1, "value": 24, "required": 30, "player": "Ben"}
    service.record(match.id, {"type": "turn_ended", "seq": 3, "t": 9.0, "seat": 1,
                              "valid": True, "laid": []})
    state = service.state(match.id)
    assert state["turn"] is None and state["initial_meld"] is None and not state["problems"]


def test_a_game_event_the_engine_cannot_read_is_skipped_and_named(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, _setup(["Ana", "Ben"]))
    service.record(match.id, {"type": "turn_started", "seq": 1, "t": 3.0, "seat": 1})
    state = service.state(match.id)
    assert state["turn"] is None and state["live"]["phase"] == "play"
    assert state["problems"] == ["event 2 (turn_started) skipped: turn_started event 1 lacks"
                                 " round, turn"]


def test_a_round_that_does_not_fit_is_reported_not_fatal(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, _setup(["Ana", "Ben"]))
    service.record(match.id, _round({"Ana": 5, "Zed": -5}))
    state = service.state(match.id)
    assert state["match"]["totals"] == {"Ana": 0, "Ben": 0}
    assert "'Zed' is not a player" in state["problems"][0]


# --- export ---------------------------------------------------------------------
def test_export_json_and_csv(store: EventStore) -> None:
    service = PanelService(store)
    match = store.create_match("m")
    service.record(match.id, _setup(["Ana", "=cmd()"]))
    service.record(match.id, _round({"Ana": 41, "=cmd()": -41}))
    service.record(match.id, _round({"Ana": -3, "=cmd()": 3}, seq=2))
    exported = service.export_json(match.id)
    assert [e["type"] for e in exported["events"]] == ["setup", "round_scored", "round_scored"]
    assert exported["state"]["match"]["totals"] == {"Ana": 38, "=cmd()": -38}
    assert json.loads(json.dumps(exported)) == exported
    rows = list(csv.reader(io.StringIO(service.export_csv(match.id, "rounds"))))
    assert rows == [
        # A name a spreadsheet would run as a formula is written as text.
        ["round", "dealer", "Ana", "'=cmd()", "Ana total", "'=cmd() total"],
        ["1", "Ana", "41", "-41", "41", "-41"],
        ["2", "'=cmd()", "-3", "3", "38", "-38"],
    ]
    events = list(csv.reader(io.StringIO(service.export_csv(match.id, "events"))))
    assert events[0][:5] == ["id", "recorded_at", "seq", "t", "type"]
    assert [row[4] for row in events[1:]] == ["setup", "round_scored", "round_scored"]
    assert json.loads(events[2][7])["scores"] == {"Ana": 41, "=cmd()": -41}
