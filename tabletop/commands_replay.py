"""``tabletop replay``: game replays composed from real photos (studio/replay.py).

    tabletop replay compose --out DIR [--seed N] [--players Ana,Ben] [--script FILE.json]
        [--random] [--photos all|adapt|measure] [--realdata DIR] [--size 1280x720]
        [--fps 10] [--background IMAGE] [--holdout NAME,...] [--use-images NAME,...]
        [--max-aspect 0.9] [--variant sabra|rommee|raeuber] [--card-height PX]
        [--pile squared|fanned] [--json]

``compose`` writes DIR/video.mp4, DIR/truth.jsonl and DIR/zones.json and prints one
line per file (a JSON object per line with ``--json``).  Without ``--script`` the
replay is the short Sabra round of ``studio.replay.sabra_round``; ``--random`` makes it
the random Sabra game of ``--seed`` (``studio.replay.random_game``) and writes its
script to DIR/script.json too.  ``--photos adapt|measure`` takes the crops from that
part of ``studio.replay.photo_split`` only.  ``--variant rommee`` (or ``raeuber``, or a
script whose ``variant`` is one) lays cards instead: blank cards round the real indices
of ``bridge-cards`` (``studio.card_replay``), ``--card-height`` pixels tall (default
0.174 of the frame's height: 125 at 720); ``--random`` then makes a random game of that
variant.  ``--pile squared`` (or ``fanned``) gives a card game a discard pile: each
random move ends with a discard instead of the end-turn button, a player now and then
taking the top discard first; a script's steps say their pile as ``discards``, and
``--pile`` says how it lies (squared: each discard on the one before, only the top
showing; fanned: each index showing).  A script is a JSON list of steps, or an
object with ``steps`` (and optionally ``players`` and ``variant``)::

    {"players": ["Ana", "Ben"], "steps": [
        {"melds": ["R10 R11 R12"], "seat": 0, "press": "end_turn"},
        {"melds": ["R10 R11 R12 R13"], "seats": {"1": "K3 B8 O6"}}]}

    {"players": ["Ana", "Ben"], "variant": "rommee", "steps": [
        {"melds": ["QS QH QD"], "seat": 0, "discards": "7C"},
        {"melds": ["QS QH QD"], "seat": 1, "discards": ""},
        {"melds": ["QS QH QD", "5C 6C 7C"], "seat": 1, "discards": "KD"}]}

The live pipeline on many such replays, scored against their truth, is
``python -m bench.replays`` in the repository checkout (``bench`` is not installed).

Registered by tabletop.cli; numpy and OpenCV are imported by the handler only.
"""

from __future__ import annotations

import argparse
import importlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

CARD_GAMES = ("rommee", "raeuber")
"""Card variants a replay can lay (with laying out, so the table shows the melds)."""


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must be WIDTHxHEIGHT in pixels, e.g. 1280x720, "
                         f"not {text!r}") from None
    if width < 64 or height < 64:
        raise ValueError(f"--size must be 64x64 or more, not {text!r}")
    return width, height


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


def _players(text: str) -> tuple[str, ...]:
    players = tuple(name.strip() for name in text.split(","))
    if len(players) < 2 or not all(players) or len(set(players)) != len(players):
        raise ValueError(f"--players needs two or more different names separated by commas, "
                         f"not {text!r}")
    return players


def cmd_compose(args: argparse.Namespace) -> int:
    replay = importlib.import_module("tabletop.studio.replay")
    if args.fps <= 0:
        raise ValueError(f"--fps must be positive, not {args.fps!r}")
    extra: dict[str, Any] = {}
    steps = None
    if args.script:
        steps, extra = replay.load_script(args.script)
    players = _players(args.players) if args.players else tuple(
        extra.get("players") or ("Ana", "Ben"))
    variant = str(args.variant or extra.get("variant", "sabra")).lower()
    cards = variant in CARD_GAMES
    if variant not in ("sabra", *CARD_GAMES):
        raise ValueError(f"--variant: replays lay sabra, {', '.join(CARD_GAMES)}, not "
                         f"{variant!r}")
    if args.random and args.script:
        raise ValueError("--random and --script both say what to lay; give one")
    if cards and not (args.random or args.script):
        raise ValueError(f"a {variant} replay needs --random or --script")
    if args.card_height is not None and not cards:
        raise ValueError("--card-height is for card replays (--variant rommee)")
    if args.pile is not None and not cards:
        raise ValueError("--pile is for card replays (--variant rommee)")
    width, height = _size(args.size)
    holdout = _names(args.holdout) or []
    use_images = _names(args.use_images)
    if cards:
        card_replay = importlib.import_module("tabletop.studio.card_replay")
        if args.photos != "all" or args.max_aspect is not None:
            raise ValueError("--photos and --max-aspect choose tile crops; card replays take "
                             "the indices of bridge-cards (--use-images, --holdout)")
        settings = card_replay.card_settings((width, height), fps=args.fps, seed=args.seed,
                                             card_height=args.card_height)
        settings = replace(settings, squared_pile=args.pile == "squared")
        bank = card_replay.load_card_bank(args.realdata, use_images=use_images,
                                          holdout=holdout)
        if args.random:
            steps = card_replay.random_card_game(args.seed, len(players), bank=bank,
                                                 variant=variant, settings=settings,
                                                 discards=args.pile is not None)
    else:
        settings = replay.ReplaySettings(width=width, height=height, fps=args.fps,
                                         seed=args.seed)
        if args.photos != "all":
            part = replay.photo_split(args.realdata).of(args.photos)
            use_images = [n for n in part if use_images is None or n in set(use_images)]
        max_aspect = replay.UPRIGHT_ASPECT if args.max_aspect is None else args.max_aspect
        bank = replay.CropBank.load(args.realdata, use_images=use_images, holdout=holdout,
                                    max_aspect=max_aspect)
        if args.random:
            steps = replay.random_game(args.seed, len(players), bank=bank, settings=settings)
    result = replay.compose(steps or replay.sabra_round(), players=players, variant=variant,
                            settings=settings, realdata=args.realdata, bank=bank,
                            background=args.background)
    result.write(args.out)
    if args.random:
        (Path(args.out) / "script.json").write_text(json.dumps(
            {"players": list(players), "variant": variant, "seed": args.seed,
             "steps": [st.to_json() for st in result.steps]}) + "\n", encoding="utf-8")
    files = result.files
    rows = [
        {"file": "video", "path": str(files.video), "frames": result.frame_count,
         "fps": settings.fps, "size": [width, height], "seconds": round(result.duration_s, 3),
         "codec": files.codec},
        {"file": "truth", "path": str(files.truth), "states": len(result.steps),
         "settled_t": [t.settled_t for t in result.timings]},
        {"file": "zones", "path": str(files.zones), "seats": len(players)},
    ]
    for row in rows:
        if args.json:
            print(json.dumps(row))
        elif row["file"] == "video":
            print(f"{row['path']}: {row['frames']} frames, {row['seconds']:.1f} s at "
                  f"{settings.fps:g} fps, {width}x{height} ({row['codec']})")
        elif row["file"] == "truth":
            print(f"{row['path']}: {row['states']} table states (header line first)")
        else:
            print(f"{row['path']}: zones in image pixels for {len(players)} seats")
    return 0


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    replay = commands.add_parser("replay", help="compose game replays from real photos")
    sub = replay.add_subparsers(dest="replay_command", required=True, parser_class=parser_class)
    compose = sub.add_parser(
        "compose", help="a game laid meld by meld with real tile crops on a real table: "
                        "video.mp4, truth.jsonl and zones.json")
    compose.add_argument("--out", required=True, type=Path, help="folder to write the files to")
    compose.add_argument("--seed", type=int, default=0)
    compose.add_argument("--players", default=None,
                         help="names separated by commas (default: the script's, or Ana,Ben)")
    compose.add_argument("--script", help="JSON steps (default: a short Sabra round)")
    compose.add_argument("--realdata", default=None,
                         help="the real-data folder (default: $TABLETOP_REALDATA or "
                              "<repo>/../shared/realdata)")
    compose.add_argument("--size", default="1280x720", help="WIDTHxHEIGHT in pixels")
    compose.add_argument("--fps", type=float, default=10.0)
    compose.add_argument("--background", default=None,
                         help="an image of the empty table (default: sabra-dev's first frame)")
    compose.add_argument("--holdout", default=None,
                         help="photos to take no crop from, e.g. rummy-36,rummy-8")
    compose.add_argument("--use-images", dest="use_images", default=None,
                         help="take crops only from these photos")
    compose.add_argument("--max-aspect", dest="max_aspect", type=float, default=None,
                         help="the widest tile crop, width over height (default 0.9: tiles "
                              "lying square to the camera; 1.1 adds tiles turned by ~45 "
                              "degrees, as sabra-dev shows them)")
    compose.add_argument("--random", action="store_true",
                         help="a random Sabra game of --seed (new melds, melds grown at their "
                              "ends, jokers, sometimes racks laid open at the end)")
    compose.add_argument("--photos", default="all", choices=("all", "adapt", "measure"),
                         help="take crops from this part of the fixed photo split only "
                              "(studio.replay.photo_split)")
    compose.add_argument("--variant", default=None,
                         help="sabra (tiles), rommee or raeuber (cards; default: the "
                              "script's, else sabra)")
    compose.add_argument("--card-height", dest="card_height", type=float, default=None,
                         help="card replays: a card's height in pixels (default 0.174 of "
                              "the frame's height)")
    compose.add_argument("--pile", default=None, choices=("squared", "fanned"),
                         help="card replays: a discard pile laid so (random games end each "
                              "move with a discard; default: none, and a script's pile "
                              "fanned)")
    compose.add_argument("--json", action="store_true")
    compose.set_defaults(handler=cmd_compose)

