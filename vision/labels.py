"""The detector's vocabulary: contract tokens (CONTRACT.md) and YOLO class ids.

A tile joker and a card joker share the token ``JK``; the ``kind`` tells
them apart, so the class list holds two joker classes.  Class ids are fixed
here once and for all: a trained model's ``names`` must equal
:data:`CLASS_NAMES`, or the adapter refuses it.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["tile", "card"]
KINDS: tuple[Kind, ...] = ("tile", "card")

TILE_COLOURS = ("K", "B", "O", "R")
"""black, blue, orange (yellow in Romanian sets), red."""
CARD_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
CARD_SUITS = ("S", "H", "D", "C")
JOKER = "JK"

TILE_LABELS: tuple[str, ...] = (
    *(f"{colour}{number}" for colour in TILE_COLOURS for number in range(1, 14)),
    JOKER,
)
CARD_LABELS: tuple[str, ...] = (
    *(f"{rank}{suit}" for suit in CARD_SUITS for rank in CARD_RANKS),
    JOKER,
)
LABELS_BY_KIND: dict[Kind, frozenset[str]] = {
    "tile": frozenset(TILE_LABELS),
    "card": frozenset(CARD_LABELS),
}

CARD_JOKER_CLASS = "JK.card"
"""The class name of the card joker (the tile joker's class name is ``JK``)."""

CLASS_NAMES: tuple[str, ...] = (
    *TILE_LABELS,
    *(CARD_JOKER_CLASS if label == JOKER else label for label in CARD_LABELS),
)
_CLASS_IDS: dict[tuple[str, Kind], int] = {
    **{(label, "tile"): index for index, label in enumerate(TILE_LABELS)},
    **{(label, "card"): len(TILE_LABELS) + index for index, label in enumerate(CARD_LABELS)},
}


class LabelError(ValueError):
    """A label that is no contract token of its kind."""


def normalise_label(label: str, kind: str) -> str:
    """The upper-case contract token, or LabelError quoting the input."""
    if kind not in LABELS_BY_KIND:
        raise LabelError(f"kind must be 'tile' or 'card', not {kind!r}")
    token = label.strip().upper()
    if token not in LABELS_BY_KIND[kind]:
        raise LabelError(f"{label!r} is not a {kind} token (CONTRACT.md)")
    return token


def class_id(label: str, kind: str) -> int:
    """The YOLO class id of a (label, kind) pair."""
    token = normalise_label(label, kind)
    return _CLASS_IDS[(token, kind)]  # type: ignore[index]


def label_of(class_index: int) -> tuple[str, Kind]:
    """(label, kind) of a YOLO class id."""
    if not 0 <= class_index < len(CLASS_NAMES):
        raise LabelError(f"class id {class_index!r} is outside 0..{len(CLASS_NAMES) - 1}")
    if class_index < len(TILE_LABELS):
        return TILE_LABELS[class_index], "tile"
    return CARD_LABELS[class_index - len(TILE_LABELS)], "card"


def kind_of(label: str) -> Kind:
    """The kind of a token that is not ``JK`` (a joker's kind cannot be told)."""
    token = label.strip().upper()
    if token == JOKER:
        raise LabelError("'JK' is both a tile and a card: give the kind")
    for kind in KINDS:
        if token in LABELS_BY_KIND[kind]:
            return kind
    raise LabelError(f"{label!r} is not a tile or card token (CONTRACT.md)")
