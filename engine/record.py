"""What a game's events tell, folded in one place.

:class:`GameRecord` reads a game's events (:mod:`tabletop.engine.events`) in order and
keeps the facts they establish: the phase, the turn on, the table, which seats have made
their initial meld, the hands laid open, the rounds scored, the match's end.  The live
game keeps one (``live.game.Game.record``) and asks it who has opened; the panel folds a
stored match's events through another, so both tell the same facts from the same code.

Like a board that plays moves, the record applies an event (:meth:`GameRecord.apply`)
and takes it back (:meth:`GameRecord.undo`); each state is a frozen :class:`GameFacts`.
The game's own :class:`~tabletop.engine.events.Undo` event is a step like any other:
it names the table, the phase, the rounds played and the seat on turn that the game went
back to, and the record goes back to the latest facts on the game's own line that match
them (a state an undo went back to stands in for the one it replaced, so undo after undo
walks on back; a seat that opened in a turn taken back has not opened; a state inside a
change, after a ``meld_laid`` that its ``table`` event follows, is passed over), then
takes the undo's own time and table.

Which seats have opened: a seat whose valid turn laid items (``turn_ended`` with
``valid`` and ``laid``) has opened for the rest of the round; in its turn now on, a seat
has opened once its opening progress reaches the minimum, or, where the game reports
no progress (no minimum), once it lays a meld.  A new round (``turn_started`` of
another round, or a ``round_scored``) starts with nobody opened.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from tabletop.engine.events import (
    Event,
    HandShown,
    InitialMeldProgress,
    ItemAdded,
    JokerExchanged,
    MatchOver,
    MeldLaid,
    PlayerOut,
    PoolExhausted,
    RoundScored,
    Table,
    TableRearranged,
    TimerPaused,
    TimerResumed,
    TurnEnded,
    TurnStarted,
    Undo,
)

Phase = Literal["play", "counting", "over"]
PHASES: tuple[Phase, ...] = ("play", "counting", "over")


@dataclass(frozen=True)
class MatchClosed:
    """The players ended the match away from the game (on the panel, an evening over
    before its target): it is over, with no turn on."""

    t: float = 0.0


Step = Event | MatchClosed
"""What a record folds: the game's events, and a match closed by the players."""


@dataclass(frozen=True)
class TurnOn:
    """The turn being played: whose, which round and turn, and when it started (or
    started again after an undo), in the game's seconds."""

    seat: int | None
    round: int | None
    turn: int | None
    t: float


@dataclass(frozen=True)
class GameFacts:
    """The facts a game's events have established so far."""

    phase: Phase = "play"
    turn: TurnOn | None = None
    """The turn being played (None between turns, in the counting phase and at the end)."""
    last_turn: TurnOn | None = None
    """The turn that started last, kept after it ends: the seat on turn in play, the one
    whose turn ended the round in the counting phase (the live game asks it whose turn,
    which round and which turn it is)."""
    round: int | None = None
    """The round of the last ``turn_started`` (None before any)."""
    table: tuple[str, ...] = ()
    """The shared table's melds, as the last ``table`` or ``undo`` gave them."""
    opened: frozenset[int] = frozenset()
    """Seats whose ended turns in this round made their initial meld."""
    progress: InitialMeldProgress | None = None
    """The opening progress of the turn now on, as the game last reported it."""
    laid_now: frozenset[int] = frozenset()
    """Seats that laid a meld in their turn now on."""
    reached_now: Mapping[int, bool] = field(default_factory=dict)
    """Per seat, whether its last opening progress in its turn now on reached the minimum."""
    out_seat: int | None = None
    hands: Mapping[int, HandShown] = field(default_factory=dict)
    """The hands laid open in the counting phase, by seat."""
    rounds: tuple[RoundScored, ...] = ()
    just_scored: int | None = None
    """The round just scored (1, 2, ...), from its ``round_scored`` until the first turn
    of the next round ends."""
    match_over: MatchOver | None = None
    paused: bool = False

    @property
    def rounds_played(self) -> int:
        return len(self.rounds)

    def opened_seats(self) -> tuple[int, ...]:
        """Seats that have made their initial meld in the round now on (see the module)."""
        now = {seat for seat, reached in self.reached_now.items() if reached}
        now |= {seat for seat in self.laid_now if seat not in self.reached_now}
        return tuple(sorted(self.opened | now))


def _reaches(progress: InitialMeldProgress) -> bool:
    return progress.meets or progress.value >= progress.required


def _leaving_counting(facts: GameFacts, phase: Phase) -> GameFacts:
    """Out of the counting phase, the hands shown belong to the round that ended."""
    if phase == "counting":
        return replace(facts, phase=phase)
    return replace(facts, phase=phase, hands={}, out_seat=None)


def _turn_on(facts: GameFacts, seat: int | None, t: float, round_: int | None,
             turn: int | None) -> GameFacts:
    new_round = round_ is not None and round_ != facts.round
    on = TurnOn(seat, round_ if round_ is not None else facts.round, turn, t)
    facts = replace(
        facts,
        turn=on,
        last_turn=on,
        round=round_ if round_ is not None else facts.round,
        progress=None,
        paused=False,
    )
    if new_round:
        facts = replace(facts, opened=frozenset(), laid_now=frozenset(), reached_now={})
    return _leaving_counting(facts, "play")


def fold(facts: GameFacts, event: Step) -> GameFacts:
    """The facts after ``event``."""
    match event:
        case Table(melds=melds):
            return replace(facts, table=melds)
        case TurnStarted(seat=seat, t=t, round=round_, turn=turn):
            return _turn_on(facts, seat, t, round_, turn)
        case TurnEnded(seat=seat, valid=valid, laid=laid):
            opened, laid_now, reached_now = facts.opened, facts.laid_now, dict(facts.reached_now)
            if seat is not None:
                reached_now.pop(seat, None)
                laid_now = laid_now - {seat}
                if valid and laid:
                    opened = opened | {seat}
            return replace(facts, turn=None, progress=None, just_scored=None, opened=opened,
                           laid_now=laid_now, reached_now=reached_now)
        case MeldLaid(seat=seat) if seat is not None:
            return replace(facts, laid_now=facts.laid_now | {seat})
        case InitialMeldProgress(seat=seat):
            reached_now = dict(facts.reached_now)
            if seat is not None:
                reached_now[seat] = _reaches(event)
            return replace(facts, progress=event, reached_now=reached_now)
        case TimerPaused() if facts.turn is not None:
            return replace(facts, paused=True)
        case TimerResumed():
            return replace(facts, paused=False)
        case PlayerOut(seat=seat):
            return replace(facts, phase="counting", out_seat=seat, turn=None)
        case PoolExhausted():
            return replace(facts, phase="counting", out_seat=None, turn=None)
        case HandShown(seat=seat) if seat is not None:
            return replace(facts, hands={**facts.hands, seat: event})
        case RoundScored():
            facts = replace(facts, rounds=(*facts.rounds, event), turn=None, progress=None,
                            opened=frozenset(), laid_now=frozenset(), reached_now={},
                            just_scored=len(facts.rounds) + 1)
            return _leaving_counting(facts, "play")
        case MatchOver():
            return replace(facts, match_over=event, phase="over", turn=None)
        case MatchClosed():
            return replace(facts, phase="over", turn=None, progress=None)
        case Undo(melds=melds, phase=phase, rounds=rounds, seat=seat, t=t):
            back: Phase = phase if phase in PHASES else facts.phase
            kept = facts.rounds if rounds is None else facts.rounds[:rounds]
            just_scored = facts.just_scored
            if just_scored is not None and just_scored > len(kept):
                just_scored = None
            facts = replace(facts, table=melds, rounds=kept, just_scored=just_scored,
                            match_over=facts.match_over if back == "over" else None)
            if back == "play":
                return _turn_on(facts, seat, t, None, facts.turn.turn if facts.turn else None)
            facts = replace(facts, turn=None, progress=None, paused=False)
            # back in counting, the game shows each hand again
            return replace(_leaving_counting(facts, back), hands={})
    return facts


_ANNOUNCING = (MeldLaid, ItemAdded, JokerExchanged, TableRearranged)
"""Events the game sends before the ``table`` event of the same change: the table in the
facts after them is still the one before the change, but the change has begun (a meld
laid counts toward opening), so it is no place an undo goes back to."""


class GameRecord:
    """A game's facts, event by event, with each step undoable (see the module)."""

    def __init__(self, events: Iterable[Step] = ()) -> None:
        self._stack: list[GameFacts] = [GameFacts()]
        self._before: list[int] = [-1]
        """For each state, the one before it on the game's own line (an undo's state stands
        in for the state it went back to, so a later undo looks past both)."""
        self._mid_change: list[bool] = [False]
        """For each state, whether the event that made it announces a change of the table
        that the game's ``table`` event then gives: no undo goes back to such a state."""
        for event in events:
            self.apply(event)

    @property
    def facts(self) -> GameFacts:
        return self._stack[-1]

    def apply(self, event: Step) -> GameFacts:
        """Take ``event``; returns the facts after it."""
        base = len(self._stack) - 1
        before = base
        if isinstance(event, Undo):
            back = self._went_back_to(event)
            if back is not None:
                base, before = back, self._before[back]
        facts = fold(self._stack[base], event)
        self._stack.append(facts)
        self._before.append(before)
        self._mid_change.append(isinstance(event, _ANNOUNCING))
        return facts

    def _went_back_to(self, undo: Undo) -> int | None:
        """The latest state on the game's line that the game's undo names (its table,
        phase, rounds played and seat on turn): where the game went back to, with who had
        opened then."""
        index = len(self._stack) - 1
        while index >= 0:
            facts = self._stack[index]
            if (
                not self._mid_change[index]
                and facts.table == undo.melds
                and facts.phase == undo.phase
                and (undo.rounds is None or facts.rounds_played == undo.rounds)
                and (undo.phase != "play" or (facts.turn is not None
                                              and facts.turn.seat == undo.seat))
            ):
                return index
            index = self._before[index]
        return None

    def undo(self) -> GameFacts:
        """Take back the last event applied (the record as it was before it); an empty
        record stays empty."""
        if len(self._stack) > 1:
            self._stack.pop()
            self._before.pop()
            self._mid_change.pop()
        return self._stack[-1]

    def __len__(self) -> int:
        """The number of events applied and not taken back."""
        return len(self._stack) - 1


__all__ = ["PHASES", "GameFacts", "GameRecord", "MatchClosed", "Phase", "Step", "TurnOn", "fold"]
