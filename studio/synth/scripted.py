"""A scripted game rendered into a video: the table as each snapshot has it, a hand between.

    python -m tabletop.studio.synth.scripted tabletop/samples/scenarios/sabra.json \\
        --out tabletop/samples/videos/sabra.mp4

writes the video and, beside it, ``sabra.truth.jsonl``: a header line (size,
frame rate, where the table's corners are in the image, the button presses
on the video's clock) and one line per frame with the renderer's true boxes.
``live.oracle.OracleDetector`` reads that file in place of the detection
model, so the whole pipeline after the model runs on the video now.

The table is ``TABLE_MM`` millimetres with ``calibration.zones.default_layout`` on
it: shared melds one per line in the meld area (in table order, top to
bottom), a seat's items in its band, read along its player's reading
direction, the discards overlapping in a row in the discard zone.  The camera
looks down at a fixed angle from the bottom edge.  Each snapshot is held
still for ``still_s``; between two, a hand reaches in from the playing seat
over what changes (motion, items hidden under it) and leaves again.

A snapshot holding an item the variant's set does not have (a card on a
Rummikub table: the scenario's way of injecting a misreading) cannot be
rendered as a reading: the watcher groups tiles and cards apart, so such a
step is left out of the video and listed as ``skipped`` in the header.
Everything is seeded: the same scenario and settings give the same frames.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.calibration.zones import ZoneLayout, default_layout
from tabletop.engine.items import Family, Item, format_items
from tabletop.engine.scenario import Press, Scenario, ScenarioError, TableStep, scenario_from_text
from tabletop.studio.synth.cards import DeckDesign, random_design, render_back, render_card
from tabletop.studio.synth.scene import (
    INDEX_MIN_VISIBLE,
    TILE_MIN_VISIBLE,
    _affine,
    _apply,
    _Entity,
    _Plane,
)
from tabletop.studio.synth.textures import table_surface
from tabletop.studio.synth.tiles import TileStyle, random_style, render_tile

TABLE_MM = (1000.0, 600.0)
"""The table the videos show; its default zones (3 players) leave a 158 mm wide strip
for stock and discards."""
TILE_HEIGHT_MM = 40.0
CARD_HEIGHT_MM = 80.0
TILE_GAP_MM = 1.5
CARD_SHIFT_MM = 23.0
"""How far each card of a meld lies past the one under it: its corner index (16 to 20 mm
wide) stays in sight."""
MELD_GAP_MM = 45.0
"""Space between two melds in a seat's band: farther than the grouping links cards."""
LINE_PITCH_MM = 72.0
"""Shared melds lie one per line, this far apart (the grouping links tiles ~50 mm)."""
TRUTH_SUFFIX = ".truth.jsonl"


class ScriptedError(ValueError):
    """A scenario that cannot be laid out on the table; the message quotes it."""


@dataclass(frozen=True)
class VideoSettings:
    width: int = 640
    height: int = 360
    fps: float = 5.0
    lead_s: float = 1.6
    """The empty table at the start, still."""
    hand_s: float = 1.2
    """A hand reaching in and out between two snapshots."""
    still_s: float = 2.0
    """Each snapshot held still (the watcher needs ~1 s to commit)."""
    seed: int = 5
    codec: str = "mp4v"

    @property
    def px_per_mm(self) -> float:
        # the flat table is drawn a little finer than the camera sees it
        return 1.2 * max(1.0, self.width / 640)


@dataclass(frozen=True)
class Placement:
    """One face-up item on the table: centre (mm) and the direction its top edge reads along."""

    label: str
    kind: str  # "tile" or "card"
    centre: tuple[float, float]
    along: tuple[float, float]  # the item's own +x (left to right) as a unit vector on the table


def camera_corners(width: int, height: int) -> tuple[tuple[float, float], ...]:
    """Where the table's corners (top left, top right, bottom right, bottom left) appear:
    a camera above the bottom edge, looking down at an angle (the far side smaller)."""
    return ((0.15 * width, 0.06 * height), (0.85 * width, 0.06 * height),
            (0.985 * width, 0.96 * height), (0.015 * width, 0.96 * height))


def table_layout(scenario: Scenario) -> ZoneLayout:
    return default_layout(scenario.variant.id, len(scenario.players), TABLE_MM)


def _item_size(kind: str, settings: VideoSettings, style: TileStyle, design: DeckDesign
               ) -> tuple[float, float]:
    """(width, height) in mm of a rendered tile or card."""
    if kind == "tile":
        return TILE_HEIGHT_MM * style.aspect, TILE_HEIGHT_MM
    return CARD_HEIGHT_MM * design.aspect, CARD_HEIGHT_MM


def _row(start: tuple[float, float], along: tuple[float, float], labels: Sequence[str],
         kind: str, pitch: float, width: float) -> list[Placement]:
    """Items in a row from ``start`` (the first item's left edge, middle height)."""
    out = []
    for i, label in enumerate(labels):
        d = width / 2 + i * pitch
        out.append(Placement(label, kind, (start[0] + d * along[0], start[1] + d * along[1]),
                             along))
    return out


def layout_snapshot(scenario: Scenario, snapshot: TableStep, style: TileStyle,
                    design: DeckDesign) -> list[Placement]:
    """Every item of ``snapshot`` placed in the zone the watcher reads it from."""
    layout = table_layout(scenario)
    kind = "tile" if scenario.variant.family is Family.TILES else "card"
    w, _ = _item_size(kind, VideoSettings(), style, design)
    pitch = w + TILE_GAP_MM if kind == "tile" else CARD_SHIFT_MM
    placements: list[Placement] = []
    meld_zone = layout.of_kind("meld")[0]
    xs = [p[0] for p in meld_zone.polygon]
    ys = [p[1] for p in meld_zone.polygon]
    lines = int((max(ys) - min(ys)) // LINE_PITCH_MM)
    if len(snapshot.melds) > lines:
        raise ScriptedError(f"{len(snapshot.melds)} shared melds do not fit {lines} lines: "
                            f"{[format_items(m) for m in snapshot.melds]!r}")
    for i, meld in enumerate(snapshot.melds):
        y = min(ys) + LINE_PITCH_MM * (i + 0.5)
        placements += _row((min(xs) + 30.0, y), (1.0, 0.0), [str(it) for it in meld], kind,
                           pitch, w)
    for seat, rows in sorted(snapshot.seats.items()):
        zone = layout.seat_zone(seat)
        if zone is None:
            raise ScriptedError(f"no seat {seat} at a table of {len(scenario.players)}")
        dx, dy = zone.reading_direction
        zx = [p[0] for p in zone.polygon]
        zy = [p[1] for p in zone.polygon]
        # start at the player's left end of the band, in its middle depth
        mid = ((min(zx) + max(zx)) / 2, (min(zy) + max(zy)) / 2)
        half = abs(dx) * (max(zx) - min(zx)) / 2 + abs(dy) * (max(zy) - min(zy)) / 2
        cursor = (mid[0] - dx * (half - 30.0), mid[1] - dy * (half - 30.0))
        for meld in rows:
            labels = [str(it) for it in meld]
            placements += _row(cursor, (dx, dy), labels, kind, pitch, w)
            length = w + pitch * (len(labels) - 1) + MELD_GAP_MM
            cursor = (cursor[0] + dx * length, cursor[1] + dy * length)
        end = (cursor[0] - dx * MELD_GAP_MM, cursor[1] - dy * MELD_GAP_MM)
        if not zone.contains(end):
            raise ScriptedError(f"seat {seat}'s items do not fit its band: "
                                f"{[format_items(m) for m in rows]!r}")
    if snapshot.discards:
        zone = next(iter(layout.of_kind("discard")), None)
        if zone is None:
            raise ScriptedError(f"{scenario.variant.id} has no discard zone for "
                                f"{format_items(snapshot.discards)!r}")
        zx = [p[0] for p in zone.polygon]
        top = min(p[1] for p in zone.polygon)
        # Cards lie sideways across the zone's top edge, each past the one before: the
        # corner index of each shows in the discard zone; the other corner of the top
        # card lies in the stock zone above (out of place, not read as a discard).  A lone
        # card's two corners in the discard zone would read as two discards.
        card_h = _item_size("card", VideoSettings(), style, design)[1]
        room = max(zx) - min(zx) - card_h - 4
        shift = min(CARD_SHIFT_MM, room / max(1, len(snapshot.discards) - 1))
        for i, item in enumerate(snapshot.discards):
            x = min(zx) + 2 + card_h / 2 + i * shift
            placements.append(Placement(str(item), "card", (x, top), (0.0, -1.0)))
    return placements


class _Painter:
    """Draws placements on the flat table and keeps the id map for what stays in sight."""

    def __init__(self, scenario: Scenario, settings: VideoSettings) -> None:
        rng = np.random.default_rng(settings.seed)
        self.settings = settings
        self.scale = settings.px_per_mm
        pw, ph = round(TABLE_MM[0] * self.scale), round(TABLE_MM[1] * self.scale)
        surface = table_surface(rng, ph // 2, pw // 2, "felt")
        self.surface = cv2.resize(surface, (pw, ph), interpolation=cv2.INTER_LINEAR)
        self.style = random_style(rng)
        self.design = random_design(rng)
        self.tile_px = round(TILE_HEIGHT_MM * self.scale)
        self.card_px = round(CARD_HEIGHT_MM * self.scale)
        self.scenario = scenario
        self._cache: dict[tuple[str, str], Any] = {}
        self.stock = self._stock(rng)

    def _render(self, label: str, kind: str) -> Any:
        key = (label, kind)
        if key not in self._cache:
            if kind == "tile":
                self._cache[key] = render_tile(label, self.style, self.tile_px)
            elif label:
                self._cache[key] = render_card(label, self.design, self.card_px)
            else:
                self._cache[key] = render_back(self.design, self.card_px)
        return self._cache[key]

    def _stock(self, rng: np.random.Generator) -> list[tuple[str, tuple[float, float], float]]:
        """A few face-down items in the stock zone (no labels: nothing to detect)."""
        zone = table_layout(self.scenario).of_kind("stock")[0]
        zx = [p[0] for p in zone.polygon]
        zy = [p[1] for p in zone.polygon]
        kind = "tile" if self.scenario.variant.family is Family.TILES else "card"
        centre = ((min(zx) + max(zx)) / 2, (min(zy) + max(zy)) / 2 - 20)
        return [(kind, (centre[0] + float(rng.normal(0, 6)), centre[1] + float(rng.normal(0, 6))),
                 float(rng.uniform(-25, 25))) for _ in range(4)]

    def plane(self, placements: Sequence[Placement], rng: np.random.Generator) -> _Plane:
        plane = _Plane(self.surface.copy())
        for kind, centre, angle in self.stock:
            face_down = self._render("", kind)
            h, w = face_down.alpha.shape
            m = _affine(w, h, angle, 1.0, (centre[0] * self.scale, centre[1] * self.scale))
            plane.paste(face_down.image, face_down.alpha, m, -1, rng, shadow=0.3)
        for p in placements:
            drawn = self._render(p.label, p.kind)
            h, w = drawn.alpha.shape
            angle = -math.degrees(math.atan2(p.along[1], p.along[0]))
            m = _affine(w, h, angle + float(rng.normal(0, 0.8)), 1.0,
                        (p.centre[0] * self.scale, p.centre[1] * self.scale))
            region = plane.new_id()
            if p.kind == "tile":
                painted = plane.paste(drawn.image, drawn.alpha, m, region, rng, shadow=0.3,
                                      side=((0.0, 2.0), self.style.side))
                plane.entities.append(_Entity(region, p.label, "tile", _apply(m, drawn.outline),
                                              region, painted))
            else:
                plane.paste(drawn.image, drawn.alpha, m, region, rng, shadow=0.25,
                            side=((0.0, 1.0), (150.0, 150.0, 150.0)))
                for corners in drawn.indices:
                    plane.entities.append(_Entity(region, p.label, "card", _apply(m, corners),
                                                  region))
        return plane


def _hand_mask(shape: tuple[int, int], tip: tuple[float, float], base: tuple[float, float],
               size: float) -> npt.NDArray[np.float32]:
    """A palm and fingers at ``tip``, an arm back to ``base`` (plane pixels)."""
    mask = np.zeros(shape, np.uint8)
    d = np.array(tip) - np.array(base)
    angle = math.degrees(math.atan2(d[1], d[0]))
    cv2.line(mask, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), 1, int(size * 1.1))
    cv2.ellipse(mask, (int(tip[0]), int(tip[1])), (int(size * 0.75), int(size * 0.6)), angle,
                0, 360, 1, -1)
    unit = d / (np.linalg.norm(d) + 1e-9)
    normal = np.array([-unit[1], unit[0]])
    for k in range(4):
        start = np.array(tip) + unit * size * 0.5 + normal * (k - 1.5) * size * 0.3
        end = start + unit * size * 0.7
        cv2.line(mask, (int(start[0]), int(start[1])), (int(end[0]), int(end[1])), 1,
                 max(2, int(size * 0.22)))
    return cv2.GaussianBlur(mask.astype(np.float32), (0, 0), 1.5)


@dataclass(frozen=True)
class _Shot:
    """One frame to draw: which table state, and where the hand is (None: no hand)."""

    state: int
    hand: tuple[tuple[float, float], tuple[float, float]] | None = None


def _seat_edge_point(layout: ZoneLayout, seat: int) -> tuple[float, float]:
    zone = layout.seat_zone(seat)
    if zone is None:
        return (TABLE_MM[0] / 2, TABLE_MM[1] + 100)
    xs = [p[0] for p in zone.polygon]
    ys = [p[1] for p in zone.polygon]
    dx, dy = zone.reading_direction
    mid = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)
    # the player sits beyond the band, on their right of the reading direction
    return (mid[0] - dy * 400, mid[1] + dx * 400)


def _changed_centre(before: Sequence[Placement], after: Sequence[Placement]
                    ) -> tuple[float, float]:
    old = {(p.label, round(p.centre[0]), round(p.centre[1])) for p in before}
    new = {(p.label, round(p.centre[0]), round(p.centre[1])) for p in after}
    moved = old ^ new
    if not moved:
        return (TABLE_MM[0] * 0.45, TABLE_MM[1] * 0.5)
    return (float(np.mean([m[1] for m in moved])), float(np.mean([m[2] for m in moved])))


def _steps_with_seats(scenario: Scenario) -> Iterator[tuple[TableStep | Press, int]]:
    """Each step with the seat whose hand does it (turn order from the presses)."""
    seat = scenario.start_seat
    n = len(scenario.players)
    for step in scenario.steps:
        yield step, seat
        if isinstance(step, Press) and step.action == "end_turn":
            seat = ((step.seat if step.seat is not None else seat) + 1) % n


def renderable(scenario: Scenario, snapshot: TableStep) -> bool:
    """Whether every item is of the variant's material (else it is an injected misreading)."""
    items: list[Item] = [it for m in snapshot.melds for it in m]
    items += [it for rows in snapshot.seats.values() for m in rows for it in m]
    items += list(snapshot.discards)
    family = scenario.variant.family
    return all(it.family is None or it.family == family
               for it in items if hasattr(it, "family"))


def read_scenario(path: str | Path) -> Scenario:
    """The scenario in the JSON file at ``path``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ScenarioError(f"cannot read scenario {str(path)!r}: {error}") from None
    return scenario_from_text(text, str(path))


def render_video(scenario_path: str | Path, out: str | Path,
                 settings: VideoSettings | None = None) -> dict[str, Any]:
    """Render the scenario to ``out`` and its truth to ``out`` with TRUTH_SUFFIX; the header."""
    settings = settings or VideoSettings()
    scenario = read_scenario(scenario_path)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    painter = _Painter(scenario, settings)
    layout = table_layout(scenario)
    rng = np.random.default_rng(settings.seed + 1)
    dt = 1.0 / settings.fps
    # the table states, the frames and the presses on the video's clock
    states: list[list[Placement]] = [[]]
    shots: list[_Shot] = [_Shot(0)] * round(settings.lead_s * settings.fps)
    presses: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    hand_frames = max(2, round(settings.hand_s * settings.fps))
    still_frames = round(settings.still_s * settings.fps)
    for step, seat in _steps_with_seats(scenario):
        if isinstance(step, Press):
            presses.append({"t": round((len(shots) - 1) * dt, 6), "press": step.action,
                            "seat": step.seat, "scenario_t": step.t})
            continue
        if not renderable(scenario, step):
            skipped.append({"scenario_t": step.t, "reason": "an item not of the variant's set "
                            "(an injected misreading, not a table a camera can see)"})
            continue
        placements = layout_snapshot(scenario, step, painter.style, painter.design)
        target = _changed_centre(states[-1], placements)
        origin = _seat_edge_point(layout, seat)
        states.append(placements)
        for k in range(hand_frames):
            # in, over the change, out; the items change while the hand is over them
            reach = math.sin(math.pi * (k + 1) / (hand_frames + 1))
            tip = (origin[0] + (target[0] - origin[0]) * reach,
                   origin[1] + (target[1] - origin[1]) * reach)
            state = len(states) - 2 if k < hand_frames // 2 else len(states) - 1
            shots.append(_Shot(state, (tip, origin)))
        settled = round((len(shots) - 1) * dt, 6)
        steps.append({"scenario_t": step.t, "settled_t": settled,
                      "melds": len(step.melds), "seats": {str(k): len(v) for k, v in
                                                          step.seats.items()}})
        shots.extend([_Shot(len(states) - 1)] * still_frames)
    shots.extend([_Shot(len(states) - 1)] * round(settings.lead_s * settings.fps))
    # draw
    width, height = settings.width, settings.height
    scale = painter.scale
    corners_img = np.float32(camera_corners(width, height))
    corners_plane = np.float32([[0, 0], [TABLE_MM[0] * scale, 0],
                                [TABLE_MM[0] * scale, TABLE_MM[1] * scale],
                                [0, TABLE_MM[1] * scale]])
    homography = cv2.getPerspectiveTransform(corners_plane, corners_img).astype(np.float64)
    planes = [painter.plane(s, rng) for s in states]
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    light = (1.05 - 0.25 * ((xx / width - 0.45) ** 2 + (yy / height - 0.4) ** 2)).astype(
        np.float32)
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter.fourcc(*settings.codec), settings.fps,
                             (width, height))
    if not writer.isOpened():
        raise ScriptedError(f"OpenCV cannot write {settings.codec!r} video to {str(out)!r}")
    truth_path = out.with_name(out.stem + TRUTH_SUFFIX)
    header = {
        "kind": "header", "video": out.name, "scenario": str(scenario_path),
        "variant": scenario.variant.id, "players": list(scenario.players),
        "width": width, "height": height, "fps": settings.fps, "frames": len(shots),
        "table_mm": list(TABLE_MM),
        "image_corners": [
            [round(float(c[0]), 3), round(float(c[1]), 3)] for c in camera_corners(width, height)
        ],
        "presses": presses, "steps": steps, "skipped": skipped, "seed": settings.seed,
    }
    hand_size = 55.0 * scale
    try:
        with truth_path.open("w", encoding="utf-8") as truth:
            truth.write(json.dumps(header) + "\n")
            for index, shot in enumerate(shots):
                base = planes[shot.state]
                image, ids = base.image.copy(), base.ids.copy()
                frame_plane = _Plane.__new__(_Plane)
                frame_plane.image, frame_plane.ids = image, ids
                if shot.hand is not None:
                    tip, origin = shot.hand
                    mask = _hand_mask(ids.shape, (tip[0] * scale, tip[1] * scale),
                                      (origin[0] * scale, origin[1] * scale), hand_size)
                    frame_plane.occlude(mask, np.array((110.0, 150.0, 205.0), np.float32))
                img = cv2.warpPerspective(image, homography, (width, height),
                                          flags=cv2.INTER_LINEAR,
                                          borderValue=(40.0, 45.0, 50.0))
                noise = np.random.default_rng([settings.seed, index]).normal(
                    0, 1.5, (height, width, 1)).astype(np.float32)
                frame = np.clip(img * light[..., None] + noise + 0.5, 0, 255).astype(np.uint8)
                writer.write(frame)
                items = []
                for entity in base.entities:
                    visible = frame_plane.visible_share(entity)
                    need = TILE_MIN_VISIBLE if entity.kind == "tile" else INDEX_MIN_VISIBLE
                    if visible < need:
                        continue
                    poly = cv2.perspectiveTransform(entity.polygon.reshape(-1, 1, 2),
                                                    homography).reshape(-1, 2)
                    x1, y1 = poly.min(axis=0)
                    x2, y2 = poly.max(axis=0)
                    items.append({"label": entity.label, "kind": entity.kind,
                                  "box": [round(float(v), 2) for v in (x1, y1, x2, y2)]})
                truth.write(json.dumps({"frame": index, "t": round(index * dt, 6),
                                        "hand": shot.hand is not None,
                                        "detections": items}) + "\n")
    finally:
        writer.release()
    return header


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tabletop.studio.synth.scripted",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--out", required=True, help="the video file (.mp4 or .avi)")
    parser.add_argument("--size", default="640x360")
    parser.add_argument("--fps", type=float, default=VideoSettings.fps)
    parser.add_argument("--seed", type=int, default=VideoSettings.seed)
    parser.add_argument("--codec", default=VideoSettings.codec)
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.lower().split("x"))
    header = render_video(args.scenario, args.out, VideoSettings(
        width=width, height=height, fps=args.fps, seed=args.seed, codec=args.codec))
    size = Path(args.out).stat().st_size
    print(f"{args.out}: {header['frames']} frames, {header['frames'] / header['fps']:.1f} s, "
          f"{size / 1e6:.2f} MB; {len(header['skipped'])} step(s) skipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
