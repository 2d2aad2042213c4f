"""The panel's game buttons applied to a real Game: what each does, and each refusal."""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine.events import event_from_json
from tabletop.engine.items import parse_items
from tabletop.engine.variants import find_variant
from tabletop.live.actions import Action, ActionError, apply_action, apply_pending_actions
from tabletop.live.bus import Event, EventBus
from tabletop.live.corrections import Correction, Inbox, LiveTableGone, Refused
from tabletop.live.game import Game
from tabletop.live.snapshot import TableSnapshot
from tests.shared import json_events

OPENING = "R10 R11 R12"  # 33: Sabra's opening needs 30 ("mindestens 30 Punkte")
BEN_OPENS = "B11 B12 B13"  # 36


def _table(t: float, *melds: str, seats: dict[int, list[str]] | None = None) -> TableSnapshot:
    return TableSnapshot(
        t,
        melds=tuple(parse_items(meld) for meld in melds),
        seats={seat: tuple(parse_items(m) for m in ms) for seat, ms in (seats or {}).items()},
    )


def _game(stage: str = "play") -> tuple[Game, list[Event]]:
    """Sabra for Ana and Ben at ``stage``: ``play`` (Ana's first turn), ``paused`` (its
    timer paused), ``counting`` (Ana opened, Ben opened and went out) or ``scored``."""
    bus = EventBus()
    events, _ = json_events(bus)
    game = Game(find_variant("sabra"), ("Ana", "Ben"), bus)
    game.start(0.0)
    if stage == "paused":
        game.pause_timer(0.5)
    if stage in ("counting", "scored"):
        game.update(_table(1.0, OPENING))
        game.end_turn(t=2.0)
        game.update(_table(3.0, OPENING, BEN_OPENS))
        game.out(1, 4.0)
    if stage == "scored":
        game.score(5.0)
    return game, events


def _types(answer: dict[str, Any]) -> list[str]:
    return [event["type"] for event in answer["events"]]


@pytest.mark.parametrize(
    "stage, action, types, phase, seat",
    [
        ("play", Action("end_turn", "Ana"), ["turn_ended", "turn_started"], "play", 1),
        ("play", Action("end_turn", "Ana", seat=0), ["turn_ended", "turn_started"], "play", 1),
        ("play", Action("out", "Ana"), ["turn_ended", "player_out"], "counting", 0),
        ("play", Action("pause_timer", "Ana"), ["timer_paused"], "play", 0),
        ("paused", Action("resume_timer", "Ana"), ["timer_resumed"], "play", 0),
        ("paused", Action("end_turn", "Ana"), ["turn_ended", "turn_started"], "play", 1),
        ("counting", Action("undo", "Ana"), ["undo"], "play", 1),
        ("counting", Action("hand", "Ana", seat=0, items="R3 R4 JK"), ["hand_shown"],
         "counting", 1),
        # Ana's area was never seen: she counts 0, with a warning, and round 2 begins
        ("counting", Action("next_round", "Ben"),
         ["warning", "round_scored", "turn_started"], "play", 1),
        ("scored", Action("undo", "Ana"), ["undo"], "counting", 1),
    ],
)
def test_each_action_does_what_its_button_says(
    stage: str, action: Action, types: list[str], phase: str, seat: int
) -> None:
    game, events = _game(stage)
    before = len(events)
    answer = apply_action(game, action, 10.0)
    assert (answer["kind"], _types(answer), answer["phase"], answer["seat"]) == (
        action.kind, types, phase, seat)
    assert answer["events"] == events[before:]
    for event in answer["events"]:
        event_from_json(event)
        assert event["t"] == 10.0


@pytest.mark.parametrize(
    "stage, action, reason",
    [
        ("counting", Action("end_turn", "Ana"), "end of turn ignored: no turn is on"),
        ("play", Action("end_turn", "Ben", seat=1), "it is Ana's turn, not Ben's"),
        ("play", Action("out", "Ben", seat=1), "Ben cannot go out now: it is Ana's turn"),
        ("play", Action("out", "Ana", seat=5), "seat 5 is not a seat of Ana, Ben"),
        ("play", Action("undo", "Ana"), "nothing to undo"),
        ("paused", Action("pause_timer", "Ana"), "the timer is already paused"),
        ("play", Action("resume_timer", "Ana"), "the timer is not paused"),
        ("counting", Action("pause_timer", "Ana"), "no turn is on: there is no timer to pause"),
        ("play", Action("next_round", "Ana"), "the round has not ended: no one went out"),
        ("play", Action("hand", "Ana", seat=0, items="R3"),
         "a rack is counted once someone went out, not now"),
        ("counting", Action("hand", "Ana", seat=1, items="R3"),
         "Ben went out: there is no rack to count"),
        ("counting", Action("hand", "Ana", seat=0, items="R3 10H"),
         "10H is not among the tiles of Rummikub (Sabra): Ana's rack is not taken"),
        # two R10 exist: one lies in Ana's opening on the table
        ("counting", Action("hand", "Ana", seat=0, items="R10 R10"),
         "R10 is seen 3 times, but Rummikub (Sabra) has 2 copies: Ana's rack is not taken"),
    ],
)
def test_a_refused_action_says_why_and_changes_nothing(
    stage: str, action: Action, reason: str
) -> None:
    game, _ = _game(stage)
    state, paused = game.state, game.timer_paused
    with pytest.raises(ActionError) as refused:
        apply_action(game, action, 10.0)
    assert str(refused.value) == reason
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, Refused)
    assert game.state is state and game.timer_paused == paused
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "kind, seat, items, reason",
    [
        ("shuffle", None, None, "unknown action 'shuffle': one of end_turn, out, undo,"),
        ("hand", None, "R3", "a rack needs the seat and the items"),
        ("hand", 0, None, "a rack needs the seat and the items"),
        ("hand", 0, "R3 X9", "rack 'R3 X9': unknown token 'X9'"),
        ("end_turn", None, "R3", "end_turn takes no items, only hand does"),
    ],
)
def test_a_malformed_action_is_refused_before_it_travels(
    kind: str, seat: int | None, items: str | None, reason: str
) -> None:
    with pytest.raises(ActionError) as refused:
        Action(kind, "Ana", seat, items)
    assert str(refused.value).startswith(reason)


def test_a_typed_rack_is_what_next_round_scores() -> None:
    # [sabra] "Der Gesamtwert ihrer noch übrigen Spielsteine wird ihnen als Minus
    # angerechnet und der Gewinner erhält die Gesamtsumme", "ein Joker 30 Punkte":
    # Ana's R3 R4 JK = 3 + 4 + 30 = 37
    game, events = _game("counting")
    # the camera sees R5 in Ana's area ...
    game.update(_table(5.0, OPENING, BEN_OPENS, seats={0: ["R5"]}))
    assert events[-1]["type"] == "hand_shown" and events[-1]["items"] == ["R5"]
    # ... but her rack is really R3 R4 JK, typed on the panel
    answer = apply_action(game, Action("hand", "Ben", seat=0, items="r3 R4 JK"), 6.0)
    (shown,) = answer["events"]
    assert shown == {"seq": shown["seq"], "t": 6.0, "type": "hand_shown", "seat": 0,
                     "items": ["R3", "R4", "JK"], "value": 37, "typed": True, "who": "Ben"}
    # the typed rack wins over what the camera goes on seeing there
    game.update(_table(7.0, OPENING, BEN_OPENS, seats={0: ["R5", "K9"]}))
    assert events[-1] == shown  # nothing new: the camera's R5 K9 does not count
    answer = apply_action(game, Action("next_round", "Ben"), 8.0)
    scored, started = answer["events"]
    assert scored["type"] == "round_scored"
    assert (scored["scores"], scored["winner"], scored["round"]) == (
        {"Ana": -37, "Ben": 37}, "Ben", 1)
    # round 2 begins with the next player (Ben), once the table is cleared
    assert (started["type"], started["seat"], started["round"]) == ("turn_started", 1, 2)
    assert game.state.typed == set() and game.state.hands == {}


def test_undo_back_into_counting_shows_the_hands_again() -> None:
    game, _ = _game("counting")
    apply_action(game, Action("hand", "Ben", seat=0, items="R3 R4"), 5.0)
    apply_action(game, Action("next_round", "Ben"), 6.0)
    answer = apply_action(game, Action("undo", "Ben"), 7.0)
    undo, shown = answer["events"]
    assert (undo["phase"], undo["rounds"], undo["melds"]) == (
        "counting", 0, [OPENING, BEN_OPENS])
    assert (shown["type"], shown["seat"], shown["items"], shown["typed"]) == (
        "hand_shown", 0, ["R3", "R4"], True)
    assert game.match.rounds_played == 0


def test_a_pause_ends_with_the_turn() -> None:
    game, events = _game("paused")
    apply_action(game, Action("end_turn", "Ana"), 3.0)
    assert not game.timer_paused
    assert _types(apply_action(game, Action("pause_timer", "Ben"), 4.0)) == ["timer_paused"]
    assert events[-1] == {"seq": events[-1]["seq"], "t": 4.0, "type": "timer_paused",
                          "seat": 1, "who": "Ben"}


def test_the_loop_applies_queued_actions_and_leaves_corrections_waiting() -> None:
    game, events = _game()
    inbox = Inbox()
    with inbox.serving():
        ended = inbox.submit(Action("end_turn", "Ana"))
        correction = inbox.submit(Correction(0, 0, "R5", "Ana"))
        again = inbox.submit(Action("end_turn", "Ana", seat=0))  # Ben's turn by then
        assert apply_pending_actions(inbox, game, 9.0) == 2
        answer = ended.result(0)
        assert isinstance(answer, dict) and (answer["seat"], answer["phase"]) == (1, "play")
        with pytest.raises(ActionError) as refused:
            again.result(0)
        assert str(refused.value) == "it is Ben's turn, not Ana's"
        assert events[-1]["type"] == "warning" and events[-1]["t"] == 9.0
        # the correction waits for its own handler, which the pipeline's loop runs too
        assert not correction.done()
        assert inbox.apply_pending(lambda fix: "pinned", Correction) == 1
        assert correction.result(0) == "pinned"
    with pytest.raises(LiveTableGone):
        inbox.submit(Action("undo", "Ana")).result(timeout=1)
