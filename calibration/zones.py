"""Zones of the table, in table coordinates: meld area, seats, discards, stock.

A ``ZoneLayout`` is a list of named polygons.  Each zone has a *reading
direction*: the unit vector along which the player facing it reads left to
right (the player at the bottom edge reads along +x, the one at the top edge
along -x).  ``default_layout`` gives a sensible layout per variant and player
count (2 to 6 seats round a rectangle, seat 0 at the bottom edge, then
clockwise as seen from above); the JSON form is meant to be edited by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabletop.calibration.files import read_json, write_json
from tabletop.engine.variants import find_variant

ZONE_KINDS = ("meld", "seat", "discard", "stock")
# Lookup order: small zones that lie inside bigger ones first.
_PRIORITY = {"discard": 0, "stock": 1, "seat": 2, "meld": 3}


class ZoneError(ValueError):
    """A zone or layout that does not make sense; the message quotes it."""


Point = tuple[float, float]


def _inside(point: Point, polygon: Sequence[Point]) -> bool:
    """Ray casting; points on an edge count as inside."""
    x, y = point
    inside = False
    n = len(polygon)
    for i in range(n):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % n]
        # on the edge?
        cross = (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)
        if (abs(cross) <= 1e-9 * max(1.0, abs(x2 - x1) + abs(y2 - y1))
                and min(x1, x2) - 1e-9 <= x <= max(x1, x2) + 1e-9
                and min(y1, y2) - 1e-9 <= y <= max(y1, y2) + 1e-9):
            return True
        if (y1 > y) != (y2 > y) and x < (x2 - x1) * (y - y1) / (y2 - y1) + x1:
            inside = not inside
    return inside


@dataclass(frozen=True)
class Zone:
    name: str
    kind: str
    polygon: tuple[Point, ...]
    seat: int | None = None
    reading_direction: Point = (1.0, 0.0)

    def __post_init__(self) -> None:
        if self.kind not in ZONE_KINDS:
            raise ZoneError(f"zone kind must be one of {', '.join(ZONE_KINDS)}, not {self.kind!r}")
        if len(self.polygon) < 3:
            raise ZoneError(f"zone {self.name!r} needs 3 or more corners, not {self.polygon!r}")
        if self.kind == "seat" and (self.seat is None or self.seat < 0):
            raise ZoneError(f"seat zone {self.name!r} needs a seat index, not {self.seat!r}")
        dx, dy = self.reading_direction
        norm = math.hypot(dx, dy)
        if norm == 0:
            raise ZoneError(f"zone {self.name!r} has no reading direction")
        object.__setattr__(self, "polygon", tuple((float(x), float(y)) for x, y in self.polygon))
        object.__setattr__(self, "reading_direction", (dx / norm, dy / norm))

    def contains(self, point: Point) -> bool:
        return _inside(point, self.polygon)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "seat": self.seat,
                "polygon": [[round(x, 2), round(y, 2)] for x, y in self.polygon],
                "reading_direction": [round(v, 4) for v in self.reading_direction]}

    @classmethod
    def from_json(cls, obj: Any) -> Zone:
        try:
            return cls(str(obj["name"]), str(obj["kind"]),
                       tuple((float(x), float(y)) for x, y in obj["polygon"]),
                       None if obj.get("seat") is None else int(obj["seat"]),
                       tuple(obj.get("reading_direction", (1.0, 0.0))))
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, ZoneError):
                raise
            raise ZoneError(f"a zone needs name, kind and polygon: {obj!r:.120}") from None


@dataclass(frozen=True)
class ZoneLayout:
    table_size: tuple[float, float]
    zones: tuple[Zone, ...]

    def __post_init__(self) -> None:
        names = [zone.name for zone in self.zones]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ZoneError(f"zone names must be unique: {repeated!r} repeated")

    def zone_at(self, point: Point) -> Zone | None:
        """The zone holding ``point`` (the smallest kind first: a discard pile drawn inside the
        meld area wins), or None outside every zone."""
        for zone in sorted(self.zones, key=lambda z: _PRIORITY[z.kind]):
            if zone.contains(point):
                return zone
        return None

    def of_kind(self, kind: str) -> tuple[Zone, ...]:
        return tuple(zone for zone in self.zones if zone.kind == kind)

    def seat_zone(self, seat: int) -> Zone | None:
        return next((z for z in self.zones if z.kind == "seat" and z.seat == seat), None)

    @property
    def seats(self) -> tuple[int, ...]:
        return tuple(sorted(z.seat for z in self.zones if z.seat is not None))

    def scaled(self, sx: float, sy: float) -> ZoneLayout:
        return ZoneLayout((self.table_size[0] * sx, self.table_size[1] * sy), tuple(
            Zone(z.name, z.kind, tuple((x * sx, y * sy) for x, y in z.polygon), z.seat,
                 (z.reading_direction[0] * sx, z.reading_direction[1] * sy))
            for z in self.zones))

    def to_json(self) -> dict[str, Any]:
        return {"table_size": list(self.table_size), "zones": [z.to_json() for z in self.zones]}

    @classmethod
    def from_json(cls, obj: Any) -> ZoneLayout:
        if not isinstance(obj, dict) or "zones" not in obj or "table_size" not in obj:
            raise ZoneError(f"a zone layout needs table_size and zones: {obj!r:.120}")
        size = obj["table_size"]
        return cls((float(size[0]), float(size[1])),
                   tuple(Zone.from_json(z) for z in obj["zones"]))

    def save(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> ZoneLayout:
        return cls.from_json(read_json(path, ZoneError, "zone layout"))


# Where the seats sit: (edge, start, end) with start/end as shares along that edge,
# clockwise from the bottom as seen from above (x right, y down).
_SEATINGS: dict[int, tuple[tuple[str, float, float], ...]] = {
    1: (("bottom", 0.0, 1.0),),
    2: (("bottom", 0.0, 1.0), ("top", 0.0, 1.0)),
    3: (("bottom", 0.0, 1.0), ("left", 0.0, 1.0), ("top", 0.0, 1.0)),
    4: (("bottom", 0.0, 1.0), ("left", 0.0, 1.0), ("top", 0.0, 1.0), ("right", 0.0, 1.0)),
    5: (("bottom", 0.0, 1.0), ("left", 0.0, 1.0), ("top", 0.5, 1.0), ("top", 0.0, 0.5),
        ("right", 0.0, 1.0)),
    6: (("bottom", 0.5, 1.0), ("bottom", 0.0, 0.5), ("left", 0.0, 1.0), ("top", 0.5, 1.0),
        ("top", 0.0, 0.5), ("right", 0.0, 1.0)),
}
# The reading direction of a player sitting at each edge, facing the table's middle.
_FACING = {"bottom": (1.0, 0.0), "left": (0.0, 1.0), "top": (-1.0, 0.0), "right": (0.0, -1.0)}


def default_layout(variant_id: str, players: int, table_size: tuple[float, float] = (900.0, 600.0),
                   *, seat_depth: float | None = None) -> ZoneLayout:
    """Seats as bands along the edges, the meld area in the middle, stock (and, where the
    variant has one, the discard pile) in a strip at the middle's right end.

    A 5- or 6-player table splits the long edges in two; share ``start..end``
    of an edge runs in the reading direction of the player at that edge.
    """
    if not 1 <= players <= 6:
        raise ZoneError(f"a default layout has 1 to 6 seats, not {players!r}")
    width, height = table_size
    if width <= 0 or height <= 0:
        raise ZoneError(f"table size must be positive, not {table_size!r}")
    d = seat_depth if seat_depth is not None else 0.2 * min(width, height)
    bands = {  # each edge's band as (x0, y0, x1, y1), corners kept by top/bottom
        "bottom": (0.0, height - d, width, height),
        "top": (0.0, 0.0, width, d),
        "left": (0.0, d, d, height - d),
        "right": (width - d, d, width, height - d),
    }
    zones: list[Zone] = []
    for seat, (edge, start, end) in enumerate(_SEATINGS[players]):
        x0, y0, x1, y1 = bands[edge]
        fx, fy = _FACING[edge]
        if fx:  # the band runs along x; the reading direction says which way start..end goes
            a, b = (x0 + start * (x1 - x0), x0 + end * (x1 - x0)) if fx > 0 else (
                x1 - end * (x1 - x0), x1 - start * (x1 - x0))
            x0, x1 = a, b
        else:
            a, b = (y0 + start * (y1 - y0), y0 + end * (y1 - y0)) if fy > 0 else (
                y1 - end * (y1 - y0), y1 - start * (y1 - y0))
            y0, y1 = a, b
        zones.append(Zone(f"seat {seat}", "seat", ((x0, y0), (x1, y0), (x1, y1), (x0, y1)),
                          seat, (fx, fy)))
    left = d if players >= 3 else 0.0
    right = width - d if players >= 4 else width
    top, bottom = d, height - d
    strip = 0.18 * (right - left)
    zones.append(Zone("meld area", "meld", ((left, top), (right - strip, top),
                                            (right - strip, bottom), (left, bottom))))
    middle = (top + bottom) / 2
    with_discard = find_variant(variant_id).has_discard_pile
    stock_bottom = middle if with_discard else bottom
    zones.append(Zone("stock", "stock", ((right - strip, top), (right, top),
                                         (right, stock_bottom), (right - strip, stock_bottom))))
    if with_discard:
        zones.append(Zone("discards", "discard", ((right - strip, middle), (right, middle),
                                                  (right, bottom), (right - strip, bottom))))
    return ZoneLayout((width, height), tuple(zones))
