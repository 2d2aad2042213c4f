"""Game state in, board commands out; button presses in, game actions out.

The game's event bus (the live-table issue) does not exist yet.  This module
is the seam it will plug into: the bus calls :meth:`BoardAdapter.update` with
a :class:`BoardState` whenever the turn, the scores or the table's state
change, and receives :class:`BoardAction` values through ``on_action``.

Everything here is plain data; :func:`board_commands` is a pure function, so
what the board shows for a game state is tested without any board.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from tabletop.device.protocol import (
    FLAG_MELD,
    FLAG_ROUND_OVER,
    FLAG_WARNING,
    ButtonEvent,
    display_text,
)

ActionKind = Literal["end_turn", "undo", "out", "seat"]
DISPLAY_MIN, DISPLAY_MAX = -999, 9999
"""What four digits can show; larger scores are clamped (the sign takes a digit)."""


@dataclass(frozen=True)
class BoardState:
    """What the board shows.  Seats are 0-based, in playing order.

    The display shows the turn timer when one runs, else the current seat's
    score, else nothing.
    """

    seats: int
    current_seat: int | None = None
    scores: tuple[int, ...] = ()
    initial_meld: bool = False
    """The current seat has made its initial meld (first lay-out)."""
    warning: bool = False
    """The table is invalid, or another warning the players should see."""
    round_over: bool = False
    timer_seconds: int | None = None

    def __post_init__(self) -> None:
        if self.seats < 1:
            raise ValueError(f"seats {self.seats!r} must be at least 1")
        if self.current_seat is not None and not 0 <= self.current_seat < self.seats:
            raise ValueError(f"current seat {self.current_seat!r} is not 0..{self.seats - 1}")
        if self.scores and len(self.scores) != self.seats:
            raise ValueError(f"{len(self.scores)} scores for {self.seats} seats: {self.scores!r}")
        if self.timer_seconds is not None and self.timer_seconds < 0:
            raise ValueError(f"timer {self.timer_seconds!r} is negative")


@dataclass(frozen=True)
class BoardAction:
    """A button press as a game action; ``seat`` only for kind 'seat'."""

    kind: ActionKind
    seat: int | None = None


BUTTON_ACTIONS: dict[str, BoardAction] = {
    "END": BoardAction("end_turn"),
    "UNDO": BoardAction("undo"),
    "OUT": BoardAction("out"),
    **{f"S{seat}": BoardAction("seat", seat) for seat in range(4)},
}


def action_for(event: ButtonEvent) -> BoardAction:
    try:
        return BUTTON_ACTIONS[event.button]
    except KeyError:
        raise ValueError(f"no game action for button {event.button!r}") from None


def display_for(state: BoardState) -> str:
    """The SHOW argument for ``state`` (see BoardState)."""
    if state.timer_seconds is not None:
        value = min(state.timer_seconds, DISPLAY_MAX)
    elif state.current_seat is not None and state.scores:
        value = max(DISPLAY_MIN, min(DISPLAY_MAX, state.scores[state.current_seat]))
    else:
        return ""
    return display_text(value)


def board_commands(state: BoardState, board_seats: int = 4) -> dict[str, str]:
    """Command -> argument that make the board show ``state``.

    A board has LEDs for ``board_seats`` seats; a current seat beyond them
    lights no seat LED (the display still shows its score).
    """
    seat = state.current_seat
    flags = (
        (FLAG_MELD if state.initial_meld else 0)
        | (FLAG_WARNING if state.warning else 0)
        | (FLAG_ROUND_OVER if state.round_over else 0)
    )
    return {
        "SEAT": "-" if seat is None or seat >= board_seats else str(seat),
        "FLAGS": str(flags),
        "SHOW": display_for(state),
    }


class BoardLike(Protocol):
    """What the adapter needs of a board (device.driver.Board has it)."""

    def set_seat(self, seat: int | None) -> None: ...
    def set_flags(self, flags: int) -> None: ...
    def show(self, value: int | str) -> None: ...
    def on_event(self, listener: Callable[[ButtonEvent], None]) -> None: ...


class BoardAdapter:
    """Connects a board to the game: ``update`` in, ``on_action`` out."""

    def __init__(self, board: BoardLike, on_action: Callable[[BoardAction], None]) -> None:
        self.board = board
        self.on_action = on_action
        self.state: BoardState | None = None
        board.on_event(self._button)

    def update(self, state: BoardState) -> None:
        """Show ``state``; the board driver skips what has not changed and
        keeps it for a board that is away (it is resent on reconnect)."""
        commands = board_commands(state)
        self.state = state
        seat = commands["SEAT"]
        self.board.set_seat(None if seat == "-" else int(seat))
        self.board.set_flags(int(commands["FLAGS"]))
        self.board.show(commands["SHOW"].replace("_", " "))

    def _button(self, event: ButtonEvent) -> None:
        self.on_action(action_for(event))
