"""The panel running beside the live table, in the same process.

``tabletop run`` (without ``--headless``) and ``tabletop demo --panel`` start
it here: a new match is created with the game's setup, every event on the
bus goes to the store (and from there to the pages over the WebSocket), and
the server runs in a background thread until ``stop``.

The other way, an item corrected or a game button pressed on the panel goes
to the live table: the panel's match gets the inbox of ``bus``
(:func:`tabletop.live.corrections.inbox_for`), which the watch loop of ``tabletop run``
finds through the same bus and drains between frames.  The item-correction
route hands it a :class:`tabletop.live.corrections.Correction`, the action route a
:class:`tabletop.live.actions.Action`, and each waits for the answer, so the watcher,
the game and the panel agree.  The panel knows only those messages and the
inbox, nothing of the pipeline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tabletop.live.bus import EventBus
from tabletop.live.corrections import Inbox, inbox_for
from tabletop.panel.settings import PanelSettings


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
) -> EmbeddedPanel:
    """Serve the panel for a new match fed by ``bus`` (or for ``match_id``, going on with
    it); returns once it answers."""
    import uvicorn

    from tabletop.panel.app import create_app

    settings = settings or PanelSettings()
    app = create_app(settings)
    service = app.state.service
    if match_id is not None:
        match = service.store.match(match_id)
    else:
        match = service.store.create_match(name)
        service.correction(
            match.id,
            "setup",
            "tabletop",
            variant=variant_id,
            options=dict(options),
            players=list(players),
            dealer=0,
            turn_seconds=settings.turn_seconds,
        )
    unsubscribe = service.attach(bus, match.id)
    inbox = service.live_inboxes[match.id] = inbox_for(bus)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="tabletop-panel", daemon=True)
    thread.start()
    deadline = time.monotonic() + wait
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        unsubscribe()
        raise RuntimeError(
            f"the panel did not start on {settings.host}:{settings.port} (port in use?)"
        )
    url = f"http://{settings.host}:{settings.port}/"
    return EmbeddedPanel(url, match.id, server, thread, unsubscribe, inbox, service)
