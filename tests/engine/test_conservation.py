"""Property tests: reading a meld or a table never loses or invents an item."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop.engine import VARIANTS, find_variant
from tabletop.engine.items import JOKER, Family, Item, Joker, all_naturals
from tabletop.engine.state import TableState

TILE_VARIANTS = [v for v, cls in VARIANTS.items() if cls.family is Family.TILES]
CARD_VARIANTS = [v for v, cls in VARIANTS.items() if cls.family is Family.CARDS]


def _items(family: Family) -> st.SearchStrategy[list[Item]]:
    naturals = list(all_naturals(family))
    return st.lists(st.one_of(st.sampled_from(naturals), st.just(JOKER)), min_size=1, max_size=8)


def _bare(item: Item) -> Item:
    return JOKER if isinstance(item, Joker) else item


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TILE_VARIANTS + CARD_VARIANTS), st.data())
def test_every_reading_keeps_the_items(variant_id: str, data: st.DataObject) -> None:
    variant = find_variant(variant_id)
    items = data.draw(_items(variant.family))
    analysis = variant.analyse(items)
    for reading in analysis.readings:
        resolved = reading.resolved_items()
        assert Counter(map(_bare, resolved)) == Counter(items)
        # every joker now says what it stands for, and it is of the game's material
        for item in resolved:
            if isinstance(item, Joker):
                assert item.stands_for is not None
                assert item.stands_for.family is variant.family
        assert variant.meld_value(reading) >= 0


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TILE_VARIANTS + CARD_VARIANTS), st.data())
def test_table_state_sees_every_item(variant_id: str, data: st.DataObject) -> None:
    variant = find_variant(variant_id)
    melds = data.draw(st.lists(_items(variant.family), min_size=1, max_size=5))
    state = TableState.from_melds(variant, melds)
    assert Counter(state.all_items()) == Counter(item for meld in melds for item in meld)
    # problems() never raises and reports invalid melds by index
    invalid = {p.meld for p in state.problems() if p.code == "invalid_meld"}
    assert invalid == {i for i, meld in enumerate(melds) if not variant.analyse(meld).valid}
