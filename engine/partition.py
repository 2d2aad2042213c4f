"""Exact splitting of a handful of items into legal melds.

A depth-first search: take the lowest remaining item, try every legal meld
that contains it (drawn from what remains), recurse on the rest.  Because the
pivot is always the lowest remaining item, every split is found exactly once,
with its melds in a canonical order.  Results are memoised on the remaining
multiset.  This is exact and fast for a hand (10-15 items); it is not meant
for a whole table.

Legality is always decided by ``variant.analyse``, so the variant's joker
restrictions, ace rules and "no jokers in this game" all apply.  The search
only proposes candidates: sets of one rank in distinct suits (3..4 items) and
runs of consecutive positions in one suit (ace high or round the corner where
``variant.meld_rules`` allow it).

A *split* is a tuple of readings.  The same items read differently (``R5 JK
JK`` as a set of fives or as the run R5 R6 R7, or as R3 R4 R5) are different
splits, because what a joker stands for matters to scoring; ``best_split``
and ``can_be_melded`` only care which items are melded.

:class:`MeldPacking` is the optimiser's version of the same search, for racks of
30 items and rebuilt tables of 55: the best *set* of melds (some items may stay
out) for a score, on counts packed into one integer, with branch and bound, and
the best answer so far when the time budget runs out.  Its melds come from
``variant.analyse`` too, analysed once per variant and kept between calls.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tabletop.engine import budget, highs
from tabletop.engine.base import Variant
from tabletop.engine.items import JOKER, Family, Item, Joker, Natural, natural
from tabletop.engine.melds import MeldKind, MeldRules, Reading, Slot

__all__ = [
    "PartitionSearch",
    "best_split",
    "can_be_melded",
    "meld_partitions",
    "order_key",
    "sorted_items",
]

_Multiset = tuple[Item, ...]
"""A multiset of items as a tuple sorted by ``order_key``."""
_MeldKey = tuple[str, int, tuple[tuple[int, str, int, int], ...]]
"""Orders melds: kind, first position, items."""
_Candidate = tuple[Reading, _Multiset, _MeldKey]


def _meaning(item: Item) -> Natural | None:
    """The natural an item plays as: itself, a declared joker's tile, None for a bare joker."""
    if isinstance(item, Joker):
        return item.stands_for
    return item


def order_key(item: Item) -> tuple[int, str, int, int]:
    # Naturals first, then declared jokers, then bare jokers: a joker is never
    # the pivot while a natural remains, so every meld is found from a natural
    # (a meld of jokers alone is never legal).
    if isinstance(item, Joker):
        if item.stands_for is None:
            return (2, "", 0, 0)
        meant = item.stands_for
        return (1, meant.family.value, meant.suit_index, meant.rank)
    return (0, item.family.value, item.suit_index, item.rank)


def sorted_items(items: Sequence[Item]) -> _Multiset:
    return tuple(sorted(items, key=order_key))


def _rank_at(position: int) -> int:
    return (position - 1) % 13 + 1


@dataclass
class PartitionSearch:
    """One search over one variant, with its caches."""

    variant: Variant
    rules: MeldRules = field(init=False)
    _readings: dict[tuple[Item, ...], tuple[Reading, ...]] = field(default_factory=dict)
    _candidates: dict[_Multiset, tuple[_Candidate, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rules = self.variant.meld_rules

    # --- legality ---------------------------------------------------------
    def _analyse(self, ordered: tuple[Item, ...]) -> tuple[Reading, ...]:
        cached = self._readings.get(ordered)
        if cached is None:
            budget.check()
            cached = self.variant.analyse(ordered).readings
            self._readings[ordered] = cached
        return cached

    def _set_reading(self, ordered: tuple[Item, ...]) -> Reading | None:
        for reading in self._analyse(ordered):
            if reading.kind is MeldKind.SET:
                return reading
        return None

    def _run_reading(self, ordered: tuple[Item, ...], start: int) -> Reading | None:
        for reading in self._analyse(ordered):
            if (
                reading.kind is MeldKind.RUN
                and not reading.reordered
                and reading.slots[0].position == start
                and reading.slots[-1].position == start + len(ordered) - 1
            ):
                return reading
        return None

    # --- candidates -------------------------------------------------------
    def candidates(self, remaining: _Multiset) -> tuple[_Candidate, ...]:
        """Every legal meld holding ``remaining[0]``, with what is left after it and
        a key that orders melds."""
        budget.check()
        cached = self._candidates.get(remaining)
        if cached is not None:
            return cached
        found: list[_Candidate] = []
        pivot = remaining[0] if remaining else None
        meant = _meaning(pivot) if pivot is not None else None
        if pivot is not None and meant is not None and not pivot.is_joker:
            counts = Counter(remaining)
            counts[pivot] -= 1
            seen: set[_MeldKey] = set()
            for reading, used in [
                *self._sets(pivot, meant, counts),
                *self._runs(pivot, meant, counts),
            ]:
                # A run holding both copies of the pivot (1..13..1) is met from
                # either end; keep it once.
                key = (
                    reading.kind.value,
                    reading.slots[0].position,
                    tuple(order_key(item) for item in used),
                )
                if key not in seen:
                    seen.add(key)
                    found.append((reading, _subtract(remaining, used), key))
        result = tuple(found)
        self._candidates[remaining] = result
        return result

    def _sets(
        self, pivot: Item, meant: Natural, counts: Counter[Item]
    ) -> Iterator[tuple[Reading, tuple[Item, ...]]]:
        rank = meant.rank
        by_suit: list[list[Item]] = []
        for suit in range(4):
            if suit == meant.suit_index:
                continue
            options = [
                item
                for item, n in counts.items()
                if n > 0
                and (m := _meaning(item)) is not None
                and m.rank == rank
                and m.suit_index == suit
                and m.family is meant.family
            ]
            by_suit.append(sorted(options, key=order_key))
        bare = counts[JOKER]

        def choose(index: int, chosen: list[Item]) -> Iterator[list[Item]]:
            if index == len(by_suit):
                yield chosen
                return
            yield from choose(index + 1, chosen)
            for item in by_suit[index]:
                yield from choose(index + 1, [*chosen, item])

        for chosen in choose(0, []):
            for jokers in range(0, min(bare, 3 - len(chosen)) + 1):
                size = 1 + len(chosen) + jokers
                if size < self.rules.min_size or size > 4:
                    continue
                ordered = (pivot, *chosen, *([JOKER] * jokers))
                reading = self._set_reading(ordered)
                if reading is not None:
                    yield reading, ordered

    def _runs(
        self, pivot: Item, meant: Natural, counts: Counter[Item]
    ) -> Iterator[tuple[Reading, tuple[Item, ...]]]:
        rules = self.rules
        suit = meant.suit_index
        bare = counts[JOKER]
        # Which item types could fill each rank of this suit (natural or declared joker).
        fillers: dict[int, list[Item]] = {}
        for item, n in counts.items():
            m = _meaning(item)
            if n > 0 and m is not None and m.suit_index == suit and m.family is meant.family:
                fillers.setdefault(m.rank, []).append(item)
        for options in fillers.values():
            options.sort(key=order_key)
        pivot_positions = [
            p for p in range(meant.rank, rules.max_position + 1, 13) if p <= rules.max_position
        ]
        for p in pivot_positions:
            for start in range(max(1, p - rules.max_run_length + 1), p + 1):
                if rules.ace_wrap and start > 13:
                    continue  # K-A-2 is 13..15; 14..16 would repeat A-2-3
                # Positions in [start, p) that no item can fill must take jokers.
                gaps = sum(1 for q in range(start, p) if _rank_at(q) not in fillers)
                if gaps > bare:
                    continue
                for end in range(p, min(rules.max_position, start + rules.max_run_length - 1) + 1):
                    if end > p and _rank_at(end) not in fillers:
                        gaps += 1
                        if gaps > bare:
                            break
                    if end - start + 1 < rules.min_size:
                        continue
                    yield from self._fill_run(pivot, p, start, end, fillers, counts, bare)

    def _fill_run(
        self,
        pivot: Item,
        pivot_position: int,
        start: int,
        end: int,
        fillers: dict[int, list[Item]],
        counts: Counter[Item],
        bare: int,
    ) -> Iterator[tuple[Reading, tuple[Item, ...]]]:
        positions = [q for q in range(start, end + 1) if q != pivot_position]
        used: Counter[Item] = Counter()

        def fill(index: int, jokers_left: int, placed: list[Item]) -> Iterator[list[Item]]:
            if index == len(positions):
                yield placed
                return
            rank = _rank_at(positions[index])
            for item in fillers.get(rank, ()):
                if used[item] < counts[item]:
                    used[item] += 1
                    yield from fill(index + 1, jokers_left, [*placed, item])
                    used[item] -= 1
            if jokers_left > 0:
                yield from fill(index + 1, jokers_left - 1, [*placed, JOKER])

        offset = pivot_position - start
        for placed in fill(0, bare, []):
            ordered = (*placed[:offset], pivot, *placed[offset:])
            reading = self._run_reading(ordered, start)
            if reading is not None:
                yield reading, ordered


def _subtract(remaining: _Multiset, used: Sequence[Item]) -> _Multiset:
    left = list(remaining)
    for item in used:
        left.remove(item)
    return tuple(left)


class _Partitions:
    def __init__(self, search: PartitionSearch) -> None:
        self.search = search
        self.memo: dict[tuple[_Multiset, _MeldKey | None], tuple[tuple[Reading, ...], ...]] = {}

    def all(
        self, remaining: _Multiset, bound: _MeldKey | None = None
    ) -> tuple[tuple[Reading, ...], ...]:
        """Splits of ``remaining``; the pivot's meld must not order before ``bound``.

        With two copies of the pivot (two AD, two R1) the split {AD 2D 3D, QD KD AD}
        would be found once from each copy; taking the melds that hold a copy of
        the same item in key order finds it once.
        """
        if not remaining:
            return ((),)
        cached = self.memo.get((remaining, bound))
        if cached is not None:
            return cached
        out: list[tuple[Reading, ...]] = []
        pivot = remaining[0]
        for reading, rest, key in self.search.candidates(remaining):
            if bound is not None and key < bound:
                continue
            next_bound = key if rest and rest[0] == pivot else None
            for tail in self.all(rest, next_bound):
                out.append((reading, *tail))
        result = tuple(out)
        self.memo[(remaining, bound)] = result
        return result


def meld_partitions(items: Sequence[Item], variant: Variant) -> Iterator[tuple[Reading, ...]]:
    """Every way to split ALL of ``items`` into legal melds of ``variant``.

    Each split is yielded once, its melds in a canonical order (by their
    lowest item).  Bare jokers (``JK``) take every meaning the rules allow;
    declared jokers (``JK=R5``) keep theirs.  Nothing is yielded when the items
    cannot all be melded; an empty list of items has one split, ``()``.
    """
    search = PartitionSearch(variant)
    yield from _Partitions(search).all(sorted_items(items))


def can_be_melded(items: Sequence[Item], variant: Variant) -> bool:
    """Whether all of ``items`` fit into legal melds of ``variant``."""
    search = PartitionSearch(variant)
    memo: dict[_Multiset, bool] = {}

    def meldable(remaining: _Multiset) -> bool:
        if not remaining:
            return True
        if remaining not in memo:
            memo[remaining] = any(meldable(rest) for _, rest, _ in search.candidates(remaining))
        return memo[remaining]

    return meldable(sorted_items(items))


_Best = tuple[int, int, tuple[str, ...], tuple[Reading, ...], tuple[Item, ...]]


def best_split(
    items: Sequence[Item],
    variant: Variant,
    cost: Callable[[Item], int] | None = None,
) -> tuple[tuple[Reading, ...], tuple[Item, ...]]:
    """Melds plus leftover items such that the leftover costs least.

    ``cost`` defaults to ``variant.hand_value``.  Among equally cheap splits
    the one with the fewest leftover items wins, then the one whose leftover
    items come first in a fixed order (so the answer never depends on the
    order the items were given in).  The leftover is returned in that order.
    """
    price = cost if cost is not None else variant.hand_value
    search = PartitionSearch(variant)
    memo: dict[_Multiset, _Best] = {}

    def best(remaining: _Multiset) -> _Best:
        if not remaining:
            return (0, 0, (), (), ())
        cached = memo.get(remaining)
        if cached is not None:
            return cached
        pivot = remaining[0]
        skip = best(remaining[1:])
        choice: _Best = (
            skip[0] + price(pivot),
            skip[1] + 1,
            tuple(sorted((str(pivot), *skip[2]))),
            skip[3],
            (pivot, *skip[4]),
        )
        seen: set[tuple[Item, ...]] = set()
        for reading, rest, _ in search.candidates(remaining):
            # Readings of the same items leave the same rest; one is enough here.
            if rest in seen:
                continue
            seen.add(rest)
            sub = best(rest)
            if sub[:3] < choice[:3]:
                choice = (sub[0], sub[1], sub[2], (reading, *sub[3]), sub[4])
        memo[remaining] = choice
        return choice

    result = best(sorted_items(items))
    return result[3], result[4]


# --- the packing search: the best set of melds from a multiset, fast -------------------
#
# Items are counted in one Python integer: four bits per natural (suit * 13 + rank - 1,
# the partition order) and four for the bare jokers (then, where a table is laid off
# onto, four per table meld and four for freed jokers), so a multiset is a dictionary key
# that hashes in one step, taking a meld away is one subtraction, and whether the items
# of a meld are all there is one subtraction with a guard bit per field.

_FIELD = 4
JOKER_FIELD = 52
_JOKER_FIELD = JOKER_FIELD
_JOKER_SHIFT = _FIELD * _JOKER_FIELD
_NATURALS_MASK = (1 << _JOKER_SHIFT) - 1
_NEED_MASK = (1 << 20) - 1
_OPENING_BITS = (1 << 21) - 1
"""Of a state's extra bits from bit 10: the run and the points an opening still needs."""

ItemScore = Callable[[int, int], int]
"""What one slot of a meld scores: given its count field (:func:`field_item`) and its
``variant.slot_value``."""


def field_item(family: Family, index: int) -> Item:
    """The item counted in field ``index``: a natural (suit * 13 + rank - 1) or the joker."""
    if index == JOKER_FIELD:
        return JOKER
    return natural(family, index % 13 + 1, index // 13)


_NO_PLAY = -(1 << 62)
"""The score of a state with no legal way on (an opening out of reach, a table item that
cannot be placed)."""


def _natural_id(item: Natural) -> int:
    return item.suit_index * 13 + item.rank - 1


def _count_field(index: int) -> int:
    return 1 << (_FIELD * index)


@dataclass(frozen=True)
class PackCandidate:
    """One meld the packing search may lay: its items as a count mask and its worth."""

    mask: int
    score: int
    opening: int
    """What it counts towards an initial meld (``variant.meld_value``)."""
    is_run: bool
    bound: int
    """The per-item upper bounds of its items, summed (at least ``score``)."""
    opening_bound: int
    reading: Reading
    lay_off: LayOff | None = None
    """Where it is rack items laid onto a table meld: which, and how."""
    freed: int = 0
    """Jokers freed by exchange among its jokers (they score nothing)."""


@dataclass(frozen=True)
class LayOff:
    """Rack items laid onto one table meld (``target``): each laid item (a bare joker for a
    joker) with its ``variant.slot_value`` in ``reading``, the meld as it becomes."""

    target: int
    slots: tuple[tuple[Item, int], ...]
    reading: Reading


@dataclass(frozen=True)
class PackResult:
    """The melds a packing search chose, their score, and whether it is proved best."""

    readings: tuple[Reading, ...]
    score: int
    optimal: bool
    moves: tuple[PackCandidate, ...] = ()
    """The chosen melds and lay-offs, as the search laid them."""


class _Found(Exception):
    """The search reached a score it was told cannot be beaten."""


_RUN_CAPS: dict[tuple[str, int], int] = {}


@dataclass(frozen=True, eq=False)
class _Meld:
    """A meld the packing search may lay, analysed once per variant."""

    reading: Reading
    mask: int
    opening: int
    slots: tuple[tuple[int, int], ...]
    """(count field, ``variant.slot_value``) per slot."""
    is_run: bool


_MELDS: dict[tuple[str, int], _Meld | None] = {}
_MELDS_LIMIT = 500_000


def _in_suit(meld: _Meld, suit: int, family: Family) -> _Meld:
    """A run of the first suit (``meld``) as the same run in ``suit``."""
    slots = tuple(
        Slot(slot.item if slot.is_joker else natural(family, slot.item.rank, suit),  # type: ignore[union-attr]
             slot.rank, slot.position, suit)
        for slot in meld.reading.slots
    )
    fields = tuple(
        (field if field == _JOKER_FIELD else field + 13 * suit, value)
        for field, value in meld.slots
    )
    return _Meld(replace(meld.reading, slots=slots), sum(_count_field(f) for f, _ in fields),
                 meld.opening, fields, meld.is_run)


def _run_code(suit: int, start: int, length: int, jokers_at: int) -> int:
    """A run by its suit, first place, length and the places (bits) its jokers take."""
    return 1 | suit << 1 | start << 3 | length << 8 | jokers_at << 13


def _set_code(rank: int, suits: Sequence[int], jokers: int) -> int:
    """A set by its rank, its suits and how many jokers it holds."""
    return rank << 1 | sum(1 << s for s in suits) << 5 | jokers << 9


def _code_items(family: Family, code: int) -> tuple[Item, ...]:
    """The items of a run or set code, in order (a run's from its first place)."""
    if code & 1:
        suit, start, length = (code >> 1) & 3, (code >> 3) & 31, (code >> 8) & 31
        jokers_at = code >> 13
        return tuple(
            JOKER if jokers_at >> k & 1 else natural(family, _rank_at(start + k), suit)
            for k in range(length)
        )
    rank, suits, jokers = (code >> 1) & 15, (code >> 5) & 15, code >> 9
    return (
        *(natural(family, rank, s) for s in range(4) if suits >> s & 1),
        *([JOKER] * jokers),
    )
_RUN_COUNTS: dict[str, dict[tuple[int, int], bool]] = {}
"""Per variant: whether a run of so many naturals and jokers is legal."""
_RUN_PATTERNS: dict[tuple[str, int, int], bool] = {}
"""Per variant, run length and joker places (a bit mask): whether such a run is legal and
cannot be cut into two legal runs, as far as the counts tell."""


def _run_legal(variant: Variant, vkey: str, naturals: int, jokers: int) -> bool:
    """Whether a run of so many naturals then so many jokers is legal (read once from
    ``variant.analyse``, on naturals from the lowest place on, then the jokers)."""
    if naturals + jokers < variant.meld_rules.min_size or naturals < 1:
        return False
    legal = _RUN_COUNTS.setdefault(vkey, {})
    found = legal.get((naturals, jokers))
    if found is None:
        family = variant.family
        length = naturals + jokers
        items = tuple(
            natural(family, _rank_at(position), 0) if position <= naturals else JOKER
            for position in range(1, length + 1)
        )
        found = any(r.kind is MeldKind.RUN for r in variant.analyse(items).readings)
        legal[(naturals, jokers)] = found
    return found


def _pattern_kept(variant: Variant, vkey: str, length: int, jokers_at: int) -> bool:
    """Whether a run of ``length`` places with jokers at the bits of ``jokers_at`` is legal
    and cannot be cut into two legal runs, as far as its counts of naturals and jokers
    tell (see :func:`_run_length_cap`)."""
    key = (vkey, length, jokers_at)
    kept = _RUN_PATTERNS.get(key)
    if kept is None:
        size = variant.meld_rules.min_size
        total = bin(jokers_at).count("1")
        kept = _run_legal(variant, vkey, length - total, total)
        if kept:
            for cut in range(size, length - size + 1):
                left = bin(jokers_at & ((1 << cut) - 1)).count("1")
                if _run_legal(variant, vkey, cut - left, left) and _run_legal(
                    variant, vkey, length - cut - (total - left), total - left
                ):
                    kept = False
                    break
        _RUN_PATTERNS[key] = kept
    return kept


def _run_length_cap(variant: Variant, vkey: str, jokers: int) -> int:
    """The longest run with at most ``jokers`` jokers that cannot be cut into two legal runs.

    A longer run is never needed: its two halves, laid as two melds, place the same items
    for the same value (a slot's value depends on its place, not on the run's length).
    Which runs are legal is read from ``variant.analyse`` on a run of naturals followed by
    jokers, taking the variants' joker rules as rules on how many naturals and jokers a
    meld holds (every variant's are); the candidates themselves are always analysed.
    """
    key = (vkey, jokers)
    cached = _RUN_CAPS.get(key)
    if cached is not None:
        return cached
    rules = variant.meld_rules
    longest = rules.max_run_length

    def ok(naturals: int, jokers_in: int) -> bool:
        return _run_legal(variant, vkey, naturals, jokers_in)

    cap = min(longest, 2 * rules.min_size - 1)
    for length in range(2 * rules.min_size, longest + 1):
        for total in range(0, min(jokers, length - 1) + 1):
            if not ok(length - total, total):
                continue
            # can a row of this many jokers avoid every legal cut?  reach[j]: prefixes
            # holding j jokers with no legal cut so far
            reach = {0}
            for cut in range(1, length):
                reach = {j + d for j in reach for d in (0, 1) if j + d <= total}
                if rules.min_size <= cut <= length - rules.min_size:
                    reach = {
                        j for j in reach
                        if not (ok(cut - j, j) and ok(length - cut - (total - j), total - j))
                    }
            if total in {j + d for j in reach for d in (0, 1)}:
                cap = length
                break
    _RUN_CAPS[key] = cap
    return cap


HIGHS_IMPORT_SECONDS = 2.0
"""Under a budget with less than this left, the linear relaxation is not used unless HiGHS
is already imported: a first import no deadline can cut."""


SEARCH_FIRST = 0.005
"""Seconds the search runs alone, ordered and bounded by the linear relaxation, before the
integer programme of that relaxation joins it (a table rebuilt) or takes over (a table
laid off onto): most searches answer sooner."""
RACE_UNBOUNDED = 1e9
"""The race's own deadline where no budget is in force (it is moved to end the search)."""


class _IntegerRace:
    """The packing's integer programme (its relaxation's rows, every move a whole number of
    times) on a thread that waits :data:`SEARCH_FIRST` first; solved to optimality, it
    moves ``deadline`` to the past, which ends the search racing it at its next check.  A
    search that answers first stops it (:class:`highs.Stop`)."""

    def __init__(self, programme: tuple[tuple[Any, ...], list[PackCandidate]],
                 deadline: budget.Deadline, seconds: float | None) -> None:
        self._programme, self._deadline, self._seconds = programme, deadline, seconds
        self._done = threading.Event()
        self._stop = highs.Stop()
        self.answer: tuple[PackCandidate, ...] | None = None
        # not a daemon: a process that ends while HiGHS runs would be aborted
        self._thread = threading.Thread(target=self._run, name="packing programme")
        self._thread.start()

    def _run(self) -> None:
        if self._done.wait(SEARCH_FIRST):
            return  # the search answered first
        model, candidates = self._programme
        seconds = None if self._seconds is None else max(self._seconds - SEARCH_FIRST, 0.001)
        solved = highs.solve(model, integer=True, seconds=seconds, whole=True, stop=self._stop)
        if self._done.is_set() or solved.status != highs.OPTIMAL:
            return
        counts = [round(x) for x in solved.solution]
        self.answer = tuple(c for c, n in zip(candidates, counts, strict=True)
                            for _ in range(n))
        self._deadline.at = float("-inf")

    def finish(self) -> bool:
        """Tell the thread the search is over, which stops the programme; whether the
        programme proved the optimum first (its answer is then in)."""
        self._done.set()
        self._stop()
        return self.answer is not None


def _highs_at_hand() -> bool:
    if "highspy" in sys.modules:
        return True
    left = budget.remaining()
    return left is None or left >= HIGHS_IMPORT_SECONDS


class MeldPacking:
    """The best set of melds from a multiset of naturals and bare jokers (exact).

    The search of :class:`PartitionSearch`, on counts: the lowest natural left (the
    pivot) stays out or goes into one of the melds holding it, the rest is searched the
    same way.  Memoised on what is left (one integer; jokers are one count, so they are
    never told apart); branch and bound on the per-item upper bounds of the score (a meld
    never scores more than its items' bounds, an item in no meld has none, an opening
    out of reach of what is left ends the branch); the greediest melds are tried first,
    so the first answers are good and, out of time, the best one found so far is the
    answer (``optimal`` False).  An opening (``need``) is searched only when the best
    play without it does not open.

    Where items must be placed (a table rebuilt) the search branches on the item with
    fewest melds left (one that must be placed and has none ends the branch at once),
    and, with SciPy at hand, the linear relaxation of the packing (HiGHS) gives the
    answer outright when it is whole, else a bound to stop at and the order to try the
    melds in.

    ``item_score`` scores one slot of a meld (a meld scores the sum of its slots).
    ``optional``: how many of each item may stay out (None: all of them); the others
    must all be placed.  Runs longer than any that cannot be cut into two legal runs are
    never laid (the two halves do as well); sets and runs are proposed from the items,
    and ``variant.analyse`` decides every one.

    With a table that may only be extended: ``lay_offs``, every way to lay rack items onto
    one of ``tables`` table melds, of which at most one per table meld is laid (each
    table meld is one more count field, a token the lay-off takes; the lay-offs of
    jokers alone are laid, best first for each number of jokers, once no natural is
    left); ``freed`` jokers, freed by exchange, that new melds must all take in the
    place of rack jokers (scoring nothing; with ``freed_needs_rack_pair`` each meld
    that takes one holds two rack items or more).
    """

    def __init__(
        self,
        variant: Variant,
        items: Sequence[Item],
        item_score: ItemScore,
        *,
        optional: Counter[Item] | None = None,
        lay_offs: Sequence[LayOff] = (),
        tables: int = 0,
        freed: int = 0,
        freed_needs_rack_pair: bool = False,
        lead: int | None = None,
    ) -> None:
        self.variant = variant
        self.lead = lead
        self.rules = variant.meld_rules
        self.item_score = item_score
        self._vkey = repr(variant)
        self._weight: int | None = None  # the first criterion's in the integer programme
        self._programme: tuple[tuple[Any, ...], list[PackCandidate]] | None = None
        """The integer programme over the relaxation's rows, and its moves
        (:meth:`_relaxation`), for :meth:`_search_then_programme`."""
        counts = [0] * 52
        jokers = 0
        for item in items:
            if isinstance(item, Joker):
                if item.stands_for is not None:
                    raise ValueError("the packing search takes bare jokers only")
                jokers += 1
            else:
                counts[_natural_id(item)] += 1
        if max(counts, default=0) > 7 or jokers > 7 or freed > 7:
            raise ValueError("more than seven of one item")
        if optional is not None and (lay_offs or freed):
            raise ValueError("lay-offs and freed jokers are for racks whose items may stay out")
        self.counts = counts
        self.jokers = jokers
        self.freed = freed
        self.freed_needs_rack_pair = freed_needs_rack_pair
        # count fields: the naturals, the jokers, a token per table meld, the freed jokers
        self._freed_field = _JOKER_FIELD + 1 + tables
        self._fields = self._freed_field + 1
        self._shift = _FIELD * self._fields
        self._guards = sum(8 << (_FIELD * i) for i in range(self._fields))
        self.start = sum(n << (_FIELD * i) for i, n in enumerate(counts))
        self.start |= jokers << _JOKER_SHIFT
        self.start |= freed << (_FIELD * self._freed_field)
        for target in {lay_off.target for lay_off in lay_offs}:
            if not 0 <= target < tables:
                raise ValueError(f"a lay-off onto table meld {target} of {tables}")
            self.start |= _count_field(_JOKER_FIELD + 1 + target)
        if optional is None:
            self.must = False
            self.allowed = counts[:]
            self.allowed_jokers = jokers
        else:
            self.must = True
            self.allowed = [0] * 52
            for item, n in optional.items():
                if not item.is_joker:
                    self.allowed[_natural_id(item)] = n  # type: ignore[arg-type]
            self.allowed_jokers = optional[JOKER]
        self.cap = _run_length_cap(variant, self._vkey, jokers + freed)
        self.by_pivot: list[tuple[PackCandidate, ...]] = [()] * 52
        self.related = [0] * 52
        # per-item upper bounds of the score and of the opening value, over the melds
        self.bound = [0] * self._fields
        self.opening_bound = [0] * self._fields
        self._scores: dict[int, int] = {}
        self._lay_offs_at: dict[int, list[PackCandidate]] = {}
        # per table meld, the best lay-off of t jokers alone (t = 1, 2, ...)
        self._joker_lay_offs: dict[int, dict[int, PackCandidate]] = {}
        for lay_off in lay_offs:
            self._add_lay_off(lay_off)
        for index in range(52):
            if counts[index]:
                self._generate(index)
        for index in range(52):
            self.by_pivot[index] = tuple(
                sorted(
                    (self._with_bounds(c) for c in self.by_pivot[index]),
                    key=self._order,
                )
            )
        self._available: dict[tuple[int, int], tuple[PackCandidate, ...]] = {}
        self._jokers_laid: dict[tuple[int, int], tuple[int, tuple[PackCandidate, ...]]] = {}
        self._terminal: dict[int, tuple[PackCandidate, ...]] = {}
        self.improvements: list[tuple[float, int]] = []
        """(``time.monotonic()``, score) each time the search found a better answer."""

    @property
    def fields(self) -> int:
        """The count fields of a state: naturals, jokers, table melds, freed jokers."""
        return self._fields

    def moves(self) -> list[PackCandidate]:
        """Every move the search may take (each meld, each lay-off; of the lay-offs of
        jokers alone, the best for each number of jokers per table meld)."""
        found = [c for group in self.by_pivot for c in group]
        found += [c for by_count in self._joker_lay_offs.values() for c in by_count.values()]
        return found

    def _order(self, candidate: PackCandidate) -> tuple[int, ...]:
        """The order melds are tried in: the greediest first, so the first answers are good;
        where items must all be placed, melds with fewer jokers first (jokers are what
        the other items may need)."""
        jokers = candidate.mask >> _JOKER_SHIFT
        if self.must:
            return (jokers, -candidate.score, -candidate.opening, candidate.mask)
        return (-candidate.score, -candidate.opening, candidate.mask)

    def _with_bounds(self, candidate: PackCandidate) -> PackCandidate:
        bound = opening_bound = 0
        rest = candidate.mask & (_NATURALS_MASK | 15 << _JOKER_SHIFT)
        while rest:
            index = ((rest & -rest).bit_length() - 1) // _FIELD
            n = (rest >> (_FIELD * index)) & 15
            rest &= ~(15 << (_FIELD * index))
            bound += n * self.bound[index]
            opening_bound += n * self.opening_bound[index]
        return replace(candidate, bound=bound, opening_bound=opening_bound)

    # --- candidates -------------------------------------------------------------------
    def _meld(self, code: int) -> _Meld | None:
        """The meld of ``code`` (see :func:`_run_code`, :func:`_set_code`), analysed once
        per variant: its reading, count mask, opening value and (field, value) per slot."""
        key = (self._vkey, code)
        if key in _MELDS:
            return _MELDS[key]
        budget.check()
        if len(_MELDS) >= _MELDS_LIMIT:
            _MELDS.clear()
        run = bool(code & 1)
        suit = (code >> 1) & 3
        if run and suit:
            # a run reads the same in every suit: the first suit's analysis, moved
            first = self._meld(code & ~(3 << 1))
            moved = None if first is None else _in_suit(first, suit, self.variant.family)
            _MELDS[key] = moved
            return moved
        found = self._analysed(code)
        _MELDS[key] = found
        return found

    def _analysed(self, code: int) -> _Meld | None:
        """:meth:`_meld` of ``code`` worked out by the variant's own analysis."""
        run = bool(code & 1)
        items = _code_items(self.variant.family, code)
        found: _Meld | None = None
        for reading in self.variant.analyse(items).readings:
            if run:
                if (
                    reading.kind is not MeldKind.RUN
                    or reading.reordered
                    or reading.slots[0].position != (code >> 3) & 31
                    or reading.slots[-1].position != ((code >> 3) & 31) + len(items) - 1
                ):
                    continue
            elif reading.kind is not MeldKind.SET:
                continue
            slots = tuple(
                (
                    _JOKER_FIELD if slot.is_joker else _natural_id(slot.item),  # type: ignore[arg-type]
                    self.variant.slot_value(reading, slot),
                )
                for slot in reading.slots
            )
            mask = sum(_count_field(f) for f, _ in slots)
            found = _Meld(reading, mask, sum(v for _, v in slots), slots, run)
            break
        return found

    def _add(self, found: dict[tuple[int, bool], PackCandidate], code: int) -> None:
        meld = self._meld(code)
        if meld is None:
            return
        score = self._scores.get(code)
        if score is None:
            item_score = self.item_score
            score = sum(item_score(f, v) for f, v in meld.slots)
            self._scores[code] = score
            for f, v in meld.slots:
                self._raise_bounds(f, item_score(f, v), v)
        self._offer(found, PackCandidate(
            meld.mask, score, meld.opening, meld.is_run, 0, 0, meld.reading
        ))
        if self.freed and meld.mask >> _JOKER_SHIFT:
            self._add_freed(found, meld, score)

    def _offer(self, found: dict[tuple[int, bool], PackCandidate], candidate: PackCandidate
               ) -> None:
        key = (candidate.mask, candidate.is_run)
        old = found.get(key)
        if old is None or (candidate.score, candidate.opening) > (old.score, old.opening):
            found[key] = candidate

    def _raise_bounds(self, index: int, worth: int, value: int) -> None:
        if worth > self.bound[index]:
            self.bound[index] = worth
        if value > self.opening_bound[index]:
            self.opening_bound[index] = value

    def _add_freed(self, found: dict[tuple[int, bool], PackCandidate], meld: _Meld, score: int
                   ) -> None:
        """The meld with some of its jokers freed ones: they take the joker places worth
        least, and score nothing."""
        joker_worths = sorted(
            self.item_score(f, v) for f, v in meld.slots if f == _JOKER_FIELD
        )
        most = min(self.freed, len(joker_worths))
        if self.freed_needs_rack_pair:
            most = min(most, len(meld.slots) - 2)
        for taken in range(1, most + 1):
            mask = (meld.mask - taken * _count_field(_JOKER_FIELD)
                    + taken * _count_field(self._freed_field))
            self._offer(found, PackCandidate(
                mask, score - sum(joker_worths[:taken]), meld.opening, meld.is_run, 0, 0,
                meld.reading, freed=taken,
            ))

    def _add_lay_off(self, lay_off: LayOff) -> None:
        token = _JOKER_FIELD + 1 + lay_off.target
        mask = _count_field(token)
        score = 0
        lowest = -1
        for item, value in lay_off.slots:
            if isinstance(item, Joker):
                index = _JOKER_FIELD
            else:
                index = _natural_id(item)
                if lowest < 0 or index < lowest:
                    lowest = index
            worth = self.item_score(index, value)
            self._raise_bounds(index, worth, 0)
            mask += _count_field(index)
            score += worth
        candidate = PackCandidate(mask, score, 0, False, 0, 0, lay_off.reading, lay_off=lay_off)
        if lowest >= 0:
            self._lay_offs_at.setdefault(lowest, []).append(candidate)
            return
        by_count = self._joker_lay_offs.setdefault(lay_off.target, {})
        count = len(lay_off.slots)
        old = by_count.get(count)
        if old is None or candidate.score > old.score:
            by_count[count] = candidate

    def _generate(self, pivot: int) -> None:
        budget.check()
        counts = self.counts
        jokers = self.jokers + self.freed  # a freed joker plays as any joker
        rules = self.rules
        suit, rank0 = divmod(pivot, 13)
        rank = rank0 + 1
        found: dict[tuple[int, bool], PackCandidate] = {}
        # sets: one item of each suit, the pivot's suit the lowest (the lower ones are gone)
        others = [s for s in range(suit + 1, 4) if counts[s * 13 + rank0]]
        for chosen_bits in range(1 << len(others)):
            chosen = [others[b] for b in range(len(others)) if chosen_bits >> b & 1]
            suits = (suit, *chosen)
            for extra in range(0, min(jokers, 4 - len(suits)) + 1):
                size = len(suits) + extra
                if size < rules.min_size:
                    continue
                self._add(found, _set_code(rank, suits, extra))
        # runs: every window round a place of the pivot, the other places natural (when
        # one is left above the pivot) or joker
        longest = min(rules.max_run_length, self.cap)
        for place in range(rank, rules.max_position + 1, 13):
            for start in range(max(1, place - longest + 1), place + 1):
                if rules.ace_wrap and start > 13:
                    continue
                for end in range(max(place, start + rules.min_size - 1),
                                 min(rules.max_position, start + longest - 1) + 1):
                    self._window_runs(found, pivot, place, start, end)
        for candidate in self._lay_offs_at.get(pivot, ()):
            self._offer(found, candidate)
        related = _count_field(_JOKER_FIELD) * 15 | 15 << (_FIELD * pivot)
        for mask, _ in found:
            for index in range(self._fields):
                if (mask >> (_FIELD * index)) & 15:
                    related |= 15 << (_FIELD * index)
        self.related[pivot] = related
        self.by_pivot[pivot] = tuple(found.values())

    def _window_runs(
        self,
        found: dict[tuple[int, bool], PackCandidate],
        pivot: int,
        place: int,
        start: int,
        end: int,
    ) -> None:
        suit = pivot // 13
        counts = self.counts
        length = end - start + 1
        forced = 0
        free: list[int] = []
        for position in range(start, end + 1):
            if position == place:
                continue
            index = suit * 13 + _rank_at(position) - 1
            if index >= pivot and counts[index] >= (2 if index == pivot else 1):
                free.append(1 << (position - start))
            else:
                forced |= 1 << (position - start)
        forced_count = bin(forced).count("1")
        if forced_count > self.jokers + self.freed:
            return
        budget.check()
        long = length >= 2 * self.rules.min_size
        for extra in range(0, self.jokers + self.freed - forced_count + 1):
            for chosen in itertools.combinations(free, extra):
                jokers_at = forced | sum(chosen)
                if long and not _pattern_kept(self.variant, self._vkey, length, jokers_at):
                    continue
                self._add(found, _run_code(suit, start, length, jokers_at))

    # --- the search -----------------------------------------------------------------
    def solve(
        self, need: int = 0, need_run: bool = False, keep: int = 0
    ) -> PackResult | None:
        """The best melds whose opening values reach ``need`` (with a run if ``need_run``),
        leaving at least ``keep`` items out; None when no such melds exist.  Out of time,
        the best found so far (``optimal`` False), or :class:`budget.OutOfTime` when none
        was found."""
        if keep > 63:
            raise ValueError("keep is at most 63")
        ceiling = None
        if ((self.must and keep == 0) or self._joker_lay_offs or self._lay_offs_at) \
                and _highs_at_hand():
            relaxed = self._relaxation(keep)
            if isinstance(relaxed, PackResult):
                free: PackResult | None = relaxed
            else:
                ceiling = relaxed
                # a rebuilt table's search and programme each take ten times the other's
                # time on some positions, so they race; on a table laid off onto the
                # programme is the faster on the hard positions, so it takes over
                free = (self._race(keep, ceiling) if self.must
                        else self._search_then_programme(keep, ceiling))
        else:
            free = self._search(0, False, keep, ceiling)
        if free is None or not (need > 0 or need_run):
            return free
        if self._opens(free.readings, need, need_run):
            return free
        if not free.optimal:
            raise budget.OutOfTime  # no opening found in time
        # the best play does not open: the best that does scores no more
        return self._search(need, need_run, keep, free.score)

    def _race(self, keep: int, ceiling: int | None) -> PackResult | None:
        """The search, and beside it on a thread of its own, from :data:`SEARCH_FIRST` on,
        the integer programme of its relaxation (:meth:`_relaxation`; HiGHS leaves the GIL
        while it solves): the first proof is the answer (the programme ends the search
        early by moving the search's deadline to the past; the search ends the programme
        by stopping it)."""
        if self._programme is None:
            return self._search(0, False, keep, ceiling)
        left = budget.remaining()
        with budget.limit(RACE_UNBOUNDED if left is None else left) as deadline:
            assert deadline is not None
            race = _IntegerRace(self._programme, deadline, left)
            try:
                searched = self._search(0, False, keep, ceiling)
            except budget.OutOfTime:
                searched = None
                if not race.finish():
                    raise
            else:
                race.finish()
        if race.answer is not None and (searched is None or not searched.optimal):
            chosen = race.answer
            return PackResult(tuple(c.reading for c in chosen), sum(c.score for c in chosen),
                              True, chosen)
        if searched is not None and not searched.optimal:
            budget.settle()  # the budget in force's: the search settled the race's own
        return searched

    def _search_then_programme(self, keep: int, ceiling: int | None) -> PackResult | None:
        """The search for :data:`SEARCH_FIRST` seconds, then, unless it proved its answer,
        the integer programme of the relaxation (:meth:`_relaxation`) with the rest of the
        budget.  Out of time, the better of the two's best plays (HiGHS's best is the same
        or better with more time, so more budget never answers worse)."""
        if self._programme is None:
            return self._search(0, False, keep, ceiling)
        left = budget.remaining()
        try:
            with budget.limit(SEARCH_FIRST if left is None else min(SEARCH_FIRST, left)):
                searched = self._search(0, False, keep, ceiling)
        except budget.OutOfTime:
            searched = None  # nothing found yet
        else:
            if searched is None or searched.optimal:
                return searched  # proved: the best play, or that none exists
        model, candidates = self._programme
        # only plays better than the search's are sought: none is a proof of the search's
        cutoff = None if searched is None else -self._weighed(searched.score) - 0.5
        solved = highs.solve(model, integer=True, seconds=budget.remaining(), whole=True,
                             cutoff=cutoff)
        if solved.status == highs.INFEASIBLE and searched is not None:
            return PackResult(searched.readings, searched.score, True, searched.moves)
        if solved.solution is not None:
            counts = [round(x) for x in solved.solution]
            chosen = tuple(c for c, n in zip(candidates, counts, strict=True)
                           for _ in range(n))
            found = PackResult(tuple(c.reading for c in chosen),
                               sum(c.score for c in chosen), solved.status == highs.OPTIMAL,
                               chosen)
            if found.optimal or searched is None or found.score > searched.score:
                searched = found
        if searched is not None and searched.optimal:
            return searched
        if solved.status == highs.OUT_OF_TIME or budget.spent():
            if searched is None:
                raise budget.OutOfTime
            budget.settle()
            return searched
        # HiGHS failed otherwise: the search goes on (its memo tables kept)
        searched = self._search(0, False, keep, ceiling)
        if searched is not None and not searched.optimal:
            budget.settle()
        return searched

    def _relaxation(self, keep: int = 0) -> int | PackResult | None:
        """Where items must be placed (a table rebuilt): the linear relaxation of the
        packing, solved by HiGHS.  Its optimum, when every meld is taken a whole number
        of times, is the best packing; else it bounds the best score (the search stops
        when it reaches the bound) and orders each pivot's melds by their share in it, so
        the first dive mostly finds the best play.  None when it is not solved."""
        import numpy as np

        candidates = self.moves()
        touched = self.start
        for candidate in candidates:
            touched |= candidate.mask
        # every field a move takes from, the absent ones too (a meld may be proposed with
        # more jokers than the rack holds, for the freed ones)
        fields = [i for i in range(self._fields) if (touched >> (_FIELD * i)) & 15]
        if not candidates:
            return None
        matrix = np.array(
            [[(c.mask >> (_FIELD * i)) & 15 for c in candidates] for i in fields], dtype=float
        )
        counts = np.array([(self.start >> (_FIELD * i)) & 15 for i in fields], dtype=float)
        # what may stay out: the optional items, every table meld's token, no freed joker
        allowed = [*self.allowed, self.allowed_jokers]
        allowed += [1] * (self._freed_field - _JOKER_FIELD - 1) + [0]
        lowest = counts - np.array([allowed[i] for i in fields], dtype=float)
        items = [i < _JOKER_FIELD + 1 for i in fields]
        # at most all the rack's items but ``keep`` are laid
        placed_row = matrix[items].sum(axis=0)
        limit = counts[items].sum() - keep
        left = budget.remaining()
        cost = -np.array([c.score for c in candidates], dtype=float)
        # the rows bounded on both sides (the row of what is laid only where something must
        # stay out), for the relaxation and the integer programme alike
        rows = np.vstack([matrix, placed_row]) if keep else matrix
        relaxation = highs.by_columns(
            cost, np.full(len(cost), np.inf),
            np.concatenate([lowest, [0.0]]) if keep else lowest,
            np.concatenate([counts, [limit]]) if keep else counts,
            highs.columns_of(rows),
        )
        self._programme = (self.programme_arrays(relaxation, candidates), candidates)
        relaxed = highs.solve(relaxation, integer=False, seconds=left)
        budget.check()
        if relaxed.status != highs.OPTIMAL:
            return None
        objective, solution = relaxed.objective, relaxed.solution
        if all(abs(x - round(x)) < 1e-7 for x in solution):
            chosen = [
                c for c, x in zip(candidates, solution, strict=True) for _ in range(round(x))
            ]
            return PackResult(
                tuple(c.reading for c in chosen), sum(c.score for c in chosen), True,
                tuple(chosen),
            )
        share = {id(c): float(x) for c, x in zip(candidates, solution, strict=True)}
        for index, group in enumerate(self.by_pivot):
            if group:
                ranked = sorted(range(len(group)), key=lambda k: (-share[id(group[k])], k))
                self.by_pivot[index] = tuple(group[k] for k in ranked)
        self._available.clear()
        return int(np.floor(-objective + 1e-6))

    def programme_arrays(self, arrays: tuple[Any, ...], candidates: list[PackCandidate]
                     ) -> tuple[Any, ...]:
        """The integer programme's arrays: the relaxation's, where the score is
        lexicographic (``lead``: the first criterion's weight), with the first criterion
        weighed only just above the most the second can reach in one play (at most one move
        per item), which ranks plays alike and which HiGHS solves faster than a weight of
        ``lead``."""
        if self.lead is None:
            return arrays
        import numpy as np

        scores = np.array([c.score for c in candidates], dtype=np.int64)
        first, second = np.divmod(scores, self.lead)
        moves = sum(self.counts) + self.jokers + self.freed
        weight = 1 + int(np.sort(second)[-moves:].sum())
        if weight >= self.lead:
            return arrays
        self._weight = weight
        cost = -(first * weight + second).astype(np.float64)
        return (*arrays[:6], cost, *arrays[7:])

    def _weighed(self, score: int) -> int:
        """A play's score as the integer programme weighs it (:meth:`programme_arrays`)."""
        if self._weight is None:  # no lead, or its own weight kept
            return score
        assert self.lead is not None
        first, second = divmod(score, self.lead)
        return first * self._weight + second

    def _opens(self, readings: Sequence[Reading], need: int, need_run: bool) -> bool:
        value = sum(self.variant.meld_value(reading) for reading in readings)
        has_run = any(reading.kind is MeldKind.RUN for reading in readings)
        return value >= need and (has_run or not need_run)

    def _step(
        self, state: int, extra: int, move: PackCandidate | None, item: int, keep: int
    ) -> tuple[int, int]:
        """The state after laying ``move``, a meld holding ``item`` (None: one ``item``
        stays out).  ``extra``: items kept out so far (up to ``keep``) in bits 4-9,
        whether the opening still needs a run (bit 10), the points it still needs (bits
        11-30) and, where items must be placed, how many of each were kept out (from bit
        32, one count field per item)."""
        kept = (extra >> 4) & 63
        need_run = (extra >> 10) & 1
        need = (extra >> 11) & _NEED_MASK
        skips = extra >> 32
        if move is None:
            after = state - _count_field(item)
            kept = min(keep, kept + 1)
            if self.must:
                skips += _count_field(item)
        else:
            after = state - move.mask
            need = max(0, need - move.opening)
            if move.is_run:
                need_run = 0
        return after, kept << 4 | need_run << 10 | need << 11 | skips << 32

    def _search(
        self, need: int, need_run: bool, keep: int, ceiling: int | None
    ) -> PackResult | None:
        exact: dict[int, tuple[int, PackCandidate | None, int]] = self.__dict__.setdefault(
            "_exact", {}
        )
        upper: dict[int, int] = self.__dict__.setdefault("_upper", {})
        by_pivot = self.by_pivot
        related = self.related
        available = self._available
        allowed = self.allowed
        allowed_jokers = self.allowed_jokers
        must = self.must
        bound = self.bound
        opening_bound = self.opening_bound
        check = budget.check
        step = self._step
        shift = self._shift
        guards = self._guards
        freed_shift = _FIELD * self._freed_field
        lay_jokers = self._lay_jokers if self._joker_lay_offs else None
        terminal = self._terminal
        if must:
            containing, related_to = self._containing()
            present = [i for i in range(52) if self.counts[i]]
        path: list[tuple[PackCandidate | None, int]] = []
        improvements = self.improvements
        incumbent: list[object] = [_NO_PLAY, (), 0]

        def search(state: int, extra: int, gained: int, high: int, reach: int,
                   alpha: int) -> int:
            if high <= alpha:
                return high
            key = state | extra << shift
            hit = exact.get(key)
            if hit is not None:
                return hit[0]
            known = upper.get(key)
            if known is not None and known <= alpha:
                return known
            check()
            nat = state & _NATURALS_MASK
            if not nat:
                left = (state >> _JOKER_SHIFT) & 15
                # jokers beyond those that must stay out may still be laid off
                spare = left - max(0, keep - ((extra >> 4) & 63))
                value = (
                    0
                    if left <= allowed_jokers
                    and (extra >> 10) & _OPENING_BITS == 0
                    and spare >= 0
                    and not (state >> freed_shift) & 15
                    else _NO_PLAY
                )
                if value == 0 and spare and lay_jokers is not None:
                    value, laid = lay_jokers(state, spare)
                    terminal[key] = laid
                exact[key] = (value, None, 0)
                return value
            if (extra >> 11) & _NEED_MASK > reach:
                exact[key] = (_NO_PLAY, None, 0)
                return _NO_PLAY
            if must:
                # branch on the item with the fewest ways left (an item that must be
                # placed and has none ends this branch at once)
                fewest = 1 << 30
                pivot = -1
                moves: tuple[PackCandidate, ...] = ()
                may_skip = False
                for index in present:
                    if not (state >> (_FIELD * index)) & 15:
                        continue
                    near = state & related_to[index]
                    cache_key = (index, near)
                    options = available.get(cache_key)
                    if options is None:
                        guarded = near | guards
                        options = tuple(
                            c for c in containing[index]
                            if (guarded - c.mask) & guards == guards
                        )
                        available[cache_key] = options
                    skip = (extra >> (32 + _FIELD * index)) & 15 < allowed[index]
                    ways = len(options) + skip
                    if ways < fewest:
                        fewest, pivot, moves, may_skip = ways, index, options, skip
                        if ways <= 1:
                            break
                if not fewest:
                    exact[key] = (_NO_PLAY, None, 0)
                    return _NO_PLAY
            else:
                pivot = ((nat & -nat).bit_length() - 1) >> 2
                near = state & related[pivot]
                cache_key = (pivot, near)
                moves = available.get(cache_key)  # type: ignore[assignment]
                if moves is None:
                    guarded = near | guards
                    moves = tuple(
                        c for c in by_pivot[pivot] if (guarded - c.mask) & guards == guards
                    )
                    available[cache_key] = moves
                may_skip = True
            best = _NO_PLAY
            choice: PackCandidate | None = None
            for move in moves:
                after, extra_after = step(state, extra, move, pivot, keep)
                score = move.score
                floor = alpha if alpha > best else best
                path.append((move, pivot))
                value = search(after, extra_after, gained + score, high - move.bound,
                               reach - move.opening_bound, floor - score)
                path.pop()
                if value > _NO_PLAY and value + score > best:
                    best = value + score
                    choice = move
            if may_skip:
                after, extra_after = step(state, extra, None, pivot, keep)
                floor = alpha if alpha > best else best
                path.append((None, pivot))
                value = search(after, extra_after, gained, high - bound[pivot],
                               reach - opening_bound[pivot], floor)
                path.pop()
                if value > best:
                    best = value
                    choice = None
            if best > alpha:
                exact[key] = (best, choice, pivot)
                total = gained + best
                if best > _NO_PLAY and total > incumbent[0]:  # type: ignore[operator]
                    incumbent[0] = total
                    incumbent[1] = tuple(path)
                    incumbent[2] = key
                    improvements.append((time.monotonic(), total))
                    if ceiling is not None and total >= ceiling:
                        raise _Found
            else:
                upper[key] = best
            return best

        start_extra = (int(need_run) << 10) | (need << 11)
        high = sum(
            ((self.start >> (_FIELD * i)) & 15) * bound[i] for i in range(_JOKER_FIELD + 1)
        )
        reach = sum(
            ((self.start >> (_FIELD * i)) & 15) * opening_bound[i]
            for i in range(_JOKER_FIELD + 1)
        )
        optimal = True
        try:
            search(self.start, start_extra, 0, high, reach, _NO_PLAY - 1)
        except _Found:
            pass
        except budget.OutOfTime:
            optimal = False
        root = self.start | start_extra << shift
        if incumbent[0] <= _NO_PLAY and exact.get(root, (_NO_PLAY,))[0] > _NO_PLAY:  # type: ignore[operator]
            # no natural at all: the root was decided where the items end
            incumbent[:] = [exact[root][0], (), root]
        if incumbent[0] <= _NO_PLAY:  # type: ignore[operator]
            if optimal:
                return None  # proved: nothing meets the conditions
            raise budget.OutOfTime
        return self._replay(
            self.start, start_extra, incumbent[1], incumbent[2], keep,  # type: ignore[arg-type]
            incumbent[0], optimal,  # type: ignore[arg-type]
        )

    def _containing(self) -> tuple[list[tuple[PackCandidate, ...]], list[int]]:
        """Per item: the melds holding it (in the search's order) and the count fields
        those melds touch."""
        containing: list[list[PackCandidate]] = [[] for _ in range(52)]
        related_to = [15 << (_FIELD * index) | 15 << _JOKER_SHIFT for index in range(52)]
        for group in self.by_pivot:
            budget.check()
            for candidate in group:
                mask = candidate.mask
                fields = [i for i in range(52) if (mask >> (_FIELD * i)) & 15]
                cover = sum(15 << (_FIELD * i) for i in fields)
                for index in fields:
                    containing[index].append(candidate)
                    related_to[index] |= cover
        return [tuple(group) for group in containing], related_to

    def _replay(
        self,
        state: int,
        extra: int,
        path: tuple[tuple[PackCandidate | None, int], ...],
        key: int,
        keep: int,
        score: int,
        optimal: bool,
    ) -> PackResult:
        exact: dict[int, tuple[int, PackCandidate | None, int]] = self.__dict__["_exact"]
        moves: list[PackCandidate] = []
        for move, item in path:
            if move is not None:
                moves.append(move)
            state, extra = self._step(state, extra, move, item, keep)
        assert state | extra << self._shift == key
        while state & _NATURALS_MASK:
            _, move, item = exact[state | extra << self._shift]
            if move is not None:
                moves.append(move)
            state, extra = self._step(state, extra, move, item, keep)
        moves.extend(self._terminal.get(state | extra << self._shift, ()))
        return PackResult(
            tuple(move.reading for move in moves), score, optimal, tuple(moves)
        )

    def _lay_jokers(self, state: int, spare: int) -> tuple[int, tuple[PackCandidate, ...]]:
        """The best lay-offs of up to ``spare`` jokers alone onto the table melds whose
        tokens ``state`` still holds (a small knapsack, one lay-off per meld)."""
        tokens = state >> (_FIELD * (_JOKER_FIELD + 1))
        cache_key = (tokens, spare)
        cached = self._jokers_laid.get(cache_key)
        if cached is not None:
            return cached
        best: list[tuple[int, tuple[PackCandidate, ...]] | None] = [(0, ())]
        best += [None] * spare
        for target, by_count in self._joker_lay_offs.items():
            if not (tokens >> (_FIELD * target)) & 15:
                continue
            merged = list(best)
            for used, base in enumerate(best):
                if base is None:
                    continue
                for count, candidate in by_count.items():
                    if used + count > spare:
                        continue
                    total = base[0] + candidate.score
                    current = merged[used + count]
                    if current is None or total > current[0]:
                        merged[used + count] = (total, (*base[1], candidate))
            best = merged
        found = max((entry for entry in best if entry is not None), key=lambda e: e[0])
        self._jokers_laid[cache_key] = found
        return found
