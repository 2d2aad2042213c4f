"""Procedural table surfaces: wood, felt, marble, cloth, cork, plain."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.float32]
SURFACES = ("wood", "felt", "marble", "cloth", "cork", "plain")


def smooth_noise(rng: np.random.Generator, h: int, w: int, cell: float,
                 stretch: tuple[float, float] = (1.0, 1.0)) -> Image:
    """Noise with features about ``cell`` px (times ``stretch`` along y, x), mean 0, sd ~1."""
    gh = max(2, int(h / (cell * stretch[0])) + 2)
    gw = max(2, int(w / (cell * stretch[1])) + 2)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def fractal(rng: np.random.Generator, h: int, w: int, cell: float, octaves: int = 4,
            stretch: tuple[float, float] = (1.0, 1.0)) -> Image:
    total = np.zeros((h, w), np.float32)
    amp = 1.0
    for _ in range(octaves):
        total += amp * smooth_noise(rng, h, w, cell, stretch)
        cell /= 2
        amp *= 0.5
    return total / 1.6


def _tint(base: tuple[float, float, float], shade: Image) -> Image:
    return np.clip(shade[..., None] * np.asarray(base, np.float32)[None, None, :], 0, 255)


def table_surface(rng: np.random.Generator, h: int, w: int, kind: str | None = None) -> Image:
    """A table top of ``h`` x ``w`` pixels (BGR float 0..255)."""
    kind = kind or str(rng.choice(SURFACES, p=[0.35, 0.15, 0.15, 0.15, 0.08, 0.12]))
    if kind == "wood":
        vertical = rng.random() < 0.5
        hh, ww = (w, h) if vertical else (h, w)
        base = np.array([rng.uniform(30, 90), rng.uniform(60, 120), rng.uniform(100, 180)])
        if rng.random() < 0.25:  # pale oak / birch
            base = np.array([rng.uniform(120, 160), rng.uniform(165, 200), rng.uniform(195, 230)])
        warp = fractal(rng, hh, ww, rng.uniform(60, 160), 3, stretch=(1.0, 8.0))
        warp *= rng.uniform(6, 20)
        yy = np.arange(hh, dtype=np.float32)[:, None] + warp
        grain = np.sin(yy * rng.uniform(0.15, 0.5)) * 0.5 + 0.5
        fine = smooth_noise(rng, hh, ww, 1.5, stretch=(1.0, 30.0))
        shade = 0.8 + 0.18 * grain ** 3 + 0.05 * fine + 0.08 * fractal(rng, hh, ww, 200, 2)
        plank = rng.uniform(90, 260)
        seams = (np.abs(((yy + rng.uniform(0, plank)) % plank) - 1.5) < 1.2).astype(np.float32)
        shade *= 1 - 0.35 * seams
        img = _tint((base[0], base[1], base[2]), shade.astype(np.float32) / 0.9)
        return np.ascontiguousarray(img.transpose(1, 0, 2)) if vertical else img
    if kind == "felt":
        base = [(40.0, 110.0, 30.0), (110.0, 70.0, 20.0), (40.0, 40.0, 130.0), (50.0, 50.0, 50.0)][
            int(rng.integers(0, 4))]
        shade = 1 + 0.06 * smooth_noise(rng, h, w, 1.2) + 0.05 * fractal(rng, h, w, 150, 2)
        return _tint(base, shade)
    if kind == "marble":
        base = np.array([rng.uniform(200, 240)] * 3) + rng.normal(0, 6, 3)
        if rng.random() < 0.3:
            base = base * 0.35  # dark marble
        turb = fractal(rng, h, w, rng.uniform(80, 200), 5)
        xx = np.arange(w, dtype=np.float32)[None, :] * rng.uniform(0.005, 0.02)
        yy = np.arange(h, dtype=np.float32)[:, None] * rng.uniform(0.005, 0.02)
        veins = np.abs(np.sin(xx + yy + turb * rng.uniform(2, 4))) ** 0.25
        shade = 0.75 + 0.25 * veins + 0.03 * smooth_noise(rng, h, w, 2)
        return _tint((base[0], base[1], base[2]), shade)
    if kind == "cloth":
        base = rng.uniform(60, 230) * 0.4 + rng.uniform(60, 230, 3) * 0.6
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        period = rng.uniform(2.5, 5)
        weave = 0.5 + 0.5 * np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period)
        shade = 0.9 + 0.08 * weave + 0.06 * fractal(rng, h, w, 120, 3)
        img = _tint((base[0], base[1], base[2]), shade)
        if rng.random() < 0.4:  # a checked tablecloth
            check = rng.uniform(40, 120)
            pattern = ((xx // check + yy // check) % 2).astype(np.float32)
            img *= (1 - 0.35 * pattern)[..., None]
        return img
    if kind == "cork":
        base = (rng.uniform(60, 90), rng.uniform(120, 150), rng.uniform(175, 205))
        speck = smooth_noise(rng, h, w, 1.0) * 0.08 + smooth_noise(rng, h, w, 3.0) * 0.06
        return _tint(base, 1 + speck)
    base = rng.uniform(40, 240) * 0.6 + rng.uniform(40, 240, 3) * 0.4
    shade = 1 + 0.02 * smooth_noise(rng, h, w, 2.0) + 0.04 * fractal(rng, h, w, 300, 2)
    return _tint((base[0], base[1], base[2]), shade)
