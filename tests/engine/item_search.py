"""The extend-only search item by item: the exact search that laid rack items onto a
table before the packing search on counts (:func:`tabletop.engine.solver._extend`), kept
as the reference the packing search is proved against.

It takes the lowest rack item left (the *pivot*) and tries everything that can become
of it: it stays on the rack, it starts a new meld (every legal meld holding it), or it
starts the bundle laid onto one table meld not yet extended.  The rest is solved the
same way and memoised on what is left of the rack, which table melds are taken (only
those the rest could still reach) and, for an opening, the points still missing.
Joker exchanges: every choice of them, each freed joker a joker that must go into a
new meld.  Exact, and slow on long racks (seconds at 30 cards).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tabletop.engine import budget
from tabletop.engine.base import Variant
from tabletop.engine.items import JOKER, Item
from tabletop.engine.melds import MeldKind, Reading
from tabletop.engine.partition import PartitionSearch, order_key, sorted_items
from tabletop.engine.play import Meld, Play
from tabletop.engine.solver import (
    _Exchange,
    _exchange_choices,
    _Gain,
    _Step,
    _TableMelds,
)


@dataclass(frozen=True)
class State:
    remaining: tuple[Item, ...]
    """Rack items not yet decided, sorted by ``partition.order_key``."""
    used: int
    """Bit mask of table melds already extended."""
    need: int
    """Points the opening still needs."""
    need_run: bool
    """The opening still needs a run (Remi)."""
    placed: int
    """Items placed so far (for ``keep``)."""
    freed: int = 0
    """Jokers freed by exchange that still need a place in a new meld (they are
    among the jokers of ``remaining``)."""



def extend_by_items(
    variant: Variant,
    rack_items: tuple[Item, ...],
    table_melds: tuple[Meld, ...],
    objective: str,
    keep: int,
) -> Play:
    """The extend-only search with a table to lay off onto, joker exchanges included."""
    rules = variant.table_rules
    search = ItemSearch(
        variant, table_melds, objective, lay_off=True, max_placed=len(rack_items) - keep
    )
    start = State(sorted_items(rack_items), 0, 0, False, 0)
    try:
        result = search.best(start)
    except budget.OutOfTime:
        # the best play found in time (the extend-only search keeps it as it goes)
        found = search.incumbent_play(start)
        if found is None:
            raise
        budget.settle()
        return found
    assert result is not None  # nothing placed is always a play here
    if not rules.exchange:
        return search.play(start)
    # (score, search, start, exchanges, steps: None when that search finished)
    best: tuple[tuple[int, int], ItemSearch, State, tuple[_Exchange, ...],
                tuple[_Step, ...] | None] | None = None
    current: tuple[ItemSearch, State, tuple[int, int], tuple[_Exchange, ...]] | None = None
    try:
        for exchanges in _exchange_choices(variant, table_melds, rack_items):
            tiles = [tile for exchange in exchanges for tile in exchange.tiles]
            room = len(rack_items) - keep - len(tiles)
            if room < 0:
                continue
            exchanged = list(table_melds)
            for exchange in exchanges:
                exchanged[exchange.index] = exchange.meld
            freed = sum(exchange.freed for exchange in exchanges)
            left = list(rack_items)
            for tile in tiles:
                left.remove(tile)
            inner = ItemSearch(
                variant,
                tuple(exchanged),
                objective,
                lay_off=True,
                max_placed=room,
                freed_needs_rack_pair=rules.freed_with_hand_tiles,
            )
            inner_start = State(sorted_items((*left, *([JOKER] * freed))), 0, 0, False, 0, freed)
            gain = search.score((len(tiles), sum(exchange.value for exchange in exchanges)))
            current = (inner, inner_start, gain, exchanges)
            rest = inner.best(inner_start)
            current = None
            if rest is None:
                continue  # the freed jokers find no new meld
            total = (gain[0] + rest[0], gain[1] + rest[1])
            if total > (best[0] if best is not None else result):
                best = (total, inner, inner_start, exchanges, None)
    except budget.OutOfTime:
        budget.settle()
        if current is not None and current[0].incumbent is not None:
            inner, inner_start, gain, exchanges = current
            assert inner.incumbent is not None
            reached, prefix, _ = inner.incumbent
            total = (gain[0] + reached[0], gain[1] + reached[1])
            if total > (best[0] if best is not None else result):
                best = (total, inner, inner_start, exchanges, prefix)
    with budget.suspended():
        if best is None:
            return search.play(start)
        _, inner, inner_start, exchanges, taken = best
        play = inner.play(inner_start, taken or ())
    placed = sorted(
        (*play.placed, *(tile for exchange in exchanges for tile in exchange.tiles)),
        key=order_key,
    )
    value = play.value + sum(exchange.value for exchange in exchanges)
    return Play(play.melds, tuple(placed), value, meets_initial=True)


class ItemSearch(_TableMelds):
    """The item-by-item extend-only search (see the module docstring)."""

    def __init__(
        self,
        variant: Variant,
        table: tuple[Meld, ...],
        objective: str,
        *,
        lay_off: bool,
        max_placed: int,
        freed_needs_rack_pair: bool = False,
    ) -> None:
        super().__init__(variant, table)
        if not lay_off:
            self.anchors = []
        self.freed_needs_rack_pair = freed_needs_rack_pair
        """A freed joker's new meld holds two or more rack items ([remi] rule 5)."""
        self.objective = objective
        self.lay_off = lay_off
        self.max_placed = max_placed
        self.partition = PartitionSearch(variant)
        self.memo: dict[tuple[object, ...], tuple[tuple[int, int], _Step | None] | None] = {}
        self.all_melds = (1 << len(table)) - 1
        self._gains_cache: dict[tuple[int, int], tuple[tuple[int, int] | None, ...]] = {}
        self._profiles: dict[tuple[int, int], list[tuple[int, int] | None]] = {}
        self.path: list[_Step] = []
        self.incumbent: tuple[tuple[int, int], tuple[_Step, ...], State] | None = None
        """The best score found so far, the steps to it and the state they lead to."""

    # -- scores ------------------------------------------------------------------------
    def score(self, gain: _Gain) -> tuple[int, int]:
        count, value = gain
        return (count, value) if self.objective == "tiles" else (value, count)

    # -- memo keys: only what the rest can still touch matters ---------------------------
    def _key(self, state: State) -> tuple[object, ...]:
        """What the best continuation depends on.  A taken table meld matters only
        while a natural left on the rack could reach it; the table melds no natural
        can reach any more only take jokers, so they enter as the best gains for
        each number of jokers laid onto them (a small knapsack), not one by one."""
        kinds = set(state.remaining)
        near = 0
        for anchor in self.anchors:
            if any(item in anchor.naturals for item in kinds):
                near |= 1 << anchor.index
        jokers = sum(1 for item in state.remaining if item.is_joker)
        far = self.joker_gains(self.all_melds & ~near & ~state.used, jokers)
        placed = state.placed if self.max_placed < len(state.remaining) + state.placed else 0
        return (
            state.remaining, state.used & near, far, state.need, state.need_run, placed, state.freed
        )

    def joker_gains(self, mask: int, jokers: int) -> tuple[tuple[int, int] | None, ...]:
        """Best score of laying exactly t jokers alone onto the melds of ``mask``, t = 0..jokers."""
        if not jokers or not mask or not self.lay_off:
            return ()
        cache_key = (mask, jokers)
        cached = self._gains_cache.get(cache_key)
        if cached is not None:
            return cached
        gains: list[tuple[int, int] | None] = [(0, 0)] + [None] * jokers
        for index in range(len(self.table)):
            if not mask >> index & 1:
                continue
            profile = self.joker_profile(index, jokers)
            merged = list(gains)
            for t in range(jokers + 1):
                base = gains[t]
                if base is None:
                    continue
                for u in range(1, jokers - t + 1):
                    extra = profile[u]
                    if extra is None:
                        continue
                    total = (base[0] + extra[0], base[1] + extra[1])
                    current = merged[t + u]
                    if current is None or total > current:
                        merged[t + u] = total
            gains = merged
        result = tuple(gains)
        self._gains_cache[cache_key] = result
        return result

    def joker_profile(self, index: int, jokers: int) -> list[tuple[int, int] | None]:
        """Best score of laying exactly t jokers alone onto table meld ``index``."""
        cached = self._profiles.get((index, jokers))
        if cached is not None:
            return cached
        profile: list[tuple[int, int] | None] = [None] * (jokers + 1)
        profile[0] = (0, 0)
        for anchor in self.anchors:
            if anchor.index != index:
                continue
            for step in self.bundles(anchor, (JOKER,) * jokers):
                t = step.gain[0]
                score = self.score(step.gain)
                current = profile[t]
                if current is None or score > current:
                    profile[t] = score
        self._profiles[(index, jokers)] = profile
        return profile

    # -- the recursion -------------------------------------------------------------------
    def best(self, state: State, gained: tuple[int, int] = (0, 0)) -> tuple[int, int] | None:
        """The best score reachable from ``state`` (None: the opening cannot be met,
        or the freed jokers cannot all go into new melds).  ``gained``: the score of the
        steps that led here, for the best play found so far (:meth:`incumbent_play`)."""
        budget.check()
        if state.freed:
            jokers = sum(1 for item in state.remaining if item.is_joker)
            # a freed joker is never kept, and a new meld needs a natural
            if jokers < state.freed or jokers == len(state.remaining):
                return None
        key = self._key(state)
        if key in self.memo:
            cached = self.memo[key]
            return None if cached is None else cached[0]
        outcome: tuple[tuple[int, int], _Step | None] | None
        if not state.remaining:
            outcome = ((0, 0), None) if state.need <= 0 and not state.need_run else None
        else:
            outcome = None
            path = self.path
            for step in self.steps(state):
                following = self.after(state, step)
                gain = self.score(step.gain)
                path.append(step)
                sub = self.best(following, (gained[0] + gain[0], gained[1] + gain[1]))
                path.pop()
                if sub is None:
                    continue
                total = (gain[0] + sub[0], gain[1] + sub[1])
                if outcome is None or total > outcome[0]:
                    outcome = (total, step)
        self.memo[key] = outcome
        if outcome is not None:
            reached = (gained[0] + outcome[0][0], gained[1] + outcome[0][1])
            if self.incumbent is None or reached > self.incumbent[0]:
                self.incumbent = (reached, tuple(self.path), state)
        return None if outcome is None else outcome[0]

    def incumbent_play(self, start: State) -> Play | None:
        """The best play found so far from ``start`` (the search ran out of time), or
        None when none was found."""
        if self.incumbent is None:
            return None
        _, steps, _ = self.incumbent
        with budget.suspended():
            return self.play(start, steps)

    def after(self, state: State, step: _Step) -> State:
        used = state.used if step.target is None else state.used | (1 << step.target)
        need = max(0, state.need - step.gain[1]) if step.target is None else state.need
        need_run = state.need_run and not step.is_run
        return State(
            step.rest, used, need, need_run, state.placed + step.gain[0], state.freed - step.freed
        )

    def steps(self, state: State) -> Iterator[_Step]:
        remaining = state.remaining
        pivot = remaining[0]
        stays = _Step((0, 0), remaining[1:])  # the pivot stays on the rack: tried last, so
        # the first answers found (the best so far, out of time) lay what they can
        room = self.max_placed - state.placed
        if room <= 0:
            yield stays
            return
        best_meld: dict[tuple[tuple[Item, ...], bool, int], _Step] = {}
        if not pivot.is_joker:
            for reading, rest, _ in self.partition.candidates(remaining):
                size = len(reading.slots)
                for freed in self.freed_choices(state, reading):
                    if size - freed > room:
                        continue
                    step = self.new_meld_step(reading, rest, freed)
                    slot_key = (rest, step.is_run, freed)
                    if slot_key not in best_meld or step.gain > best_meld[slot_key].gain:
                        best_meld[slot_key] = step
        yield from sorted(best_meld.values(), key=lambda step: self.score(step.gain),
                          reverse=True)
        if not self.lay_off:
            yield stays
            return
        best_bundle: dict[tuple[int, tuple[Item, ...]], _Step] = {}
        for anchor in self.anchors:
            if state.used & (1 << anchor.index):
                continue
            if not pivot.is_joker and pivot not in anchor.naturals:
                continue  # the bundle must hold the pivot, which cannot reach this meld
            for step in self.bundles(anchor, remaining):
                if step.gain[0] > room:
                    continue
                slot = (anchor.index, step.rest)
                old = best_bundle.get(slot)
                if old is None or self.score(step.gain) > self.score(old.gain):
                    best_bundle[slot] = step
        yield from best_bundle.values()
        yield stays

    def freed_choices(self, state: State, reading: Reading) -> range:
        """How many of a new meld's jokers may be freed ones."""
        most = min(state.freed, reading.joker_count)
        if self.freed_needs_rack_pair:
            # [remi] "mit zwei Steinen vom eigenen Ständer": two rack items beside them
            most = min(most, len(reading.slots) - 2)
        return range(max(most, 0) + 1)

    def new_meld_step(self, reading: Reading, rest: tuple[Item, ...], freed: int) -> _Step:
        """A new meld; ``freed`` of its jokers were freed by exchange and are not
        counted (they take the joker places worth least)."""
        used = [slot.item for slot in reading.slots]
        value = self.variant.meld_value(reading)
        if freed:
            joker_values = sorted(
                self.variant.slot_value(reading, slot) for slot in reading.slots if slot.is_joker
            )
            value -= sum(joker_values[:freed])
            for _ in range(freed):
                used.remove(JOKER)
        return _Step(
            (len(used), value),
            rest,
            used_items=tuple(used),
            meld=reading.resolved_items(),
            is_run=reading.kind is MeldKind.RUN,
            freed=freed,
        )

    # -- the answer --------------------------------------------------------------------
    def play(self, start: State, prefix: Sequence[_Step] = ()) -> Play:
        """The best play from ``start``; ``prefix``: steps taken first (then the best from
        where they lead, which the search has finished)."""
        melds: list[Meld] = list(self.table)
        new: list[Meld] = []
        placed: list[Item] = []
        value = 0
        state = start

        def take(step: _Step) -> None:
            nonlocal value
            if step.gain[0]:
                placed.extend(step.used_items)
                value += step.gain[1]
                if step.target is None:
                    new.append(step.meld)
                else:
                    melds[step.target] = step.meld

        for first in prefix:
            take(first)
            state = self.after(state, first)
        while state.remaining:
            # Equivalent states share a memo entry, so the step stored there may
            # suit another of them; pick a step of this very state that attains
            # its best score.
            target = self.best(state)
            assert target is not None
            step = None
            for candidate in self.steps(state):
                sub = self.best(self.after(state, candidate))
                if sub is None:
                    continue
                gain = self.score(candidate.gain)
                if (gain[0] + sub[0], gain[1] + sub[1]) == target:
                    step = candidate
                    break
            assert step is not None
            take(step)
            state = self.after(state, step)
        placed.sort(key=order_key)
        return Play(tuple(melds + new), tuple(placed), value, meets_initial=True)
