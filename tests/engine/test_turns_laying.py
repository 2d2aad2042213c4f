"""Checking a turn where melds may only be extended (engine/turns.py).

Rule quotes: [remi] = rules/remi-romanian-tile-rummy.de.txt (rules 1-7 after "Nachdem
man einige Meldungen ... gemacht hat", and the "Man beachte" paragraphs);
[american]/[international] = rules/rummikub-sabra-american-international.de.txt;
[rommee]/[wiener] = rules/rommee-raeuber-wiener.de.txt; [rum500] = rules/rum500.de.txt;
[american-rummy] = rules/american-rummy.de.txt.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop.engine.items import Item, natural, parse_item, parse_items, parse_melds
from tabletop.engine.turns import TurnCheck, TurnError, check_turn
from tabletop.engine.variants import find_variant


def _check(
    variant_id: str,
    options: dict[str, Any],
    before: str,
    after: str,
    laid: str,
    opened: bool,
    **keywords: Any,
) -> TurnCheck:
    return check_turn(
        find_variant(variant_id, options),
        parse_melds(before) if before.strip() else (),
        parse_melds(after) if after.strip() else (),
        parse_items(laid),
        opened=opened,
        **keywords,
    )


def _discard(text: str) -> tuple[Item, ...]:
    return parse_items(text)


# (id, variant, options, before, after, laid, opened, keywords, valid, problem codes, exchanged)
# Every expected result was worked out by hand from the quoted rule.
CASES: list[
    tuple[str, str, dict[str, Any], str, str, str, bool, dict[str, Any], bool, list[str], str]
] = [
    # --- [remi] -------------------------------------------------------------------------
    (
        # "die Folge [blau 9][blau 10][Joly], in der der Joly die 11 ersetzt, mit der blauen
        # 12 verlängert werden"
        "remi blue 9-10-Joly extended by the 12",
        "remi", {}, "B9 B10 JK", "B9 B10 JK B12", "B12", True, {}, True, [], "",
    ),
    (
        # "aber es ist nicht möglich, den Joly so umzulegen, dass er eine blaue 8 ersetzt,
        # so dass man eine blaue 7 hinzufügen könnte"
        "remi Joly re-read as the blue 8",
        "remi", {}, "B9 B10 JK", "B7 JK B9 B10", "B7", True, {},
        False, ["joker_meaning_changed"], "",
    ),
    (
        # rule 2: "Man kann seine eigenen oder die Meldungen anderer Spieler verlängern"
        "remi rule 2 extend a run at both ends",
        "remi", {}, "K6 K7 K8", "K5 K6 K7 K8 K9 K10", "K5 K9 K10", True, {}, True, [], "",
    ),
    (
        # "Aber kein Stein darf gleichzeitig Teil von zwei Meldungen" / only extended: a
        # tile taken out of a run breaks it
        "remi run split to make a new run",
        "remi", {}, "R1 R2 R3 R4 R5", "R1 R2 R3 | R4 R5 R6", "R6", True, {},
        False, ["meld_split"], "",
    ),
    (
        # rule 5: "Hat man genau den Stein, den ein Joly ... ersetzt, darf man den Joly nehmen
        # ..., vorausgesetzt, man gebraucht ihn sofort mit zwei Steinen vom eigenen Ständer"
        "remi rule 5 exchange with a new meld",
        "remi", {}, "B5 B6 JK", "B5 B6 B7 | R9 R10 JK", "B7 R9 R10", True, {}, True, [], "B7",
    ),
    (
        # rule 5 "genau den Stein": the B4 is not the B7 the Joly stands for
        "remi rule 5 wrong tile",
        "remi", {}, "B5 B6 JK", "B4 B5 B6 | R9 R10 JK", "B4 R9 R10", True, {},
        False, ["joker_split"], "",
    ),
    (
        # rule 5 "um einen neuen Satz oder eine neue Folge zu melden"
        "remi rule 5 freed Joly added to an old run",
        "remi", {}, "B5 B6 JK | K3 K4 K5", "B5 B6 B7 | K3 K4 K5 JK", "B7", True, {},
        False, ["freed_joker_not_new_group"], "B7",
    ),
    (
        "remi rule 5 freed Joly put back at the other end",
        "remi", {}, "B5 B6 JK", "JK B5 B6 B7", "B7", True, {},
        False, ["freed_joker_same_meld"], "B7",
    ),
    (
        # rule 5 "sofort": the Joly may not go to the rack
        "remi rule 5 freed Joly kept on the rack",
        "remi", {}, "B5 B6 JK", "B5 B6 B7", "B7", True, {},
        False, ["freed_joker_unused"], "B7",
    ),
    (
        # rule 6: "hat die beiden Steine gleichen Ranges in den beiden fehlenden Farben, darf
        # man den Joly nehmen und an seine Stelle die beiden Steine legen"
        "remi rule 6 both missing colours",
        "remi", {}, "R5 B5 JK", "R5 B5 K5 O5 | R9 R10 JK", "K5 O5 R9 R10", True, {},
        True, [], "K5 O5",
    ),
    (
        # rule 7: "nur einen Stein von den fehlenden Farben, dann darf man diesen Stein an den
        # Satz anlegen"
        "remi rule 7 one colour added, Joly stays",
        "remi", {}, "R5 B5 JK", "R5 B5 K5 JK", "K5", True, {}, True, [], "",
    ),
    (
        # rule 7: "aber man darf den Joly nicht nehmen"
        "remi rule 7 one colour cannot take the Joly",
        "remi", {}, "R5 B5 JK", "R5 B5 K5 | R9 R10 JK", "K5 R9 R10", True, {},
        False, ["joker_exchange_incomplete"], "",
    ),
    (
        # rule 7: "Später kann ein Spieler, der einen Stein mit der gleichen Zahl und der
        # vierten Farbe hat, diesen benutzen, um damit den Joly einzutauschen"
        "remi rule 7 the fourth colour takes the Joly later",
        "remi", {}, "R5 B5 K5 JK", "R5 B5 K5 O5 | R9 R10 JK", "O5 R9 R10", True, {},
        True, [], "O5",
    ),
    (
        # "[gelbe 3][Joly][gelbe 5][Joly][gelbe 7] nicht erlaubt; aber wenn man noch eine
        # gelbe 8 anlegen könnte, wäre es eine regelgerechte Folge"
        "remi two Jolys need six tiles",
        "remi", {}, "K1 K2 K3", "K1 K2 K3 | O3 JK O5 JK O7", "O3 JK O5 JK O7", True, {},
        False, ["invalid_meld"], "",
    ),
    (
        "remi two Jolys with the yellow 8",
        "remi", {}, "K1 K2 K3", "K1 K2 K3 | O3 JK O5 JK O7 O8", "O3 JK O5 JK O7 O8", True, {},
        True, [], "",
    ),
    (
        # "mindestens eine eine Folge sein ... mindestens 50 Punkte": 40 + 15
        "remi opening 55 with a run",
        "remi", {}, "", "R10 R11 R12 R13 | K5 B5 O5", "R10 R11 R12 R13 K5 B5 O5", False, {},
        True, [], "",
    ),
    (
        # 40 + 30 = 70 but no run
        "remi opening without a run",
        "remi", {}, "", "K10 B10 O10 R10 | K11 B11 O11", "K10 B10 O10 R10 K11 B11 O11", False,
        {}, False, ["initial_too_low"], "",
    ),
    (
        # 30 + 15 = 45
        "remi opening 45 is too low",
        "remi", {}, "", "R10 R11 R12 | K5 B5 O5", "R10 R11 R12 K5 B5 O5", False, {},
        False, ["initial_too_low"], "",
    ),
    (
        # Varianten: "Einige Runden fordern nur 45 Punkte"
        "remi opening 45 with initial_meld=45",
        "remi", {"initial_meld": 45}, "", "R10 R11 R12 | K5 B5 O5", "R10 R11 R12 K5 B5 O5",
        False, {}, True, [], "",
    ),
    (
        # "Gleichzeitig mit der Anfangsmeldung darf man keine Steine an die Meldungen anderer
        # Spieler anlegen"
        "remi laying off with the opening",
        "remi", {}, "K6 K7 K8", "R10 R11 R12 R13 | K5 B5 O5 | K6 K7 K8 K9",
        "R10 R11 R12 R13 K5 B5 O5 K9", False, {}, False, ["laid_off_before_opening"], "",
    ),
    (
        # "... oder den Joly eines anderen Spielers mit einem entsprechenden Stein austauschen"
        "remi exchange with the opening",
        "remi", {}, "B5 B6 JK", "B5 B6 B7 | R10 R11 R12 R13 | K5 B5 O5 JK",
        "B7 R10 R11 R12 R13 K5 B5 O5", False, {}, False, ["exchange_before_opening"], "B7",
    ),
    (
        # a player who has not opened may simply draw and discard
        "remi no opening this turn",
        "remi", {}, "K6 K7 K8", "K6 K7 K8", "", False, {}, True, [], "",
    ),
    (
        # "Es ist nicht erlaubt, einen abgelegten Stein aufzunehmen, um mit Hilfe dieses
        # Steins die Anfangsmeldung ... zu machen"
        "remi discard used for the opening",
        "remi", {}, "", "R10 R11 R12 R13 | K5 B5 O5", "R10 R11 R12 R13 K5 B5 O5", False,
        {"discard_taken": parse_item("O5")}, False, ["discard_used_for_opening"], "",
    ),
    (
        # Varianten: "der Stein vom vorhergehenden Spieler (nur ein Stein) aufgenommen werden
        # darf, wenn er sofort für die Anfangsmeldung benutzt wird"
        "remi take_discard_to_open",
        "remi", {"take_discard_to_open": True}, "", "R10 R11 R12 R13 | K5 B5 O5",
        "R10 R11 R12 R13 K5 B5 O5", False, {"discard_taken": parse_item("O5")}, True, [], "",
    ),
    (
        "remi take_discard_to_open but the tile is kept",
        "remi", {"take_discard_to_open": True}, "", "R10 R11 R12 R13 | K5 B5 O5",
        "R10 R11 R12 R13 K5 B5 O5", False, {"discard_taken": parse_item("K9")},
        False, ["discard_not_melded"], "",
    ),
    (
        # rule 3: "den abgelegten Stein des vorherigen Spielers aufnehmen; es besteht auch
        # keine Verpflichtung, diesen Stein sofort in einer Meldung auszulegen"
        "remi rule 3 top discard kept",
        "remi", {}, "K1 K2 K3", "K1 K2 K3", "", True, {"discard_taken": parse_item("K9")},
        True, [], "",
    ),
    (
        # rule 4: "mit denen man einen Satz oder eine Folge mit irgendeinem Stein der
        # abgelegten Steine vervollständigen kann, darf man diesen Stein aufnehmen und die
        # Meldung machen"; the tiles above it go to the rack
        "remi rule 4 deep discard completes a new run",
        "remi", {}, "K1 K2 K3", "K1 K2 K3 | R5 R6 R7", "R5 R6 R7", True,
        {"discard_taken": _discard("R5 K9 B2")}, True, [], "",
    ),
    (
        "remi rule 4 deep discard only laid off",
        "remi", {}, "K1 K2 K3", "K1 K2 K3 K4 | R6 R7 R8", "K4 R6 R7 R8", True,
        {"discard_taken": _discard("K4 K9 B2")}, False, ["discard_not_melded"], "",
    ),
    (
        # "Wenn man nur noch einen oder zwei Steine hat, darf man keinen Stein der Reihe der
        # abgelegten Steine aufnehmen"
        "remi discard with two tiles on the rack",
        "remi", {}, "K1 K2 K3", "K1 K2 K3 K4", "K4", True,
        {"discard_taken": parse_item("K4"), "rack_size": 2},
        False, ["discard_with_short_rack"], "",
    ),
    # --- [rommee] -------------------------------------------------------------------------
    (
        # "Auf dem Tisch liegt ♥2–♥3–♥4. Hält ein Spieler ♥ A und ♥ 5 in der Hand, so darf er
        # diese beiden Karten an die ausgelegte Folge anlegen."
        "rommee hearts 2-3-4 with ace and 5",
        "rommee", {}, "2H 3H 4H", "AH 2H 3H 4H 5H", "AH 5H", True, {}, True, [], "",
    ),
    (
        # "Hat ein Spieler seine Erstmeldung ausgelegt, so darf er ... anlegen"
        "rommee laying off before the Erstmeldung",
        "rommee", {}, "2H 3H 4H", "AH 2H 3H 4H 5H", "AH 5H", False, {},
        False, ["laid_off_before_opening"], "",
    ),
    (
        # "♠6–♥6–J ... die ♣6 oder ♦6, so kann er den Joker durch diese Karte austauschen.
        # Der Joker muss sofort wieder in einer neuen Meldung ausgelegt werden"
        "rommee spades-hearts 6 joker exchanged by the clubs 6",
        "rommee", {}, "6S 6H JK", "6S 6H 6C | 9D 10D JK", "6C 9D 10D", True, {},
        True, [], "6C",
    ),
    (
        "rommee spades-hearts 6 joker exchanged by the diamonds 6",
        "rommee", {}, "6S 6H JK", "6S 6H 6D | JK QC KC", "6D QC KC", True, {}, True, [], "6D",
    ),
    (
        # "darf nicht in das eigene Blatt aufgenommen werden"
        "rommee freed joker into the hand",
        "rommee", {}, "6S 6H JK", "6S 6H 6C", "6C", True, {}, False, ["freed_joker_unused"], "6C",
    ),
    (
        # "in einer neuen Meldung": not onto a meld already on the table
        "rommee freed joker onto an old meld",
        "rommee", {}, "6S 6H JK | 9D 10D JD", "6S 6H 6C | 9D 10D JD JK", "6C", True, {},
        False, ["freed_joker_not_new_group"], "6C",
    ),
    (
        # "hier also die ♣6 oder ♦6": the ♠7 is not what the joker stands for
        "rommee wrong card cannot take the joker",
        "rommee", {}, "6S 6H JK", "6S 6H | 7S JK 9S", "7S 9S", True, {},
        False, ["invalid_meld", "joker_split"], "",
    ),
    (
        # DSkV: "ein Joker in einem Satz erst dann ausgetauscht werden darf, wenn der Satz mit
        # vier Karten gleichen Ranges komplettiert wird"
        "rommee DSkV one card is not enough",
        "rommee", {"set_joker_exchange_needs_four": True}, "6S 6H JK", "6S 6H 6C | 9D 10D JK",
        "6C 9D 10D", True, {}, False, ["joker_exchange_incomplete"], "",
    ),
    (
        "rommee DSkV completed to four",
        "rommee", {"set_joker_exchange_needs_four": True}, "6S 6H JK",
        "6S 6H 6C 6D | 9D 10D JK", "6C 6D 9D 10D", True, {}, True, [], "6C 6D",
    ),
    (
        # "Das Austauschen eines Jokers ist erst nach Auslage der Erstmeldung erlaubt"
        # (J Q K A of hearts counts 41 with the joker, but the exchange comes too early)
        "rommee exchange in the turn of the Erstmeldung",
        "rommee", {}, "6S 6H JK", "6S 6H 6C | JK QH KH AH", "6C QH KH AH", False, {},
        False, ["exchange_before_opening"], "6C",
    ),
    (
        # "mindestens 40 Punkten"; Bildkarten zehn
        "rommee Erstmeldung 40",
        "rommee", {}, "", "10S JS QS KS", "10S JS QS KS", False, {}, True, [], "",
    ),
    (
        # 29 + 9 = 38
        "rommee Erstmeldung 38",
        "rommee", {}, "", "9S 10S JS | 2H 3H 4H", "9S 10S JS 2H 3H 4H", False, {},
        False, ["initial_too_low"], "",
    ),
    (
        # "♠3–J–J–♠6 eine erlaubte Kombination": extended, the jokers stay 4 and 5
        "rommee 3-J-J-6 of spades extended",
        "rommee", {}, "3S JK JK 6S", "3S JK JK 6S 7S", "7S", True, {}, True, [], "",
    ),
    (
        # "nicht gestattet, eine Figur mit nur einer natürlichen Karte und zwei Jokern"
        "rommee one natural card and two jokers",
        "rommee", {}, "", "5S JK JK", "5S JK JK", True, {}, False, ["invalid_meld"], "",
    ),
    (
        # "nur dann die oberste Karte des Abwurfstapels aufnehmen darf, wenn er sie sofort in
        # einer Meldung auslegt"
        "rommee discard_must_meld kept in hand",
        "rommee", {"discard_must_meld": True}, "5H 6H 7H", "5H 6H 7H", "", True,
        {"discard_taken": parse_item("4H")}, False, ["discard_not_melded"], "",
    ),
    (
        "rommee discard_must_meld laid off",
        "rommee", {"discard_must_meld": True}, "5H 6H 7H", "4H 5H 6H 7H", "4H", True,
        {"discard_taken": parse_item("4H")}, True, [], "",
    ),
    # --- [rum500] -------------------------------------------------------------------------
    (
        # "Wenn beispielsweise 5 6 7 bereits auf der Karte ist, ... können die 4 oder 8 oder
        # beides hinzufügen"
        "rum500 5-6-7 with 4 and 8",
        "rum500", {}, "5H 6H 7H", "4H 5H 6H 7H 8H", "4H 8H", True, {}, True, [], "",
    ),
    (
        # "Die vierte Karte desselben Ranges kann zu einer Dreiergruppe hinzugefügt werden"
        "rum500 fourth jack",
        "rum500", {}, "JS JH JD", "JS JH JD JC", "JC", True, {}, True, [], "",
    ),
    (
        # "6 7 Joker ... der Joker repräsentiert die 8. Später kann jemand die 5 oder 9 in
        # dieser Sequenz entlassen"
        "rum500 6-7-joker with 5 and 9",
        "rum500", {}, "6H 7H JK", "5H 6H 7H JK 9H", "5H 9H", True, {}, True, [], "",
    ),
    (
        # "aber er darf den Joker nicht in eine 5 [verwandeln], um eine [8] zu entlassen"
        "rum500 joker turned into the 5",
        "rum500", {}, "6H 7H JK", "JK 6H 7H 8H", "8H", True, {},
        False, ["joker_meaning_changed"], "",
    ),
    (
        # "Dies kann anschließend nicht mehr geändert werden": no exchange in 500 Rum
        "rum500 joker exchanged",
        "rum500", {}, "6H 7H JK", "6H 7H 8H | 2C 3C JK", "8H 2C 3C", True, {},
        False, ["joker_exchange_not_allowed"], "",
    ),
    (
        # "Jeder Spieler könnte anschließend eine andere Neun entlassen und eine Gruppe von
        # vier Neunen vervollständigen"
        "rum500 nine and two jokers completed",
        "rum500", {}, "9S JK JK", "9S 9H JK JK", "9H", True, {}, True, [], "",
    ),
    (
        # "nicht möglich, eine Gruppe von ... vier Königen und einen Joker zu verschmelzen"
        "rum500 joker onto four kings",
        "rum500", {}, "KS KH KD KC", "KS KH KD KC JK", "JK", True, {},
        False, ["invalid_meld"], "",
    ),
    (
        # "Sie können eine Karte von unten im Ablagestapel nur nehmen, wenn: Sie die Karte
        # sofort verschmelzen – entweder in einer neuen Kombination oder indem Sie sie auf
        # eine vorhandene Verschmelzung legen"
        "rum500 deep discard laid off",
        "rum500", {}, "5H 6H 7H", "4H 5H 6H 7H", "4H", True,
        {"discard_taken": _discard("4H QS 2C")}, True, [], "",
    ),
    (
        "rum500 deep discard kept in hand",
        "rum500", {}, "5H 6H 7H", "5H 6H 7H", "", True,
        {"discard_taken": _discard("4H QS 2C")}, False, ["discard_not_melded"], "",
    ),
    (
        # "Es ist immer legal, ... die oberste Karte aus dem Ablagestapel zu ziehen"
        "rum500 top discard kept",
        "rum500", {}, "5H 6H 7H", "5H 6H 7H", "", True, {"discard_taken": parse_item("4H")},
        True, [], "",
    ),
    (
        # no initial meld in 500 Rum: any meld may be laid at any time
        "rum500 small meld without opening",
        "rum500", {}, "", "2C 3C 4C", "2C 3C 4C", False, {}, True, [], "",
    ),
    # --- [american] -----------------------------------------------------------------------
    (
        # "mit einem Gesamtwert von mindestens 21 Punkten"
        "american opening 21",
        "rummikub-american", {}, "", "R6 R7 R8", "R6 R7 R8", False, {}, True, [], "",
    ),
    (
        "american opening 18",
        "rummikub-american", {}, "", "R5 R6 R7", "R5 R6 R7", False, {},
        False, ["initial_too_low"], "",
    ),
    (
        # "sowohl 1-2-3 als auch 12-13-1 regelgerechte Folgen"
        "american 11-12-13 extended by the 1",
        "rummikub-american", {}, "R11 R12 R13", "R11 R12 R13 R1", "R1", True, {}, True, [], "",
    ),
    (
        # "Nachdem Sie Ihre Anfangskombination ... gelegt haben, stehen Ihnen weitere
        # Möglichkeiten zur Verfügung. ... erweitern, indem Sie Spielsteine daran anlegen"
        "american laying off with the opening",
        "rummikub-american", {}, "K9 K10 K11", "R6 R7 R8 | K9 K10 K11 K12", "R6 R7 R8 K12",
        False, {}, False, ["laid_off_before_opening"], "",
    ),
    (
        # "den Joker durch diesen Spielstein ersetzen, vorausgesetzt, dass Sie den Joker
        # unmittelbar in einer 'neuen' eigenen Kombination verwenden"
        "american exchange into a new meld",
        "rummikub-american", {}, "R5 R6 JK", "R5 R6 R7 | K1 K2 JK", "R7 K1 K2", True, {},
        True, [], "R7",
    ),
    (
        "american freed joker extends an old meld",
        "rummikub-american", {}, "R5 R6 JK | K9 K10 K11", "R5 R6 R7 | K9 K10 K11 JK", "R7",
        True, {}, False, ["freed_joker_not_new_group"], "R7",
    ),
    (
        # the strict reading: "der Joker mit zwei Spielsteinen aus Ihrem Blatt"
        "american two freed jokers with one rack tile",
        "rummikub-american", {}, "R4 R5 JK | K7 B7 JK", "R4 R5 R6 | K7 B7 O7 | JK JK B12",
        "R6 O7 B12", True, {}, False, ["freed_joker_without_hand_tiles"], "R6 O7",
    ),
    (
        # "Ab dem nächsten Spielzug dürfen Sie einen soeben vom vorigen Spieler abgelegten
        # Spielstein aufnehmen"
        "american discard before opening",
        "rummikub-american", {}, "", "", "", False, {"discard_taken": parse_item("R4")},
        False, ["discard_taken_before_opening"], "",
    ),
    (
        "american discard after opening",
        "rummikub-american", {}, "", "", "", True, {"discard_taken": parse_item("R4")},
        True, [], "",
    ),
    (
        # only extended: two runs may not be joined by the tile between them
        "american runs joined",
        "rummikub-american", {}, "R1 R2 R3 | R5 R6 R7", "R1 R2 R3 R4 R5 R6 R7", "R4", True, {},
        False, ["melds_joined"], "",
    ),
    # --- [international] ------------------------------------------------------------------
    (
        # "Sie brauchen mindestens 50 Punkte für Ihre Anfangskombination": 46
        "international opening 46",
        "rummikub-international", {}, "", "R10 R11 R12 R13", "R10 R11 R12 R13", False, {},
        False, ["initial_too_low"], "",
    ),
    (
        "international opening 52",
        "rummikub-international", {}, "", "R10 R11 R12 R13 | K1 K2 K3", "R10 R11 R12 R13 K1 K2 K3",
        False, {}, True, [], "",
    ),
    (
        # Foot: "14 Spielsteine auf einmal auslegen ...; andere Spielsteine werden an
        # Meldungen der anderen Spieler angelegt. Ihre 14 Spielsteine müssen mindestens 50
        # Punkte ergeben": 12 + 9 + 46 + 10 + 6 = 83
        "international Foot with lay-offs",
        "rummikub-international", {}, "K5 K6 K7 | R9 B9 O9",
        "K4 K5 K6 K7 K8 | R9 B9 O9 K9 | R10 R11 R12 R13 | B1 B2 B3 B4 | O1 O2 O3",
        "K4 K8 K9 R10 R11 R12 R13 B1 B2 B3 B4 O1 O2 O3", False, {}, True, [], "",
    ),
    (
        # 14 tiles worth 10 + 10 + 6 + 6 = 32
        "international Foot under 50",
        "rummikub-international", {}, "", "B1 B2 B3 B4 | K1 K2 K3 K4 | O1 O2 O3 | R1 R2 R3",
        "B1 B2 B3 B4 K1 K2 K3 K4 O1 O2 O3 R1 R2 R3", False, {}, False, ["initial_too_low"], "",
    ),
    (
        # "die Spieler immer den vom vorigen Spieler abgelegten Spielstein aufnehmen dürfen"
        "international discard before opening",
        "rummikub-international", {}, "", "", "", False, {"discard_taken": parse_item("R4")},
        True, [], "",
    ),
    # --- [american-rummy] -----------------------------------------------------------------
    (
        # "Ein Spieler hat eine Herz-Dame ..., einen Damen-Drilling herausgelegt, an diesen
        # darf er seine Dame anlegen. Dasselbe gilt für eine Sequenz Herz-Neuner, -Zehner,
        # -Bube."
        "american rummy queen onto three queens",
        "american-rummy", {}, "QS QD QC", "QS QD QC QH", "QH", False, {}, True, [], "",
    ),
    (
        "american rummy queen onto 9-10-J of hearts",
        "american-rummy", {}, "9H 10H JH", "9H 10H JH QH", "QH", True, {}, True, [], "",
    ),
    (
        # "In einer Sequenz darf das As nicht an den König angelegt werden, es sei denn, daß
        # das vor dem Spiel ausdrücklich vereinbart wird"
        "american rummy ace after the king",
        "american-rummy", {}, "JS QS KS", "JS QS KS AS", "AS", True, {},
        False, ["invalid_meld"], "",
    ),
    (
        "american rummy ace after the king, agreed",
        "american-rummy", {"ace_high": True}, "JS QS KS", "JS QS KS AS", "AS", True, {},
        True, [], "",
    ),
    (
        # Borgen: "eine oder mehrere Karten seiner bereits herausgelegten Figuren zur Bildung
        # neuer Kombinationen mit Karten aus seinem Blatt zu verwenden"
        "american rummy Borgen from four sevens",
        "american-rummy", {}, "7S 7H 7D 7C", "7H 7D 7C | 7S 8S 9S", "8S 9S", True,
        {"borrowing": True, "own_melds": [0]}, True, [], "",
    ),
    (
        # "Man darf also von einem Drilling ... keine Karte 'borgen'"
        "american rummy Borgen from a Drilling",
        "american-rummy", {}, "7S 7H 7D", "7H 7D | 7S 8S 9S", "8S 9S", True,
        {"borrowing": True, "own_melds": [0]}, False, ["invalid_meld", "borrowing_not_allowed"],
        "",
    ),
    (
        # "seiner bereits herausgelegten Figuren": not another player's
        "american rummy Borgen from another player's meld",
        "american-rummy", {}, "7S 7H 7D 7C", "7H 7D 7C | 7S 8S 9S", "8S 9S", True,
        {"borrowing": True, "own_melds": []}, False, ["meld_split"], "",
    ),
    (
        # "Nach Übereinkommen": without the agreement nothing is borrowed
        "american rummy without Borgen",
        "american-rummy", {}, "7S 7H 7D 7C", "7H 7D 7C | 7S 8S 9S", "8S 9S", True, {},
        False, ["meld_split"], "",
    ),
    (
        "american rummy borrowed card back with table cards only",
        "american-rummy", {}, "7S 7H 7D 7C | 8S 9S 10S", "7H 7D 7C | 7S 8S 9S 10S", "", True,
        {"borrowing": True, "own_melds": [0, 1]}, False, ["borrowed_not_in_new_meld"], "",
    ),
    # --- [wiener] -------------------------------------------------------------------------
    (
        # "Rommé ohne Auslegen": nothing is laid out during play
        "wiener laying a meld",
        "wiener", {}, "", "5S 6S 7S", "5S 6S 7S", True, {}, False, ["no_laying_out"], "",
    ),
    (
        "wiener draw and discard",
        "wiener", {}, "", "", "", True, {"discard_taken": parse_item("5S")}, True, [], "",
    ),
    # --- several problems at once ---------------------------------------------------------
    (
        # the red 7 went back to the rack, the set lost it, the Joly was re-read as the blue
        # 8, the B7 was laid off before opening and the only new meld is no meld
        "remi several problems",
        "remi", {}, "B9 B10 JK | K7 B7 O7 R7", "B7 JK B9 B10 | K7 B7 O7 | R1 R2", "B7 R1 R2",
        False, {}, False,
        ["item_missing", "invalid_meld", "meld_split", "joker_meaning_changed",
         "laid_off_before_opening", "initial_too_low"],
        "",
    ),
    (
        # the joker became the 5, the deep 2C was not melded, the 3H came from nowhere
        "rum500 several problems",
        "rum500", {}, "6H 7H JK", "JK 6H 7H 8H | 3H 4H 5H", "8H 4H 5H", True,
        {"discard_taken": _discard("2C KS")},
        False, ["item_from_nowhere", "joker_meaning_changed", "discard_not_melded"], "",
    ),
]


@pytest.mark.parametrize(
    "variant_id, options, before, after, laid, opened, keywords, valid, codes, exchanged",
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_turn(
    variant_id: str,
    options: dict[str, Any],
    before: str,
    after: str,
    laid: str,
    opened: bool,
    keywords: dict[str, Any],
    valid: bool,
    codes: list[str],
    exchanged: str,
) -> None:
    result = _check(variant_id, options, before, after, laid, opened, **keywords)
    assert Counter(p.code for p in result.problems) == Counter(codes), result.problems
    assert result.valid is valid
    assert [str(t) for t in result.exchanged_jokers] == exchanged.split()
    for problem in result.problems:
        # every message names (some of) its items
        assert not problem.items or any(str(i) in problem.message for i in problem.items)
    # no text names a penalty draw; an invalid turn puts the table back
    assert result.penalty_draw == 0
    assert result.restored_table == (parse_melds(before) if before.strip() else ())


@pytest.mark.parametrize(
    "variant_id, options, after, laid, value",
    [
        # [remi] 10..13 count 10, 2..9 count 5, "Ein Joly hat den Wert des Steines, den er
        # ersetzt": 10 + 10 + 10 + 10 (joly as R13) + 15
        ("remi", {}, "R10 R11 R12 JK | K5 B5 O5", "R10 R11 R12 JK K5 B5 O5", 55),
        # [remi] "1 in einer Folge von ...-12-13-1 10 Punkte", "Jede 1 in einem Satz von
        # Einsen 25 Punkte"
        ("remi", {}, "R12 R13 R1 | K1 B1 O1", "R12 R13 R1 K1 B1 O1", 105),
        # [american] "die Spielsteine mit Zahlen ihrem jeweiligen Zahlenwert entsprechen"
        ("rummikub-american", {}, "R6 R7 R8", "R6 R7 R8", 21),
        # [rommee] Ass "bei der Erstmeldung in der Folge A-2-3 jedoch nur einen Punkt"
        ("rommee", {}, "AS 2S 3S | KH KD KC", "AS 2S 3S KH KD KC", 36),
    ],
)
def test_initial_value(
    variant_id: str, options: dict[str, Any], after: str, laid: str, value: int
) -> None:
    result = _check(variant_id, options, "", after, laid, opened=False)
    assert result.initial_value == value


def test_no_initial_value_once_opened_or_without_minimum() -> None:
    assert _check("remi", {}, "", "R6 R7 R8", "R6 R7 R8", opened=True).initial_value is None
    # 500 Rum and American Rummy have no initial meld
    assert _check("rum500", {}, "", "2C 3C 4C", "2C 3C 4C", opened=False).initial_value is None


def test_remi_problem_names_the_joly_meld() -> None:
    result = _check("remi", {}, "B9 B10 JK", "B7 JK B9 B10", "B7", opened=True)
    (problem,) = result.problems
    assert problem.items == parse_items("B7 JK B9 B10")


@pytest.mark.parametrize(
    "variant_id, keywords, match",
    [
        # [sabra] has no discard pile to take from
        ("sabra", {"discard_taken": parse_item("R5")}, "R5"),
        # Borgen is American Rummy's agreement
        ("rommee", {"borrowing": True}, "rommee"),
        ("american-rummy", {"borrowing": True, "own_melds": [3]}, "3"),
    ],
)
def test_bad_keywords_are_refused(
    variant_id: str, keywords: dict[str, Any], match: str
) -> None:
    with pytest.raises(TurnError, match=match):
        check_turn(find_variant(variant_id), (), (), (), opened=True, **keywords)


def test_rommee_has_the_dskv_option() -> None:
    assert find_variant("rommee").options.as_dict()["set_joker_exchange_needs_four"] is False
    strict = find_variant("rommee", {"set_joker_exchange_needs_four": "true"})
    assert strict.options.as_dict()["set_joker_exchange_needs_four"] is True


# --- property: extending runs at their ends ---------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["remi", "rummikub-american", "rummikub-international", "rommee", "rum500"]),
    st.integers(2, 9),
    st.integers(3, 4),
    st.integers(0, 3),
    st.integers(0, 2),
    st.integers(0, 2),
    st.booleans(),
)
def test_extending_a_run_at_its_ends(
    variant_id: str, start: int, length: int, suit: int, low: int, high: int, rebuild: bool
) -> None:
    """A run extended at its ends by laid items is a legal turn once opened; the same
    items with one table item moved to a new meld is not."""
    variant = find_variant(variant_id)
    family = variant.family
    run = [natural(family, r, suit) for r in range(start, start + length)]
    lows = [natural(family, r, suit) for r in range(start - low, start) if r >= 2]
    highs = [natural(family, r, suit) for r in range(start + length, start + length + high)
             if r <= 13]
    after = [*lows, *run, *highs]
    result = check_turn(variant, [run], [after], [*lows, *highs], opened=True)
    assert result.valid, result.problems
    if rebuild and len(after) >= 6:
        # the top three as a meld of their own: at most two of them were laid, so the
        # old run lost an item and is split
        split = check_turn(variant, [run], [after[:-3], after[-3:]], [*lows, *highs],
                           opened=True)
        assert "meld_split" in {p.code for p in split.problems}
