"""The live pipeline on many random game replays composed from the real tile photos.

    python -m bench.replays [--replays 50] [--seed 1] [--model PATH] [--out DIR]
        [--label NAME] [--incremental] [--workers 1] [--players 2]
        [--photos measure] [--size 1280x720] [--game sabra|rommee|raeuber]
        [--card-height PX] [--verbose] [--json]

Replay ``i`` (0-based) is the random Sabra game of seed ``1000 * SEED + i``
(``studio.replay.random_game``: new melds and melds grown at their ends, jokers
now and then; no racks laid open at the end, since a Sabra game reads a seat's
area during play as that player's own rack and the bench presses no button, so
no ``I'm out`` makes the game read them), laid with
the tile crops of the ``--photos`` part of ``studio.replay.photo_split`` (default
``measure``: never the photos a model may be adapted on) on the real table, a
hand over each move.  Each is composed once, into
``OUT/replays/<set>/<i>/`` (video.mp4, truth.jsonl, zones.json, script.json), and
reused by every later run, whatever its model.  The real pipeline then watches
the video headless (``live.run.run`` with the composer's zones, no marker
search, no button presses) and the run's events and score go to
``OUT/runs/<model>/<set>/<i>.events.jsonl`` and ``<i>.json``; a replay whose
``<i>.json`` exists is not run again, so a stopped bench goes on where it was.
``<model>`` is the model file's stem and the start of the SHA-1 of it and its
reader, so runs of two models never mix; ``--label NAME`` appends ``-NAME`` to it,
for runs of the same model with other code (``--label before``).  The model's
detections of each frame are kept too (``OUT/detections/<model>/<set>/<i>.jsonl.gz``,
:class:`CachedDetections`), so a later run of the same model with other code after
the detector (the watcher, the rules) takes minutes, not the detector's time.
The model runs on every whole frame, as ``tabletop run --every-frame`` runs it;
``--incremental`` watches with the live pipeline's own detector, which looks only
where the table changed (``vision.incremental``), its results under
``<model>-incremental``.

``--game rommee`` (or ``raeuber``) measures card games instead: replay ``i`` is the
random game of that variant of the same seed (``studio.card_replay``: runs and sets
laid and grown, openings of 40, cards held in hand), its cards blank cards round the
real indices of the ``bridge-cards`` photos (by default both: no model was fitted on
them; ``--photos measure`` only deal2, for a model adapted on deal1, see
``bench.card_adapt``), 125 pixels tall at 720 (``--card-height`` for other table
distances); the set's folder name starts with the variant.  ``--pile squared`` (or
``fanned``) gives the card games a discard pile: each move ends with a discard, and
now and then a player takes the top discard first.

Printed (``--json``: one JSON object instead; ``--verbose``: a line per replay
first), over the replays finished:

* committed table states: the run's ``table`` events;
* right: the share of them that equal a true state (each meld a multiset of its
  items, jokers bare, the table a multiset of melds, as
  ``realdata/replays/README.md`` scores; the empty table before the first move
  counts as true);
* found: the share of true states some ``table`` event showed
  (``studio.replay.score_events``);
* final right: the share of replays whose last ``table`` event equals the last
  true table (a truth line's racks laid open, where one has them, counted as
  melds);
* false states (committed tables that never were) and the delays from a state
  settling to its first event (median, max);
* with a pile: its true moves (a card discarded, the top taken) against the run's
  ``item_discarded`` and ``discard_taken`` events: how many the run holds in order
  (the longest common subsequence), the run's pile events not among them, and the
  replays with every pile move right;
* what goes wrong: each wrong state beside the true state nearest to it (the
  one standing then, the one before or the one after), as tiles missing and
  tiles extra; a tile missing and one extra (of one colour, else of one number)
  count as a misreading ``O11->R11``, the same tiles in other melds as a
  grouping error; those committed while a hand was in view (between a step's
  ``hand_in_t`` and ``settled_t``) are counted apart.

It is slow: the shipped model takes ~0.2 s a 1280x720 frame on two cores and a
six-step replay is ~250 frames, so 50 replays take ~40 minutes.  ``--workers N``
runs N replays at a time (each model session uses every core; worth it on a
machine with many cores only).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabletop.studio.replay import bare_token, read_truth, table_key
from tabletop.vision.labels import CARD_LABELS

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "runs" / "replays"
SCRIPT_NAME = "script.json"
PLAYER_NAMES = ("Ana", "Ben", "Cem", "Dan")
GAMES = ("sabra", "rommee", "raeuber")
"""Variants a replay can be composed of: Sabra with tiles, the Rommés with cards."""


def replay_seed(seed: int, index: int) -> int:
    """The composer's seed of replay ``index`` of a bench seeded ``seed``."""
    return 1000 * seed + index


def set_name(seed: int, photos: str, players: int, size: tuple[int, int],
             game: str = "sabra", card_height: float | None = None,
             pile: str | None = None) -> str:
    """The folder name of a set of replays: what makes their videos differ."""
    name = f"s{seed}-{photos}-p{players}-{size[0]}x{size[1]}"
    if card_height is not None:
        name += f"-c{card_height:g}"
    if pile is not None:
        name += f"-{pile}"
    return name if game == "sabra" else f"{game}-{name}"


def model_tag(model: str | Path | None) -> str:
    """``<stem>-<sha1 of the model file, its reader, and where it has them its card finder,
    card reader, light head and set's inks, 10 hex digits>``: an adapted folder is another
    model."""
    from tabletop.vision.detector import (
        card_finder_path,
        card_reader_path,
        default_model,
        face_reader_path,
        head_path,
        reader_path,
        set_inks_path,
    )

    path = Path(model) if model is not None else default_model()
    digest = hashlib.sha1()
    for part in (path, reader_path(path), card_finder_path(path), card_reader_path(path),
                 head_path(path), set_inks_path(path), face_reader_path(path)):
        if part.is_file():
            digest.update(part.read_bytes())
    return f"{path.stem}-{digest.hexdigest()[:10]}"


# --- scoring -----------------------------------------------------------------------
def truth_tables(truth: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Each truth line's whole table as ``studio.replay.score_events`` keys it: the
    shared melds, then each rack laid open as one meld."""
    tables = []
    for line in truth:
        racks = [str(v) for _, v in sorted((line.get("seats") or {}).items())
                 if str(v).strip()]
        tables.append([*(str(m) for m in line.get("melds", [])), *racks])
    return tables


def _items(melds: Iterable[str]) -> Counter[str]:
    return Counter(t for meld in table_key(melds) for t in meld)


def difference(seen: Sequence[str], true: Sequence[str]) -> dict[str, Any]:
    """How table ``seen`` differs from ``true``: tiles missing and extra (multisets), and
    whether the tiles are the same but grouped otherwise."""
    a, b = _items(seen), _items(true)
    missing = sorted((b - a).elements())
    extra = sorted((a - b).elements())
    out: dict[str, Any] = {"missing": missing, "extra": extra}
    if not missing and not extra:
        out["grouping"] = True
    return out


def _size(diff: Mapping[str, Any]) -> int:
    return len(diff["missing"]) + len(diff["extra"]) + (1 if diff.get("grouping") else 0)


PileMove = tuple[str, tuple[str, ...]]
"""("discard", (card,)) or ("taken", the cards taken, the deepest first)."""


def true_pile_moves(truth: Sequence[Mapping[str, Any]]) -> list[PileMove]:
    """The discard pile's moves from each truth line's ``discards`` to the next one's:
    the top cards gone are taken, each card laid on what stays is a discard."""
    moves: list[PileMove] = []
    before: list[str] = []
    for line in truth:
        if "discards" not in line:
            continue
        now = [bare_token(t) for t in str(line["discards"]).split()]
        kept = 0
        while kept < min(len(before), len(now)) and before[kept] == now[kept]:
            kept += 1
        if len(before) > kept:
            moves.append(("taken", tuple(before[kept:])))
        moves.extend(("discard", (card,)) for card in now[kept:])
        before = now
    return moves


def seen_pile_moves(events: Iterable[Mapping[str, Any]]) -> list[PileMove]:
    """The run's ``item_discarded`` and ``discard_taken`` events as pile moves."""
    moves: list[PileMove] = []
    for event in events:
        if event.get("type") == "item_discarded":
            moves.append(("discard", (bare_token(str(event.get("item", ""))),)))
        elif event.get("type") == "discard_taken":
            moves.append(("taken", tuple(bare_token(str(t)) for t in event.get("items", []))))
    return moves


@dataclass(frozen=True)
class ReplayScore:
    """One replay's run against its truth."""

    states: int
    found: tuple[float | None, ...]
    committed: int
    right: int
    final_right: bool
    false_states: int
    wrong: tuple[dict[str, Any], ...]
    """Per wrong committed table: t, melds, the nearest true state's index (-1: the empty
    table), and the difference."""
    pile: tuple[int, int, int] | None = None
    """Where the truth has a discard pile: its true moves, how many of them the run's
    pile events hold in order, and the run's pile events that are not among those."""

    @property
    def found_count(self) -> int:
        return sum(d is not None for d in self.found)

    def to_json(self) -> dict[str, Any]:
        return {"states": self.states, "found": list(self.found),
                "found_count": self.found_count, "committed": self.committed,
                "right": self.right, "final_right": self.final_right,
                "false_states": self.false_states, "wrong": list(self.wrong),
                **({} if self.pile is None else dict(zip(
                    ("pile_moves", "pile_in_order", "pile_false"), self.pile, strict=True)))}


def score_replay(truth: Sequence[Mapping[str, Any]], events: Iterable[Mapping[str, Any]],
                 moves: Sequence[tuple[float, float]] = ()) -> ReplayScore:
    """``events`` (a run's, in order) against ``truth`` (the truth lines, no header).
    ``moves``: (first frame with a hand, first frame after it) per step (the truth
    header's ``hand_in_t`` and ``settled_t``): a wrong state committed then is marked
    ``during_move``."""
    from tabletop.studio.replay import score_events

    events = list(events)
    tables = truth_tables(truth)
    keys = [table_key(t) for t in tables]
    every = set(keys) | {()}
    committed = [e for e in events if e.get("type") == "table"]
    right = 0
    wrong: list[dict[str, Any]] = []
    times = [float(line["t"]) for line in truth]
    for event in committed:
        melds = [str(m) for m in event.get("melds", [])]
        if table_key(melds) in every:
            right += 1
            continue
        t = float(event.get("t", 0.0))
        standing = sum(1 for x in times if x <= t) - 1  # -1: before the first move
        near = [i for i in (standing - 1, standing, standing + 1) if -1 <= i < len(truth)]
        diffs = [(i, difference(melds, tables[i] if i >= 0 else [])) for i in near]
        best, diff = min(diffs, key=lambda pair: (_size(pair[1]), abs(pair[0] - standing)))
        during = any(start <= t <= end for start, end in moves)
        wrong.append({"t": t, "melds": melds, "near": best, "during_move": during, **diff})
    final_true = keys[-1] if keys else ()
    final_right = bool(committed) and table_key(
        [str(m) for m in committed[-1].get("melds", [])]) == final_true
    score = score_events(truth, events)
    pile = None
    if any("discards" in line for line in truth):
        from bench.live_fps import events_in_order

        true_moves, seen_moves = true_pile_moves(truth), seen_pile_moves(events)
        held = events_in_order(seen_moves, true_moves)
        pile = (len(true_moves), held, len(seen_moves) - held)
    return ReplayScore(len(truth), score.found, len(committed), right, final_right,
                       len(score.false_states), tuple(wrong), pile)


def moves_of(header: Mapping[str, Any] | None) -> list[tuple[float, float]]:
    """(hand_in_t, settled_t) of each step of a truth file's header."""
    return [(float(st["hand_in_t"]), float(st["settled_t"]))
            for st in (header or {}).get("steps", [])]


def pair_misreads(missing: Sequence[str], extra: Sequence[str]
                  ) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(misread pairs (true, seen), tiles missing unpaired, tiles extra unpaired): a tile
    missing and one extra pair up as a misreading, those of one colour first (``K7`` read
    as ``K1``), then of one number (``O11`` as ``R11``), then one left of each."""
    missing, extra = list(missing), list(extra)
    pairs: list[tuple[str, str]] = []

    def colour(t: str) -> str:  # a card's suit
        return "JK" if t == "JK" else t[-1] if t in CARD_LABELS else t[0]

    def number(t: str) -> str:  # a card's rank
        return "JK" if t == "JK" else t[:-1] if t in CARD_LABELS else t[1:]

    for same in (colour, number):
        for m in list(missing):
            e = next((x for x in extra if same(x) == same(m)), None)
            if e is not None:
                pairs.append((m, e))
                missing.remove(m)
                extra.remove(e)
    if len(missing) == 1 and len(extra) == 1:
        pairs.append((missing.pop(), extra.pop()))
    return pairs, missing, extra


def confusions(wrong: Iterable[Mapping[str, Any]]) -> dict[str, Counter[str]]:
    """What the wrong states got wrong: ``misread`` (a tile missing and one extra paired
    by :func:`pair_misreads`: ``O11->R11``), ``missing`` and ``extra`` tiles left
    unpaired (not seen; seen where none lies), and ``grouping`` (the right tiles in
    other melds)."""
    out: dict[str, Counter[str]] = {"misread": Counter(), "missing": Counter(),
                                    "extra": Counter(), "grouping": Counter()}
    for w in wrong:
        if w.get("grouping"):
            out["grouping"]["same tiles, other melds"] += 1
            continue
        pairs, missing, extra = pair_misreads(w.get("missing", []), w.get("extra", []))
        out["misread"].update(f"{a}->{b}" for a, b in pairs)
        out["missing"].update(missing)
        out["extra"].update(extra)
    return out


def summarise(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The bench's figures over per-replay results (each with a ``score``:
    :meth:`ReplayScore.to_json`)."""
    scores = [r["score"] for r in results]
    committed = sum(s["committed"] for s in scores)
    right = sum(s["right"] for s in scores)
    states = sum(s["states"] for s in scores)
    found = sum(s["found_count"] for s in scores)
    delays = [d for s in scores for d in s["found"] if d is not None]
    wrong = [w for s in scores for w in s["wrong"]]
    conf = confusions(wrong)

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    piled = [s for s in scores if "pile_moves" in s]
    pile = {"pile_moves": sum(s["pile_moves"] for s in piled),
            "pile_in_order": sum(s["pile_in_order"] for s in piled),
            "pile_false": sum(s["pile_false"] for s in piled),
            "pile_replays_right": sum(s["pile_in_order"] == s["pile_moves"]
                                      and not s["pile_false"] for s in piled)} if piled else {}
    return {
        **pile,
        "replays": len(scores),
        "true_states": states,
        "committed": committed,
        "right": right,
        "right_share": share(right, committed),
        "found": found,
        "found_share": share(found, states),
        "final_right": sum(bool(s["final_right"]) for s in scores),
        "final_right_share": share(sum(bool(s["final_right"]) for s in scores), len(scores)),
        "false_states": sum(s["false_states"] for s in scores),
        "delay_median_s": round(statistics.median(delays), 3) if delays else None,
        "delay_max_s": round(max(delays), 3) if delays else None,
        "wrong_states": len(wrong),
        "misread": dict(conf["misread"].most_common()),
        "misread_replays": dict(Counter(
            pair for s in scores for pair in set(confusions(s["wrong"])["misread"]))
            .most_common()),
        "missing": dict(conf["missing"].most_common()),
        "extra": dict(conf["extra"].most_common()),
        "grouping": sum(conf["grouping"].values()),
        "wrong_during_move": sum(bool(w.get("during_move")) for w in wrong),
        "run_s": round(sum(float(r.get("run_s", 0.0)) for r in results), 1),
        "frames": sum(int(r.get("frames", 0)) for r in results),
    }


# --- composing and running -----------------------------------------------------------
@dataclass(frozen=True)
class BenchSetup:
    out: Path
    seed: int = 1
    players: int = 2
    photos: str = "measure"
    size: tuple[int, int] = (1280, 720)
    model: str | None = None
    realdata: str | None = None
    label: str | None = None
    incremental: bool = False
    game: str = "sabra"
    """The variant played: ``sabra`` (tiles) or a card variant (``rommee``: cards drawn round
    the real indices of ``bridge-cards``, studio.card_replay)."""
    card_height: float | None = None
    """Card games: a card's height in pixels (None: studio.card_replay's table distance)."""
    suit_colour: str = "on"
    """The detector's ``suit_colour`` setting (``off``: card suits by the reader alone)."""
    spade_odds: float | None = None
    """The detector's ``spade_odds`` setting (None: its default)."""
    pile: str | None = None
    """Card games: how the discard pile lies, ``squared`` or ``fanned``, each move ending
    with a discard (None: no pile, the end-turn button)."""

    @property
    def settings_tag(self) -> str:
        """The detector settings that are not the defaults, as a name's suffix."""
        tag = "" if self.suit_colour == "on" else f"-suit-colour-{self.suit_colour}"
        if self.spade_odds is not None:
            tag += f"-spade-odds-{self.spade_odds:g}"
        return tag

    @property
    def tag(self) -> str:
        """The results' folder name: the model's tag, ``-incremental`` for the incremental
        detector, the settings that are not the defaults, and the label after a dash."""
        tag = (model_tag(self.model) + ("-incremental" if self.incremental else "")
               + self.settings_tag)
        return f"{tag}-{self.label}" if self.label else tag

    @property
    def set_name(self) -> str:
        return set_name(self.seed, self.photos, self.players, self.size, self.game,
                        self.card_height, self.pile)

    def replay_folder(self, index: int) -> Path:
        return self.out / "replays" / self.set_name / f"{index:03d}"

    def result_path(self, index: int, tag: str) -> Path:
        return self.out / "runs" / tag / self.set_name / f"{index:03d}.json"

    def detections_path(self, index: int) -> Path:
        """Where the model's detections of replay ``index`` are kept (by model, not
        label: see :class:`CachedDetections`)."""
        model = model_tag(self.model) + self.settings_tag
        return self.out / "detections" / model / self.set_name / f"{index:03d}.jsonl.gz"


def composed(setup: BenchSetup, index: int) -> Path:
    """Replay ``index``'s folder, composed unless a finished one is there."""
    folder = setup.replay_folder(index)
    if (folder / SCRIPT_NAME).is_file():
        return folder
    from tabletop.studio.card_replay import (
        card_photos,
        compose_random_card_game,
        load_card_bank,
    )
    from tabletop.studio.replay import CropBank, Replay, compose_random_game, photo_split

    seed = replay_seed(setup.seed, index)
    partial = folder.with_name(folder.name + ".part")
    shutil.rmtree(partial, ignore_errors=True)
    players = PLAYER_NAMES[:setup.players]
    replay: Replay
    if setup.game == "sabra":
        photos = photo_split(setup.realdata).of(setup.photos)
        bank = CropBank.load(setup.realdata, use_images=photos)
        replay = compose_random_game(players, partial, seed=seed, realdata=setup.realdata,
                                     size=setup.size, bank=bank, racks=0.0)
    else:
        bank = load_card_bank(setup.realdata, use_images=card_photos(setup.photos))
        replay = compose_random_card_game(players, partial, seed=seed, variant=setup.game,
                                          realdata=setup.realdata, size=setup.size,
                                          bank=bank, card_height=setup.card_height,
                                          pile=setup.pile)
    # written last: a folder with a script is a whole replay
    (partial / SCRIPT_NAME).write_text(json.dumps({
        "players": list(replay.players), "variant": setup.game, "seed": seed,
        "photos": setup.photos, "steps": [s.to_json() for s in replay.steps]}) + "\n",
        encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


_DETECTORS: dict[tuple[str | None, str, float | None], Any] = {}


def _detector(model: str | None, suit_colour: str = "on",
              spade_odds: float | None = None) -> Any:
    key = (model, suit_colour, spade_odds)
    if key not in _DETECTORS:
        from tabletop.vision.detector import Detector, DetectorSettings

        odds = {} if spade_odds is None else {"spade_odds": spade_odds}
        _DETECTORS[key] = Detector(
            model, settings=DetectorSettings(suit_colour=suit_colour, **odds))
    return _DETECTORS[key]


class CachedDetections:
    """The detector's output for each frame of one replay, kept in ``path`` (gzipped
    JSONL, a line per frame in the contract's item form, alternatives included): the
    first run of a model over a replay computes and writes it, every later run (other
    code behind the detector, ``--label``) reads it back, the video read all the same.
    Frames are taken in order, as ``live.pipeline.Pipeline`` feeds them."""

    def __init__(self, path: Path, detector: Any) -> None:
        self.path = path
        self.detector = detector
        self.stored: list[Any] | None = None
        if path.is_file():
            import gzip

            from tabletop.vision.detections import Detections

            with gzip.open(path, "rt", encoding="utf-8") as handle:
                self.stored = [Detections.from_items(json.loads(line)) for line in handle]
        self.computed: list[Any] = []

    def __call__(self, image: Any) -> Any:
        if self.stored is not None:
            index = len(self.computed)
            if index >= len(self.stored):
                raise RuntimeError(f"{self.path} holds {len(self.stored)} frames; the video "
                                   "has more (delete it to detect again)")
            found = self.stored[index]
        else:
            found = self.detector()(image)
        self.computed.append(found)
        return found

    def look_again(self, image: Any, boxes: Any, kinds: Any) -> Any:
        """The model's second look at spots (``Detector.look_again``), never kept: it
        depends on what the watcher asks, which changes with the code."""
        return self.detector().look_again(image, boxes, kinds)

    def save(self) -> None:
        """Write what was computed (nothing when it was read from the file)."""
        if self.stored is not None:
            return
        import gzip

        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".part")
        with gzip.open(partial, "wt", encoding="utf-8") as handle:
            for found in self.computed:
                handle.write(json.dumps(found.to_items()) + "\n")
        partial.replace(self.path)


def run_replay(setup: BenchSetup, index: int, tag: str) -> dict[str, Any]:
    """Compose (or reuse) replay ``index``, watch it with the pipeline, score it, and
    write ``<index>.json`` (returned) beside its events."""
    from tabletop.engine.variants import find_variant
    from tabletop.live.run import Listeners, Reading, TableSetup, run

    folder = composed(setup, index)
    header, truth = read_truth(folder / "truth.jsonl")
    players = tuple((header or {}).get("players") or PLAYER_NAMES[:setup.players])
    result_path = setup.result_path(index, tag)
    result_path.parent.mkdir(parents=True, exist_ok=True)
    events_path = result_path.with_suffix(".events.jsonl")
    start = time.monotonic()
    detections = CachedDetections(
        setup.detections_path(index),
        lambda: _detector(setup.model, setup.suit_colour, setup.spade_odds))
    detector: Any = detections
    if setup.incremental:
        from tabletop.vision.incremental import IncrementalDetector

        detector = IncrementalDetector(_detector(setup.model, setup.suit_colour, setup.spade_odds))
    reading = Reading(detector=detector,
                      table=TableSetup(zones=folder / "zones.json", find_markers=False))
    summary = run(str(folder / "video.mp4"), find_variant(setup.game), players,
                  reading=reading, listeners=Listeners(events_jsonl=events_path))
    if not setup.incremental:
        detections.save()
    run_s = time.monotonic() - start
    events = [json.loads(line) for line in events_path.read_text(encoding="utf-8")
              .splitlines() if line.strip()]
    score = score_replay(truth, events, moves_of(header))
    script = json.loads((folder / SCRIPT_NAME).read_text(encoding="utf-8"))
    result = {
        "index": index, "seed": replay_seed(setup.seed, index), "replay": str(folder),
        "model": tag, "frames": summary.frames, "run_s": round(run_s, 1),
        "steps": script["steps"], "truth": truth,
        "tables": [{"t": e["t"], "melds": e.get("melds", [])} for e in events
                   if e.get("type") == "table"],
        "score": score.to_json()}
    partial = result_path.with_suffix(".part")
    partial.write_text(json.dumps(result) + "\n", encoding="utf-8")
    partial.replace(result_path)
    return result


def rescored(result: dict[str, Any], path: Path) -> dict[str, Any]:
    """A stored result scored again from its events (so a change to the scoring needs no
    new run)."""
    events_path = path.with_suffix(".events.jsonl")
    if events_path.is_file():
        events = [json.loads(line) for line in events_path.read_text(encoding="utf-8")
                  .splitlines() if line.strip()]
        truth_path = Path(result.get("replay", "")) / "truth.jsonl"
        header = read_truth(truth_path)[0] if truth_path.is_file() else None
        result["score"] = score_replay(result["truth"], events, moves_of(header)).to_json()
    return result


def _run_in_worker(setup: BenchSetup, index: int, tag: str) -> dict[str, Any]:
    return run_replay(setup, index, tag)


def bench(setup: BenchSetup, replays: int, workers: int = 1,
          on_result: Any = None) -> list[dict[str, Any]]:
    """Every replay's result, running those not yet run (``workers`` at a time)."""
    tag = setup.tag
    results: dict[int, dict[str, Any]] = {}
    todo = []
    for index in range(replays):
        path = setup.result_path(index, tag)
        if path.is_file():
            results[index] = rescored(json.loads(path.read_text(encoding="utf-8")), path)
        else:
            todo.append(index)
    if workers <= 1:
        for index in todo:
            results[index] = run_replay(setup, index, tag)
            if on_result is not None:
                on_result(results[index])
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_run_in_worker, setup, i, tag) for i in todo]
            for future in as_completed(futures):
                result = future.result()
                results[int(result["index"])] = result
                if on_result is not None:
                    on_result(result)
    return [results[i] for i in sorted(results)]


def replay_line(result: Mapping[str, Any]) -> str:
    s = result["score"]
    found = s["found"]
    delays = [d for d in found if d is not None]
    wrong = "; ".join(f"{w['t']:.1f}s " + (" ".join(
        [*(f"-{t}" for t in w["missing"]), *(f"+{t}" for t in w["extra"])])
        or "same tiles, other melds") for w in s["wrong"][:4])
    return (f"{result['index']:03d} seed {result['seed']}: {len(result['steps'])} steps, "
            f"{s['committed']} committed, {s['right']} right, found {s['found_count']}/"
            f"{s['states']}, final {'right' if s['final_right'] else 'WRONG'}, "
            f"{s['false_states']} false"
            + (f", pile {s['pile_in_order']}/{s['pile_moves']} in order, {s['pile_false']} "
               "false" if "pile_moves" in s else "")
            + (f", delay max {max(delays):.1f}s" if delays else "")
            + f", {result['frames']} frames in {result['run_s']:.0f}s"
            + (f" | {wrong}" if wrong else ""))


def report(summary: Mapping[str, Any]) -> str:
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}%"

    def secs(v: float | None) -> str:
        return "-" if v is None else f"{v:g} s"

    in_replays = summary.get("misread_replays", {})
    top = ", ".join(f"{k} x{v} ({in_replays.get(k, 0)} replays)"
                    for k, v in list(summary["misread"].items())[:12]) or "none"
    missing = ", ".join(f"{k} x{v}" for k, v in list(summary["missing"].items())[:10]) or "none"
    extra = ", ".join(f"{k} x{v}" for k, v in list(summary["extra"].items())[:10]) or "none"
    return "\n".join([
        f"replays: {summary['replays']} ({summary['true_states']} true states, "
        f"{summary['frames']} frames, {summary['run_s']:.0f} s of pipeline)",
        f"committed table states: {summary['committed']}, exactly right "
        f"{summary['right']} ({pct(summary['right_share'])})",
        f"true states found: {summary['found']}/{summary['true_states']} "
        f"({pct(summary['found_share'])})",
        f"replays ending on the right table: {summary['final_right']}/{summary['replays']} "
        f"({pct(summary['final_right_share'])})",
        f"false states: {summary['false_states']}; delay median "
        f"{secs(summary['delay_median_s'])}, max {secs(summary['delay_max_s'])}",
        f"wrong states: {summary['wrong_states']} (committed while a hand was in view: "
        f"{summary.get('wrong_during_move', 0)}; the right tiles in other melds: "
        f"{summary['grouping']})",
        f"  misread (true->seen, states): {top}",
        f"  tiles missing: {missing}",
        f"  tiles extra: {extra}",
        *([f"discard pile moves: {summary['pile_in_order']}/{summary['pile_moves']} in order, "
           f"{summary['pile_false']} not true; replays with every pile move right: "
           f"{summary['pile_replays_right']}/{summary['replays']}"]
          if "pile_moves" in summary else []),
    ])


def _size_arg(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"want WIDTHxHEIGHT, not {text!r}") from None
    return width, height


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.replays",
                                description=(__doc__ or "").splitlines()[0])
    p.add_argument("--replays", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--model", default=None, help="the model (default: the shipped one)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help=f"replays and results (default {DEFAULT_OUT.relative_to(ROOT)})")
    p.add_argument("--label", default=None,
                   help="appended to the results' folder name: runs of other code with the "
                        "same model (e.g. before, after)")
    p.add_argument("--incremental", action="store_true",
                   help="the live pipeline's detector, which looks only where the table "
                        "changed (vision.incremental), not the model on every whole frame")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--photos", default=None, choices=("measure", "adapt", "all"),
                   help="whose crops the replays are made of (studio.replay.photo_split; "
                        "default measure; card games: studio.card_replay.CARD_SPLIT, "
                        "default all)")
    p.add_argument("--game", default="sabra", choices=GAMES,
                   help="sabra (tiles) or a card variant laid with the real indices of "
                        "bridge-cards (studio.card_replay)")
    p.add_argument("--card-height", type=float, default=None,
                   help="card games: a card's height in pixels at the table's near edge "
                        "(default 125 at 720: a 90 cm table in view)")
    p.add_argument("--pile", default=None, choices=("squared", "fanned"),
                   help="card games: each move ends with a discard on a pile laid so "
                        "(squared: only its top shows), a player now and then taking the "
                        "top discard first (default: no pile, the end-turn button)")
    p.add_argument("--suit-colour", default="on", choices=("on", "off"),
                   help="judge card indices' suit colour by their ink too (on, as the "
                        "detector does by default) or by the reader alone (off)")
    p.add_argument("--spade-odds", type=float, default=None,
                   help="what the card reader's odds of a spade against a club are multiplied by "
                        "(default: the detector's; 1 for the reader's own)")
    p.add_argument("--size", type=_size_arg, default=(1280, 720))
    p.add_argument("--realdata", default=None)
    p.add_argument("--verbose", action="store_true", help="a line per replay")
    p.add_argument("--json", action="store_true", help="the summary as one JSON object")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.replays < 1 or args.workers < 1:
        print("--replays and --workers must be 1 or more", file=sys.stderr)
        return 2
    if args.label is not None and not args.label.replace("-", "").replace("_", "").isalnum():
        print(f"--label is letters, digits, - and _, not {args.label!r}", file=sys.stderr)
        return 2
    cards = args.game != "sabra"
    photos = args.photos or ("all" if cards else "measure")
    for given, name in ((args.card_height, "--card-height"), (args.pile, "--pile")):
        if given is not None and not cards:
            print(f"{name} is for card games (--game rommee)", file=sys.stderr)
            return 2
    setup = BenchSetup(args.out, args.seed, args.players, photos, args.size, args.model,
                       args.realdata, args.label, args.incremental, args.game,
                       args.card_height, args.suit_colour, args.spade_odds, args.pile)
    started = time.monotonic()

    def progress(result: Mapping[str, Any]) -> None:
        if args.verbose:  # as each replay is done; all of them follow on stdout
            print(replay_line(result), file=sys.stderr, flush=True)

    from tabletop.studio.replay import ReplayError

    try:
        results = bench(setup, args.replays, args.workers, progress)
    except ReplayError as error:
        print(f"bench.replays: {error}", file=sys.stderr)
        return 2
    summary = summarise(results)
    summary.update({"model": setup.tag, "set": setup.set_name,
                    "out": str(args.out), "wall_s": round(time.monotonic() - started, 1)})
    if args.verbose and not args.json:
        for result in results:
            print(replay_line(result))
    print(json.dumps(summary) if args.json else report(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
