"""The panel running beside the live table, in the same process.

``tabletop run`` (without ``--headless``) and ``tabletop demo --panel`` start
it here: a new match is created with the game's setup, every event on the
bus goes to the store (and from there to the pages over the WebSocket), and
the server runs in a background thread until ``stop``.

The other way, an item corrected or a game button pressed on the panel goes
to the live table: the panel's match gets the inbox of ``bus``
(:func:`tabletop.live.corrections.inbox_for`), which the pipeline's loop of ``tabletop run``
finds through the same bus and drains between frames.  The item-correction
route hands it a :class:`tabletop.live.corrections.Correction`, the action route a
:class:`tabletop.live.actions.Action`, and each waits for the answer, so the watcher,
the game and the panel agree.  The panel knows only those messages and the
inbox, nothing of the pipeline.

The panel's address is taken (:func:`listen_socket`) before anything is written: a
panel that cannot start (the port in use) leaves no match behind.
"""

from __future__ import annotations

import errno
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tabletop.live.bus import EventBus
from tabletop.live.corrections import Inbox, inbox_for
from tabletop.panel.events import MatchSetUp
from tabletop.panel.join import UNSPECIFIED
from tabletop.panel.settings import PanelSettings


class PanelAddressError(ValueError):
    """The panel cannot listen on its address (the port in use, an address not this
    machine's); the command line reports it on one line with exit status 2."""


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound to the panel's address, for uvicorn to serve on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # as uvicorn binds: a port left in TIME_WAIT by the last run is taken again, one
    # another server listens on is not
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        why = error.strerror or str(error)
        if error.errno == errno.EADDRINUSE:
            why += " (another panel or program listens there: choose another --port)"
        raise PanelAddressError(f"the panel cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


@dataclass
class EmbeddedPanel:
    url: str
    match_id: int
    server: Any
    thread: threading.Thread
    unsubscribe: Callable[[], None]
    inbox: Inbox | None = None
    """Where the panel's corrections and actions for ``match_id`` go to the live table."""
    service: Any = None

    def camera(self, status: Any) -> None:
        """Show the live table's camera state (a ``live.sources.SourceStatus``, from any
        thread) on the pages."""
        if self.service is not None:
            self.service.set_camera(self.match_id, str(status.state), str(status.message))

    def too_far(self, index_px: float) -> None:
        """Show on the pages that card indices about ``index_px`` long are left unread."""
        if self.service is not None:
            self.service.set_too_far(self.match_id, index_px)

    def stop(self, timeout: float = 5.0) -> None:
        self.unsubscribe()
        self.server.should_exit = True
        self.thread.join(timeout)


def start_panel(
    bus: EventBus,
    *,
    variant_id: str,
    options: Mapping[str, Any],
    players: Sequence[str],
    name: str,
    settings: PanelSettings | None = None,
    wait: float = 10.0,
    match_id: int | None = None,
    rounds_limit: int | None = None,
    target: int | None = None,
) -> EmbeddedPanel:
    """Serve the panel for a new match fed by ``bus`` (or for ``match_id``, going on with
    it); returns once it answers.  ``rounds_limit`` and ``target``: where the game ends
    the match, written into the new match's setup so the panel's replay ends it too.
    Raises PanelAddressError, having written nothing, when the address is taken."""
    import uvicorn

    from tabletop.panel.app import create_app
    from tabletop.panel.serving import server_config

    settings = settings or PanelSettings()
    app = create_app(settings)
    service = app.state.service
    if match_id is not None:
        service.store.match(match_id)  # an unknown id is refused before anything starts
    sock = listen_socket(settings.host, settings.port)
    config = server_config(app, settings.host, settings.port)
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="tabletop-panel", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + wait
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        server.should_exit = True
        thread.join(wait)
        sock.close()
        raise RuntimeError(f"the panel did not start on {settings.host}:{settings.port}")
    # the match is made once the panel serves, so a panel that fails leaves none behind
    if match_id is None:
        match_id = service.store.create_match(name).id
        service.log(match_id, MatchSetUp(
            who="tabletop", variant=variant_id, options=dict(options), players=tuple(players),
            dealer=0, rounds_limit=rounds_limit, target=target,
            turn_seconds=settings.turn_seconds,
        ))
    # the pages opened without ?match= show the match this table plays
    app.state.settings = settings.model_copy(update={"match_id": match_id})
    unsubscribe = service.attach(bus, match_id)
    inbox = service.live_inboxes[match_id] = inbox_for(bus)
    local = "localhost" if settings.host in UNSPECIFIED else settings.host
    url = f"http://{local}:{settings.port}/"
    return EmbeddedPanel(url, match_id, server, thread, unsubscribe, inbox, service)
