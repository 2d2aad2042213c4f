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

from engine.items import JOKER, Color, Item, Joker, Tile
from engine.rearrange import arrange


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
