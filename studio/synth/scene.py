"""A whole table photo: surface, tiles and cards laid out, hands, camera and light.

Items are laid out on a flat *table plane*; a homography then takes the plane
to the camera image (a camera looking down at an angle), and light, blur,
noise and JPEG are applied in the image.  Every labelled item keeps its exact
outline through these steps, so its box is known, and an id map of the plane
tells how much of it is still in sight after everything drawn over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.studio.synth.cards import (
    CardRender,
    DeckDesign,
    random_design,
    render_back,
    render_card,
)
from tabletop.studio.synth.textures import table_surface
from tabletop.studio.synth.tiles import TileRender, TileStyle, random_style, render_tile
from tabletop.vision.detections import Detections
from tabletop.vision.labels import (
    CARD_LABELS,
    CARD_RANKS,
    CARD_SUITS,
    JOKER,
    TILE_COLOURS,
    TILE_LABELS,
    Kind,
)

Image = npt.NDArray[np.float32]
SCENE_KINDS = ("tiles", "cards", "mixed")
TILE_MIN_VISIBLE = 0.6
"""A tile less than this much in sight (under others, a hand, the frame) gets no box."""
INDEX_MIN_VISIBLE = 0.8
"""A card index needs nearly all of itself in sight to be read."""
MIN_BOX_SIDE = 5.0
TILE_HEIGHT = (0.07, 0.19)
"""Tile height as a share of the frame's height: a camera over the whole table."""
CLOSE_UP_TILE_HEIGHT = (0.19, 0.34)
"""... and for a camera held close over a rack or one meld (a phone, a low webcam)."""
CLOSE_UP_SHARE = 0.25
"""The share of scenes seen close up: tiles, cards, or both at one camera distance."""
STEEP_SHARE = 0.25
"""The share of scenes seen at a steep angle, the table's far side much wider."""
GRID_SHARE = 0.2
"""The share of tile scenes with a block of tiles laid in close rows (:func:`_tile_grid`)."""
SIDE_SHARE = 0.5
"""The share of steep scenes seen from the table's side: the far side at the picture's
left or right, each item squeezed across and smaller towards it (a phone held at the
table's corner)."""
CARD_HEIGHT = (0.16, 0.45)
"""Card height as a share of the frame's height from a camera over the whole table."""
CLOSE_UP_CARD_HEIGHT = (0.42, 0.75)
"""... and close up, over one hand or meld: a card is about 2.2 tile heights (89 mm
against 40 mm), so close-up cards stand to close-up tiles as far ones to far ones."""


@dataclass(frozen=True)
class RenderOptions:
    """Switches for tests and ablations; the defaults make realistic photos."""

    perspective: bool = True
    effects: bool = True  # light, shadows, glare, blur, noise
    occluders: bool = True  # hands
    surface: str | None = None  # force one surface kind
    jpeg: bool = True
    palettes: tuple[str, ...] | None = None
    """The tile sets' ink palette families (``tiles.PALETTES``); None: the training
    families (``tiles.TRAINING_PALETTES``)."""
    tile_style: TileStyle | None = None
    """One tile set for the scene's tiles (a player's own set seen on several tables);
    None: a set drawn for the scene.  The scene's other draws are the same either way."""
    deck: DeckDesign | None = None
    """One deck for the scene's cards (a player's own deck seen on several tables); None:
    a deck drawn for the scene.  The scene's other draws are the same either way."""
    side_views: bool = True
    """Steep scenes also seen from the table's side (:data:`SIDE_SHARE`); False: the far
    side always at the top."""
    tile_grids: bool = True
    """Some tile scenes with a block of tiles in close rows (:data:`GRID_SHARE`)."""


@dataclass(frozen=True)
class SceneItem:
    """One labelled thing in the scene, kept or not, for checks and debugging."""

    label: str
    kind: str
    polygon: npt.NDArray[np.float64]  # outline in image pixels
    visible: float  # share in sight (not under something drawn later)
    kept: bool
    up: npt.NDArray[np.float64] | None = None  # tiles: unit vector from mark towards numeral
    on_rack: bool = False  # a tile standing on a rack, its face seen at a slant
    in_grid: bool = False  # a tile of a block laid in close rows


@dataclass(frozen=True)
class Scene:
    image: npt.NDArray[np.uint8]  # BGR, as decoded from ``encoded``
    encoded: bytes  # the JPEG (or PNG) file
    detections: Detections
    items: tuple[SceneItem, ...] = field(default=())
    far_side: str = "top"
    """Where the table's far side is in the picture: ``top``, or ``left`` / ``right`` for
    a steep view from the table's side (:data:`SIDE_SHARE`)."""


@dataclass
class _Entity:
    entity_id: int
    label: str
    kind: str
    polygon: npt.NDArray[np.float64]  # plane coordinates
    region_id: int  # id painted in the id map
    total: int = 0  # pixels painted at first (tiles); card indices use their polygon
    up: npt.NDArray[np.float64] | None = None
    on_rack: bool = False
    in_grid: bool = False


def _blur(image: npt.NDArray[np.float32], sigma: float) -> npt.NDArray[np.float32]:
    """A Gaussian blur; wide ones are done small and enlarged (the result is smooth anyway)."""
    if sigma <= 6:
        return cv2.GaussianBlur(image, (0, 0), sigma)
    factor = int(sigma / 3)
    h, w = image.shape[:2]
    small = cv2.resize(image, (max(1, w // factor), max(1, h // factor)),
                       interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma / factor)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


class _Plane:
    def __init__(self, image: Image) -> None:
        self.image = image
        self.ids = np.zeros(image.shape[:2], np.int32)
        self.entities: list[_Entity] = []
        self.next_id = 1

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def paste(self, img: Image, alpha: npt.NDArray[np.float32], matrix: npt.NDArray[np.float64],
              region_id: int, rng: np.random.Generator, shadow: float = 0.35,
              side: tuple[tuple[float, float], tuple[float, float, float]] | None = None) -> int:
        """Draw a premultiplied item through the 2x3 ``matrix``; returns pixels painted."""
        h, w = alpha.shape
        corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
        placed = corners @ matrix[:, :2].T + matrix[:, 2]
        margin = 4 + int(0.15 * max(w, h))
        x0 = max(0, int(np.floor(placed[:, 0].min())) - margin)
        y0 = max(0, int(np.floor(placed[:, 1].min())) - margin)
        x1 = min(self.image.shape[1], int(np.ceil(placed[:, 0].max())) + margin)
        y1 = min(self.image.shape[0], int(np.ceil(placed[:, 1].max())) + margin)
        if x0 >= x1 or y0 >= y1:
            return 0
        local = matrix.copy()
        local[:, 2] -= (x0, y0)
        size = (x1 - x0, y1 - y0)
        a = cv2.warpAffine(alpha, local, size, flags=cv2.INTER_LINEAR)
        roi = self.image[y0:y1, x0:x1]
        if shadow > 0:
            offset = rng.normal(0, 0.04, 2) * max(w, h)
            shifted = np.float64([[1, 0, offset[0]], [0, 1, offset[1] + 0.03 * max(w, h)]])
            soft = cv2.warpAffine(a, shifted, size)
            soft = cv2.GaussianBlur(soft, (0, 0), 1.0 + 0.05 * max(w, h))
            roi *= (1 - shadow * soft)[..., None]
        if side is not None:
            (dx, dy), colour = side
            shifted = np.float64([[1, 0, dx], [0, 1, dy]])
            rim = cv2.warpAffine(a, shifted, size)
            roi *= (1 - rim)[..., None]
            roi += rim[..., None] * np.asarray(colour, np.float32)
        warped = cv2.warpAffine(img, local, size, flags=cv2.INTER_LINEAR)
        roi *= (1 - a)[..., None]
        roi += warped
        painted = a > 0.5
        self.ids[y0:y1, x0:x1][painted] = region_id
        return int(painted.sum())

    def occlude(self, mask: npt.NDArray[np.float32], colour: Image) -> None:
        """Something unlabelled on top (a hand): painted and marked in the id map as -1."""
        self.image *= (1 - mask)[..., None]
        self.image += mask[..., None] * colour
        self.ids[mask > 0.5] = -1

    def visible_share(self, entity: _Entity) -> float:
        if entity.kind == "tile":
            x0, y0 = np.floor(entity.polygon.min(axis=0)).astype(int) - 2
            x1, y1 = np.ceil(entity.polygon.max(axis=0)).astype(int) + 2
            x0, y0 = max(x0, 0), max(y0, 0)
            now = int((self.ids[y0:y1, x0:x1] == entity.region_id).sum())
            return now / max(1, entity.total)
        # a card index: the share of its polygon where its card is still on top
        x0, y0 = np.floor(entity.polygon.min(axis=0)).astype(int)
        x1, y1 = np.ceil(entity.polygon.max(axis=0)).astype(int) + 1
        x0c, y0c = max(x0, 0), max(y0, 0)
        x1c, y1c = min(x1, self.ids.shape[1]), min(y1, self.ids.shape[0])
        if x0c >= x1c or y0c >= y1c:
            return 0.0
        poly_mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillPoly(poly_mask, [np.round(entity.polygon - (x0, y0)).astype(np.int32)], 1)
        total = int(poly_mask.sum())
        poly_mask = poly_mask[y0c - y0 : y1c - y0, x0c - x0 : x1c - x0]
        now = int(((self.ids[y0c:y1c, x0c:x1c] == entity.region_id) & (poly_mask > 0)).sum())
        return now / max(1, total)


def _affine(width: float, height: float, angle_deg: float, scale: float,
            center: tuple[float, float], pivot: tuple[float, float] | None = None
            ) -> npt.NDArray[np.float64]:
    """Item pixels -> plane: turn by ``angle_deg`` (counter-clockwise on screen) about
    ``pivot`` (default the item's middle) and put the pivot at ``center``."""
    px, py = pivot if pivot is not None else (width / 2, height / 2)
    m = cv2.getRotationMatrix2D((px, py), angle_deg, scale)
    m[:, 2] += np.array(center) - np.array([px, py])
    return m


def _apply(matrix: npt.NDArray[np.float64], points: npt.NDArray[np.float64]
           ) -> npt.NDArray[np.float64]:
    return points @ matrix[:, :2].T + matrix[:, 2]


# --- layouts ---------------------------------------------------------------------
def _random_tile_label(rng: np.random.Generator) -> str:
    if rng.random() < 0.04:
        return "JK"
    return TILE_LABELS[int(rng.integers(0, len(TILE_LABELS) - 1))]


def random_card_label(rng: np.random.Generator) -> str:
    """A card label, the joker 3 times in 100."""
    if rng.random() < 0.03:
        return "JK"
    return CARD_LABELS[int(rng.integers(0, len(CARD_LABELS) - 1))]


def _place_tile(plane: _Plane, tile: TileRender, label: str, matrix: npt.NDArray[np.float64],
                rng: np.random.Generator, thickness: tuple[float, float],
                side_colour: tuple[float, float, float], in_grid: bool = False) -> None:
    region = plane.new_id()
    painted = plane.paste(tile.image, tile.alpha, matrix, region, rng,
                          shadow=float(rng.uniform(0.2, 0.45)), side=(thickness, side_colour))
    if not label:
        return
    polygon = _apply(matrix, tile.outline)
    nx = (tile.numeral_box[0] + tile.numeral_box[2]) / 2
    ny = (tile.numeral_box[1] + tile.numeral_box[3]) / 2
    h = tile.alpha.shape[0]
    ends = _apply(matrix, np.array([[nx, ny], [nx, ny - h * 0.3]]))
    up = ends[1] - ends[0]
    plane.entities.append(_Entity(region, label, "tile", polygon, region, painted,
                                  up / (np.linalg.norm(up) + 1e-9), in_grid=in_grid))


RACK_FACE_SHARE = (0.3, 1.0)
"""A tile standing on a rack shows its face at a slant: its height on the table plane
as a share of its real height (1 when the camera looks straight at the face)."""


def _rack(plane: _Plane, rng: np.random.Generator, centre: tuple[float, float], th: float,
          tw: float, style: TileStyle) -> None:
    """A rack with one or two tiers of standing tiles: each face foreshortened by the
    slant it is seen at, its top edge showing above it, the rack's lip hiding its foot.
    A tile's box is the face above the lip (what a person boxes in a photo)."""
    cx, cy = centre
    n = int(rng.integers(6, 16))
    angle = rng.normal(0, 4)
    rad = np.deg2rad(-angle)
    slant = rng.uniform(*RACK_FACE_SHARE)
    face_h = th * slant
    gap = tw * rng.uniform(0.0, 0.08)
    length = n * (tw + gap) + tw * 0.6
    tiers = 2 if rng.random() < 0.35 else 1
    lip_share = rng.uniform(0.04, 0.25)
    top_band = th * rng.uniform(0.08, 0.22) * float(np.sqrt(max(0.0, 1 - slant**2)) + 0.15)
    colour = np.asarray(rng.choice([(30, 30, 30), (40, 70, 110), (200, 200, 200), (60, 40, 30),
                                    (20, 90, 40), (150, 40, 40)]), np.float32)
    colour = colour * rng.uniform(0.8, 1.2)
    body_h = tiers * (face_h + top_band) + face_h * 0.35
    body = np.ones((max(2, int(body_h)), max(2, int(length)), 3), np.float32) * colour
    body[: max(1, int(body_h * 0.1))] *= 1.25  # the back's edge catches the light
    body_alpha = np.ones(body.shape[:2], np.float32)
    # the body's bottom lines up with the lowest tier's foot
    along = np.array([np.cos(rad), np.sin(rad)])
    down = np.array([-np.sin(rad), np.cos(rad)])
    foot = np.array([cx, cy])
    body_centre = foot - down * (body_h / 2 - face_h * 0.1)
    plane.paste(body * body_alpha[..., None], body_alpha,
                _affine(body.shape[1], body.shape[0], angle, 1.0, tuple(body_centre)), -1, rng,
                shadow=0.5)
    for tier in range(tiers):
        # the upper tier stands behind and above the lower one
        tier_foot = foot - down * tier * (face_h + top_band + face_h * 0.05)
        for i in range(n):
            if rng.random() < 0.1:
                continue  # a gap in the row
            label = _random_tile_label(rng)
            tile = render_tile(label, style, round(th))
            h, w = tile.alpha.shape
            x = -length / 2 + tw * 0.3 + i * (tw + gap) + tw / 2
            bottom = tier_foot + along * x
            # tile pixels -> plane: squeeze the height by the slant about the foot, turn
            squeeze = np.array([[1, 0, -w / 2], [0, slant, -h * slant]], np.float64)
            turn = np.array([[along[0], down[0], bottom[0]], [along[1], down[1], bottom[1]]],
                            np.float64)
            matrix = turn[:, :2] @ squeeze
            matrix[:, 2] += turn[:, 2]
            top = (-down * top_band).tolist()
            region = plane.new_id()
            painted = plane.paste(tile.image, tile.alpha, matrix, region, rng, shadow=0.2,
                                  side=((float(top[0]), float(top[1])), style.side))
            if not label:
                continue
            lip = h * (1 - lip_share)
            outline = tile.outline.copy()
            outline[:, 1] = np.minimum(outline[:, 1], lip)
            nx = (tile.numeral_box[0] + tile.numeral_box[2]) / 2
            ny = (tile.numeral_box[1] + tile.numeral_box[3]) / 2
            ends = _apply(matrix, np.array([[nx, ny], [nx, ny - h * 0.3]]))
            up = ends[1] - ends[0]
            plane.entities.append(_Entity(region, label, "tile", _apply(matrix, outline), region,
                                          painted, up / (np.linalg.norm(up) + 1e-9),
                                          on_rack=True))
        # the tier's lip in front of the tiles' feet (unlabelled, drawn over them)
        lip_h = max(2, int(face_h * lip_share + th * 0.06))
        lip_img = np.ones((lip_h, max(2, int(length)), 3), np.float32) * colour * 1.1
        lip_alpha = np.ones(lip_img.shape[:2], np.float32)
        lip_centre = tier_foot - down * (face_h * lip_share - lip_h / 2)
        plane.paste(lip_img * lip_alpha[..., None], lip_alpha,
                    _affine(lip_img.shape[1], lip_h, angle, 1.0, tuple(lip_centre)), -1, rng,
                    shadow=0.3)


def _tile_grid(plane: _Plane, rng: np.random.Generator, sample_point: _Sampler,
               style: TileStyle, th: float, thickness: tuple[float, float]) -> None:
    """Rows of tiles close above one another: a set laid out in order for its layout
    photo, or melds kept in rows; neighbours touch or nearly, across and up and down."""
    rows, n = int(rng.integers(2, 6)), int(rng.integers(4, 14))
    tw = th * style.aspect
    pitch_x = tw * (1 + rng.uniform(0.0, 0.08))
    pitch_y = th * (1 + rng.uniform(0.0, 0.15))
    angle = float(rng.normal(0, 5))
    if rng.random() >= 0.8:  # laid square to another side of the table
        angle += 90.0 * int(rng.integers(1, 4))
    rad = np.deg2rad(-angle)
    along, down = np.array([np.cos(rad), np.sin(rad)]), np.array([-np.sin(rad), np.cos(rad)])
    centre = np.asarray(sample_point(rng.uniform(0.25, 0.75), rng.uniform(0.25, 0.75)))
    for r in range(rows):
        for i in range(n):
            if rng.random() < 0.06:
                continue
            label = _random_tile_label(rng)
            tile = render_tile(label, style, round(th))
            at = (centre + along * (i - (n - 1) / 2) * pitch_x
                  + down * (r - (rows - 1) / 2) * pitch_y)
            _place_tile(plane, tile, label,
                        _affine(tile.alpha.shape[1], round(th), angle + rng.normal(0, 1.0), 1.0,
                                (float(at[0]), float(at[1]))),
                        rng, thickness, style.side, in_grid=True)


def _tile_layout(plane: _Plane, rng: np.random.Generator, sample_point: _Sampler,
                 base_height: float, thickness: tuple[float, float], amount: float,
                 palettes: tuple[str, ...] | None = None,
                 tile_style: TileStyle | None = None,
                 grid_rng: np.random.Generator | None = None) -> None:
    style = random_style(rng, palettes=palettes)
    if tile_style is not None:
        style = tile_style
    th = round(base_height)
    tw = th * style.aspect
    side = style.side
    # racks near the camera (the bottom of the picture), tiles standing on them
    racks = int(rng.random() < 0.45 * amount) + int(rng.random() < 0.15 * amount)
    for r in range(racks):
        _rack(plane, rng, sample_point(0.5, 0.8 - 0.35 * r + rng.uniform(0, 0.12)), th, tw,
              style)
    # melds laid out on the table
    for _ in range(int(rng.integers(1, 7) * amount + 0.5)):
        n = int(rng.integers(3, 7))
        cx, cy = sample_point(rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.85))
        angle = rng.normal(0, 12) if rng.random() < 0.55 else rng.uniform(-180, 180)
        gap = tw * (rng.uniform(0.0, 0.06) if rng.random() < 0.8 else rng.uniform(0.1, 0.5))
        rad = np.deg2rad(-angle)
        for i in range(n):
            label = _random_tile_label(rng)
            tile = render_tile(label, style, th)
            along = (i - (n - 1) / 2) * (tw + gap)
            centre = (cx + along * np.cos(rad), cy + along * np.sin(rad))
            jitter = rng.normal(0, 1.5)
            _place_tile(plane, tile, label,
                        _affine(tile.alpha.shape[1], th, angle + jitter, 1.0, centre),
                        rng, thickness, side)
    if grid_rng is not None and grid_rng.random() < GRID_SHARE * amount:
        _tile_grid(plane, grid_rng, sample_point, style, th, thickness)
    # loose tiles, some face down, some on top of others
    for _ in range(int(rng.integers(0, 12) * amount)):
        label = "" if rng.random() < 0.2 else _random_tile_label(rng)
        tile = render_tile(label, style, th)
        centre = sample_point(rng.uniform(0.02, 0.98), rng.uniform(0.02, 0.98))
        _place_tile(plane, tile, label,
                    _affine(tile.alpha.shape[1], th, rng.uniform(-180, 180), 1.0, centre),
                    rng, thickness, side)


def _place_card(plane: _Plane, card: CardRender, label: str, matrix: npt.NDArray[np.float64],
                rng: np.random.Generator) -> None:
    region = plane.new_id()
    plane.paste(card.image, card.alpha, matrix, region, rng, shadow=float(rng.uniform(0.15, 0.35)),
                side=((0.0, 1.0), (150.0, 150.0, 150.0)))
    for corners in card.indices:
        plane.entities.append(_Entity(region, label, "card", _apply(matrix, corners), region))


def square_to_a_side(rng: np.random.Generator, spread: float, any_turn: float = 0.0) -> float:
    """An angle for cards laid by a player on one of the table's four sides: a quarter
    turn (the camera's own side most often) give or take ``spread`` degrees, or with
    chance ``any_turn`` any angle.  Melds and dealt rows lie square to the edges, so
    their index boxes are tall or wide, seldom the near-squares of arbitrary turns."""
    if any_turn and rng.random() < any_turn:
        return float(rng.uniform(-180, 180))
    quarter = int(rng.choice(4, p=(0.4, 0.2, 0.2, 0.2)))
    return float(90 * quarter + rng.normal(0, spread))


def _card_layout(plane: _Plane, rng: np.random.Generator, sample_point: _Sampler,
                 base_height: float, amount: float, deck: DeckDesign | None = None) -> None:
    design = random_design(rng, beside=True)  # drawn either way: the other draws stay
    if deck is not None:
        design = deck
    ch = round(base_height)
    for _ in range(int(rng.integers(1, 4) * amount + 0.5)):
        style = rng.random()
        cx, cy = sample_point(rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9))
        if style < 0.45:  # a fanned hand: cards turned about a point below them
            n = int(rng.integers(4, 13))
            step = -rng.uniform(5, 13)
            start = rng.uniform(-180, 180)
            for i in range(n):
                label = random_card_label(rng)
                card = render_card(label, design, ch)
                w = card.alpha.shape[1]
                angle = start + step * (i - (n - 1) / 2)
                m = _affine(w, ch, angle, 1.0, (cx, cy), pivot=(w / 2, ch * rng.uniform(1.0, 1.4)))
                _place_card(plane, card, label, m, rng)
        else:  # a meld or a row: each card shifted along its width or its height
            n = int(rng.integers(3, 9))
            angle = square_to_a_side(rng, 6, any_turn=0.25)
            along_width = rng.random() < 0.6
            shift = rng.uniform(0.17, 0.45) if along_width else rng.uniform(0.14, 0.35)
            for i in range(n):
                label = random_card_label(rng)
                card = render_card(label, design, ch)
                w = card.alpha.shape[1]
                d = (i - (n - 1) / 2) * shift * (w if along_width else ch)
                rad = np.deg2rad(-angle)
                vec = (np.cos(rad), np.sin(rad)) if along_width else (-np.sin(rad), np.cos(rad))
                centre = (cx + d * vec[0], cy + d * vec[1])
                m = _affine(w, ch, angle + rng.normal(0, 1.5), 1.0, centre)
                _place_card(plane, card, label, m, rng)
    for _ in range(int(rng.integers(0, 4) * amount)):
        face_down = rng.random() < 0.4
        label = random_card_label(rng)
        card = render_back(design, ch) if face_down else render_card(label, design, ch)
        angle = square_to_a_side(rng, 10, any_turn=0.5)
        m = _affine(card.alpha.shape[1], ch, angle, 1.0,
                    sample_point(rng.uniform(0, 1), rng.uniform(0, 1)))
        _place_card(plane, card, "" if face_down else label, m, rng)


def _hand(plane: _Plane, rng: np.random.Generator, sample_point: _Sampler, size: float) -> None:
    """A hand reaching in: a palm, four or five fingers, an arm to the edge."""
    h, w = plane.image.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    cx, cy = sample_point(rng.uniform(0.05, 0.95), rng.uniform(0.3, 1.0))
    angle = rng.uniform(0, 2 * np.pi)
    direction = np.array([np.cos(angle), np.sin(angle)])
    normal = np.array([-direction[1], direction[0]])
    palm = size * rng.uniform(0.5, 0.65)
    c = np.array([cx, cy])
    cv2.ellipse(mask, (int(cx), int(cy)), (int(palm * 1.1), int(palm * 0.95)),
                float(np.degrees(angle)), 0, 360, 1, -1)
    arm_end = c - direction * size * 6
    cv2.line(mask, (int(cx), int(cy)), (int(arm_end[0]), int(arm_end[1])), 1,
             int(palm * 1.6))
    for k in range(int(rng.integers(4, 6))):
        spread = (k - 1.5) * 0.42 * palm
        base = c + direction * palm * 0.7 + normal * spread
        bend = rng.normal(0, 0.2) + (1.0 if k == 4 else 0.0)
        tip_dir = direction * np.cos(bend) + normal * np.sin(bend)
        tip = base + tip_dir * size * rng.uniform(0.5, 0.9)
        cv2.line(mask, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), 1,
                 max(2, int(palm * 0.38)))
    # work in the hand's own rectangle: blurs over the whole table are slow
    bx, by, bw, bh = cv2.boundingRect(mask)
    if bw == 0 or bh == 0:
        return
    pad = int(size * 0.6)
    x0, y0 = max(0, bx - pad), max(0, by - pad)
    x1, y1 = min(w, bx + bw + pad), min(h, by + bh + pad)
    local = mask[y0:y1, x0:x1].astype(np.float32)
    skin_part = local.copy()
    sleeve_part = np.zeros_like(local)
    cv2.line(sleeve_part, (int(c[0] - direction[0] * palm * 1.6) - x0,
                           int(c[1] - direction[1] * palm * 1.6) - y0),
             (int(arm_end[0]) - x0, int(arm_end[1]) - y0), 1.0, int(palm * 1.7))
    sleeve_part *= local
    soft = cv2.GaussianBlur(local, (0, 0), 1.2)
    shadow = _blur(soft, size * 0.15)
    shadow = np.roll(shadow, (int(size * 0.1), int(size * 0.1)), axis=(0, 1))
    roi = plane.image[y0:y1, x0:x1]
    roi *= (1 - 0.45 * shadow)[..., None]
    skin = np.array(rng.choice([(120, 160, 220), (90, 130, 190), (60, 90, 140), (150, 180, 230)]),
                    np.float32) * rng.uniform(0.85, 1.1)
    sleeve = rng.uniform(20, 200, 3).astype(np.float32)
    shade = 0.8 + 0.2 * _blur(soft, size * 0.08)
    colour = shade[..., None] * np.where(cv2.GaussianBlur(sleeve_part, (0, 0), 1.0)[..., None]
                                         > 0.5, sleeve, skin)
    del skin_part
    sub = _Plane.__new__(_Plane)
    sub.image, sub.ids = roi, plane.ids[y0:y1, x0:x1]
    sub.occlude(soft, colour)


class _Sampler:
    """Picks plane points that land at given spots of the image (u, v in 0..1)."""

    def __init__(self, inverse: npt.NDArray[np.float64], width: int, height: int) -> None:
        self.inverse = inverse
        self.width, self.height = width, height

    def __call__(self, u: float, v: float) -> tuple[float, float]:
        p = cv2.perspectiveTransform(
            np.array([[[u * self.width, v * self.height]]], np.float64), self.inverse)
        return float(p[0, 0, 0]), float(p[0, 0, 1])


# --- camera and light ------------------------------------------------------------
def _effects(img: Image, rng: np.random.Generator) -> Image:
    h, w = img.shape[:2]
    # light, shadows and glare vary slowly: computed on a small grid, then enlarged
    sh, sw = max(2, h // 8), max(2, w // 8)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    xx /= sw
    yy /= sh
    # light falling off across the table, a vignette, a warm or cold cast
    theta = rng.uniform(0, 2 * np.pi)
    light = 1 + rng.uniform(0, 0.35) * ((xx - 0.5) * np.cos(theta) + (yy - 0.5) * np.sin(theta))
    light *= 1 - rng.uniform(0, 0.35) * ((xx - 0.5) ** 2 + (yy - 0.5) ** 2)
    light *= rng.uniform(0.75, 1.12)
    if rng.random() < 0.3:  # a large soft shadow of a person or a lamp
        poly = np.stack([rng.uniform(-0.2, 1.2, 5) * sw, rng.uniform(-0.2, 1.2, 5) * sh], axis=1)
        m = np.zeros((sh, sw), np.float32)
        cv2.fillPoly(m, [cv2.convexHull(poly.astype(np.int32))], 1.0)
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(0.02, 0.08) * sw)
        light *= 1 - rng.uniform(0.2, 0.5) * m
    glare = np.zeros((sh, sw), np.float32)
    if rng.random() < 0.45:  # glare from a lamp on the plastic and the table
        gx, gy = rng.uniform(0, 1), rng.uniform(0, 1)
        sigma = rng.uniform(0.04, 0.2)
        glare = rng.uniform(30, 110) * np.exp(
            -((xx - gx) ** 2 + ((yy - gy) * h / w) ** 2) / (2 * sigma**2))
    warmth = rng.normal(0, 0.07)
    cast = np.array([1 - warmth, 1 + rng.normal(0, 0.02), 1 + warmth], np.float32)
    light_full = cv2.resize(light.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    img = img * (light_full[..., None] * cast)
    if glare.any():
        img += cv2.resize(glare.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)[
            ..., None]
    r = rng.random()
    if r < 0.15:  # motion blur
        k = int(rng.integers(3, 10))
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D(((k - 1) / 2, (k - 1) / 2), rng.uniform(0, 180), 1.0)
        kernel = cv2.warpAffine(kernel, rot, (k, k))
        img = cv2.filter2D(img, -1, kernel / max(kernel.sum(), 1e-6))
    elif r < 0.65:  # focus
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.4, 1.6))
    if rng.random() < 0.8:  # sensor noise
        noise = rng.standard_normal((h, w, 1), dtype=np.float32) * rng.uniform(1, 6)
        img = img + noise
    return img


def _quarter_turn(points: npt.NDArray[np.float32], width: float, height: float, side: int
                  ) -> npt.NDArray[np.float32]:
    """Points of a ``width`` x ``height`` picture turned a quarter: its top to the left
    (``side`` 1) or to the right (-1) of the turned, ``height`` x ``width`` one."""
    x, y = points[:, 0], points[:, 1]
    turned = np.stack([y, width - x], axis=1) if side == 1 else np.stack([height - y, x], axis=1)
    return turned.astype(np.float32)


def render_scene(seed: int, width: int = 1280, height: int = 720, kind: str = "mixed",
                 options: RenderOptions | None = None) -> Scene:
    """A rendered table photo and its labels; the same arguments give the same bytes."""
    if kind not in SCENE_KINDS:
        raise ValueError(f"scene kind must be one of {', '.join(SCENE_KINDS)}, not {kind!r}")
    if width < 64 or height < 64:
        raise ValueError(f"image size {width}x{height} is too small (64x64 at least)")
    options = options or RenderOptions()
    rng = np.random.default_rng(seed)
    # the camera: the plane's far side is wider than the near one
    tilt = rng.uniform(0.0, 0.45) if options.perspective else 0.0
    stretch = rng.uniform(0.0, 0.35) if options.perspective else 0.0
    # a phone held low at the table's edge: the far side much wider, squeezed; drawn
    # apart, so that a scene seen from above lays its items out as it did without
    steep = np.random.default_rng([seed, 1])
    side = 0  # where the far side is: 0 the top, 1 the left, -1 the right
    if options.perspective and steep.random() < STEEP_SHARE:
        tilt, stretch = steep.uniform(0.45, 1.1), steep.uniform(0.35, 0.9)
        sides = np.random.default_rng([seed, 2])
        if options.side_views and sides.random() < SIDE_SHARE:
            side = 1 if sides.random() < 0.5 else -1
    # the camera built as if the far side were at the top of a picture of these sides
    view_w, view_h = (width, height) if side == 0 else (height, width)
    # a margin round the seen part, so the camera's jitter never looks past the table
    mx, my = (int(0.08 * view_w), int(0.08 * view_h)) if options.perspective else (0, 0)
    pw, ph = int(view_w * (1 + 2 * tilt)), int(view_h * (1 + stretch))
    src = np.float32([[0, 0], [pw, 0], [tilt * view_w + view_w, ph], [tilt * view_w, ph]])
    src += np.float32([mx, my])
    pw, ph = pw + 2 * mx, ph + 2 * my
    if options.perspective:
        src += rng.normal(0, 0.025, (4, 2)).astype(np.float32) * [view_w, view_h]
    dst = np.float32([[0, 0], [view_w, 0], [view_w, view_h], [0, view_h]])
    if side:
        # turn that picture and its table a quarter, so the far side is at the left
        # (or right) and the items on the table stand upright in the picture
        src, pw, ph = _quarter_turn(src, pw, ph, side), ph, pw
        dst = _quarter_turn(dst, view_w, view_h, side)
    homography = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    sampler = _Sampler(np.linalg.inv(homography), width, height)
    # the table: drawn at half size and enlarged (it is out of focus detail anyway)
    surface = table_surface(rng, max(8, ph // 2), max(8, pw // 2), options.surface)
    plane = _Plane(cv2.resize(surface, (pw, ph), interpolation=cv2.INTER_LINEAR))
    tiles = kind in ("tiles", "mixed")
    cards = kind in ("cards", "mixed")
    amount = 0.6 if kind == "mixed" else 1.0
    up = np.array([0.0, -1.0])
    # one camera distance per scene; drawn first so tile scenes render as before
    close_up = rng.random() < CLOSE_UP_SHARE
    if tiles:
        th = height * rng.uniform(*(CLOSE_UP_TILE_HEIGHT if close_up else TILE_HEIGHT))
        thickness_len = th * rng.uniform(0.06, 0.14) * (0.5 + tilt)
        _tile_layout(plane, rng, sampler, th, (float(-up[0] * thickness_len),
                                               float(-up[1] * thickness_len)), amount,
                     options.palettes, options.tile_style,
                     np.random.default_rng([seed, 3]) if options.tile_grids else None)
    if cards:
        ch = height * rng.uniform(*(CLOSE_UP_CARD_HEIGHT if close_up else CARD_HEIGHT))
        _card_layout(plane, rng, sampler, ch, amount, options.deck)
    if options.occluders and rng.random() < 0.35:
        for _ in range(int(rng.integers(1, 3))):
            _hand(plane, rng, sampler, height * rng.uniform(0.12, 0.22))
    img = cv2.warpPerspective(plane.image, homography, (width, height), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    if options.effects:
        img = _effects(img, rng)
    image = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    if options.jpeg:
        quality = int(rng.integers(45, 96)) if options.effects else 95
        ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    else:
        ok, buffer = cv2.imencode(".png", image)
    if not ok:
        raise RuntimeError("OpenCV could not encode the rendered image")
    encoded = buffer.tobytes()
    decoded = cv2.imdecode(buffer, cv2.IMREAD_COLOR)
    # labels: each entity's outline through the camera, cut to the frame
    boxes, labels, kinds, items = [], [], [], []
    for entity in plane.entities:
        visible = plane.visible_share(entity)
        poly = cv2.perspectiveTransform(entity.polygon.reshape(-1, 1, 2), homography).reshape(-1, 2)
        x1, y1 = poly.min(axis=0)
        x2, y2 = poly.max(axis=0)
        cx1, cy1 = max(x1, 0.0), max(y1, 0.0)
        cx2, cy2 = min(x2, float(width)), min(y2, float(height))
        full = (x2 - x1) * (y2 - y1)
        inside = max(0.0, cx2 - cx1) * max(0.0, cy2 - cy1) / max(full, 1e-9)
        threshold = TILE_MIN_VISIBLE if entity.kind == "tile" else INDEX_MIN_VISIBLE
        kept = (visible >= threshold and inside >= threshold
                and min(cx2 - cx1, cy2 - cy1) >= MIN_BOX_SIDE)
        up_image = None
        if entity.up is not None:
            # both ends through the camera: under a steep view the outline's mean is
            # not where the plane's middle lands
            middle = entity.polygon.mean(axis=0)
            ends = cv2.perspectiveTransform(
                np.array([middle, middle + entity.up * 5]).reshape(-1, 1, 2), homography)
            vec = ends[1, 0] - ends[0, 0]
            up_image = vec / (np.linalg.norm(vec) + 1e-9)
        items.append(SceneItem(entity.label, entity.kind, poly, visible, kept, up_image,
                               entity.on_rack, entity.in_grid))
        if kept:
            boxes.append([cx1, cy1, cx2, cy2])
            labels.append(entity.label)
            kinds.append(entity.kind)
    detections = (
        Detections(np.array(boxes), tuple(labels), tuple(kinds), np.ones(len(boxes)))  # type: ignore[arg-type]
        if boxes
        else Detections.empty()
    )
    return Scene(decoded, encoded, detections, tuple(items),
                 {0: "top", 1: "left", -1: "right"}[side])


def render_layout(style: TileStyle, seed: int, width: int = 1600, height: int = 900,
                  order: tuple[tuple[str, ...], ...] | None = None) -> Scene:
    """A photo of one tile set laid out in rows in ``order`` (default: K1..K13, B1..B13,
    O1..O13, R1..R13, then the jokers, as ``tabletop adapt --layout`` reads it) on a
    table, under the renderer's light, blur and noise; the same arguments give the same
    bytes."""
    rows = order or (*(tuple(f"{c}{n}" for n in range(1, 14)) for c in TILE_COLOURS),
                     (JOKER, JOKER))
    rng = np.random.default_rng(seed)
    image = table_surface(rng, height, width)
    columns = max(len(row) for row in rows)
    tile_height = min(0.8 * height / len(rows), 0.9 * width / columns / style.aspect)
    gap_x = (width - columns * tile_height * style.aspect) / (columns + 1)
    gap_y = (height - len(rows) * tile_height) / (len(rows) + 1)
    boxes, labels = [], []
    for r, row in enumerate(rows):
        for c, label in enumerate(row):
            tile = render_tile(label, style, round(tile_height))
            h, w = tile.image.shape[:2]
            x = round(gap_x + c * (w + gap_x) + rng.normal(0, 2))
            y = round(gap_y + r * (tile_height + gap_y) + rng.normal(0, 2))
            alpha = tile.alpha[..., None]
            image[y:y + h, x:x + w] = tile.image * alpha + image[y:y + h, x:x + w] * (1 - alpha)
            boxes.append([x, y, x + w, y + h])
            labels.append(label)
    return _layout_photo(image, rng, boxes, labels, "tile")


def _layout_photo(image: Image, rng: np.random.Generator, boxes: list[list[float]],
                  labels: list[str], kind: Kind) -> Scene:
    """A laid-out set's picture under the renderer's light, blur and noise, as a JPEG
    photo labelled by ``boxes`` and ``labels`` of ``kind``."""
    image = np.clip(_effects(image, rng), 0, 255).astype(np.uint8)
    encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
    decoded = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
    detections = Detections(np.array(boxes, np.float64), tuple(labels),
                            (kind,) * len(labels), np.ones(len(labels)))
    return Scene(decoded, encoded, detections, ())


def render_deck_layout(design: DeckDesign, seed: int, card_height: int = 150,
                       jokers: int = 2) -> Scene:
    """A photo of one deck laid out as ``tabletop adapt --layout`` reads it: rows A..K of
    spades, hearts, diamonds and clubs (top to bottom, each left to right), then
    ``jokers`` jokers, each card upright and apart on a table, under the renderer's
    light, blur and noise.  Its labels are the cards' index boxes (both corners, or all
    four of a four-index deck); the same arguments give the same bytes."""
    if card_height < 24:
        raise ValueError(f"cards {card_height} pixels tall are too small (24 at least)")
    if not 0 <= jokers <= len(CARD_RANKS):
        raise ValueError(f"a layout holds 0..{len(CARD_RANKS)} jokers, not {jokers}")
    rows = [tuple(f"{rank}{suit}" for rank in CARD_RANKS) for suit in CARD_SUITS]
    if jokers:
        rows.append((JOKER,) * jokers)
    rng = np.random.default_rng(seed)
    card_width = round(card_height * design.aspect)
    gap_x, gap_y = round(0.2 * card_width), round(0.25 * card_height)
    width = len(CARD_RANKS) * (card_width + gap_x) + gap_x
    height = len(rows) * (card_height + gap_y) + gap_y
    image = table_surface(rng, height, width)
    boxes, labels = [], []
    for r, row in enumerate(rows):
        for c, label in enumerate(row):
            card = render_card(label, design, card_height)
            h, w = card.alpha.shape[:2]
            x = int(np.clip(round(gap_x + c * (card_width + gap_x) + rng.normal(0, 2)),
                            0, width - w))
            y = int(np.clip(round(gap_y + r * (card_height + gap_y) + rng.normal(0, 2)),
                            0, height - h))
            alpha = card.alpha[..., None]
            image[y:y + h, x:x + w] = card.image * alpha + image[y:y + h, x:x + w] * (1 - alpha)
            for corners in card.indices:
                (x1, y1), (x2, y2) = corners.min(axis=0), corners.max(axis=0)
                boxes.append([x + float(x1), y + float(y1), x + float(x2), y + float(y2)])
                labels.append(label)
    return _layout_photo(image, rng, boxes, labels, "card")
