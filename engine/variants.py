"""The nine variants of CONTRACT.md, each a subclass of :class:`tabletop.engine.base.Variant`.

Each class holds every fact and hook of its variant: material, meld rules,
values, the initial meld, what may be done with the table
(:attr:`~engine.base.Variant.table_rules`), round scoring
(:meth:`~engine.base.Variant.score_round`), how a match ends
(:attr:`~engine.base.Variant.match_rules`) and its house-rule options
(``--option NAME=VALUE``) with their defaults.  Nothing outside this module asks
which variant it has.

Rule texts are quoted by short tags, e.g. ``[sabra]`` =
rules/rummikub-sabra-american-international.de.txt, Sabra part.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from tabletop.engine.base import (
    MatchRules,
    OptionError,
    OptionSpec,
    RoundEntry,
    RoundInput,
    RoundResult,
    ScoringRules,
    TableRules,
    Variant,
    VariantError,
    VariantOptions,
    option,
)
from tabletop.engine.card_scoring import (
    score_american_rummy,
    score_rommee,
    score_rum500,
    score_wiener,
)
from tabletop.engine.international import score_international
from tabletop.engine.items import Family, Item
from tabletop.engine.melds import ACE_HIGH_POSITION, MeldKind, MeldRules, Reading, Slot
from tabletop.engine.tile_scoring import score_remi, score_rummikub

__all__ = [
    "VARIANTS",
    "AmericanRummikub",
    "AmericanRummy",
    "InternationalRummikub",
    "OptionError",
    "OptionSpec",
    "RaeuberRommee",
    "Remi",
    "Rommee",
    "Rum500",
    "Sabra",
    "Variant",
    "VariantError",
    "WienerRummy",
    "find_variant",
    "parse_option_args",
]

# --- helpers for joker rules ------------------------------------------------
@dataclass(frozen=True, eq=False)
class RummikubOptions(VariantOptions):
    joker_penalty: int = option(
        30, "a joker left on the rack counts 30 points, or 25 in some circles", (30, 25)
    )


class RummikubVariant(Variant):
    family = Family.TILES
    copies = 2
    jokers = 2
    # [sabra] the melds are the table's, laid in the middle, rearranged by everyone
    melds_lie_before_players = False
    # [sabra] "kann der Joker nicht an das andere Ende gelegt werden"; [american] melds
    # "Wie bei Sabra"
    joker_place_shows_meaning = True
    # [sabra], [american] "von zwei, drei oder vier Spielern"; [international] is "eine
    # etwas kompliziertere Version" of the American game
    players_allowed = (2, 4)
    Options = RummikubOptions
    options: RummikubOptions

    def hand_value(self, item: Item) -> int:
        if item.is_joker:
            return self.options.joker_penalty
        return item.rank  # type: ignore[union-attr]

    def score_round(self, round_: RoundInput) -> RoundResult:
        return score_rummikub(round_)


@dataclass(frozen=True, eq=False)
class SabraOptions(RummikubOptions):
    dutch: bool = option(
        False,
        "Dutch Sabra: melds holding a joker may be split and rearranged; the joker keeps"
        " what it stands for",
    )
    freed_joker: str = option(
        "anywhere",
        "where a joker freed by exchange must be played in the same turn: anywhere on the"
        " table (Goliath), in a new group (Lemada), in a group with two or more tiles from"
        " the hand (Spear/Pressman), or first in a group of the joker and hand tiles alone",
        ("anywhere", "new_group", "with_hand", "hand_only"),
    )
    set_joker_needs_both: bool = option(
        False,
        "a joker in a set of three can only be taken by adding both missing colours"
        " (Official Book, Pressman 1980)",
    )
    rearrange_on_opening_turn: bool = option(
        True,
        "rearranging the table may start in the turn of the initial meld (most rule sets;"
        " Lemada 1999 forbids it)",
    )


class Sabra(RummikubVariant):
    """Rummikub as in modern boxes [sabra]: 1 is only low, open with 30 from the hand,
    the table may be rearranged."""

    id = "sabra"
    name = "Rummikub (Sabra)"
    ace_high = False  # [sabra] "12-13-1 ist keine regelgerechte Folge"
    initial_meld_minimum = 30  # [sabra] "mindesten 30"
    Options = SabraOptions
    options: SabraOptions


    @property
    def table_rules(self) -> TableRules:
        return TableRules(
            rearrange=True,
            # [sabra] unplayable tiles stay on the rack; one draws from the pool
            discard_pile=False,
            opening=True,
            invalid_turn_penalty=3,  # [sabra] "zur Strafe drei Spielsteine aus dem Pool ziehen"
            split_joker_melds=self.options.dutch,
            freed_joker=self.options.freed_joker,
            set_joker_needs_both=self.options.set_joker_needs_both,
            rearrange_on_opening_turn=self.options.rearrange_on_opening_turn,
        )


class AmericanRummikub(RummikubVariant):
    """The 1978 book's first game [american]: draw and discard, 12-13-1 allowed,
    open with 21 from the hand, no rearrangement."""

    id = "rummikub-american"
    name = "American Rummikub"
    initial_meld_minimum = 21  # [american] "mindestens 21 Punkten"
    deal_direction = -1  # [american] "nächste Spieler rechts"

    @property
    def table_rules(self) -> TableRules:
        return TableRules(
            rearrange=False,
            # [american] "Abgelegte Spielsteine werden aufgestapelt"
            discard_pile=True,
            opening=True,
            # [american] "vorausgesetzt, dass Sie den Joker unmittelbar in einer 'neuen'
            # eigenen Kombination verwenden": read strictly, the joker with two tiles from
            # the rack
            exchange=True,
            freed_with_hand_tiles=True,
            deeper_discard="never",
            discard_before_opening="forbidden",
            discard_before_opening_rule=(
                "\"Ab dem nächsten Spielzug dürfen Sie einen soeben vom vorigen Spieler"
                " abgelegten Spielstein aufnehmen\""
            ),
        )


@dataclass(frozen=True, eq=False)
class InternationalOptions(RummikubOptions):
    joker_penalty: int = option(
        30,
        "a joker left unmelded counts 30 as in the American game (the text gives no value)",
        (30, 25),
    )
    trump_bonus: bool = option(False, "50 extra points for holding the tile that matches the trump")


class InternationalRummikub(AmericanRummikub):
    """[international]: "Der Spielablauf ist derselbe wie beim Amerikanischen Spiel", but
    the opening is 50, a discard may always be taken, and wins are Open, Foot or Closed."""

    id = "rummikub-international"
    name = "International Rummikub"
    # [international] Open / Foot / Closed, Kleiner and Grosser Blitz, a joker discarded
    # to go out doubles, the trump tile as an option
    round_entry = RoundEntry(
        winner_flags=("first_turn", "original_hand"),
        anyone_flags=("trump_declared",),
        win_kinds=("open", "foot", "closed"),
        last_discard=True,
    )
    initial_meld_minimum = 50  # [international] "mindestens 50 Punkte"
    Options = InternationalOptions
    options: InternationalOptions

    @property
    def scoring_rules(self) -> ScoringRules:
        return ScoringRules(trump_bonus=self.options.trump_bonus)

    @property
    def table_rules(self) -> TableRules:
        return replace(
            super().table_rules,
            # "mit der Ausnahme, dass die Spieler immer den vom vorigen Spieler abgelegten
            # Spielstein aufnehmen dürfen"
            discard_before_opening="allowed",
            discard_before_opening_rule="",
            foot=True,
        )

    @property
    def match_rules(self) -> MatchRules:
        # [international] "zahlt jeder Spieler den anderen Spielern eine Summe, die sich aus
        # dem Verhältnis der Differenz zwischen ihren Punktzahlen errechnet"
        return MatchRules(settlement=True)

    def score_round(self, round_: RoundInput) -> RoundResult:
        return score_international(round_)

    def hand_value(self, item: Item) -> int:
        # [international] "Spielsteine 2-9 ihren Nennwert, aber ... 10, 11, 12, 13 und 1
        # zählen jeweils 10 Punkte"
        if item.is_joker:
            return self.options.joker_penalty
        rank = item.rank  # type: ignore[union-attr]
        return rank if 2 <= rank <= 9 else 10


@dataclass(frozen=True, eq=False)
class RemiOptions(VariantOptions):
    initial_meld: int = option(50, "points needed to open (45 in some circles)", (50, 45))
    take_discard_to_open: bool = option(
        False,
        "the previous player's discard (one tile) may be taken if used at once in the opening",
    )
    unmelded_penalty: str = option(
        "fixed",
        "a player who never melded loses 200 (fixed), or 100 plus the rack (rack)",
        ("fixed", "rack"),
    )
    joker_out_doubles: bool = option(
        True,
        "going out by discarding a joker after melding everything else doubles the winnings",
    )
    one_in_rack: int = option(
        25,
        "what a 1 left on the rack counts (the text's table gives 5, 10 or 25 by meld)",
        (5, 10, 25),
    )


class Remi(Variant):
    """Romanian tile rummy [remi]."""

    id = "remi"
    name = "Remi (Romanian rummy)"
    # [remi] laid tiles score for their player, going out at once earns its bonus, the
    # trump tile +25, a joker discarded to go out doubles
    round_entry = RoundEntry(
        melds=True,
        winner_flags=("all_at_once",),
        anyone_flags=("trump_declared",),
        last_discard=True,
    )
    family = Family.TILES
    copies = 2
    jokers = 2
    initial_meld_needs_run = True  # [remi] "mindestens eine eine Folge sein"
    # [remi] "Wenn man einen Joly am Ende einer Folge benutzt, muss es klar sein, welchen
    # Stein der Joly ersetzt"
    joker_place_shows_meaning = True
    players_allowed = (2, 4)  # [remi] "mit zwei, drei oder vier Spielern"
    deal_direction = -1  # [remi] "Geber der Spieler rechts vom letzten Geber"
    Options = RemiOptions
    options: RemiOptions

    @property
    def scoring_rules(self) -> ScoringRules:
        return ScoringRules(unmelded_penalty=self.options.unmelded_penalty,
                            joker_out_doubles=self.options.joker_out_doubles)

    @property
    def initial_meld_required(self) -> int:
        return self.options.initial_meld

    @property
    def table_rules(self) -> TableRules:
        return TableRules(
            rearrange=False,
            discard_pile=True,
            opening=True,
            # [remi] rules 5-7
            exchange=True,
            set_exchange_needs_four=True,
            freed_with_hand_tiles=True,
            deeper_discard="new_meld",
            # "Es ist nicht erlaubt, einen abgelegten Stein aufzunehmen, um ... die
            # Anfangsmeldung ... zu machen"; Varianten: "nur ein Stein ..., wenn er sofort
            # für die Anfangsmeldung benutzt wird"
            discard_before_opening=(
                "opening_only" if self.options.take_discard_to_open else "forbidden"
            ),
            discard_before_opening_rule=(
                "\"nicht erlaubt, einen abgelegten Stein aufzunehmen, um ... die"
                " Anfangsmeldung ... zu machen\""
            ),
            # "Wenn man nur noch einen oder zwei Steine hat, darf man keinen Stein der Reihe
            # der abgelegten Steine aufnehmen"
            short_rack_takes_no_discard=2,
        )

    def score_round(self, round_: RoundInput) -> RoundResult:
        return score_remi(round_)

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
            return self.options.one_in_rack
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


@dataclass(frozen=True, eq=False)
class RommeeOptions(VariantOptions):
    initial_meld: int = option(
        40, "points needed to open (30 or 35 in some circles)", (40, 30, 35)
    )
    discard_must_meld: bool = option(
        False,
        "the top discard may only be taken if laid at once (then it counts for the opening)",
    )
    ace_around: bool = option(False, "runs may go round the ace (K-A-2), a house rule")
    set_joker_exchange_needs_four: bool = option(
        False,
        "a joker in a set may be exchanged only when the set is completed to four cards of"
        " one rank (the stricter rule of the Deutscher Skatverband)",
    )


@dataclass(frozen=True, eq=False)
class RaeuberOptions(RommeeOptions):
    discard_pile: bool = option(
        True,
        "play with a discard pile as in Rommé (\"wird aber auch ohne Ablagestapel gespielt\")",
    )


@dataclass(frozen=True, eq=False)
class WienerOptions(VariantOptions):
    knock_limit: int = option(5, "deadwood at or below which a player may knock", bounds=(0, 100))
    elimination: int = option(
        101, "penalty points at which a player is out of the match", bounds=(1, 100_000)
    )
    buy_back_from: int = option(
        81, "penalty points from which a player may buy back in once", bounds=(1, 100_000)
    )
    ace_around: bool = option(False, "runs may go round the ace (K-A-2), a house rule")


class RommeeCards(CardVariant):
    """The cards, meld rules and hand values Rommé and its games share ([raeuber]
    "Ansonsten gelten alle Regeln des Spiels mit Auslegen"; [wiener] "Rommé ohne
    Auslegen"): 2x52 cards, penalty points."""

    copies = 2
    penalty_scoring = True
    # [rommee] "von zwei bis sechs Personen"; [raeuber] "Ansonsten gelten alle Regeln des
    # Spiels mit Auslegen"; [wiener] "von zwei bis sechs Personen"
    players_allowed = (2, 6)

    @property
    def ace_wrap(self) -> bool:
        """Runs may go round the ace (the option ``ace_around``)."""
        raise NotImplementedError

    @property
    def meld_rules(self) -> MeldRules:
        return MeldRules(
            family=self.family,
            ace_high=True,  # [rommee] "♣D–♣K–♣A", "nicht aber ♠K–♠A–♠2"
            ace_wrap=self.ace_wrap,
            joker_check=self.joker_objection,
            joker_place_shows_meaning=self.joker_place_shows_meaning,
        )

    def joker_objection(self, kind: MeldKind, slots: tuple[Slot, ...]) -> str | None:
        return _rommee_joker_objection(kind, slots)

    def hand_value(self, item: Item) -> int:
        # [rommee] Bildkarten 10, Zählkarten nach Augen, Ass 11, Joker 20
        if item.is_joker:
            return 20
        rank = item.rank  # type: ignore[union-attr]
        return 11 if rank == 1 else min(rank, 10)


class Rommee(RommeeCards):
    """German Rommé with laying out [rommee]: 2x52 cards and 6 jokers."""

    id = "rommee"
    name = "Rommé"
    round_entry = RoundEntry(winner_flags=("all_at_once",))  # [rommee] Hand-Rommé doubles
    jokers = 6
    initial_meld_minimum = 40
    hand_meld_waives_minimum = True  # [rommee] Hand-Rommé: "Mindesterfordernis ... aufgehoben"
    Options = RommeeOptions
    options: RommeeOptions

    @property
    def ace_wrap(self) -> bool:
        return self.options.ace_around

    @property
    def initial_meld_required(self) -> int:
        return self.options.initial_meld

    @property
    def table_rules(self) -> TableRules:
        return TableRules(
            rearrange=False,
            discard_pile=True,
            opening=True,
            # [rommee] "Austauschen eines Jokers"
            exchange=True,
            set_exchange_needs_four=self.options.set_joker_exchange_needs_four,
            deeper_discard="never",
            discard_must_meld=self.options.discard_must_meld,
        )

    def score_round(self, round_: RoundInput) -> RoundResult:
        return score_rommee(round_)

    def slot_value(self, reading: Reading, slot: Slot) -> int:
        # [rommee] Ass "bei der Erstmeldung in der Folge A-2-3 jedoch nur einen Punkt";
        # a joker counts as the card it replaces
        if slot.rank == 1:
            return 1 if reading.kind is MeldKind.RUN and slot.position == 1 else 11
        return min(slot.rank, 10)


class RaeuberRommee(Rommee):
    """Räuber-Rommé [raeuber]: Rommé whose table melds may be rebuilt freely."""

    id = "raeuber"
    name = "Räuber-Rommé"
    Options = RaeuberOptions
    options: RaeuberOptions

    @property
    def table_rules(self) -> TableRules:
        return TableRules(
            rearrange=True,
            # [raeuber] "Ansonsten gelten alle Regeln des Spiels mit Auslegen, Räuber-Rommé
            # wird aber auch ohne Ablagestapel gespielt"
            discard_pile=self.options.discard_pile,
            opening=True,
            # "ausliegende Joker [können] dabei neue Verwendungen finden ..., ohne zunächst im
            # eigentlichen Sinne ausgetauscht worden zu sein"
            jokers_move_freely=True,
            # Rommé lets a player lay off and take jokers only once "er seine Erstmeldung
            # ausgelegt" hat, which a demanding table reads as: from the next turn on.
            rearrange_on_opening_turn=False,
            discard_must_meld=self.options.discard_must_meld,
        )


class WienerRummy(RommeeCards):
    """Rommé without laying out [wiener]: 2x52 + 2 jokers, 10 cards, knock at 5."""

    id = "wiener"
    name = "Wiener Rummy"
    round_entry = RoundEntry(winner_flags=("knocked",))  # [wiener] knocking or Rommé
    jokers = 2  # [wiener] "nur je einem Joker, insgesamt also mit 106 Karten"
    Options = WienerOptions
    options: WienerOptions

    @property
    def ace_wrap(self) -> bool:
        return self.options.ace_around

    @property
    def initial_meld_required(self) -> int:
        return 0

    @property
    def knock_limit(self) -> int:
        return self.options.knock_limit

    @property
    def table_rules(self) -> TableRules:
        return TableRules(rearrange=False, discard_pile=True, opening=False, lays_out=False)

    @property
    def match_rules(self) -> MatchRules:
        return MatchRules(
            # [wiener] "Sobald ein Spieler 101 oder mehr Schlechtpunkte gesammelt hat,
            # scheidet er aus"; "ab 81 ... zurückkaufen"
            elimination=self.options.elimination,
            buy_back_from=self.options.buy_back_from,
            # "zahlt jeder Spieler einen Einsatz in Höhe von fünf Chips"; "erhält der Klopfer
            # bzw. Rommé-Rufer ... einen Chip ausbezahlt"
            stake=5,
            klopfgeld=1,
        )

    def score_round(self, round_: RoundInput) -> RoundResult:
        return score_wiener(round_)

    def slot_value(self, reading: Reading, slot: Slot) -> int:
        # Wiener has no initial meld: melds count as cards count in scoring
        if slot.is_joker:
            return 20
        return self.hand_value(slot.item)


@dataclass(frozen=True, eq=False)
class Rum500Options(VariantOptions):
    jokers: bool = option(True, "play with the two jokers (the game was first played without)")
    decks: int = option(1, "two decks for five or more players", (1, 2))
    values: str = option(
        "standard",
        "card values: standard (pips face, JQK 10, A and joker 15) or 5/10/15",
        ("standard", "5-10-15"),
    )
    target: int = option(500, "cumulative score that ends the match", bounds=(1, 1_000_000))
    must_go_out: bool = option(
        False, "to win the match you must go out and reach the target"
    )


class Rum500(CardVariant):
    """500 Rum [rum500]: one deck and two jokers, melds score for the melder."""

    id = "rum500"
    name = "500 Rum"
    round_entry = RoundEntry(melds=True)  # [rum500] laid cards count for their player
    copies = 1
    # [rum500] "indem Sie die Karten in dieser Anordnung ablegen, geben Sie dies an Der
    # Joker repräsentiert die 8"
    joker_place_shows_meaning = True
    players_allowed = (2, 8)  # [rum500] "von 2 bis ungefähr 8"
    Options = Rum500Options
    options: Rum500Options

    @property
    def copies_of_each(self) -> int:
        return self.options.decks

    @property
    def table_rules(self) -> TableRules:
        return TableRules(
            rearrange=False,
            discard_pile=True,
            # "Die oberste Karte des Vorrats wird umgedreht ... die erste Karte des
            # Ablagestapels"
            upcard=True,
            opening=False,
            # "Dies kann anschließend nicht mehr geändert werden": no exchange at all
            exchange=False,
            # "Sie können eine Karte von unten im Ablagestapel nur nehmen, wenn: Sie die
            # Karte sofort verschmelzen"
            deeper_discard="melded",
        )

    @property
    def match_rules(self) -> MatchRules:
        return MatchRules(
            target=self.options.target,
            target_needs_going_out=self.options.must_go_out,
        )

    def score_round(self, round_: RoundInput) -> RoundResult:
        return score_rum500(round_)

    @property
    def joker_count(self) -> int:
        return 2 * self.options.decks if self.options.jokers else 0

    def card_value(self, rank: int, ace_low: bool) -> int:
        flat = self.options.values == "5-10-15"
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


@dataclass(frozen=True, eq=False)
class AmericanRummyOptions(VariantOptions):
    ace_high: bool = option(False, "the ace may follow the king in a sequence, if agreed")
    values: str = option(
        "standard",
        "standard (A 1, 10-K 10, pips face), high (A 15, K 13, Q 12, J 11) or flat"
        " (2-10 5, J-A 10)",
        ("standard", "high", "flat"),
    )
    decks: int = option(1, "two decks for more than six players", (1, 2))
    target: int = option(100, "points that end the match", bounds=(1, 1_000_000))


class AmericanRummy(CardVariant):
    """American Rummy [american-rummy]: 52 cards, no jokers, ace low unless agreed."""

    id = "american-rummy"
    name = "American Rummy"
    round_entry = RoundEntry(winner_flags=("all_at_once",))  # [american-rummy] Hand-Rummy
    copies = 1
    jokers = 0
    Options = AmericanRummyOptions
    options: AmericanRummyOptions

    @property
    def copies_of_each(self) -> int:
        return self.options.decks

    @property
    def table_rules(self) -> TableRules:
        return TableRules(
            rearrange=False,
            discard_pile=True,
            upcard=True,  # "Die oberste Karte wird offen neben den Stoß gelegt"
            opening=False,
            deeper_discard="never",  # "nur die oberste Karte sichtbar"
            borrowing=True,
        )

    @property
    def match_rules(self) -> MatchRules:
        # "sobald einer der Spieler 100 oder mehr Punkte geschrieben hat"
        return MatchRules(target=self.options.target, collected_only=True)

    def score_round(self, round_: RoundInput) -> RoundResult:
        return score_american_rummy(round_)

    @property
    def meld_rules(self) -> MeldRules:
        return MeldRules(
            family=self.family,
            ace_high=self.options.ace_high,
            joker_check=self.joker_objection,
            joker_place_shows_meaning=self.joker_place_shows_meaning,
        )

    def player_range(self) -> tuple[int, int | None]:
        # [american-rummy] "zwei bis sechs Spieler. Wenn mehr als sechs Spieler sind, dann
        # wird mit zwei Kartenpaketen (104 Blatt) gespielt."
        return (2, 6) if self.options.decks == 1 else (2, None)

    def players_advice(self, count: int) -> str:
        if count > 6 and self.options.decks == 1:
            return " (more than six play with two packs: option decks=2)"
        return ""

    def card_value(self, rank: int) -> int:
        scheme = self.options.values
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
