"""The engine's record of a game: the facts its events tell, step by step and undoable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tabletop.engine import events as ev
from tabletop.engine.record import GameFacts, GameRecord, MatchClosed, Step


def start(seat: int, round_: int = 1, turn: int = 1, t: float = 0.0) -> ev.TurnStarted:
    return ev.TurnStarted(t=t, seat=seat, round=round_, turn=turn)


def end(seat: int, valid: bool = True, laid: tuple[str, ...] = ()) -> ev.TurnEnded:
    return ev.TurnEnded(t=1.0, seat=seat, valid=valid, laid=laid)


def progress(seat: int, value: int, required: int = 30) -> ev.InitialMeldProgress:
    return ev.InitialMeldProgress(t=1.0, seat=seat, value=value, required=required,
                                  meets=value >= required)


def scored(**scores: int) -> ev.RoundScored:
    return ev.RoundScored(t=2.0, seat=None, scores=scores)


RUN = ("R10", "R11", "R12")


CASES: list[tuple[str, list[Step], dict[str, Any]]] = [
    ("nothing yet", [], {"phase": "play", "turn": None, "opened_seats": ()}),
    ("a valid turn that laid opens its seat",
     [start(0), end(0, laid=RUN), start(1, turn=2)],
     {"opened_seats": (0,), "turn.seat": 1, "turn.turn": 2}),
    ("an invalid turn opens nobody",
     [start(0), end(0, valid=False), start(1, turn=2)], {"opened_seats": ()}),
    ("a valid turn that laid nothing opens nobody",
     [start(0), end(0), start(1, turn=2)], {"opened_seats": ()}),
    ("progress reaching the minimum opens the seat on turn",
     [start(0), progress(0, 33)], {"opened_seats": (0,), "progress.value": 33}),
    ("progress short of the minimum does not",
     [start(0), progress(0, 24)], {"opened_seats": ()}),
    ("progress falling short again takes it back",
     [start(0), progress(0, 33), progress(0, 12)], {"opened_seats": ()}),
    ("a meld laid with no minimum reported opens the seat",
     [start(0), ev.MeldLaid(t=1.0, seat=0, meld="R10 R11 R12")], {"opened_seats": (0,)}),
    ("a meld laid below a reported minimum does not",
     [start(0), progress(0, 12), ev.MeldLaid(t=1.0, seat=0, meld="R3 R4 R5")],
     {"opened_seats": ()}),
    ("a new round opens nobody",
     [start(0), end(0, laid=RUN), start(1, round_=2)], {"opened_seats": (), "round": 2}),
    ("a round scored: next round's play, nobody opened, the round shown as just scored",
     [start(0), end(0, laid=RUN), scored(Ana=10, Ben=-10)],
     {"phase": "play", "opened_seats": (), "rounds_played": 1, "just_scored": 1,
      "turn": None}),
    ("the first turn of the next round ending stops showing it",
     [start(0), scored(Ana=10, Ben=-10), start(1, round_=2), end(1)],
     {"just_scored": None, "rounds_played": 1}),
    ("a player out: counting, with the hands shown",
     [start(0), ev.PlayerOut(t=3.0, seat=0),
      ev.HandShown(t=3.0, seat=1, items=("R5", "B7"), value=12)],
     {"phase": "counting", "out_seat": 0, "turn": None, "hands.1.value": 12}),
    ("back in play the hands shown are gone",
     [start(0), ev.PlayerOut(t=3.0, seat=0),
      ev.HandShown(t=3.0, seat=1, items=("R5",), value=5), scored(Ana=5, Ben=-5)],
     {"phase": "play", "out_seat": None, "hands": {}}),
    ("the match over",
     [start(0), ev.MatchOver(t=4.0, seat=None, winner="Ana", totals={"Ana": 5})],
     {"phase": "over", "turn": None, "match_over.winner": "Ana"}),
    ("the game's undo back into play: its seat on turn, later rounds dropped, not over",
     [start(0), scored(Ana=5, Ben=-5),
      ev.MatchOver(t=4.0, seat=None, winner="Ana", totals={"Ana": 5}),
      ev.Undo(t=5.0, seat=1, melds=("R1 R2 R3",), phase="play", rounds=0)],
     {"phase": "play", "turn.seat": 1, "turn.t": 5.0, "rounds_played": 0, "match_over": None,
      "table": ("R1 R2 R3",), "just_scored": None}),
    ("the game's undo back into counting shows no hands until they are shown again",
     [start(0), ev.PlayerOut(t=3.0, seat=0),
      ev.HandShown(t=3.0, seat=1, items=("R5",), value=5),
      ev.Undo(t=5.0, seat=0, melds=(), phase="counting", rounds=0)],
     {"phase": "counting", "hands": {}, "out_seat": 0, "turn": None}),
    ("undo after undo goes on back along the game's own line",
     [start(0), ev.Table(t=1.0, seat=0, melds=("R1 R2 R3",)), end(0, laid=("R1", "R2", "R3")),
      start(1, turn=2), ev.Table(t=2.0, seat=1, melds=("R1 R2 R3", "K5 B5 O5")),
      end(1, laid=("K5", "B5", "O5")), start(0, turn=3),
      ev.Undo(t=3.0, seat=1, melds=("R1 R2 R3", "K5 B5 O5"), phase="play", rounds=0),
      ev.Undo(t=4.0, seat=1, melds=("R1 R2 R3",), phase="play", rounds=0),
      ev.Undo(t=5.0, seat=0, melds=("R1 R2 R3",), phase="play", rounds=0)],
     {"turn.seat": 0, "turn.turn": 1, "turn.t": 5.0, "opened_seats": ()}),
    ("an undo back to its own turn's start keeps who opened before it",
     [start(0), ev.Table(t=1.0, seat=0, melds=("R1 R2 R3",)), end(0, laid=("R1", "R2", "R3")),
      start(1, turn=2), ev.Table(t=2.0, seat=1, melds=("R1 R2 R3", "K5 B5 O5")),
      ev.Undo(t=3.0, seat=1, melds=("R1 R2 R3",), phase="play", rounds=0)],
     {"turn.seat": 1, "turn.turn": 2, "opened_seats": (0,), "table": ("R1 R2 R3",)}),
    ("an undo of a turn's first meld: the meld laid before its table is taken back too",
     [start(0), ev.MeldLaid(t=1.0, seat=0, meld="R10 R11 R12"),
      ev.Table(t=1.0, seat=0, melds=("R10 R11 R12",)), progress(0, 33),
      ev.Undo(t=2.0, seat=0, melds=(), phase="play", rounds=0)],
     {"opened_seats": (), "turn.turn": 1, "progress": None, "table": ()}),
    ("an undo of a second meld keeps the first's progress",
     [start(0), ev.MeldLaid(t=1.0, seat=0, meld="R3 R4 R5"),
      ev.Table(t=1.0, seat=0, melds=("R3 R4 R5",)), progress(0, 12),
      ev.MeldLaid(t=2.0, seat=0, meld="K9 B9 O9"),
      ev.Table(t=2.0, seat=0, melds=("R3 R4 R5", "K9 B9 O9")), progress(0, 39),
      ev.Undo(t=3.0, seat=0, melds=("R3 R4 R5",), phase="play", rounds=0)],
     {"opened_seats": (), "reached_now.0": False, "laid_now": frozenset({0})}),
    ("the pool used up: counting with no one out",
     [start(1, turn=7), ev.PoolExhausted(t=3.0, seat=None)],
     {"phase": "counting", "out_seat": None, "turn": None, "last_turn.seat": 1,
      "last_turn.turn": 7}),
    ("the last turn is kept after it ends",
     [start(0, round_=2, turn=4), end(0), ev.PlayerOut(t=3.0, seat=0)],
     {"turn": None, "last_turn.seat": 0, "last_turn.round": 2, "last_turn.turn": 4}),
    ("a match closed by the players is over",
     [start(0), progress(0, 12), MatchClosed()],
     {"phase": "over", "turn": None, "progress": None}),
    ("a turn after a closed match plays again",
     [start(0), MatchClosed(), start(1, turn=2)], {"phase": "play", "turn.seat": 1}),
    ("a pause holds until resumed",
     [start(0), ev.TimerPaused(t=1.0, seat=None)], {"paused": True}),
    ("a resume ends it", [start(0), ev.TimerPaused(t=1.0, seat=None),
                          ev.TimerResumed(t=2.0, seat=None)], {"paused": False}),
    ("a pause with no turn on is none", [ev.TimerPaused(t=1.0, seat=None)], {"paused": False}),
    ("the next turn ends a pause",
     [start(0), ev.TimerPaused(t=1.0, seat=None), end(0), start(1, turn=2)], {"paused": False}),
    ("the table as last committed",
     [ev.Table(t=1.0, seat=0, melds=("R1 R2 R3",)), ev.Table(t=2.0, seat=1, melds=())],
     {"table": ()}),
]


def _get(facts: GameFacts, path: str) -> Any:
    value: Any = facts
    for part in path.split("."):
        if part == "opened_seats":
            value = value.opened_seats()
        elif isinstance(value, Mapping):
            value = value.get(int(part))
        else:
            value = getattr(value, part)
    return value


@pytest.mark.parametrize(("steps", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_facts_after_the_events(steps: list[Step], expected: dict[str, Any]) -> None:
    facts = GameRecord(steps).facts
    for path, value in expected.items():
        assert _get(facts, path) == value, path


@pytest.mark.parametrize("steps", [c[1] for c in CASES if c[1]], ids=[c[0] for c in CASES if c[1]])
def test_undo_takes_each_step_back(steps: list[Step]) -> None:
    record = GameRecord()
    seen = [record.facts]
    for step in steps:
        seen.append(record.apply(step))
    assert len(record) == len(steps)
    for facts in reversed(seen[:-1]):
        assert record.undo() == facts
    assert record.undo() == GameFacts() and len(record) == 0
