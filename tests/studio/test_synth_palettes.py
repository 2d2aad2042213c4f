"""Tile ink palettes: wide across real sets, distinct within one, some families held out."""

from __future__ import annotations

import colorsys
import dataclasses
from collections import Counter

import numpy as np
import pytest

from tabletop.studio.synth.tiles import (
    HELD_OUT_PALETTES,
    INK_ROLES,
    MIN_INK_DISTANCE,
    PALETTES,
    TRAINING_PALETTES,
    Colour,
    ink_lab,
    palette_inks,
    random_style,
    render_tile,
)


def _hsv(bgr: Colour) -> tuple[float, float, float]:
    """OpenCV's HSV (hue 0..180) of a BGR 0..255 colour, without rounding to bytes."""
    b, g, r = (v / 255.0 for v in bgr)
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    return h * 180.0, s * 255.0, v * 255.0


def _hue_in(hue: float, lo: float, hi: float, slack: float = 0.01) -> bool:
    """Whether ``hue`` lies in the range lo..hi taken round the 180 hue circle."""
    return (hue - (lo - slack)) % 180.0 <= (hi - lo) + 2 * slack


def _gaps(inks: dict[str, Colour]) -> list[float]:
    lab = ink_lab([inks[role] for role in INK_ROLES])
    return [float(np.linalg.norm(lab[i] - lab[j]))
            for i in range(len(lab)) for j in range(i + 1, len(lab))]


def test_training_and_held_out_families_split_the_table() -> None:
    assert set(TRAINING_PALETTES) | set(HELD_OUT_PALETTES) == set(PALETTES)
    assert not set(TRAINING_PALETTES) & set(HELD_OUT_PALETTES)
    assert 1 <= len(HELD_OUT_PALETTES) <= 2
    assert all(set(ranges) == set(INK_ROLES) for ranges in PALETTES.values())


@pytest.mark.parametrize("name", sorted(PALETTES))
def test_every_family_draws_four_inks_far_apart_in_lab(name: str) -> None:
    rng = np.random.default_rng(7)
    for _ in range(60):
        inks = palette_inks(name, rng)
        assert set(inks) == set(INK_ROLES)
        assert min(_gaps(inks)) >= MIN_INK_DISTANCE
        assert all(0.0 <= v <= 255.0 for ink in inks.values() for v in ink)


@pytest.mark.parametrize("name", sorted(PALETTES))
def test_every_drawn_ink_lies_in_its_familys_stated_ranges(name: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        inks = palette_inks(name, rng)
        for role, ((hlo, hhi), (slo, shi), (vlo, vhi)) in PALETTES[name].items():
            h, s, v = _hsv(inks[role])
            assert slo - 0.01 <= s <= shi + 0.01, (role, s)
            assert vlo - 0.01 <= v <= vhi + 0.01, (role, v)
            if s > 1.0:  # the hue of a grey is not defined
                assert _hue_in(h, hlo, hhi), (role, h)


# (family, role, hue range the drawn ink must show, a share of draws that must
# fall in the narrower range named last): what real sets of that kind look like.
LOOKS = [
    ("modern", "O", (4, 18), (4, 9)),  # orange, often close to red
    ("modern", "R", (174, 183), (174, 183)),
    ("modern", "B", (100, 118), (100, 118)),
    ("vintage", "B", (94, 106), (94, 100)),  # leaning to turquoise
    ("vintage", "O", (16, 26), (20, 26)),  # yellow-orange
    ("remi", "O", (21, 30), (24, 30)),  # yellow
    ("okey", "O", (18, 28), (18, 28)),
    ("unusual", "B", (82, 93), (82, 93)),  # teal
    ("unusual", "O", (27, 33), (27, 33)),  # yellow
    ("unusual", "R", (155, 167), (155, 167)),  # magenta
    ("unusual", "K", (28, 45), (28, 45)),  # olive
]


@pytest.mark.parametrize(("name", "role", "hues", "often"), LOOKS)
def test_a_familys_inks_have_the_hues_of_its_real_sets(
        name: str, role: str, hues: tuple[float, float], often: tuple[float, float]) -> None:
    rng = np.random.default_rng(11)
    drawn = [_hsv(palette_inks(name, rng)[role])[0] for _ in range(80)]
    assert all(_hue_in(h, *hues) for h in drawn), drawn
    assert sum(_hue_in(h, *often) for h in drawn) >= 10


def test_faded_inks_are_lighter_and_duller_and_dark_ones_darker_than_modern() -> None:
    rng = np.random.default_rng(5)

    def saturation(name: str, role: str) -> float:
        return float(np.mean([_hsv(palette_inks(name, rng)[role])[1] for _ in range(40)]))

    def lightness(name: str, role: str) -> float:
        return float(np.mean([ink_lab([palette_inks(name, rng)[role]])[0, 0] for _ in range(40)]))

    for role in ("B", "O", "R"):
        assert saturation("faded", role) < saturation("modern", role) - 40
        assert lightness("faded", role) > lightness("modern", role) + 5
        assert lightness("dark", role) < lightness("modern", role) - 5
    assert lightness("faded", "K") > lightness("modern", "K") + 15
    assert lightness("dark", "K") < lightness("modern", "K")


def test_held_out_families_are_never_drawn_by_default() -> None:
    drawn = Counter(random_style(np.random.default_rng(seed)).palette for seed in range(300))
    assert not set(drawn) & set(HELD_OUT_PALETTES)
    assert set(drawn) == set(TRAINING_PALETTES)  # and every training family is


@pytest.mark.parametrize("names", [HELD_OUT_PALETTES, ("remi",), ("faded", "dark")])
def test_the_styles_palette_comes_from_the_families_asked_for(names: tuple[str, ...]) -> None:
    for seed in range(20):
        style = random_style(np.random.default_rng(seed), palettes=names)
        assert style.palette in names
        inks = dict(style.inks)
        assert set(inks) == set(INK_ROLES)
        assert min(_gaps(inks)) >= MIN_INK_DISTANCE
        for role in ("B", "O", "R"):  # a black's hue is noise
            (hlo, hhi), _s, _v = PALETTES[style.palette][role]
            h = _hsv(inks[role])[0]
            assert _hue_in(h, hlo, hhi, slack=6.0), (role, h)  # the set's small jitter


def test_one_seed_gives_one_set_design_whatever_the_palette() -> None:
    for seed in range(10):
        designs, inks = [], []
        for names in (None, HELD_OUT_PALETTES, ("faded",)):
            rng = np.random.default_rng(seed)
            style = random_style(rng, palettes=names)
            fields = dataclasses.asdict(style)
            for ink_field in ("inks", "mark_colour", "palette", "mark_in_ink"):
                fields.pop(ink_field)
            designs.append((fields, rng.random()))  # and the caller's next draw
            inks.append(style.inks)
        assert designs[0] == designs[1] == designs[2]
        assert len(set(inks)) == 3


@pytest.mark.parametrize(("names", "error"), [((), "no palette"), (("neon",), "unknown"),
                                              (("modern", "neon"), "unknown")])
def test_unknown_or_no_families_are_refused(names: tuple[str, ...], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        random_style(np.random.default_rng(0), palettes=names)


def test_palette_inks_refuses_an_unknown_family() -> None:
    with pytest.raises(ValueError, match="unknown palette family"):
        palette_inks("neon", np.random.default_rng(0))


@pytest.mark.parametrize("palettes", [None, HELD_OUT_PALETTES, ("okey", "modern")])
def test_same_seed_same_style_other_seed_other_inks(palettes: tuple[str, ...] | None) -> None:
    a = random_style(np.random.default_rng(21), palettes=palettes)
    b = random_style(np.random.default_rng(21), palettes=palettes)
    assert a == b
    others = {random_style(np.random.default_rng(seed), palettes=palettes).inks
              for seed in range(22, 27)}
    assert a.inks not in others
    assert palette_inks("vintage", np.random.default_rng(4)) == palette_inks(
        "vintage", np.random.default_rng(4))


def test_okey_marks_in_the_tiles_own_ink_follow_the_numerals_colour() -> None:
    style = next(s for s in (random_style(np.random.default_rng(seed), palettes=("okey",))
                             for seed in range(200)) if s.mark_in_ink)
    colours = {}
    for label in ("K6", "B6", "O6", "R6"):
        tile = render_tile(label, style, 120)
        assert tile.mark_box is not None
        x1, y1, x2, y2 = (round(v) for v in tile.mark_box)
        patch = tile.image[y1 : y2 + 1, x1 : x2 + 1].reshape(-1, 3)
        far = np.abs(patch - np.asarray(style.face, np.float32)).max(axis=1)
        colours[label[0]] = patch[np.argmax(far)]
    for role, colour in colours.items():
        assert np.abs(colour - np.asarray(style.ink(role))).max() < 40, role
