"""A card index's suit colour from its ink: red or black, from the pixels, without training.

A reader trained on rendered decks learns the red of those decks; a real deck's red,
photographed small and dim, is darker, and the reader can then take a heart for a club
(``KH`` read ``KC``): a mistake the rules cannot catch, since a run of clubs is as legal
as one of hearts.  The ink itself is plain, whatever the deck: measured in CIE Lab
relative to the card around it (:func:`tabletop.vision.palette.ink_features` over the
whole index box), a red index's ink has a chroma of 25 to 70 at a red to orange hue, a
black one's under 10, on rendered decks and on real photos alike.

:func:`suit_inks` says for each index whether its ink is plainly red, plainly black or
neither (too little ink, a colour in between, or a four-colour deck's blue or green:
those are left to the reader), and :func:`judge_suit_colours` scales the probabilities
of the other colour's cards by :data:`OTHER_COLOUR_WEIGHT`.  Jokers and ``none`` keep
theirs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.labels import CARD_LABELS, JOKER, TILE_LABELS
from tabletop.vision.palette import RIM_INSET, ink_features

RED_CHROMA = 18.0
"""The least chroma (a*, b* less the card's) of a red index's ink: rendered red indices
measure 24 or more in nine of ten, real ones (bridge-cards' deal1) 41 or more."""
RED_HUES = (-5.0, 75.0)
"""The hue angles (degrees, atan2(b*, a*)) of red inks, crimson to the orange of some
four-colour decks' diamonds (a red suit too); real and rendered reds measure 15-40.  A
purple cast (a red card back over a black index) is not red ink."""
LEAST_SIZE = 11.0
"""The least size (pixels, the square root of the box's area) of an index box whose ink
is judged: a smaller one's few pixels are blurred into the card around them, and a red
turns grey.  An index 19 pixels long (a card 90 pixels tall) measures about 14."""
BLACK_CHROMA = 8.0
"""The most chroma of a black index's ink (rendered: nine in ten under 10; real: under 6).
A dark red in dim light can measure 9."""
BLACK_LIGHTNESS = 75.0
"""The most lightness of a black index's ink, as a percentage of its card's (a pale
smudge is not a black index; the thin strokes of an index 14-20 pixels long, blurred,
measure 55-65)."""
OTHER_COLOUR_WEIGHT = 0.05
"""What the probabilities of the other colour's cards are multiplied by: a reader sure
of a club by more than twenty to one against the heart still reads the club."""

RED = 1
BLACK = -1
UNDECIDED = 0

_RED_CLASSES = np.array([len(TILE_LABELS) + i for i, label in enumerate(CARD_LABELS)
                         if label != JOKER and label[-1] in "HD"])
_RANKS = sorted({label[:-1] for label in CARD_LABELS if label != JOKER})
_SPADE_CLASSES = np.array([len(TILE_LABELS) + CARD_LABELS.index(rank + "S") for rank in _RANKS])
_CLUB_CLASSES = np.array([len(TILE_LABELS) + CARD_LABELS.index(rank + "C") for rank in _RANKS])
_BLACK_CLASSES = np.array([len(TILE_LABELS) + i for i, label in enumerate(CARD_LABELS)
                           if label != JOKER and label[-1] in "SC"])


def suit_inks(image: npt.NDArray[np.uint8], boxes: Any) -> npt.NDArray[np.int8]:
    """For each card-index box, :data:`RED`, :data:`BLACK` or :data:`UNDECIDED`."""
    features, measured = ink_features(image, boxes, ink_inset=RIM_INSET)
    lightness, a, b = features[:, 0], features[:, 1], features[:, 2]
    chroma = np.hypot(a, b)
    hue = np.degrees(np.arctan2(b, a))
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    sizes = np.sqrt(np.clip(boxes[:, 2] - boxes[:, 0], 0, None)
                    * np.clip(boxes[:, 3] - boxes[:, 1], 0, None))
    measured &= sizes >= LEAST_SIZE
    red = measured & (chroma >= RED_CHROMA) & (hue >= RED_HUES[0]) & (hue <= RED_HUES[1])
    black = measured & (chroma <= BLACK_CHROMA) & (lightness <= BLACK_LIGHTNESS)
    return np.where(red, RED, np.where(black, BLACK, UNDECIDED)).astype(np.int8)


def judge_suit_colours(probabilities: npt.NDArray[np.float64], inks: npt.NDArray[np.int8]
                       ) -> npt.NDArray[np.float64]:
    """Reader ``probabilities`` (rows over the reader's classes) of card indices with the
    other colour's cards scaled down where the ink is decided, each row summing to 1."""
    judged = np.array(probabilities, np.float64, copy=True)
    if not len(judged):
        return judged
    rows = np.flatnonzero(inks == RED)
    judged[np.ix_(rows, _BLACK_CLASSES)] *= OTHER_COLOUR_WEIGHT
    rows = np.flatnonzero(inks == BLACK)
    judged[np.ix_(rows, _RED_CLASSES)] *= OTHER_COLOUR_WEIGHT
    totals = judged.sum(axis=1, keepdims=True)
    normalised: npt.NDArray[np.float64] = np.divide(
        judged, totals, out=np.array(probabilities, np.float64, copy=True), where=totals > 0)
    return normalised



def weigh_spades(probabilities: npt.NDArray[np.float64], odds: float
                 ) -> npt.NDArray[np.float64]:
    """Reader ``probabilities`` (rows over the reader's classes) of card indices with each
    rank's spade-to-club odds multiplied by ``odds``: the probability of the rank's spade
    and club together is shared out again, so no other label gains or loses (see
    :data:`tabletop.vision.detector.DEFAULT_SPADE_ODDS`)."""
    weighed = np.array(probabilities, np.float64, copy=True)
    if not len(weighed) or odds == 1.0:
        return weighed
    spades, clubs = weighed[:, _SPADE_CLASSES], weighed[:, _CLUB_CLASSES]
    together = spades + clubs
    weighted_spades = spades * odds
    share = np.divide(weighted_spades, weighted_spades + clubs,
                      out=np.zeros_like(together), where=together > 0)
    weighed[:, _SPADE_CLASSES] = together * share
    weighed[:, _CLUB_CLASSES] = together * (1.0 - share)
    return weighed
