"""Rules engine for tile and card rummy variants.  No I/O, no vision imports."""

from tabletop.engine.items import (
    JOKER,
    Card,
    Color,
    Family,
    Item,
    Joker,
    NotationError,
    Suit,
    Tile,
    format_items,
    format_melds,
    parse_item,
    parse_items,
    parse_melds,
)
from tabletop.engine.melds import MeldAnalysis, MeldKind, Reading, Slot
from tabletop.engine.variants import (
    VARIANTS,
    OptionError,
    Variant,
    VariantError,
    find_variant,
)

__all__ = [
    "JOKER",
    "VARIANTS",
    "Card",
    "Color",
    "Family",
    "Item",
    "Joker",
    "MeldAnalysis",
    "MeldKind",
    "NotationError",
    "OptionError",
    "Reading",
    "Slot",
    "Suit",
    "Tile",
    "Variant",
    "VariantError",
    "find_variant",
    "format_items",
    "format_melds",
    "parse_item",
    "parse_items",
    "parse_melds",
]
