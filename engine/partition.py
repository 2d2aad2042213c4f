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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from tabletop.engine import budget
from tabletop.engine.base import Variant
from tabletop.engine.items import JOKER, Item, Joker, Natural
from tabletop.engine.melds import MeldKind, MeldRules, Reading

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
