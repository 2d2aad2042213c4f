"""The :class:`Variant` base class: every fact and hook a variant declares.

A variant knows its game material, what a legal meld is, what items are worth
in melds and left in the hand, its initial-meld rule, what may be done with the
melds on the table (:class:`TableRules`), how a round is scored
(:meth:`Variant.score_round`) and how a match ends (:class:`MatchRules`).  The
nine concrete variants live in :mod:`tabletop.engine.variants`; everything else asks a
variant rather than checking which one it is.

The data a finished round is scored from (:class:`RoundInput`) and its result
(:class:`RoundResult`) live here too, because the scoring hook takes and gives
them and a round names its variant.

Rule texts are quoted by short tags, e.g. ``[sabra]`` =
rules/rummikub-sabra-american-international.de.txt, Sabra part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from tabletop.engine.items import Family, Item, format_items
from tabletop.engine.melds import MeldAnalysis, MeldKind, MeldRules, Reading, Slot, analyse_meld


class VariantError(ValueError):
    """Unknown variant id."""


class OptionError(ValueError):
    """Unknown option, or a value the option does not take."""


class PlayerCountError(ValueError):
    """More or fewer players than the variant's rule text allows."""


_KIND_WORDS = {bool: "true or false", int: "a whole number", str: "a word", float: "a number"}
"""An option's kind as its error message names it (not Python's type names)."""


@dataclass(frozen=True)
class OptionSpec:
    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    bounds: tuple[int, int] | None = None
    """The smallest and largest whole number the option takes."""

    def parse(self, raw: Any, variant_id: str) -> Any:
        value: Any = raw
        if isinstance(raw, str):
            text = raw.strip().lower()
            if isinstance(self.default, bool):
                if text in ("1", "true", "yes", "on"):
                    value = True
                elif text in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise OptionError(
                        f"option {self.name!r} of {variant_id} takes true or false, not {raw!r}"
                    )
            elif isinstance(self.default, int):
                # ASCII digits only: int() also reads other scripts' digits ("٣" is 3)
                if not re.fullmatch(r"[+-]?[0-9]{1,9}", text):
                    raise OptionError(
                        f"option {self.name!r} of {variant_id} takes a whole number, not {raw!r}"
                    )
                value = int(text)
            else:
                value = text
        elif isinstance(self.default, bool) != isinstance(raw, bool) or not isinstance(
            raw, type(self.default)
        ):
            raise OptionError(
                f"option {self.name!r} of {variant_id} takes {self._kind_words()},"
                f" not {raw!r}"
            )
        if self.bounds is not None:
            low, high = self.bounds
            if not low <= value <= high:
                raise OptionError(
                    f"option {self.name!r} of {variant_id} takes {low} to {high}, not {raw!r}"
                )
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise OptionError(
                f"option {self.name!r} of {variant_id} takes one of {allowed}, not {raw!r}"
            )
        return value

    def _kind_words(self) -> str:
        return _KIND_WORDS.get(type(self.default), f"a value like {self.default!r}")


_Value = TypeVar("_Value")


def option(default: _Value, help: str, choices: tuple[_Value, ...] | None = None,
           bounds: tuple[int, int] | None = None) -> _Value:
    """A field of a variant's :class:`VariantOptions`: its default, what it means (for
    ``--help`` and the panel), the values it takes or the bounds of a whole number."""
    return field(default=default, metadata={"help": help, "choices": choices, "bounds": bounds})


@dataclass(frozen=True)
class VariantOptions:
    """A variant's house-rule options, one typed field each (declared with :func:`option`)."""

    @classmethod
    def specs(cls) -> tuple[OptionSpec, ...]:
        """The options as :class:`OptionSpec` values, in the order they are declared."""
        return tuple(
            OptionSpec(f.name, f.default, f.metadata["help"], f.metadata["choices"],
                       f.metadata["bounds"])
            for f in fields(cls)
        )

    def as_dict(self) -> dict[str, Any]:
        """Every option by name, in declared order (a match's setup, its JSON)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class InitialMeldCheck:
    """Whether a first laying-out meets the variant's initial-meld rule."""

    value: int
    required: int
    meets: bool
    problems: tuple[str, ...]
    meld_problems: tuple[str, ...] = ()
    """What stops the opening besides its value (an illegal meld, no run where one is
    needed): the reason to give where the value alone would look enough."""


@dataclass(frozen=True)
class TableRules:
    """What a variant allows with the melds on the table during play.

    The turn check (:mod:`tabletop.engine.turns`) and the optimiser read these facts;
    each variant builds them from its rule text and its options.
    """

    rearrange: bool
    """Melds on the table may be taken apart and rebuilt (Sabra, Räuber-Rommé); otherwise
    they may only be extended."""
    discard_pile: bool
    """Players take from and end their turn on a discard pile."""
    opening: bool
    """The variant has an initial-meld rule (then nothing may be laid off or exchanged
    before it is made)."""
    lays_out: bool = True
    """Melds are laid on the table during play (False: Wiener Rummy, "Rommé ohne
    Auslegen")."""
    upcard: bool = False
    """The round starts with the stock's top card turned up as the discard pile's first
    card, no one's discard ([american] "Die oberste Karte wird offen neben den Stoß gelegt
    un bildet den Grundstock für die während des Spiels abzuwerfenden Karten", [rum500]
    "Die oberste Karte des Vorrats wird umgedreht und offen daneben gelegt Dies ist die
    erste Karte des Ablagestapels")."""
    invalid_turn_penalty: int = 0
    """Items drawn as a penalty for an invalid turn ([sabra] "drei Spielsteine")."""
    # -- tables that may be rearranged
    jokers_move_freely: bool = False
    """Jokers on the table find new uses without being exchanged first ([raeuber])."""
    split_joker_melds: bool = False
    """Melds holding a joker may be split, the joker keeping its meaning (Dutch Sabra)."""
    freed_joker: str = "anywhere"
    """Where a joker freed by exchange must be played again in the same turn."""
    set_joker_needs_both: bool = False
    """A joker in a set of three is freed only by adding both missing colours."""
    rearrange_on_opening_turn: bool = True
    """Rearranging may start in the turn of the initial meld."""
    # -- tables whose melds may only be extended
    exchange: bool = False
    """A joker may be exchanged for the item it stands for."""
    set_exchange_needs_four: bool = False
    """A set's joker is freed only when the set is completed to four naturals."""
    freed_with_hand_tiles: bool = False
    """The freed joker's new meld holds two or more items from the rack."""
    deeper_discard: str = "never"
    """Taking items from below the top of the discard pile: "never", "new_meld" (the
    deepest must start a new meld, [remi] rule 4) or "melded" (it must be melded at
    once, new meld or lay-off, [rum500])."""
    discard_before_opening: str = "allowed"
    """Before the initial meld: "allowed", "forbidden" or "opening_only" (one item,
    used at once in the opening)."""
    discard_before_opening_rule: str = ""
    """The rule text's words behind ``discard_before_opening``, quoted in problems."""
    discard_must_meld: bool = False
    """The top discard too must be melded at once."""
    short_rack_takes_no_discard: int = 0
    """With this many items or fewer on the rack a player may not take a discard
    ([remi]: 2)."""
    foot: bool = False
    """A player who has not opened may lay 14 items at once and lay off
    ([international] Foot)."""
    borrowing: bool = False
    """Borgen may be agreed: a player takes items from his own long meld for a new one
    ([american-rummy])."""


@dataclass(frozen=True)
class ScoringRules:
    """What a variant's options change in scoring a round."""

    unmelded_penalty: str = "fixed"
    """A player who never melded: "fixed" (loses a fixed sum, the rack not counted) or
    "rack" (a smaller sum plus the rack) ([remi])."""
    joker_out_doubles: bool = False
    """Going out by discarding a joker doubles the round ([remi])."""
    trump_bonus: bool = False
    """Holding the tile that matches the trump scores a bonus ([international] option)."""


@dataclass(frozen=True)
class MatchRules:
    """How a match (Partie) of a variant ends and what is kept besides the totals."""

    target: int | None = None
    """The variant's own target (its option ``target``); None: a match sets its own."""
    target_needs_going_out: bool = False
    """Only the player who went out can win, with the target reached ([rum500])."""
    collected_only: bool = False
    """Only points a winner collects are written down ([american-rummy])."""
    elimination: int | None = None
    """Penalty points at which a player is out; the last one in wins ([wiener])."""
    buy_back_from: int | None = None
    """Penalty points from which a player may buy back in, once ([wiener])."""
    stake: int = 0
    """Chips each player pays into the pot at the start and for a buy-back (0: no
    chips)."""
    klopfgeld: int = 0
    """Chips each other player pays the round's winner."""
    settlement: bool = False
    """At the end each player pays each better one the difference ([international])."""

    @property
    def chips(self) -> bool:
        return self.stake > 0

    @property
    def ends_by_elimination(self) -> bool:
        return self.elimination is not None


@dataclass(frozen=True)
class RoundEntry:
    """What an entry of a finished round asks of each player beyond the rack: the
    :class:`PlayerRound` fields this variant's scoring reads (a score sheet or the
    panel's round form shows just these)."""

    melds: bool = False
    """The melds each player laid count in the round's score ([remi], [rum500])."""
    winner_flags: tuple[str, ...] = ()
    """Flags of the player who went out (``all_at_once``, ``knocked``, ...)."""
    anyone_flags: tuple[str, ...] = ()
    """Flags any player may have (``trump_declared``)."""
    win_kinds: tuple[str, ...] = ()
    """How the winner may have won, where the variant scores it ([international])."""
    last_discard: bool = False
    """The item discarded to go out changes the score (a joker doubles)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "melds": self.melds,
            "winner_flags": list(self.winner_flags),
            "anyone_flags": list(self.anyone_flags),
            "win_kinds": list(self.win_kinds),
            "last_discard": self.last_discard,
        }


class Variant:
    """Base class: one variant with its options applied.

    Class attributes describe the game; subclasses override hooks for values
    and joker rules.  Instances are cheap and immutable in spirit.
    """

    id: ClassVar[str]
    name: ClassVar[str]
    family: ClassVar[Family]
    copies: ClassVar[int] = 2
    """Copies of each natural item in play."""
    jokers: ClassVar[int] = 2
    ace_high: ClassVar[bool] = True
    initial_meld_minimum: ClassVar[int] = 0
    initial_meld_needs_run: ClassVar[bool] = False
    deal_direction: ClassVar[int] = 1
    """+1: the deal passes to the left (clockwise); -1: to the right."""
    Options: ClassVar[type[VariantOptions]] = VariantOptions
    """The variant's options (house rules), each with its default."""
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()
    """``Options`` as specs (made from it for each subclass)."""
    options: VariantOptions
    joker_place_shows_meaning: ClassVar[bool] = False
    """A joker's place in a run says what it stands for (see ``MeldRules``)."""
    players_allowed: ClassVar[tuple[int, int | None]] = (2, None)
    """The fewest and most players the rule text names (None: no most)."""
    penalty_scoring: ClassVar[bool] = False
    """Round scores are penalty points (shown as positive Schlechtpunkte)."""
    round_entry: ClassVar[RoundEntry] = RoundEntry()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.option_specs = cls.Options.specs()

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        specs = {spec.name: spec for spec in self.option_specs}
        values: dict[str, Any] = {}
        for name, raw in (options or {}).items():
            key = name.strip().lower().replace("-", "_")
            if key not in specs:
                known = ", ".join(sorted(specs)) or "none"
                raise OptionError(f"unknown option {name!r} for {self.id} (known: {known})")
            values[key] = specs[key].parse(raw, self.id)
        self.options = self.Options(**values)

    def __repr__(self) -> str:
        changed = {
            k: v for k, v in self.options.as_dict().items() if v != self._spec(k).default
        }
        if changed:
            return f"find_variant({self.id!r}, {changed!r})"
        return f"find_variant({self.id!r})"

    def _spec(self, name: str) -> OptionSpec:
        return next(spec for spec in self.option_specs if spec.name == name)

    # --- material -------------------------------------------------------
    @property
    def copies_of_each(self) -> int:
        return self.copies

    @property
    def joker_count(self) -> int:
        return self.jokers

    # --- melds ----------------------------------------------------------
    @property
    def meld_rules(self) -> MeldRules:
        return MeldRules(
            family=self.family,
            ace_high=self.ace_high,
            ace_wrap=False,
            joker_check=self.joker_objection,
            joker_place_shows_meaning=self.joker_place_shows_meaning,
        )

    def player_range(self) -> tuple[int, int | None]:
        """The fewest and most players of this variant with its options."""
        return self.players_allowed

    def check_players(self, count: int) -> None:
        """Raise :class:`PlayerCountError` where the rule text does not allow ``count``
        players."""
        fewest, most = self.player_range()
        if count >= fewest and (most is None or count <= most):
            return
        allowed = f"{fewest} or more" if most is None else f"{fewest} to {most}"
        raise PlayerCountError(
            f"{self.name} is played by {allowed} players, not {count}{self.players_advice(count)}"
        )

    def players_advice(self, count: int) -> str:
        """What lets ``count`` players play, where an option does (else empty)."""
        return ""

    def joker_objection(self, kind: MeldKind, slots: tuple[Slot, ...]) -> str | None:
        """A reason this reading's jokers break the variant's rules, or None."""
        return None

    def analyse(self, items: Sequence[Item]) -> MeldAnalysis:
        if self.joker_count == 0:
            for item in items:
                if item.is_joker:
                    reason = f"{self.name} is played without jokers"
                    return MeldAnalysis(tuple(items), (), (reason,))
        return analyse_meld(items, self.meld_rules)

    # --- values ---------------------------------------------------------
    def slot_value(self, reading: Reading, slot: Slot) -> int:
        """What one item of a laid meld counts towards the initial meld."""
        return slot.rank

    def meld_value(self, reading: Reading) -> int:
        return sum(self.slot_value(reading, slot) for slot in reading.slots)

    def melded_score(self, reading: Reading, slot: Slot) -> int:
        """What one laid item scores at the end of the round (for variants that score melds)."""
        return self.slot_value(reading, slot)

    def hand_value(self, item: Item) -> int:
        """What an item left in the hand or on the rack counts at the end of a round."""
        raise NotImplementedError

    def hand_total(self, items: Iterable[Item]) -> int:
        return sum(self.hand_value(item) for item in items)

    # --- initial meld ---------------------------------------------------
    @property
    def initial_meld_required(self) -> int:
        return self.initial_meld_minimum

    def check_initial_meld(
        self, melds: Sequence[Sequence[Item]], *, hand_meld: bool = False
    ) -> InitialMeldCheck:
        """Check a first laying-out made of ``melds`` (each from the hand).

        Where a meld has several readings the one worth most counts (the
        player declares it).  ``hand_meld``: the whole hand goes down at once
        (Hand-Rommé), which waives the minimum where the rules say so.
        """
        meld_problems: list[str] = []
        total = 0
        has_run = False
        for meld in melds:
            analysis = self.analyse(meld)
            if not analysis.valid:
                meld_problems.append(f"{format_items(meld)}: {analysis.reason}")
                continue
            best = max(analysis.readings, key=self.meld_value)
            total += self.meld_value(best)
            has_run = has_run or any(r.kind is MeldKind.RUN for r in analysis.readings)
        required = self.initial_meld_required
        if hand_meld and self.hand_meld_waives_minimum:
            required = 0
        problems = list(meld_problems)
        if total < required:
            problems.append(f"the initial meld is worth {total}, it needs at least {required}")
        if self.initial_meld_needs_run and not has_run and melds:
            meld_problems.append("the initial meld needs at least one run")
            problems.append(meld_problems[-1])
        return InitialMeldCheck(
            total, required, not problems, tuple(problems), tuple(meld_problems)
        )

    hand_meld_waives_minimum: ClassVar[bool] = False
    melds_lie_before_players: ClassVar[bool] = True
    """Each player's melds lie in front of that player ([remi] "legt die Meldungen offen
    vor sich auf den Tisch", [rum500] "offen vor sich", [american-rummy] "offen vor sich
    auf den Tisch legen"), so items in a seat's area during play are that player's
    melds.  Where False, every meld lies in the middle and a seat's area holds only the
    player's own rack, which is not part of the table until the round's end."""

    # --- the table, the round and the match -------------------------------
    @property
    def table_rules(self) -> TableRules:
        """What may be done with the melds on the table."""
        raise NotImplementedError

    @property
    def has_discard_pile(self) -> bool:
        return self.table_rules.discard_pile

    @property
    def match_rules(self) -> MatchRules:
        return MatchRules()

    @property
    def scoring_rules(self) -> ScoringRules:
        """What the variant's options change in scoring a round."""
        return ScoringRules()

    @property
    def knock_limit(self) -> int | None:
        """Deadwood at or below which a player may knock; None where no one knocks."""
        return None

    def score_round(self, round_: RoundInput) -> RoundResult:
        """Points of a finished round (checked by :func:`tabletop.engine.rounds.score_round`)."""
        raise NotImplementedError


# --- a finished round -------------------------------------------------------
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
    hand_points: int | None = None
    """What the rack counts as the players counted it, given instead of ``hand`` (a
    score sheet kept by hand).  Every scorer takes it where it would add up the
    hand's items; where a variant needs the hand's composition (Wiener's least
    deadwood), it is taken as the player's penalty as counted."""

    @property
    def has_melded(self) -> bool:
        return any(contribution.own for contribution in self.melds)

    def melded_items(self) -> tuple[Item, ...]:
        return tuple(item for contribution in self.melds for item in contribution.own)

    @property
    def holds_something(self) -> bool:
        """Items are left on the rack: seen, or counted as more than nothing."""
        return bool(self.hand) or bool(self.hand_points)

    def rack_value(self, variant: Variant) -> int:
        """What the rack counts: the value as counted where given, else its items'
        ``hand_value``."""
        if self.hand_points is not None:
            return self.hand_points
        return variant.hand_total(self.hand)

    def rack_text(self) -> str:
        """The rack in a score line: its items, or ``counted N``."""
        if self.hand_points is not None:
            return f"counted {self.hand_points}"
        return format_items(self.hand) or "empty"


ROUND_FLAGS: tuple[str, ...] = tuple(f.name for f in fields(PlayerRound) if f.type == "bool")
"""The yes-or-no facts of a player's end of round (``out``, ``knocked``, ...): the round
files, the panel's round form and its API read them from here; a variant's
:class:`RoundEntry` says which of them it asks for."""


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
    for player in round_.players:
        points = player.hand_points
        if points is None:
            continue
        if isinstance(points, bool) or not isinstance(points, int) or points < 0:
            raise RoundError(
                f"{player.name}: the rack's points are a whole number of at least 0,"
                f" not {points!r}"
            )
        if player.hand:
            raise RoundError(
                f"{player.name}: give the rack's items or its counted points, not both"
            )
    outs = [player.name for player in round_.players if player.out]
    if len(outs) > 1:
        raise RoundError(f"only one player can go out, not {', '.join(outs)}")
    if outs and round_.pool_exhausted:
        raise RoundError(f"{outs[0]} went out, so the pool was not exhausted")
