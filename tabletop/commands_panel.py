"""``tabletop panel``: serve a match's web panel, or export a match.

    tabletop panel [--database URL] [--host 127.0.0.1] [--port 8765] [--token T]
                   [--match ID | --new NAME] [--turn-seconds 120] [--frame FRAME.jpg]
    tabletop panel --export json|csv|events-csv --match ID

Listens on 127.0.0.1 unless ``--host`` says otherwise; on any other address
every change needs a token (``--token`` or ``TABLETOP_PANEL_TOKEN``; one is
made up and printed when none is given).  Settings not given here come from
``TABLETOP_PANEL_*`` (panel/settings.py); the matches are kept in
``matches.sqlite3`` in the user's data folder (live/paths.py) unless
``--database`` or ``TABLETOP_PANEL_DATABASE_URL`` names another database.
Imports FastAPI and uvicorn only when run.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any


def port_number(text: str) -> int:
    """An argparse type: a TCP port, refused in one line where it is none."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a port is a number from 1 to 65535, not {text!r}"
        ) from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 1 to 65535, not {port}")
    return port


def _settings(args: argparse.Namespace) -> Any:
    from tabletop.panel.settings import PanelSettings

    given = {
        "database_url": args.database,
        "host": args.host,
        "port": args.port,
        "token": args.token,
        "match_id": args.match,
        "turn_seconds": args.turn_seconds,
        "frame_path": args.frame,
        "lang": args.lang,
    }
    return PanelSettings(**{key: value for key, value in given.items() if value is not None})


def cmd_panel(args: argparse.Namespace) -> int:
    from tabletop.panel.embed import listen_socket
    from tabletop.panel.service import PanelService
    from tabletop.panel.store import EventStore

    settings = _settings(args)
    # an export only reads: it works on a database it may not write (a copy on a stick)
    store = EventStore(settings.database_url, read_only=bool(args.export))
    service = PanelService(store, settings.turn_seconds)
    if args.export:
        if settings.match_id is None:
            raise ValueError("--export needs --match ID")
        if args.export == "json":
            print(json.dumps(service.export_json(settings.match_id), ensure_ascii=False))
        else:
            table = "events" if args.export == "events-csv" else "rounds"
            sys.stdout.write(service.export_csv(settings.match_id, table))
        return 0
    # the address first: a panel that cannot listen (the port in use) writes nothing
    sock = listen_socket(settings.host, settings.port)
    if args.new:
        settings.match_id = service.store.create_match(args.new).id
    if settings.on_network and not settings.token:
        settings.token = secrets.token_urlsafe(16)
        print(f"tabletop: panel token (needed for changes): {settings.token}", file=sys.stderr)
    serve(settings, service, sock=sock)
    return 0


def serve(
    settings: Any,
    service: Any = None,
    bus: Any = None,
    match_id: int | None = None,
    sock: Any = None,
) -> None:
    """Run the panel until interrupted; with ``bus``, log its events to the match first.
    ``sock``: the panel's address, already bound (bound here when not given, before the
    store is touched)."""
    import contextlib

    import uvicorn

    from tabletop.panel.app import create_app
    from tabletop.panel.embed import listen_socket
    from tabletop.panel.join import UNSPECIFIED
    from tabletop.panel.serving import server_config

    if sock is None:
        sock = listen_socket(settings.host, settings.port)
    app = create_app(settings, service)
    if bus is not None:
        target = match_id or app.state.service.current_match(settings.match_id).id
        app.state.service.attach(bus, target)
    match = app.state.service.current_match(settings.match_id)
    local = "localhost" if settings.host in UNSPECIFIED else settings.host
    print(
        f"tabletop: panel for match {match.id} ({match.name}) on http://{local}:{settings.port}/",
        file=sys.stderr,
    )
    announce_join(settings, sys.stderr)
    server = uvicorn.Server(server_config(app, settings.host, settings.port))
    with sock, contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])


def announce_join(settings: Any, out: Any) -> None:
    """Where the phones at the table open the panel: its network link and a QR code of it."""
    from tabletop.panel.join import join_url, print_qr

    url = join_url(settings.host, settings.port, settings.token)
    if url is None:
        return
    print(f"tabletop: on the phones open {url} or scan:", file=out)
    print_qr(url, out)


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    panel = commands.add_parser("panel", help="serve the web panel of a match (scores, table)")
    panel.add_argument(
        "--database",
        help="SQLAlchemy URL (default: matches.sqlite3 in the data folder, "
        "$TABLETOP_DATA_DIR or the platform's user data folder)",
    )
    panel.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    panel.add_argument("--port", type=port_number, help="port (default 8765)")
    panel.add_argument("--token", help="token needed for changes (always on the network)")
    which = panel.add_mutually_exclusive_group()
    which.add_argument("--match", type=int, help="match id (default: the newest)")
    which.add_argument("--new", metavar="NAME", help="start a new match with this name")
    panel.add_argument("--turn-seconds", type=int, help="turn timer (default 120, Sabra)")
    panel.add_argument("--frame", help="JPEG the live table keeps overwriting (camera view)")
    panel.add_argument(
        "--lang", choices=("de", "en", "ro"),
        help="the pages' language (default: each browser's own, else English)",
    )
    panel.add_argument(
        "--export", choices=("json", "csv", "events-csv"), help="print the match and exit"
    )
    panel.set_defaults(handler=cmd_panel)
