"""Scoring a finished round for any variant, and the round's JSON form.

``RoundInput`` (:mod:`tabletop.engine.base`) says what each player melded and what is
left in their hand; ``score_round`` checks it and turns it into points with the
variant's own scoring hook (:meth:`tabletop.engine.base.Variant.score_round`).
Scores are *points gained* for every variant (higher is better): variants that
count penalty points (Rommé, Wiener) give them as negative numbers, and
``Variant.penalty_scoring`` tells a display to show them as Schlechtpunkte.

The JSON form (``tabletop rules score FILE.json``) is parsed by
``round_from_json`` and documented in README.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tabletop.engine.base import (
    ROUND_FLAGS,
    MeldContribution,
    PlayerRound,
    RoundError,
    RoundInput,
    RoundResult,
    Variant,
    check_round,
)
from tabletop.engine.items import Item, NotationError, parse_item, parse_items, parse_melds
from tabletop.engine.variants import find_variant


def score_round(round_: RoundInput) -> RoundResult:
    """Score a finished round with the rules of its variant."""
    check_round(round_)
    return round_.variant.score_round(round_)


# --- JSON -------------------------------------------------------------------


MAX_PLAYERS = 12
MAX_ITEMS = 216
"""More items than any variant's material (two 52-card decks and twelve jokers)."""
MAX_HAND_POINTS = 10_000
"""More than any rack counts (MAX_ITEMS items at 30, the most an item counts, are 6,480)."""


def _one_meld(text: str, where: str) -> tuple[Item, ...]:
    melds = parse_melds(text) if text.strip() else ((),)
    if len(melds) != 1:
        raise RoundError(
            f"{where}: a meld entry holds one meld, not {len(melds)} ('|' separates melds"
            f" in a 'melds' string): {text!r}"
        )
    if len(melds[0]) > MAX_ITEMS:
        raise RoundError(f"{where}: a meld of {len(melds[0])} items is more than any game has")
    return melds[0]


def _contribution(raw: Any, where: str) -> MeldContribution:
    if isinstance(raw, str):
        meld = _one_meld(raw, where)
        return MeldContribution(meld, meld)
    if isinstance(raw, Mapping):
        if "meld" not in raw:
            raise RoundError(f"{where}: a meld entry needs a 'meld' string")
        meld = _one_meld(str(raw["meld"]), where)
        own = parse_items(str(raw["own"])) if "own" in raw else meld
        taken = raw.get("taken_jokers", 0)
        if not isinstance(taken, int) or taken < 0:
            raise RoundError(f"{where}: taken_jokers must be a whole number >= 0")
        return MeldContribution(meld, own, taken)
    raise RoundError(f"{where}: a meld is a string or an object with 'meld' and 'own'")


def round_from_json(data: Any, variant: Variant | None = None) -> RoundInput:
    """Build a RoundInput from the JSON document of ``tabletop rules score``.

    Each player is an object with ``name`` and, all optional: ``melds`` (a list of
    meld strings or ``{"meld", "own", "taken_jokers"}`` objects, or one string with
    ``|`` between melds), ``hand`` (the rack's items) or ``points`` (the rack's value
    as the players counted it; not both), ``last_discard``, ``win`` and the flags
    ``out``, ``all_at_once``, ``trump_declared``, ``knocked``, ``first_turn`` and
    ``original_hand``."""
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
    if len(raw_players) > MAX_PLAYERS:
        raise RoundError(f"a round has at most {MAX_PLAYERS} players, not {len(raw_players)}")
    players = []
    for index, raw in enumerate(raw_players):
        where = f"player {index + 1}"
        if not isinstance(raw, Mapping):
            raise RoundError(f"{where}: must be an object")
        allowed = {"name", "melds", "hand", "points", "last_discard", "win", *ROUND_FLAGS}
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
        if len(melds_raw) > MAX_ITEMS:
            raise RoundError(f"{where}: {len(melds_raw)} melds are more than any game has")
        try:
            contributions = tuple(_contribution(m, where) for m in melds_raw)
            hand = parse_items(str(raw.get("hand", "")))
            last = raw.get("last_discard")
            last_item = parse_item(str(last)) if last else None
        except NotationError as error:
            raise NotationError(f"{where}: {error}", error.token) from None
        if len(hand) > MAX_ITEMS:
            raise RoundError(f"{where}: a hand of {len(hand)} items is more than any game has")
        points = raw.get("points")
        if points is not None:
            if isinstance(points, bool) or not isinstance(points, int):
                raise RoundError(f"{where}: 'points' is a whole number, not {points!r}")
            if not 0 <= points <= MAX_HAND_POINTS:
                raise RoundError(f"{where}: 'points' is 0 to {MAX_HAND_POINTS}, not {points}")
            if raw.get("hand") is not None:
                raise RoundError(
                    f"{where}: give the rack as 'hand' (its items) or as 'points' (its value"
                    " as counted), not both"
                )
        flags = {}
        for flag in ROUND_FLAGS:
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
                hand_points=points,
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
