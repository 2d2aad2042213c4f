"""The best play on a table that may be rearranged (Sabra Rummikub).

The search itself is a dynamic programme in C (``engine/_rearrange.c``): it
walks the numbers 1..13 keeping, per colour, the lengths of the runs still
open, and per number checks the sets can be made.  Table tiles must all end
up in melds, rack tiles may; the score is what the objective weights them.
This module prepares its input, and replays its decisions into melds.

:func:`arrange` runs a portfolio of two exact methods in rounds: depth-first
probes of the C search, asked for target scores from the top down (:func:`_search`),
and the integer programme of :mod:`tabletop.engine.rearrange_ilp`, whose linear
relaxation runs on a second thread beside the probes once a first look of them
settles nothing; each round allows both four times more than the last, and the
first proof is the answer.  The probes prove nearly every position in a
millisecond, for either objective; the relaxation and HiGHS prove the few where
refuting a target would mean walking much of a dense table.  Under a time
budget the answer is the best play found when it runs out: the beam search's,
or better, never worse with more time.

Jokers on the table are treated as free to move (as in Räuber-Rommé and the
Dutch Sabra rule, and as rummikub-solver does); ``reference_mode`` drops the
melds rummikub-solver leaves out (a joker in a set of four, or at an end of a
run of four or five), so the two solvers can be compared on one footing.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from tabletop.engine import budget
from tabletop.engine.base import Variant
from tabletop.engine.items import JOKER, Color, Family, Item, Joker, Tile, format_items
from tabletop.engine.partition import MeldPacking, field_item
from tabletop.engine.play import Play, SolveError
from tabletop.engine.rearrange_ilp import Programme, Relaxation, candidates, ready
from tabletop.engine.turns import check_turn

_compiled: ModuleType | None
try:
    from tabletop.engine import _rearrange as _compiled
except ImportError:  # pragma: no cover - the extension is built on install
    _compiled = None

COLOURS = (Color.K, Color.B, Color.O, Color.R)
NUMBERS = range(1, 14)


class RearrangeError(ValueError):
    """A position the rearrangement solver cannot take."""


@dataclass(frozen=True)
class Arrangement:
    """The table after the play: melds, the rack items placed, and the score."""

    melds: tuple[tuple[Item, ...], ...]
    placed: tuple[Item, ...]
    score: int
    value: int


def _core() -> ModuleType:
    if _compiled is None:  # pragma: no cover - the extension is built on install
        raise RearrangeError(
            "the compiled solver core is missing: reinstall with 'pip install .'"
        )
    return _compiled


@cache
def set_table(reference_mode: bool) -> bytes:
    """set_ok[n1][n2][j]: n1 colours give one tile, n2 give two, j jokers: can sets be made?"""
    table = bytearray(5 * 5 * 8)
    for n1 in range(5):
        for n2 in range(5 - n1):
            for jokers in range(8):
                counts = [2] * n2 + [1] * n1
                table[(n1 * 5 + n2) * 8 + jokers] = _sets_possible(
                    tuple(counts), jokers, reference_mode
                )
    return bytes(table)


@cache
def _sets_possible(counts: tuple[int, ...], jokers: int, reference_mode: bool) -> bool:
    return _split_sets(counts, jokers, reference_mode) is not None


@cache
def _split_sets(
    counts: tuple[int, ...], jokers: int, reference_mode: bool
) -> tuple[tuple[tuple[int, ...], int], ...] | None:
    """Split tiles of one number into sets: ``counts[i]`` tiles of colour slot i.

    Returns (colour slots, jokers) per set, or None.  A set holds one tile of
    each of 3 or 4 colours, at least one real tile, jokers for missing
    colours; in reference mode a set with a joker has exactly three items.
    """
    if not any(counts):
        return () if jokers == 0 else None
    first = next(i for i, n in enumerate(counts) if n)
    others = [i for i, n in enumerate(counts) if n and i != first]
    for size in range(0, len(others) + 1):
        for chosen in itertools.combinations(others, size):
            members = (first, *chosen)
            for used_jokers in range(0, jokers + 1):
                total = len(members) + used_jokers
                if not 3 <= total <= 4 or used_jokers > 4 - len(members):
                    continue
                if reference_mode and used_jokers and total != 3:
                    continue
                rest = list(counts)
                for member in members:
                    rest[member] -= 1
                tail = _split_sets(tuple(rest), jokers - used_jokers, reference_mode)
                if tail is not None:
                    return ((members, used_jokers), *tail)
    return None


NO_INCUMBENT = -1_000_000_000
BEAM_WIDTH = 48
DEPTH_FIRST = -1
SEARCH_BUDGET = 10_000
"""States the depth-first probes may expand between them in the portfolio's first round
(some 1.5 ms, about what the linear relaxation costs: probes that need more are mostly ones
the relaxation settles sooner); each later round allows four times as many."""
FIRST_LOOK = 2_000
"""States the probes may expand before the linear relaxation is started beside them: most
positions are settled sooner, and never pay for a relaxation."""
ILP_SLICE = 0.05
"""Seconds the integer programme has in the portfolio's first round; each later round
allows four times as long."""
ROUND_GROWTH = 4
FIRST_DIVE_STATES = 20_000
"""States the dive for a first play may expand when the beam search finds none."""


@dataclass
class _Known:
    """What the search has learnt of the optimum: a reachable score (the floor), a score no
    play reaches beyond (the ceiling), and the best play found, worth the floor."""

    low: int | None
    high: int
    best: tuple[int, list[int]] | None


class _OutOfBudget(Exception):
    """A probe expanded all the states its round allows: the round goes to the integer
    programme, with what the search has learnt."""


class _Round:
    """The states the probes of one round may expand between them."""

    def __init__(self, states: int) -> None:
        self.left = states

    def probe(
        self, core: ModuleType, arguments: tuple[object, ...], target: int
    ) -> tuple[int, list[int]] | None:
        left = budget.remaining()
        if left is not None and left <= 0:
            raise budget.OutOfTime
        if self.left <= 0:
            raise _OutOfBudget
        # the probe also stops itself at the call's deadline (it reads the clock as it goes)
        answer = core.solve(*arguments, target, DEPTH_FIRST, self.left, left or 0.0)
        self.left -= core.expansions()
        if isinstance(answer, str):
            budget.check()  # the call's time is up: OutOfTime, else the round's states are
            raise _OutOfBudget
        return answer


def _start(
    core: ModuleType, arguments: tuple[object, ...], nothing_is_an_answer: bool
) -> _Known:
    """The first floor (a quick beam search; for a legal table, laying nothing; else none
    yet) and the ceiling: every placeable rack tile, each rack joker at its best weight."""
    rack, weight_tile, weight_joker = arguments[1], arguments[2], arguments[3]
    jokers_rack = arguments[6]
    assert isinstance(rack, list) and isinstance(weight_tile, list)
    assert isinstance(weight_joker, list) and isinstance(jokers_rack, int)
    upper = sum(n * w for n, w in zip(rack, weight_tile, strict=True))
    upper += jokers_rack * max(weight_joker)
    best = core.solve(*arguments, NO_INCUMBENT, BEAM_WIDTH)
    if best is None:
        # the beam keeps the states that score most so far, which on a dense table may all
        # fail to close their runs; one greedy dive asking for any play mostly finds one
        left = budget.remaining()
        dive = core.solve(*arguments, NO_INCUMBENT, DEPTH_FIRST, FIRST_DIVE_STATES, left or 0.0)
        best = None if isinstance(dive, str) else dive
    low = best[0] if best is not None else (0 if nothing_is_an_answer else None)
    return _Known(low, upper, best)


def _search(
    core: ModuleType, arguments: tuple[object, ...], known: _Known, states: int
) -> tuple[int, list[int]] | None:
    """The optimum, by probing target scores from the top down (``known`` is updated as
    the probes learn; :class:`_OutOfBudget` once the probes have expanded ``states``).

    A depth-first search asked to reach a target drops every state that could not reach it
    even by placing all the rack tiles still ahead, and tries the greediest moves first.  A
    target at or just below the optimum prunes hardest: it is reached on the first dive, or
    refuted by a memo of failed states that stays small.  A target far below the optimum
    prunes little, and the search wanders before it finds a play.  So the probes start at
    the ceiling and step down, in steps that double while targets are refuted; a play found
    lifts the floor to its score and the next probe is at the ceiling again.
    """
    round_ = _Round(states)
    if known.low is None:
        # nothing known to be reachable yet: any play will do first
        first = round_.probe(core, arguments, NO_INCUMBENT)
        if first is None:
            return None
        known.best, known.low = first, first[0]
    step = 1
    while known.low < known.high:
        if budget.spent() and known.best is not None:
            budget.settle()  # the best play found so far, worth ``low``
            return known.best
        budget.check()
        target = max(known.low + 1, known.high - step + 1)
        answer = round_.probe(core, arguments, target)
        if answer is None:
            known.high, step = target - 1, step * 2
        else:
            known.best, known.low, step = answer, answer[0], 1
    if known.best is None or known.best[0] < known.low:
        with budget.suspended():  # the optimum is known; this only rebuilds its play
            known.best = core.solve(*arguments, known.low, DEPTH_FIRST, 0, 0.0)
    return known.best


ILP_IMPORT_SECONDS = 2.0
"""Under a time budget with less than this left, the integer programme is not started until
HiGHS is imported (:func:`rearrange_ilp.prepare`, which servers call on start)."""
ILP_TIME_SHARE = 0.8
"""Of what is left of a budget, what the integer programme may take at most: HiGHS checks
its clock between its phases, not within them, and may run somewhat past its limit."""


class _Relaxing:
    """A position's programme's linear relaxation solved on a thread of its own, beside the
    probes (HiGHS leaves the GIL as the probes do); ``result`` waits for it.  A relaxation
    no longer wanted is left to finish, within its time limit."""

    def __init__(self, programme: Programme, seconds: float) -> None:
        self._programme, self._seconds = programme, seconds
        self._relaxed: Relaxation | None = None
        self._error: BaseException | None = None
        # not a daemon: a process that ends while HiGHS still runs would be aborted; the
        # interpreter waits for it instead, at most its time limit
        self._thread = threading.Thread(target=self._run, name="relaxation")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._relaxed = self._programme.relax(seconds=self._seconds)
        except BaseException as error:  # raised again in the caller's thread
            self._error = error

    def result(self) -> Relaxation | None:
        """The relaxation (None: not even it can be met); :class:`budget.OutOfTime` where
        HiGHS ran out of time first."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._relaxed


def _settle(known: _Known) -> tuple[int, list[int]]:
    """Out of time: the best play found so far, not proved optimal (none found yet: the
    caller's fallback answers, :class:`budget.OutOfTime`)."""
    if known.best is None:
        raise budget.OutOfTime
    budget.settle()
    return known.best


def _placeable(table: list[int], rack: list[int], jokers: int) -> list[int]:
    """The rack without tiles that no meld could hold, whatever the arrangement.

    A tile is kept while some set (two other colours of its number, jokers
    filling in) or some run of three around it could be made from the tiles
    in play.  Dropping the others shrinks the search and sharpens its bound.
    """
    rack = list(rack)
    changed = True
    while changed:
        changed = False
        available = [a + b for a, b in zip(table, rack, strict=True)]
        for index, count in enumerate(rack):
            if not count:
                continue
            colour, number = divmod(index, 13)
            others = sum(1 for c in range(4) if c != colour and available[c * 13 + number])
            fits = others + jokers >= 2
            for start in range(max(0, number - 2), min(number, 10) + 1):
                missing = sum(
                    1
                    for n in range(start, start + 3)
                    if n != number and not available[colour * 13 + n]
                )
                fits = fits or missing <= jokers
            if not fits:
                rack[index] = 0
                changed = True
    return rack


def _grid(items: Sequence[Item]) -> list[int]:
    grid = [0] * 52
    for item in items:
        if isinstance(item, Tile):
            grid[item.color.index * 13 + item.number - 1] += 1
    return grid


def arrange(
    table_items: Sequence[Item],
    rack: Sequence[Item],
    *,
    objective: str = "tiles",
    threshold: int = 0,
    joker_weight: int | None = None,
    reference_mode: bool = False,
    table_is_legal: bool = False,
) -> Arrangement | None:
    """The best arrangement of all of ``table_items`` plus some of ``rack``.

    ``objective`` "tiles" scores 1 per rack item placed, "value" its face
    value (a joker: the number it stands for).  ``joker_weight`` overrides
    what a rack joker scores (0: count numbered tiles only, as rummikub-solver
    does).
    ``threshold`` > 0: the placed items must be worth at least that much
    (the initial meld; then ``table_items`` should be empty).
    ``table_is_legal``: the table items already lie in legal melds, so
    placing nothing is a known answer (it bounds the search).  None when no
    arrangement exists (a table that cannot be arranged at all, or a
    threshold out of reach).
    """
    for item in (*table_items, *rack):
        if not isinstance(item, (Tile, Joker)) or item.family not in (None, Family.TILES):
            raise RearrangeError(f"{item} is not a Rummikub tile")
    if objective not in ("tiles", "value"):
        raise RearrangeError(f"objective is tiles or value, not {objective!r}")
    jokers_table = sum(isinstance(item, Joker) for item in table_items)
    jokers_rack = sum(isinstance(item, Joker) for item in rack)
    table_grid, rack_grid = _grid(table_items), _grid(rack)
    if max(a + b for a, b in zip(table_grid, rack_grid, strict=True)) > 2:
        raise RearrangeError("more than two copies of a tile")
    if jokers_table + jokers_rack > 2:
        raise RearrangeError("more than two jokers")
    if objective == "value":
        weight_tile = [n for _ in COLOURS for n in NUMBERS]
        weight_joker = list(NUMBERS) if joker_weight is None else [joker_weight] * 13
    else:
        weight_tile = [1] * 52
        weight_joker = [1 if joker_weight is None else joker_weight] * 13
    rack_grid = _placeable(table_grid, rack_grid, jokers_table + jokers_rack)
    core = _core()
    arguments = (
        table_grid,
        rack_grid,
        weight_tile,
        weight_joker,
        list(NUMBERS),
        jokers_table,
        jokers_rack,
        2,
        int(reference_mode),
        threshold,
        set_table(reference_mode),
    )
    jokers_in_play = jokers_table + jokers_rack > 0
    known = _start(core, arguments, table_is_legal and threshold == 0)
    programme: Programme | None = None  # built when a first look of the probes gives up
    relaxing: _Relaxing | None = None

    # A portfolio of two exact methods, in rounds: the probes, then the integer programme
    # (HiGHS proves with linear-programming bounds what the probes would have to walk), each
    # round allowing both four times more than the last; the first proof is the answer.
    # Its linear relaxation comes first, started on a thread of its own once a first look of
    # the probes settles nothing, while a round of them goes on (both leave the GIL; the
    # round's size in states, not the relaxation's speed, decides when its answer is read,
    # so every call answers alike): mostly its optimum is the integer optimum, often
    # whole-numbered (then it is the answer), else a probe at its ceiling, in a round of its
    # own, mostly proves it with a play.  A time budget that runs out ends it with the best
    # play found, never worse than the beam's.
    states, seconds = min(FIRST_LOOK, SEARCH_BUDGET), ILP_SLICE
    while True:
        answer = None
        try:
            answer = _search(core, arguments, known, states)
        except _OutOfBudget:
            pass
        except budget.OutOfTime:
            answer = _settle(known)
        else:
            if answer is None:
                return None
        if answer is not None:
            score, decisions = answer
            melds = _replay(decisions, jokers_in_play, reference_mode)
            break
        left = budget.remaining()
        if left is not None and left < ILP_IMPORT_SECONDS and not ready():
            # HiGHS's import would take the rest of the budget: more probing instead
            states = max(states, SEARCH_BUDGET) * ROUND_GROWTH
            continue
        slice_s = seconds if left is None else min(seconds, left * ILP_TIME_SHARE)
        if programme is None:
            # built here: the thread holds the GIL for as little as it can (a thread that
            # holds it keeps the probes' thread waiting up to the interpreter's switch interval)
            programme = Programme(table_grid, rack_grid, jokers_table, jokers_rack,
                                  weight_tile=weight_tile, weight_joker=weight_joker,
                                  threshold=threshold, reference_mode=reference_mode)
            relaxing = _Relaxing(programme, slice_s)
            states = SEARCH_BUDGET
            continue
        if relaxing is not None:
            waited, relaxing = relaxing, None
            try:
                relaxed = waited.result()
            except budget.OutOfTime:
                pass
            else:
                if relaxed is None:
                    return None
                if relaxed.play is not None:
                    score, melds = relaxed.play
                    break
                known.high = max(min(relaxed.ceiling, known.high), known.low or 0)
                # the probes again, from that ceiling and with more room: a probe at the
                # optimum mostly finds its play sooner than the programme proves it
                states *= ROUND_GROWTH
                continue
        try:
            solved = programme.best(ceiling=known.high, seconds=slice_s)
        except budget.OutOfTime:
            if budget.spent():
                score, decisions = _settle(known)
                melds = _replay(decisions, jokers_in_play, reference_mode)
                break
            states, seconds = states * ROUND_GROWTH, seconds * ROUND_GROWTH
            continue
        if solved is None:
            return None
        score, melds = solved
        break
    placed_counter = Counter(item if isinstance(item, Tile) else JOKER for m in melds for item in m)
    placed_counter.subtract(item if isinstance(item, Tile) else JOKER for item in table_items)
    placed = tuple(sorted(placed_counter.elements(), key=_order))
    value = sum(_stands_for_number(item) for meld in melds for item in meld)
    return Arrangement(melds, placed, score, value)


def _order(item: Item) -> tuple[int, int]:
    if isinstance(item, Tile):
        return (item.color.index, item.number)
    return (9, 0)


def _stands_for_number(item: Item) -> int:
    if isinstance(item, Tile):
        return item.number
    assert isinstance(item, Joker) and isinstance(item.stands_for, Tile)
    return item.stands_for.number


# index [colour][number]; number 0 is a placeholder so numbers index directly
_TILES: list[list[Item]] = [[Tile(colour, max(n, 1)) for n in range(14)] for colour in COLOURS]
_JOKERS: list[list[Item]] = [[Joker(tile) for tile in row] for row in _TILES]  # type: ignore[arg-type]


def _replay(
    decisions: Sequence[int], jokers_in_play: bool, reference_mode: bool
) -> tuple[tuple[Item, ...], ...]:
    """Turn the DP's decisions into melds, mirroring its slot bookkeeping."""
    slots_per_colour = 2 + (1 if jokers_in_play else 0)
    # per colour: slots as [code_key, tiles]; the C side sorts codes descending
    slots: list[list[list[Item]]] = [[[] for _ in range(slots_per_colour)] for _ in COLOURS]
    codes: list[list[int]] = [[0] * slots_per_colour for _ in COLOURS]
    runs: list[tuple[Item, ...]] = []
    sets: list[tuple[Item, ...]] = []
    steps = iter(decisions)
    for number in NUMBERS:
        to_sets: list[int] = []
        for colour_index in range(len(COLOURS)):
            decision = next(steps)
            combo, count_to_sets = decision & 0xFF, (decision >> 8) & 0xF
            to_sets.append(count_to_sets)
            colour_codes = codes[colour_index]
            if combo == 0 and not any(colour_codes):
                continue  # no run of this colour open or started
            colour_slots = slots[colour_index]
            order = sorted(range(slots_per_colour), key=lambda s: -colour_codes[s])
            new_slots: list[list[Item]] = []
            new_codes: list[int] = []
            for position, slot in enumerate(order):
                action = (combo >> (2 * position)) & 3
                tiles, code = colour_slots[slot], colour_codes[slot]
                if action == 0:
                    new_slots.append(tiles)
                    new_codes.append(code)
                elif action == 1:
                    runs.append(tuple(tiles))
                    new_slots.append([])
                    new_codes.append(0)
                else:
                    piece = (
                        _TILES[colour_index][number]
                        if action == 2
                        else _JOKERS[colour_index][number]
                    )
                    new_slots.append([*tiles, piece])
                    first = tiles[0] if tiles else piece
                    new_codes.append(_code(len(tiles) + 1, first, piece, reference_mode))
            slots[colour_index], codes[colour_index] = new_slots, new_codes
        decision = next(steps)
        jokers = (decision & 0xF) + ((decision >> 4) & 0xF)
        if jokers or any(to_sets):
            sets.extend(_make_sets(number, to_sets, jokers, reference_mode))
    for colour_slots in slots:
        runs.extend(tuple(tiles) for tiles in colour_slots if tiles)
    return tuple(sorted(runs, key=_meld_order) + sorted(sets, key=_meld_order))


def _code(length: int, first: Item, last: Item, reference_mode: bool) -> int:
    """The C side's slot code (make_code), whose order the replay must follow."""
    if not reference_mode:
        return 1 + (min(length, 3) - 1) * 4
    length, start, end = min(length, 6), int(first.is_joker), int(last.is_joker)
    if length <= 3 or (length == 4 and start):
        end = 0
    if length == 5:
        start, end, length = (1, 0, 5) if start or end else (0, 0, 6)
    if length == 6:
        start = end = 0
    return 1 + (length - 1) * 4 + start * 2 + end


def _meld_order(meld: tuple[Item, ...]) -> tuple[int, ...]:
    played = [item.stands_for if isinstance(item, Joker) else item for item in meld]
    return tuple(x for item in played for x in _order(item))  # type: ignore[arg-type]


def _make_sets(
    number: int, to_sets: list[int], jokers: int, reference_mode: bool
) -> list[tuple[Item, ...]]:
    if not any(to_sets) and not jokers:
        return []
    colour_slots = [i for i, n in enumerate(to_sets) if n]
    counts = tuple(to_sets[i] for i in colour_slots)
    split = _split_sets(counts, jokers, reference_mode)
    assert split is not None, (number, to_sets, jokers)
    sets = []
    for members, used_jokers in split:
        colours = [COLOURS[colour_slots[m]] for m in members]
        missing = [c for c in COLOURS if c not in colours]
        items: list[Item] = [Tile(c, number) for c in colours]
        items += [Joker(Tile(missing[k], number)) for k in range(used_jokers)]
        sets.append(tuple(items))
    return sets


def solve_rearrangement(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]] = (),
    *,
    initial: bool = False,
    objective: str = "tiles",
) -> Play:
    """The best play for ``variant`` (Sabra) given the rack and the table's melds.

    Not opened yet (``initial``): the opening must be worth 30 from the rack
    alone ([sabra] "ausschließlich aus dem Blatt ... mindesten 30"); then, as
    most rule sets allow (option ``rearrange_on_opening_turn``), the rest of
    the rack may go onto the rebuilt table in the same turn.  The best such
    play is found exactly: the best play without the opening rule is taken if
    its placed tiles hold an opening; otherwise every opening (every set of
    melds from the rack first reaching 30) is tried as fixed, with the search
    placing the most around it.

    Jokers: the search treats table jokers as free to move.  Under the
    official rule a meld holding a joker may be extended but not split; under
    the Dutch rule (option ``dutch``) it may be split but the joker keeps its
    meaning.  A play found with free jokers is kept if
    :func:`tabletop.engine.turns.check_turn` accepts it under the variant's options
    (then it is optimal, since the free search is a relaxation); else each
    meld holding a joker is taken through its fates (kept, extended at its
    ends, or its joker exchanged for the tile it stands for: that meld rebuilt
    with the rest, or kept whole, as it is or extended or completed, with only
    its joker moving, since the best rebuild may put the joker back where it
    was) with the rest of the table
    rebuilt freely, and the best play the turn check accepts wins.
    That answer is legal; the extension tiles are tried from the rack and
    from the loose table tiles in every split.  Not searched: joining two
    joker melds to each other.
    """

    rules = variant.table_rules
    if not rules.rearrange:
        raise SolveError(f"{variant.id} does not rearrange the table; use engine.solver.solve")
    if rules.jokers_move_freely:
        return _solve_free_jokers(variant, rack, table, initial=initial, objective=objective)
    if variant.family is not Family.TILES:
        raise SolveError(
            f"the rearrangement search with fixed jokers is for tiles, not {variant.id}"
        )
    table_melds: tuple[tuple[Item, ...], ...] = tuple(tuple(meld) for meld in table)
    for meld in table_melds:
        analysis = variant.analyse(meld)
        if not analysis.valid:
            raise SolveError(
                f"the table holds an invalid meld {format_items(meld)!r}: {analysis.reason}"
            )
    table_items = [JOKER if isinstance(i, Joker) else i for meld in table_melds for i in meld]
    rack = tuple(JOKER if isinstance(i, Joker) else i for i in rack)

    def play_of(arrangement: Arrangement | None, meets: bool = True) -> Play:
        if arrangement is None or not arrangement.placed:
            return Play(table_melds, (), 0, meets and not initial)
        return Play(arrangement.melds, arrangement.placed, _placed_value(arrangement), meets)

    def legal(arrangement: Arrangement | None) -> bool:
        if arrangement is None or not arrangement.placed:
            return True
        verdict = check_turn(
            variant, table_melds, arrangement.melds, arrangement.placed, opened=not initial
        )
        return verdict.valid

    if not initial:
        free = arrange(table_items, rack, objective=objective, table_is_legal=True)
        # the search moves jokers freely; its answer stands when the variant's joker rule
        # (official: melds holding a joker stay whole; Dutch: jokers keep their meaning)
        # accepts it, else the melds holding jokers are taken one fate at a time
        if legal(free):
            return play_of(free)
        kept = _with_jokers_kept(variant, table_melds, rack, objective, legal)
        return play_of(kept)

    opening = arrange([], rack, objective=objective, threshold=variant.initial_meld_required)
    if opening is None or not opening.placed:
        return Play(table_melds, (), 0, False)
    only_opening = Play(table_melds + opening.melds, opening.placed, _placed_value(opening), True)
    if not table_melds or not variant.table_rules.rearrange_on_opening_turn:
        return only_opening
    best = _best_opening_turn(variant, table_items, rack, objective)
    if best is None or not legal(best):
        return only_opening
    return Play(best.melds, best.placed, _placed_value(best), True)


def _placed_value(arrangement: Arrangement) -> int:
    """Face values of the placed tiles; a placed joker counts the number it stands for
    (the player puts his jokers where they count most)."""
    naturals = [item for item in arrangement.placed if isinstance(item, Tile)]
    jokers = sum(1 for item in arrangement.placed if isinstance(item, Joker))
    meanings = sorted(
        (
            _stands_for_number(item)
            for meld in arrangement.melds
            for item in meld
            if isinstance(item, Joker)
        ),
        reverse=True,
    )
    return sum(t.number for t in naturals) + sum(meanings[:jokers])


def _score(arrangement: Arrangement, objective: str) -> int:
    return len(arrangement.placed) if objective == "tiles" else _placed_value(arrangement)


def _best_opening_turn(
    variant: Variant,
    table_items: list[Item],
    rack: tuple[Item, ...],
    objective: str,
) -> Arrangement | None:
    required = variant.initial_meld_required
    free = arrange(table_items, rack, objective=objective, table_is_legal=True)
    if free is not None and arrange([], free.placed, threshold=required) is not None:
        return free  # the best play holds an opening: lay that first, then the rest
    best: Arrangement | None = None
    best_score = -1
    for opening in _openings(rack, required):
        if budget.spent() and best is not None:
            budget.settle()  # out of time: the best opening turn tried so far
            break
        rest = list((Counter(rack) - Counter(opening)).elements())
        found = arrange([*table_items, *opening], rest, objective=objective, table_is_legal=True)
        if found is None:
            continue
        placed = tuple(sorted((*opening, *found.placed), key=_order))
        combined = Arrangement(found.melds, placed, 0, 0)
        score = _score(combined, objective)
        if score > best_score:
            best, best_score = combined, score
    return best


def _openings(rack: tuple[Item, ...], required: int) -> list[tuple[Item, ...]]:
    """Every set of rack tiles made of melds that first reaches ``required`` points
    (adding a meld to one of these never helps the rule, only the count, which the
    search after it takes care of)."""

    jokers = sum(isinstance(item, Joker) for item in rack)
    available = Counter(JOKER if isinstance(i, Joker) else i for i in rack)
    melds = []
    for candidate in candidates(jokers, False):
        need = Counter(JOKER if isinstance(i, Joker) else i for i in candidate.items)
        if all(available[item] >= n for item, n in need.items()):
            melds.append((need, candidate.value()))
    found: set[tuple[Item, ...]] = set()

    def extend(start: int, used: Counter[Item], value: int) -> None:
        if value >= required:
            found.add(tuple(sorted(used.elements(), key=_order)))
            return
        for index in range(start, len(melds)):
            need, worth = melds[index]
            if all(available[item] - used[item] >= n for item, n in need.items()):
                extend(index, used + need, value + worth)

    extend(0, Counter(), 0)
    return sorted(found, key=lambda o: (-len(o), [_order(i) for i in o]))


def _with_jokers_kept(
    variant: Variant,
    table: tuple[tuple[Item, ...], ...],
    rack: tuple[Item, ...],
    objective: str,
    legal: Callable[[Arrangement | None], bool],
) -> Arrangement | None:
    """The official Sabra rule: melds holding a joker stay whole, unless the player lays the
    tile a joker stands for, which frees the joker (to be played again at once, in another
    meld).  Each way is searched and kept only if the turn check accepts it."""
    locked = [meld for meld in table if any(isinstance(i, Joker) for i in meld)]
    free_items = [i for meld in table if meld not in locked for i in meld]
    best: Arrangement | None = None
    best_score = -1
    fates = [_fates(variant, meld) for meld in locked]
    for choice in itertools.product(*fates):
        if budget.spent() and best is not None:
            budget.settle()  # out of time: the best legal play tried so far
            break
        gained: list[Item] = [tile for fate in choice for tile in fate.gained]
        rebuilt = any(fate.freed and not fate.whole for fate in choice)
        for from_rack in _rack_shares(gained, Counter(rack), Counter(free_items)):
            # a freed meld's tiles go back to the table with its joker; or, since the best
            # rebuild may put the joker back where it was (which the rule forbids) when
            # another home is worth as much, the meld stays whole and only the joker moves
            for whole in (False, True) if rebuilt else (True,):
                pool = Counter(free_items)
                hand = Counter(rack)
                hand.subtract(from_rack)
                pool.subtract(Counter(gained) - from_rack)
                kept: list[tuple[Item, ...]] = []
                for fate in choice:
                    stays = whole or fate.whole or not fate.freed
                    if not stays:
                        pool.update(i for i in fate.meld if not isinstance(i, Joker))
                    if fate.freed:
                        pool[JOKER] += 1
                    if stays:
                        kept.append(fate.meld)
                found = arrange(list(pool.elements()), list(hand.elements()),
                                objective=objective)
                if found is None:
                    continue
                placed = tuple(sorted((*from_rack.elements(), *found.placed), key=_order))
                combined = Arrangement(tuple(kept) + found.melds, placed, 0, 0)
                score = _score(combined, objective)
                if score > best_score and legal(combined):
                    best, best_score = combined, score
    return best


def _rack_shares(
    gained: list[Item], rack: Counter[Item], loose: Counter[Item]
) -> list[Counter[Item]]:
    """Every way to take the tiles a joker's meld gains from the rack or from the loose
    table tiles (as multisets of rack tiles), or none if they cannot all be found."""
    shares: list[Counter[Item]] = [Counter()]
    for tile, need in Counter(gained).items():
        low, high = max(0, need - loose[tile]), min(need, rack[tile])
        if low > high:
            return []
        shares = [share + Counter({tile: k}) for share in shares for k in range(low, high + 1)]
    return shares


@dataclass(frozen=True)
class _Fate:
    """What becomes of one table meld holding a joker: the meld, the tiles it gains, whether
    its joker is freed and, for a freed one, whether the meld stays as ``meld`` says
    (else its tiles may go back into the search, or stay whole)."""

    meld: tuple[Item, ...]
    gained: tuple[Tile, ...]
    freed: bool = False
    whole: bool = False


def _fates(variant: Variant, meld: tuple[Item, ...]) -> list[_Fate]:
    """What may become of a meld holding a joker: kept, extended at its ends or completed
    (the joker keeping its place), or its joker exchanged for the tile it stands for (the
    meld and the freed joker then go back into the search), and exchanged then extended
    or completed, the meld staying whole (the search alone might put the freed joker back
    into it)."""
    reading = variant.analyse(meld).readings[0]
    resolved = reading.resolved_items()
    fates = [_Fate(resolved, ())]
    exchanged = [
        (meaning, tuple(sorted((*(i for i in meld if isinstance(i, Tile)), meaning),
                               key=_order)))
        for meaning in reading.joker_meanings() if isinstance(meaning, Tile)
    ]
    if reading.kind.value == "run":
        colour = COLOURS[reading.slots[0].suit or 0]
        low, high = reading.slots[0].position, reading.slots[-1].position
        for left in range(0, low):
            for right in range(0, 14 - high):
                if left == right == 0:
                    continue
                before = tuple(Tile(colour, n) for n in range(low - left, low))
                after = tuple(Tile(colour, n) for n in range(high + 1, high + right + 1))
                fates.append(_Fate((*before, *resolved, *after), (*before, *after)))
                for meaning, run in exchanged:
                    fates.append(_Fate((*before, *run, *after), (meaning, *before, *after),
                                       freed=True, whole=True))
    else:
        missing = [COLOURS[s] for s in reading.missing_suits]
        number = reading.rank
        for extra in missing[: 4 - len(meld)]:
            fates.append(_Fate((*resolved, Tile(extra, number)), (Tile(extra, number),)))
        for meaning, group in exchanged:
            for colour in missing:
                if colour is not meaning.color and len(group) < 4:
                    fates.append(_Fate((*group, Tile(colour, number)),
                                       (meaning, Tile(colour, number)), freed=True, whole=True))
    for meaning, exchanged_meld in exchanged:
        fates.append(_Fate(exchanged_meld, (meaning,), freed=True))
    return fates


# --- Räuber-Rommé: cards, two decks, six jokers --------------------------------------
def _solve_free_jokers(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]],
    *,
    initial: bool,
    objective: str,
) -> Play:
    """Räuber-Rommé's free rearrangement ([raeuber] "gänzlich neu kombiniert", table jokers
    finding "neue Verwendungen"), searched exactly over the cards in play.

    The opening (40 from the hand, [rommee] "Erstmeldung") cannot touch the table; laying
    off and rebuilding start the turn after ("Hat ein Spieler seine Erstmeldung ausgelegt,
    so darf er ...").  ``value`` counts what the placed cards would cost left in the hand
    (ace 11, joker 20), which is what laying them saves.  The search is
    :class:`partition.MeldPacking` over all the cards in play, every table card to be
    placed: exact, and a few tenths of a second for a table of 14 melds.  Under a time
    budget the rack's own melds beside the table are found first (a quarter of the budget
    at most), and out of time the better of those and the best rebuilt table found so far
    is the answer.
    """

    table_melds = tuple(tuple(meld) for meld in table)
    for meld in table_melds:
        analysis = variant.analyse(meld)
        if not analysis.valid:
            raise SolveError(
                f"the table holds an invalid meld {format_items(meld)!r}: {analysis.reason}"
            )
    bare_rack = tuple(JOKER if isinstance(i, Joker) else i for i in rack)

    def worth(item: Item) -> int:
        # one criterion only (no tie-break): its linear relaxation then bounds the search
        # tightly, where a second criterion weighted in would blur it
        return variant.hand_value(item) if objective == "value" else 1

    if initial:
        found = _split_rack(variant, bare_rack, variant.initial_meld_required, worth)
        if found is None:
            return Play(table_melds, (), 0, False)
        melds, placed = found
        value = sum(variant.hand_value(i) for i in placed)
        return Play(table_melds + melds, placed, value, True)
    table_items = tuple(JOKER if isinstance(i, Joker) else i for m in table_melds for i in m)
    floor: Play | None = None
    left = budget.remaining()
    if left is not None:
        # under a budget: first the rack's own melds beside the table (quick), the floor
        # of the answer should the rebuilding run out of time
        try:
            with budget.limit(left * FLOOR_SHARE):
                own = _split_rack(variant, bare_rack, 0, worth)
        except budget.OutOfTime:
            own = None
        if own is not None:
            floor = Play(table_melds + own[0], own[1],
                         sum(variant.hand_value(i) for i in own[1]), True, optimal=False)
    try:
        found = _split_all(variant, table_items, bare_rack, worth)
    except budget.OutOfTime:
        if floor is None:
            raise
        budget.settle()
        return floor
    if found is None or not found[1]:
        return Play(table_melds, (), 0, True)
    melds, placed = found
    play = Play(melds, placed, sum(variant.hand_value(i) for i in placed), True)
    if floor is not None and budget.settled():
        mine = sum(worth(i) for i in play.placed)
        if sum(worth(i) for i in floor.placed) > mine:
            return floor
    return play


FLOOR_SHARE = 0.25
"""Of what is left of a budget, what the floor of a rebuilt table's answer may take."""


def _split_all(
    variant: Variant, table: tuple[Item, ...], rack: tuple[Item, ...], worth: Callable[[Item], int]
) -> tuple[tuple[tuple[Item, ...], ...], tuple[Item, ...]] | None:
    """All table cards and the best part of the rack in legal melds (the packing search,
    every table card to be placed; out of time, the best found so far)."""

    def slot_worth(field: int, slot_value: int) -> int:
        return worth(field_item(variant.family, field))

    packing = MeldPacking(variant, (*table, *rack), slot_worth, optional=Counter(rack))
    result = packing.solve()
    if result is None:
        return None
    if not result.optimal:
        budget.settle()
    melds = tuple(reading.resolved_items() for reading in result.readings)
    laid = Counter(JOKER if isinstance(i, Joker) else i for m in melds for i in m)
    laid.subtract(table)
    return melds, tuple(sorted(laid.elements(), key=str))


def _split_rack(
    variant: Variant, rack: tuple[Item, ...], required: int, worth: Callable[[Item], int]
) -> tuple[tuple[tuple[Item, ...], ...], tuple[Item, ...]] | None:
    """Melds from the rack alone worth at least ``required`` (initial-meld values), placing
    the most; None if no opening can be made."""

    def slot_worth(field: int, slot_value: int) -> int:
        return worth(field_item(variant.family, field))

    result = MeldPacking(variant, rack, slot_worth).solve(required)
    if result is None or not result.readings:
        return None
    if not result.optimal:
        budget.settle()
    melds = tuple(reading.resolved_items() for reading in result.readings)
    placed = tuple(
        sorted((JOKER if isinstance(i, Joker) else i for m in melds for i in m), key=str)
    )
    return melds, placed
