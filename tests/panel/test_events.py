"""The panel's own events: read from the log's JSON into values and written back as it was."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tabletop.engine.events import EventError
from tabletop.panel.events import (
    CalibrationNoted,
    ItemCorrected,
    LogUndone,
    MatchClosedOnPanel,
    MatchSetUp,
    ScoreEdited,
    is_panel_event,
    panel_event_from_json,
    panel_event_to_json,
)

AT = 1764400000.25

# each as the panel has logged it: by the API, by the live table's panel, by a rematch
LOGGED: list[tuple[str, dict[str, Any], object]] = [
    (
        "setup from the API (ends null)",
        {"type": "setup", "seat": None, "who": "Ana", "at": AT, "variant": "rommee",
         "options": {"opening": 40}, "players": ["Ana", "Ben"], "dealer": 1,
         "rounds_limit": None, "target": None, "turn_seconds": 90},
        MatchSetUp(who="Ana", at=AT, variant="rommee", options={"opening": 40},
                   players=("Ana", "Ben"), dealer=1, turn_seconds=90),
    ),
    (
        "setup with a target",
        {"type": "setup", "seat": None, "who": "tabletop", "at": AT, "variant": "sabra",
         "options": {}, "players": ["A", "B", "C"], "dealer": 0, "rounds_limit": None,
         "target": 500, "turn_seconds": 120},
        MatchSetUp(who="tabletop", at=AT, variant="sabra", options={},
                   players=("A", "B", "C"), dealer=0, turn_seconds=120, target=500),
    ),
    (
        "calibration",
        {"type": "calibration", "seat": None, "who": "Ben", "at": AT, "status": "stale",
         "note": "the camera was bumped"},
        CalibrationNoted(who="Ben", at=AT, status="stale", note="the camera was bumped"),
    ),
    (
        "item corrected on a live table",
        {"type": "item_corrected", "seat": None, "who": "Cem", "at": AT, "meld": 2,
         "index": 0, "item": "R5", "was": "O5", "live": True},
        ItemCorrected(who="Cem", at=AT, meld=2, index=0, item="R5", was="O5", live=True),
    ),
    (
        "scores typed in",
        {"type": "score_edited", "seat": None, "who": "Ana", "at": AT, "round": 1,
         "scores": {"Ana": 12, "Ben": -12}},
        ScoreEdited(who="Ana", at=AT, round=1, scores={"Ana": 12, "Ben": -12}),
    ),
    (
        "scored again by the engine, no winner",
        {"type": "score_edited", "seat": None, "who": "Ana", "at": AT, "manual": True,
         "round": 2, "scores": {"Ana": 0, "Ben": 0}, "winner": None, "details": {},
         "doubled": False, "problems": [], "extras": {}, "input": {"players": []}},
        ScoreEdited(who="Ana", at=AT, round=2, scores={"Ana": 0, "Ben": 0}, manual=True,
                    details={}, doubled=False, problems=(), extras={},
                    input={"players": []}),
    ),
    (
        "match closed",
        {"type": "match_closed", "seat": None, "who": "Ben", "at": AT},
        MatchClosedOnPanel(who="Ben", at=AT),
    ),
    (
        "an entry taken back",
        {"type": "undo", "seat": None, "who": "Ana", "at": AT, "target": 7,
         "undone_type": "round_scored"},
        LogUndone(who="Ana", at=AT, target=7, undone_type="round_scored"),
    ),
]


@pytest.mark.parametrize(("raw", "value"), [(raw, value) for _, raw, value in LOGGED],
                         ids=[name for name, _, _ in LOGGED])
def test_a_logged_panel_event_reads_as_its_value(raw: dict[str, Any], value: object) -> None:
    assert is_panel_event(raw)
    assert panel_event_from_json(raw) == value


@pytest.mark.parametrize("raw", [raw for _, raw, _ in LOGGED], ids=[n for n, _, _ in LOGGED])
def test_a_value_writes_back_what_it_was_read_from(raw: dict[str, Any]) -> None:
    written = panel_event_to_json(panel_event_from_json(raw))
    assert json.loads(json.dumps(written)) == raw
    assert list(written)[:4] == ["type", "seat", "who", "at"]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ({"type": "setup", "seat": None, "who": "tabletop", "at": AT, "variant": "sabra",
          "options": {}, "players": ["A", "B"], "dealer": 0, "turn_seconds": 120},
         MatchSetUp(who="tabletop", at=AT, variant="sabra", options={}, players=("A", "B"),
                    dealer=0, turn_seconds=120)),
        ({"type": "setup", "players": ["A", "B"]}, MatchSetUp(players=("A", "B"))),
        ({"type": "calibration", "status": "ok"}, CalibrationNoted(status="ok")),
        ({"type": "item_corrected", "who": "Cem", "meld": 0, "index": 1, "item": "R5"},
         ItemCorrected(who="Cem", meld=0, index=1, item="R5")),
    ],
    ids=["a setup without its ends", "a bare setup", "calibration without a note",
         "a correction without was and live"],
)
def test_an_older_shorter_panel_event_still_reads(raw: dict[str, Any], value: object) -> None:
    assert panel_event_from_json(raw) == value


def test_fields_a_kind_does_not_know_are_kept_after_its_own() -> None:
    raw = {"type": "match_closed", "seat": None, "who": "Ben", "at": AT, "reason": "late"}
    event = panel_event_from_json(raw)
    assert event.extra == {"reason": "late"}
    assert panel_event_to_json(event) == raw


@pytest.mark.parametrize(
    ("raw", "is_panels"),
    [
        ({"type": "undo", "seq": 3, "t": 1.0, "seat": 0, "melds": []}, False),
        ({"type": "undo", "seat": None, "who": "Ana", "target": 3}, True),
        ({"type": "table", "seq": 1, "t": 0.0, "seat": None, "melds": []}, False),
        ({"type": "setup", "players": []}, True),
    ],
    ids=["the game's undo", "the panel's undo", "a game event", "a setup"],
)
def test_the_panels_events_are_told_from_the_games(raw: dict[str, Any], is_panels: bool) -> None:
    assert is_panel_event(raw) is is_panels


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"type": "setup", "who": "Ana", "players": "Ana,Ben"},
         "setup event: players must be a list of strings, not 'Ana,Ben'"),
        ({"type": "setup", "who": "Ana"}, "lacks players"),
        ({"type": "item_corrected", "meld": "0", "index": 1, "item": "R5"},
         "item_corrected event: meld must be a whole number, not '0'"),
        ({"type": "score_edited", "round": 1, "scores": {"Ana": 1.5}},
         "scores must be an object of names to whole numbers"),
        ({"type": "undo", "who": 3, "target": 1}, "undo event: who must be a string, not 3"),
        ({"type": "calibration", "status": "ok", "note": None, "at": "noon"},
         "at must be seconds, not 'noon'"),
        ({"type": "round_scored", "scores": {}}, "unknown panel event type 'round_scored'"),
        (["setup"], "a panel event is a JSON object, not ['setup']"),
    ],
    ids=["players as text", "no players", "meld as text", "fractional score", "who a number",
         "at as text", "a game kind", "not an object"],
)
def test_a_malformed_panel_event_is_refused_in_one_line_quoting_it(
    raw: Any, message: str
) -> None:
    with pytest.raises(EventError, match=None) as refused:
        panel_event_from_json(raw)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_panel_event_is_a_hashable_value() -> None:
    a = ItemCorrected(who="Cem", at=AT, meld=0, index=1, item="R5")
    b = ItemCorrected(who="Cem", at=AT, meld=0, index=1, item="R5")
    assert a == b and hash(a) == hash(b)
    assert len({a, b, ItemCorrected(who="Cem", at=AT, meld=0, index=1, item="R6")}) == 2
