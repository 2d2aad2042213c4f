"""Card game replays composed from real photos of a deck: Rommé melds on a real table.

    replay = compose_random_card_game(("Ana", "Ben"), seed=3)   # a random Rommé game
    replay.write("out/")                  # video.mp4, truth.jsonl, zones.json

The composer, camera, hands, timing and truth files are those of
:mod:`tabletop.studio.replay`; what differs:

* **The cards** (:func:`load_card_bank`).  ``<realdata>/bridge-cards`` labels the
  corner indices (rank over suit) of fanned cards, not whole cards, so each card is a
  blank card of the photos' deck proportions (``CARD_ASPECT``, a bridge card's 57 x 88
  mm) whose corner indices are one real labelled index: cut along its box with a margin
  (``INDEX_MARGIN``), turned upright where the box lies sideways (a quarter turn one way
  or the other, by the crop's place in the photo: a camera sees cards from every side),
  scaled to ``INDEX_SHARE`` of the card's height (as in the photos), faded into the
  card's paper (its colour read from the cut's bright pixels), top left and, turned half
  round, bottom right.  An index lying at a slant in its photo (its box squarer than
  ``MAX_INDEX_ASPECT``) or mostly under other index boxes is left out.  Centre pips and
  court figures are not drawn: what the figures measure is how the pipeline finds and
  reads real indices at a table's distance.
* **Melds overlap**: each card lies ``CARD_PITCH`` of a card's width after the one before,
  its left strip and index showing; the last card shows whole, both its indices.
* **The distance** (:func:`card_settings`): cards ``CARD_HEIGHT_SHARE`` of the frame's
  height tall (125 pixels at 720: a 90 cm table in view), their indices about 26 pixels
  long.
* **The games** (:func:`random_card_script`): a plausible game of a card variant
  (default Rommé with laying out), seats taking turns: new runs of 3-5 cards of one suit
  (the ace low, A-2-3, or high, Q-K-A) and sets of 3-4 suits of one rank, or a meld
  grown at an end; a player's first move opens with the variant's minimum (Rommé's 40,
  one or two melds); two decks, so at most two of a card; no jokers (the photos show
  none) and no hands laid open (cards are held).  Every meld is legal by
  ``engine.variants``.  With a discard pile (``pile="squared"`` or ``"fanned"``) each
  move ends with a discard instead of the end-turn button, and with chance 0.3 the
  player first takes the top discard, in a step of its own.

No model was trained or chosen on the photos of ``bridge-cards``.  Where a model is
adapted to the deck, :data:`CARD_SPLIT` says which photo it may be adapted on (``adapt``)
and which one the replays it is measured on are made of (``measure``);
:func:`compose_deck_layout` lays the deck out in order from one part's cards, as a
player's layout photo for ``tabletop adapt --layout``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.studio.replay import (
    Box,
    Crop,
    CropBank,
    Image,
    LabelledPhotos,
    Replay,
    ReplayError,
    ReplaySettings,
    ReplayStep,
    _meld_ok,
    compose,
    grown_table,
    layout_problem,
    require_realdata,
)
from tabletop.vision.labels import JOKER

CARDS_FOLDER = "bridge-cards"
CARD_ASPECT = 57 / 88
"""A bridge card's width over its height (the photos' deck)."""
INDEX_SHARE = 0.21
"""An index's long side over its card's height, as the photos show it (an index box ~47
pixels long on cards ~220 pixels tall)."""
INDEX_MARGIN = 0.12
"""Cut around an index box, as a share of its size on each side, faded into the paper."""
MAX_INDEX_ASPECT = 0.76
"""The squarest box kept (short side over long): an index square to the camera is
0.45-0.7; one lying at 40 degrees or more fills its box's corners with its neighbours."""
CARD_PITCH = 0.3
"""In a meld, each card lies this share of a card's width after the one before."""
CARD_HEIGHT_SHARE = 125 / 720
"""A card's height over the frame's: 125 pixels at 720, a 90 cm table in view."""
FACE_HEIGHT = 360
"""The drawn card's height in pixels, before the replay scales it to the table."""
SUITS = ("S", "H", "D", "C")
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
"""A run's ranks in order, the ace at both ends (A-2-3 and Q-K-A)."""
CARD_COPIES = 2
ROOM_BEFORE, ROOM_AFTER = 1, 2
"""What the composer keeps room for at a meld's ends (see studio.replay)."""


PILES = (None, "squared", "fanned")
"""How a random game's discard pile lies (None: no discards, the end-turn button)."""


CARD_SPLIT = {"adapt": ("deal1",), "measure": ("deal2",)}
"""The fixed split of the ``bridge-cards`` photos for adapting and measuring."""


def card_photos(part: str) -> tuple[str, ...] | None:
    """The photos of ``part`` of :data:`CARD_SPLIT`, or None for ``all``."""
    if part == "all":
        return None
    if part in CARD_SPLIT:
        return CARD_SPLIT[part]
    raise ReplayError(f"card photos are 'adapt', 'measure' or 'all', not {part!r}")


def card_settings(size: tuple[int, int] = (1280, 720), *, fps: float = 10.0, seed: int = 0,
                  card_height: float | None = None, base: ReplaySettings | None = None
                  ) -> ReplaySettings:
    """Replay settings for cards ``card_height`` pixels tall at the table's near edge
    (None: ``CARD_HEIGHT_SHARE`` of the frame's height, the distance of the module's
    docstring)."""
    width, height = size
    if card_height is not None and not 20 <= card_height <= height / 2:
        raise ReplayError(f"cards are 20 to {height // 2} pixels tall in a frame {height} "
                          f"high, not {card_height:g}")
    return replace(base or ReplaySettings(), width=width, height=height, fps=fps, seed=seed,
                   tile_height=card_height or CARD_HEIGHT_SHARE * height,
                   tile_aspect=CARD_ASPECT, gap=CARD_PITCH - 1.0)


PAPER_LEVEL = 228.0
"""The card's paper after white balance: the photos were taken in a dim, blue light."""


def _paper(patch: Image) -> npt.NDArray[np.float32]:
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    bright = patch[grey >= np.percentile(grey, 60)]
    return np.median(bright, axis=0).astype(np.float32)


def _white_balanced(patch: Image) -> npt.NDArray[np.float32]:
    """``patch`` with per-channel gains that make its paper neutral at ``PAPER_LEVEL``, as
    a camera's white balance would."""
    gains = PAPER_LEVEL / np.maximum(_paper(patch), 1.0)
    return np.asarray(patch, np.float32) * gains


INDEX_CENTRE = 0.12
"""An index cut's centre lies this share of the card's width from its left edge."""
INDEX_TOP = 0.04
"""An index cut's paper begins this share of the card's height below its top edge."""


def _cut_origin(width: float, height: float, cut_w: float, cut_h: float
                ) -> tuple[float, float]:
    """Where an index cut ``cut_w`` x ``cut_h`` (margin included) begins on an upright card
    ``width`` x ``height``: the top left corner's one; the bottom right's is turned half
    round."""
    return (max(0.0, INDEX_CENTRE * width - cut_w / 2),
            max(0.0, INDEX_TOP * height - INDEX_MARGIN * cut_h / 2))


def card_face(index: Image, height: int = FACE_HEIGHT) -> Image:
    """A blank card ``height`` pixels tall with ``index`` (an upright cut, margin included)
    in its top left corner and, turned half round, its bottom right."""
    width = round(height * CARD_ASPECT)
    balanced = _white_balanced(index)
    paper = np.full(3, PAPER_LEVEL, np.float32)
    face = np.empty((height, width, 3), np.float32)
    face[:] = paper
    cv2.rectangle(face, (0, 0), (width - 1, height - 1), (paper * 0.78).tolist(), 2)
    long_side = INDEX_SHARE * height * (1 + 2 * INDEX_MARGIN)
    scale = long_side / index.shape[0]
    w, h = max(2, round(index.shape[1] * scale)), max(2, round(long_side))
    cut = cv2.resize(balanced, (w, h), interpolation=cv2.INTER_CUBIC)
    # the margin fades out towards the cut's edge: no seam where the photo's paper meets
    ramp = max(1.0, INDEX_MARGIN * h)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    edge = np.minimum(np.minimum(xs + 0.5, w - 0.5 - xs), np.minimum(ys + 0.5, h - 0.5 - ys))
    alpha = np.clip(edge / ramp, 0.0, 1.0)[..., None]
    x0, y0 = (round(v) for v in _cut_origin(width, height, w, h))
    w, h = min(w, width - x0), min(h, height - y0)
    for turned in (False, True):
        piece = cut[:h, :w] if not turned else cut[:h, :w][::-1, ::-1]
        a = alpha[:h, :w] if not turned else alpha[:h, :w][::-1, ::-1]
        ya, xa = (y0, x0) if not turned else (height - y0 - h, width - x0 - w)
        roi = face[ya:ya + h, xa:xa + w]
        roi[:] = roi * (1 - a) + piece * a
    return np.clip(face + 0.5, 0, 255).astype(np.uint8)


def load_card_bank(realdata: str | Path | None = None, *,
                   use_images: Iterable[str] | None = None, holdout: Iterable[str] = (),
                   max_covered: float = 0.25) -> CropBank:
    """Cards drawn round the labelled indices of ``<realdata>/bridge-cards`` (see the
    module's docstring), by label; ``use_images`` / ``holdout`` as
    :meth:`CropBank.load` takes them."""
    photos = LabelledPhotos(require_realdata(realdata) / CARDS_FOLDER, "card", use_images,
                            holdout)
    crops: list[Crop] = []
    dropped: dict[str, set[str]] = {}
    for name, image, i, label, (x1, y1, x2, y2), covered in photos.boxes():
        bw, bh = x2 - x1, y2 - y1
        if covered > max_covered or min(bw, bh) / max(bw, bh, 1e-6) > MAX_INDEX_ASPECT:
            dropped.setdefault(label, set()).add(name)
            continue
        mx, my = INDEX_MARGIN * bw, INDEX_MARGIN * bh
        piece = image[max(0, round(y1 - my)):round(y2 + my),
                      max(0, round(x1 - mx)):round(x2 + mx)]
        if piece.size == 0:
            continue
        wide = bw > bh
        if wide:
            piece = cv2.rotate(piece, cv2.ROTATE_90_CLOCKWISE if i % 2 == 0
                               else cv2.ROTATE_90_COUNTERCLOCKWISE)
        crops.append(Crop(label, card_face(np.ascontiguousarray(piece)), name,
                          (x1, y1, x2, y2), round(covered, 3), wide))
    return CropBank(crops, photos.names, sorted(photos.used),
                    {k: sorted(v) for k, v in dropped.items()}, photos.where)


def index_aspect(crop: Crop) -> float:
    """The short side over the long side of ``crop``'s index box in its photo."""
    x1, y1, x2, y2 = crop.box
    return min(x2 - x1, y2 - y1) / max(x2 - x1, y2 - y1, 1e-6)


def index_boxes(card: Box, aspect: float = 0.5) -> tuple[Box, Box]:
    """The two index boxes (top left, bottom right) of a card drawn upright on the image
    box ``card``, as :func:`card_face` lays them; ``aspect``: its index's
    (:func:`index_aspect`; about 0.5 where the card is not known)."""
    x, y, x2, y2 = card
    width, height = x2 - x, y2 - y
    long_side = INDEX_SHARE * height
    short_side = long_side * aspect
    cut_left, cut_top = _cut_origin(width, height, short_side * (1 + 2 * INDEX_MARGIN),
                                    long_side * (1 + 2 * INDEX_MARGIN))
    left, top = cut_left + INDEX_MARGIN * short_side, cut_top + INDEX_MARGIN * long_side
    return ((x + left, y + top, x + left + short_side, y + top + long_side),
            (x2 - left - short_side, y2 - top - long_side, x2 - left, y2 - top))


def compose_deck_layout(bank: CropBank, rng: np.random.Generator, card_height: int = 150
                        ) -> tuple[Image, list[dict[str, Any]]]:
    """The deck laid out as ``tabletop adapt --layout`` wants it (``studio.adapt``'s
    ``CARD_ORDER``: rows of A..K of spades, hearts, diamonds, clubs, no jokers), each card
    upright and apart on a plain table, from ``bank``'s cards; and the index boxes of the
    cards laid, labelled (both corners of each card).  A card ``bank`` lacks leaves its
    place empty."""
    from tabletop.studio.adapt import CARD_ORDER

    rows = [row for row in CARD_ORDER if JOKER not in row]
    width = round(card_height * CARD_ASPECT)
    columns = max(len(row) for row in rows)
    image = np.full((len(rows) * (card_height + 40) + 40, columns * (width + 25) + 40, 3),
                    (60, 95, 130), np.float32)
    image += rng.normal(0, 5, image.shape).astype(np.float32)
    labelled: list[dict[str, Any]] = []
    for r, row in enumerate(rows):
        for c, label in enumerate(row):
            crops = bank.of(label)
            if not crops:
                continue
            crop = crops[int(rng.integers(len(crops)))]
            x, y = 30 + c * (width + 25), 30 + r * (card_height + 40)
            image[y:y + card_height, x:x + width] = cv2.resize(
                crop.image, (width, card_height), interpolation=cv2.INTER_AREA)
            labelled.extend({"label": label, "kind": "card", "box": [round(v, 1) for v in box]}
                            for box in index_boxes((x, y, x + width, y + card_height),
                                                   index_aspect(crop)))
    return np.clip(image + 0.5, 0, 255).astype(np.uint8), labelled


@dataclass(frozen=True)
class _CardMeld:
    tokens: tuple[str, ...]
    suit: str | None
    """A run's suit (None: a set)."""
    low: int
    """A run's first position in ``RANKS`` (0-13), or a set's rank position."""
    before: int = 0
    after: int = 0


def random_card_script(rng: np.random.Generator, players: int = 2, *,
                       variant: str = "rommee", labels: Iterable[str] | None = None,
                       steps: tuple[int, int] = (4, 8), extend: float = 0.35,
                       fits: Callable[[Sequence[ReplayStep]], bool] | None = None,
                       discards: bool = False, take: float = 0.3,
                       ) -> list[ReplayStep]:
    """A plausible game of the card ``variant`` of ``steps[0]``..``steps[1]`` moves (see
    the module's docstring); only ``labels`` are laid; ``fits`` as
    :func:`tabletop.studio.replay.random_sabra_script` takes it.  ``discards``: each
    move ends with a discard on the pile instead of the end-turn button, and a player
    takes the top discard first with chance ``take`` (a step of its own: the hand takes
    it and leaves before the player lays; never the card just taken laid back)."""
    from tabletop.engine.items import Family, parse_items
    from tabletop.engine.variants import find_variant

    rules = find_variant(variant)
    if rules.family is not Family.CARDS:
        raise ReplayError(f"{variant!r} is not played with cards")
    lowest, highest = steps
    if not 1 <= lowest <= highest:
        raise ReplayError(f"steps must be a range like (4, 8), not {steps!r}")
    if players < 2:
        raise ReplayError(f"a game needs two or more players, not {players}")
    allowed = {str(x).upper() for x in labels} if labels is not None else None
    total = int(rng.integers(lowest, highest + 1))
    table: list[_CardMeld] = []
    counts: Counter[str] = Counter()
    opened: set[int] = set()
    out: list[ReplayStep] = []

    def free(tokens: Sequence[str]) -> bool:
        need = Counter(tokens)
        return all((allowed is None or t in allowed) and counts[t] + k <= CARD_COPIES
                   for t, k in need.items())

    def new_meld() -> _CardMeld:
        if rng.random() < 0.55:
            suit = SUITS[int(rng.integers(4))]
            length = int(rng.choice([3, 4, 5], p=[0.5, 0.3, 0.2]))
            low = int(rng.integers(0, len(RANKS) - length + 1))
            tokens = tuple(f"{RANKS[k]}{suit}" for k in range(low, low + length))
            return _CardMeld(tokens, suit, low)
        rank = int(rng.integers(0, 13))
        size = 3 if rng.random() < 0.7 else 4
        suits = [SUITS[int(i)] for i in rng.permutation(4)[:size]]
        return _CardMeld(tuple(f"{RANKS[rank]}{s}" for s in suits), None, rank)

    def grown() -> tuple[int, _CardMeld] | None:
        index = int(rng.integers(len(table)))
        meld = table[index]
        ends: list[tuple[str, str]] = []
        if meld.suit is not None:
            last = meld.low + len(meld.tokens) - 1
            if last + 1 < len(RANKS) and meld.after < ROOM_AFTER:
                ends.append(("after", f"{RANKS[last + 1]}{meld.suit}"))
            if meld.low > 0 and meld.before < ROOM_BEFORE:
                ends.append(("before", f"{RANKS[meld.low - 1]}{meld.suit}"))
        elif len(meld.tokens) < 4:
            there = {t[-1] for t in meld.tokens}
            ends.extend(("after", f"{RANKS[meld.low]}{s}") for s in SUITS if s not in there)
        if not ends:
            return None
        side, token = ends[int(rng.integers(len(ends)))]
        if side == "after":
            return index, replace(meld, tokens=(*meld.tokens, token), after=meld.after + 1)
        return index, replace(meld, tokens=(token, *meld.tokens), low=meld.low - 1,
                              before=meld.before + 1)

    pile: list[str] = []
    labels_laid = sorted(allowed) if allowed is not None else [
        f"{rank}{suit}" for rank in RANKS[:13] for suit in SUITS]

    def step_of(melds: Sequence[_CardMeld], seat: int, discard: str | None = None
                ) -> ReplayStep:
        if discard is None:
            return ReplayStep(tuple(m.tokens for m in melds), seat=seat,
                              presses=("end_turn",))
        return ReplayStep(tuple(m.tokens for m in melds), seat=seat,
                          discards=(*pile, discard))

    def a_discard(added: Sequence[str], not_this: str | None) -> str | None:
        need = Counter(added)
        free_cards = [t for t in labels_laid
                      if t != not_this and counts[t] + need[t] + 1 <= CARD_COPIES]
        return free_cards[int(rng.integers(len(free_cards)))] if free_cards else None

    def legal(meld: _CardMeld) -> bool:
        return _meld_ok(meld.tokens, rules) and not any(
            sorted(m.tokens) == sorted(meld.tokens) for m in table)

    def meets(melds: Sequence[_CardMeld]) -> bool:
        return bool(rules.check_initial_meld(
            [parse_items(list(m.tokens)) for m in melds]).meets)

    for k in range(total):
        seat = k % players
        took: str | None = None
        if discards and pile and rng.random() < take:
            taking = ReplayStep(tuple(m.tokens for m in table), seat=seat,
                                discards=tuple(pile[:-1]))
            if fits is None or fits([*out, taking]):
                took = pile.pop()  # into the hand: still counted against the two decks
                out.append(taking)
        chosen: tuple[list[_CardMeld], list[str], str | None] | None = None
        for attempt in range(300):
            if seat in opened and table and (rng.random() < extend or attempt >= 150):
                change = grown()
                if change is None:
                    continue
                added, melds = grown_table(table, *change)
                if not free(added) or not _meld_ok(change[1].tokens, rules):
                    continue
            else:
                laid = [new_meld()]
                if not free(laid[0].tokens) or not legal(laid[0]):
                    continue
                if (seat not in opened and rules.initial_meld_required > 0
                        and not meets(laid)):
                    # an opening of two melds, as players often lay it
                    second = new_meld()
                    if (not free([*laid[0].tokens, *second.tokens]) or not legal(second)
                            or sorted(second.tokens) == sorted(laid[0].tokens)
                            or not meets([*laid, second])):
                        continue
                    laid.append(second)
                added = [t for m in laid for t in m.tokens]
                melds = [*table, *laid]
            discard = a_discard(added, took) if discards else None
            if discards and discard is None:
                continue
            if fits is not None and not fits([*out, step_of(melds, seat, discard)]):
                continue
            chosen = (melds, added, discard)
            break
        if chosen is None:
            break  # nothing fits any more: the game ends here
        table, added, discard = chosen
        counts.update(added)
        opened.add(seat)
        out.append(step_of(table, seat, discard))
        if discard is not None:
            counts[discard] += 1
            pile.append(discard)
    return out


def random_card_game(seed: int, players: int = 2, *, bank: CropBank, variant: str = "rommee",
                     settings: ReplaySettings | None = None, **options: Any
                     ) -> list[ReplayStep]:
    """The random card game of ``seed`` with cards ``bank`` has, every step checked to lay
    out as :func:`compose` lays it with ``settings`` (its seed replaced by ``seed``)."""
    s = replace(settings or card_settings(), seed=seed)
    labels = [label for label, n in bank.labels().items() if n]

    def fits(steps: Sequence[ReplayStep]) -> bool:
        return layout_problem(steps, players, s, bank, variant) is None

    return random_card_script(np.random.default_rng([seed, 13]), players, variant=variant,
                              labels=labels, fits=fits, **options)


def compose_random_card_game(players: Sequence[str] = ("Ana", "Ben"),
                             out: str | Path | None = None, *, seed: int = 0,
                             variant: str = "rommee", realdata: str | Path | None = None,
                             size: tuple[int, int] = (1280, 720), fps: float = 10.0,
                             use_images: Iterable[str] | None = None,
                             holdout: Iterable[str] = (),
                             background: str | Path | Image | None = None,
                             settings: ReplaySettings | None = None,
                             bank: CropBank | None = None, card_height: float | None = None,
                             pile: str | None = None, **options: Any) -> Replay:
    """The random card game of ``seed`` composed with real indices (see the module's
    docstring), written to ``out`` when given.  ``settings``: the camera and timing (noise,
    tilt, hands); the cards' size (``card_height``) and spacing are
    :func:`card_settings`'.  ``pile``: None, the players end their turns with the button;
    ``squared`` or ``fanned``, with a discard on the pile laid so (see
    :func:`random_card_script`)."""
    if pile not in PILES:
        raise ReplayError(f"a discard pile is {' or '.join(p for p in PILES if p)}, "
                          f"not {pile!r}")
    s = card_settings(size, fps=fps, seed=seed, card_height=card_height, base=settings)
    if pile is not None:
        s = replace(s, squared_pile=pile == "squared")
        options = {"discards": True, **options}
    if bank is None:
        bank = load_card_bank(realdata, use_images=use_images, holdout=holdout)
    steps = random_card_game(seed, len(players), bank=bank, variant=variant, settings=s,
                             **options)
    if not steps:
        raise ReplayError(f"no card game of seed {seed} lays out at {size[0]}x{size[1]}")
    replay = compose(steps, players=players, variant=variant, settings=s, realdata=realdata,
                     bank=bank, background=background)
    if out is not None:
        replay.write(out)
    return replay
