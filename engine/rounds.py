"""A finished round as data, and scoring it for any variant.

``RoundInput`` says what each player melded and what is left in their hand;
``score_round`` turns it into points with the variant's bonuses and penalties.
Scores are *points gained* for every variant (higher is better): variants that
count penalty points (Rommé, Wiener) give them as negative numbers, and
``Variant.penalty_scoring`` tells a display to show them as Schlechtpunkte.

The JSON form (``tabletop rules score FILE.json``) is parsed by
``round_from_json`` and documented in README.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.items import Item, NotationError, parse_item, parse_items, parse_melds
from engine.variants import Variant, find_variant


class RoundError(ValueError):
    """A round description that cannot be scored (missing player, two winners, ...)."""


@dataclass(frozen=True)
class MeldContribution:
    """A meld on the table and the part of it one player laid.

    ``meld`` is the whole meld as it lies (needed to value a 1 or an ace, or
    what a joker stands for); ``own`` the items of it this player laid
    (defaults to all of them).  ``taken_jokers``: how many jokers in ``own``
    this player took from another meld by exchange (Remi scores those as the
    tile they stand for; the first melder keeps the joker's 50).
    """

    meld: tuple[Item, ...]
    own: tuple[Item, ...]
    taken_jokers: int = 0


@dataclass(frozen=True)
class PlayerRound:
    """One player's end of round."""

    name: str
    melds: tuple[MeldContribution, ...] = ()
    hand: tuple[Item, ...] = ()
    out: bool = False
    """This player ended the round by going out (Rommé/Rummy called, knocked, ...)."""
    all_at_once: bool = False
    """Went out laying everything in one turn without having melded before
    (Remi's bonus, Hand-Rommé, Hand-Rummy, International's Foot/Closed)."""
    last_discard: Item | None = None
    """The item discarded to go out (a joker doubles in Remi and International)."""
    trump_declared: bool = False
    """Holds and declared the tile matching the trump (Remi +25; International option +50)."""
    knocked: bool = False
    """Wiener: ended the round by knocking rather than calling Rommé."""
    win: str | None = None
    """International Rummikub: how the winner won, "open", "foot" or "closed"."""
    first_turn: bool = False
    """International: the closed hand was laid in the player's first turn (Kleiner Blitz)."""
    original_hand: bool = False
    """International: the closed hand is the player's original hand (Grosser Blitz)."""

    @property
    def has_melded(self) -> bool:
        return any(contribution.own for contribution in self.melds)

    def melded_items(self) -> tuple[Item, ...]:
        return tuple(item for contribution in self.melds for item in contribution.own)


@dataclass(frozen=True)
class RoundInput:
    variant: Variant
    players: tuple[PlayerRound, ...]
    pool_exhausted: bool = False
    """The round ended with no one out (stock/pool used up)."""
    trump: Item | None = None

    @property
    def winner(self) -> PlayerRound | None:
        outs = [player for player in self.players if player.out]
        return outs[0] if outs else None

    def player(self, name: str) -> PlayerRound:
        for player in self.players:
            if player.name == name:
                return player
        raise RoundError(f"no player named {name!r}")


@dataclass(frozen=True)
class RoundResult:
    scores: dict[str, int]
    """Points for this round per player (higher is better)."""
    winner: str | None
    details: dict[str, list[str]] = field(default_factory=dict)
    """Per player, the lines that explain the score (for people checking the arithmetic)."""
    problems: tuple[str, ...] = ()
    """Things in the input that break the rules but did not stop scoring."""
    doubled: bool = False
    extras: dict[str, Any] = field(default_factory=dict)
    """Variant-specific results (International's hand type, Wiener's chips, ...)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "scores": self.scores,
            "winner": self.winner,
            "doubled": self.doubled,
            "details": self.details,
            "problems": list(self.problems),
            **self.extras,
        }


def check_round(round_: RoundInput) -> None:
    """Raise RoundError for a round that cannot be scored at all."""
    if len(round_.players) < 2:
        raise RoundError("a round needs at least two players")
    names = [player.name for player in round_.players]
    if len(set(names)) != len(names):
        raise RoundError(f"player names must differ: {names}")
    outs = [player.name for player in round_.players if player.out]
    if len(outs) > 1:
        raise RoundError(f"only one player can go out, not {', '.join(outs)}")
    if outs and round_.pool_exhausted:
        raise RoundError(f"{outs[0]} went out, so the pool was not exhausted")


def score_round(round_: RoundInput) -> RoundResult:
    """Score a finished round with the rules of its variant."""
    from engine import card_scoring, tile_scoring

    check_round(round_)
    scorer = {**tile_scoring.SCORERS, **card_scoring.SCORERS}.get(round_.variant.id)
    if scorer is None:
        raise RoundError(f"no round scoring for {round_.variant.id}")
    return scorer(round_)


# --- JSON -------------------------------------------------------------------
_PLAYER_FLAGS = ("out", "all_at_once", "trump_declared", "knocked", "first_turn", "original_hand")


def _contribution(raw: Any, where: str) -> MeldContribution:
    if isinstance(raw, str):
        (meld,) = parse_melds(raw) if raw.strip() else ((),)
        return MeldContribution(meld, meld)
    if isinstance(raw, Mapping):
        if "meld" not in raw:
            raise RoundError(f"{where}: a meld entry needs a 'meld' string")
        (meld,) = parse_melds(str(raw["meld"]))
        own = parse_items(str(raw["own"])) if "own" in raw else meld
        taken = raw.get("taken_jokers", 0)
        if not isinstance(taken, int) or taken < 0:
            raise RoundError(f"{where}: taken_jokers must be a whole number >= 0")
        return MeldContribution(meld, own, taken)
    raise RoundError(f"{where}: a meld is a string or an object with 'meld' and 'own'")


def round_from_json(data: Any, variant: Variant | None = None) -> RoundInput:
    """Build a RoundInput from the JSON document of ``tabletop rules score``."""
    if not isinstance(data, Mapping):
        raise RoundError("the round must be a JSON object")
    unknown = set(data) - {"variant", "options", "players", "pool_exhausted", "trump"}
    if unknown:
        raise RoundError(f"unknown keys in the round: {', '.join(sorted(unknown))}")
    if variant is None:
        if "variant" not in data:
            raise RoundError("the round needs a 'variant'")
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise RoundError("'options' must be an object")
        variant = find_variant(str(data["variant"]), options)
    raw_players = data.get("players")
    if not isinstance(raw_players, Sequence) or isinstance(raw_players, str) or not raw_players:
        raise RoundError("'players' must be a non-empty list")
    players = []
    for index, raw in enumerate(raw_players):
        where = f"player {index + 1}"
        if not isinstance(raw, Mapping):
            raise RoundError(f"{where}: must be an object")
        allowed = {"name", "melds", "hand", "last_discard", "win", *_PLAYER_FLAGS}
        extra = set(raw) - allowed
        if extra:
            raise RoundError(f"{where}: unknown keys {', '.join(sorted(extra))}")
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            raise RoundError(f"{where}: needs a 'name'")
        where = f"player {name!r}"
        melds_raw = raw.get("melds", [])
        if isinstance(melds_raw, str):
            melds_raw = [part for part in melds_raw.split("|") if part.strip()]
        if not isinstance(melds_raw, Sequence):
            raise RoundError(f"{where}: 'melds' must be a list")
        try:
            contributions = tuple(_contribution(m, where) for m in melds_raw)
            hand = parse_items(str(raw.get("hand", "")))
            last = raw.get("last_discard")
            last_item = parse_item(str(last)) if last else None
        except NotationError as error:
            raise NotationError(f"{where}: {error}", error.token) from None
        flags = {}
        for flag in _PLAYER_FLAGS:
            value = raw.get(flag, False)
            if not isinstance(value, bool):
                raise RoundError(f"{where}: {flag!r} must be true or false")
            flags[flag] = value
        win = raw.get("win")
        if win is not None and win not in ("open", "foot", "closed"):
            raise RoundError(f"{where}: 'win' is open, foot or closed, not {win!r}")
        players.append(
            PlayerRound(
                name=name.strip(),
                melds=contributions,
                hand=hand,
                last_discard=last_item,
                win=win,
                **flags,
            )
        )
    pool_exhausted = data.get("pool_exhausted", False)
    if not isinstance(pool_exhausted, bool):
        raise RoundError("'pool_exhausted' must be true or false")
    trump_raw = data.get("trump")
    trump = parse_item(str(trump_raw)) if trump_raw else None
    round_ = RoundInput(variant, tuple(players), pool_exhausted, trump)
    check_round(round_)
    return round_
