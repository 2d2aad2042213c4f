"""Mid-game Sabra positions, made the way games reach them.

Two to four players are dealt 14 tiles each and play: a player who has not
opened lays his best opening worth 30 from the rack if he can, a player who
has opened lays what the solver finds, and otherwise draws.  Players hold
back now and then (as people do, waiting for a better turn), so racks grow
to 30 tiles and tables to 90.  A snapshot is taken before a move: the table,
the rack, and whether that player has opened.  Seeded, so every run sees the
same positions.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from tabletop.engine.items import JOKER, Color, Item, Joker, Tile
from tabletop.engine.rearrange import arrange


@dataclass(frozen=True)
class Position:
    table: tuple[tuple[Item, ...], ...]
    rack: tuple[Item, ...]
    opened: bool

    @property
    def table_items(self) -> list[Item]:
        return [JOKER if isinstance(i, Joker) else i for meld in self.table for i in meld]


def full_set() -> list[Item]:
    tiles: list[Item] = [Tile(c, n) for c in Color for n in range(1, 14) for _ in range(2)]
    return [*tiles, JOKER, JOKER]


def _remove(rack: list[Item], placed: tuple[Item, ...]) -> list[Item]:
    left = Counter(rack)
    left.subtract(placed)
    return list(left.elements())


def play_games(seed: int, count: int, hold_back: float = 0.45) -> list[Position]:
    """``count`` positions from games seeded with ``seed``."""
    rng = random.Random(seed)
    positions: list[Position] = []
    while len(positions) < count:
        pool = full_set()
        rng.shuffle(pool)
        players = rng.randint(2, 4)
        racks = [[pool.pop() for _ in range(14)] for _ in range(players)]
        opened = [False] * players
        table: tuple[tuple[Item, ...], ...] = ()
        turn = 0
        while pool and len(positions) < count and turn < 400:
            seat = turn % players
            rack = racks[seat]
            if len(rack) >= 8 and rng.random() < 0.35:
                positions.append(Position(table, tuple(rack), opened[seat]))
            play = None
            if rng.random() > hold_back:
                if opened[seat]:
                    play = arrange([i for meld in table for i in meld], rack, reference_mode=True)
                else:
                    opening = arrange([], rack, threshold=30, reference_mode=True)
                    if opening is not None and opening.placed:
                        play = opening
                        table = table + opening.melds
                        racks[seat] = _remove(rack, opening.placed)
                        opened[seat] = True
                        play = None
                        turn += 1
                        continue
            if play is not None and play.placed:
                table = tuple(
                    tuple(JOKER if isinstance(i, Joker) else i for i in meld) for meld in play.melds
                )
                racks[seat] = _remove(rack, play.placed)
                if not racks[seat]:
                    break
            else:
                rack.append(pool.pop())
            turn += 1
    return positions


def dense_positions(seed: int, count: int, table_tiles: int) -> list[Position]:
    """Positions late in a long game: a table of about ``table_tiles`` tiles in legal melds
    (runs and sets drawn from the full set) and a rack of 8-14 of the tiles left."""
    rng = random.Random(seed)
    positions: list[Position] = []
    colours = list(Color)
    while len(positions) < count:
        pool = Counter({Tile(c, n): 2 for c in colours for n in range(1, 14)})
        table: list[tuple[Item, ...]] = []
        laid = 0
        attempts = 0
        while laid < table_tiles and attempts < 2000:
            attempts += 1
            if rng.random() < 0.55:
                colour, start = rng.choice(colours), rng.randint(1, 11)
                length = rng.randint(3, min(6, 14 - start))
                meld: tuple[Item, ...] = tuple(
                    Tile(colour, n) for n in range(start, start + length)
                )
            else:
                number = rng.randint(1, 13)
                meld = tuple(Tile(c, number) for c in rng.sample(colours, rng.randint(3, 4)))
            if all(pool[t] > 0 for t in meld) and laid + len(meld) <= table_tiles + 2:
                pool.subtract(meld)
                table.append(meld)
                laid += len(meld)
        rest: list[Item] = list(pool.elements())
        rng.shuffle(rest)
        rack = rest[: rng.randint(8, 14)]
        if rng.random() < 0.5:
            rack.append(JOKER)
        positions.append(Position(tuple(table), tuple(rack), True))
    return positions
