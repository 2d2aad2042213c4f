"""How uvicorn serves the panel: deadlines for a connection that says too little.

uvicorn closes a connection idle between two requests (``timeout_keep_alive``), but
not one that opens and never finishes its request's head, whether it sends nothing
or half a header: a few hundred of those (a phone on bad Wi-Fi, or anyone on the
network) would each hold a socket for ever.  :class:`HeadDeadline` closes a connection
whose head is not complete within :data:`HEAD_SECONDS` of its first byte being awaited.
A WebSocket that stops answering pings is closed by uvicorn (``ws_ping_*``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_SECONDS = 10.0
"""How long a client has to send a request's head (method, path and headers)."""
KEEP_ALIVE_SECONDS = 5
"""How long a connection may sit idle between two requests."""
PING_SECONDS = 20.0
"""A WebSocket is pinged this often, and closed when a ping is not answered this soon."""


class HeadDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head is late."""

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            # between requests, or in the middle of a head: the clock runs (again)
            if self._head_timer is None:
                self._arm()
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # the keep-alive timer (uvicorn's) covers silence; this one a head begun and not ended
        self._disarm()

    def _arm(self) -> None:
        self._head_timer = self.loop.call_later(HEAD_SECONDS, self._late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _late(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def server_config(app: Any, host: str, port: int) -> uvicorn.Config:
    """uvicorn's settings for the panel at ``host:port``."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=HeadDeadline,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        ws_ping_interval=PING_SECONDS,
        ws_ping_timeout=PING_SECONDS,
        # a push is a few kB at most 5 times a second: compressing it again for every
        # page costs the server more than it saves on the network
        ws_per_message_deflate=False,
    )
