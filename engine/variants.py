"""The nine variants of CONTRACT.md, as subclasses with class-level rules.

A variant knows its game material, what a legal meld is, what items are
worth in melds and left in the hand, and its initial-meld rule.  Round and
match scoring live in :mod:`engine.scoring`; table rearrangement in
:mod:`engine.turns`.  House rules are named options (``--option NAME=VALUE``).

Rule texts are quoted by the short tags in comments, e.g.
``[sabra]`` = rules/rummikub-sabra-american-international.de.txt, Sabra part.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.items import Family, Item, format_items
from engine.melds import (
    ACE_HIGH_POSITION,
    MeldAnalysis,
    MeldKind,
    MeldRules,
    Reading,
    Slot,
    analyse_meld,
)


class VariantError(ValueError):
    """Unknown variant id."""


class OptionError(ValueError):
    """Unknown option, or a value the option does not take."""


@dataclass(frozen=True)
class OptionSpec:
    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None

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
                try:
                    value = int(text)
                except ValueError:
                    raise OptionError(
                        f"option {self.name!r} of {variant_id} takes a whole number, not {raw!r}"
                    ) from None
            else:
                value = text
        elif isinstance(self.default, bool) != isinstance(raw, bool) or not isinstance(
            raw, type(self.default)
        ):
            raise OptionError(
                f"option {self.name!r} of {variant_id} takes a {type(self.default).__name__}, "
                f"not {raw!r}"
            )
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise OptionError(
                f"option {self.name!r} of {variant_id} takes one of {allowed}, not {raw!r}"
            )
        return value


@dataclass(frozen=True)
class InitialMeldCheck:
    """Whether a first laying-out meets the variant's initial-meld rule."""

    value: int
    required: int
    meets: bool
    problems: tuple[str, ...]


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
    rearrangement: ClassVar[bool] = False
    """Table melds may be taken apart and rebuilt (Sabra, Räuber-Rommé)."""
    initial_meld_minimum: ClassVar[int] = 0
    initial_meld_needs_run: ClassVar[bool] = False
    deal_direction: ClassVar[int] = 1
    """+1: the deal passes to the left (clockwise); -1: to the right."""
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()
    penalty_scoring: ClassVar[bool] = False
    """Round scores are penalty points (shown as positive Schlechtpunkte)."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        specs = {spec.name: spec for spec in self.option_specs}
        values = {name: spec.default for name, spec in specs.items()}
        for name, raw in (options or {}).items():
            key = name.strip().lower().replace("-", "_")
            if key not in specs:
                known = ", ".join(sorted(specs)) or "none"
                raise OptionError(f"unknown option {name!r} for {self.id} (known: {known})")
            values[key] = specs[key].parse(raw, self.id)
        self.options: dict[str, Any] = values

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.options.items() if v != self._spec(k).default}
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
        )

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
        problems: list[str] = []
        total = 0
        has_run = False
        for meld in melds:
            analysis = self.analyse(meld)
            if not analysis.valid:
                problems.append(f"{format_items(meld)}: {analysis.reason}")
                continue
            best = max(analysis.readings, key=self.meld_value)
            total += self.meld_value(best)
            has_run = has_run or any(r.kind is MeldKind.RUN for r in analysis.readings)
        required = self.initial_meld_required
        if hand_meld and self.hand_meld_waives_minimum:
            required = 0
        if total < required:
            problems.append(f"the initial meld is worth {total}, it needs at least {required}")
        if self.initial_meld_needs_run and not has_run and melds:
            problems.append("the initial meld needs at least one run")
        return InitialMeldCheck(total, required, not problems, tuple(problems))

    hand_meld_waives_minimum: ClassVar[bool] = False
    melds_lie_before_players: ClassVar[bool] = True
    """Each player's melds lie in front of that player ([remi] "legt die Meldungen offen
    vor sich auf den Tisch", [rum500] "offen vor sich", [american-rummy] "offen vor sich
    auf den Tisch legen"), so items in a seat's area during play are that player's
    melds.  Where False, every meld lies in the middle and a seat's area holds only the
    player's own rack, which is not part of the table until the round's end."""


# --- helpers for joker rules ------------------------------------------------
class RummikubVariant(Variant):
    family = Family.TILES
    copies = 2
    jokers = 2
    # [sabra] the melds are the table's, laid in the middle, rearranged by everyone
    melds_lie_before_players = False

    def hand_value(self, item: Item) -> int:
        if item.is_joker:
            return int(self.options.get("joker_penalty", 30))
        return item.rank  # type: ignore[union-attr]


_JOKER_PENALTY = OptionSpec(
    "joker_penalty",
    30,
    "a joker left on the rack counts 30 points, or 25 in some circles",
    (30, 25),
)


class Sabra(RummikubVariant):
    """Rummikub as in modern boxes [sabra]: 1 is only low, open with 30 from the hand,
    the table may be rearranged."""

    id = "sabra"
    name = "Rummikub (Sabra)"
    ace_high = False  # [sabra] "12-13-1 ist keine regelgerechte Folge"
    rearrangement = True
    initial_meld_minimum = 30  # [sabra] "mindesten 30"
    option_specs = (
        _JOKER_PENALTY,
        OptionSpec(
            "dutch",
            False,
            "Dutch Sabra: melds holding a joker may be split and rearranged; the joker keeps"
            " what it stands for",
        ),
        OptionSpec(
            "freed_joker",
            "anywhere",
            "where a joker freed by exchange must be played in the same turn: anywhere on the"
            " table (Goliath), in a new group (Lemada), in a group with two or more tiles from"
            " the hand (Spear/Pressman), or first in a group of the joker and hand tiles alone",
            ("anywhere", "new_group", "with_hand", "hand_only"),
        ),
        OptionSpec(
            "set_joker_needs_both",
            False,
            "a joker in a set of three can only be taken by adding both missing colours"
            " (Official Book, Pressman 1980)",
        ),
        OptionSpec(
            "rearrange_on_opening_turn",
            True,
            "rearranging the table may start in the turn of the initial meld (most rule sets;"
            " Lemada 1999 forbids it)",
        ),
    )


class AmericanRummikub(RummikubVariant):
    """The 1978 book's first game [american]: draw and discard, 12-13-1 allowed,
    open with 21 from the hand, no rearrangement."""

    id = "rummikub-american"
    name = "American Rummikub"
    initial_meld_minimum = 21  # [american] "mindestens 21 Punkten"
    deal_direction = -1  # [american] "nächste Spieler rechts"
    option_specs = (_JOKER_PENALTY,)


class InternationalRummikub(RummikubVariant):
    """[international]: like American, opening 50, wins Open/Foot/Closed."""

    id = "rummikub-international"
    name = "International Rummikub"
    initial_meld_minimum = 50  # [international] "mindestens 50 Punkte"
    deal_direction = -1
    option_specs = (
        OptionSpec(
            "joker_penalty",
            30,
            "a joker left unmelded counts 30 as in the American game (the text gives no value)",
            (30, 25),
        ),
        OptionSpec(
            "trump_bonus",
            False,
            "50 extra points for holding the tile that matches the trump",
        ),
    )

    def hand_value(self, item: Item) -> int:
        # [international] "Spielsteine 2-9 ihren Nennwert, aber ... 10, 11, 12, 13 und 1
        # zählen jeweils 10 Punkte"
        if item.is_joker:
            return int(self.options["joker_penalty"])
        rank = item.rank  # type: ignore[union-attr]
        return rank if 2 <= rank <= 9 else 10


class Remi(Variant):
    """Romanian tile rummy [remi]."""

    id = "remi"
    name = "Remi (Romanian rummy)"
    family = Family.TILES
    copies = 2
    jokers = 2
    initial_meld_needs_run = True  # [remi] "mindestens eine eine Folge sein"
    deal_direction = -1  # [remi] "Geber der Spieler rechts vom letzten Geber"
    option_specs = (
        OptionSpec("initial_meld", 50, "points needed to open (45 in some circles)", (50, 45)),
        OptionSpec(
            "take_discard_to_open",
            False,
            "the previous player's discard (one tile) may be taken if used at once in the opening",
        ),
        OptionSpec(
            "unmelded_penalty",
            "fixed",
            "a player who never melded loses 200 (fixed), or 100 plus the rack (rack)",
            ("fixed", "rack"),
        ),
        OptionSpec(
            "joker_out_doubles",
            True,
            "going out by discarding a joker after melding everything else doubles the winnings",
        ),
        OptionSpec(
            "one_in_rack",
            25,
            "what a 1 left on the rack counts (the text's table gives 5, 10 or 25 by meld)",
            (5, 10, 25),
        ),
    )

    @property
    def initial_meld_required(self) -> int:
        return int(self.options["initial_meld"])

    def joker_objection(self, kind: MeldKind, slots: tuple[Slot, ...]) -> str | None:
        # [remi] "Eine Meldung muss immer mindestens doppelt so viele echte Steine enthalten
        # wie Jolys"
        jokers = sum(slot.is_joker for slot in slots)
        naturals = len(slots) - jokers
        if naturals < 2 * jokers:
            return (
                f"a meld needs at least twice as many real tiles as jokers"
                f" ({naturals} real, {jokers} jokers)"
            )
        return None

    @staticmethod
    def tile_value(reading: Reading, slot: Slot) -> int:
        # [remi] table: 2..9 = 5, 10..13 = 10, 1 low run 5, 1 high run 10, 1 in a set 25
        if slot.rank == 1:
            if reading.kind is MeldKind.SET:
                return 25
            return 10 if slot.position == ACE_HIGH_POSITION else 5
        return 5 if slot.rank <= 9 else 10

    def slot_value(self, reading: Reading, slot: Slot) -> int:
        return self.tile_value(reading, slot)

    def melded_score(self, reading: Reading, slot: Slot) -> int:
        # [remi] "der Joly, der + 50 Punkte für den Spieler bringt, der ihn zuerst gemeldet hat"
        return 50 if slot.is_joker else self.tile_value(reading, slot)

    def hand_value(self, item: Item) -> int:
        if item.is_joker:
            return 25  # [remi] "– 25 Punkte für einen Spieler, der ihn ... auf seinem Ständer hat"
        rank = item.rank  # type: ignore[union-attr]
        if rank == 1:
            return int(self.options["one_in_rack"])
        return 5 if rank <= 9 else 10


class CardVariant(Variant):
    family = Family.CARDS

    def joker_objection(self, kind: MeldKind, slots: tuple[Slot, ...]) -> str | None:
        return None


def _rommee_joker_objection(kind: MeldKind, slots: tuple[Slot, ...]) -> str | None:
    # [rommee] "nicht gestattet, eine Figur mit nur einer natürlichen Karte und zwei Jokern";
    # "in einer Folge aus mindestens vier Karten dürfen jedoch auch zwei Joker unmittelbar
    # aufeinanderfolgen"
    jokers = sum(slot.is_joker for slot in slots)
    if jokers >= 2 and len(slots) - jokers < 2:
        return "a meld may not hold one natural card with two jokers"
    return None


class Rommee(CardVariant):
    """German Rommé with laying out [rommee]: 2x52 cards and 6 jokers."""

    id = "rommee"
    name = "Rommé"
    copies = 2
    jokers = 6
    initial_meld_minimum = 40
    penalty_scoring = True
    hand_meld_waives_minimum = True  # [rommee] Hand-Rommé: "Mindesterfordernis ... aufgehoben"
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "initial_meld", 40, "points needed to open (30 or 35 in some circles)", (40, 30, 35)
        ),
        OptionSpec(
            "discard_must_meld",
            False,
            "the top discard may only be taken if laid at once (then it counts for the opening)",
        ),
        OptionSpec("ace_around", False, "runs may go round the ace (K-A-2), a house rule"),
        OptionSpec(
            "set_joker_exchange_needs_four",
            False,
            "a joker in a set may be exchanged only when the set is completed to four cards of"
            " one rank (the stricter rule of the Deutscher Skatverband)",
        ),
    )

    @property
    def initial_meld_required(self) -> int:
        # Wiener Rummy inherits this but has no initial_meld option (no laying out)
        return int(self.options.get("initial_meld", self.initial_meld_minimum))

    @property
    def meld_rules(self) -> MeldRules:
        return MeldRules(
            family=self.family,
            ace_high=True,  # [rommee] "♣D–♣K–♣A", "nicht aber ♠K–♠A–♠2"
            ace_wrap=bool(self.options.get("ace_around", False)),
            joker_check=self.joker_objection,
        )

    def joker_objection(self, kind: MeldKind, slots: tuple[Slot, ...]) -> str | None:
        return _rommee_joker_objection(kind, slots)

    def slot_value(self, reading: Reading, slot: Slot) -> int:
        # [rommee] Ass "bei der Erstmeldung in der Folge A-2-3 jedoch nur einen Punkt";
        # a joker counts as the card it replaces
        if slot.rank == 1:
            return 1 if reading.kind is MeldKind.RUN and slot.position == 1 else 11
        return min(slot.rank, 10)

    def hand_value(self, item: Item) -> int:
        # [rommee] Bildkarten 10, Zählkarten nach Augen, Ass 11, Joker 20
        if item.is_joker:
            return 20
        rank = item.rank  # type: ignore[union-attr]
        return 11 if rank == 1 else min(rank, 10)


class RaeuberRommee(Rommee):
    """Räuber-Rommé [raeuber]: Rommé whose table melds may be rebuilt freely."""

    id = "raeuber"
    name = "Räuber-Rommé"
    rearrangement = True


class WienerRummy(Rommee):
    """Rommé without laying out [wiener]: 2x52 + 2 jokers, 10 cards, knock at 5."""

    id = "wiener"
    name = "Wiener Rummy"
    jokers = 2  # [wiener] "nur je einem Joker, insgesamt also mit 106 Karten"
    initial_meld_minimum = 0
    hand_meld_waives_minimum = False
    knock_limit = 5  # [wiener] "fünf oder weniger Augen"
    option_specs = (
        OptionSpec("knock_limit", 5, "deadwood at or below which a player may knock"),
        OptionSpec("elimination", 101, "penalty points at which a player is out of the match"),
        OptionSpec("buy_back_from", 81, "penalty points from which a player may buy back in once"),
        OptionSpec("ace_around", False, "runs may go round the ace (K-A-2), a house rule"),
    )

    def slot_value(self, reading: Reading, slot: Slot) -> int:
        # Wiener has no initial meld: melds count as cards count in scoring
        if slot.is_joker:
            return 20
        return self.hand_value(slot.item)


class Rum500(CardVariant):
    """500 Rum [rum500]: one deck and two jokers, melds score for the melder."""

    id = "rum500"
    name = "500 Rum"
    copies = 1
    option_specs = (
        OptionSpec("jokers", True, "play with the two jokers (the game was first played without)"),
        OptionSpec("decks", 1, "two decks for five or more players", (1, 2)),
        OptionSpec(
            "values",
            "standard",
            "card values: standard (pips face, JQK 10, A and joker 15) or 5/10/15",
            ("standard", "5-10-15"),
        ),
        OptionSpec("target", 500, "cumulative score that ends the match"),
        OptionSpec("must_go_out", False, "to win the match you must go out and reach the target"),
    )

    @property
    def copies_of_each(self) -> int:
        return int(self.options["decks"])

    @property
    def joker_count(self) -> int:
        return 2 * int(self.options["decks"]) if self.options["jokers"] else 0

    def card_value(self, rank: int, ace_low: bool) -> int:
        flat = self.options["values"] == "5-10-15"
        if rank == 1:
            # [rum500] "Ein Ass, das mit den 2 und 3 ... verschmolzen ist, erhält 1 Punkt";
            # 5/10/15: "Das Ass zählt als 5 Punkte ... als niedrige Karte"
            if ace_low:
                return 5 if flat else 1
            return 15
        if rank >= 10:
            return 10
        return 5 if flat else rank

    def slot_value(self, reading: Reading, slot: Slot) -> int:
        if slot.is_joker:
            return 15  # [rum500] "Ass, Joker je 15 Punkte"
        ace_low = reading.kind is MeldKind.RUN and slot.position == 1
        return self.card_value(slot.rank, ace_low)

    def hand_value(self, item: Item) -> int:
        if item.is_joker:
            return 15
        return self.card_value(item.rank, False)  # type: ignore[union-attr]


class AmericanRummy(CardVariant):
    """American Rummy [american-rummy]: 52 cards, no jokers, ace low unless agreed."""

    id = "american-rummy"
    name = "American Rummy"
    copies = 1
    jokers = 0
    option_specs = (
        OptionSpec("ace_high", False, "the ace may follow the king in a sequence, if agreed"),
        OptionSpec(
            "values",
            "standard",
            "standard (A 1, 10-K 10, pips face), high (A 15, K 13, Q 12, J 11) or flat"
            " (2-10 5, J-A 10)",
            ("standard", "high", "flat"),
        ),
        OptionSpec("decks", 1, "two decks for more than six players", (1, 2)),
        OptionSpec("target", 100, "points that end the match"),
    )

    @property
    def copies_of_each(self) -> int:
        return int(self.options["decks"])

    @property
    def meld_rules(self) -> MeldRules:
        return MeldRules(
            family=self.family,
            ace_high=bool(self.options["ace_high"]),
            joker_check=self.joker_objection,
        )

    def card_value(self, rank: int) -> int:
        scheme = self.options["values"]
        if scheme == "high":
            return {1: 15, 11: 11, 12: 12, 13: 13}.get(rank, rank)
        if scheme == "flat":
            return 10 if rank == 1 or rank >= 11 else 5
        return 1 if rank == 1 else min(rank, 10)

    def slot_value(self, reading: Reading, slot: Slot) -> int:
        return self.card_value(slot.rank)

    def hand_value(self, item: Item) -> int:
        if item.is_joker:
            raise ValueError("American Rummy is played without jokers")
        return self.card_value(item.rank)  # type: ignore[union-attr]


VARIANTS: dict[str, type[Variant]] = {
    cls.id: cls
    for cls in (
        Sabra,
        AmericanRummikub,
        InternationalRummikub,
        Remi,
        Rum500,
        AmericanRummy,
        Rommee,
        RaeuberRommee,
        WienerRummy,
    )
}


def find_variant(name: str, options: Mapping[str, Any] | None = None) -> Variant:
    """The variant with id ``name`` (case-insensitive), options applied."""
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in VARIANTS:
        raise VariantError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    return VARIANTS[key](options)


def parse_option_args(args: Iterable[str]) -> dict[str, str]:
    """``["initial_meld=45", ...]`` -> ``{"initial_meld": "45"}``."""
    out: dict[str, str] = {}
    for arg in args:
        name, sep, value = arg.partition("=")
        if not sep or not name.strip():
            raise OptionError(f"an option is written NAME=VALUE, not {arg!r}")
        out[name.strip()] = value.strip()
    return out
