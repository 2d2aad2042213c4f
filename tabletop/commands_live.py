"""``tabletop run`` (CONTRACT.md): watch a table and keep the game.

Registered by tabletop.cli; the camera stack is imported in the handler only.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tabletop.commands_vision import add_card_model_options


def cmd_run(args: argparse.Namespace) -> int:
    from engine.variants import find_variant, parse_option_args
    from live.game import GameOptions
    from live.run import parse_players, run

    variant = find_variant(args.variant, parse_option_args(args.option or []))
    players = parse_players(args.players)
    options = GameOptions(start_seat=args.start_seat, rounds_limit=args.rounds)
    board = None if args.headless else args.board
    panel = None
    bus = None
    frame_path = None
    if not args.headless:
        import tempfile
        from pathlib import Path

        from live.bus import EventBus
        from panel.embed import start_panel
        from panel.settings import PanelSettings

        bus = EventBus()
        frame_path = Path(tempfile.mkdtemp(prefix="tabletop-")) / "frame.jpg"
        panel = start_panel(
            bus,
            variant_id=variant.id,
            options=variant.options,
            players=players,
            name=f"{variant.name}: {', '.join(players)}",
            settings=PanelSettings(frame_path=frame_path),
        )
        print(f"tabletop: panel on {panel.url}", file=sys.stderr)

    def show(event: dict[str, Any]) -> None:
        if args.events_jsonl is None:
            print(json.dumps(event, ensure_ascii=False), flush=True)

    summary = run(
        args.source,
        variant,
        players,
        events_jsonl=args.events_jsonl,
        model=args.model,
        zoom=args.zoom,
        card_finder=args.card_finder,
        card_reader=args.card_reader,
        card_shrink=args.card_shrink,
        options=options if not args.source.startswith("scenario:") else None,
        on_event=show,
        board_url=board,
        bus=bus,
        frame_path=frame_path,
    )
    print(json.dumps(summary.to_json()), file=sys.stderr)
    if panel is not None:
        print(
            "tabletop: the source has ended; the panel stays up (Ctrl-C to stop)", file=sys.stderr
        )
        try:
            panel.thread.join()
        except KeyboardInterrupt:
            panel.stop()
    return 0


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("run", help="watch a table and keep the game")
    parser.add_argument(
        "--source",
        required=True,
        help="camera index, video file, stream URL, folder, or scenario:FILE.json",
    )
    parser.add_argument("--variant", required=True)
    parser.add_argument("--players", required=True, help="NAME,NAME[,...] in seating order")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="no panel and no board; a file or folder source exits at its end",
    )
    parser.add_argument(
        "--board",
        default=None,
        metavar="PORT",
        help="scoring board port or pyserial URL (see 'tabletop board find')",
    )
    parser.add_argument("--events-jsonl", dest="events_jsonl", default=None)
    parser.add_argument("--option", action="append", metavar="NAME=VALUE")
    parser.add_argument("--model", default=None, help="detection model (default: models/)")
    parser.add_argument("--zoom", type=float, default=None,
                        help="the finder's second pass at this many times its input size "
                             "(1..3, default 1.5; 1 for one pass, at about 0.4 times the "
                             "detector's time)")
    add_card_model_options(parser)
    parser.add_argument("--start-seat", dest="start_seat", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=None, help="rounds in the match")
    parser.set_defaults(handler=cmd_run)
