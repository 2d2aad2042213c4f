"""Grouping items into melds by position and alignment, in table coordinates.

Tiles of a meld lie in a row, nearly touching, at any rotation; cards of a
meld overlap so that only their corner indices show, also in a row.  Both
become rows of box centres with near-equal spacing, so one method serves:

1. link each item to its two nearest neighbours when the link is mutual and
   shorter than ``link`` item sizes (rows stacked above each other are
   farther apart than neighbours in a row, and mutual links stop a row's
   end from reaching over to the next row);
2. where an item's two links bend by more than ``max_bend_deg``, cut the
   longer one (two rows joined at their ends);
3. cut a row where one gap is far wider than the others (two melds laid end
   to end in one line).

A card whose two corners both show gives two index boxes with one label; the
second one, alone and near a group holding its label, is dropped.  Each row
is read along the zone's reading direction, so the player facing it reads
left to right; a meld laid descending reads right to left in the engine.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

Point = tuple[float, float]


@dataclass(frozen=True)
class Placed:
    key: int  # the track id
    kind: str  # "tile" or "card"
    position: Point  # centre, table coordinates
    size: float  # the item's (or card index's) smaller side, same units
    label: str = ""


@dataclass(frozen=True)
class Grouping:
    groups: tuple[tuple[int, ...], ...]  # keys, each row in reading order
    singles: tuple[int, ...]  # items in no row
    second_corners: tuple[int, ...]  # card indices dropped as another corner of a grouped card


def _dist(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def group_items(items: Sequence[Placed], reading_direction: Point = (1.0, 0.0), *,
                tile_link: float = 1.6, card_link: float = 3.6, max_bend_deg: float = 30.0,
                gap_ratio: float = 1.8, corner_reach: float = 14.0) -> Grouping:
    """Rows of ``items`` (one zone's), in reading order; the ``link`` factors are in item sizes
    (tile: its width; card: the width of its index box)."""
    groups: list[tuple[int, ...]] = []
    singles: list[int] = []
    corners: list[int] = []
    for kind in ("tile", "card"):
        of_kind = [it for it in items if it.kind == kind]
        if not of_kind:
            continue
        rows, alone = _rows(of_kind, tile_link if kind == "tile" else card_link,
                            max_bend_deg, gap_ratio)
        by_key = {it.key: it for it in of_kind}
        if kind == "card":
            kept: list[int] = []
            for key in alone:
                item = by_key[key]
                near_twin = any(
                    by_key[other].label == item.label
                    and _dist(by_key[other].position, item.position) <= corner_reach * item.size
                    for row in rows for other in row)
                (corners if near_twin and item.label else kept).append(key)
            alone = kept
        groups.extend(_ordered(row, by_key, reading_direction) for row in rows)
        singles.extend(alone)
    return Grouping(tuple(groups), tuple(sorted(singles)), tuple(sorted(corners)))


def _rows(items: Sequence[Placed], link: float, max_bend_deg: float,
          gap_ratio: float) -> tuple[list[list[int]], list[int]]:
    n = len(items)
    size = _median([it.size for it in items])
    limit = link * size
    nearest: list[list[int]] = []
    for i in range(n):
        others = sorted((j for j in range(n) if j != i),
                        key=lambda j: _dist(items[i].position, items[j].position))
        nearest.append([j for j in others[:2]
                        if _dist(items[i].position, items[j].position) <= limit])
    edges = {(min(i, j), max(i, j)) for i in range(n) for j in nearest[i] if i in nearest[j]}
    # cut bends: an item linked both ways must have them on one line
    changed = True
    while changed:
        changed = False
        for i in range(n):
            links = [e for e in edges if i in e]
            if len(links) != 2:
                continue
            a, b = (e[0] if e[1] == i else e[1] for e in links)
            pi, pa, pb = items[i].position, items[a].position, items[b].position
            va, vb = (pa[0] - pi[0], pa[1] - pi[1]), (pb[0] - pi[0], pb[1] - pi[1])
            cos = (va[0] * vb[0] + va[1] * vb[1]) / (math.hypot(*va) * math.hypot(*vb) + 1e-12)
            if cos > -math.cos(math.radians(max_bend_deg)):
                longer = max(links, key=lambda e: _dist(items[e[0]].position,
                                                        items[e[1]].position))
                edges.discard(longer)
                changed = True
    # components (each a path now)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        parent[find(i)] = find(j)
    components: dict[int, list[int]] = {}
    for i in range(n):
        components.setdefault(find(i), []).append(i)
    rows: list[list[int]] = []
    alone: list[int] = []
    for members in components.values():
        for part in _split_gaps(_path_order(members, edges), items, gap_ratio):
            if len(part) >= 2:
                rows.append([items[i].key for i in part])
            else:
                alone.append(items[part[0]].key)
    return rows, alone


def _path_order(members: list[int], edges: set[tuple[int, int]]) -> list[int]:
    if len(members) == 1:
        return members
    adjacency: dict[int, list[int]] = {m: [] for m in members}
    for i, j in edges:
        if i in adjacency:
            adjacency[i].append(j)
            adjacency[j].append(i)
    start = next((m for m in members if len(adjacency[m]) == 1), members[0])
    order, previous = [start], -1
    while len(order) < len(members):
        step = [m for m in adjacency[order[-1]] if m != previous and m not in order]
        if not step:
            break
        previous = order[-1]
        order.append(step[0])
    return order


def _split_gaps(order: list[int], items: Sequence[Placed], gap_ratio: float) -> list[list[int]]:
    if len(order) < 3:
        return [order]
    gaps = [_dist(items[a].position, items[b].position) for a, b in itertools.pairwise(order)]
    typical = _median(gaps)
    parts, current = [], [order[0]]
    for gap, nxt in zip(gaps, order[1:], strict=True):
        if gap > gap_ratio * typical:
            parts.append(current)
            current = []
        current.append(nxt)
    parts.append(current)
    return parts


def _ordered(keys: list[int], by_key: dict[int, Placed], direction: Point) -> tuple[int, ...]:
    """Along the row, oriented so it reads along ``direction``; a row square to it reads
    along ``direction`` turned a quarter clockwise (top to bottom for the bottom seat)."""
    first, last = by_key[keys[0]].position, by_key[keys[-1]].position
    along = (last[0] - first[0], last[1] - first[1])
    dx, dy = direction
    dot = along[0] * dx + along[1] * dy
    length = math.hypot(*along) + 1e-12
    if abs(dot) / length < 0.26:  # within ~75..105 degrees: use the turned direction
        dot = along[0] * -dy + along[1] * dx
    return tuple(keys if dot >= 0 else reversed(keys))
