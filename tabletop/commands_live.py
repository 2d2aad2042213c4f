"""``tabletop run`` (CONTRACT.md): watch a table and keep the game.

Registered by tabletop.cli; the camera stack is imported in the handler only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tabletop.commands_vision import (
    add_adapted_option,
    add_card_model_options,
    add_palette_option,
    detector_settings,
    model_path,
)
from tabletop.engine.events import Event, event_to_json


def _table_mm(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        width, height = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--table-mm must be WIDTHxHEIGHT in millimetres, not {text!r}") from None
    if not (width > 0 and height > 0):
        raise ValueError(f"--table-mm must be positive, not {text!r}")
    return width, height


def _unfinished(settings: Any, variant_id: str, players: Sequence[str]) -> Any:
    """(match id, its scored rounds, its last event's seq) of the match ``--resume`` goes
    on with, or None."""
    from tabletop.engine.base import RoundResult
    from tabletop.panel.service import PanelService
    from tabletop.panel.store import EventStore

    store = EventStore(settings.database_url)
    try:
        found = PanelService(store, settings.turn_seconds).unfinished_match(variant_id, players)
        if found is None:
            return None
        match_id, rounds = found
        seqs = (stored.event.get("seq") for stored in store.iter_events(match_id))
        last_seq = max((seq for seq in seqs if isinstance(seq, int)), default=0)
    finally:
        store.close()
    return (match_id, tuple(RoundResult(dict(r["scores"]), r.get("winner")) for r in rounds),
            last_seq)


def cmd_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tabletop.engine.variants import find_variant, parse_option_args
    from tabletop.live.game import GameOptions
    from tabletop.live.run import (
        SCENARIO_PREFIX,
        Listeners,
        Reading,
        TableSetup,
        parse_players,
        run,
    )
    from tabletop.live.status import StatusLine
    from tabletop.paths import corrections_file

    variant = find_variant(args.variant, parse_option_args(args.option or []))
    players = parse_players(args.players)
    variant.check_players(len(players))
    options = GameOptions(start_seat=args.start_seat, rounds_limit=args.rounds)
    table = TableSetup(
        calibration=Path(args.calibration) if args.calibration else None,
        zones=Path(args.zones) if args.zones else None,
        table_mm=_table_mm(args.table_mm),
        marker_mm=args.marker_mm,
        find_markers=not args.no_markers,
    )
    if args.resume and args.headless:
        raise ValueError("--resume goes on with a match of the panel's store: leave out"
                         " --headless")
    scripted = args.source.startswith(SCENARIO_PREFIX)
    model = None if scripted else model_path(args.model, args.adapted)
    model_settings = None if scripted else detector_settings(args)
    quiet = getattr(args, "verbosity", 0) < 0
    # every event reaches standard output (in words, or as JSON with --json), so the
    # status line does not print warnings a second time
    status = None if quiet else StatusLine(players, sys.stderr, event_notices=False)
    board = None if args.headless else args.board
    panel = None
    frame_path = None
    events_after = 0
    from tabletop.live.bus import EventBus

    bus = EventBus()
    if not args.headless:
        import tempfile

        from tabletop.commands_panel import announce_join
        from tabletop.panel.embed import start_panel
        from tabletop.panel.settings import PanelSettings

        frame_path = Path(tempfile.mkdtemp(prefix="tabletop-")) / "frame.jpg"
        given = {"port": args.port, "host": args.host, "token": args.token, "lang": args.lang}
        settings = PanelSettings(frame_path=frame_path,
                                 **{k: v for k, v in given.items() if v is not None})
        if settings.on_network and not settings.token:
            import secrets

            settings = settings.model_copy(update={"token": secrets.token_urlsafe(12)})
        resumed = _unfinished(settings, variant.id, players) if args.resume else None
        if resumed is not None:
            match_id, earlier, events_after = resumed
            options = replace(options, earlier_rounds=earlier)
            print(f"tabletop: going on with match {match_id} from round {len(earlier) + 1}",
                  file=sys.stderr, flush=True)
        elif args.resume:
            print("tabletop: no unfinished match of these players: a new one begins",
                  file=sys.stderr, flush=True)
        panel = start_panel(
            bus,
            variant_id=variant.id,
            options=variant.options.as_dict(),
            players=players,
            name=f"{variant.name}: {', '.join(players)}",
            settings=settings,
            match_id=resumed[0] if resumed is not None else None,
            rounds_limit=options.rounds_limit,
            target=options.target,
        )
        print(f"tabletop: panel on {panel.url}", file=sys.stderr, flush=True)
        announce_join(settings, sys.stderr)

    # A program reading standard output gets the events as JSON lines (the public
    # contract); a person at a terminal, or a run whose events go to a file, gets words.
    json_out = args.json or (args.events_jsonl is None and not sys.stdout.isatty())

    def show(event: Event) -> None:
        if json_out:
            line: str | None = json.dumps(event_to_json(event), ensure_ascii=False)
        else:
            line = event_words(event, players)
        if line is None:
            return
        if status is not None:
            status.write_above(line, sys.stdout)
        else:
            print(line, flush=True)

    keys = None
    if not args.source.startswith(SCENARIO_PREFIX):
        from tabletop.live.keys import HELP, KeyReader

        if KeyReader.available():
            import _thread

            from tabletop.live.corrections import inbox_for

            def say(text: str) -> None:
                if status is not None:
                    status.notice(text)
                else:
                    print(f"tabletop: {text}", file=sys.stderr)

            keys = KeyReader(inbox_for(bus), say=say, on_quit=_thread.interrupt_main).start()
            say(HELP)
    if status is not None:
        status.start()
    stopped = False
    try:
        summary = run(
            args.source,
            variant,
            players,
            reading=Reading(model=model, settings=model_settings, table=table,
                            every_frame=args.every_frame, reconnect_for_s=args.reconnect_for),
            listeners=Listeners(
                bus=bus, on_event=show, events_jsonl=args.events_jsonl, status=status,
                board_url=board, frame_path=frame_path,
                on_source=panel.camera if panel is not None else None,
                on_too_far=panel.too_far if panel is not None else None,
            ),
            options=options,
            # corrections come only from the panel, which a headless run has not
            keep_corrections=None if scripted or args.headless else corrections_file(),
            events_after=events_after,
        )
    except KeyboardInterrupt:
        # Ctrl-C (or q) is how a camera run ends: the game so far is kept and summed up
        stopped = True
    finally:
        if keys is not None:
            keys.stop()
        if status is not None:
            status.stop()
    if status is not None:
        print(f"tabletop: {status.summary()}".replace("\n", "\ntabletop: "), file=sys.stderr)
    if stopped:
        if panel is not None:
            panel.stop()
        return 0
    if json_out:
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


def event_words(event: Event, players: Sequence[str]) -> str | None:
    """An event as ``tabletop demo`` prints it: its time and what happened, in words
    (None for events a person need not see)."""
    from tabletop.live.events import describe_event

    line = describe_event(event, players)
    return None if line is None else f"   t={event.t:5.1f}  {line}"


def variants_help() -> str:
    """The variants ``--variant`` takes and what ``--option`` does, for ``run --help``
    (built when asked, so other commands do not load the rules)."""
    import textwrap

    from tabletop.engine.variants import VARIANTS, find_variant

    def players(variant_id: str, options: dict[str, Any]) -> str:
        fewest, most = find_variant(variant_id, options).player_range()
        return f"{fewest}+" if most is None else f"{fewest}-{most}"

    lines = ["variants (--variant ID):"]
    for variant_id, cls in VARIANTS.items():
        counts = players(variant_id, {})
        if any(spec.name == "decks" for spec in cls.option_specs):
            with_two = players(variant_id, {"decks": 2})
            if with_two != counts:
                counts += f" ({with_two} with --option decks=2)"
        lines.append(f"  {variant_id:24}{cls.name}, {counts} players")
        names = ", ".join(spec.name for spec in cls.option_specs) or "none"
        lines += textwrap.wrap(f"options: {names}", 78, initial_indent=" " * 26,
                               subsequent_indent=" " * 35)
    lines += [
        "",
        "--option NAME=VALUE sets a house rule of the chosen variant, once per option,",
        "e.g. --variant sabra --option joker_penalty=25 --option dutch=true, or",
        "--variant remi --option initial_meld=45.  Each option's values and default:",
        "'tabletop rules variants' and docs/variants.md.",
        "",
        "At a terminal, standard output shows each event in words; piped to a program",
        "it carries them as JSON lines (--json forces JSON).  --events-jsonl FILE",
        "writes them, as JSON lines, to FILE, and leaves words on standard output.",
    ]
    return "\n".join(lines) + "\n"


class _RunHelp(argparse.RawDescriptionHelpFormatter):
    def format_help(self) -> str:
        return super().format_help() + "\n" + variants_help()


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "run", help="watch a table and keep the game", formatter_class=_RunHelp
    )
    parser.add_argument(
        "--source",
        required=True,
        help="camera index (0, 1, ...) or /dev/video*, a stream URL (a phone's IP-camera "
             "app: http://..., rtsp://...), a GStreamer pipeline, a video file, a folder of "
             "images, or scenario:FILE.json",
    )
    parser.add_argument("--variant", required=True, metavar="ID",
                        help="the game played (listed below)")
    parser.add_argument("--players", required=True,
                        help="NAME,NAME[,...] in seating order, as many as the variant allows")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="no panel and no board; a file or folder source exits at its end",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on with the newest unfinished match of this variant and these players in"
        " the panel's store (after a crash or a closed laptop), from its next round",
    )
    parser.add_argument(
        "--board",
        default=None,
        metavar="PORT",
        help="scoring board port or pyserial URL (see 'tabletop board find')",
    )
    parser.add_argument("--events-jsonl", dest="events_jsonl", default=None, metavar="FILE",
                        help="also write every event to FILE, one JSON object per line")
    parser.add_argument("--json", action="store_true",
                        help="print the events on standard output as JSON lines even at a terminal")
    parser.add_argument("--option", action="append", metavar="NAME=VALUE",
                        help="a house rule of the variant (repeatable; see below)")
    parser.add_argument("--model", default=None, help="detection model (default: models/)")
    parser.add_argument("--zoom", type=float, default=None,
                        help="the finder's second pass at this many times its input size "
                             "(1..3, default 1.5; 1 for one pass, at about 0.4 times the "
                             "detector's time)")
    parser.add_argument("--zoom-out", dest="zoom_out", type=float, default=None,
                        help="where a tile is large or the frame holds few items, "
                             "finder passes at this many times the input size and its "
                             "square and cube (0.25..1, default 0.667; 1 for none)")
    add_card_model_options(parser)
    add_palette_option(parser)
    add_adapted_option(parser)
    parser.add_argument("--every-frame", dest="every_frame", action="store_true",
                        help="run the model on every whole frame, not only where the table "
                             "changed (several times the CPU; see bench/live_fps.py)")
    parser.add_argument("--calibration", default=None, metavar="FILE",
                        help="the table plane from 'tabletop calibration table' (default: "
                             "found from the printed corner markers when they are in view)")
    parser.add_argument("--zones", default=None, metavar="FILE",
                        help="the zones from 'tabletop calibration zones' (default: a band "
                             "along each player's edge of a calibrated table)")
    parser.add_argument("--table-mm", dest="table_mm", default=None, metavar="WxH",
                        help="millimetres between the corner markers' centres (default: "
                             "measured from the markers' printed side)")
    parser.add_argument("--marker-mm", dest="marker_mm", type=float, default=60.0,
                        help="the printed side of the corner markers (default 60)")
    parser.add_argument("--no-markers", dest="no_markers", action="store_true",
                        help="do not look for corner markers: the whole frame is the table")
    parser.add_argument("--reconnect-for", dest="reconnect_for", type=float, default=120.0,
                        metavar="SECONDS",
                        help="how long a camera or stream that dropped out is tried again "
                             "before the run ends (default 120)")
    parser.add_argument("--port", type=int, default=None,
                        help="the panel's port (default 8765, or TABLETOP_PANEL_PORT)")
    parser.add_argument("--host", default=None,
                        help="where the panel listens: 0.0.0.0 to open it on the players' "
                             "phones (then a token is needed for changes; one is made and "
                             "printed in the address)")
    parser.add_argument("--token", default=None, help="the panel's token (with --host)")
    parser.add_argument("--lang", choices=("de", "en", "ro"), default=None,
                        help="the panel's language (default: each browser's own)")
    parser.add_argument("--start-seat", dest="start_seat", type=int, default=0, metavar="SEAT",
                        help="who plays first: 0 for the first name in --players (default 0)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds in the match")
    parser.set_defaults(handler=cmd_run)
