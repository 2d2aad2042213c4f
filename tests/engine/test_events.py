"""The game's events as values (engine/events.py): each kind read from its JSON and written
back key for key, the optional fields left out as the game leaves them out, fields a kind
does not know kept after its own, and the shapes refused with the input quoted."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tabletop.engine import events as ev
from tabletop.engine.events import EVENT_TYPES, EventError, event_from_json, event_to_json

BASE = '"seq": 3, "t": 12.4, '

# one line for every kind as the game writes it (and, where fields are optional, without)
LINES = [
    ('"type": "table", "seat": 1, "melds": ["R3 R4 R5", "K7 B7 O7"]', ev.Table),
    ('"type": "table", "seat": null, "melds": ["R3 R4 R5"], "restored": true,'
     ' "boxes": [[1.5, 2, 30.25, 40], null]', ev.Table),
    ('"type": "warning", "seat": 1, "message": "R3 R4 R6 is not a run",'
     ' "items": ["R3", "R4", "R6"]', ev.GameWarning),
    ('"type": "warning", "seat": 0, "message": "m", "items": [], "code": "put_table_back",'
     ' "missing": ["R5"], "table_before": ["R3 R4 R5"]', ev.GameWarning),
    ('"type": "warning", "seat": 2, "message": "m", "items": ["B10"], "code": "penalty",'
     ' "penalty_draw": 3, "back_to_rack": ["B10"], "table_before": ["R1 R2 R3"]',
     ev.GameWarning),
    ('"type": "warning", "seat": 0, "message": "m", "items": ["R5"], "code": "unreadable_meld",'
     ' "alternatives": [{"meld": "R5 R6 R7", "odds": 3.5}]', ev.GameWarning),
    ('"type": "round_scored", "seat": null, "scores": {"Ana": 41, "Ben": -23}',
     ev.RoundScored),
    ('"type": "round_scored", "seat": null, "scores": {"Ana": 0}, "round": 2, "winner": null,'
     ' "totals": {"Ana": 12}', ev.RoundScored),
    ('"type": "turn_started", "seat": 0, "round": 1, "turn": 4', ev.TurnStarted),
    ('"type": "turn_ended", "seat": 0, "valid": false, "laid": []', ev.TurnEnded),
    ('"type": "meld_laid", "seat": 0, "meld": "R10 R11 R12"', ev.MeldLaid),
    ('"type": "item_added", "seat": 0, "meld": "R9 R10 R11 R12", "items": ["R9"]',
     ev.ItemAdded),
    ('"type": "joker_exchanged", "seat": 1, "meld": "R5 R6 R7", "items": ["R6"]',
     ev.JokerExchanged),
    ('"type": "table_rearranged", "seat": 1, "before": ["R3 R4 R5 R6"],'
     ' "after": ["R3 R4 R5", "R6 K6 B6"]', ev.TableRearranged),
    ('"type": "discard_taken", "seat": 1, "items": ["QH"]', ev.DiscardTaken),
    ('"type": "item_discarded", "seat": 1, "item": "QH"', ev.ItemDiscarded),
    ('"type": "initial_meld_progress", "seat": 0, "value": 6, "required": 30,'
     ' "meets": false', ev.InitialMeldProgress),
    ('"type": "initial_meld_progress", "seat": 0, "value": 70, "required": 40,'
     ' "meets": false, "problems": ["AD AC: a meld needs three"]', ev.InitialMeldProgress),
    ('"type": "player_out", "seat": 2, "all_at_once": true', ev.PlayerOut),
    ('"type": "pool_exhausted", "seat": null', ev.PoolExhausted),
    ('"type": "hand_shown", "seat": 1, "items": ["R3", "JK"], "value": 33, "typed": true,'
     ' "who": "Ben"', ev.HandShown),
    ('"type": "hand_shown", "seat": 1, "items": [], "value": 0', ev.HandShown),
    ('"type": "match_over", "seat": null, "winner": "Ana", "totals": {"Ana": 1, "Ben": 2}',
     ev.MatchOver),
    ('"type": "undo", "seat": 0, "melds": [], "phase": "playing", "rounds": 0', ev.Undo),
    ('"type": "reading_corrected", "seat": 0, "item": "R6", "was": "R8", "meld": "R5 R6 R7",'
     ' "who": "Ana", "value": null', ev.ReadingCorrected),
    ('"type": "reading_corrected", "seat": 1, "item": "QS", "was": "QC", "meld": null',
     ev.ReadingCorrected),
    ('"type": "timer_paused", "seat": 0, "who": "Ana"', ev.TimerPaused),
    ('"type": "timer_resumed", "seat": 0', ev.TimerResumed),
]


@pytest.mark.parametrize(("line", "kind"), LINES)
def test_every_kind_reads_into_its_value_and_writes_back_byte_for_byte(
    line: str, kind: type[ev.GameEvent]
) -> None:
    text = "{" + BASE + line + "}"
    event = event_from_json(json.loads(text))
    assert type(event) is kind and event.seq == 3 and event.t == 12.4
    assert json.dumps(event_to_json(event)) == text
    assert event_from_json(event_to_json(event)) == event
    hash(event)  # a value: hashable, though scores and totals are mappings


def test_every_kind_has_a_line_above() -> None:
    assert {kind for _, kind in LINES} == set(EVENT_TYPES.values())


def test_fields_a_kind_does_not_know_are_kept_after_its_own() -> None:
    text = '{"seq": 1, "t": 0, "type": "table", "seat": null, "bench": "k1", "melds": []}'
    event = event_from_json(json.loads(text))
    assert event.extra == {"bench": "k1"}
    assert json.dumps(event_to_json(event)) == (
        '{"seq": 1, "t": 0, "type": "table", "seat": null, "melds": [], "bench": "k1"}')


def test_a_value_built_by_the_game_is_frozen_and_numbered_later() -> None:
    event = ev.Table(t=1.0, seat=0, melds=["R3 R4 R5"],  # type: ignore[arg-type]
                     boxes=[[1, 2, 3, 4]])  # type: ignore[list-item]
    assert event.seq == 0 and event.melds == ("R3 R4 R5",) and event.boxes == ((1, 2, 3, 4),)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seat = 1  # type: ignore[misc]
    assert event_to_json(dataclasses.replace(event, seq=7)) == {
        "seq": 7, "t": 1.0, "type": "table", "seat": 0, "melds": ["R3 R4 R5"],
        "boxes": [[1, 2, 3, 4]]}


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ({"seq": 0, "t": 1.0, "type": "table", "seat": None, "melds": []}, "seq must be"),
        ({"seq": 1, "t": -1.0, "type": "table", "seat": None, "melds": []}, "t must be"),
        ({"seq": 1, "t": float("nan"), "type": "table", "seat": None, "melds": []},
         "t must be"),
        ({"seq": 1, "t": 1.0, "type": "nonsense", "seat": None}, "unknown event type 'nonsense'"),
        ({"seq": 1, "t": 1.0, "type": "table", "seat": -1, "melds": []}, "seat must be"),
        ({"seq": 1, "t": 1.0, "type": "table", "seat": True, "melds": []}, "seat must be"),
        ({"seq": 1, "t": 1.0, "type": "warning", "seat": 0, "message": "x"},
         "warning event 1 lacks items"),
        ({"seq": 1, "t": 1.0, "type": "table", "seat": None, "melds": [["R1"]]},
         r"table event 1: melds must be a list of strings, not \[\['R1'\]\]"),
        ({"seq": 1, "t": 1.0, "type": "round_scored", "seat": None, "scores": {"A": 1.5}},
         "scores must be an object of names to whole numbers"),
        ({"seq": 1, "t": 1.0, "type": "turn_started", "seat": 0, "round": True, "turn": 1},
         "round must be a whole number, not True"),
        ({"seq": 1, "t": 1.0, "type": "table", "seat": None, "melds": [], "boxes": [[1, 2]]},
         "boxes must be"),
        ({"t": 1.0, "type": "table", "seat": None, "melds": []}, "has no 'seq'"),
        (["not", "an", "object"], "an event is a JSON object"),
    ],
)
def test_a_shape_the_contract_does_not_allow_is_refused_quoting_it(raw: Any, error: str) -> None:
    with pytest.raises(EventError, match=error):
        event_from_json(raw)
