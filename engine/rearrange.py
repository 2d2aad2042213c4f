"""The best play on a table that may be rearranged (Sabra Rummikub).

The search itself is a dynamic programme in C (``engine/_rearrange.c``): it
walks the numbers 1..13 keeping, per colour, the lengths of the runs still
open, and per number checks the sets can be made.  Table tiles must all end
up in melds, rack tiles may; the score is what the objective weights them.
This module prepares its input, and replays its decisions into melds.

Jokers on the table are treated as free to move (as in Räuber-Rommé and the
Dutch Sabra rule, and as rummikub-solver does); ``reference_mode`` drops the
melds rummikub-solver leaves out (a joker in a set of four, or at an end of a
run of four or five), so the two solvers can be compared on one footing.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from engine.items import JOKER, Color, Family, Item, Joker, Tile, format_items
from engine.variants import Variant

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
    try:
        from engine import _rearrange
    except ImportError as error:  # pragma: no cover - the extension is built on install
        raise RearrangeError(
            "the compiled solver core is missing: reinstall with 'pip install -e .'"
        ) from error
    return _rearrange


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
) -> Arrangement | None:
    """The best arrangement of all of ``table_items`` plus some of ``rack``.

    ``objective`` "tiles" scores 1 per rack item placed, "value" its face
    value (a joker: the number it stands for).  ``joker_weight`` overrides
    what a rack joker scores in "tiles" mode (0: count numbered tiles only).
    ``threshold`` > 0: the placed items must be worth at least that much
    (the initial meld; then ``table_items`` should be empty).  None when no
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
        weight_joker = list(NUMBERS)
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
    # A narrow beam finds a good play fast; its score then lets the exact
    # programme drop every state that cannot beat it.
    quick = core.solve(*arguments, NO_INCUMBENT, BEAM_WIDTH)
    incumbent = quick[0] if quick is not None else NO_INCUMBENT
    answer = core.solve(*arguments, incumbent, 0)
    if answer is None:
        return None
    score, decisions = answer
    melds = _replay(decisions, jokers_table + jokers_rack > 0, reference_mode)
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
        for colour_index, colour in enumerate(COLOURS):
            decision = next(steps)
            combo, count_to_sets = decision & 0xFF, (decision >> 8) & 0xF
            order = sorted(range(slots_per_colour), key=lambda s: -codes[colour_index][s])
            new_slots: list[list[Item]] = []
            new_codes: list[int] = []
            for position, slot in enumerate(order):
                action = (combo >> (2 * position)) & 3
                tiles, code = slots[colour_index][slot], codes[colour_index][slot]
                piece: Item = (
                    Tile(colour, number) if action == 2 else Joker(Tile(colour, number))
                )
                if action == 0:
                    new_slots.append(tiles)
                    new_codes.append(code)
                elif action == 1:
                    runs.append(tuple(tiles))
                    new_slots.append([])
                    new_codes.append(0)
                else:
                    new_slots.append([*tiles, piece])
                    first = tiles[0] if tiles else piece
                    new_codes.append(_code(len(tiles) + 1, first, piece, reference_mode))
            slots[colour_index], codes[colour_index] = new_slots, new_codes
            to_sets.append(count_to_sets)
        decision = next(steps)
        jokers = (decision & 0xF) + ((decision >> 4) & 0xF)
        sets.extend(_make_sets(number, to_sets, jokers, reference_mode))
    for colour_slots in slots:
        runs.extend(tuple(tiles) for tiles in colour_slots if tiles)
    return tuple(sorted(runs, key=_meld_order) + sorted(sets, key=_meld_order))


def _code(length: int, first: Item, last: Item, reference_mode: bool) -> int:
    """The C side's slot code (make_code), whose order the replay must follow."""
    if not reference_mode:
        return 1 + (min(length, 3) - 1) * 4
    start, end = int(first.is_joker), int(last.is_joker)
    return 1 + (min(length, 6) - 1) * 4 + start * 2 + end


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


def describe(arrangement: Arrangement) -> str:
    return " | ".join(format_items(meld) for meld in arrangement.melds)


def solve_rearrangement(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]] = (),
    *,
    initial: bool = False,
    objective: str = "tiles",
) -> Arrangement | None:
    """Best play for ``variant`` (Sabra) given the rack and the table's melds."""
    if variant.id != "sabra":
        raise RearrangeError(f"the rearrangement solver handles sabra, not {variant.id}")
    table_items = [item for meld in table for item in meld]
    if not initial:
        return arrange(table_items, rack, objective=objective)
    raise RearrangeError("initial meld solving is not wired yet")
