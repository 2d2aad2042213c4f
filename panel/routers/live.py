"""The live scoreboard: the match state pushed over a WebSocket after every event, and
when a live table attaches or goes away (its watch loop ends) and when its camera changes
state (drops out, is reconnected)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from tabletop.panel.dependencies import TOKEN_COOKIE, token_matches
from tabletop.panel.service import PanelService
from tabletop.panel.settings import PanelSettings
from tabletop.panel.store import StoreError

router = APIRouter(tags=["live"])
POLL_SECONDS = 1.0
"""Also look at the log this often: a game in another process may write to the same store."""


@router.websocket("/ws/matches/{match_id}")
async def live_state(websocket: WebSocket, match_id: int) -> None:
    service: PanelService = websocket.app.state.service
    settings: PanelSettings = websocket.app.state.settings
    if settings.on_network and not token_matches(settings, websocket.cookies.get(TOKEN_COOKIE)):
        await websocket.close(code=4401, reason="the panel on the network needs its token")
        return
    await websocket.accept()
    if not 1 <= match_id < 2**31:
        await websocket.close(code=4404, reason="no such match")
        return
    try:
        await run_in_threadpool(service.store.match, match_id)
    except StoreError as error:
        await websocket.close(code=4404, reason=str(error)[:100])
        return
    queue = service.hub.register(match_id)
    receiver = asyncio.ensure_future(_drain_incoming(websocket))
    try:
        sent: tuple[Any, ...] | None = None
        while not receiver.done():
            last = await run_in_threadpool(service.store.last_id, match_id)
            now = (last, service.live_inbox(match_id) is not None, service.cameras.get(match_id))
            if now != sent:
                state = await run_in_threadpool(service.state, match_id)
                await websocket.send_json(state)
                live = state["live"]
                sent = (state["last_id"], live["attached"], live["camera"])
            waiter = asyncio.ensure_future(queue.get())
            await asyncio.wait(
                {waiter, receiver}, timeout=POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if not waiter.done():
                waiter.cancel()
            while not queue.empty():
                queue.get_nowait()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        service.hub.unregister(match_id, queue)
        receiver.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await receiver


async def _drain_incoming(websocket: WebSocket) -> None:
    """Clients send nothing that matters; this ends when they go away."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            await websocket.receive_text()
