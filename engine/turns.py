"""Checking one player's turn: the table before and after it, and what he laid.

:func:`check_turn` compares the table before and after the turn with the
items laid from the hand and reports *every* rule broken, so a panel can show
all of them at once.  The table is judged by its end state only: what the
player did in between cannot be seen, so wherever the end state can be
explained by a legal sequence of moves (identical items are interchangeable,
jokers look alike, an ambiguous meld may be read any legal way) the turn is
accepted.

**Tables that may be rearranged.**  Sabra Rummikub and Räuber-Rommé let a
player take the melds on the table apart and build new ones, as long as at the
end of the turn

* every item that lay on the table still lies there, together with at least
  one item from the player's rack ("mindestens ein Spielstein von seinem Blatt
  hinzugefügt"),
* every meld is legal ("alle Zusammenstellungen auf dem Tisch müssen
  regelgerechte Sätze und Folgen sein"),
* a player who had not opened laid his initial meld from the hand alone
  ("ausschließlich aus dem Blatt"), and
* the jokers were treated as the variant allows.

Joker rules, [sabra] = rules/rummikub-sabra-american-international.de.txt:

* Official Sabra (``dutch=False``): "An eine Meldung, die einen Joker enthält,
  können weitere Spielsteine angelegt werden, aber es dürfen weder Spielsteine
  entfernt werden, noch darf die Zusammenstellung neu geordnet werden".  A
  joker leaves its meld only when the player lays "den Spielstein ..., der für
  den auf dem Tisch liegenden Joker steht" in its place; the freed joker must
  be played again in the same turn, where the option ``freed_joker`` says.
* Dutch Sabra (``dutch=True``): melds with jokers may be split, "vorausgesetzt,
  dass der Joker immer für denselben Spielstein steht".
* Räuber-Rommé [raeuber]: "ausliegende Joker [können] dabei neue Verwendungen
  finden ..., ohne zunächst im eigentlichen Sinne ausgetauscht worden zu sein",
  so jokers are recombined as freely as any other card.

**Tables whose melds may only be extended** (Remi, American and International
Rummikub, Rommé, 500 Rum, American Rummy).  Every meld that lay on the table
must still lie there whole, in an after-meld of its own: a run extended at its
ends, a set completed ([remi] "Man kann seine eigenen oder die Meldungen
anderer Spieler verlängern, indem man Steine hinzufügt"; [rum500] "Die vierte
Karte desselben Ranges kann zu einer Dreiergruppe hinzugefügt werden, oder
zusätzliche aufeinanderfolgende Karten derselben Farbe ... an beiden Enden").
A joker keeps its place and what it stands for ([remi] "nicht möglich, den
Joly so umzulegen"; [rum500] "Dies kann anschließend nicht mehr geändert
werden") unless the variant lets the item it stands for take its place
([remi] rules 5-7, [rommee] "Austauschen eines Jokers", [american]); the freed
joker then goes at once into a new meld.  Every other after-meld is new and
made of laid items (and freed jokers, and under American Rummy's Borgen cards
borrowed from one's own long meld).  Before the initial meld nothing is laid
off and no joker taken; in Remi and American Rummikub no discard is taken
either.  Wiener Rummy ("Rommé ohne Auslegen") lays nothing on the table during
play at all.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from engine.items import JOKER, Card, Item, Joker, Natural, Tile, format_items, natural
from engine.melds import MeldKind, Reading, Slot
from engine.variants import (
    AmericanRummikub,
    AmericanRummy,
    InternationalRummikub,
    RaeuberRommee,
    Remi,
    Rum500,
    Sabra,
    Variant,
    WienerRummy,
)

Meld = tuple[Item, ...]
Bag = Counter[Item]
Occurrence = tuple[int, int]
"""A joker on the table after the turn: (index of its meld, k-th joker of that meld)."""

SABRA_PENALTY_DRAW = 3
"""[sabra] "zur Strafe drei Spielsteine aus dem Pool ziehen"."""

_SEARCH_LIMIT = 20000
"""Joker explanations judged at most per turn (Sabra has two jokers, so this is
never reached in a real game; it keeps hostile input from running for ever: past
it the best explanation found so far is reported)."""


class TurnError(ValueError):
    """A turn that cannot be judged as asked: a discard pile where the variant has
    none, Borgen outside American Rummy, ``own_melds`` naming no meld."""


@dataclass(frozen=True)
class TurnProblem:
    """One rule the turn breaks.

    ``code`` is a short machine id: ``item_missing``, ``item_from_nowhere``,
    ``nothing_laid``, ``invalid_meld``, ``initial_too_low``, ``not_from_hand``,
    ``table_changed_before_opening``, ``joker_split``, ``joker_meaning_changed``,
    ``joker_exchange_incomplete``, ``freed_joker_unused``, ``freed_joker_same_meld``,
    ``freed_joker_not_new_group``, ``freed_joker_without_hand_tiles``,
    ``freed_joker_not_hand_group``; where melds may only be extended also
    ``meld_split``, ``melds_joined``, ``joker_exchange_not_allowed`` (500 Rum),
    ``laid_off_before_opening``, ``exchange_before_opening``,
    ``discard_used_for_opening``, ``discard_taken_before_opening``,
    ``discard_not_melded``, ``discard_below_top``, ``discard_with_short_rack``,
    ``borrowing_not_allowed``, ``borrowed_not_in_new_meld`` (American Rummy's
    Borgen) and ``no_laying_out`` (Wiener Rummy).
    """

    code: str
    message: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class TurnCheck:
    valid: bool
    problems: tuple[TurnProblem, ...]
    """Every problem found, not just the first."""
    initial_value: int | None
    """Value of the opening melds when the player had not opened (else None)."""
    exchanged_jokers: tuple[Natural, ...]
    """Tiles laid from the rack that freed a joker (under ``set_joker_needs_both``
    both colours laid to free a set's joker)."""
    restored_table: tuple[Meld, ...]
    """The table to put back if the turn is invalid: the table before the turn."""
    penalty_draw: int
    """Items the player draws as a penalty for an invalid turn: 3 in Sabra, 0 in every
    other variant (their texts name no penalty; the player takes his items back)."""


# --- small helpers ------------------------------------------------------------
def _bare(item: Item) -> Item:
    """Jokers count as jokers, whatever they were declared to stand for."""
    return JOKER if isinstance(item, Joker) else item


def _bag(items: Sequence[Item]) -> Bag:
    return Counter(_bare(item) for item in items)


def _naturals(items: Sequence[Item]) -> Bag:
    return Counter(item for item in items if not isinstance(item, Joker))


def _joker_count(items: Sequence[Item]) -> int:
    return sum(item.is_joker for item in items)


def _meld_key(meld: Sequence[Item]) -> tuple[str, ...]:
    """A meld as a multiset of items: the order on the table does not matter."""
    return tuple(sorted(str(_bare(item)) for item in meld))


def _expand(bag: Bag) -> tuple[Item, ...]:
    return tuple(sorted(bag.elements(), key=str))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _conservation(
    before: Sequence[Sequence[Item]], after: Sequence[Sequence[Item]], laid: Sequence[Item]
) -> tuple[Bag, Bag]:
    """(items gone from the table, items come from nowhere)."""
    had = _bag([i for m in before for i in m]) + _bag(laid)
    has = _bag([i for m in after for i in m])
    return had - has, has - had


def table_conserved(
    before: Sequence[Sequence[Item]], after: Sequence[Sequence[Item]], laid: Sequence[Item]
) -> bool:
    """Whether the table after the turn holds exactly the table before plus ``laid``."""
    return _bag([i for m in after for i in m]) == _bag([i for m in before for i in m]) + _bag(laid)


# --- what a joker stands for -----------------------------------------------------
def _joker_slots(reading: Reading | None) -> list[Slot | None]:
    if reading is None:
        return []
    return [slot for slot in reading.slots if slot.is_joker]


def _meaning(reading: Reading | None, k: int) -> frozenset[Natural] | None:
    """What the k-th joker of a reading may stand for; None where the meld has no
    legal reading (then nothing can be said and nothing is objected to).

    A joker in a set stands for any colour its set is missing, even where it
    was declared as one ([sabra] "kann der Joker durch einen passenden
    Spielstein jeder der fehlenden Farben ersetzt werden"); two jokers in
    ``R5 JK JK`` are interchangeable.
    """
    if reading is None:
        return None
    slots = _joker_slots(reading)
    if k >= len(slots):
        return None
    slot = slots[k]
    assert slot is not None
    if reading.kind is MeldKind.RUN:
        assert slot.suit is not None
        return frozenset({natural(reading.family, slot.rank, slot.suit)})
    return frozenset(natural(reading.family, slot.rank, s) for s in reading.missing_suits)


def _compatible(old: frozenset[Natural] | None, new: frozenset[Natural] | None) -> bool:
    return old is None or new is None or bool(old & new)


def _describe(meaning: frozenset[Natural] | None) -> str:
    if not meaning:
        return "a tile"
    return " or ".join(sorted(str(m) for m in meaning))


# --- the search for a legal explanation of the jokers ----------------------------
@dataclass(frozen=True)
class _Exchange:
    """A joker freed by laying the tile(s) it stood for."""

    tiles: tuple[Natural, ...]
    occurrence: Occurrence | None
    """Where the freed joker lies after the turn (None: gone from the table)."""


@dataclass(frozen=True)
class _MeldOutcome:
    """One explanation of what became of one before-meld holding jokers."""

    meld: int
    host: int | None
    """The after-meld that still holds the meld's other items (official rule)."""
    exchanges: tuple[_Exchange, ...]
    problems: tuple[TurnProblem, ...]


@dataclass(frozen=True)
class _JokerVerdict:
    problems: tuple[TurnProblem, ...]
    exchanges: tuple[tuple[int | None, _Exchange], ...]
    """(host meld or None, exchange) for every freed joker."""

    @property
    def reserved(self) -> Bag:
        """Laid tiles spent on exchanges."""
        spent: Bag = Counter(tile for _, ex in self.exchanges for tile in ex.tiles)
        return spent

    @property
    def freed_missing(self) -> int:
        return sum(ex.occurrence is None for _, ex in self.exchanges)


class _TurnJudge:
    def __init__(
        self,
        variant: Variant,
        before: tuple[Meld, ...],
        after: tuple[Meld, ...],
        laid: Meld,
        opened: bool,
    ) -> None:
        self.variant = variant
        self.before = before
        self.after = after
        self.laid = laid
        self.opened = opened
        self.laid_bag = _bag(laid)
        self.after_bags = [_bag(meld) for meld in after]
        self.analyses_after = [variant.analyse(meld) for meld in after]
        self._readings_cache: dict[tuple[str, int], list[Reading | None]] = {}
        self._steps = 0
        """Joker explanations judged so far (see _SEARCH_LIMIT)."""

    # -- options ---------------------------------------------------------------
    @property
    def sabra(self) -> bool:
        return isinstance(self.variant, Sabra)

    @property
    def dutch(self) -> bool:
        return bool(self.variant.options.get("dutch", False))

    @property
    def freed_joker_rule(self) -> str:
        return str(self.variant.options.get("freed_joker", "anywhere"))

    @property
    def needs_both(self) -> bool:
        return bool(self.variant.options.get("set_joker_needs_both", False))

    @property
    def rearrange_on_opening_turn(self) -> bool:
        # Räuber-Rommé has no such option: Rommé lets a player lay off and take
        # jokers only once "er seine Erstmeldung ausgelegt" hat / "erst nach
        # Auslage der Erstmeldung", which a demanding table reads as: from the
        # next turn on.  The turn of the Erstmeldung only lays it from the hand.
        default = not isinstance(self.variant, RaeuberRommee)
        return bool(self.variant.options.get("rearrange_on_opening_turn", default))

    # -- readings --------------------------------------------------------------
    def readings(self, side: str, index: int) -> list[Reading | None]:
        key = (side, index)
        if key not in self._readings_cache:
            meld = self.before[index] if side == "before" else self.after[index]
            analysis = (
                self.analyses_after[index] if side == "after" else self.variant.analyse(meld)
            )
            self._readings_cache[key] = list(analysis.readings) or [None]
        return self._readings_cache[key]

    # -- the whole check ---------------------------------------------------------
    def check(self) -> TurnCheck:
        problems: list[TurnProblem] = []
        missing, extra = self.conservation()
        if not self.laid:
            problems.append(
                TurnProblem(
                    "nothing_laid",
                    "at least one item from the rack must be laid"
                    " (\"mindestens ein Spielstein von seinem Blatt hinzugefügt\")",
                    (),
                )
            )
        for meld, analysis in zip(self.after, self.analyses_after, strict=True):
            if not analysis.valid:
                problems.append(
                    TurnProblem(
                        "invalid_meld",
                        f"{format_items(meld) or '(empty meld)'} is not a legal meld:"
                        f" {analysis.reason}",
                        tuple(meld),
                    )
                )
        verdict = self.joker_verdict(missing_jokers=missing[JOKER])
        initial_value: int | None = None
        if not self.opened:
            initial_value, opening_problems = self.opening(verdict.reserved)
            problems.extend(opening_problems)
        problems.extend(verdict.problems)

        # A joker freed by exchange and taken to the rack is reported as such,
        # not a second time as a missing item.
        missing[JOKER] -= min(missing[JOKER], verdict.freed_missing)
        missing = +missing
        conservation: list[TurnProblem] = []
        if missing:
            conservation.append(
                TurnProblem(
                    "item_missing",
                    f"{format_items(_expand(missing))} lay on the table or were laid but are not"
                    " on the table after the turn: nothing may go back to the rack",
                    _expand(missing),
                )
            )
        if extra:
            conservation.append(
                TurnProblem(
                    "item_from_nowhere",
                    f"{format_items(_expand(extra))} are on the table after the turn but neither"
                    " lay there before nor were laid from the rack",
                    _expand(extra),
                )
            )
        problems = conservation + problems
        valid = not problems
        penalty = 0 if valid or not self.sabra else SABRA_PENALTY_DRAW
        return TurnCheck(
            valid=valid,
            problems=tuple(problems),
            initial_value=initial_value,
            exchanged_jokers=tuple(tile for _, ex in verdict.exchanges for tile in ex.tiles),
            restored_table=self.before,
            penalty_draw=penalty,
        )

    def conservation(self) -> tuple[Bag, Bag]:
        """(items gone from the table, items come from nowhere)."""
        had = _bag([i for m in self.before for i in m]) + self.laid_bag
        has = _bag([i for m in self.after for i in m])
        return had - has, has - had

    # -- the initial meld ---------------------------------------------------------
    def opening(self, reserved: Bag) -> tuple[int, list[TurnProblem]]:
        """The value of the melds laid from the hand alone, and what is wrong with it.

        [sabra] "Die erste Meldung ... muss aus einer oder mehreren Meldungen
        bestehen, die ausschließlich aus dem Blatt des Spielers stammen".  The
        opening melds are the after-melds made of laid items only; which ones
        is chosen to be worth the most (identical tiles are interchangeable).
        """
        problems: list[TurnProblem] = []
        available = self.laid_bag - reserved
        if self.rearrange_on_opening_turn:
            pure = self.best_pure_melds(available)
        else:
            pure = []
            unchanged = Counter(_meld_key(meld) for meld in self.after)
            kept: Counter[tuple[str, ...]] = Counter()
            for meld in self.before:
                key = _meld_key(meld)
                if unchanged[key] > kept[key]:
                    kept[key] += 1
                else:
                    problems.append(
                        TurnProblem(
                            "table_changed_before_opening",
                            f"{format_items(meld)} was changed in the turn of the initial meld:"
                            " the table may be rearranged only once the player has opened",
                            tuple(meld),
                        )
                    )
            remaining = Counter(available)
            for index, meld in enumerate(self.after):
                key = _meld_key(meld)
                if kept[key]:
                    kept[key] -= 1
                    continue
                bag = self.after_bags[index]
                if bag <= remaining:
                    remaining -= bag
                    if self.analyses_after[index].valid:
                        pure.append(index)
                else:
                    foreign = bag - remaining
                    problems.append(
                        TurnProblem(
                            "not_from_hand",
                            f"{format_items(meld)} uses {format_items(_expand(foreign))} from the"
                            " table: the initial meld must come from the hand alone"
                            " (\"ausschließlich aus dem Blatt\")",
                            _expand(foreign),
                        )
                    )
        melds = [self.after[i] for i in pure]
        result = self.variant.check_initial_meld(melds)
        if not result.meets:
            what = "; ".join(p for p in result.problems) or "the initial meld is too low"
            shown = ", ".join(format_items(m) for m in melds) or "no meld from the hand alone"
            problems.append(
                TurnProblem(
                    "initial_too_low",
                    f"{what} ({shown})",
                    tuple(item for m in melds for item in m),
                )
            )
        return result.value, problems

    def best_pure_melds(self, available: Bag) -> list[int]:
        """The after-melds made of laid items only that are worth most together."""
        candidates = []
        for index, analysis in enumerate(self.analyses_after):
            if analysis.valid and self.after_bags[index] <= available:
                value = max(self.variant.meld_value(r) for r in analysis.readings)
                candidates.append((value, index))
        candidates.sort(reverse=True)
        best: tuple[int, list[int]] = (-1, [])
        steps = 0

        def search(start: int, left: Bag, chosen: list[int], value: int) -> None:
            nonlocal best, steps
            steps += 1
            if value > best[0]:
                best = (value, list(chosen))
            if steps > _SEARCH_LIMIT:
                return
            bound = value + sum(v for v, _ in candidates[start:])
            if bound <= best[0]:
                return
            for pos in range(start, len(candidates)):
                v, index = candidates[pos]
                bag = self.after_bags[index]
                if bag <= left:
                    chosen.append(index)
                    search(pos + 1, left - bag, chosen, value + v)
                    chosen.pop()

        search(0, available, [], 0)
        return sorted(best[1])

    # -- jokers ---------------------------------------------------------------------
    def joker_verdict(self, missing_jokers: int) -> _JokerVerdict:
        """The explanation of the table's jokers with the fewest problems.

        Jokers look alike, so which joker on the table now is which joker of
        before is searched for: meld by meld, each before-meld's jokers go to
        jokers on the table now (or, at most ``missing_jokers`` of them, off the
        table), with branch and bound on the problems found so far.
        """
        if not self.sabra:
            # [raeuber] jokers find new uses freely; the opening turn cannot touch
            # them because the table must stay as it was (see rearrange_on_opening_turn).
            return _JokerVerdict((), ())
        melds = [m for m, meld in enumerate(self.before) if _joker_count(meld)]
        if not melds:
            return _JokerVerdict((), ())
        occurrences = [
            (a, k) for a, meld in enumerate(self.after) for k in range(_joker_count(meld))
        ]
        best: _JokerVerdict | None = None

        def done() -> bool:
            return best is not None and (not best.problems or self._steps > _SEARCH_LIMIT)

        def descend(
            i: int,
            assignment: dict[tuple[int, int], Occurrence | None],
            outcomes: list[_MeldOutcome],
            found: int,
        ) -> None:
            nonlocal best
            if best is not None and found >= len(best.problems):
                return
            if i == len(melds):
                self._steps += 1
                verdict = self.judge_combination(tuple(outcomes), assignment)
                if best is None or len(verdict.problems) < len(best.problems):
                    best = verdict
                return
            m = melds[i]
            taken = {occ for occ in assignment.values() if occ is not None}
            gone = sum(occ is None for occ in assignment.values())
            for choice in self.occurrence_choices(m, occurrences, taken, missing_jokers - gone):
                local = {(m, k): occ for k, occ in enumerate(choice)}
                ranked = sorted(self.meld_outcomes(m, local), key=lambda o: len(o.problems))
                for outcome in ranked:
                    self._steps += 1
                    outcomes.append(outcome)
                    descend(i + 1, {**assignment, **local}, outcomes, found + len(outcome.problems))
                    outcomes.pop()
                    if done():
                        return

        descend(0, {}, [], 0)
        assert best is not None
        return best

    def occurrence_choices(
        self, m: int, occurrences: list[Occurrence], taken: set[Occurrence], may_go: int
    ) -> Iterator[tuple[Occurrence | None, ...]]:
        """Where the jokers of before-meld ``m`` may be now: distinct free jokers on the
        table, those in melds still holding the meld's other items first, or (at most
        ``may_go`` of them) gone from the table."""
        naturals = _naturals(self.before[m])
        free = [occ for occ in occurrences if occ not in taken]
        free.sort(key=lambda occ: not naturals <= self.after_bags[occ[0]])
        options: list[Occurrence | None] = [*free, None]
        for choice in itertools.product(options, repeat=_joker_count(self.before[m])):
            placed = [occ for occ in choice if occ is not None]
            if len(set(placed)) == len(placed) and len(choice) - len(placed) <= may_go:
                yield choice

    def meld_outcomes(
        self, m: int, assignment: dict[tuple[int, int], Occurrence | None]
    ) -> Iterator[_MeldOutcome]:
        meld = self.before[m]
        jokers = _joker_count(meld)
        occurrences = [assignment[(m, k)] for k in range(jokers)]
        if self.dutch:
            yield from self.dutch_outcomes(m, occurrences)
            return
        naturals = _naturals(meld)
        hosts = [a for a, bag in enumerate(self.after_bags) if naturals <= bag]
        if not hosts:
            yield _MeldOutcome(
                m,
                None,
                (),
                (
                    TurnProblem(
                        "joker_split",
                        f"{format_items(meld)} holds a joker, so it may be extended but not split"
                        " or have items removed (\"weder Spielsteine entfernt werden\")",
                        tuple(meld),
                    ),
                ),
            )
            return
        for a in hosts:
            for old in self.readings("before", m):
                for new in self.readings("after", a):
                    yield from self.strict_outcomes(m, a, old, new, occurrences)

    def strict_outcomes(
        self,
        m: int,
        a: int,
        old: Reading | None,
        new: Reading | None,
        occurrences: list[Occurrence | None],
    ) -> Iterator[_MeldOutcome]:
        """Official Sabra: each joker of before-meld ``m`` stays in host ``a`` meaning
        the same, or is exchanged for the tile it stood for, laid into ``a``."""
        meld = self.before[m]
        host = self.after[a]
        naturals = _naturals(meld)
        host_bag = self.after_bags[a]
        choices: list[list[tuple[_Exchange | None, TurnProblem | None]]] = []
        for k, occurrence in enumerate(occurrences):
            before_meaning = _meaning(old, k)
            if (
                occurrence is not None
                and occurrence[0] == a
                and _compatible(before_meaning, _meaning(new, occurrence[1]))
            ):
                choices.append([(None, None)])
                continue
            options: list[tuple[_Exchange | None, TurnProblem | None]] = []
            for tiles in self.exchange_tiles(old, k, naturals, host_bag):
                options.append((_Exchange(tiles, occurrence), None))
            if not options:
                options.append((None, self.unexchanged_problem(m, a, old, new, k, occurrence)))
            choices.append(options)
        for combination in itertools.product(*choices):
            exchanges = tuple(ex for ex, _ in combination if ex is not None)
            problems = [p for _, p in combination if p is not None]
            if self.needs_both and old is not None and old.kind is MeldKind.SET and exchanges:
                # [sabra Varianten] "die Spielsteine beider fehlenden Farben zu der Gruppe
                # hinzugefügt werden müssen, um den Joker an sich nehmen zu können":
                # the set it leaves must be complete.
                kept_jokers = len(occurrences) - len(exchanges)
                suits = {
                    n.suit_index
                    for n in host
                    if not isinstance(n, Joker) and n.rank == old.rank
                }
                if len(suits) + kept_jokers < 4:
                    problems.append(
                        TurnProblem(
                            "joker_exchange_incomplete",
                            f"the joker of {format_items(meld)} may be taken only by adding both"
                            f" missing colours; {format_items(host)} is not complete",
                            tuple(host),
                        )
                    )
            yield _MeldOutcome(m, a, exchanges, tuple(problems))

    def exchange_tiles(
        self, old: Reading | None, k: int, naturals: Bag, host_bag: Bag
    ) -> list[tuple[Natural, ...]]:
        """Ways to free the k-th joker of a before-meld: the laid tiles that take its
        place in the host (host_bag None: anywhere on the table, Dutch rule)."""
        if old is None:
            return []
        slots = _joker_slots(old)
        if k >= len(slots):
            return []
        slot = slots[k]
        assert slot is not None

        def laid_into_host(tile: Natural) -> bool:
            return self.laid_bag[tile] >= 1 and host_bag[tile] > naturals[tile]

        if old.kind is MeldKind.RUN:
            meaning = _meaning(old, k)
            assert meaning is not None
            return [(tile,) for tile in sorted(meaning, key=str) if laid_into_host(tile)]
        # [sabra] "kann der Joker durch einen passenden Spielstein jeder der fehlenden
        # Farben ersetzt werden" -- whatever colour the joker was declared as.
        missing = [natural(old.family, old.rank, s) for s in old.missing_suits]
        added = [tile for tile in missing if laid_into_host(tile)]
        if self.needs_both:
            if self.dutch and len(added) < len(missing) - (old.joker_count - 1):
                # the set may be split under the Dutch rule, so completeness is read
                # as: every missing colour but the other jokers' was laid
                return []
            return [tuple(added)] if added else []
        return [(tile,) for tile in added]

    def unexchanged_problem(
        self,
        m: int,
        a: int,
        old: Reading | None,
        new: Reading | None,
        k: int,
        occurrence: Occurrence | None,
    ) -> TurnProblem | None:
        """What is wrong when the k-th joker of before-meld ``m`` (host ``a``) was
        neither kept as it was nor exchanged (official rule)."""
        if occurrence is None:
            return None  # gone from the table: reported by conservation
        meld = self.before[m]
        meaning = _describe(_meaning(old, k))
        where = self.after[occurrence[0]]
        if occurrence[0] != a:
            return TurnProblem(
                "joker_split",
                f"the joker of {format_items(meld)} was moved to {format_items(where)} without"
                f" laying the {meaning} it stands for in its place",
                tuple(meld),
            )
        return TurnProblem(
            "joker_meaning_changed",
            f"the joker of {format_items(meld)} stood for {meaning} and in {format_items(where)}"
            f" stands for {_describe(_meaning(new, occurrence[1]))}: a meld holding a joker may"
            " not be rearranged (\"noch darf die Zusammenstellung neu geordnet werden\")",
            tuple(where),
        )

    def dutch_outcomes(
        self, m: int, occurrences: list[Occurrence | None]
    ) -> Iterator[_MeldOutcome]:
        """Dutch Sabra: the meld may be split; each joker must stand for the same tile
        wherever it lies, unless the tile it stood for was laid from the hand."""
        meld = self.before[m]
        table_after: Bag = sum(self.after_bags, Counter())
        for old in self.readings("before", m):
            choices: list[list[tuple[_Exchange | None, TurnProblem | None]]] = []
            for k, occurrence in enumerate(occurrences):
                before_meaning = _meaning(old, k)
                options: list[tuple[_Exchange | None, TurnProblem | None]] = []
                if occurrence is not None and any(
                    _compatible(before_meaning, _meaning(new, occurrence[1]))
                    for new in self.readings("after", occurrence[0])
                ):
                    options.append((None, None))
                else:
                    # The meld may have been split, so the laid tile need not join
                    # the joker's old companions: anywhere on the table will do.
                    for tiles in self.exchange_tiles(old, k, Counter(), table_after):
                        options.append((_Exchange(tiles, occurrence), None))
                if not options:
                    problem = None
                    if occurrence is not None:
                        where = self.after[occurrence[0]]
                        problem = TurnProblem(
                            "joker_meaning_changed",
                            f"the joker of {format_items(meld)} stood for"
                            f" {_describe(before_meaning)} and in {format_items(where)} stands for"
                            " something else: a joker keeps what it stands for (\"immer für"
                            " denselben Spielstein\") unless that tile is laid from the hand",
                            tuple(where),
                        )
                    options.append((None, problem))
                choices.append(options)
            for combination in itertools.product(*choices):
                exchanges = tuple(ex for ex, _ in combination if ex is not None)
                problems = tuple(p for _, p in combination if p is not None)
                yield _MeldOutcome(m, None, exchanges, problems)

    def judge_combination(
        self,
        outcomes: tuple[_MeldOutcome, ...],
        assignment: dict[tuple[int, int], Occurrence | None],
    ) -> _JokerVerdict:
        problems: list[TurnProblem] = []
        for outcome in outcomes:
            problems.extend(outcome.problems)
        # Two melds holding jokers kept whole in one after-meld must both fit in it.
        demand: dict[int, Bag] = {}
        for outcome in outcomes:
            if outcome.host is None:
                continue
            need = demand.setdefault(outcome.host, Counter())
            need.update(_naturals(self.before[outcome.meld]))
            for ex in outcome.exchanges:
                need.update(ex.tiles)
            if not need <= self.after_bags[outcome.host]:
                meld = self.before[outcome.meld]
                problems.append(
                    TurnProblem(
                        "joker_split",
                        f"{format_items(meld)} holds a joker, so it may be extended but not split",
                        tuple(meld),
                    )
                )
        exchanges = tuple((o.host, ex) for o in outcomes for ex in o.exchanges)
        spent: Bag = Counter(tile for _, ex in exchanges for tile in ex.tiles)
        overspent = spent - self.laid_bag
        if overspent:
            problems.append(
                TurnProblem(
                    "not_from_hand",
                    f"{format_items(_expand(overspent))} would have to free more jokers than"
                    " were laid from the rack",
                    _expand(overspent),
                )
            )
        table_jokers = {occ for occ in assignment.values() if occ is not None}
        for host, ex in exchanges:
            problem = self.freed_joker_problem(host, ex, exchanges, table_jokers)
            if problem is not None:
                problems.append(problem)
        return _JokerVerdict(tuple(problems), exchanges)

    def freed_joker_problem(
        self,
        host: int | None,
        exchange: _Exchange,
        exchanges: tuple[tuple[int | None, _Exchange], ...],
        table_jokers: set[Occurrence],
    ) -> TurnProblem | None:
        tiles = format_items(exchange.tiles)
        if exchange.occurrence is None:
            # [sabra] "Ein Joker, der auf diese Weise frei wird, kann nicht in das Blatt
            # des Spielers zur späteren Verwendung aufgenommen werden."
            return TurnProblem(
                "freed_joker_unused",
                f"the joker freed by {tiles} must be played again in the same turn;"
                " it may not go to the rack",
                (*exchange.tiles, JOKER),
            )
        x = exchange.occurrence[0]
        meld = self.after[x]
        if host == x:
            # [sabra] "durch den echten Spielstein ersetzt und den Joker dann in einer
            # anderen Zusammenstellung auf dem Tisch verwendet": putting it back at the
            # other end of its own meld is the move the rule forbids.
            return TurnProblem(
                "freed_joker_same_meld",
                f"the joker freed by {tiles} must be used in another meld, not put back"
                f" into {format_items(meld)}",
                tuple(meld),
            )
        rule = self.freed_joker_rule
        if rule == "anywhere":  # Goliath 1994: "sofort, innerhalb desselben Spielzuges"
            return None
        if rule in ("new_group", "with_hand"):
            # Lemada 1999: "als Teil einer neuen Gruppe"; the stricter readings
            # include this one.
            for old in self.before:
                naturals = _naturals(old)
                if naturals and naturals <= self.after_bags[x]:
                    return TurnProblem(
                        "freed_joker_not_new_group",
                        f"the joker freed by {tiles} must go into a new group, but"
                        f" {format_items(meld)} extends {format_items(old)}",
                        tuple(meld),
                    )
        if rule == "new_group":
            return None
        from_hand = self.laid_in_meld(x, exchanges, table_jokers)
        if rule == "with_hand":
            # Pressman 1987/1998: "zusammen mit 2 oder mehr Spielsteinen aus seinem Blatt"
            if len(from_hand) < 2:
                return TurnProblem(
                    "freed_joker_without_hand_tiles",
                    f"the joker freed by {tiles} must form a new group with two or more tiles"
                    f" from the rack; {format_items(meld)} holds"
                    f" {_plural(len(from_hand), 'laid tile')}",
                    tuple(meld),
                )
            return None
        # hand_only: "eine neue Gruppe ..., die nur aus dem Joker und zwei oder mehr
        # Spielsteinen aus dem Blatt ... besteht"; table tiles may join it afterwards.
        if not self.hand_group_exists(from_hand):
            return TurnProblem(
                "freed_joker_not_hand_group",
                f"the joker freed by {tiles} must first form a legal group with two or more"
                f" tiles from the rack alone; in {format_items(meld)} the laid tiles"
                f" {format_items(from_hand) or '(none)'} and the joker do not",
                tuple(meld),
            )
        return None

    def laid_in_meld(
        self,
        x: int,
        exchanges: tuple[tuple[int | None, _Exchange], ...],
        table_jokers: set[Occurrence],
    ) -> tuple[Item, ...]:
        """The items of after-meld ``x`` that can have come from the rack, leaving out
        laid tiles spent on an exchange in another meld."""
        reserved: Bag = Counter()
        for host, ex in exchanges:
            if host != x:
                reserved.update(ex.tiles)
        available = self.laid_bag - reserved
        items: list[Item] = []
        used: Bag = Counter()
        for k_item in self.after[x]:
            if k_item.is_joker:
                continue
            if used[k_item] < available[k_item]:
                used[k_item] += 1
                items.append(k_item)
        own_jokers = _joker_count(self.after[x]) - sum(occ[0] == x for occ in table_jokers)
        items.extend([JOKER] * max(0, min(own_jokers, self.laid_bag[JOKER])))
        return tuple(items)

    def hand_group_exists(self, from_hand: tuple[Item, ...]) -> bool:
        """Whether the freed joker and two or more of these laid items make a legal meld."""
        seen: set[tuple[str, ...]] = set()
        for size in range(2, len(from_hand) + 1):
            for subset in itertools.combinations(from_hand, size):
                key = _meld_key(subset)
                if key in seen:
                    continue
                seen.add(key)
                if self.variant.analyse((*subset, JOKER)).valid:
                    return True
                if len(seen) > _SEARCH_LIMIT:
                    return False
        return False



# --- variants whose melds may only be extended ----------------------------------------
FOOT_TILES = 14
"""[international] Foot: "indem Sie 14 Spielsteine auf einmal auslegen"."""

FOOT_MINIMUM = 50
"""[international] "Ihre 14 Spielsteine müssen mindestens 50 Punkte ergeben"."""


@dataclass(frozen=True)
class _ExtendRules:
    """What one extend-only variant allows with the melds on the table."""

    exchange: bool
    """A joker may be exchanged for the item it stands for."""
    set_exchange_needs_four: bool
    """A set's joker is freed only when the set is completed to four naturals."""
    freed_with_hand_tiles: bool
    """The freed joker's new meld holds two or more items from the rack."""
    opening: bool
    """The variant has an initial-meld minimum (then nothing may be laid off or
    exchanged before it is made)."""
    deeper_discard: str
    """Taking items from below the top of the discard pile: "never", "new_meld" (the
    deepest must start a new meld, [remi] rule 4) or "melded" (it must be melded at
    once, new meld or lay-off, [rum500])."""
    discard_before_opening: str
    """Before the initial meld: "allowed", "forbidden" or "opening_only" (one tile,
    used at once in the opening)."""
    discard_must_meld: bool
    """The top discard too must be melded at once."""


def _extend_rules(variant: Variant) -> _ExtendRules:
    opening = variant.initial_meld_required > 0
    if isinstance(variant, Remi):
        return _ExtendRules(
            # [remi] rules 5-7
            exchange=True,
            set_exchange_needs_four=True,
            freed_with_hand_tiles=True,
            opening=opening,
            deeper_discard="new_meld",
            # "Es ist nicht erlaubt, einen abgelegten Stein aufzunehmen, um ... die
            # Anfangsmeldung ... zu machen"; Varianten: "nur ein Stein ..., wenn er sofort
            # für die Anfangsmeldung benutzt wird"
            discard_before_opening=(
                "opening_only" if variant.options.get("take_discard_to_open") else "forbidden"
            ),
            discard_must_meld=False,
        )
    if isinstance(variant, Rum500):
        return _ExtendRules(
            # "Dies kann anschließend nicht mehr geändert werden": no exchange at all
            exchange=False,
            set_exchange_needs_four=False,
            freed_with_hand_tiles=False,
            opening=False,
            deeper_discard="melded",
            discard_before_opening="allowed",
            discard_must_meld=bool(variant.options.get("discard_must_meld", False)),
        )
    if isinstance(variant, AmericanRummy):
        return _ExtendRules(
            exchange=False,  # played without jokers
            set_exchange_needs_four=False,
            freed_with_hand_tiles=False,
            opening=False,
            deeper_discard="never",  # "nur die oberste Karte sichtbar"
            discard_before_opening="allowed",
            discard_must_meld=False,
        )
    if isinstance(variant, (AmericanRummikub, InternationalRummikub)):
        american = isinstance(variant, AmericanRummikub)
        return _ExtendRules(
            # [american] "vorausgesetzt, dass Sie den Joker unmittelbar in einer 'neuen'
            # eigenen Kombination verwenden": read strictly, the joker with two tiles
            # from the rack
            exchange=True,
            set_exchange_needs_four=False,
            freed_with_hand_tiles=True,
            opening=opening,
            deeper_discard="never",
            # [american] "Ab dem nächsten Spielzug dürfen Sie einen soeben vom vorigen
            # Spieler abgelegten Spielstein aufnehmen"; [international] "immer"
            discard_before_opening="forbidden" if american else "allowed",
            discard_must_meld=False,
        )
    # Rommé (and Wiener Rummy, which never gets this far with a changed table)
    return _ExtendRules(
        exchange=True,
        set_exchange_needs_four=bool(variant.options.get("set_joker_exchange_needs_four", False)),
        freed_with_hand_tiles=False,
        opening=opening,
        deeper_discard="never",
        discard_before_opening="allowed",
        discard_must_meld=bool(variant.options.get("discard_must_meld", False)),
    )


@dataclass(frozen=True)
class _Hosting:
    """How one before-meld lies in the after-meld that holds it now."""

    meld: int
    host: int
    problems: tuple[TurnProblem, ...]
    exchanges: tuple[tuple[Natural, ...], ...]
    """The laid tiles that freed each joker of the meld."""
    added: Bag
    """Items laid onto the meld (exchange tiles included)."""
    added_jokers: int
    """Jokers lying in the host beyond the meld's own."""
    borrowed: Bag
    """Items taken out of the meld under American Rummy's Borgen."""
    added_value: int
    """What the items laid onto the meld count (International Foot)."""


@dataclass(frozen=True)
class _Structure:
    problems: tuple[TurnProblem, ...]
    exchanges: tuple[tuple[Natural, ...], ...]
    added_jokers: int
    added_value: int


_UNMATCHED_COST = 100
"""A before-meld with no host costs more than any host with problems."""


class _ExtendJudge:
    """Checks a turn where the melds on the table may be extended but never rebuilt."""

    def __init__(
        self,
        variant: Variant,
        before: tuple[Meld, ...],
        after: tuple[Meld, ...],
        laid: Meld,
        opened: bool,
        discard_taken: tuple[Item, ...],
        borrowing: bool,
        own_melds: frozenset[int],
        rack_size: int | None,
    ) -> None:
        self.variant = variant
        self.rules = _extend_rules(variant)
        self.before = before
        self.after = after
        self.laid = laid
        self.opened = opened or not self.rules.opening
        self.discard_taken = discard_taken
        self.borrowing = borrowing
        self.own_melds = own_melds
        self.rack_size = rack_size
        self.laid_bag = _bag(laid)
        self.before_bags = [_bag(meld) for meld in before]
        self.after_bags = [_bag(meld) for meld in after]
        self.analyses_after = [variant.analyse(meld) for meld in after]
        self._readings: dict[Meld, tuple[Reading, ...]] = {}
        self._steps = 0

    def readings(self, meld: Meld) -> tuple[Reading, ...]:
        if meld not in self._readings:
            self._readings[meld] = self.variant.analyse(meld).readings
        return self._readings[meld]

    @property
    def foot(self) -> bool:
        # [international] Foot: "Einige Ihrer 14 Spielsteine werden als Ihre eigenen Sätze
        # und Folgen kombiniert; andere ... an Meldungen der anderen Spieler angelegt"
        return (
            isinstance(self.variant, InternationalRummikub)
            and not self.opened
            and len(self.laid) == FOOT_TILES
        )

    # -- the whole check -------------------------------------------------------------
    def check(self) -> TurnCheck:
        if isinstance(self.variant, WienerRummy):
            return self.finish(self.wiener_problems(), [], None, ())
        missing, extra = _conservation(self.before, self.after, self.laid)
        problems: list[TurnProblem] = []
        for meld, analysis in zip(self.after, self.analyses_after, strict=True):
            if not analysis.valid:
                problems.append(
                    TurnProblem(
                        "invalid_meld",
                        f"{format_items(meld) or '(empty meld)'} is not a legal meld:"
                        f" {analysis.reason}",
                        tuple(meld),
                    )
                )
        hostings, unmatched = self.match()
        for hosting in hostings:
            problems.extend(hosting.problems)
        problems.extend(self.unmatched_problems(unmatched, hostings))
        hosts = {h.host for h in hostings}
        new = [a for a in range(len(self.after)) if a not in hosts]
        initial_value: int | None = None
        if not self.opened:
            initial_value, opening_problems = self.opening(hostings, new)
            problems.extend(opening_problems)
        joker_problems, freed_gone = self.freed_jokers(hostings, new, missing[JOKER])
        problems.extend(joker_problems)
        problems.extend(self.borrowed_problems(hostings, new))
        problems.extend(self.discard_problems(hostings, new))
        missing[JOKER] -= min(missing[JOKER], freed_gone)
        exchanged = tuple(t for h in hostings for ex in h.exchanges for t in ex)
        return self.finish(problems, self.conservation_problems(+missing, extra),
                           initial_value, exchanged)

    def finish(
        self,
        problems: list[TurnProblem],
        conservation: list[TurnProblem],
        initial_value: int | None,
        exchanged: tuple[Natural, ...],
    ) -> TurnCheck:
        problems = conservation + problems
        return TurnCheck(
            valid=not problems,
            problems=tuple(problems),
            initial_value=initial_value,
            exchanged_jokers=exchanged,
            restored_table=self.before,
            # none of these texts names a penalty: the items go back where they were
            penalty_draw=0,
        )

    @staticmethod
    def conservation_problems(missing: Bag, extra: Bag) -> list[TurnProblem]:
        out: list[TurnProblem] = []
        if missing:
            out.append(
                TurnProblem(
                    "item_missing",
                    f"{format_items(_expand(missing))} lay on the table or were laid but are not"
                    " on the table after the turn: melded items may not go back to the hand",
                    _expand(missing),
                )
            )
        if extra:
            out.append(
                TurnProblem(
                    "item_from_nowhere",
                    f"{format_items(_expand(extra))} are on the table after the turn but neither"
                    " lay there before nor were laid from the hand",
                    _expand(extra),
                )
            )
        return out

    def wiener_problems(self) -> list[TurnProblem]:
        """[wiener] Rommé ohne Auslegen: nothing goes on the table during play; the
        hands are laid down only when the round ends (Rommé-Ruf or Klopfen), which
        round scoring judges, and "Ein Anlegen an Figuren anderer Spieler ist nicht
        gestattet"."""
        changed = Counter(_meld_key(m) for m in self.before) != Counter(
            _meld_key(m) for m in self.after
        )
        if not self.laid and not changed:
            return []
        items = tuple(self.laid) or tuple(i for m in self.after for i in m)
        return [
            TurnProblem(
                "no_laying_out",
                f"{format_items(items)}: in Wiener Rummy (\"Rommé ohne Auslegen\") nothing is"
                " laid on the table during play, the hand goes down only at Rommé or Klopfen",
                items,
            )
        ]

    # -- which after-meld holds which before-meld -------------------------------------
    def match(self) -> tuple[list[_Hosting], list[int]]:
        """Give every before-meld its own after-meld (no two share one), with the
        fewest problems; identical melds make this a small assignment search."""
        candidates: list[list[_Hosting]] = []
        for m in range(len(self.before)):
            options = [h for a in range(len(self.after)) if (h := self.hosting(m, a)) is not None]
            options.sort(key=lambda h: len(h.problems))
            candidates.append(options)
        order = sorted(range(len(self.before)), key=lambda m: len(candidates[m]))
        best: tuple[int, list[_Hosting], list[int]] | None = None

        def descend(i: int, used: set[int], chosen: list[_Hosting], unmatched: list[int],
                    cost: int) -> None:
            nonlocal best
            self._steps += 1
            if best is not None and (cost >= best[0] or self._steps > _SEARCH_LIMIT):
                return
            if i == len(order):
                best = (cost, list(chosen), list(unmatched))
                return
            m = order[i]
            for hosting in candidates[m]:
                if hosting.host in used:
                    continue
                used.add(hosting.host)
                chosen.append(hosting)
                descend(i + 1, used, chosen, unmatched, cost + len(hosting.problems))
                chosen.pop()
                used.discard(hosting.host)
            unmatched.append(m)
            descend(i + 1, used, chosen, unmatched, cost + _UNMATCHED_COST)
            unmatched.pop()

        descend(0, set(), [], [], 0)
        assert best is not None
        return sorted(best[1], key=lambda h: h.meld), sorted(best[2])

    def unmatched_problems(
        self, unmatched: list[int], hostings: list[_Hosting]
    ) -> Iterator[TurnProblem]:
        host_of = {h.host: h.meld for h in hostings}
        for m in unmatched:
            meld = self.before[m]
            naturals = _naturals(meld)
            joined = [
                a
                for a, bag in enumerate(self.after_bags)
                if a in host_of and naturals + _naturals(self.before[host_of[a]]) <= bag
            ]
            if joined:
                other = self.before[host_of[joined[0]]]
                where = self.after[joined[0]]
                yield TurnProblem(
                    "melds_joined",
                    f"{format_items(meld)} and {format_items(other)} were joined into"
                    f" {format_items(where)}: melds on the table may only be extended, not"
                    " combined",
                    tuple(meld),
                )
                continue
            places = [
                format_items(self.after[a])
                for a, bag in enumerate(self.after_bags)
                if bag & naturals
            ]
            lies = "; its items now lie in " + ", ".join(places) if places else ""
            borrow = (
                " (Borgen takes cards only from one's own meld of more than three cards)"
                if self.borrowing
                else ""
            )
            yield TurnProblem(
                "meld_split",
                f"{format_items(meld)} was split or had items removed{lies}: melds on the"
                f" table may only be extended at their ends, never taken apart{borrow}",
                tuple(meld),
            )

    def hosting(self, m: int, a: int) -> _Hosting | None:
        """How before-meld ``m`` lies in after-meld ``a``; None if ``a`` cannot hold it
        (some of its naturals are not there and may not be borrowed)."""
        meld = self.before[m]
        naturals = _naturals(meld)
        removed = naturals - self.after_bags[a]
        problems: list[TurnProblem] = []
        kept_meld = meld
        if removed:
            if not (self.borrowing and m in self.own_melds) or removed == naturals:
                return None
            remaining: list[Item] = []
            taken: Bag = Counter(removed)
            for item in meld:
                if taken[item]:
                    taken[item] -= 1
                else:
                    remaining.append(item)
            kept_meld = tuple(remaining)
            # [american-rummy] Borgen "nur dann erlaubt, wenn die Figur, von der die Karte
            # 'ausgeliehen' wird, aus mehr als drei Karten besteht"; what is left must
            # still be a meld
            if len(meld) <= 3 or not self.variant.analyse(kept_meld).valid:
                problems.append(
                    TurnProblem(
                        "borrowing_not_allowed",
                        f"{format_items(_expand(removed))} cannot be borrowed from"
                        f" {format_items(meld)}: only from a meld of more than three cards"
                        " that stays a legal meld",
                        tuple(meld),
                    )
                )
        added = self.after_bags[a] - _bag(kept_meld)
        structure = self.structure(kept_meld, a)
        problems.extend(structure.problems)
        return _Hosting(
            meld=m,
            host=a,
            problems=tuple(problems),
            exchanges=structure.exchanges,
            added=added,
            added_jokers=structure.added_jokers,
            borrowed=removed,
            added_value=structure.added_value,
        )

    def structure(self, meld: Meld, a: int) -> _Structure:
        """The best reading of ``meld`` inside after-meld ``a``: its items where they
        were, each joker standing for what it stood for, or exchanged."""
        host = self.after[a]
        jokers_before = _joker_count(meld)
        jokers_after = _joker_count(host)
        old_readings = self.readings(meld)
        new_readings = self.analyses_after[a].readings
        if not old_readings or not new_readings:
            # an illegal meld is reported as such and cannot say what its jokers stand
            # for, so nothing can have been exchanged in it: a joker gone is a joker taken
            problems = (
                (self.joker_removed_problem(meld, host),) if jokers_after < jokers_before else ()
            )
            return _Structure(problems, (), max(0, jokers_after - jokers_before), 0)
        best: _Structure | None = None
        for old in old_readings:
            for new in new_readings:
                outcome = self.reading_pair(meld, host, old, new)
                if outcome is not None and (
                    best is None or len(outcome.problems) < len(best.problems)
                ):
                    best = outcome
        if best is not None:
            return best
        return _Structure(
            (
                TurnProblem(
                    "joker_meaning_changed",
                    f"{format_items(meld)} cannot be read inside {format_items(host)} as it"
                    " lay: a meld may be extended but not rebuilt, and a joker keeps what it"
                    " stands for",
                    tuple(host),
                ),
            ),
            (),
            max(0, jokers_after - jokers_before),
            0,
        )

    def reading_pair(
        self, meld: Meld, host: Meld, old: Reading, new: Reading
    ) -> _Structure | None:
        """``old`` (the meld's reading) inside ``new`` (the host's); None if the two do
        not fit (a set became a run, another rank or suit, items moved)."""
        if old.kind is not new.kind:
            return None
        if old.kind is MeldKind.SET:
            if old.rank != new.rank:
                return None
            return self.set_pair(meld, host, old, new)
        if old.suit != new.suit:
            return None
        return self.run_pair(meld, host, old, new)

    def run_pair(self, meld: Meld, host: Meld, old: Reading, new: Reading) -> _Structure | None:
        position_of = {slot.item: slot.position for slot in new.slots if not slot.is_joker}
        if any(s.item not in position_of for s in old.slots if not s.is_joker):
            return None
        # the meld's items keep their places: one shift for all (an ace low before the
        # turn may be counted 13 higher where runs go round the corner)
        offsets = {position_of[s.item] - s.position for s in old.slots if not s.is_joker}
        if len(offsets) != 1:
            return None
        offset = offsets.pop()
        by_position = {slot.position: slot for slot in new.slots}
        old_positions = {slot.position + offset for slot in old.slots}
        joker_positions = {slot.position + offset for slot in old.slots if slot.is_joker}
        replaced: list[Natural] = []
        vacated: list[int] = []
        for p in sorted(joker_positions):
            slot = by_position.get(p)
            if slot is None:
                vacated.append(p)
            elif not slot.is_joker:
                replaced.append(slot.item)  # type: ignore[arg-type]
        added_positions = [
            slot.position
            for slot in new.slots
            if slot.is_joker and slot.position not in joker_positions
        ]
        problems: list[TurnProblem] = []
        exchanges: tuple[tuple[Natural, ...], ...] = ()
        moved = len(vacated)
        if self.rules.exchange:
            exchanges = tuple((tile,) for tile in replaced)
        else:
            moved += len(replaced)
        paired = min(moved, len(added_positions))
        if paired:
            # [remi] "nicht möglich, den Joly so umzulegen, dass er eine blaue 8 ersetzt";
            # [rum500] "er darf den Joker nicht in eine 5 [verwandeln]"
            problems.append(
                TurnProblem(
                    "joker_meaning_changed",
                    f"a joker of {format_items(meld)} was moved inside {format_items(host)}:"
                    " a joker keeps the place and item it stands for",
                    tuple(host),
                )
            )
        unpaired = moved - paired
        if unpaired:
            gone_replaced = (
                min(unpaired, len(replaced)) if not self.rules.exchange else 0
            )
            if gone_replaced:
                problems.append(self.no_exchange_problem(meld, host, tuple(replaced)))
            if unpaired - gone_replaced:
                problems.append(self.joker_removed_problem(meld, host))
        added_value = sum(
            self.variant.slot_value(new, slot)
            for slot in new.slots
            if slot.position not in old_positions or slot.item in replaced
        )
        return _Structure(tuple(problems), exchanges, len(added_positions) - paired, added_value)

    def set_pair(self, meld: Meld, host: Meld, old: Reading, new: Reading) -> _Structure:
        jokers_before = old.joker_count
        jokers_after = new.joker_count
        added_naturals = _expand(_naturals(host) - _naturals(meld))
        per_slot = self.variant.slot_value(new, new.slots[0])
        added_value = per_slot * max(0, len(host) - len(meld) + (jokers_before - jokers_after))
        if jokers_after >= jokers_before:
            return _Structure((), (), jokers_after - jokers_before, added_value)
        freed = jokers_before - jokers_after
        if not self.rules.exchange:
            problem = (
                self.no_exchange_problem(meld, host, added_naturals)
                if added_naturals
                else self.joker_removed_problem(meld, host)
            )
            return _Structure((problem,), (), 0, added_value)
        if len(added_naturals) < freed:
            return _Structure((self.joker_removed_problem(meld, host),), (), 0, added_value)
        if self.rules.set_exchange_needs_four and new.natural_count < 4:
            # [remi] rule 7: "dann darf man diesen Stein an den Satz anlegen ..., aber man
            # darf den Joly nicht nehmen"; [rommee] DSkV: "erst dann ausgetauscht werden
            # darf, wenn der Satz mit vier Karten gleichen Ranges komplettiert wird"
            return _Structure(
                (
                    TurnProblem(
                        "joker_exchange_incomplete",
                        f"the joker of {format_items(meld)} may be taken only when the set is"
                        f" completed to four; {format_items(host)} is not",
                        tuple(host),
                    ),
                ),
                (),
                0,
                added_value,
            )
        tiles: list[tuple[Natural, ...]] = [(t,) for t in added_naturals[: freed - 1]]  # type: ignore[misc]
        tiles.append(tuple(added_naturals[freed - 1 :]))  # type: ignore[arg-type]
        return _Structure((), tuple(tiles), 0, added_value)

    def no_exchange_problem(
        self, meld: Meld, host: Meld, tiles: tuple[Item, ...]
    ) -> TurnProblem:
        # [rum500] "Ein Spieler, der einen Joker verschmilzt, muss klarstellen, welchen Rang
        # er darstellt. Dies kann anschließend nicht mehr geändert werden."
        return TurnProblem(
            "joker_exchange_not_allowed",
            f"{format_items(tiles)} took the place of the joker in {format_items(meld)}:"
            f" in {self.variant.name} a melded joker stays where it is",
            tuple(host),
        )

    @staticmethod
    def joker_removed_problem(meld: Meld, host: Meld) -> TurnProblem:
        return TurnProblem(
            "joker_split",
            f"a joker was taken out of {format_items(meld)} (now {format_items(host)}) without"
            " laying the item it stands for: melds may only be extended",
            tuple(meld),
        )

    # -- the initial meld -------------------------------------------------------------
    def opening(self, hostings: list[_Hosting], new: list[int]) -> tuple[int, list[TurnProblem]]:
        """The opening is the new melds, all laid from the hand; laying off and
        exchanging jokers wait for a later turn ([remi] "Diese Möglichkeiten hat man
        erst dann, wenn man nach seiner Anfangsmeldung wieder an der Reihe ist";
        [rommee] "erst nach Auslage der Erstmeldung"; [american] "Nachdem Sie Ihre
        Anfangskombination ... gelegt haben")."""
        problems: list[TurnProblem] = []
        foot = self.foot
        for hosting in hostings:
            meld = self.before[hosting.meld]
            host = self.after[hosting.host]
            if hosting.exchanges:
                tiles = tuple(t for ex in hosting.exchanges for t in ex)
                problems.append(
                    TurnProblem(
                        "exchange_before_opening",
                        f"{format_items(tiles)} exchanged a joker of {format_items(meld)}"
                        " before the initial meld was made: jokers may be taken only in a"
                        " later turn",
                        tiles,
                    )
                )
            spent: Bag = Counter(t for ex in hosting.exchanges for t in ex)
            laid_off = hosting.added - spent
            if laid_off and not foot:
                problems.append(
                    TurnProblem(
                        "laid_off_before_opening",
                        f"{format_items(_expand(laid_off))} laid off on {format_items(meld)}"
                        f" (now {format_items(host)}) before the initial meld was made:"
                        " laying off is allowed only in a later turn",
                        _expand(laid_off),
                    )
                )
        melds = [self.after[a] for a in new if self.analyses_after[a].valid]
        result = self.variant.check_initial_meld(melds)
        value = result.value
        if foot:
            value += sum(h.added_value for h in hostings)
            if value < FOOT_MINIMUM:
                problems.append(
                    TurnProblem(
                        "initial_too_low",
                        f"a Foot needs the 14 tiles ({format_items(self.laid)}) to count at"
                        f" least {FOOT_MINIMUM}, not {value}",
                        tuple(self.laid),
                    )
                )
            return value, problems
        if new and not result.meets:
            what = "; ".join(result.problems) or "the initial meld is too low"
            shown = ", ".join(format_items(m) for m in melds) or "no legal meld"
            problems.append(
                TurnProblem(
                    "initial_too_low",
                    f"{what} ({shown})",
                    tuple(item for a in new for item in self.after[a]),
                )
            )
        return value, problems

    # -- freed jokers -------------------------------------------------------------------
    def freed_jokers(
        self, hostings: list[_Hosting], new: list[int], missing_jokers: int
    ) -> tuple[list[TurnProblem], int]:
        """Where the jokers freed by exchange went.  Jokers look alike, so jokers laid
        from the hand are taken to be the ones added to old melds, and freed ones the
        ones in new melds, wherever that explains the table."""
        freed = sum(len(h.exchanges) for h in hostings)
        if not freed:
            return [], 0
        problems: list[TurnProblem] = []
        tiles = tuple(t for h in hostings for ex in h.exchanges for t in ex)
        gone = min(freed, missing_jokers)
        if gone:
            # [rommee] "darf nicht in das eigene Blatt aufgenommen werden"
            problems.append(
                TurnProblem(
                    "freed_joker_unused",
                    f"the joker freed by {format_items(tiles)} must be melded again at once;"
                    " it may not go to the hand",
                    (*tiles, JOKER),
                )
            )
        on_table = freed - gone
        added_to_old = sum(h.added_jokers for h in hostings)
        in_old = min(on_table, max(0, added_to_old - self.laid_bag[JOKER]))
        if in_old:
            same = [h for h in hostings if h.exchanges and h.added_jokers]
            host = self.after[(same or [h for h in hostings if h.added_jokers])[0].host]
            if same:
                problems.append(
                    TurnProblem(
                        "freed_joker_same_meld",
                        f"the joker freed by {format_items(tiles)} was put back into"
                        f" {format_items(host)}: it must go into a new meld",
                        tuple(host),
                    )
                )
            else:
                problems.append(
                    TurnProblem(
                        "freed_joker_not_new_group",
                        f"the joker freed by {format_items(tiles)} was added to"
                        f" {format_items(host)}, a meld that lay on the table: it must go"
                        " into a new meld (\"in einer neuen Meldung\")",
                        tuple(host),
                    )
                )
        in_new = on_table - in_old
        if in_new and self.rules.freed_with_hand_tiles:
            # [remi] "vorausgesetzt, man gebraucht ihn sofort mit zwei Steinen vom eigenen
            # Ständer, um einen neuen Satz oder eine neue Folge zu melden"
            capacity = sum(
                min(_joker_count(self.after[a]), max(0, len(self.after[a]) - 2)) for a in new
            )
            if capacity < in_new:
                shown = [self.after[a] for a in new if _joker_count(self.after[a])]
                items = tuple(i for m in shown for i in m) or (JOKER,)
                problems.append(
                    TurnProblem(
                        "freed_joker_without_hand_tiles",
                        f"each joker freed by {format_items(tiles)} must form a new meld with"
                        f" two or more tiles from the rack; {format_items(items)} does not",
                        items,
                    )
                )
        return problems, gone

    # -- Borgen (American Rummy) --------------------------------------------------------
    def borrowed_problems(self, hostings: list[_Hosting], new: list[int]) -> list[TurnProblem]:
        borrowed: Bag = sum((h.borrowed for h in hostings), Counter())
        if not borrowed:
            return []
        # [american-rummy] "zur Bildung neuer Kombinationen mit Karten aus seinem Blatt"
        in_new: Bag = Counter()
        for a in new:
            share = borrowed & self.after_bags[a]
            if share and self.after_bags[a] - share:
                in_new += share
        stray = borrowed - in_new
        if not stray:
            return []
        return [
            TurnProblem(
                "borrowed_not_in_new_meld",
                f"{format_items(_expand(stray))} borrowed from a meld must form a new meld"
                " together with cards from the hand",
                _expand(stray),
            )
        ]

    # -- the discard pile ---------------------------------------------------------------
    def discard_problems(self, hostings: list[_Hosting], new: list[int]) -> list[TurnProblem]:
        if not self.discard_taken:
            return []
        problems: list[TurnProblem] = []
        taken = self.discard_taken
        deepest = taken[0]
        new_bag: Bag = sum((self.after_bags[a] for a in new), Counter())
        laid_off: Bag = sum((h.added for h in hostings), Counter())
        in_new = new_bag[_bare(deepest)] >= 1 and self.laid_bag[_bare(deepest)] >= 1
        melded = in_new or (laid_off[_bare(deepest)] >= 1 and self.laid_bag[_bare(deepest)] >= 1)
        rules = self.rules
        if isinstance(self.variant, Remi) and self.rack_size is not None and self.rack_size <= 2:
            # [remi] "Wenn man nur noch einen oder zwei Steine hat, darf man keinen Stein der
            # Reihe der abgelegten Steine aufnehmen"
            problems.append(
                TurnProblem(
                    "discard_with_short_rack",
                    f"{format_items(taken)} taken from the discards with only"
                    f" {_plural(self.rack_size, 'tile')} on the rack: such a player draws"
                    " from the wall",
                    taken,
                )
            )
        if not self.opened and rules.discard_before_opening != "allowed":
            if rules.discard_before_opening == "forbidden" or len(taken) > 1:
                why = (
                    "\"nicht erlaubt, einen abgelegten Stein aufzunehmen, um ... die"
                    " Anfangsmeldung ... zu machen\""
                    if isinstance(self.variant, Remi)
                    else "\"Ab dem nächsten Spielzug dürfen Sie einen soeben vom vorigen Spieler"
                    " abgelegten Spielstein aufnehmen\""
                )
                code = "discard_used_for_opening" if in_new else "discard_taken_before_opening"
                problems.append(
                    TurnProblem(
                        code,
                        f"{format_items(taken)} taken from the discards before the initial"
                        f" meld: until then a player draws from the stock ({why})",
                        taken,
                    )
                )
            elif not in_new:
                problems.append(
                    TurnProblem(
                        "discard_not_melded",
                        f"{format_items(taken)} taken from the discards to open must be used"
                        " at once in the initial meld",
                        taken,
                    )
                )
            return problems
        if len(taken) > 1:
            if rules.deeper_discard == "never":
                problems.append(
                    TurnProblem(
                        "discard_below_top",
                        f"{format_items(taken)}: only the top discard may be taken in"
                        f" {self.variant.name}",
                        taken,
                    )
                )
            elif rules.deeper_discard == "new_meld" and not in_new:
                # [remi] rule 4: "darf man diesen Stein aufnehmen und die Meldung machen"
                problems.append(
                    TurnProblem(
                        "discard_not_melded",
                        f"{deepest} was taken from deep in the discards and must complete a"
                        " new meld with tiles from the rack at once",
                        (deepest,),
                    )
                )
            elif rules.deeper_discard == "melded" and not melded:
                # [rum500] "Sie können eine Karte von unten im Ablagestapel nur nehmen, wenn:
                # Sie die Karte sofort verschmelzen"
                problems.append(
                    TurnProblem(
                        "discard_not_melded",
                        f"{deepest} was taken from below the top of the discard pile and must"
                        " be melded at once, in a new meld or laid off",
                        (deepest,),
                    )
                )
        elif rules.discard_must_meld and not melded:
            # [rommee] "nur dann die oberste Karte des Abwurfstapels aufnehmen darf, wenn er
            # sie sofort in einer Meldung auslegt"
            problems.append(
                TurnProblem(
                    "discard_not_melded",
                    f"{deepest} taken from the discard pile must be laid at once",
                    (deepest,),
                )
            )
        return problems


def check_turn(
    variant: Variant,
    before: Sequence[Sequence[Item]],
    after: Sequence[Sequence[Item]],
    laid: Sequence[Item],
    *,
    opened: bool,
    discard_taken: Item | Sequence[Item] | None = None,
    borrowing: bool = False,
    own_melds: Collection[int] = (),
    rack_size: int | None = None,
) -> TurnCheck:
    """Check one player's turn.

    ``before``: the melds on the table at the start of the turn; ``after``: at
    its end; ``laid``: every item the player put on the table from his hand,
    including items just taken from the discard pile and melded at once;
    ``opened``: the player made his initial meld in an earlier turn.

    The keywords matter only where the table is never rearranged:

    * ``discard_taken``: what the player took from the discard pile this turn,
      deepest first (a single item: the top discard); None or empty: he drew
      from the stock.
    * ``borrowing``: American Rummy's agreed "Borgen"; ``own_melds`` are the
      indices into ``before`` of the player's own melds, the only ones he may
      borrow from.
    * ``rack_size``: items on the rack at the start of the turn, before drawing
      (Remi: "Wenn man nur noch einen oder zwei Steine hat, darf man keinen
      Stein der Reihe der abgelegten Steine aufnehmen").

    Rearranging variants (``sabra``, ``raeuber``), where the rule text is
    silent, follow what a demanding table expects:

    * The initial meld is the set of after-melds made of laid items only,
      chosen to be worth the most.  With ``rearrange_on_opening_turn`` (Sabra's
      default) other laid items may also go onto the table in that turn;
      without it, and always in Räuber-Rommé, the melds on the table must stay
      as they were.  Hand-Rommé's waiver of the minimum is not applied: it
      depends on the whole hand going down, which this check does not see.
    * Under ``freed_joker="with_hand"`` the joker's group must also be new
      (the stricter readings include the Lemada one); the exchanged tile does
      not count as one of its hand tiles.
    * With ``set_joker_needs_both`` the set a joker leaves must be complete
      with four items (two jokers: three colours plus the joker that stays).

    Extend-only variants (``remi``, ``rummikub-american``,
    ``rummikub-international``, ``rommee``, ``rum500``, ``american-rummy``):
    every before-meld must lie whole in an after-meld of its own, extended at
    its ends (runs) or completed (sets), each joker where it stood and standing
    for what it stood for unless exchanged as the variant allows; every other
    after-meld is new and made of laid items (and freed jokers).  Where the
    texts are silent:

    * Laying nothing is a legal turn here (draw and discard); before the
      initial meld, laying off and exchanging wait for a later turn.
    * [american] "in einer 'neuen' eigenen Kombination" is read strictly: the
      freed joker goes into a new meld with two or more items from the rack,
      as [remi] rule 5 says outright.  [rommee] asks only for a new meld.
    * A set's joker is freed by any one missing colour in American and
      International Rummikub (as in Sabra) and in Rommé, but only by completing
      the set to four in Remi (rules 6 and 7) and in Rommé under the option
      ``set_joker_exchange_needs_four`` (DSkV).
    * [international] Foot: a player who has not opened and lays 14 tiles at
      once may lay off on other melds; the 14 tiles must count 50.
    * Closed International hands that are not melds (Mosaik, seven pairs) are
      judged by :mod:`engine.international`, not here.
    * Wiener Rummy lays nothing on the table during play: any change is a
      problem (``no_laying_out``).

    An invalid turn is undone: ``restored_table`` is the table before it.
    Only Sabra names a penalty draw.
    """
    before_melds = tuple(tuple(meld) for meld in before)
    after_melds = tuple(tuple(meld) for meld in after)
    taken: tuple[Item, ...]
    if discard_taken is None:
        taken = ()
    elif isinstance(discard_taken, (Tile, Card, Joker)):
        taken = (discard_taken,)
    else:
        taken = tuple(discard_taken)
    own = frozenset(own_melds)
    for index in own:
        if not 0 <= index < len(before_melds):
            raise TurnError(
                f"own_melds names meld {index!r}, but the table before the turn holds"
                f" {_plural(len(before_melds), 'meld')}"
            )
    if borrowing and not isinstance(variant, AmericanRummy):
        raise TurnError(f"borrowing (Borgen) is a rule of american-rummy, not {variant.id!r}")
    if variant.rearrangement:
        if taken:
            raise TurnError(
                f"{variant.id!r} is played without a discard pile, so nothing can be taken"
                f" from it ({format_items(taken)!r})"
            )
        judge = _TurnJudge(variant, before_melds, after_melds, tuple(laid), opened)
        return judge.check()
    return _ExtendJudge(
        variant, before_melds, after_melds, tuple(laid), opened, taken, borrowing, own, rack_size
    ).check()
