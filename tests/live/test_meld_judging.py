"""Melds laid at a live table are judged as the players mean them (issue 45, items 3
and 11): snapshots and the end-turn button in, events out, as in test_game.py."""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine.events import event_from_json
from tabletop.engine.variants import find_variant
from tabletop.live.bus import EventBus
from tabletop.live.events import describe_event
from tabletop.live.game import Game
from tabletop.live.scenario import snapshot_from_json
from tabletop.live.snapshot import TableSnapshot
from tests.shared import json_events

PLAYERS = ("Ana", "Ben", "Cem")


def _game(variant: str) -> tuple[Game, list[dict[str, Any]]]:
    bus = EventBus()
    events, _ = json_events(bus)
    return Game(find_variant(variant), PLAYERS, bus), events


def _snap(t: float, melds: str) -> TableSnapshot:
    return snapshot_from_json(t, {"melds": [m.strip() for m in melds.split("|")]})


@pytest.mark.parametrize(
    ("variant", "laid", "hint"),
    [
        # the issue: R12 R13 JK is R11 R12 R13 to the players; [sabra] names the place
        ("sabra", "R12 R13 JK", "JK=R11 R12 R13"),
        ("sabra", "R12 JK R13", "JK=R11 R12 R13"),
        ("sabra", "JK R12 R13", None),
        ("remi", "R12 JK R10 R13 | K9 B9 O9", "R10 JK=R11 R12 R13"),
        # [rommee] says nothing of the joker's place: read, no hint
        ("rommee", "KS AS JK | 5H 5D 5C", None),
    ],
)
def test_a_joker_out_of_place_is_read_as_the_run_and_never_penalised(
    variant: str, laid: str, hint: str | None
) -> None:
    game, events = _game(variant)
    game.update(_snap(1, laid))
    game.end_turn(0, t=2)
    for event in events:
        event_from_json(event)
    ended = [e for e in events if e["type"] == "turn_ended"]
    assert [e["valid"] for e in ended] == [True]
    warnings = [e for e in events if e["type"] == "warning"]
    assert not any(e.get("code") == "penalty" or e.get("restored") for e in events)
    if hint is None:
        assert warnings == []
    else:
        (warning,) = warnings
        assert warning["code"] == "joker_out_of_place"
        assert warning["message"].startswith("move the joker") and hint in warning["message"]
    progress = [e for e in events if e["type"] == "initial_meld_progress"]
    assert progress[-1]["meets"] is True


def test_an_opening_worth_enough_but_holding_an_invalid_meld_says_which_and_why() -> None:
    # 33 + 39 = 72 of 30, but R5 R6 R8 is no run: the words must say so, not "not enough"
    game, events = _game("sabra")
    game.update(_snap(1, "R10 R11 R12 | K13 B13 O13 | R5 R6 R8"))
    progress = [e for e in events if e["type"] == "initial_meld_progress"][-1]
    assert (progress["value"], progress["meets"]) == (72, False)
    line = describe_event(event_from_json(progress), PLAYERS)
    assert line is not None and "not enough" not in line
    assert line.startswith("Ana's opening is worth 72 of 30 but does not count yet: R5 R6 R8")
    assert "not a run" in line


def test_an_opening_that_is_too_low_still_says_so() -> None:
    game, events = _game("sabra")
    game.update(_snap(1, "R1 R2 R3"))
    progress = [e for e in events if e["type"] == "initial_meld_progress"][-1]
    assert "problems" not in progress
    assert describe_event(event_from_json(progress), PLAYERS) == (
        "Ana's opening is worth 6 of 30: not enough yet")


def test_the_decoder_keeps_a_joker_read_at_the_end_of_a_row() -> None:
    # the camera reads the row left to right as R12 R13 JK, the joker with some doubt
    # (R11 second): the row is legal as it lies, so the joker stays a joker instead of
    # being "repaired" into the R11 it stands for
    from tabletop.live.decoding import decode_table

    shares = {0: {"R12": 0.98, "R13": 0.02}, 1: {"R13": 0.98, "R12": 0.02},
              2: {"JK": 0.8, "R11": 0.2}}
    decoding = decode_table(find_variant("sabra"), shares, [[0, 1, 2]])
    assert [decoding.labels[k] for k in (0, 1, 2)] == ["R12", "R13", "JK"]
    assert decoding.problems == ()
