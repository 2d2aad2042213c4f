"""From committed table snapshots to game events: the game half of the live table.

:class:`Game` keeps one match at a table.  The vision side hands it a
:class:`tabletop.live.snapshot.TableSnapshot` whenever the scene settles; the board and
the panel press buttons (:meth:`Game.end_turn`, :meth:`Game.out`,
:meth:`Game.score`, :meth:`Game.undo`, :meth:`Game.pause_timer`,
:meth:`Game.resume_timer`; the panel's go through :mod:`tabletop.live.actions`).  Every
committed change becomes events on the bus (see :mod:`tabletop.live.events`), and the
engine judges each turn when it ends with :func:`tabletop.engine.turns.check_turn`.
Where the game stands (whose turn, which round and turn, the phase, who has opened, a
paused timer) is what those events told: the game asks its record
(:class:`tabletop.engine.record.GameRecord`, :attr:`Game.record`), which the panel folds
a stored match's events through too, and keeps beside it only what no event tells (the
table at the turn's start, who laid what, the hands, a table it waits for).

What the game can and cannot see, and the choices made for it:

* The table is the shared meld area plus, during play, the melds lying in
  each seat's area (Rommé players lay their melds in front of themselves);
  ``laid`` for a turn is every item on the table at its end that was not there
  at its start.  Racks and hands are hidden until the end of the round.
* A snapshot no game can reach (a third copy of a tile, a card in a tile
  game, too many jokers) is reported as a ``warning`` and not committed: the
  game keeps its state and waits for a better reading.
* A turn ends on the end-turn button, or where the variant has a discard pile
  (every variant but Sabra) when a new discard appears.  The pile keeps what a
  discard covers: a card is taken only when an older card shows on top again.
  Where only the top discard may be taken, a pile of two or more gone at once
  was covered or turned over, not taken, and an older card showing on top with
  two or more above it is its twin of the other deck, discarded (where the decks
  hold another).  A top card reading as before but lying elsewhere
  (``TableSnapshot.discard_laid_anew``) is its twin laid on it, or, where the pile
  holds both copies, the top one taken.  Where the round starts with the
  stock's top card turned up (500 Rum, American Rummy), the first card on the
  pile is that upcard, no one's discard.  A turn in which the
  table did not change and nothing was taken from the discards is a draw and
  is not checked.
* An invalid turn is reported item by item; the game's table goes back to
  the table at the turn's start (Sabra: "die Spielsteine auf dem Tisch wieder
  in dieselbe Zusammenstellungen legen ... zur Strafe drei Spielsteine aus dem
  Pool ziehen") and the game waits, ignoring snapshots, until the camera sees
  the table put back, or until a new discard says the next player played on
  with the table as it lay: the game then takes that table, as the invalid
  turn left it, and says so (``table_left_standing``).
* Going out (the ``out`` button) may be pressed during the player's own turn
  (then the turn is checked as his last; Hand-Rommé's waiver of the minimum
  applies only then, as the whole hand goes down in that turn) or right after
  his turn ended by a discard, before the next player changed anything
  (Rommé: "seine letzte Karte ... verdeckt auf den Abwurfstoß ablegt").
* A person's correction of a misread item (:meth:`Game.correct_items`, from the
  panel through the watcher) is not a play: the game swaps the token wherever
  it remembers that item (the table, the turn's start, the table it waits for,
  who laid what, the hands laid open), so the next end of turn neither misses
  the old token nor finds the new one laid, and the correction can be undone.
* End of round: the players lay their remaining items in their seat areas;
  ``score`` builds the :class:`tabletop.engine.rounds.RoundInput` from what the game saw
  (who laid what, who went out, the hands laid open) and the match totals carry
  on in :class:`tabletop.engine.match.Match`.  A rack the camera cannot see is typed on
  the panel (:meth:`Game.set_hand`); for the rest of that round it stands for
  the seat's hand, whatever the camera sees in that seat's area.  A stock or
  pool used up with no one out (:meth:`Game.exhausted`) ends the round too
  (``pool_exhausted``) and the hands are counted.  The next
  round starts with the player the match names (the dealer, in Rommé "Der
  Geber ist als erster Spieler am Zug"; in the Rummikub games the player who
  begins) once the table is clear.
* The turn timer (counted down by the panel and the board) runs from each
  ``turn_started``; ``timer_paused`` / ``timer_resumed`` stop and restart it.
  A pause lasts until it is resumed or the turn ends.  An undo ends a pause:
  the turn it returns to is timed afresh.  The ``undo`` event says the phase
  and how many rounds are scored, so whoever follows the events knows where
  the game stands after it.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tabletop.engine import events as ev
from tabletop.engine.base import RoundResult
from tabletop.engine.items import JOKER, Item, Joker, format_items, parse_item
from tabletop.engine.match import Match
from tabletop.engine.record import GameFacts, GameRecord, Phase
from tabletop.engine.rounds import MeldContribution, PlayerRound, RoundInput, score_round
from tabletop.engine.state import Problem, TableState
from tabletop.engine.turns import check_turn
from tabletop.engine.variants import Variant
from tabletop.live.bus import EventBus
from tabletop.live.events import CAMERA_EVENT_CODE, EventStream, items_json, melds_json
from tabletop.live.snapshot import Box, TableSnapshot

Meld = tuple[Item, ...]
Bag = Counter[str]

MATERIAL_PROBLEMS = frozenset({"wrong_material", "too_many_copies", "too_many_jokers"})
"""TableState problems that no real table can show: such a snapshot is not committed."""


class GameError(ValueError):
    """A game that cannot be set up as asked (too few players, a bad seat)."""


@dataclass(frozen=True)
class GameOptions:
    """How the table is played, beyond the variant's own options.

    ``start_seat``: who begins the first round (default: seat 0).
    ``end_on_discard``: a new discard ends the turn (default: where the variant
    has a discard pile, i.e. every variant but Sabra).  ``rounds_limit`` and
    ``target``: when the match ends (see :class:`tabletop.engine.match.Match`).
    """

    start_seat: int = 0
    end_on_discard: bool | None = None
    rounds_limit: int | None = None
    target: int | None = None
    earlier_rounds: tuple[RoundResult, ...] = ()
    """Rounds of this match scored before (``tabletop run --resume``): the game goes on
    with the next round, its dealer and the totals so far."""


def _key(item: Item) -> str:
    """Jokers count as jokers whatever they stand for; the camera sees a bare JK."""
    return str(JOKER) if isinstance(item, Joker) else str(item)


def _bag(items: Iterable[Item]) -> Bag:
    return Counter(_key(item) for item in items)


def _flat(melds: Iterable[Sequence[Item]]) -> list[Item]:
    return [item for meld in melds for item in meld]


def _meld_key(meld: Sequence[Item]) -> tuple[str, ...]:
    return tuple(sorted(_key(item) for item in meld))


def _table_words(melds: Sequence[Meld]) -> str:
    """A table as a person reads it: how many melds, and which."""
    if not melds:
        return "an empty table"
    count = f"{len(melds)} meld{'s' * (len(melds) != 1)}"
    return f"{count}: {', '.join(format_items(m) for m in melds)}"


def _in_order_of(before: Sequence[Meld], after: Sequence[Meld]) -> tuple[Meld, ...]:
    """``after``'s melds in the order of ``before``'s, so that a table's melds keep their
    places as it changes: each meld where the one stood that it is (the same items), else
    where the one stood that it shares the most items with (grown, a joker exchanged,
    split); new ones after, as the camera lists them."""
    left = list(after)
    places: dict[int, Meld] = {}
    for place, old in enumerate(before):
        same = next((m for m in left if _meld_key(m) == _meld_key(old)), None)
        if same is not None:
            places[place] = same
            left.remove(same)
    for place, old in enumerate(before):
        if place in places or not left:
            continue
        shares = [sum((_bag(old) & _bag(m)).values()) for m in left]
        most = max(shares)
        if most >= 2:
            places[place] = left.pop(shares.index(most))
    return (*(places[k] for k in sorted(places)), *left)


def _within(part: Bag, whole: Bag) -> bool:
    return not (part - whole)


def _take(items: Sequence[Item], bag: Bag) -> list[Item]:
    """The items of ``items`` (in their order) that ``bag`` holds, consuming the bag."""
    taken = []
    for item in items:
        if bag[_key(item)] > 0:
            bag[_key(item)] -= 1
            taken.append(item)
    return taken


def _reads_as(a: Sequence[Item], b: Sequence[Item]) -> bool:
    """The same meld in the same order (jokers as the camera sees them)."""
    return tuple(map(_key, a)) == tuple(map(_key, b))


def _copy_in(meld: Sequence[Item], item: Item, index: int | None = None) -> int | None:
    """Where a copy of ``item`` lies in ``meld``: at ``index`` if it lies there, else the
    first copy; None where there is none."""
    if index is not None and 0 <= index < len(meld) and _key(meld[index]) == _key(item):
        return index
    return next((i for i, x in enumerate(meld) if _key(x) == _key(item)), None)


def _first_copy(melds: Sequence[Meld], item: Item) -> tuple[int, int] | None:
    for m, meld in enumerate(melds):
        i = _copy_in(meld, item)
        if i is not None:
            return m, i
    return None


def _with(melds: tuple[Meld, ...], place: tuple[int, int], item: Item) -> tuple[Meld, ...]:
    m, i = place
    meld = melds[m]
    return (*melds[:m], (*meld[:i], item, *meld[i + 1 :]), *melds[m + 1 :])


def _table_with(
    shared: tuple[Meld, ...],
    seats: dict[int, tuple[Meld, ...]],
    place: tuple[int, int],
    item: Item,
) -> tuple[tuple[Meld, ...], dict[int, tuple[Meld, ...]]]:
    """(shared, seat melds) with ``item`` at ``place`` of the table they make (the shared
    melds, then each seat's in seat order, as :meth:`_State.table` lists them)."""
    m, i = place
    if m < len(shared):
        return _with(shared, place, item), seats
    m -= len(shared)
    for seat in sorted(seats):
        if m < len(seats[seat]):
            return shared, {**seats, seat: _with(seats[seat], (m, i), item)}
        m -= len(seats[seat])
    raise IndexError(f"no meld {place[0]!r} on a table of {format_items(_flat(shared))!r}")


def _whole_table(shared: tuple[Meld, ...], seats: dict[int, tuple[Meld, ...]]
                 ) -> tuple[Meld, ...]:
    """The table (shared, seat melds) make: the shared melds, then each seat's in seat
    order, the order :func:`_table_with` counts places in."""
    return shared + tuple(m for s in sorted(seats) for m in seats[s])


def _seat_area(shared: tuple[Meld, ...], seats: dict[int, tuple[Meld, ...]], m: int) -> int | None:
    """The seat in whose area table meld ``m`` lies (None: the shared area)."""
    m -= len(shared)
    if m < 0:
        return None
    for seat in sorted(seats):
        if m < len(seats[seat]):
            return seat
        m -= len(seats[seat])
    return None


@dataclass(frozen=True)
class ItemFix:
    """The item the game knows as ``before`` is really ``after``: a person said so.

    ``meld`` and ``index``: the meld holding it as the game knows it and its place
    there, to find the right copy where the game holds two (Sabra has two of each
    tile).  Without them the first copy found is taken."""

    before: Item
    after: Item
    meld: tuple[Item, ...] | None = None
    index: int | None = None

    def __post_init__(self) -> None:
        if self.meld is None:
            if self.index is not None:
                raise GameError(f"index {self.index!r} of which meld? (correcting {self.before})")
            return
        if self.index is None:
            holds = _copy_in(self.meld, self.before) is not None
        else:
            holds = 0 <= self.index < len(self.meld) and _reads_as(
                (self.meld[self.index],), (self.before,)
            )
        if not holds:
            where = "" if self.index is None else f" at {self.index}"
            raise GameError(f"{format_items(self.meld)!r} does not hold {self.before}{where}")


@dataclass(frozen=True)
class _Fixed:
    """Where one correction took hold, for its event."""

    seat: int | None
    meld: Meld | None
    """The meld holding the item now; None for an item of a hand."""


def same_table(a: Sequence[Sequence[Item]], b: Sequence[Sequence[Item]]) -> bool:
    """Same melds, in any order; a meld's order on the table counts (it is how it reads)."""
    return sorted(tuple(map(_key, m)) for m in a) == sorted(tuple(map(_key, m)) for m in b)


@dataclass
class _State:
    """Everything undo must put back beside what the game's events told (whose turn,
    the phase: the record's); deep-copied before each change."""

    shared: tuple[Meld, ...] = ()
    seat_melds: dict[int, tuple[Meld, ...]] = field(default_factory=dict)
    discards: tuple[Item, ...] = ()
    start_shared: tuple[Meld, ...] = ()
    start_seat_melds: dict[int, tuple[Meld, ...]] = field(default_factory=dict)
    taken: list[Item] = field(default_factory=list)
    """Taken from the discards this turn, deepest first."""
    discarded: Item | None = None
    pile_started: bool = False
    """Something has lain on the discard pile this round (before that, where the variant
    turns up a card, the first one seen there is that upcard)."""
    laid_by: dict[int, list[Item]] = field(default_factory=dict)
    lay_turns: dict[int, list[int]] = field(default_factory=dict)
    progress: tuple[int, bool] | None = None
    waiting_for: tuple[Meld, ...] | None = None
    """A table the players must put back (after an invalid turn, or cleared for a new round)."""
    penalised: int | None = None
    """The seat whose invalid turn the table waits to be put back from, if it is that."""
    left_standing: tuple[tuple[Meld, ...], dict[int, tuple[Meld, ...]]] | None = None
    """The table as that invalid turn left it (shared melds, each seat's): what the game
    takes where play goes on without putting it back."""
    going_out: bool = False
    last_turn: tuple[int, int, bool, Item | None] | None = None
    """(seat, turn, valid, discard) of the turn that ended last."""
    all_at_once: bool = False
    """Whether the seat that went out laid its whole hand in one turn."""
    last_discard: Item | None = None
    hands: dict[int, tuple[Item, ...]] = field(default_factory=dict)
    typed: set[int] = field(default_factory=set)
    """Seats whose rack was typed on the panel this round: their area is not read."""

    def table(self) -> tuple[Meld, ...]:
        return _whole_table(self.shared, self.seat_melds)

    def turn_start_table(self) -> tuple[Meld, ...]:
        return _whole_table(self.start_shared, self.start_seat_melds)


class Game:
    """One match at a live table: snapshots and button presses in, events out."""

    def __init__(
        self,
        variant: Variant,
        players: Sequence[str],
        bus: EventBus,
        *,
        options: GameOptions | None = None,
    ) -> None:
        self.variant = variant
        self.players = tuple(players)
        self.options = options or GameOptions()
        if not 0 <= self.options.start_seat < len(self.players):
            raise GameError(f"start seat {self.options.start_seat!r} is not a seat of {players!r}")
        self.match = Match(
            variant,
            self.players,
            rounds_limit=self.options.rounds_limit,
            target=self.options.target,
            dealer=self.options.start_seat,
        )
        self.events = EventStream(bus)
        end = self.options.end_on_discard
        self.end_on_discard = variant.has_discard_pile if end is None else end
        for earlier in self.options.earlier_rounds:
            self.match.record(earlier)
        self.state = _State()
        self._history: list[tuple[_State, int, GameFacts]] = []
        """Before each change: the state, the rounds scored and what the events had told."""
        self._started = False
        self._t = 0.0
        self._last_bad: tuple[Any, ...] | None = None
        self._last_doubts: tuple[str, ...] = ()
        self._put_back_said: tuple[Any, ...] | None = None
        self._boxes: dict[tuple[str, ...], list[Box]] = {}
        """Where each meld of the last snapshot taken lies in the camera's frame (pixels),
        by its items as the camera reads them; not undoable state, only what is seen."""

    # --- public state --------------------------------------------------------
    @property
    def table(self) -> tuple[Meld, ...]:
        return self.state.table()

    @property
    def seat(self) -> int:
        """Whose turn it is; in the counting phase and at the end, whose turn ended the
        round; before the first turn, the first dealer's."""
        last = self.record.facts.last_turn
        return self.match.current_dealer if last is None or last.seat is None else last.seat

    @property
    def turn_number(self) -> int:
        """The number of the turn on (or that ended the round) in its round, from 1."""
        last = self.record.facts.last_turn
        return 1 if last is None or last.turn is None else last.turn

    @property
    def round_number(self) -> int:
        """The round being played (or just ended), counting earlier rounds, from 1."""
        last = self.record.facts.last_turn
        if last is None or last.round is None:
            return self.match.rounds_played + 1
        return last.round

    @property
    def phase(self) -> Phase:
        """play, counting (hands laid open, waiting for score) or over."""
        return self.record.facts.phase

    @property
    def out_seat(self) -> int | None:
        """The seat that went out, in the counting phase (None: no one, or the pool was
        used up)."""
        return self.record.facts.out_seat

    @property
    def timer_paused(self) -> bool:
        """Whether the turn's timer is paused (a pause is no play: undo does not keep it)."""
        return self.record.facts.paused

    @property
    def record(self) -> GameRecord:
        """What the game's events have told so far, as the panel folds them too."""
        return self.events.record

    # --- inputs ------------------------------------------------------------------
    def start(self, t: float = 0.0) -> None:
        if not self._started:
            self._started = True
            self._t = t
            self._turn_started(t, self.seat, self.round_number, 1)

    def update(self, snapshot: TableSnapshot) -> None:
        """Take a committed snapshot: every change to the table becomes events."""
        t = snapshot.t
        self.start(t)
        self._t = t
        state = self.state
        if self.phase == "over":
            return
        if self.phase == "counting":  # hands laid open are no melds: no doubts of them
            self._update_hands(snapshot)
            return
        self._warn_doubts(snapshot)
        # where melds lie in the middle, what a seat's area shows during play is a rack seen
        # from above: the player's own, not the table's
        before_players = self.variant.melds_lie_before_players
        seat_melds = {
            s: tuple(tuple(m) for m in snapshot.seats.get(s, ())) if before_players else ()
            for s in range(len(self.players))
        }
        shared = tuple(tuple(m) for m in snapshot.melds)
        table = _whole_table(shared, seat_melds)
        # items seen outside every meld count too: a card lying in a tile game, or a
        # third copy of a tile, is a misreading wherever it lies
        seen_elsewhere = {"unplaced": tuple(snapshot.unplaced)} if snapshot.unplaced else {}
        if not self._material_ok(t, table, seen_elsewhere, tuple(snapshot.discards)):
            return
        pile, taken, discarded = self._pile_change(tuple(snapshot.discards),
                                                   snapshot.discard_laid_anew)
        if state.waiting_for is not None:
            if same_table(table, state.waiting_for):
                self._push()
                state.waiting_for = state.penalised = state.left_standing = None
                self._put_back_said = None
            elif not (discarded and self._play_went_on(t)):
                self._guide_put_back(t, table)
                return
        if (same_table(table, state.table()) and not taken and not discarded
                and list(map(_key, pile)) == list(map(_key, state.discards))):
            return
        self._push()
        state.pile_started = state.pile_started or bool(pile)
        seat = self.seat
        if taken:
            state.taken.extend(taken)
            self.events.emit(ev.DiscardTaken(t=t, seat=seat, items=items_json(taken)))
        if not same_table(table, state.table()):
            self._table_events(t, seat, state.table(), table)
            self._boxes = self._where(snapshot, shared, seat_melds)
            state.shared = _in_order_of(state.shared, shared)
            state.seat_melds = {s: _in_order_of(state.seat_melds.get(s, ()), melds)
                                for s, melds in seat_melds.items()}
            self._table_event(t, seat)
        state.discards = pile
        self._progress(t)
        if discarded:
            state.discarded = discarded[-1]
            for item in discarded:
                self.events.emit(ev.ItemDiscarded(t=t, seat=seat, item=str(item)))
            if self.end_on_discard:
                self._end_turn(t)

    def end_turn(self, seat: int | None = None, t: float | None = None) -> None:
        """The board's or the panel's end-turn button (``seat``: who pressed, if known)."""
        t = self._now(t)
        self.start(t)
        state = self.state
        if self.phase != "play" or state.waiting_for is not None:
            why = "the table must be put back first" if state.waiting_for else "no turn is on"
            self._warn(t, self.seat, "end_turn_ignored", f"end of turn ignored: {why}", ())
            return
        if seat is not None and seat != self.seat:
            self._warn(
                t,
                seat,
                "not_your_turn",
                f"it is {self.players[self.seat]}'s turn, not {self.players[seat]}'s",
                (),
            )
            return
        self._push()
        self._end_turn(t)

    def out(self, seat: int, t: float | None = None) -> None:
        """``seat`` went out: pressed during his own turn, or right after it ended."""
        t = self._now(t)
        self.start(t)
        state = self.state
        if not 0 <= seat < len(self.players):
            raise GameError(f"seat {seat!r} is not a seat of {self.players!r}")
        if self.phase == "play" and state.waiting_for is not None:
            self._warn(
                t, seat, "out_refused",
                f"{self.players[seat]} cannot go out yet: the table must be put back as it was"
                f" first ({_table_words(state.waiting_for)})", (),
            )
            return
        if self.phase == "play" and seat == self.seat:
            self._push()
            state.going_out = True
            self._end_turn(t)
            return
        last = state.last_turn
        untouched = (
            same_table(state.table(), state.turn_start_table())
            and not state.taken
            and state.discarded is None
        )
        if self.phase == "play" and last is not None and last[0] == seat and untouched:
            if not last[2]:
                self._warn(t, seat, "out_refused",
                           f"{self.players[seat]}'s last turn was invalid: an invalid turn"
                           " cannot end the round", ())
                return
            self._push()
            self._player_out(t, seat, last[1], last[3])
            return
        self._warn(t, seat, "out_refused", self._why_not_out(seat), ())

    def camera_event(self, t: float, message: str) -> None:
        """The camera's view changed in a way that is no move (a reconnected stream, a
        covered lens: :mod:`tabletop.live.permanence`): a warning, and nothing else changes."""
        self.start(t)
        self._warn(t, self.seat, CAMERA_EVENT_CODE, message, ())

    def _why_not_out(self, seat: int) -> str:
        """Why ``seat`` cannot go out now, as the player would put it."""
        state, name = self.state, self.players[seat]
        if self.phase == "counting":
            return f"{name} cannot go out now: the round has ended, the racks are being counted"
        if self.phase == "over":
            return f"{name} cannot go out now: the match is over"
        on_turn = self.players[self.seat]
        last = state.last_turn
        if last is not None and last[0] == seat:
            return (f"{name} cannot go out now: {on_turn} has played since {name}'s turn"
                    " ended")
        return f"{name} cannot go out now: it is {on_turn}'s turn"

    def _put_back(self, table: Sequence[Meld]) -> tuple[tuple[Any, ...], list[str], list[str]]:
        """(what differs from the table waited for, as said once; the items to take off,
        the items to lay back)."""
        assert self.state.waiting_for is not None
        seen, wanted = _bag(_flat(table)), _bag(_flat(self.state.waiting_for))
        extra = sorted((seen - wanted).elements())
        missing = sorted((wanted - seen).elements())
        return (tuple(extra), tuple(missing), tuple(sorted(map(format_items, table)))), \
            extra, missing

    def _play_went_on(self, t: float) -> bool:
        """A new discard while the table waits to be put back after an invalid turn: the
        next player played on with the table as it lay, so the game takes that table (the
        invalid turn's, as it ended) as the current turn's start and says so, rather than
        wait for a table the players have let stand.  False where the table waits for
        another reason (cleared for a new round)."""
        state = self.state
        if state.penalised is None or state.left_standing is None:
            return False
        self._push()
        shared, seat_melds = state.left_standing
        state.shared, state.seat_melds = shared, dict(seat_melds)
        state.start_shared, state.start_seat_melds = shared, dict(seat_melds)
        state.waiting_for = state.penalised = state.left_standing = None
        self._put_back_said = None
        self._warn(t, self.seat, "table_left_standing",
                   "play went on without the table put back: it is taken as it lay after the"
                   f" invalid turn ({_table_words(state.table())})", ())
        self._table_event(t, self.seat)
        return True

    def _guide_put_back(self, t: float, table: Sequence[Meld]) -> None:
        """While the table must be put back (after an invalid turn), say what still differs,
        each time the camera sees it differ otherwise."""
        state = self.state
        assert state.waiting_for is not None
        if state.penalised is None:
            return  # a table cleared for the next round: nothing to put back
        said, extra, missing = self._put_back(table)
        if said == self._put_back_said:
            return
        self._put_back_said = said
        if extra or missing:
            steps = [f"take {' '.join(extra)} off the table" if extra else "",
                     f"lay {' '.join(missing)} back" if missing else ""]
            todo = " and ".join(step for step in steps if step)
        else:
            todo = "lay the melds as they were"
        self._warn(t, self.seat, "put_table_back",
                   f"the table is not back as it was yet: {todo}"
                   f" ({_table_words(state.waiting_for)})",
                   [parse_item(token) for token in extra],
                   missing=missing, table_before=melds_json(state.waiting_for))

    def exhausted(self, t: float | None = None) -> None:
        """The stock or pool is used up and no one can go on: the round ends unwon."""
        t = self._now(t)
        self.start(t)
        if self.phase != "play":
            return
        self._push()
        self.events.emit(ev.PoolExhausted(t=t, seat=None))

    def score(self, t: float | None = None) -> None:
        """The hands lie open: score the round, carry the match on."""
        t = self._now(t)
        state = self.state
        if self.phase != "counting":
            self._warn(t, None, "score_refused", "the round has not ended: no one went out", ())
            return
        self._push()
        round_input = self.round_input()
        for seat, name in enumerate(self.players):
            if seat != self.out_seat and not state.hands.get(seat):
                self._warn(
                    t, seat, "hand_not_seen", f"no items seen in {name}'s area: counted as 0", ()
                )
        result = score_round(round_input)
        self.match.record(result)
        number = self.round_number
        self.events.emit(ev.RoundScored(
            t=t, seat=None, scores=dict(result.scores), round=number,
            winner=result.winner, totals=self.match.totals,
        ))
        for problem in result.problems:
            self._warn(t, None, "scoring", problem, ())
        if self.match.over:
            match = self.match
            self.events.emit(ev.MatchOver(t=t, seat=None, winner=match.winner, totals=match.totals))
            return
        table = state.table()
        self.state = _State()
        self.state.waiting_for = () if table else None
        self._turn_started(t, self.match.current_dealer, number + 1, 1)

    def undo(self, t: float | None = None) -> None:
        """Take back the last committed change or button press.  The ``undo`` event
        carries the table, the phase and the rounds scored after it; back in the
        counting phase, each hand held is shown again (``hand_shown``)."""
        t = self._now(t)
        if not self._history:
            self._warn(t, None, "undo_refused", "nothing to undo", ())
            return
        state, rounds, told = self._history.pop()
        while self.match.rounds_played > rounds:
            self.match.undo()
        self.state = state
        last = told.last_turn
        seat = self.match.current_dealer if last is None or last.seat is None else last.seat
        self.events.emit(ev.Undo(
            t=t, seat=seat, melds=melds_json(state.table()), phase=told.phase,
            rounds=self.match.rounds_played,
        ))
        if told.phase == "counting":
            # whoever follows the events learns the hands of the round taken back to
            for seat in sorted(state.hands):
                self._hand_shown(t, seat)

    def pause_timer(self, t: float | None = None, *, who: str | None = None) -> None:
        """Stop the turn timer (a phone call, a question of the rules) until
        :meth:`resume_timer` or the end of the turn."""
        t = self._now(t)
        self.start(t)
        if self.phase != "play":
            self._warn(t, None, "timer_refused", "no turn is on: there is no timer to pause", ())
            return
        if self.timer_paused:
            self._warn(t, self.seat, "timer_refused", "the timer is already paused", ())
            return
        self.events.emit(ev.TimerPaused(t=t, seat=self.seat, who=who))

    def resume_timer(self, t: float | None = None, *, who: str | None = None) -> None:
        """Run the paused turn timer on from where it stopped."""
        t = self._now(t)
        if not self.timer_paused:
            self._warn(t, self.seat, "timer_refused", "the timer is not paused", ())
            return
        self.events.emit(ev.TimerResumed(t=t, seat=self.seat, who=who))

    def set_hand(
        self, seat: int, items: Sequence[Item], t: float | None = None, *, who: str | None = None
    ) -> None:
        """``seat``'s rack as a person typed it, where the camera cannot see it: once the
        round has ended it stands for the seat's hand until the next round, whatever
        the camera sees in that seat's area.  Emits ``hand_shown`` with ``typed: true``.
        Refused (a warning) before the round ends, for the player who went out, and for
        items no real table holds beside the rest (a card in a tile game, a third copy)."""
        t = self._now(t)
        state = self.state
        if not 0 <= seat < len(self.players):
            raise GameError(f"seat {seat!r} is not a seat of {self.players!r}")
        name = self.players[seat]
        if self.phase != "counting":
            self._warn(
                t, seat, "hand_refused", "a rack is counted once someone went out, not now", ()
            )
            return
        if seat == self.out_seat:
            self._warn(t, seat, "hand_refused", f"{name} went out: there is no rack to count", ())
            return
        hand = tuple(items)
        hands = {self.players[s]: h for s, h in {**state.hands, seat: hand}.items()}
        problems = self._material_problems(state.table(), hands, state.discards)
        for problem in problems:
            self._warn(
                t, seat, problem.code, f"{problem.message}: {name}'s rack is not taken",
                problem.items,
            )
        if problems:
            return
        self._push()
        state.hands[seat] = hand
        state.typed.add(seat)
        self._hand_shown(t, seat, who)

    def correct_item(
        self,
        before: Item,
        after: Item,
        t: float | None = None,
        *,
        meld: Sequence[Item] | None = None,
        index: int | None = None,
        who: str | None = None,
    ) -> bool:
        """A person says the item the game knows as ``before`` is ``after`` (see
        :meth:`correct_items`); whether the game held it."""
        fix = ItemFix(before, after, None if meld is None else tuple(meld), index)
        return self.correct_items([fix], t, who=who) > 0

    def correct_items(
        self, fixes: Sequence[ItemFix], t: float | None = None, *, who: str | None = None
    ) -> int:
        """Misread items corrected, in order: each token is swapped wherever the game
        remembers that item (the table, its copy from the turn's start, the table it
        waits for, the items each seat laid, the hands laid open), so a correction to
        an item laid in an earlier turn is no play of this one.  No check, no penalty,
        no turn change; one undo step; the opening's progress is recomputed.  Emits
        ``reading_corrected`` for each item held, then ``table`` (and ``hand_shown`` for
        a hand).  Returns how many items the game held (a reading it never took, such as
        a third copy of a tile it refused, is not in its memory: that snapshot is then
        simply taken as any other)."""
        t = self._now(t)
        self.start(t)
        state = self.state
        # a joker declared to stand for an item (JK -> JK=R11) is a change too: the meld
        # is judged as the players mean it
        fixes = [fix for fix in fixes if fix.before != fix.after]
        if not fixes or self.phase == "over":
            return 0
        self._push()
        table_before, hands_before = state.table(), dict(state.hands)
        done = [(fix, fixed) for fix in fixes if (fixed := self._correct_one(fix)) is not None]
        if not done:
            self._history.pop()  # nothing changed: nothing to undo
            return 0
        for old, new in zip(table_before, state.table(), strict=False):
            boxes = self._boxes.get(tuple(map(_key, old)))
            if old != new and boxes:  # the corrected meld lies where it lay
                self._boxes.setdefault(tuple(map(_key, new)), []).append(boxes.pop(0))
        for fix, fixed in done:
            self.events.emit(ev.ReadingCorrected(
                t=t, seat=fixed.seat, item=str(fix.after), was=str(fix.before),
                meld=None if fixed.meld is None else format_items(fixed.meld), who=who,
                value=None if fixed.meld is None else self._meld_value(fixed.meld),
            ))
        if state.table() != table_before:
            self._table_event(t, self.seat)
        for seat, hand in sorted(state.hands.items()):
            if hand != hands_before.get(seat):
                self._hand_shown(t, seat)
        if self.phase == "play" and state.waiting_for is None:
            self._progress(t)
        return len(done)

    # --- the round as the engine scores it ---------------------------------------------
    def round_input(self) -> RoundInput:
        """The finished round from what the game saw: each final meld shared between
        the players who laid its items (in seat order where two laid the same item),
        the hands laid open, who went out."""
        state = self.state
        remaining = {s: _bag(items) for s, items in state.laid_by.items()}
        contributions: dict[int, list[MeldContribution]] = {s: [] for s in range(len(self.players))}
        for meld in state.table():
            for seat in range(len(self.players)):
                own = _take(meld, remaining.get(seat, Counter()))
                if own:
                    contributions[seat].append(MeldContribution(meld, tuple(own)))
        out_seat = self.out_seat
        players = tuple(
            PlayerRound(
                name,
                melds=tuple(contributions[seat]),
                hand=state.hands.get(seat, ()),
                out=seat == out_seat,
                all_at_once=seat == out_seat and state.all_at_once,
                last_discard=state.last_discard if seat == out_seat else None,
            )
            for seat, name in enumerate(self.players)
        )
        exhausted = self.phase == "counting" and out_seat is None
        return RoundInput(self.variant, players, pool_exhausted=exhausted)

    # --- internals ------------------------------------------------------------------
    def _now(self, t: float | None) -> float:
        if t is not None:
            self._t = t
        return self._t

    def _push(self) -> None:
        self._history.append(
            (copy.deepcopy(self.state), self.match.rounds_played, self.record.facts))

    @staticmethod
    def _where(snapshot: TableSnapshot, shared: tuple[Meld, ...],
               seat_melds: dict[int, tuple[Meld, ...]]) -> dict[tuple[str, ...], list[Box]]:
        """The frame boxes of the melds the game takes from ``snapshot``, by their items."""
        where: dict[tuple[str, ...], list[Box]] = {}
        pairs = list(zip(shared, snapshot.meld_boxes, strict=False))
        for seat, melds in seat_melds.items():
            pairs.extend(zip(melds, snapshot.seat_boxes.get(seat, ()), strict=False))
        for meld, box in pairs:
            where.setdefault(tuple(map(_key, meld)), []).append(box)
        return where

    def _table_event(self, t: float, seat: int | None, restored: bool | None = None) -> None:
        """The ``table`` event of the game's table now; with ``boxes`` (one per meld, in
        the camera frame's pixels, null where it is not in view as the game lists it)
        where the camera gave any, for the panel's Table view to frame the melds."""
        table = self.state.table()
        boxes: tuple[tuple[float, ...] | None, ...] | None = None
        if self._boxes:
            left = {key: list(where) for key, where in self._boxes.items()}
            boxes = tuple(tuple(found.pop(0)) if (found := left.get(tuple(map(_key, meld))))
                          else None for meld in table)
        self.events.emit(ev.Table(t=t, seat=seat, melds=melds_json(table), restored=restored,
                                  boxes=boxes))

    def _warn(
        self,
        t: float,
        seat: int | None,
        code: str,
        message: str,
        items: Sequence[Item],
        **more: Any,
    ) -> None:
        """A warning with ``code``; ``more``: the warning's own fields (see
        :class:`tabletop.engine.events.GameWarning`)."""
        self.events.emit(
            ev.GameWarning(t=t, seat=seat, message=message, items=items_json(items), code=code,
                           **more)
        )

    def _warn_doubts(self, snapshot: TableSnapshot) -> None:
        """A meld the camera could read as no legal meld, and only doubtfully as what it
        is committed as, is a warning with its likeliest legal readings: once per
        reading, not once per snapshot showing it.  (Too many copies of a label are
        the material check's warning.)"""
        doubts = tuple(p for p in snapshot.reading_problems if p.code == "illegal_meld")
        key = tuple(p.message for p in doubts)
        if key == self._last_doubts:
            return
        self._last_doubts = key
        for problem in doubts:
            self._warn(snapshot.t, self.seat, "unreadable_meld", problem.message,
                       [parse_item(label) for label in problem.items],
                       alternatives=tuple((meld, round(odds, 1))
                                          for meld, odds in problem.alternatives))

    def _turn_started(self, t: float, seat: int, round_number: int, turn_number: int) -> None:
        """``seat``'s turn begins: the record learns whose turn, which round and which turn
        it is (and that the timer runs) from this event."""
        state = self.state
        state.start_shared, state.start_seat_melds = state.shared, dict(state.seat_melds)
        state.taken, state.discarded, state.progress, state.going_out = [], None, None, False
        self.events.emit(ev.TurnStarted(t=t, seat=seat, round=round_number, turn=turn_number))

    def _material_ok(
        self,
        t: float,
        table: tuple[Meld, ...],
        hands: dict[str, tuple[Item, ...]],
        discards: tuple[Item, ...],
    ) -> bool:
        problems = self._material_problems(table, hands, discards)
        if not problems:
            self._last_bad = None
            return True
        key = tuple(p.message for p in problems)
        if key != self._last_bad:
            # one warning per impossible reading, not one per frame that shows it
            self._last_bad = key
            for problem in problems:
                self._warn(
                    t,
                    self.seat,
                    problem.code,
                    f"{problem.message}: the reading is not taken",
                    problem.items,
                )
        return False

    def _material_problems(
        self,
        table: tuple[Meld, ...],
        hands: dict[str, tuple[Item, ...]],
        discards: tuple[Item, ...],
    ) -> list[Problem]:
        return [
            p
            for p in TableState(self.variant, table, hands, discards).problems()
            if p.code in MATERIAL_PROBLEMS
        ]

    def _pile_change(self, seen: tuple[Item, ...], laid_anew: bool = False
                     ) -> tuple[tuple[Item, ...], list[Item], list[Item]]:
        """:meth:`_discard_change` of the game's pile and ``seen``, under the variant's
        facts of the pile; ``laid_anew``: the camera saw the top card lie elsewhere,
        reading as before (:attr:`TableSnapshot.discard_laid_anew`)."""
        rules, state = self.variant.table_rules, self.state
        pile, taken, discarded = self._discard_change(state.discards, seen)
        if laid_anew and not taken and not discarded and pile and seen and (
                _key(seen[-1]) == _key(pile[-1])):
            top = pile[-1]
            if sum(_key(i) == _key(top) for i in pile) < self.variant.copies_of_each:
                # a discard laid squarely on its twin of the other deck
                pile, discarded = (*pile, seen[-1]), [seen[-1]]
            else:  # both copies on the pile: the top one taken, its twin under it showing
                pile, taken = pile[:-1], [top]
        if taken and not pile and rules.deeper_discard == "never" and (
                len(taken) > 1 or not same_table(state.table(), state.turn_start_table())):
            # only the top discard may be taken, and only before the player lays ([rommee]
            # "aufnimmt (kauft). Danach darf ein Spieler Karten melden"): two or more
            # cards gone at once, or the pile gone after the player laid this turn, were
            # covered or turned over: [rommee] the last card laid "verdeckt auf den
            # Abwurfstoß", [american] "wird der Talon ... umgedreht und mit diesen Karten
            # weitergespielt"
            return (), [], []
        if len(taken) > 1 and rules.deeper_discard == "never":
            # two or more cards cannot leave at once
            top = pile[-1]
            if sum(_key(i) == _key(top) for i in state.discards) < self.variant.copies_of_each:
                # an older card's twin of the other deck discarded on the pile's top
                return (*state.discards, top), [], [top]
        if discarded and not state.pile_started and rules.upcard:
            discarded = discarded[1:]  # the card the round starts the pile with
        return pile, taken, discarded

    @staticmethod
    def _discard_change(
        pile: tuple[Item, ...], seen: tuple[Item, ...]
    ) -> tuple[tuple[Item, ...], list[Item], list[Item]]:
        """(the pile now, deepest first; taken, deepest first; newly discarded) from the
        pile as the game knows it and the discards the camera sees (oldest first).

        A discard laid on the pile hides what lies under it: in a squared pile
        ([rommee] "Abwurfstoß", [american] "nur die oberste Karte sichtbar") the last
        discard covers the one before.  So the pile keeps every card laid on it, seen or
        not, and an item leaves it only when the pile shows an older card on top and
        nothing new: taking the top discard uncovers the one under it, taking from deep
        in a fanned pile takes every card above.  Items seen that the pile lacks are
        discards, laid on top of it; what they hide stays in the pile.
        """
        unmatched = Counter(map(_key, seen))
        top_seen = -1  # the highest card of the pile in sight
        for index in range(len(pile) - 1, -1, -1):
            key = _key(pile[index])
            if unmatched[key] > 0:
                unmatched[key] -= 1
                top_seen = max(top_seen, index)
        discarded = []
        for item in seen:
            if unmatched[_key(item)] > 0:
                unmatched[_key(item)] -= 1
                discarded.append(item)
        if discarded:
            return pile + tuple(discarded), [], discarded
        return pile[:top_seen + 1], list(pile[top_seen + 1:]), []

    def _table_events(
        self, t: float, seat: int, before: Sequence[Meld], after: Sequence[Meld]
    ) -> None:
        old = list(before)
        new: list[Meld] = []
        for meld in after:
            match = next((o for o in old if _meld_key(o) == _meld_key(meld)), None)
            if match is None:
                new.append(meld)
            else:
                old.remove(match)
        fresh = _bag(_flat(after)) - _bag(_flat(before))
        for o in list(old):  # melds extended ("anlegen")
            for m in new:
                added = _bag(m) - _bag(o)
                if _within(_bag(o), _bag(m)) and _within(added, fresh):
                    items = _take(m, Counter(added))
                    fresh -= added
                    self.events.emit(ev.ItemAdded(
                        t=t, seat=seat, meld=format_items(m), items=items_json(items)))
                    old.remove(o)
                    new.remove(m)
                    break
        freed = 0
        for o in list(old):  # a joker replaced by the item it stood for
            if not any(i.is_joker for i in o):
                continue
            for m in new:
                gone, came = _bag(o) - _bag(m), _bag(m) - _bag(o)
                only_jokers = set(gone) == {str(JOKER)}
                if only_jokers and came and str(JOKER) not in came and _within(came, fresh):
                    fresh -= came
                    freed += gone[str(JOKER)]
                    items = _take(m, Counter(came))
                    self.events.emit(ev.JokerExchanged(
                        t=t, seat=seat, meld=format_items(m), items=items_json(items)))
                    old.remove(o)
                    new.remove(m)
                    break
        fresh[str(JOKER)] += freed
        for m in list(new):  # melds laid from the hand (and freed jokers)
            if _within(_bag(m), fresh):
                fresh -= _bag(m)
                self.events.emit(ev.MeldLaid(t=t, seat=seat, meld=format_items(m)))
                new.remove(m)
        if old or new:
            self.events.emit(ev.TableRearranged(
                t=t, seat=seat, before=melds_json(old), after=melds_json(new)))

    def _meld_value(self, meld: Meld) -> int | None:
        """A meld's points as the variant counts them (its best reading); None if illegal."""
        analysis = self.variant.analyse(meld)
        if not analysis.valid:
            return None
        return max(self.variant.meld_value(reading) for reading in analysis.readings)

    def _correct_one(self, fix: ItemFix) -> _Fixed | None:
        """Swap ``fix``'s token in every memory of the game; None where it holds none."""
        state = self.state
        table = state.table()
        place = self._place_now(table, fix)
        if place is None:
            # not on the table as the game knows it (the start-of-turn tables hold nothing
            # the table does not): laid in an invalid turn whose table still lies, a hand
            # laid open, or a reading the game never took
            return self._correct_left_standing(fix) or self._correct_hand(fix)
        if state.left_standing is not None:
            shared, seats = state.left_standing
            there = self._place_before(_whole_table(shared, seats), table, place, fix)
            if there is not None:
                state.left_standing = _table_with(shared, seats, there, fix.after)
        # where the item lay when the turn began, and in the table waited for
        start = state.turn_start_table()
        at_start = self._place_before(start, table, place, fix)
        if at_start is not None:
            state.start_shared, state.start_seat_melds = _table_with(
                state.start_shared, state.start_seat_melds, at_start, fix.after
            )
        if state.waiting_for is not None:
            waited = self._place_before(state.waiting_for, table, place, fix)
            if waited is not None:
                state.waiting_for = _with(state.waiting_for, waited, fix.after)
        area = _seat_area(state.shared, state.seat_melds, place[0])
        state.shared, state.seat_melds = _table_with(
            state.shared, state.seat_melds, place, fix.after
        )
        meld = state.table()[place[0]]
        # laid in an ended turn (on the table at this one's start, or the round is over):
        # the seat that laid it is credited with the right item
        if at_start is not None or self.phase == "counting":
            return _Fixed(self._credit(fix, area), meld)
        return _Fixed(self.seat, meld)  # laid this turn, by the player on turn

    @staticmethod
    def _place_now(table: Sequence[Meld], fix: ItemFix) -> tuple[int, int] | None:
        """Where ``fix`` names an item of ``table``: in its meld as read, in that order, else
        in a meld of the same items in another order; without a meld, the first copy."""
        if fix.meld is None:
            return _first_copy(table, fix.before)
        for m, meld in enumerate(table):
            if _reads_as(meld, fix.meld):
                i = _copy_in(meld, fix.before, fix.index)
                if i is not None:
                    return m, i
        for m, meld in enumerate(table):
            if _meld_key(meld) == _meld_key(fix.meld):
                i = _copy_in(meld, fix.before)
                if i is not None:
                    return m, i
        return None

    @staticmethod
    def _place_before(
        earlier: Sequence[Meld], table: Sequence[Meld], place: tuple[int, int], fix: ItemFix
    ) -> tuple[int, int] | None:
        """Where the item at ``place`` of ``table`` lay in ``earlier`` (a table from the
        turn's start), or None where it was laid since.  Where two copies make that
        ambiguous the likelier is taken: the same meld unchanged, then the meld it was
        added to, then (unless a copy was laid since: this one) any copy."""
        held, index = table[place[0]], place[1]
        for m, meld in enumerate(earlier):
            if _reads_as(meld, held):
                i = _copy_in(meld, fix.before, index)
                if i is not None:
                    return m, i
        for m, meld in enumerate(earlier):
            i = _copy_in(meld, fix.before)
            if i is not None and _within(_bag(meld), _bag(held)):
                return m, i
        laid_since = _bag(_flat(table)) - _bag(_flat(earlier))
        if laid_since[_key(fix.before)] > 0:
            return None
        return _first_copy(earlier, fix.before)

    def _credit(self, fix: ItemFix, area: int | None) -> int | None:
        """Swap the item in what its layer laid this round; the layer's seat (None if no
        one is known to have laid it).  The seat whose area holds the meld goes first."""
        laid_by = self.state.laid_by
        seats = sorted(laid_by, key=lambda s: (s != area, s))
        for seat in seats:
            items = laid_by[seat]
            i = _copy_in(items, fix.before)
            if i is not None:
                items[i] = fix.after
                return seat
        return None

    def _correct_left_standing(self, fix: ItemFix) -> _Fixed | None:
        """Swap the item in the table an invalid turn left, while the game waits for it
        to be put back: an item laid in that turn (the misread card that made it invalid)
        is on no other table the game keeps, and the table is taken as it lies where play
        goes on (:meth:`_play_went_on`).  Credited to the seat whose turn it was."""
        state = self.state
        if state.left_standing is None:
            return None
        place = self._place_now(_whole_table(*state.left_standing), fix)
        if place is None:
            return None
        state.left_standing = _table_with(*state.left_standing, place, fix.after)
        return _Fixed(state.penalised, _whole_table(*state.left_standing)[place[0]])

    def _correct_hand(self, fix: ItemFix) -> _Fixed | None:
        """Swap the item in a hand laid open at the end of the round: the hand of the seat
        whose area shows ``fix.meld`` (if named), else the first holding it."""
        state = self.state

        def shows(seat: int) -> bool:
            seen = _bag(state.hands[seat]) + _bag(_flat(state.seat_melds.get(seat, ())))
            return fix.meld is None or _within(_bag(fix.meld), seen)

        for seat in sorted(state.hands, key=lambda s: (not shows(s), s)):
            hand = state.hands[seat]
            i = _copy_in(hand, fix.before)
            if i is not None and (fix.meld is None or shows(seat)):
                state.hands[seat] = (*hand[:i], fix.after, *hand[i + 1 :])
                return _Fixed(seat, None)
        return None

    def _laid(self) -> list[Item]:
        state = self.state
        extra = _bag(_flat(state.table())) - _bag(_flat(state.turn_start_table()))
        return _take(_flat(state.table()), extra)

    def _new_melds(self) -> list[Meld]:
        """Melds on the table now made only of items laid this turn (the opening so far)."""
        state = self.state
        before = [_meld_key(m) for m in state.turn_start_table()]
        laid = _bag(self._laid())
        melds = []
        for meld in state.table():
            if _meld_key(meld) in before:
                before.remove(_meld_key(meld))
            elif _within(_bag(meld), laid):
                laid -= _bag(meld)
                melds.append(meld)
        return melds

    def _progress(self, t: float) -> None:
        """The initial meld's value, shown live while a player who has not opened lays."""
        state = self.state
        if self.seat in self.record.facts.opened or self.variant.initial_meld_required <= 0:
            return
        melds = self._new_melds()
        if not melds and state.progress is None:
            return
        check = self.variant.check_initial_meld(melds)
        progress = (check.value, check.meets)
        if progress != state.progress:
            state.progress = progress
            self.events.emit(ev.InitialMeldProgress(
                t=t, seat=self.seat, value=check.value, required=check.required,
                meets=check.meets,
                # the value is enough, so the words must say what else stops the opening
                problems=(check.meld_problems
                          if not check.meets and check.value >= check.required else None),
            ))

    def _end_turn(self, t: float) -> None:
        state = self.state
        seat, turn = self.seat, self.turn_number
        before, after = state.turn_start_table(), state.table()
        laid = self._laid()
        valid = True
        if not same_table(before, after) or state.taken:
            opened = seat in self.record.facts.opened
            check = check_turn(
                self.variant,
                before,
                after,
                laid,
                opened=opened,
                discard_taken=None if self.variant.table_rules.rearrange else tuple(state.taken),
            )
            problems = list(check.problems)
            # [rommee] Hand-Rommé: "bei Hand-Rommé ist das Mindesterfordernis ... aufgehoben"
            if (
                state.going_out
                and not opened
                and self._hand_meld_allowed(seat)
                and self.variant.check_initial_meld(self._new_melds(), hand_meld=True).meets
            ):
                problems = [p for p in problems if p.code != "initial_too_low"]
            for problem in (*problems, *check.hints):
                self._warn(t, seat, problem.code, problem.message, problem.items)
            if problems:
                valid = False
                if check.penalty_draw:
                    name = self.players[seat]
                    back = (f"{format_items(laid)} go back to {name}'s rack" if laid
                            else f"nothing goes back to {name}'s rack")
                    self._warn(
                        t,
                        seat,
                        "penalty",
                        f"{name} takes back {format_items(laid) or 'nothing'},"
                        f" puts the table back and draws {check.penalty_draw} as a penalty:"
                        f" {back}; the table goes back to {_table_words(before)}",
                        laid,
                        penalty_draw=check.penalty_draw,
                        back_to_rack=items_json(laid),
                        table_before=melds_json(before),
                    )
                if not same_table(after, before):
                    state.waiting_for = before
                    state.penalised = seat
                    state.left_standing = (state.shared, dict(state.seat_melds))
                    # the penalty says what to do with the table as it lies now
                    self._put_back_said = self._put_back(after)[0]
                state.shared, state.seat_melds = state.start_shared, dict(state.start_seat_melds)
                self._table_event(t, seat, restored=True)
            elif laid:
                # the seat has opened from now on: the turn_ended below tells the record
                state.laid_by.setdefault(seat, []).extend(laid)
                state.lay_turns.setdefault(seat, []).append(turn)
        self.events.emit(ev.TurnEnded(t=t, seat=seat, valid=valid,
                                       laid=items_json(laid if valid else [])))
        state.last_turn = (seat, turn, valid, state.discarded)
        if state.going_out:
            if valid:
                self._player_out(t, seat, turn, state.discarded)
                return
            self._warn(t, seat, "out_refused", "an invalid turn cannot end the round", ())
        following = (seat + self.variant.deal_direction) % len(self.players)
        self._turn_started(t, following, self.round_number, turn + 1)

    def _hand_meld_allowed(self, seat: int) -> bool:
        others = [s for s, turns in self.state.lay_turns.items() if turns and s != seat]
        return self.variant.hand_meld_waives_minimum and not others

    def _player_out(self, t: float, seat: int, turn: int, discard: Item | None) -> None:
        state = self.state
        turns = state.lay_turns.get(seat, [])
        at_once = turns == [turn]
        if self.variant.hand_meld_waives_minimum:
            at_once = at_once and self._hand_meld_allowed(seat)
        state.all_at_once, state.last_discard = at_once, discard
        self.events.emit(ev.PlayerOut(t=t, seat=seat, all_at_once=at_once))

    def _update_hands(self, snapshot: TableSnapshot) -> None:
        """End of round: what lies in a seat's area beyond its melds is its hand."""
        state = self.state
        t = snapshot.t
        hands: dict[int, tuple[Item, ...]] = {}
        for seat in range(len(self.players)):
            if seat in state.typed:
                hands[seat] = state.hands[seat]
                continue
            seen = _flat(snapshot.seats.get(seat, ()))
            beyond = _bag(seen) - _bag(_flat(state.seat_melds.get(seat, ())))
            hands[seat] = tuple(_take(seen, beyond))
        named = {self.players[s]: h for s, h in hands.items()}
        if not self._material_ok(t, state.table(), named, tuple(snapshot.discards)):
            return
        changed = {s: h for s, h in hands.items() if _bag(h) != _bag(state.hands.get(s, ()))}
        if not changed:
            return
        self._push()
        for seat, hand in changed.items():
            state.hands[seat] = hand
            self._hand_shown(t, seat)

    def _hand_shown(self, t: float, seat: int, who: str | None = None) -> None:
        """The seat's hand as the game holds it now; ``typed`` where a person typed it."""
        hand = self.state.hands[seat]
        self.events.emit(ev.HandShown(
            t=t, seat=seat, items=items_json(hand), value=self.variant.hand_total(hand),
            typed=True if seat in self.state.typed else None, who=who,
        ))
