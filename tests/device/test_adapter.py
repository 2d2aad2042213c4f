"""Game state to board commands, button presses to game actions (device/adapter.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tabletop.device.adapter import (
    BoardAction,
    BoardAdapter,
    BoardState,
    action_for,
    board_commands,
)
from tabletop.device.protocol import ButtonEvent


@pytest.mark.parametrize(
    ("state", "commands"),
    [
        (BoardState(seats=4), {"SEAT": "-", "FLAGS": "0", "SHOW": ""}),
        (
            BoardState(seats=3, current_seat=1, scores=(10, -25, 0), initial_meld=True),
            {"SEAT": "1", "FLAGS": "1", "SHOW": "-25"},
        ),
        # the timer wins over the score while it runs
        (
            BoardState(seats=2, current_seat=0, scores=(5, 6), timer_seconds=90, warning=True),
            {"SEAT": "0", "FLAGS": "2", "SHOW": "90"},
        ),
        (
            BoardState(seats=2, current_seat=None, scores=(5, 6), round_over=True),
            {"SEAT": "-", "FLAGS": "4", "SHOW": ""},
        ),
        # scores beyond four digits are clamped, not cut
        (BoardState(seats=2, current_seat=1, scores=(0, 12345)), {"SEAT": "1", "FLAGS": "0",
                                                                  "SHOW": "9999"}),
        (BoardState(seats=2, current_seat=0, scores=(-4000, 0)), {"SEAT": "0", "FLAGS": "0",
                                                                  "SHOW": "-999"}),
        # seat 5 of 6 has no LED on a four-seat board; its score still shows
        (BoardState(seats=6, current_seat=5, scores=(0, 0, 0, 0, 0, 7),
                    initial_meld=True, warning=True, round_over=True),
         {"SEAT": "-", "FLAGS": "7", "SHOW": "7"}),
    ],
)
def test_board_commands(state: BoardState, commands: dict[str, str]) -> None:
    assert board_commands(state) == commands


@pytest.mark.parametrize(
    "kwargs",
    [{"seats": 0}, {"seats": 2, "current_seat": 2}, {"seats": 2, "scores": (1,)},
     {"seats": 2, "timer_seconds": -1}],
)
def test_board_state_rejects(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        BoardState(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("button", "action"),
    [("END", BoardAction("end_turn")), ("UNDO", BoardAction("undo")),
     ("OUT", BoardAction("out")), ("S0", BoardAction("seat", 0)),
     ("S3", BoardAction("seat", 3))],
)
def test_action_for(button: str, action: BoardAction) -> None:
    assert action_for(ButtonEvent(1, button)) == action


class RecordingBoard:
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.listeners: list[Callable[[ButtonEvent], None]] = []

    def set_seat(self, seat: int | None) -> None:
        self.calls.append(("seat", seat))

    def set_flags(self, flags: int) -> None:
        self.calls.append(("flags", flags))

    def show(self, value: int | str) -> None:
        self.calls.append(("show", value))

    def on_event(self, listener: Callable[[ButtonEvent], None]) -> None:
        self.listeners.append(listener)


def test_adapter_drives_board_and_reports_actions() -> None:
    board = RecordingBoard()
    actions: list[BoardAction] = []
    adapter = BoardAdapter(board, actions.append)
    adapter.update(BoardState(seats=2, current_seat=1, scores=(3, 4), initial_meld=True))
    assert board.calls == [("seat", 1), ("flags", 1), ("show", "4")]
    board.listeners[0](ButtonEvent(1, "OUT"))
    assert actions == [BoardAction("out")]
