"""Reading a meld: is it a set or a run, and what does each joker stand for.

The functions here know only the variant's *meld rules* (`MeldRules`), not its
scoring.  A meld may have several readings (``R5 JK JK`` is a set of fives or
the run R5 R6 R7); every reading is returned so the caller can report the
ambiguity instead of guessing.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tabletop.engine.items import (
    Card,
    Family,
    Item,
    Joker,
    Natural,
    NotationError,
    Tile,
    format_items,
    natural,
)


class MeldKind(enum.Enum):
    SET = "set"
    RUN = "run"


ACE_HIGH_POSITION = 14


@dataclass(frozen=True)
class Slot:
    """One item of a reading and what it plays as.

    ``position`` is the place in the run (1..13, 14 for an ace played high, up
    to 26 where runs may wrap round the ace) or, in a set, the set's rank.
    ``suit`` is None for a joker in a set: it stands for whichever suit is
    missing, and any of them may later replace it.
    """

    item: Item
    rank: int
    position: int
    suit: int | None

    @property
    def is_joker(self) -> bool:
        return self.item.is_joker


@dataclass(frozen=True)
class Reading:
    """One way to read a meld as a set or a run."""

    kind: MeldKind
    slots: tuple[Slot, ...]
    family: Family
    reordered: bool = False

    @property
    def rank(self) -> int:
        """The set's rank (for runs, the rank of the lowest position)."""
        return self.slots[0].rank

    @property
    def suit(self) -> int | None:
        """A run's suit index (None for sets)."""
        return self.slots[0].suit if self.kind is MeldKind.RUN else None

    @property
    def joker_count(self) -> int:
        return sum(slot.is_joker for slot in self.slots)

    @property
    def natural_count(self) -> int:
        return len(self.slots) - self.joker_count

    @property
    def missing_suits(self) -> tuple[int, ...]:
        """For a set: the suits no natural item shows, in suit order."""
        present = {slot.suit for slot in self.slots if not slot.is_joker}
        return tuple(s for s in range(4) if s not in present)

    def joker_meanings(self) -> tuple[Natural, ...]:
        """What each joker stands for, in slot order (sets: missing suits in order).

        Taken from :meth:`resolved_items`, so a bare joker in a set never gets
        a suit another joker of the set is declared as (``JK R5 JK=K5``).
        """
        return tuple(
            item.stands_for
            for item in self.resolved_items()
            if isinstance(item, Joker) and item.stands_for is not None
        )

    def resolved_items(self) -> tuple[Item, ...]:
        """The items with every joker written as ``JK=<item>``."""
        declared = {
            slot.item.stands_for.suit_index
            for slot in self.slots
            if isinstance(slot.item, Joker) and slot.item.stands_for is not None
        }
        spare = iter(s for s in self.missing_suits if s not in declared)
        out: list[Item] = []
        for slot in self.slots:
            if not slot.is_joker:
                out.append(slot.item)
                continue
            assert isinstance(slot.item, Joker)
            if slot.item.stands_for is not None:
                out.append(slot.item)
            elif slot.suit is not None:
                out.append(Joker(natural(self.family, slot.rank, slot.suit)))
            else:
                out.append(Joker(natural(self.family, slot.rank, next(spare))))
        return tuple(out)

    def naturals(self) -> tuple[Natural, ...]:
        return tuple(slot.item for slot in self.slots if not slot.is_joker)  # type: ignore[misc]

    def __str__(self) -> str:
        return format_items(self.resolved_items())


@dataclass(frozen=True)
class MeldRules:
    """What makes a meld legal in one variant (no scoring here)."""

    family: Family
    ace_high: bool = True
    """An ace/1 may follow the king/13 (Q-K-A, 12-13-1)."""
    ace_wrap: bool = False
    """Runs may go round the corner (K-A-2)."""
    min_size: int = 3
    joker_check: Callable[[MeldKind, tuple[Slot, ...]], str | None] | None = field(
        default=None, compare=False
    )
    """Variant-specific joker restriction: returns a reason, or None if allowed."""
    joker_place_shows_meaning: bool = False
    """The rule text makes a joker's place in a run say what it stands for ([sabra] "kann
    der Joker nicht an das andere Ende gelegt werden", [remi] "muss es klar sein, welchen
    Stein der Joly ersetzt", [rum500] "indem Sie die Karten in dieser Anordnung ablegen,
    geben Sie dies an"): a run whose joker lies out of place is still the run it can form,
    with a hint to move the joker."""

    @property
    def max_position(self) -> int:
        if self.ace_wrap:
            return 26
        return ACE_HIGH_POSITION if self.ace_high else 13

    @property
    def max_run_length(self) -> int:
        return 13 if self.ace_wrap else self.max_position


@dataclass(frozen=True)
class MeldAnalysis:
    """All readings of a meld, or the reasons there are none."""

    items: tuple[Item, ...]
    readings: tuple[Reading, ...]
    reasons: tuple[str, ...]
    hint: str | None = None
    """Advice that never makes the meld invalid: where a joker's place matters and it
    lies out of place, where to move it."""

    @property
    def valid(self) -> bool:
        return bool(self.readings)

    @property
    def ambiguous(self) -> bool:
        return len(self.readings) > 1

    @property
    def reason(self) -> str | None:
        if self.readings:
            return None
        return "; ".join(self.reasons) if self.reasons else "not a set or a run"


def _rank_at(position: int) -> int:
    return (position - 1) % 13 + 1


def _position_matches(item: Natural, position: int, rules: MeldRules) -> bool:
    if _rank_at(position) != item.rank:
        return False
    # 14 is the ace played high, which needs ace_high (or wrapping runs)
    return not (position == ACE_HIGH_POSITION and not rules.ace_high and not rules.ace_wrap)


def _check_family(items: Sequence[Item], family: Family) -> str | None:
    for item in items:
        if item.family is not None and item.family is not family:
            expected = "tiles" if family is Family.TILES else "cards"
            return f"{item} is not one of this game's {expected}"
    return None


def _declared(item: Item) -> Natural | None:
    return item.stands_for if isinstance(item, Joker) else None


def _naturals(items: Sequence[Item]) -> list[Natural]:
    return [item for item in items if isinstance(item, (Tile, Card))]


def _run_starts(n: int, rules: MeldRules) -> range:
    """First positions a run of ``n`` items may start at.

    Where runs wrap round the ace a start past 13 is the same run as the start
    13 lower, so starts stop at 13 (else ``2S 3S 4S`` had two readings and
    ``AS 2S 3S`` one with the ace low and one with it high).
    """
    return range(1, min(rules.max_position - n + 1, 13) + 1)


def _set_reading(items: Sequence[Item], rules: MeldRules) -> tuple[Reading | None, str]:
    naturals = _naturals(items)
    ranks = {item.rank for item in naturals} | {
        d.rank for d in map(_declared, items) if d is not None
    }
    if len(ranks) > 1:
        what = "number" if rules.family is Family.TILES else "rank"
        return None, f"a set needs one {what}"
    rank = ranks.pop()
    suits_seen: set[int] = set()
    for shown in naturals + [d for d in map(_declared, items) if d is not None]:
        if shown.suit_index in suits_seen:
            what = "colour" if rules.family is Family.TILES else "suit"
            return None, f"a set cannot hold two of one {what} ({shown})"
        suits_seen.add(shown.suit_index)
    if len(items) > 4:
        fifth = _rank_word(rank, rules)
        return None, f"a set has at most four items, not {len(items)} (no fifth {fifth})"
    slots = []
    for item in items:
        declared = _declared(item)
        if item.is_joker:
            slots.append(Slot(item, rank, rank, None if declared is None else declared.suit_index))
        else:
            assert isinstance(item, (Tile, Card))
            slots.append(Slot(item, rank, rank, item.suit_index))
    return Reading(MeldKind.SET, tuple(slots), rules.family), ""


def _rank_word(rank: int, rules: MeldRules) -> str:
    if rules.family is Family.CARDS:
        return {1: "ace", 11: "jack", 12: "queen", 13: "king"}.get(rank, str(rank))
    return str(rank)


def _run_suit(items: Sequence[Item], rules: MeldRules) -> tuple[int | None, str]:
    suits = {item.suit_index for item in _naturals(items)}
    suits |= {d.suit_index for d in map(_declared, items) if d is not None}
    if len(suits) > 1:
        what = "colour" if rules.family is Family.TILES else "suit"
        return None, f"a run needs one {what}"
    return (suits.pop() if suits else None), ""


def _ordered_runs(items: Sequence[Item], suit: int, rules: MeldRules) -> list[tuple[Slot, ...]]:
    """Runs that read the items in the given order, lowest first."""
    found = []
    n = len(items)
    for start in _run_starts(n, rules):
        slots = []
        for offset, item in enumerate(items):
            position = start + offset
            target = _declared(item) if item.is_joker else item
            if target is not None and not _position_matches(target, position, rules):  # type: ignore[arg-type]
                break
            slots.append(Slot(item, _rank_at(position), position, suit))
        else:
            found.append(tuple(slots))
    return found


def _unordered_runs(items: Sequence[Item], suit: int, rules: MeldRules) -> list[tuple[Slot, ...]]:
    """Runs made of the items in any order (for rows the camera saw jumbled)."""
    fixed = [item for item in items if not (item.is_joker and _declared(item) is None)]
    bare = [item for item in items if item.is_joker and _declared(item) is None]
    n = len(items)
    found = []
    for start in _run_starts(n, rules):
        window = list(range(start, start + n))
        taken: dict[int, Item] = {}
        ok = True
        for item in fixed:
            target = _declared(item) if item.is_joker else item
            assert target is not None
            spots = [p for p in window if p not in taken and _position_matches(target, p, rules)]  # type: ignore[arg-type]
            if not spots:
                ok = False
                break
            taken[spots[0]] = item
        if not ok:
            continue
        jokers = iter(bare)
        slots = tuple(
            Slot(taken[p] if p in taken else next(jokers), _rank_at(p), p, suit) for p in window
        )
        found.append(slots)
    return found


def analyse_meld(items: Sequence[Item], rules: MeldRules) -> MeldAnalysis:
    """Every legal reading of ``items`` as a set or a run under ``rules``."""
    items = tuple(items)
    reasons: list[str] = []
    if not items:
        return MeldAnalysis(items, (), ("an empty meld",))
    problem = _check_family(items, rules.family)
    if problem:
        return MeldAnalysis(items, (), (problem,))
    if not any(not item.is_joker for item in items):
        return MeldAnalysis(items, (), ("a meld needs at least one item that is not a joker",))
    if len(items) < rules.min_size:
        return MeldAnalysis(
            items, (), (f"a meld needs at least {rules.min_size} items, not {len(items)}",)
        )

    candidates: list[Reading] = []
    set_reading, why_not_set = _set_reading(items, rules)
    if set_reading is not None:
        candidates.append(set_reading)
    else:
        reasons.append(f"not a set: {why_not_set}")

    suit, why_not_run = _run_suit(items, rules)
    run_readings: list[Reading] = []
    if suit is not None:
        if len(items) > rules.max_run_length:
            why_not_run = f"a run has at most {rules.max_run_length} items, not {len(items)}"
        else:
            forward = _ordered_runs(items, suit, rules)
            naturals_count = sum(not item.is_joker for item in items)
            backward = (
                _ordered_runs(items[::-1], suit, rules)
                if naturals_count + sum(_declared(i) is not None for i in items) >= 2
                else []
            )
            for slots in forward + backward:
                run_readings.append(Reading(MeldKind.RUN, slots, rules.family))
            # A jumbled row is read as a run only when nothing reads in table
            # order: "JK B1 JK" in Sabra is a set of ones, not B1 B2 B3 moved.  Players
            # read "R12 R13 JK" as R11 R12 R13 wherever the joker lies, so a bare joker
            # out of place is still the run it can form (see ``joker_place_hint``).
            if not run_readings and set_reading is None:
                for slots in _unordered_runs(items, suit, rules):
                    run_readings.append(Reading(MeldKind.RUN, slots, rules.family, reordered=True))
            if not run_readings:
                why_not_run = _why_not_run(items, rules)
    elif not why_not_run:
        why_not_run = "a run needs one colour"
    if not run_readings:
        reasons.append(f"not a run: {why_not_run}")
    candidates.extend(_dedupe(run_readings))

    readings = []
    for reading in candidates:
        objection = rules.joker_check(reading.kind, reading.slots) if rules.joker_check else None
        if objection:
            reasons.append(f"not a {reading.kind.value}: {objection}")
        else:
            readings.append(reading)
    return MeldAnalysis(
        items,
        tuple(readings),
        tuple(dict.fromkeys(reasons)),
        joker_place_hint(items, readings, rules),
    )


def joker_place_hint(
    items: Sequence[Item], readings: Sequence[Reading], rules: MeldRules
) -> str | None:
    """Where a joker lying out of place should go, in a variant whose rule text makes its
    place say what it stands for; None where nothing need move."""
    if not rules.joker_place_shows_meaning or not readings:
        return None
    if not all(reading.reordered for reading in readings):
        return None
    if not any(item.is_joker and _declared(item) is None for item in items):
        return None
    laid = format_items(items)
    runs = " or ".join(str(reading) for reading in readings)
    if len(readings) == 1:
        return f"move the joker: {laid} is read as {runs}; lay it in that order"
    return (
        f"move the joker: {laid} can be {runs}; lay the joker where its item belongs"
        " (or correct it to JK=...)"
    )


def _why_not_run(items: Sequence[Item], rules: MeldRules) -> str:
    ranks = sorted(item.rank for item in _naturals(items))
    for a, b in itertools.pairwise(ranks):
        if a == b:
            return f"{_rank_word(a, rules)} appears twice"
    if 1 in ranks and not rules.ace_wrap:
        if rules.ace_high and any(r <= 12 for r in ranks if r != 1) and 13 in ranks:
            return "the 1 cannot stand in the middle (13-1-2 is not a run)"
        if not rules.ace_high and 13 in ranks:
            return "the 1 is only low in this game (12-13-1 is not a run)"
    return "the numbers do not follow each other" if rules.family is Family.TILES else (
        "the ranks do not follow each other"
    )


def _dedupe(readings: list[Reading]) -> list[Reading]:
    seen = set()
    out = []
    for reading in readings:
        by_position = sorted(reading.slots, key=lambda s: s.position)
        key = tuple((str(s.item), s.position) for s in by_position)
        if key not in seen:
            seen.add(key)
            out.append(reading)
    return out


def require_family(items: Sequence[Item], family: Family) -> None:
    problem = _check_family(items, family)
    if problem:
        raise NotationError(problem)
