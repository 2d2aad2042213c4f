"""Game replays composed from real photos: tile crops laid meld by meld on a real table.

    replay = compose_game(("Ana", "Ben"), seed=3)      # the short Sabra round
    replay.write("out/")                  # video.mp4, truth.jsonl, zones.json
    for frame in replay.frames():         # or serve the frames without a file
        ...

What a replay is made of:

* **A crop bank** (:class:`CropBank`): every labelled tile of the real photos in
  ``<realdata>/rummikub-tiles`` cut out along its box, by label.  A crop whose box
  lies for more than ``max_covered`` (0.25) under other labelled boxes (tiles heaped
  on each other) is left out; so is one wider than ``max_aspect`` (default 1.1:
  tiles turned by ~45 degrees stay, with the table in their box's corners, as in
  sabra-dev; :func:`compose_game` keeps only those lying square to the camera,
  ``UPRIGHT_ASPECT``) and, unless ``sideways`` is given, one whose box is wider than
  tall (a tile lying on its side, else turned upright).  ``use_images`` / ``holdout``
  say which photos the crops may come from, so that a model adapted on some photos
  can be measured on crops from the others.  The crops of a label are chosen among
  with the replay's seeded generator; two tiles of a table never share a crop while
  the label has another.  Every crop is drawn at one tile size (``tile_height``).
* **A background**: by default the first frame of ``replays/sabra-dev/video.mp4``,
  the real table of that replay before anything lies on it (the shipped model finds
  no tile in it), or any image given, scaled to the frame size.
* **A script** (:class:`ReplayStep` list): each step is a settled table state: the
  shared melds (tokens in table order) and, at the end of a round, each seat's
  rack laid open in that seat's zone.  A step holds the whole table: a meld left
  out is gone, a seat left out has nothing laid.  A meld of the step before that is
  kept, or only grown at its ends (a tile appended to a run; each meld keeps room for
  one more tile before it and two after it), stays where it lay, tile for tile; any
  other meld (new, rearranged, or grown past its room) is laid with new tiles in the
  meld area, on the line with the fewest melds that has room for it (lines
  ``LINE_PITCH`` tile heights apart), a seeded distance after the melds there.  A
  step of a variant with a discard pile may hold the pile (``discards``, the first
  card laid first) in the discard zone: squared (``ReplaySettings.squared_pile``,
  each discard on the one before, a little off it, only the top showing) or fanned
  along the zone; the cards still at its bottom stay where they lay.
* **Zones** (:class:`tabletop.calibration.zones.ZoneLayout`, in image pixels, ``table_size`` =
  the frame size): ``calibration.zones.default_layout`` on a flat table the size of the
  frame (seat 0 at the bottom edge, then clockwise as seen from above: with four
  players seat 1 left, seat 2 top, seat 3 right; with two, seat 1 at the top), seen
  through the camera.  Racks lie in a row (or more, where the band is deep enough)
  inside their seat's band, read along its reading direction and turned to face that
  seat (``racks_face_seat``); melds lie in the meld area only, never in a band or the
  stock strip.
* **The camera**: the flat table is seen with a mild tilt (its far, top edge
  ``1 - 2 * tilt`` as wide as its near one), so tiles far away are drawn smaller;
  the background photo is used as it is.  Each frame gets a little sensor noise
  and a JPEG round trip.
* **Moves**: each step is made by a hand (a skin-coloured palm with four fingers,
  like sabra-dev's) that comes in from the edge of the seat that makes it, covers
  the place of the change, over which the table changes, and leaves; then the table
  stays still.  A step that changes several places (melds in different places,
  racks of several seats) has one hand for each, coming from the seat that owns it.

Random games (:func:`random_sabra_script`, :func:`random_game`,
:func:`compose_random_game`): a seeded, plausible Sabra game of 4 to 8 steps, each one
player's move that lays a new legal meld (runs of 3-5, sets of 3-4 colours, now and then
a joker) or grows one at an end within the room the layout keeps for it, at most two of
a tile, every player opening with 30 or more, sometimes ending with the racks laid open;
every step is checked to lay out (:func:`layout_problem`) and only labels the crop bank
has are laid.  :func:`photo_split` is the fixed split of the photos into those a model
may be adapted on (``adapt``) and those it is measured on (``measure``);
``bench/replays.py`` runs the live pipeline on many such replays and scores it.

Output (:meth:`Replay.write`): ``video.mp4`` (MP4, ``mp4v`` or, where OpenCV has
no ``mp4v`` writer, ``avc1``; read back to check its frame count), ``zones.json``
(``ZoneLayout.save``) and ``truth.jsonl`` in the form of
``replays/sabra-dev/truth.jsonl``: one line per step, ``{"t": ..., "melds":
[...]}`` with ``t`` the video time of the first frame after the hand has left and
``melds`` the whole shared table (meld strings sorted, each in table order), plus
``"seats": {"0": "R3 K7", ...}`` on a step that lays racks open and, in a replay
with a discard pile, ``"discards": "7C KD"`` (the pile, its top last) on every line.  Its first line
is a header, ``{"kind": "header", ...}`` (variant, players, fps, size, frames,
zones file name, seed, and per step its times and button presses), which a reader
of the sabra-dev form skips: it is the only line with a ``kind``.

Everything is seeded: the same script, photos and settings give the same frames.

Card games (a card variant's ``variant``) are laid by the same composer with cards drawn
round real card indices: :mod:`tabletop.studio.card_replay`.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.calibration.zones import Zone, ZoneLayout, default_layout
from tabletop.engine.scenario import PRESSES
from tabletop.vision.labels import CARD_LABELS, JOKER, TILE_LABELS

Image = npt.NDArray[np.uint8]
Point = tuple[float, float]
Box = tuple[float, float, float, float]

REALDATA_ENV = "TABLETOP_REALDATA"
"""Where the real photos are, when not at ``<repo>/../shared/realdata``."""
TILES_FOLDER = "rummikub-tiles"
BACKGROUND_VIDEO = Path("replays") / "sabra-dev" / "video.mp4"
VIDEO_NAME = "video.mp4"
TRUTH_NAME = "truth.jsonl"
ZONES_NAME = "zones.json"
CODECS = ("mp4v", "avc1")
"""Tried in this order: opencv-python's FFmpeg writes ``mp4v``; ``avc1`` needs an H.264
encoder that most builds lack."""
SIDEWAYS_ASPECT = 1.1
"""A box this many times wider than tall holds a tile lying on its side."""
UPRIGHT_ASPECT = 0.9
""":func:`compose_game`'s widest crop: tiles lying square to the camera, upright or upside
down.  On frames composed with every crop of the photos, one at a time in rows like
melds, the shipped model read 262 of the 264 crops this narrow right, but only 102 of
the 116 between this and ``SIDEWAYS_ASPECT`` (tiles turned by about 45 degrees)."""
LINE_PITCH = 1.4
"""Lines of melds lie at least this many tile heights apart."""
MELD_GAP = 1.2
"""Melds on one line lie at least this many tile widths apart, beyond each one's room
to grow."""
TILE_COPIES = 2
"""A Rummikub set has two of each numbered tile and two jokers."""
SKIN_BGR = (120.0, 150.0, 215.0)
"""sabra-dev's hand colour."""
REPO_ROOT = Path(__file__).resolve().parent.parent


SHARED_REALDATA = Path("/work/shared/realdata")


class ReplayError(ValueError):
    """A script, photo folder or setting a replay cannot be made from; one line quoting it."""


def find_realdata(explicit: str | Path | None = None) -> Path | None:
    """The real-data folder: ``explicit``, else ``$TABLETOP_REALDATA``, else
    ``<repo>/../shared/realdata``, else ``/work/shared/realdata`` (where the development
    and CI machines keep it, wherever the checkout is); None where none is a folder."""
    candidates = [explicit] if explicit is not None else [
        os.environ.get(REALDATA_ENV), REPO_ROOT.parent / "shared" / "realdata",
        SHARED_REALDATA]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def require_realdata(explicit: str | Path | None = None) -> Path:
    found = find_realdata(explicit)
    if found is None:
        where = repr(str(explicit)) if explicit is not None else (
            f"${REALDATA_ENV} or {str(REPO_ROOT.parent / 'shared' / 'realdata')!r}")
        raise ReplayError(f"no real-data folder at {where}")
    return found


# --- the crop bank -------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Crop:
    """One labelled tile cut out of a real photo, standing upright (taller than wide)."""

    label: str
    image: Image
    photo: str
    """The photo's short name (``rummy-36``; see :func:`photo_name`)."""
    box: Box
    covered: float
    """The share of its box under other labelled boxes of the photo."""
    turned: bool = False
    """Its box was wider than tall (a tile on its side), and the crop is turned a quarter."""


def photo_name(path: str) -> str:
    """A photo's short name: its file name up to Roboflow's ``_jpeg.rf...`` suffix
    (``images/rummy-36_jpeg.rf.b6e8.jpg`` -> ``rummy-36``), or its stem."""
    name = Path(path).name
    return name.split("_jpeg")[0] if "_jpeg" in name else Path(name).stem


def _covered(boxes: npt.NDArray[np.float64], i: int) -> float:
    """The share of box ``i`` under the other boxes (their union, drawn on a small grid)."""
    x1, y1, x2, y2 = boxes[i]
    grid = np.zeros((32, 32), bool)
    xs = np.linspace(x1, x2, 32, endpoint=False) + (x2 - x1) / 64
    ys = np.linspace(y1, y2, 32, endpoint=False) + (y2 - y1) / 64
    for j, (a1, b1, a2, b2) in enumerate(boxes):
        if j != i:
            grid |= ((ys >= b1) & (ys < b2))[:, None] & ((xs >= a1) & (xs < a2))[None, :]
    return float(grid.mean())


class LabelledPhotos:
    """The labelled photos of one real-data folder (``annotations.jsonl`` beside its images)
    and the items of ``kind`` on them; ``use_images`` / ``holdout`` (short names, file
    names or paths as in the annotations) say which are used."""

    def __init__(self, folder: Path, kind: str, use_images: Iterable[str] | None = None,
                 holdout: Iterable[str] = ()) -> None:
        self.folder = folder
        annotations = folder / "annotations.jsonl"
        try:
            lines = annotations.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise ReplayError(f"cannot read {str(annotations)!r}: {error.strerror}") from None
        self.records = [json.loads(line) for line in lines if line.strip()]
        self.names = [photo_name(r["image"]) for r in self.records]
        aliases = {alias: photo_name(r["image"]) for r in self.records
                   for alias in (r["image"], Path(r["image"]).name, photo_name(r["image"]))}
        self.used = set(self.names) if use_images is None else set(_resolve(use_images,
                                                                             aliases))
        self.used -= set(_resolve(holdout, aliases))
        self.kind = kind
        self.where: dict[str, set[str]] = {}
        """Per label, the photos (used or not) that show it."""
        for record, name in zip(self.records, self.names, strict=True):
            for d in self._items(record):
                self.where.setdefault(str(d["label"]).upper(), set()).add(name)

    def _items(self, record: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [d for d in record.get("detections", []) if d.get("kind", "tile") == self.kind]

    def wanted(self) -> Iterator[tuple[str, Image, list[dict[str, Any]]]]:
        """(short name, image, items of the kind) of each used photo showing any."""
        for record, name in zip(self.records, self.names, strict=True):
            items = self._items(record)
            if name not in self.used or not items:
                continue
            image = cv2.imread(str(self.folder / record["image"]))
            if image is None:
                raise ReplayError(f"cannot read the photo "
                                  f"{str(self.folder / record['image'])!r}")
            yield name, image, items

    def boxes(self) -> Iterator[tuple[str, Image, int, str, Box, float]]:
        """(photo, image, the item's place in it, label, box, the share of the box under
        the photo's other boxes) of every item of the kind on the used photos."""
        for name, image, items in self.wanted():
            boxes = np.array([d["box"] for d in items], np.float64)
            for i, d in enumerate(items):
                x1, y1, x2, y2 = (float(v) for v in boxes[i])
                yield name, image, i, str(d["label"]).upper(), (x1, y1, x2, y2), _covered(
                    boxes, i)


class CropBank:
    """The tile crops of the photos in use, by label (see the module's docstring)."""

    def __init__(self, crops: Iterable[Crop], photos: Sequence[str], used: Sequence[str],
                 dropped: Mapping[str, Sequence[str]] | None = None,
                 where: Mapping[str, Iterable[str]] | None = None) -> None:
        self._by_label: dict[str, list[Crop]] = {}
        for crop in crops:
            self._by_label.setdefault(crop.label, []).append(crop)
        self.photos = tuple(photos)
        """Every photo of the annotations (short names)."""
        self.used = tuple(used)
        """The photos crops were taken from."""
        self.dropped = {label: tuple(names) for label, names in (dropped or {}).items()}
        """Per label, the used photos whose crops of it were left out (covered, sideways)."""
        self._where = {label: tuple(sorted(names)) for label, names in (where or {}).items()}
        """Per label, every photo that shows it (used or not): for :meth:`check`'s line."""

    @classmethod
    def load(cls, realdata: str | Path | None = None, *, use_images: Iterable[str] | None = None,
             holdout: Iterable[str] = (), max_covered: float = 0.25,
             max_aspect: float = SIDEWAYS_ASPECT, sideways: bool = False) -> CropBank:
        """The crops of ``<realdata>/rummikub-tiles``.  ``use_images``: only these photos
        (short names, file names or paths as in the annotations); ``holdout``: never these.
        ``max_aspect``: the widest crop kept (width over height, once upright; a tile
        lying square to the camera is ~0.74, one turned by 45 degrees ~1.0 with the table
        showing in its box's corners).  ``sideways``: keep tiles lying on their side too
        (boxes wider than ``SIDEWAYS_ASPECT``), turned upright."""
        folder = require_realdata(realdata) / TILES_FOLDER
        photos = LabelledPhotos(folder, "tile", use_images, holdout)
        crops: list[Crop] = []
        dropped: dict[str, set[str]] = {}
        for name, image, _, label, (x1, y1, x2, y2), covered in photos.boxes():
            aspect = (x2 - x1) / max(1e-6, y2 - y1)
            wide = aspect > SIDEWAYS_ASPECT
            upright_aspect = 1 / aspect if wide else aspect
            if covered > max_covered or (wide and not sideways) or upright_aspect > max_aspect:
                dropped.setdefault(label, set()).add(name)
                continue
            piece = image[max(0, round(y1)):round(y2), max(0, round(x1)):round(x2)]
            if piece.size == 0:
                continue
            if wide:
                piece = cv2.rotate(piece, cv2.ROTATE_90_CLOCKWISE)
            crops.append(Crop(label, np.ascontiguousarray(piece), name, (x1, y1, x2, y2),
                              round(covered, 3), wide))
        return cls(crops, photos.names, sorted(photos.used),
                   {k: sorted(v) for k, v in dropped.items()}, photos.where)

    def labels(self) -> dict[str, int]:
        """How many crops each label has."""
        return {label: len(crops) for label, crops in sorted(self._by_label.items())}

    def of(self, label: str) -> tuple[Crop, ...]:
        return tuple(self._by_label.get(label, ()))

    def check(self, labels: Iterable[str]) -> None:
        """ReplayError (one line) for the first label without a crop, saying which
        photos lack it and where it is otherwise."""
        for label in labels:
            if self._by_label.get(label):
                continue
            elsewhere = [n for n in self._where.get(label, ()) if n not in self.used]
            left_out = self.dropped.get(label, ())
            detail = []
            if left_out:
                detail.append(f"its crops in {', '.join(left_out)} are left out (covered by "
                              "other tiles, turned or on their side)")
            if elsewhere:
                detail.append(f"it is only in photos not used: {', '.join(elsewhere)}")
            if not left_out and not elsewhere:
                detail.append("no photo has it")
            not_used = [n for n in self.photos if n not in self.used]
            if len(self.used) <= 8:
                lacking = f"the photos used ({', '.join(self.used)})"
            elif not not_used:
                lacking = f"all {len(self.used)} photos"
            elif len(not_used) <= 8:
                lacking = f"all photos but {', '.join(not_used)}"
            else:
                lacking = f"the {len(self.used)} photos used"
            raise ReplayError(f"no crop of {label}: {lacking} lack it; {'; '.join(detail)}")

    def choose(self, label: str, rng: np.random.Generator, taken: Iterable[int] = ()) -> int:
        """The index (in :meth:`of`) of a crop of ``label``, not one of ``taken`` while
        there is another."""
        crops = self._by_label.get(label)
        if not crops:
            self.check([label])
        assert crops is not None
        busy = set(taken)
        free = [i for i in range(len(crops)) if i not in busy] or list(range(len(crops)))
        return int(free[int(rng.integers(len(free)))])


def _resolve(names: Iterable[str], aliases: Mapping[str, str]) -> list[str]:
    out = []
    for name in names:
        short = aliases.get(name) or aliases.get(photo_name(name))
        if short is None:
            raise ReplayError(f"no photo {name!r} in the annotations (names like "
                              f"{next(iter(sorted(set(aliases.values()))), 'rummy-36')!r})")
        out.append(short)
    return out


# --- the script --------------------------------------------------------------------
@dataclass(frozen=True)
class ReplayStep:
    """One settled table state and the move that makes it (see the module's docstring)."""

    melds: tuple[tuple[str, ...], ...] = ()
    """The whole shared table, each meld's tokens in table order."""
    seats: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    """Racks laid open: each seat's items, read along its reading direction."""
    seat: int | None = None
    """Whose hand changes the shared melds (None: whose turn it is: seat 0 first, the
    next after each ``end_turn`` press, or after every step where no step presses)."""
    presses: tuple[str, ...] = ()
    """Buttons pressed once the step has settled (a test's or the lead's cue: they are
    written to the header and :class:`StepTiming`, not drawn)."""
    discards: tuple[str, ...] = ()
    """The discard pile, the first card laid first (its top last): a card added on top is
    a discard, the top gone is taken.  Only where the variant has a discard pile."""

    @classmethod
    def from_json(cls, obj: Any, where: str = "step") -> ReplayStep:
        """``{"melds": ["R3 R4 R5", ...], "seats": {"1": "K3 B7"}, "seat": 0,
        "press": ["end_turn"]}``; melds may also be one string with ``|`` between them."""
        if not isinstance(obj, Mapping):
            raise ReplayError(f"{where}: a step is an object with melds, not {obj!r:.80}")
        unknown = set(obj) - {"melds", "seats", "seat", "press", "presses", "discards", "t"}
        if unknown:
            raise ReplayError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        raw = obj.get("melds", [])
        if isinstance(raw, str):
            raw = raw.split("|")
        if not isinstance(raw, Sequence):
            raise ReplayError(f"{where}: melds are a list of strings, not {raw!r:.80}")
        melds = tuple(tuple(str(m).split()) for m in raw if str(m).strip())
        seats_raw = obj.get("seats", {}) or {}
        if not isinstance(seats_raw, Mapping):
            raise ReplayError(f"{where}: seats map a seat index to its items, not "
                              f"{seats_raw!r:.80}")
        seats: dict[int, tuple[str, ...]] = {}
        for key, items in seats_raw.items():
            try:
                seat = int(key)
            except ValueError:
                raise ReplayError(f"{where}: seat {key!r} is not a seat index") from None
            text = " ".join(items) if isinstance(items, Sequence) and not isinstance(
                items, str) else str(items)
            seats[seat] = tuple(text.replace("|", " ").split())
        presses = obj.get("presses", obj.get("press", ()))
        if isinstance(presses, str):
            presses = (presses,)
        seat_raw = obj.get("seat")
        try:
            seat_of = None if seat_raw is None else int(seat_raw)
        except (TypeError, ValueError):
            raise ReplayError(f"{where}: seat must be a seat index, not {seat_raw!r}") from None
        pile = obj.get("discards", ()) or ()
        if isinstance(pile, str):
            pile = pile.split()
        if not isinstance(pile, Sequence):
            raise ReplayError(f"{where}: discards are a string of cards, not {pile!r:.80}")
        return cls(melds, seats, seat_of, tuple(str(p) for p in presses),
                   tuple(str(t) for t in pile))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"melds": [" ".join(m) for m in self.melds]}
        if self.seats:
            out["seats"] = {str(k): " ".join(v) for k, v in sorted(self.seats.items())}
        if self.seat is not None:
            out["seat"] = self.seat
        if self.presses:
            out["press"] = list(self.presses)
        if self.discards:
            out["discards"] = " ".join(self.discards)
        return out


def _token(token: str, where: str, cards: bool = False) -> str:
    """The drawn label of a script token (a joker's ``=`` annotation dropped); ``cards``:
    the replay lays cards, not tiles."""
    upper = token.strip().upper()
    if upper.startswith(JOKER + "="):
        upper = JOKER
    if cards:
        if upper in CARD_LABELS:
            return upper
        raise ReplayError(f"{where}: {token!r} is no card (a rank A, 2..10, J, Q or K with "
                          "S, H, D or C, or JK)")
    if upper in TILE_LABELS:
        return upper
    if upper in CARD_LABELS:
        raise ReplayError(f"{where}: {token!r} is a card; replays lay tiles "
                          "(K, B, O or R with 1..13, or JK)")
    raise ReplayError(f"{where}: unknown token {token!r} (tiles are K, B, O or R with 1..13, "
                      "or JK)")


def check_steps(steps: Sequence[ReplayStep], players: int, *, cards: bool = False
                ) -> list[ReplayStep]:
    """The steps with every token as the drawn label (upper case, jokers bare);
    ReplayError (one line) for an unknown token (a card where ``cards`` is false, a tile
    where it is true), a seat not at the table, a button that does not exist or more
    copies of an item than two sets or decks have."""
    if not steps:
        raise ReplayError("a replay needs at least one step")
    out = []
    for n, step in enumerate(steps, 1):
        where = f"step {n}"
        melds = tuple(tuple(_token(t, where, cards) for t in meld) for meld in step.melds)
        seats = {}
        for seat, items in sorted(step.seats.items()):
            if not 0 <= seat < players:
                raise ReplayError(f"{where}: no seat {seat} at a table of {players}")
            seats[seat] = tuple(_token(t, where, cards) for t in items)
        if step.seat is not None and not 0 <= step.seat < players:
            raise ReplayError(f"{where}: no seat {step.seat} at a table of {players}")
        for press in step.presses:
            if press not in PRESSES:
                raise ReplayError(f"{where}: unknown button {press!r} (one of "
                                  f"{', '.join(PRESSES)})")
        pile = tuple(_token(t, where, cards) for t in step.discards)
        counts = Counter(t for meld in (*melds, *seats.values(), pile) for t in meld)
        over = sorted(label for label, k in counts.items() if k > TILE_COPIES)
        if over:
            raise ReplayError(f"{where}: {counts[over[0]]} copies of {over[0]} ("
                              f"{'two decks have' if cards else 'a set has'} {TILE_COPIES})")
        out.append(ReplayStep(melds, seats, step.seat, step.presses, pile))
    return out


def load_script(path: str | Path) -> tuple[list[ReplayStep], dict[str, Any]]:
    """The steps of a script file and its other keys (``players``, ``variant``): a JSON
    list of steps, or ``{"steps": [...], "players": [...], "variant": "sabra"}``."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ReplayError(f"cannot read the script {str(path)!r}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ReplayError(f"the script {str(path)!r} is not JSON: {error.msg} at line "
                          f"{error.lineno}") from None
    extra: dict[str, Any] = {}
    if isinstance(obj, Mapping):
        extra = {k: v for k, v in obj.items() if k != "steps"}
        obj = obj.get("steps")
    if not isinstance(obj, list):
        raise ReplayError(f"the script {str(path)!r} holds no list of steps")
    return [ReplayStep.from_json(s, f"step {n}") for n, s in enumerate(obj, 1)], extra


def sabra_round() -> list[ReplayStep]:
    """The short 2-player Sabra round of :func:`compose_game`: seat 0 opens with the run
    R10 R11 R12 (33), seat 1 with the set K11 B11 R11 (33), seat 0 appends R13 and is
    out, and seat 1 lays its rack K2 R3 B8 open (seat 0's is empty); each step names the
    buttons pressed after it (end_turn, end_turn, out, score).

    Its labels have 3 to 8 crops each no wider than ``UPRIGHT_ASPECT``, and the shipped
    model read every one of them right on a composed frame, at a confidence of 0.72 or
    more upright (the melds' labels) and 0.65 or more upside down (the rack's: seat 1's
    rack faces seat 1).  O11, first in the set, read as R11 on a few frames of one seed (0.4), so it
    was replaced."""
    run = ("R10", "R11", "R12")
    group = ("K11", "B11", "R11")
    return [
        ReplayStep((run,), seat=0, presses=("end_turn",)),
        ReplayStep((run, group), seat=1, presses=("end_turn",)),
        ReplayStep(((*run, "R13"), group), seat=0, presses=("out",)),
        ReplayStep(((*run, "R13"), group), seats={0: (), 1: ("K2", "R3", "B8")},
                   presses=("score",)),
    ]


# --- random games ------------------------------------------------------------------
COLOURS = ("K", "B", "O", "R")
"""The tile colours, as labels spell them (black, blue, orange, red)."""
ROOM_BEFORE = 1
ROOM_AFTER = 2
"""How far a meld may grow where it lies (the composer keeps room for one tile before it
and two after it); a random game grows melds no further, so its tiles never move."""


@dataclass
class _PlayMeld:
    """A meld of a random game: its tokens in table order and what it is."""

    tokens: list[str]
    colour: str | None
    """A run's colour (None: a set)."""
    number: int
    """A run's first rank (its joker standing in where it lies), or a set's number."""
    before: int = 0
    after: int = 0

    @property
    def is_run(self) -> bool:
        return self.colour is not None


def grown_table(table: Sequence[Any], index: int, meld: Any) -> tuple[list[str], list[Any]]:
    """(the tokens added, the table) when meld ``index`` of ``table`` (values with
    ``tokens``) grows into ``meld``."""
    added = list(meld.tokens)
    for token in table[index].tokens:
        added.remove(token)
    return added, [*table[:index], meld, *table[index + 1:]]


def _meld_ok(tokens: Sequence[str], variant: Any) -> bool:
    from tabletop.engine.items import parse_items

    return bool(variant.analyse(parse_items(list(tokens))).valid)


def random_sabra_script(rng: np.random.Generator, players: int = 2, *,
                        labels: Iterable[str] | None = None, steps: tuple[int, int] = (4, 8),
                        joker: float = 0.2, extend: float = 0.35, racks: float = 0.5,
                        opening: int | None = None,
                        fits: Callable[[Sequence[ReplayStep]], bool] | None = None,
                        ) -> list[ReplayStep]:
    """A plausible Sabra game of ``steps[0]``..``steps[1]`` steps (both included), seats
    taking turns from seat 0: each meld step is one player's move that lays a new meld (a
    run of 3-5 tiles of one colour, or a set of one number in 3 or 4 colours; with chance
    ``joker`` one of its tiles is a joker while one is left) or, with chance ``extend``,
    grows a meld at one end (a run by the next or previous number, a set of three by a
    fourth colour) within the room the composer keeps for it (``ROOM_BEFORE``,
    ``ROOM_AFTER``).  A player's first move is a new meld worth ``opening`` or more
    (None: Sabra's 30).  Every meld is legal by ``engine.variants`` (Sabra); the table and
    racks hold at most two of a tile and two jokers; only ``labels`` are laid (default:
    every tile label; pass the labels of a :class:`CropBank` so every tile has a crop).
    With chance ``racks`` the last step lays the racks open in the seat zones: the player
    of the last move went out (an empty rack), each other seat shows 2-6 tiles; its steps
    press ``end_turn``, the last move ``out`` and the racks ``score``.

    ``fits``: asked with the steps so far plus each candidate step; a candidate it refuses
    (the melds do not fit the meld area: :func:`layout_problem`) is not played, and where
    nothing fits any more the game ends early.  Numbers and colours are drawn evenly (the
    first moves' 30 points favour high numbers), so over many seeds every tile turns up."""
    from tabletop.engine.variants import find_variant

    variant = find_variant("sabra")
    lowest, highest = steps
    if not 1 <= lowest <= highest:
        raise ReplayError(f"steps must be a range like (4, 8), not {steps!r}")
    if players < 2:
        raise ReplayError(f"a game needs two or more players, not {players}")
    allowed = set(TILE_LABELS if labels is None else (str(x).upper() for x in labels))
    need = variant.initial_meld_required if opening is None else opening
    total = int(rng.integers(lowest, highest + 1))
    with_racks = total >= 2 and bool(rng.random() < racks)
    meld_steps = total - 1 if with_racks else total
    table: list[_PlayMeld] = []
    counts: Counter[str] = Counter()
    opened: set[int] = set()
    out: list[ReplayStep] = []

    def free(label: str, more: int = 1) -> bool:
        return label in allowed and counts[label] + more <= TILE_COPIES

    def with_joker(tokens: list[str]) -> list[str]:
        if rng.random() < joker and free(JOKER):
            tokens = list(tokens)
            tokens[int(rng.integers(len(tokens)))] = JOKER
        return tokens

    def new_meld() -> _PlayMeld:
        if rng.random() < 0.55:
            colour = COLOURS[int(rng.integers(4))]
            length = int(rng.choice([3, 4, 5], p=[0.5, 0.3, 0.2]))
            low = int(rng.integers(1, 15 - length))
            tokens = [f"{colour}{n}" for n in range(low, low + length)]
            return _PlayMeld(with_joker(tokens), colour, low)
        number = int(rng.integers(1, 14))
        size = 3 if rng.random() < 0.7 else 4
        colours = [COLOURS[int(i)] for i in rng.permutation(4)[:size]]
        return _PlayMeld(with_joker([f"{c}{number}" for c in colours]), None, number)

    def grown() -> tuple[int, _PlayMeld] | None:
        index = int(rng.integers(len(table)))
        meld = table[index]
        ends: list[tuple[str, str]] = []  # (where, token)
        if meld.is_run:
            last = meld.number + len(meld.tokens) - 1
            if last < 13 and meld.after < ROOM_AFTER:
                ends.append(("after", f"{meld.colour}{last + 1}"))
            if meld.number > 1 and meld.before < ROOM_BEFORE:
                ends.append(("before", f"{meld.colour}{meld.number - 1}"))
        elif len(meld.tokens) < 4:
            there = {t[0] for t in meld.tokens if t != JOKER}
            ends.extend(("after", f"{c}{meld.number}") for c in COLOURS if c not in there)
        if not ends:
            return None
        where, token = ends[int(rng.integers(len(ends)))]
        if rng.random() < joker / 2 and free(JOKER):
            token = JOKER
        if where == "after":
            return index, replace(meld, tokens=[*meld.tokens, token], after=meld.after + 1)
        return index, replace(meld, tokens=[token, *meld.tokens], number=meld.number - 1,
                              before=meld.before + 1)

    def step_of(melds: Sequence[_PlayMeld], seat: int) -> ReplayStep:
        return ReplayStep(tuple(tuple(m.tokens) for m in melds), seat=seat,
                          presses=("end_turn",))

    for k in range(meld_steps):
        seat = k % players
        chosen: tuple[list[_PlayMeld], _PlayMeld, list[str]] | None = None
        for attempt in range(200):
            grow = bool(table) and seat in opened and (
                rng.random() < extend or attempt >= 100)
            if grow:
                change = grown()
                if change is None:
                    continue
                added, melds = grown_table(table, *change)
                meld = change[1]
            else:
                meld = new_meld()
                added = list(meld.tokens)
                melds = [*table, meld]
            if not all(free(t, added.count(t)) for t in set(added)):
                continue
            if not _meld_ok(meld.tokens, variant):
                continue
            if not grow and any(sorted(m.tokens) == sorted(meld.tokens) for m in table):
                continue  # legal, but a table seldom shows one meld twice
            if seat not in opened and need > 0:
                from tabletop.engine.items import parse_items

                if not variant.check_initial_meld([parse_items(meld.tokens)]).meets:
                    continue
            if fits is not None and not fits([*out, step_of(melds, seat)]):
                continue
            chosen = (melds, meld, added)
            break
        if chosen is None:
            break  # nothing fits any more: the game ends here
        table, meld, added = chosen
        counts.update(added)
        opened.add(seat)
        out.append(step_of(table, seat))
    if with_racks and out:
        last = out[-1]
        out[-1] = replace(last, presses=("out",))
        gone = last.seat if last.seat is not None else 0
        pool = [label for label in sorted(allowed)
                for _ in range(max(0, TILE_COPIES - counts[label]))]
        seats: dict[int, tuple[str, ...]] = {}
        for seat in range(players):
            if seat == gone:
                seats[seat] = ()
                continue
            size = min(len(pool), int(rng.integers(2, 7)))
            picked = sorted(rng.choice(len(pool), size, replace=False).tolist(), reverse=True)
            rack = [pool.pop(i) for i in picked]
            seats[seat] = tuple(rack[int(i)] for i in rng.permutation(len(rack)))
        rack_step = ReplayStep(last.melds, seats=seats, presses=("score",))
        if fits is None or fits([*out, rack_step]):
            out.append(rack_step)
        else:
            out[-1] = last
    return out


# --- settings and the result -------------------------------------------------------
@dataclass(frozen=True)
class ReplaySettings:
    width: int = 1280
    height: int = 720
    fps: float = 10.0
    seed: int = 0
    lead_s: float = 2.0
    """The table as it starts (empty), still, before the first hand."""
    hand_in_s: float = 0.3
    cover_s: float = 0.9
    """How long the hand lies over the place of the change (it changes halfway)."""
    hand_out_s: float = 0.3
    still_s: float = 2.4
    """The settled table after each step, still (the watcher needs ~1 s to commit)."""
    tile_height: float | None = None
    """A tile's height in pixels at the table's near edge (None: 0.097 of the frame
    height, sabra-dev's ~70 pixels at 720)."""
    tile_aspect: float = 0.74
    gap: float = 0.05
    """The space between two tiles of a meld, in tile widths."""
    tilt: float = 0.035
    """The far edge of the table is ``1 - 2 * tilt`` as wide as the near one."""
    jitter_px: float = 1.5
    jitter_deg: float = 1.5
    noise: float = 2.0
    """Sensor noise, standard deviation in grey levels."""
    jpeg_quality: int = 85
    racks_face_seat: bool = True
    """Rack tiles turned to face their seat (seat 1 of two sees them upside down from
    the camera); False lays them upright to the camera as the melds are."""
    squared_pile: bool = False
    """The discard pile squared, each discard laid on the one before so that only the top
    shows (Rommé's and American Rummy's pile); False fans it along the zone's reading
    direction, each discard's index showing (500 Rum's)."""

    @property
    def tile_px(self) -> tuple[float, float]:
        h = self.tile_height if self.tile_height is not None else 0.097 * self.height
        return h * self.tile_aspect, h

    def frames(self, seconds: float) -> int:
        return max(1, round(seconds * self.fps))


@dataclass(frozen=True)
class Press:
    t: float
    press: str
    seat: int | None

    def to_json(self) -> dict[str, Any]:
        return {"t": self.t, "press": self.press, "seat": self.seat}


@dataclass(frozen=True)
class StepTiming:
    """When a step happens on the video's clock (seconds; frame index / fps)."""

    index: int
    seat: int | None
    """Whose hand changed the shared melds or the discard pile (None: only racks
    changed)."""
    hand_in_t: float
    """The first frame with its hand(s)."""
    change_t: float
    """The frame from which the table (under the hand) is the new state."""
    settled_t: float
    """The first frame after the hands have left: the truth line's ``t``."""
    end_t: float
    """The last frame before the next step's hands (or the video's end)."""
    presses: tuple[Press, ...]
    changed: tuple[Box, ...]
    """Image boxes of the tiles laid, moved or taken away: where the hands cover."""

    def to_json(self) -> dict[str, Any]:
        return {"step": self.index, "seat": self.seat, "hand_in_t": self.hand_in_t,
                "change_t": self.change_t, "settled_t": self.settled_t, "end_t": self.end_t,
                "presses": [p.to_json() for p in self.presses]}


@dataclass(frozen=True)
class TrueItem:
    """A tile as drawn: its label, image box and where it lies."""

    label: str
    box: Box
    meld: int | None
    """Index of its meld in the step's melds (None for a rack's tile)."""
    seat: int | None
    """The rack it is part of (None for a meld's tile)."""
    pile: int | None = None
    """Its place in the discard pile (0: the first card laid; in a squared pile only the
    top shows)."""


@dataclass(frozen=True)
class ReplayFrame:
    """One frame: ``t`` and ``image`` as ``live.sources.Frame`` has them."""

    index: int
    t: float
    image: Image


@dataclass(frozen=True)
class ReplayFiles:
    video: Path
    truth: Path
    zones: Path
    codec: str


# --- geometry ----------------------------------------------------------------------
@dataclass(frozen=True)
class _Tile:
    key: int
    label: str
    crop: int
    centre: Point
    """In table-plane pixels."""
    along: Point
    """The tile's own left-to-right direction on the table (unit)."""
    meld: int | None = None
    seat: int | None = None
    pile: int | None = None
    """Its place in the discard pile (0: the first card laid)."""


@dataclass
class _Meld:
    tokens: tuple[str, ...]
    tiles: list[_Tile]
    line: int
    reserved: tuple[float, float]
    """The x range kept for it on its line (room to grow at both ends)."""


@dataclass(frozen=True)
class _Hand:
    centre: Point
    """The palm's centre, image pixels."""
    axes: tuple[float, float]
    """Half the palm's length (along the fingers) and half its width."""
    pointing: Point
    """The way the fingers point (unit, image)."""


@dataclass(frozen=True)
class _Shot:
    state: int
    hands: tuple[_Hand, ...] = ()


def _homography(width: int, height: int, tilt: float) -> npt.NDArray[np.float64]:
    """Table plane (the frame's size) to image: the far (top) edge drawn narrower."""
    plane = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    image = np.float32([[tilt * width, 0], [(1 - tilt) * width, 0], [width, height], [0, height]])
    return cv2.getPerspectiveTransform(plane, image).astype(np.float64)


def _project(h: npt.NDArray[np.float64], points: Sequence[Point] | npt.NDArray[Any]
             ) -> npt.NDArray[np.float64]:
    array = np.asarray(points, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(array, h).reshape(-1, 2)


def _unit(v: Point) -> Point:
    n = math.hypot(v[0], v[1]) or 1.0
    return (v[0] / n, v[1] / n)


def _rect(zone: Zone) -> tuple[float, float, float, float]:
    xs = [p[0] for p in zone.polygon]
    ys = [p[1] for p in zone.polygon]
    return min(xs), min(ys), max(xs), max(ys)


def image_zones(layout: ZoneLayout, h: npt.NDArray[np.float64], size: tuple[int, int]
                ) -> ZoneLayout:
    """``layout`` (table plane) as the camera sees it: polygons and reading directions
    through ``h``, ``table_size`` the frame's."""
    zones = []
    for zone in layout.zones:
        polygon = _project(h, zone.polygon)
        xs = [p[0] for p in zone.polygon]
        ys = [p[1] for p in zone.polygon]
        mid = (sum(xs) / len(xs), sum(ys) / len(ys))
        d = zone.reading_direction
        a, b = _project(h, [mid, (mid[0] + 10 * d[0], mid[1] + 10 * d[1])])
        # rounded as ZoneLayout.save writes them, so the layout is the file's to the digit
        direction = _unit((float(b[0] - a[0]), float(b[1] - a[1])))
        zones.append(Zone(zone.name, zone.kind,
                          tuple((round(float(x), 2), round(float(y), 2)) for x, y in polygon),
                          zone.seat, (round(direction[0], 4), round(direction[1], 4))))
    return ZoneLayout((float(size[0]), float(size[1])), tuple(zones))


# --- laying out the states ------------------------------------------------------------
class _Layout:
    """Where each state's tiles lie on the table plane, keeping what stays."""

    def __init__(self, settings: ReplaySettings, plane: ZoneLayout, bank: CropBank,
                 rng: np.random.Generator, players: int) -> None:
        self.s = settings
        self.plane = plane
        self.bank = bank
        self.rng = rng
        self.players = players
        self.tw, self.th = settings.tile_px
        self.pitch = self.tw * (1 + settings.gap)
        self.margin = 0.3 * self.th
        meld = plane.of_kind("meld")[0]
        self.area = _rect(meld)
        _, y0, _, y1 = self.area
        # lines of melds, evenly spread, at least LINE_PITCH tile heights apart: farther
        # than live.grouping links two tiles (1.6 tile widths, ~1.2 heights), also at the
        # far edge, which the tilt draws smaller
        usable = (y1 - y0) - 2 * self.margin - self.th
        lines = max(1, int(usable // (LINE_PITCH * self.th)) + 1)
        step = usable / (lines - 1) if lines > 1 else 0.0
        self.lines = [y0 + self.margin + self.th / 2 + i * step for i in range(lines)]
        # between two melds' kept room: wider than a link even when both have grown into it
        self.meld_gap = MELD_GAP * self.tw
        self._next_key = 0

    def key(self) -> int:
        self._next_key += 1
        return self._next_key

    def _tile(self, label: str, centre: Point, along: Point, taken: Counter[tuple[str, int]],
              crop: int | None = None, key: int | None = None) -> _Tile:
        if crop is None:
            crop = self.bank.choose(label, self.rng, [c for (lab, c) in taken if lab == label])
        taken[(label, crop)] += 1
        jx, jy = (float(v) for v in self.rng.normal(0, self.s.jitter_px / 2, 2))
        turn = math.radians(float(np.clip(self.rng.normal(0, self.s.jitter_deg / 2),
                                          -self.s.jitter_deg, self.s.jitter_deg)))
        c, s = math.cos(turn), math.sin(turn)
        along = (along[0] * c - along[1] * s, along[0] * s + along[1] * c)
        return _Tile(key if key is not None else self.key(), label, crop,
                     (centre[0] + jx, centre[1] + jy), along)

    def _free_spot(self, melds: Sequence[_Meld], length: int, where: str
                   ) -> tuple[int, tuple[float, float]]:
        """(line, reserved x range) for a new meld of ``length`` tiles."""
        x0, _, x1, _ = self.area
        # a tile's room before, two after; overlapping cards: the last card's whole width
        need = (length + 2) * self.pitch + max(self.pitch, self.tw)
        free = []
        for line in range(len(self.lines)):
            ends = [m.reserved[1] for m in melds if m.line == line]
            start = max(ends) + self.meld_gap if ends else x0 + self.margin
            spare = x1 - self.margin - (start + need)
            if spare >= 0:
                # the emptiest line first, so melds spread over the table as people lay them
                free.append((len(ends), float(self.rng.random()), line, start, spare))
        if free:
            _, _, line, start, spare = min(free)
            start += float(self.rng.uniform(0, min(spare, 3 * self.tw)))
            return line, (start, start + need)
        raise ReplayError(f"{where}: the melds do not fit the meld area ({len(self.lines)} "
                          f"lines of {x1 - x0:.0f} pixels); lay fewer or shorter melds")

    def _lay_meld(self, tokens: tuple[str, ...], line: int, reserved: tuple[float, float],
                  first_x: float, taken: Counter[tuple[str, int]],
                  keep: Mapping[int, _Tile] | None = None) -> _Meld:
        """Tiles of ``tokens`` from ``first_x`` (the first tile's centre); ``keep``: the
        tiles (by position in ``tokens``) that stay as they are."""
        tiles = []
        y = self.lines[line]
        for i, label in enumerate(tokens):
            if keep and i in keep:
                tiles.append(keep[i])
                continue
            tiles.append(self._tile(label, (first_x + i * self.pitch, y), (1.0, 0.0), taken))
        return _Meld(tokens, tiles, line, reserved)

    def melds(self, before: Sequence[_Meld], after: Sequence[tuple[str, ...]], where: str
              ) -> list[_Meld]:
        """The melds of the next state: a meld kept or grown at one end stays put."""
        out: list[_Meld | None] = [None] * len(after)
        left = list(range(len(before)))
        taken: Counter[tuple[str, int]] = Counter()
        # the same meld, untouched
        for j, tokens in enumerate(after):
            same = next((i for i in left if before[i].tokens == tokens), None)
            if same is not None:
                out[j] = before[same]
                left.remove(same)
                taken.update((t.label, t.crop) for t in before[same].tiles)
        placed: list[_Meld] = [m for m in out if m is not None]
        # grown at one end (or both): the old tiles stay, the new ones beside them
        for j, tokens in enumerate(after):
            if out[j] is not None:
                continue
            best = None
            for i in left:
                old = before[i].tokens
                for offset in range(len(tokens) - len(old) + 1):
                    if tokens[offset:offset + len(old)] == old and (
                            best is None or len(old) > len(before[best[0]].tokens)):
                        best = (i, offset)
            if best is None:
                continue
            i, offset = best
            old_meld = before[i]
            first_x = old_meld.tiles[0].centre[0] - offset * self.pitch
            lo = first_x - self.tw / 2
            hi = first_x + (len(tokens) - 1) * self.pitch + self.tw / 2
            # the kept tiles lie a little off their places (jitter): a tile's room at either
            # end holds it all the same
            slack = max(self.pitch - self.tw, 2 * self.s.jitter_px)
            if lo < old_meld.reserved[0] - slack or hi > old_meld.reserved[1] + slack:
                continue  # no room where it lies: laid anew below
            left.remove(i)
            keep = {offset + k: tile for k, tile in enumerate(old_meld.tiles)}
            taken.update((t.label, t.crop) for t in old_meld.tiles)
            meld = self._lay_meld(tokens, old_meld.line, old_meld.reserved, first_x, taken, keep)
            out[j] = meld
            placed.append(meld)
        # new (or rearranged) melds: a free place; tiles of a broken-up meld are new tiles
        for j, tokens in enumerate(after):
            if out[j] is not None:
                continue
            line, reserved = self._free_spot(placed, len(tokens), where)
            first_x = reserved[0] + self.pitch + self.tw / 2
            meld = self._lay_meld(tokens, line, reserved, first_x, taken)
            out[j] = meld
            placed.append(meld)
        return [m for m in out if m is not None]

    def rack(self, seat: int, tokens: tuple[str, ...], taken: Counter[tuple[str, int]],
             where: str) -> list[_Tile]:
        """A seat's rack in rows along its band, from the player's left, facing the player
        (or the camera)."""
        zone = self.plane.seat_zone(seat)
        if zone is None:
            raise ReplayError(f"{where}: no seat {seat} at a table of {self.players}")
        x0, y0, x1, y1 = _rect(zone)
        r = zone.reading_direction
        toward_player = (-r[1], r[0])
        along_band = abs(r[0]) * (x1 - x0) + abs(r[1]) * (y1 - y0)
        depth = abs(r[1]) * (x1 - x0) + abs(r[0]) * (y1 - y0)
        # a tile's extent across the band and along it
        upright = self.s.racks_face_seat or abs(r[0]) > 0.5
        across, length = (self.th, self.tw) if upright else (self.tw, self.th)
        pitch = length * (1 + self.s.gap)
        row_pitch = 1.3 * across
        per_row = max(1, int((along_band - 2 * self.margin - length) // pitch) + 1)
        rows = [tokens[i:i + per_row] for i in range(0, len(tokens), per_row)]
        if across + (len(rows) - 1) * row_pitch > depth - self.margin:
            raise ReplayError(f"{where}: seat {seat}'s rack of {len(tokens)} tiles does not fit "
                              "its band")
        mid = ((x0 + x1) / 2, (y0 + y1) / 2)
        start = along_band / 2 - self.margin - length / 2
        along = r if self.s.racks_face_seat else (1.0, 0.0)
        tiles = []
        for k, row in enumerate(rows):
            # rows from the player's side inwards, centred on the band's depth
            shift = (k - (len(rows) - 1) / 2) * row_pitch
            for i, label in enumerate(row):
                d = -start + i * pitch
                centre = (mid[0] + r[0] * d - toward_player[0] * shift,
                          mid[1] + r[1] * d - toward_player[1] * shift)
                tile = self._tile(label, centre, along, taken)
                tiles.append(replace(tile, seat=seat))
        return tiles

    def pile(self, before: Sequence[_Tile], tokens: tuple[str, ...],
             taken: Counter[tuple[str, int]], where: str) -> list[_Tile]:
        """The discard pile of ``tokens`` (the first laid first) in the discard zone: the
        cards of ``before`` that are still its bottom stay where they lie, each new one is
        laid on top, squared on the one before (a little off it, as a hand lays it) or
        fanned along the zone's reading direction."""
        if not tokens:
            return []
        zone = next(iter(self.plane.of_kind("discard")), None)
        if zone is None:
            raise ReplayError(f"{where}: a discard pile, but the variant has none")
        x0, y0, x1, y1 = _rect(zone)
        r = zone.reading_direction
        length = abs(r[0]) * (x1 - x0) + abs(r[1]) * (y1 - y0)
        margin = 0.1 * self.tw
        kept = 0
        while (kept < min(len(before), len(tokens))
               and before[kept].label == tokens[kept]):
            kept += 1
        tiles = list(before[:kept])
        taken.update((t.label, t.crop) for t in tiles)
        mid = ((x0 + x1) / 2, (y0 + y1) / 2)
        for k in range(kept, len(tokens)):
            if self.s.squared_pile:
                shift = (float(v) for v in np.clip(self.rng.normal(0, 0.04 * self.tw, 2),
                                                   -0.1 * self.tw, 0.1 * self.tw))
                dx, dy = shift
                turn = math.radians(float(np.clip(self.rng.normal(0, 3.0), -6.0, 6.0)))
                along = (math.cos(turn), math.sin(turn))
                centre = (mid[0] + dx, mid[1] + dy)
            else:
                d = -length / 2 + margin + self.tw / 2 + k * self.pitch
                if d + self.tw / 2 > length / 2 - margin + 1e-6:
                    raise ReplayError(f"{where}: a fanned discard pile of {len(tokens)} cards "
                                      "does not fit its zone")
                along = (1.0, 0.0)
                centre = (mid[0] + r[0] * d, mid[1] + r[1] * d)
            tiles.append(replace(self._tile(tokens[k], centre, along, taken), pile=k))
        return tiles


@dataclass
class _State:
    melds: list[_Meld]
    racks: dict[int, list[_Tile]]
    pile: list[_Tile] = field(default_factory=list)
    """The discard pile, the first card laid first."""

    def tiles(self) -> list[_Tile]:
        out = [replace(t, meld=m) for m, meld in enumerate(self.melds) for t in meld.tiles]
        return out + [t for seat in sorted(self.racks) for t in self.racks[seat]] + self.pile


# --- drawing --------------------------------------------------------------------------
def _tile_quad(tile: _Tile, tw: float, th: float) -> npt.NDArray[np.float64]:
    """Plane corners of a tile: its top left, top right, bottom right, bottom left."""
    r = tile.along
    up = (r[1], -r[0])
    cx, cy = tile.centre
    hw, hh = tw / 2, th / 2
    return np.array([[cx - r[0] * hw + up[0] * hh, cy - r[1] * hw + up[1] * hh],
                     [cx + r[0] * hw + up[0] * hh, cy + r[1] * hw + up[1] * hh],
                     [cx + r[0] * hw - up[0] * hh, cy + r[1] * hw - up[1] * hh],
                     [cx - r[0] * hw - up[0] * hh, cy - r[1] * hw - up[1] * hh]])


def _box(points: npt.NDArray[np.float64]) -> Box:
    x1, y1 = points.min(axis=0)
    x2, y2 = points.max(axis=0)
    return (round(float(x1), 2), round(float(y1), 2), round(float(x2), 2), round(float(y2), 2))


def _paste(canvas: npt.NDArray[np.float32], crop: Image, quad: npt.NDArray[np.float64],
           size: tuple[float, float]) -> None:
    """``crop`` warped onto ``quad`` (image corners) of ``canvas``, with a soft shadow."""
    height, width = canvas.shape[:2]
    x0 = max(0, math.floor(quad[:, 0].min()) - 4)
    y0 = max(0, math.floor(quad[:, 1].min()) - 4)
    x1 = min(width, math.ceil(quad[:, 0].max()) + 6)
    y1 = min(height, math.ceil(quad[:, 1].max()) + 6)
    if x1 <= x0 or y1 <= y0:
        return
    # shrink the crop near the drawn size first: warpPerspective alone would alias
    tw, th = max(4, round(size[0] * 1.5)), max(4, round(size[1] * 1.5))
    small = cv2.resize(crop, (tw, th), interpolation=cv2.INTER_AREA).astype(np.float32)
    src = np.float32([[0, 0], [tw, 0], [tw, th], [0, th]])
    dst = (quad - [x0, y0]).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    roi = canvas[y0:y1, x0:x1]
    warped = cv2.warpPerspective(small, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT)
    alpha = cv2.warpPerspective(np.ones((th, tw), np.float32), m, (x1 - x0, y1 - y0),
                                flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    shadow = cv2.GaussianBlur(cv2.warpAffine(alpha, np.float32([[1, 0, 1.5], [0, 1, 2.5]]),
                                             (x1 - x0, y1 - y0)), (0, 0), 1.6)
    roi *= (1.0 - 0.45 * shadow)[..., None]
    roi[:] = roi * (1.0 - alpha[..., None]) + warped * alpha[..., None]


PALM_POWER = 3.0
"""The palm is a superellipse |x/a|^3 + |y/b|^3 = 1: rounder than a box, and it holds
a box of 0.79 of its half axes (an ellipse only 0.71)."""


def hand_shapes(hand: _Hand) -> list[npt.NDArray[np.float64]]:
    """The hand as polygons (image pixels): the palm, then four fingers beyond it."""
    f = np.array(hand.pointing, np.float64)
    n = np.array((-f[1], f[0]))
    a_f, a_n = hand.axes
    centre = np.array(hand.centre, np.float64)
    angles = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    c, s = np.cos(angles), np.sin(angles)
    power = 2.0 / PALM_POWER
    along = a_f * np.sign(c) * np.abs(c) ** power
    across = a_n * np.sign(s) * np.abs(s) ** power
    shapes = [centre + along[:, None] * f + across[:, None] * n]
    length, width, spacing = 0.44 * a_n, 0.15 * a_n, 0.44 * a_n
    for k in range(4):
        side = abs(k - 1.5)
        half = length * (1.0 - 0.12 * side)
        base = centre + f * a_f * (0.78 - 0.08 * side) + n * (k - 1.5) * spacing
        tip_centre = base + f * half
        shapes.append(tip_centre + (half * c)[:, None] * f + (width * s)[:, None] * n)
    return shapes


def _hand_mask(shape: tuple[int, int], hands: Sequence[_Hand]) -> npt.NDArray[np.float32]:
    mask = np.zeros(shape, np.uint8)
    for hand in hands:
        for polygon in hand_shapes(hand):
            cv2.fillPoly(mask, [np.round(polygon * 4).astype(np.int32)], 255, cv2.LINE_AA, 2)
    return cv2.GaussianBlur(mask.astype(np.float32) / 255.0, (0, 0), 1.0)


# --- the replay -----------------------------------------------------------------------
class Replay:
    """A composed replay: its frames (drawn when asked), truth, zones and step times."""

    def __init__(self, settings: ReplaySettings, players: Sequence[str], variant: str,
                 steps: Sequence[ReplayStep], zones: ZoneLayout, timings: Sequence[StepTiming],
                 shots: Sequence[_Shot], canvases: Sequence[npt.NDArray[np.uint8]],
                 items: Sequence[Sequence[TrueItem]], skin: tuple[float, float, float],
                 photos: Sequence[str]) -> None:
        self.settings = settings
        self.players = tuple(players)
        self.variant = variant
        self.steps = tuple(steps)
        self.zones = zones
        """The zone layout in image pixels (what ``zones.json`` holds)."""
        self.timings = tuple(timings)
        self._shots = tuple(shots)
        self._canvases = tuple(canvases)
        self._items = tuple(tuple(i) for i in items)
        self._skin = np.array(skin, np.float32)
        self.photos = tuple(photos)
        """The photos the crops came from."""
        self.files: ReplayFiles | None = None
        """Set by :meth:`write`."""

    @property
    def frame_count(self) -> int:
        return len(self._shots)

    @property
    def duration_s(self) -> float:
        return self.frame_count / self.settings.fps

    def items(self, step: int | None) -> tuple[TrueItem, ...]:
        """The tiles lying on the table once ``step`` (0-based) has settled; None: the
        table before the first step."""
        return self._items[0 if step is None else step + 1]

    def hands(self, index: int) -> tuple[_Hand, ...]:
        return self._shots[index].hands

    def hand_mask(self, index: int) -> npt.NDArray[np.bool_]:
        """Where a hand is drawn in frame ``index`` (True: half covered or more)."""
        s = self.settings
        return _hand_mask((s.height, s.width), self._shots[index].hands) >= 0.5

    def state_of(self, index: int) -> int:
        """The table state frame ``index`` shows: 0 before the first step, k after step k."""
        return self._shots[index].state

    def frame(self, index: int) -> Image:
        """Frame ``index`` as the camera gives it (noise and JPEG included)."""
        s = self.settings
        shot = self._shots[index]
        image = self._canvases[shot.state].astype(np.float32)
        if shot.hands:
            mask = _hand_mask((s.height, s.width), shot.hands)
            ys, xs = np.nonzero(mask > 0.0)
            if len(ys):
                y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
                m = mask[y0:y1, x0:x1, None]
                # a little shading from top to bottom: a hand is not one flat colour
                shade = 0.94 + 0.08 * (np.arange(y1 - y0, dtype=np.float32)[:, None, None]
                                       / max(1, y1 - y0))
                hand = self._skin * shade
                image[y0:y1, x0:x1] = image[y0:y1, x0:x1] * (1 - m) + hand * m
        rng = np.random.default_rng([s.seed, 7, index])
        if s.noise > 0:
            image += rng.standard_normal((s.height, s.width, 1), dtype=np.float32) * s.noise
        frame = np.clip(image + 0.5, 0, 255).astype(np.uint8)
        if s.jpeg_quality < 100:
            ok, encoded = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, s.jpeg_quality])
            if ok:
                frame = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
        return frame

    def frames(self, *, realtime: bool = False) -> Iterator[ReplayFrame]:
        """Every frame in order; ``realtime`` paces them at the frame rate (a live stream)."""
        start = time.monotonic()
        for index in range(self.frame_count):
            t = round(index / self.settings.fps, 6)
            if realtime:
                wait = start + t - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            yield ReplayFrame(index, t, self.frame(index))

    def header(self) -> dict[str, Any]:
        s = self.settings
        return {"kind": "header", "variant": self.variant, "players": list(self.players),
                "fps": s.fps, "size": [s.width, s.height], "frames": self.frame_count,
                "zones": ZONES_NAME, "video": VIDEO_NAME, "seed": s.seed,
                "photos": list(self.photos),
                "steps": [t.to_json() for t in self.timings]}

    def truth(self) -> list[dict[str, Any]]:
        """The truth lines (without the header), sabra-dev's form plus ``seats`` and, in a
        replay with a discard pile, ``discards`` (the pile, the first card laid first)."""
        piled = any(step.discards for step in self.steps)
        lines = []
        for step, timing in zip(self.steps, self.timings, strict=True):
            line: dict[str, Any] = {"t": timing.settled_t,
                                    "melds": sorted(" ".join(m) for m in step.melds)}
            if step.seats:
                line["seats"] = {str(k): " ".join(v) for k, v in sorted(step.seats.items())}
            if piled:
                line["discards"] = " ".join(step.discards)
            lines.append(line)
        return lines

    def write(self, out: str | Path, *, header: bool = True) -> ReplayFiles:
        """``out``/video.mp4, truth.jsonl and zones.json; the video is read back to
        check its frame count and size."""
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        s = self.settings
        video = folder / VIDEO_NAME
        writer = None
        codec = ""
        for codec in CODECS:
            writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*codec), s.fps,
                                     (s.width, s.height))
            if writer.isOpened():
                break
            writer.release()
            writer = None
        if writer is None:
            raise ReplayError(f"OpenCV cannot write MP4 video ({', '.join(CODECS)}) to "
                              f"{str(video)!r}")
        try:
            for frame in self.frames():
                writer.write(frame.image)
        finally:
            writer.release()
        capture = cv2.VideoCapture(str(video))
        try:
            count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
            size = (int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
                    int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        finally:
            capture.release()
        if count != self.frame_count or size != (s.width, s.height):
            raise ReplayError(f"{str(video)!r} reads back as {count} frames of {size[0]}x"
                              f"{size[1]}, not {self.frame_count} of {s.width}x{s.height}")
        truth = folder / TRUTH_NAME
        lines = ([self.header()] if header else []) + self.truth()
        truth.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        zones = self.zones.save(folder / ZONES_NAME)
        self.files = ReplayFiles(video, truth, Path(zones), codec)
        return self.files


def read_truth(path: str | Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(header or None, the state lines) of a truth file, this module's or sabra-dev's."""
    header, lines = None, []
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        obj = json.loads(raw)
        if obj.get("kind") == "header":
            header = obj
        else:
            lines.append(obj)
    return header, lines


def bare_token(token: str) -> str:
    """``token`` as scored: upper case, a joker without what it stands for."""
    upper = token.strip().upper()
    return JOKER if upper.startswith(JOKER + "=") else upper


def table_key(melds: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """A table as replays are scored: each meld a multiset of tokens (jokers bare), the
    table a multiset of melds."""
    return tuple(sorted(tuple(sorted(bare_token(t) for t in m.split())) for m in melds
                        if m.strip()))


@dataclass(frozen=True)
class RunScore:
    """A run's ``table`` events against a truth file (replays/README.md's rules)."""

    states: int
    found: tuple[float | None, ...]
    """Per truth line, the delay (seconds) from its ``t`` to the first table event
    showing it after the line before's ``t``, or None where no event did."""
    false_states: tuple[tuple[float, tuple[str, ...]], ...]
    """(t, melds) of committed tables that are no truth state."""

    @property
    def found_count(self) -> int:
        return sum(d is not None for d in self.found)

    def to_json(self) -> dict[str, Any]:
        return {"states": self.states, "found": self.found_count,
                "delays": list(self.found),
                "false_states": [{"t": t, "melds": list(m)} for t, m in self.false_states]}


def score_events(truth: Sequence[Mapping[str, Any]], events: Iterable[Mapping[str, Any]]
                 ) -> RunScore:
    """Which truth states the ``table`` events showed, how late, and the false ones.  A
    truth line that lays racks open (``seats`` with items) is found by a table event
    holding each rack as a meld beside the shared ones (a game not told that the round
    ended), or by ``hand_shown`` events of those seats with those items (one that was)."""
    keys: list[tuple[tuple[str, ...], ...]] = []
    racks: list[dict[int, tuple[str, ...]]] = []
    for line in truth:
        melds = [str(m) for m in line.get("melds", [])]
        open_racks = {int(k): tuple(sorted(bare_token(t) for t in str(v).split()))
                      for k, v in (line.get("seats") or {}).items() if str(v).strip()}
        racks.append(open_racks)
        keys.append(table_key([*melds, *(" ".join(r) for r in open_racks.values())]))
    every = set(keys)
    found: list[float | None] = [None] * len(truth)
    false: list[tuple[float, tuple[str, ...]]] = []
    shown: dict[int, tuple[float, tuple[str, ...]]] = {}
    for event in events:
        t = float(event.get("t", 0.0))
        if event.get("type") == "hand_shown" and event.get("seat") is not None:
            items = tuple(sorted(bare_token(str(i)) for i in event.get("items", [])))
            shown[int(event["seat"])] = (t, items)
        elif event.get("type") == "table":
            key = table_key(event.get("melds", []))
            if key not in every and key:
                false.append((t, tuple(event.get("melds", []))))
        else:
            continue
        for i, line in enumerate(truth):
            # an event before the previous state's time shows an earlier, equal table
            since = float(truth[i - 1]["t"]) if i else float("-inf")
            if found[i] is not None or t < since:
                continue
            seen = event.get("type") == "table" and table_key(event.get("melds", [])) == keys[i]
            if not seen and racks[i] and event.get("type") == "hand_shown":
                seen = all(seat in shown and shown[seat][0] >= since
                           and shown[seat][1] == items for seat, items in racks[i].items())
            if seen:
                found[i] = round(t - float(line["t"]), 3)
    return RunScore(len(truth), tuple(found), tuple(false))


def load_background(realdata: str | Path | None, size: tuple[int, int],
                    image: str | Path | Image | None = None) -> Image:
    """``image`` (a path or an array), or sabra-dev's first frame, scaled to ``size``."""
    if image is None:
        path = require_realdata(realdata) / BACKGROUND_VIDEO
        capture = cv2.VideoCapture(str(path))
        ok, frame = capture.read()
        capture.release()
        if not ok:
            raise ReplayError(f"cannot read a frame of {str(path)!r}")
    elif isinstance(image, str | Path):
        frame = cv2.imread(str(image))
        if frame is None:
            raise ReplayError(f"cannot read the background image {str(image)!r}")
    else:
        frame = np.asarray(image, np.uint8)
        if frame.ndim != 3 or frame.shape[2] != 3:
            raise ReplayError(f"a background is a colour image, not shape {frame.shape}")
    if (frame.shape[1], frame.shape[0]) != size:
        frame = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
    return frame


def _turn_seats(steps: Sequence[ReplayStep], players: int) -> list[int]:
    """Whose turn each step is, for steps that do not say (see ReplayStep.seat)."""
    any_press = any(step.presses for step in steps)
    seat, out = 0, []
    for step in steps:
        if step.seat is not None:
            seat = step.seat
        out.append(seat)
        if not any_press or "end_turn" in step.presses:
            seat = (seat + 1) % players
    return out


def _hand_for(box: Box, toward_player: Point, settings: ReplaySettings) -> _Hand:
    """A palm over ``box`` (image), fingers pointing away from the player, big enough to
    cover it."""
    x1, y1, x2, y2 = box
    f = (-toward_player[0], -toward_player[1])
    half_along = abs(f[0]) * (x2 - x1) / 2 + abs(f[1]) * (y2 - y1) / 2
    half_across = abs(f[1]) * (x2 - x1) / 2 + abs(f[0]) * (y2 - y1) / 2
    base = settings.height / 720.0
    hold = 2 ** (1 / PALM_POWER)  # half axes that hold the box
    a_n = max(95.0 * base, hold * half_across + 8 * base)
    a_f = max(120.0 * base, hold * half_along + 8 * base, 1.2 * a_n)
    return _Hand(((x1 + x2) / 2, (y1 + y2) / 2), (a_f, a_n), f)


def _outside(hand: _Hand, toward_player: Point, width: int, height: int) -> Point:
    """Where the hand starts and ends: just out of view, its fingertips on the frame's
    edge (see :func:`hand_shapes`)."""
    cx, cy = hand.centre
    tx, ty = toward_player
    reach = 0.78 * hand.axes[0] + 0.88 * hand.axes[1]
    if abs(tx) >= abs(ty):
        edge = (width - cx) if tx > 0 else cx
        d = (edge + reach) / max(abs(tx), 1e-6)
    else:
        edge = (height - cy) if ty > 0 else cy
        d = (edge + reach) / max(abs(ty), 1e-6)
    return (cx + tx * d, cy + ty * d)


def _lay_states(steps: Sequence[ReplayStep], layout: _Layout) -> list[_State]:
    """The table before the first step, then after each."""
    states = [_State([], {})]
    for n, step in enumerate(steps, 1):
        where = f"step {n}"
        before = states[-1]
        melds = layout.melds(before.melds, step.melds, where)
        taken: Counter[tuple[str, int]] = Counter(
            (t.label, t.crop) for m in melds for t in m.tiles)
        racks: dict[int, list[_Tile]] = {}
        for seat, tokens in sorted(step.seats.items()):
            if not tokens:
                continue
            kept = before.racks.get(seat)
            if kept is not None and tuple(t.label for t in kept) == tokens:
                racks[seat] = kept
            else:
                racks[seat] = layout.rack(seat, tokens, taken, where)
            taken.update((t.label, t.crop) for t in racks[seat])
        pile = layout.pile(before.pile, step.discards, taken, where)
        states.append(_State(melds, racks, pile))
    return states


class _Camera:
    """Table plane to image: tile corners through the tilt's homography."""

    def __init__(self, settings: ReplaySettings) -> None:
        self.h = _homography(settings.width, settings.height, settings.tilt)
        self.tile = settings.tile_px

    def quad(self, tile: _Tile) -> npt.NDArray[np.float64]:
        return _project(self.h, _tile_quad(tile, *self.tile))


def _draw_states(states: Sequence[_State], background: Image, bank: CropBank,
                 camera: _Camera, *, overlapping: bool = False
                 ) -> tuple[list[Image], list[list[TrueItem]]]:
    """Each state drawn once on the background, and its true items: far tiles first, or,
    where the items of a meld overlap (cards), each meld from its first item to its last,
    so that every card's left edge shows."""
    canvases, items = [], []
    for state in states:
        canvas = background.astype(np.float32)
        tiles = state.tiles()
        laid = [t for t in tiles if t.pile is None]
        order = laid if overlapping else sorted(laid, key=lambda t: (t.centre[1], t.centre[0]))
        for tile in [*order, *state.pile]:  # the pile from its first discard to its top
            _paste(canvas, bank.of(tile.label)[tile.crop].image, camera.quad(tile), camera.tile)
        canvases.append(np.clip(canvas + 0.5, 0, 255).astype(np.uint8))
        items.append([TrueItem(t.label, _box(camera.quad(t)), t.meld, t.seat, t.pile)
                      for t in tiles])
    return canvases, items


def _changes(before: _State, after: _State) -> dict[tuple[str, int], list[_Tile]]:
    """The tiles laid, moved or taken away, by the place they belong to: ("meld", index in
    the new melds, or -1 - index in the old for a meld taken up), ("rack", seat) or
    ("pile", 0)."""
    old = {t.key: t for t in before.tiles()}
    new = {t.key: t for t in after.tiles()}
    keys = set(old) ^ set(new)
    keys |= {k for k in set(old) & set(new) if old[k].centre != new[k].centre}
    groups: dict[tuple[str, int], list[_Tile]] = {}
    for key in sorted(keys):
        tile = new.get(key) or old[key]
        if tile.seat is not None:
            groups.setdefault(("rack", tile.seat), []).append(tile)
        elif tile.pile is not None:
            groups.setdefault(("pile", 0), []).append(tile)
        else:
            meld = tile.meld or 0
            groups.setdefault(("meld", meld if key in new else -1 - meld), []).append(tile)
    return groups


def _timeline(steps: Sequence[ReplayStep], states: Sequence[_State], zones: ZoneLayout,
              camera: _Camera, s: ReplaySettings, players: int
              ) -> tuple[list[_Shot], list[StepTiming]]:
    """Every frame's state and hands, and each step's times: the lead, then per step the
    hands in, over the change (the table changes halfway), out, and the still table."""
    turn = _turn_seats(steps, players)
    shots: list[_Shot] = [_Shot(0)] * s.frames(s.lead_s)
    timings: list[StepTiming] = []
    n_in, n_cover, n_out = s.frames(s.hand_in_s), s.frames(s.cover_s), s.frames(s.hand_out_s)
    wobble = 2.5 * s.height / 720  # a resting hand is never quite still
    rng = np.random.default_rng([s.seed, 2])
    for n, step in enumerate(steps, 1):
        groups = _changes(states[n - 1], states[n])
        moves: list[tuple[_Hand, Point]] = []
        for (kind, owner), tiles in sorted(groups.items()):
            seat = owner if kind == "rack" else turn[n - 1]
            zone = zones.seat_zone(seat)
            r = zone.reading_direction if zone is not None else (1.0, 0.0)
            toward = (-r[1], r[0])  # the player sits on the right of the reading direction
            hand = _hand_for(_box(np.vstack([camera.quad(t) for t in tiles])), toward, s)
            moves.append((hand, _outside(hand, toward, s.width, s.height)))

        def at(share: float, jitter: float, moves: list[tuple[_Hand, Point]] = moves
               ) -> tuple[_Hand, ...]:
            out = []
            for hand, start in moves:
                dx, dy = (float(v) for v in rng.normal(0, jitter, 2))
                out.append(replace(hand, centre=(
                    start[0] + (hand.centre[0] - start[0]) * share + dx,
                    start[1] + (hand.centre[1] - start[1]) * share + dy)))
            return tuple(out)

        hand_in = change = len(shots)
        if moves:
            shots.extend(_Shot(n - 1, at((k + 1) / (n_in + 1), 0.0)) for k in range(n_in))
            change = len(shots) + n_cover // 2
            while len(shots) < change + n_cover - n_cover // 2:
                shots.append(_Shot(n - 1 if len(shots) < change else n, at(1.0, wobble)))
            shots.extend(_Shot(n, at(1 - (k + 1) / (n_out + 1), 0.0)) for k in range(n_out))
        settled = len(shots)
        shots.extend([_Shot(n)] * s.frames(s.still_s))
        changed = tuple(_box(camera.quad(t)) for tiles in groups.values() for t in tiles)
        press_t = settled / s.fps + 0.6 * s.still_s
        presses = tuple(Press(round(press_t + 0.1 * i, 6), p,
                              turn[n - 1] if p in ("end_turn", "out") else None)
                        for i, p in enumerate(step.presses))
        meld_seat = turn[n - 1] if any(kind != "rack" for kind, _ in groups) else None
        timings.append(StepTiming(n - 1, meld_seat, round(hand_in / s.fps, 6),
                                  round(change / s.fps, 6), round(settled / s.fps, 6),
                                  round((len(shots) - 1) / s.fps, 6), presses, changed))
    return shots, timings


def _lays_cards(variant_id: str) -> bool:
    from tabletop.engine.items import Family
    from tabletop.engine.variants import find_variant

    try:
        return find_variant(variant_id).family is Family.CARDS
    except ValueError as error:
        raise ReplayError(str(error)) from None


def compose(steps: Sequence[ReplayStep], *, players: Sequence[str] = ("Ana", "Ben"),
            variant: str = "sabra", settings: ReplaySettings | None = None,
            realdata: str | Path | None = None, bank: CropBank | None = None,
            background: str | Path | Image | None = None,
            use_images: Iterable[str] | None = None, holdout: Iterable[str] = ()) -> Replay:
    """The replay of ``steps`` (validated with :func:`check_steps`; ReplayError for a
    token, seat or label it cannot draw).  ``bank``: crops already loaded (else from
    ``realdata`` with ``use_images`` / ``holdout``)."""
    s = settings or ReplaySettings()
    if s.width < 64 or s.height < 64 or s.fps <= 0:
        raise ReplayError(f"a replay needs a frame of 64x64 or more and a positive frame rate, "
                          f"not {s.width}x{s.height} at {s.fps}")
    cards = _lays_cards(variant)
    checked = check_steps(steps, len(players), cards=cards)
    if bank is None:
        bank = CropBank.load(realdata, use_images=use_images, holdout=holdout)
    bank.check(dict.fromkeys(t for st in checked
                             for m in (*st.melds, *st.seats.values(), st.discards) for t in m))
    size = (s.width, s.height)
    background_image = load_background(realdata, size, background)
    camera = _Camera(s)
    plane = default_layout(variant, len(players), (float(s.width), float(s.height)))
    zones = image_zones(plane, camera.h, size)
    layout = _Layout(s, plane, bank, np.random.default_rng([s.seed, 1]), len(players))
    states = _lay_states(checked, layout)
    canvases, items = _draw_states(states, background_image, bank, camera,
                                   overlapping=s.gap < 0)
    shots, timings = _timeline(checked, states, zones, camera, s, len(players))
    skin_rng = np.random.default_rng([s.seed, 3])
    skin = tuple(float(c * skin_rng.uniform(0.92, 1.05)) for c in SKIN_BGR)
    used = sorted({bank.of(t.label)[t.crop].photo for st in states for t in st.tiles()})
    return Replay(s, players, variant, checked, zones, timings, shots, canvases, items,
                  (skin[0], skin[1], skin[2]), used)


def compose_game(players: Sequence[str] = ("Ana", "Ben"), out: str | Path | None = None, *,
                 steps: Sequence[ReplayStep] | None = None, seed: int = 0,
                 realdata: str | Path | None = None, size: tuple[int, int] = (1280, 720),
                 fps: float = 10.0, use_images: Iterable[str] | None = None,
                 holdout: Iterable[str] = (), background: str | Path | Image | None = None,
                 settings: ReplaySettings | None = None,
                 max_aspect: float = UPRIGHT_ASPECT) -> Replay:
    """A Sabra game for ``players`` (default script: :func:`sabra_round`), written to
    ``out`` when given (then ``replay.files`` names the files).  The returned
    :class:`Replay` has the step times (``timings``: when each hand comes, when the
    table is settled, when to press the step's buttons), the zones and the frames."""
    base = settings or ReplaySettings()
    settings = replace(base, width=size[0], height=size[1], fps=fps, seed=seed)
    bank = CropBank.load(realdata, use_images=use_images, holdout=holdout,
                         max_aspect=max_aspect)
    replay = compose(list(steps) if steps is not None else sabra_round(), players=players,
                     variant="sabra", settings=settings, realdata=realdata, bank=bank,
                     background=background)
    if out is not None:
        replay.write(out)
    return replay


# --- random replays and the photo split ---------------------------------------------
@dataclass(frozen=True)
class PhotoSplit:
    """The real photos in two fixed sets (short names, sorted): ``adapt``, which a model
    may be adapted (fine-tuned) on, and ``measure``, whose crops the replays it is then
    measured on are made of."""

    adapt: tuple[str, ...]
    measure: tuple[str, ...]

    def of(self, part: str) -> tuple[str, ...] | None:
        """The photos of ``part``: ``adapt``, ``measure`` or ``all`` (None: every photo)."""
        if part == "all":
            return None
        if part in ("adapt", "measure"):
            return tuple(getattr(self, part))
        raise ReplayError(f"photos are 'adapt', 'measure' or 'all', not {part!r}")


SPLIT_EVERY = 3


def photo_names(realdata: str | Path | None = None) -> tuple[str, ...]:
    """The short names (:func:`photo_name`) of the photos in
    ``<realdata>/rummikub-tiles/annotations.jsonl``, sorted, each once."""
    annotations = require_realdata(realdata) / TILES_FOLDER / "annotations.jsonl"
    try:
        lines = annotations.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ReplayError(f"cannot read {str(annotations)!r}: {error.strerror}") from None
    return tuple(sorted({photo_name(json.loads(line)["image"]) for line in lines
                         if line.strip()}))


def photo_split(realdata: str | Path | None = None) -> PhotoSplit:
    """The fixed split of the tile photos: sorted by short name (plain string order:
    ``rummy-11`` before ``rummy-8``), the first and then every third (``SPLIT_EVERY``)
    is an ``adapt`` photo, the others ``measure`` photos.

    With the 34 photos of ``rummikub-tiles`` that is 12 adapt photos (135 labelled tiles,
    52 of the 53 labels) and 22 measure photos, whose crops lying square to the camera
    (``UPRIGHT_ASPECT``) hold every one of the 53 labels (196 crops): replays of any
    tiles can be made of measure photos alone."""
    names = photo_names(realdata)
    adapt = names[::SPLIT_EVERY]
    return PhotoSplit(adapt, tuple(n for n in names if n not in set(adapt)))


def layout_problem(steps: Sequence[ReplayStep], players: int, settings: ReplaySettings,
                   bank: CropBank, variant: str = "sabra") -> str | None:
    """Why :func:`compose` would refuse to lay ``steps`` out (melds that do not fit the
    meld area, a rack too long for its band, an unknown token), or None where it lays
    them: the same layout, with the same seeded generator, without drawing anything."""
    try:
        checked = check_steps(steps, players, cards=_lays_cards(variant))
        plane = default_layout(variant, players, (float(settings.width),
                                                  float(settings.height)))
        layout = _Layout(settings, plane, bank, np.random.default_rng([settings.seed, 1]),
                         players)
        _lay_states(checked, layout)
    except ReplayError as error:
        return str(error)
    return None


def random_game(seed: int, players: int = 2, *, bank: CropBank,
                settings: ReplaySettings | None = None, **options: Any) -> list[ReplayStep]:
    """The random Sabra game of ``seed`` (:func:`random_sabra_script`) with tiles ``bank``
    has crops of, every step checked to lay out as :func:`compose` will lay it with
    ``settings`` (its seed replaced by ``seed``).  ``options`` go to
    :func:`random_sabra_script`."""
    s = replace(settings or ReplaySettings(), seed=seed)
    labels = [label for label, n in bank.labels().items() if n and label in TILE_LABELS]

    def fits(steps: Sequence[ReplayStep]) -> bool:
        return layout_problem(steps, players, s, bank) is None

    return random_sabra_script(np.random.default_rng([seed, 11]), players, labels=labels,
                               fits=fits, **options)


def compose_random_game(players: Sequence[str] = ("Ana", "Ben"),
                        out: str | Path | None = None, *, seed: int = 0,
                        realdata: str | Path | None = None,
                        size: tuple[int, int] = (1280, 720), fps: float = 10.0,
                        use_images: Iterable[str] | None = None, holdout: Iterable[str] = (),
                        background: str | Path | Image | None = None,
                        settings: ReplaySettings | None = None,
                        max_aspect: float = UPRIGHT_ASPECT, bank: CropBank | None = None,
                        **options: Any) -> Replay:
    """:func:`compose_game` of :func:`random_game` ``seed``: a random Sabra game laid with
    crops of ``use_images`` / not ``holdout`` (or of ``bank``), written to ``out`` when
    given.  The same seed, photos and settings give the same game and frames."""
    base = settings or ReplaySettings()
    s = replace(base, width=size[0], height=size[1], fps=fps, seed=seed)
    if bank is None:
        bank = CropBank.load(realdata, use_images=use_images, holdout=holdout,
                             max_aspect=max_aspect)
    steps = random_game(seed, len(players), bank=bank, settings=s, **options)
    replay = compose(steps, players=players, variant="sabra", settings=s, realdata=realdata,
                     bank=bank, background=background)
    if out is not None:
        replay.write(out)
    return replay

