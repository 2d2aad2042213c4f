"""Game actions from the panel: the buttons of the scoring board, and more, on a phone.

In the tile games (Sabra and the other Rummikub variants) no discard ends a
turn, so without the scoring board the players end their turns on the panel.
A button press there becomes an :class:`Action` that travels to the live
table in the same :class:`tabletop.live.corrections.Inbox` as the item corrections
(the panel submits and waits; the pipeline's loop applies it between frames, the
only thread that touches the game) and is applied by :func:`apply_action`:

========================  =====================================================
kind                      what the game does
========================  =====================================================
``end_turn``              :meth:`Game.end_turn` (``seat``: who pressed, if known)
``out``                   :meth:`Game.out` for ``seat``, else the player on turn
``undo``                  :meth:`Game.undo`
``pause_timer``           :meth:`Game.pause_timer`
``resume_timer``          :meth:`Game.resume_timer`
``next_round``            :meth:`Game.score`: the round is scored from the racks
                          seen (and typed), and the next one starts
``hand``                  :meth:`Game.set_hand`: ``seat``'s rack typed as
                          ``items`` (contract tokens, ``"R3 R4 JK K13"``)
========================  =====================================================

The game answers a press it cannot take (no turn on, nothing to undo) with a
``warning`` event and nothing else, as it does for the board; here such a
press is refused to the person: :class:`ActionError` with the warning's
message.  A press that changed the game is answered with what it did, its
warnings included (an invalid last turn ends the turn but not the round).

The pipeline's loop calls :func:`apply_pending_actions` between frames with the
inbox it found on the game's bus (``live.corrections.find_inbox``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, get_args

from tabletop.engine.events import Event, GameWarning, event_to_json
from tabletop.engine.items import Item, parse_items
from tabletop.live.corrections import Inbox, Refused
from tabletop.live.game import Game

ActionKind = Literal[
    "end_turn", "out", "undo", "pause_timer", "resume_timer", "next_round", "hand"
]
ACTION_KINDS: tuple[str, ...] = get_args(ActionKind)


class ActionError(Refused):
    """An action the live table will not take; the message says why, in one line."""


@dataclass(frozen=True)
class Action:
    """A person (``who``) pressed ``kind`` on the panel.

    ``seat``: the player it is for (``out``: who goes out, default the player on
    turn; ``end_turn``: who pressed; ``hand``: whose rack).  ``items``: the rack
    for ``hand``, contract tokens separated by spaces (empty: nothing left)."""

    kind: str
    who: str
    seat: int | None = None
    items: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ACTION_KINDS:
            raise ActionError(f"unknown action {self.kind!r}: one of {', '.join(ACTION_KINDS)}")
        if self.kind == "hand":
            if self.seat is None or self.items is None:
                raise ActionError("a rack needs the seat and the items")
            self.rack()  # a bad token is refused before the action travels
        elif self.items is not None:
            raise ActionError(f"{self.kind} takes no items, only hand does")

    def rack(self) -> tuple[Item, ...]:
        """The typed rack's items."""
        try:
            return parse_items(self.items or "")
        except ValueError as error:
            raise ActionError(f"rack {self.items!r}: {error}") from None

    def describe(self) -> str:
        seat = "" if self.seat is None else f" for seat {self.seat}"
        rack = "" if self.items is None else f" {self.items!r}"
        return f"{self.kind}{seat}{rack} (by {self.who})"


def _call(game: Game, action: Action, t: float) -> None:
    seat = action.seat
    if seat is not None and not 0 <= seat < len(game.players):
        raise ActionError(f"seat {seat} is not a seat of {', '.join(game.players)}")
    kind = action.kind
    if kind == "end_turn":
        game.end_turn(seat, t)
    elif kind == "out":
        game.out(game.seat if seat is None else seat, t)
    elif kind == "undo":
        game.undo(t)
    elif kind == "pause_timer":
        game.pause_timer(t, who=action.who)
    elif kind == "resume_timer":
        game.resume_timer(t, who=action.who)
    elif kind == "next_round":
        game.score(t)
    elif kind == "hand":
        assert seat is not None  # Action checks that a rack names its seat
        game.set_hand(seat, action.rack(), t, who=action.who)


@contextmanager
def _emitted(game: Game) -> Iterator[list[Event]]:
    """The events the game publishes inside the block (the game runs on this thread)."""
    events: list[Event] = []
    unsubscribe = game.events.bus.subscribe(events.append)
    try:
        yield events
    finally:
        unsubscribe()


def apply_action(game: Game, action: Action, t: float) -> dict[str, Any]:
    """Press ``action`` on ``game`` at ``t`` (seconds on the game's clock).

    Returns what happened: ``kind``, the game's ``phase`` and ``seat`` (on turn)
    after it, and the ``events`` it published.  Raises :class:`ActionError` where
    the game refused it (its only events were warnings) or the action names no seat
    of the game."""
    with _emitted(game) as events:
        _call(game, action, t)
    warnings = [event for event in events if isinstance(event, GameWarning)]
    if warnings and len(warnings) == len(events):
        raise ActionError("; ".join(event.message for event in warnings))
    return {"kind": action.kind, "phase": game.phase, "seat": game.seat,
            "events": [event_to_json(event) for event in events]}


def apply_pending_actions(inbox: Inbox, game: Game, t: float) -> int:
    """Apply the panel's queued actions to ``game`` at ``t``, from the pipeline's thread
    between frames (``inbox``: ``live.corrections.find_inbox(game.events.bus)``); each
    sender gets :func:`apply_action`'s answer or its ActionError.  Returns how many."""

    def press(action: Action) -> dict[str, Any]:
        return apply_action(game, action, t)

    return inbox.apply_pending(press, Action)
