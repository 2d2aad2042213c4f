"""The scoring board on the game's bus: events in, button presses out as game actions.

The board driver calls back from its own thread, while the game runs in the
frame loop; so presses are queued here and the loop applies them between
frames with :meth:`BoardLink.apply_pending` (the game is never touched from
two threads).  What the board shows follows the events: whose turn it is
(``turn_started``), the initial meld reached (``initial_meld_progress``), a
warning until the next turn, the round over (``round_scored``) and the match
totals, one score per seat; the turn timer counts down and stands still while
paused (``timer_paused`` / ``timer_resumed``).
"""

from __future__ import annotations

import queue
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from tabletop.device.adapter import BoardAction, BoardAdapter, BoardLike, BoardState
from tabletop.engine import events as ev
from tabletop.live.bus import Event, EventBus


class GameActions(Protocol):
    """What a button can do to the game (live.game.Game has these)."""

    @property
    def seat(self) -> int: ...

    def end_turn(self, seat: int | None = None, t: float | None = None) -> None: ...

    def undo(self, t: float | None = None) -> None: ...

    def out(self, seat: int, t: float | None = None) -> None: ...


class BoardLink:
    def __init__(
        self,
        board: BoardLike,
        bus: EventBus,
        players: Sequence[str],
        turn_seconds: int | None = None,
    ) -> None:
        """``turn_seconds``: show a turn timer counting down from this (Sabra's usual
        two minutes: 120); None shows the current player's score instead."""
        self.players = tuple(players)
        self.turn_seconds = turn_seconds
        self.turn_started_at: float | None = None
        self.paused_at: float | None = None
        """While the turn timer is paused (panel or keys): when it was; the countdown
        stands still and later runs on from where it stood."""
        self.state = BoardState(seats=len(self.players), scores=(0,) * len(self.players))
        self.actions: queue.Queue[BoardAction] = queue.Queue()
        self.adapter = BoardAdapter(board, self.actions.put)
        self.adapter.update(self.state)
        self.unsubscribe = bus.subscribe(self.on_event)

    def on_event(self, event: Event) -> None:
        state = self.state
        match event:
            case ev.TurnStarted(seat=int(seat), t=t):
                state = replace(
                    state,
                    current_seat=seat,
                    warning=False,
                    round_over=False,
                    initial_meld=False,
                    timer_seconds=self.turn_seconds,
                )
                self.turn_started_at = float(t)
                self.paused_at = None
            case ev.TimerPaused(t=t) if self.turn_started_at is not None:
                self.paused_at = float(t)
            case ev.TimerResumed(t=t) if self.paused_at is not None:
                if self.turn_started_at is not None:
                    self.turn_started_at += float(t) - self.paused_at
                self.paused_at = None
            case ev.InitialMeldProgress(meets=meets):
                state = replace(state, initial_meld=meets)
            case ev.GameWarning():
                state = replace(state, warning=True)
            case ev.RoundScored(scores=scores, totals=totals):
                state = replace(state, round_over=True, scores=self._scores(totals or scores))
            case ev.MatchOver(totals=totals):
                state = replace(state, round_over=True, current_seat=None,
                                scores=self._scores(totals))
        if isinstance(event, (ev.RoundScored, ev.MatchOver)):
            state = replace(state, timer_seconds=None)
            self.turn_started_at = None
        self._show(state)

    def _show(self, state: BoardState) -> None:
        if state != self.state:
            self.state = state
            self.adapter.update(state)

    def tick(self, t: float) -> None:
        """Count the turn timer down to ``t`` (seconds on the game's clock)."""
        if self.turn_seconds is None or self.turn_started_at is None:
            return
        now = t if self.paused_at is None else self.paused_at
        left = max(0, self.turn_seconds - int(now - self.turn_started_at))
        self._show(replace(self.state, timer_seconds=left))

    def _scores(self, totals: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(int(totals.get(name, 0)) for name in self.players)

    def apply_pending(self, game: GameActions, t: float | None = None) -> int:
        """Apply the queued presses to the game (and count the timer down to ``t``);
        returns how many presses there were."""
        if t is not None:
            self.tick(t)
        applied = 0
        while True:
            try:
                action = self.actions.get_nowait()
            except queue.Empty:
                return applied
            applied += 1
            if action.kind == "end_turn":
                game.end_turn(t=t)
            elif action.kind == "undo":
                game.undo(t=t)
            elif action.kind == "out":
                game.out(game.seat, t=t)
            elif action.kind == "seat" and action.seat is not None:
                # a seat's own button: that player ends his turn
                game.end_turn(action.seat, t=t)

    def close(self) -> None:
        self.unsubscribe()
