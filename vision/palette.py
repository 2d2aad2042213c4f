"""Tile colours decided against the players' own set: the table's palette.

A tile set has four inks, and every set has its own: one make's orange is
nearly red, another's blue is teal, an old set's black is olive.  A reader
trained on rendered sets names the colour of one tile against the inks it was
taught; here a tile's colour is also judged against the inks the other tiles
on the same table show, without training:

1. :func:`ink_features`: the ink of each tile, measured in CIE Lab relative to
   its own face (lightness as a percentage of the face's, a* and b* less the
   face's), so that the light's colour and brightness cancel out: a yellow
   lamp moves the face and the ink alike.  The ink is the larger of two
   colour groups of the central pixels most unlike the face (a mark or a
   neighbour's edge is the smaller).
2. :func:`group_inks`: the table's tiles grouped by ink (k-means with four
   groups), the least separated pair merged while closer than
   :data:`MERGE_SEPARATION` spreads, or :data:`SAME_READING_SEPARATION` where
   the reader reads both as one colour: as many inks as the table shows.
3. :func:`name_groups`: each group takes the colour the reader's probabilities
   of its tiles favour.  Where two plainly different inks take one colour
   (the reader calls a set's red-orange red, beside its red), the clashing
   groups get distinct colours among those no other group holds, by the
   reader's probabilities and an ink prior (:data:`INK_PRIOR`): the lighter,
   yellower "red" is the orange.
4. :meth:`TablePalette.update`: only the tiles of a renamed group change: their
   colour probabilities become a blend of the reader's and the table's
   (:data:`TABLE_WEIGHT`), each number as likely as the reader read it under
   any colour.

Tables with fewer than :data:`MIN_TILES` inked tiles, or one ink, are left as
the reader read them; so are card indices and jokers.

The players' own set's inks (:class:`SetInks`, learnt by ``tabletop adapt`` from
one layout photo) judge, on a table of any size, the tiles of the colours the reader
misread on that photo (:data:`SET_MISREAD_SHARE`).  The detector uses them by default
where a model folder has them, and the table's inks only with ``--palette on``: on
rendered sets the shipped reader already reads the palette families' inks, and both
the table's inks and the set's inks for every colour changed few tiles, more of them
for the worse than for the better (models/README.md, "Colours").
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.crops import crops
from tabletop.vision.labels import TILE_COLOURS, TILE_LABELS

INK_CROP = 40
"""Side in pixels of the crop an ink is measured in (the tile's box only, no context)."""
RIM_INSET = 0.12
"""Share of the box's width and height left out at each edge where the face colour is
measured: the tile's rim, bevel and the table behind a loose box."""
FACE_INSET = 0.28
"""The same where the ink is looked for: the middle of the face, where the numeral is,
and away from a tile turned within its box."""
INK_SHARE = 0.12
"""The share of a face's pixels taken as ink: those most unlike the face colour.  A
numeral covers 10-20 % of a tile's face."""
MIN_INK_CONTRAST = 20.0
"""Least colour difference (CIE76 Delta E) of a tile's ink from its face: less is no
numeral (a tile's back, a blank, a false box on the table)."""
MIN_TILES = 6
"""Fewest tiles with a measured ink for a table's palette: fewer tiles cannot show a
set's inks apart from each other."""
MERGE_SEPARATION = 2.5
"""Two groups are one ink when their centres lie within this many within-group spreads
(:func:`_separation`)."""
TABLE_WEIGHT = 0.7
"""The weight of the table's colour against the reader's (geometric blend)."""
COLOUR_FLOOR = 0.02
"""No colour's table probability falls below this: a tile that is alone of its colour on
the table may still be read as that colour when its reader is sure."""
SPREAD_FLOOR = 0.4
"""The least within-group spread (in :data:`FEATURE_SCALE` units, about 5 Lab units) a
separation is measured against: the noise of measuring one tile's ink."""
KMEANS_STARTS = 4
KMEANS_ITERATIONS = 30
FEATURE_SCALE = np.array([40.0, 12.0, 12.0])
"""Units of the three ink features (relative lightness x 100, a*, b*) before grouping:
about the difference that tells two inks apart.  Lightness counts less: shade and gloss
move one ink's lightness across a table more than its hue."""
SAME_READING_SEPARATION = 4.0
"""Two groups the reader reads as mostly the same colour are one ink unless they lie at
least this many spreads apart: a set's inks differ clearly, a shaded ink from itself
little."""

INK_PRIOR = np.array([
    [[22.2, 1.1, -5.1], [13.5, 4.8, 7.7]],
    [[41.0, 9.4, -42.6], [14.1, 15.1, 17.3]],
    [[75.8, 17.5, 42.2], [9.9, 14.8, 14.5]],
    [[45.9, 44.5, 15.4], [12.0, 12.4, 10.2]],
])
"""Per colour (TILE_COLOURS order): the mean and spread of its ink features (relative
lightness x 100, a*, b* less the face's) over the sets the renderer draws from its
training palette families and the tiles of ``shared/realdata/rummikub-tiles``
(``python -m bench.palette --prior``): what a black, blue, orange or red ink looks like
in general, to name a table's groups where its reader cannot tell them apart."""
MIN_GROUP_AGREEMENT = 0.8
"""The least share of a group's tiles the reader reads as the group's colour for the group
to be renamed: one ink read as one colour is a clash to resolve, a group read as a mix
of colours is two inks measured alike."""
MIN_RENAMED_GROUP = 2
"""The fewest tiles of a group the table renames: one tile apart from the others may be a
mark or a neighbour's edge measured as its ink."""
PRIOR_WEIGHT = 0.5
"""The weight of :data:`INK_PRIOR` per tile against the reader's log-probability."""

_COLOUR_ROWS = np.array([[TILE_LABELS.index(f"{colour}{number}") for number in range(1, 14)]
                         for colour in TILE_COLOURS])
"""Reader class indices of each colour's tiles: row c holds colour c's 1..13."""


def ink_features(image: npt.NDArray[np.uint8], boxes: Any, ink_inset: float = FACE_INSET
                 ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """(N, 3) ink features of each tile box and whether one was measured: lightness of
    the ink as a percentage of the face's, and its a* and b* less the face's.  A box
    with too few pixels unlike its face (a blank, a glare) has none.  ``ink_inset``: the
    margin of the window the ink is looked for in, as a share of the box's sides (a
    tile's numeral lies in its middle; a card index fills its box: :data:`RIM_INSET`)."""
    import cv2

    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    features = np.zeros((len(boxes), 3))
    measured = np.zeros(len(boxes), bool)
    if not len(boxes):
        return features, measured
    widths, heights = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    inner = boxes + np.stack([widths, heights, -widths, -heights], axis=1) * RIM_INSET
    # a square crop of the inner box's longer side; the stretch is undone below
    patches = crops(image, inner, INK_CROP, context=1.0)
    lab = cv2.cvtColor(patches.reshape(-1, INK_CROP, 3).astype(np.float32) / 255.0,
                       cv2.COLOR_BGR2LAB).reshape(len(boxes), INK_CROP, INK_CROP, 3)
    # the ink's window within the face's, as a share of the face's side
    centre = max(0.0, ink_inset - RIM_INSET) / (1 - 2 * RIM_INSET)
    for i in range(len(boxes)):
        sides = np.array([widths[i], heights[i]]) * (1 - 2 * RIM_INSET)
        cols, rows = np.maximum(4, np.round(INK_CROP * sides / max(sides.max(), 1e-9))
                                ).astype(int)
        top, left = (INK_CROP - rows) // 2, (INK_CROP - cols) // 2
        face_pixels = lab[i, top:top + rows, left:left + cols].astype(np.float64)
        light = face_pixels[..., 0].reshape(-1)
        low, high = np.quantile(light, (0.5, 0.9))
        face = np.median(face_pixels.reshape(-1, 3)[(light >= low) & (light <= high)], axis=0)
        dy, dx = round(rows * centre), round(cols * centre)
        pixels = face_pixels[dy:rows - dy, dx:cols - dx].reshape(-1, 3)
        contrast = np.linalg.norm(pixels - face, axis=1)
        ink = pixels[contrast >= float(np.quantile(contrast, 1 - INK_SHARE))]
        colour = _main_ink(ink)
        if np.linalg.norm(colour - face) < MIN_INK_CONTRAST or face[0] < 20.0:
            continue
        features[i] = (100.0 * colour[0] / face[0], colour[1] - face[1], colour[2] - face[2])
        measured[i] = True
    return features, measured


def _main_ink(ink: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The median Lab colour of the larger of two groups of a tile's ink pixels: the
    numeral's, where a mark or a neighbour's edge in another ink shows too."""
    if len(ink) < 8:
        return np.median(ink, axis=0)
    first = ink[np.argmax(np.linalg.norm(ink - ink.mean(axis=0), axis=1))]
    second = ink[np.argmax(np.linalg.norm(ink - first, axis=1))]
    for _ in range(8):
        nearer_first = (np.linalg.norm(ink - first, axis=1)
                        <= np.linalg.norm(ink - second, axis=1))
        if nearer_first.all() or not nearer_first.any():
            break
        first, second = ink[nearer_first].mean(axis=0), ink[~nearer_first].mean(axis=0)
    main = nearer_first if nearer_first.sum() * 2 >= len(ink) else ~nearer_first
    return np.median(ink[main], axis=0)  # type: ignore[no-any-return]


def _kmeans(points: npt.NDArray[np.float64], k: int, rng: np.random.Generator
            ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float]:
    """Lloyd's k-means from k-means++ starts: (groups, centres, within sum of squares)."""
    best: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float] | None = None
    for _ in range(KMEANS_STARTS):
        centres = points[[int(rng.integers(len(points)))]]
        while len(centres) < k:
            gaps = ((points[:, None] - centres[None]) ** 2).sum(-1).min(axis=1)
            weights = gaps / gaps.sum() if gaps.sum() > 0 else None
            centres = np.vstack([centres, points[rng.choice(len(points), p=weights)]])
        groups = np.zeros(len(points), np.int64)
        for _ in range(KMEANS_ITERATIONS):
            groups = ((points[:, None] - centres[None]) ** 2).sum(-1).argmin(axis=1)
            moved = np.array([points[groups == j].mean(axis=0) if (groups == j).any()
                              else centres[j] for j in range(k)])
            if np.allclose(moved, centres):
                break
            centres = moved
        spread = float(((points - centres[groups]) ** 2).sum())
        if best is None or spread < best[2]:
            best = (groups, centres, spread)
    assert best is not None
    return best


def _separation(points: npt.NDArray[np.float64], groups: npt.NDArray[np.int64],
                a: int, b: int) -> float:
    """How far apart groups ``a`` and ``b`` are in within-group spreads: the distance of
    their centres (medians) over the median distance of a tile from its own group's
    centre, pooled over the table's groups (a group of one or two tiles tells nothing of
    its spread; a stray tile should not widen every group), at least
    :data:`SPREAD_FLOOR`."""
    centres = np.stack([np.median(points[groups == g], axis=0)
                        for g in range(int(groups.max()) + 1)])
    spread = float(np.median(np.linalg.norm(points - centres[groups], axis=1)))
    return float(np.linalg.norm(centres[a] - centres[b])) / max(spread, SPREAD_FLOOR)


def group_inks(features: npt.NDArray[np.float64],
               colour_probabilities: npt.NDArray[np.float64] | None = None,
               seed: int = 0) -> npt.NDArray[np.int64]:
    """Group labels 0..k-1 (k <= 4) of the tiles' ink features: four k-means groups,
    merged pair by pair, the least separated first, while within
    :data:`MERGE_SEPARATION` spreads, or :data:`SAME_READING_SEPARATION` where the reader
    (``colour_probabilities``, (N, 4)) reads both groups as the same colour."""
    points = np.asarray(features, np.float64) / FEATURE_SCALE
    k = min(len(TILE_COLOURS), len(points))
    if k < 2:
        return np.zeros(len(points), np.int64)
    groups, _, _ = _kmeans(points, k, np.random.default_rng(seed))
    groups = np.unique(groups, return_inverse=True)[1]
    while groups.max() > 0:
        present = range(int(groups.max()) + 1)
        if colour_probabilities is None:
            reading = list(present)
        else:
            reading = [int(colour_probabilities[groups == g].sum(axis=0).argmax())
                       for g in present]
        pairs = [(_separation(points, groups, a, b)
                  / (SAME_READING_SEPARATION if reading[a] == reading[b] else MERGE_SEPARATION),
                  a, b) for a, b in itertools.combinations(present, 2)]
        closest, a, b = min(pairs)
        if closest >= 1.0:
            break
        groups[groups == b] = a
        groups = np.unique(groups, return_inverse=True)[1]
    return groups


def name_groups(groups: npt.NDArray[np.int64], colour_probabilities: npt.NDArray[np.float64],
                centres: npt.NDArray[np.float64] | None = None,
                prior_weight: float = PRIOR_WEIGHT) -> npt.NDArray[np.int64]:
    """The colour (index into TILE_COLOURS) of each group.  Each group takes the colour
    the reader's log-probabilities of its tiles favour most; where two or more groups,
    whose inks are plainly different (:func:`group_inks` kept them apart), take the same
    colour, those groups get distinct colours among those no other group holds: the
    assignment maximising the reader's log-probabilities plus, per tile,
    ``prior_weight`` times the log-likelihood of its group's ink (``centres``, (k, 3)
    features) under the colour's :data:`INK_PRIOR`.  Where the reader takes a set's
    orange for red, the lighter, yellower of the two "red" groups is the orange; groups
    the reader names apart keep their names.  A clashing group keeps the reader's
    colour all the same when it has fewer than :data:`MIN_RENAMED_GROUP` tiles."""
    count = int(groups.max()) + 1
    logs = np.log(np.clip(colour_probabilities, 1e-6, None))
    votes = np.stack([logs[groups == g].sum(axis=0) for g in range(count)])
    names = votes.argmax(axis=1)
    # a group the reader reads as two colours holds two inks the measure cannot tell
    # apart: it is not one ink to rename
    each = colour_probabilities.argmax(axis=1)
    agreeing = np.array([float((each[groups == g] == names[g]).mean()) for g in range(count)])
    clashing = [g for g in range(count) if (names == names[g]).sum() > 1
                and agreeing[g] >= MIN_GROUP_AGREEMENT]
    taken = {int(names[g]) for g in range(count) if g not in clashing}
    free = [c for c in range(len(TILE_COLOURS)) if c not in taken]
    if not clashing or len(clashing) > len(free):
        return names  # type: ignore[no-any-return]
    scores = votes.copy()
    if centres is not None and prior_weight > 0:
        sizes = np.bincount(groups, minlength=count).astype(np.float64)
        scores = scores + prior_weight * sizes[:, None] * ink_log_likelihood(centres)
    best_score, best = -np.inf, None
    for colours in itertools.permutations(free, len(clashing)):
        score = float(scores[clashing, list(colours)].sum())
        if score > best_score:
            best_score, best = score, colours
    assert best is not None
    renamed = names.copy()
    renamed[clashing] = best
    # a stray tile is no ink of its own
    members = np.bincount(groups, minlength=count)
    for g in clashing:
        if members[g] < MIN_RENAMED_GROUP:
            renamed[g] = names[g]
    return renamed  # type: ignore[no-any-return]


def ink_log_likelihood(features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(N, 4) log-likelihood of each ink feature row under each colour's
    :data:`INK_PRIOR` (independent normals)."""
    means, spreads = INK_PRIOR[:, 0], INK_PRIOR[:, 1]
    z = (np.asarray(features, np.float64)[:, None, :] - means[None]) / spreads[None]
    return -0.5 * (z ** 2).sum(axis=2) - np.log(spreads).sum(axis=1)[None]  # type: ignore[no-any-return]


def colour_marginals(probabilities: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(N, 4) probability of each colour (TILE_COLOURS order) from reader rows over the
    reader's classes, jokers and ``none`` left out, scaled to sum to 1."""
    by_colour = probabilities[:, _COLOUR_ROWS].sum(axis=2)
    return by_colour / np.maximum(by_colour.sum(axis=1, keepdims=True), 1e-12)  # type: ignore[no-any-return]


SET_SPREAD_FLOOR = np.array([6.0, 4.0, 4.0])
"""The least spread of a set's ink per feature (as :data:`FEATURE_SCALE`'s units in Lab):
a layout photo shows each ink on a few tiles only."""
SET_MAX_DISTANCE = 4.0
"""A tile's ink farther than this many spreads from every ink of the set is measured
wrongly (glare, a mark, a neighbour): the set's inks say nothing of it."""
SET_DECISIVE = 0.9
"""The least probability the set's inks give a tile's colour for it to count: an ink
measured between two of the set's inks says nothing."""
SET_MISREAD_SHARE = 0.75
"""The least share of a colour's tiles in the set's photos that the reader names another
colour for the set's inks to judge that colour.  Where the reader reads a colour's ink
itself, the inks measured on a table (rack shadows, a steep view, the light) mislead it
more often than they mend it, and where it misreads about half of them the light head
fitted on the same photos mends that; where it misreads nearly all, the head mends only
some and the inks the rest."""
SET_INKS_FILE = "palette.json"
"""The file beside an adapted model's finder (``NAME.palette.json``) holding its set's
inks (:class:`SetInks`)."""


@dataclass(frozen=True)
class SetInks:
    """The players' own set's four inks, from photos of it with labelled tiles (a layout
    photo): per colour (TILE_COLOURS order) the mean and spread of its tiles' ink
    features.  Colours the photos did not show are NaN and never chosen.  ``misread``:
    per colour the share of its tiles in the photos that the reader named another
    colour; the inks judge only tiles they place in a colour misread that often
    (:data:`SET_MISREAD_SHARE`), every tile where it is None."""

    means: npt.NDArray[np.float64]
    spreads: npt.NDArray[np.float64]
    tiles: tuple[int, ...]
    misread: tuple[float, ...] | None = None

    @property
    def judged(self) -> npt.NDArray[np.bool_]:
        """(4,) the colours whose tiles the inks judge."""
        if self.misread is None:
            return np.ones(len(TILE_COLOURS), bool)
        return np.asarray(self.misread) >= SET_MISREAD_SHARE

    @classmethod
    def fit(cls, features: npt.NDArray[np.float64], colours: Sequence[str],
            read_as: Sequence[str] | None = None) -> SetInks:
        """From the ink features of labelled tiles and their colours (K, B, O, R);
        ``read_as``: the colour the reader named each tile, for :attr:`misread`."""
        colours = list(colours)
        means = np.full((len(TILE_COLOURS), 3), np.nan)
        spreads = np.tile(SET_SPREAD_FLOOR, (len(TILE_COLOURS), 1)).astype(np.float64)
        counts = []
        for c, colour in enumerate(TILE_COLOURS):
            rows = np.asarray(features)[[k == colour for k in colours]]
            counts.append(len(rows))
            if len(rows):
                means[c] = np.median(rows, axis=0)
                if len(rows) > 2:
                    spreads[c] = np.maximum(SET_SPREAD_FLOOR, rows.std(axis=0))
        if sum(n > 0 for n in counts) < 2:
            raise ValueError("a set's inks need labelled tiles of two colours or more")
        misread = None
        if read_as is not None:
            if len(read_as) != len(colours):
                raise ValueError(f"{len(read_as)} colours read for {len(colours)} tiles")
            misread = tuple(
                round(sum(r != k for r, k in zip(read_as, colours, strict=True) if k == colour)
                      / max(1, count), 3)
                for colour, count in zip(TILE_COLOURS, counts, strict=True))
        return cls(means, spreads, tuple(counts), misread)

    def probabilities(self, features: npt.NDArray[np.float64]
                      ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        """(N, 4) each ink's colour by the set's inks, and whether it lies near enough
        any of them (:data:`SET_MAX_DISTANCE`) to say."""
        shown = ~np.isnan(self.means[:, 0])
        z = (np.asarray(features, np.float64)[:, None, :] - np.nan_to_num(self.means)[None]
             ) / self.spreads[None]
        distance = np.sqrt((z ** 2).sum(axis=2))
        distance[:, ~shown] = np.inf
        logs = -0.5 * distance ** 2 - np.log(self.spreads).sum(axis=1)[None]
        logs = logs - logs.max(axis=1, keepdims=True)
        chances = np.exp(logs)
        chances = np.clip(chances / chances.sum(axis=1, keepdims=True), COLOUR_FLOOR, None)
        chances /= chances.sum(axis=1, keepdims=True)
        return chances, distance.min(axis=1) <= SET_MAX_DISTANCE

    def to_json(self) -> dict[str, Any]:
        return {colour: None if np.isnan(self.means[c, 0]) else {
            "tiles": self.tiles[c], "mean": [round(float(v), 2) for v in self.means[c]],
            "spread": [round(float(v), 2) for v in self.spreads[c]],
            **({} if self.misread is None else {"misread": self.misread[c]})}
            for c, colour in enumerate(TILE_COLOURS)}

    @classmethod
    def from_json(cls, data: Any) -> SetInks:
        if not isinstance(data, dict) or set(data) != set(TILE_COLOURS):
            raise ValueError(f"a set's inks name the colours {', '.join(TILE_COLOURS)}")
        means = np.full((len(TILE_COLOURS), 3), np.nan)
        spreads = np.tile(SET_SPREAD_FLOOR, (len(TILE_COLOURS), 1)).astype(np.float64)
        tiles = []
        for c, colour in enumerate(TILE_COLOURS):
            entry = data[colour]
            if entry is None:
                tiles.append(0)
                continue
            means[c] = np.asarray(entry["mean"], np.float64).reshape(3)
            spreads[c] = np.maximum(SET_SPREAD_FLOOR,
                                    np.asarray(entry["spread"], np.float64).reshape(3))
            tiles.append(int(entry["tiles"]))
        shares = [0.0 if data[colour] is None else data[colour].get("misread")
                  for colour in TILE_COLOURS]
        # a file that does not say how the reader read the set lets the inks judge every tile
        misread = (None if any(share is None for share in shares)
                   else tuple(float(share) for share in shares))
        return cls(means, spreads, tuple(tiles), misread)


@dataclass(frozen=True)
class PaletteFit:
    """What :meth:`TablePalette.fit` found on one table: each tile's group (-1: no ink
    measured, or read as a joker or nothing), each group's colour (index into
    TILE_COLOURS), which tiles lie in a group the table names otherwise than the reader
    (``changed``) and their table colour probabilities (N, 4; zero rows elsewhere)."""

    groups: npt.NDArray[np.int64]
    colours: npt.NDArray[np.int64]
    table: npt.NDArray[np.float64]
    changed: npt.NDArray[np.bool_]


@dataclass
class TablePalette:
    """Re-weighs the reader's tile colours by the table's own inks: ``update(image,
    boxes, probabilities) -> probabilities``, rows over the reader's classes, only the
    rows ``tiles`` marks changed."""

    weight: float = TABLE_WEIGHT
    min_tiles: int = MIN_TILES
    set_inks: SetInks | None = None
    """The players' own set's inks (``tabletop adapt``): each tile's colour is then also
    judged against them, on a table of any size."""
    use_table: bool = True
    """Whether colours are judged against the inks of the table's other tiles too."""

    def fit(self, features: npt.NDArray[np.float64], measured: npt.NDArray[np.bool_],
            probabilities: npt.NDArray[np.float64]) -> PaletteFit | None:
        """Group the tiles' inks (:func:`ink_features`) and name the groups; None where the
        table shows too few tiles, or a single ink."""
        coloured = colour_marginals(probabilities)
        # a tile the reader takes for a joker or for nothing says little of a colour
        weights = probabilities[:, _COLOUR_ROWS].sum(axis=(1, 2))
        usable = measured & (weights >= 0.5)
        if usable.sum() < self.min_tiles:
            return None
        groups = group_inks(features[usable], coloured[usable])
        if groups.max() == 0:
            return None
        inks = np.stack([features[usable][groups == g].mean(axis=0)
                         for g in range(int(groups.max()) + 1)])
        colours = name_groups(groups, coloured[usable], inks)
        all_groups = np.full(len(features), -1, np.int64)
        all_groups[usable] = groups
        # a tile's table colour is its group's; only groups the reader named otherwise
        # have anything to say
        reader_names = np.array([np.log(np.clip(coloured[usable][groups == g], 1e-6, None))
                                 .sum(axis=0).argmax() for g in range(len(colours))])
        renamed = np.flatnonzero(colours != reader_names)
        table = np.zeros((len(features), len(TILE_COLOURS)))
        changed = np.isin(all_groups, renamed)
        table[changed] = COLOUR_FLOOR
        table[changed, colours[all_groups[changed]]] = 1.0
        table[changed] /= table[changed].sum(axis=1, keepdims=True)
        return PaletteFit(all_groups, colours, table, changed)

    def update(self, image: npt.NDArray[np.uint8], boxes: Any,
               probabilities: npt.NDArray[np.float64],
               tiles: Sequence[bool] | npt.NDArray[np.bool_] | None = None
               ) -> npt.NDArray[np.float64]:
        """The reader's probabilities with tile colours judged against the inks
        (:meth:`update_inks`), the inks measured in ``image`` in each tile's box."""
        probabilities = np.asarray(probabilities, np.float64)
        rows = (np.ones(len(probabilities), bool) if tiles is None
                else np.asarray(tiles, bool))
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        features = np.zeros((len(probabilities), 3))
        measured = np.zeros(len(probabilities), bool)
        if rows.any() and (self.set_inks is not None
                           or (self.use_table and rows.sum() >= self.min_tiles)):
            features[rows], measured[rows] = ink_features(image, boxes[rows])
        return self.update_inks(features, measured, probabilities, rows)

    def update_inks(self, features: npt.NDArray[np.float64], measured: npt.NDArray[np.bool_],
                    probabilities: npt.NDArray[np.float64],
                    tiles: Sequence[bool] | npt.NDArray[np.bool_] | None = None
                    ) -> npt.NDArray[np.float64]:
        """The reader's probabilities (rows over the reader's classes) with each tile's
        colour judged against the set's inks where they are known, then against the
        table's; ``features``, ``measured``: each row's ink (:func:`ink_features`).  Rows
        not marked in ``tiles`` (card indices) and tiles without a measured ink are
        returned as they were."""
        probabilities = np.asarray(probabilities, np.float64)
        rows = (np.ones(len(probabilities), bool) if tiles is None
                else np.asarray(tiles, bool))
        out = probabilities.copy()
        if self.set_inks is not None and rows.any():
            chances, near = self.set_inks.probabilities(features[rows])
            decisive = chances.max(axis=1) >= SET_DECISIVE
            judged = self.set_inks.judged[chances.argmax(axis=1)]
            out[rows] = blend(out[rows], chances, measured[rows] & near & decisive & judged,
                              self.weight)
        if not self.use_table or rows.sum() < self.min_tiles:
            return out
        fit = self.fit(features[rows], measured[rows], out[rows])
        if fit is None:
            return out
        out[np.flatnonzero(rows)] = blend(out[rows], fit.table, fit.changed, self.weight)
        return out


def blend(probabilities: npt.NDArray[np.float64], table: npt.NDArray[np.float64],
          measured: npt.NDArray[np.bool_], weight: float) -> npt.NDArray[np.float64]:
    """Rows over the reader's classes whose coloured tiles' colour marginal becomes
    reader^(1-weight) x table^weight (renormalised) and whose numbers follow the reader's
    number marginal under every colour, the coloured tiles' total mass unchanged (jokers
    and ``none`` keep theirs).  The reader's numbers under a colour it gave almost nothing
    are noise; its number over all colours is what it read."""
    out = probabilities.copy()
    grid = probabilities[:, _COLOUR_ROWS]  # (N, 4, 13)
    mass = grid.sum(axis=(1, 2))
    reader = colour_marginals(probabilities)
    wanted = (np.clip(reader, 1e-9, None) ** (1 - weight)
              * np.clip(table, 1e-9, None) ** weight)
    wanted /= wanted.sum(axis=1, keepdims=True)
    numbers = grid.sum(axis=1)
    numbers /= np.maximum(numbers.sum(axis=1, keepdims=True), 1e-12)
    regrid = wanted[:, :, None] * numbers[:, None, :] * mass[:, None, None]
    for r in np.flatnonzero(measured & (mass > 0)):
        out[r, _COLOUR_ROWS] = regrid[r]
    return out
