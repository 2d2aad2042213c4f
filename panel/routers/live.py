"""The live scoreboard: the match state pushed over a WebSocket after every event, and
when a live table attaches or goes away (its watch loop ends) and when its camera changes
state (drops out, is reconnected).

Every page watching a match shares one :class:`MatchFeed`: the match is read and its
state replayed once per change (at most once per :data:`PUSH_SECONDS`, and for a long
match at most a tenth of the time: :data:`REPLAY_SHARE_INVERSE`), whatever the
number of pages, so the phones at a table do not slow down those who write.  Each push
is the whole state, so a page that falls behind needs only the newest one: a page holds
at most one push waiting, and one that does not take a push within :data:`SEND_SECONDS`
is disconnected (it reconnects when it can) instead of having pushes piled up for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from tabletop.panel.dependencies import TOKEN_COOKIE, token_matches
from tabletop.panel.service import PanelService
from tabletop.panel.settings import PanelSettings
from tabletop.panel.store import StorageUnavailable, StoreError

router = APIRouter(tags=["live"])
POLL_SECONDS = 1.0
"""Also look at the log this often: a game in another process may write to the same store."""
PUSH_SECONDS = 0.2
"""At most one push of a match this often: a faster scoreboard tells a person nothing more."""
REPLAY_SHARE_INVERSE = 10
"""A push waits at least this many times as long as its replay took."""
SEND_SECONDS = 10.0
"""A page that does not take a push within this long is disconnected."""


class _Gone:
    """The match was deleted while shown."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class MatchFeed:
    """The pushes of one match to every page of this server watching it."""

    def __init__(
        self, service: PanelService, match_id: int, feeds: dict[Any, MatchFeed], key: Any
    ) -> None:
        self.service = service
        self.match_id = match_id
        self.feeds = feeds
        self.key = key
        self.viewers: set[asyncio.Queue[str | _Gone]] = set()
        self.latest: str | _Gone | None = None
        self._wake = service.hub.register(match_id)
        self._task = asyncio.ensure_future(self._run())

    def join(self) -> asyncio.Queue[str | _Gone]:
        mailbox: asyncio.Queue[str | _Gone] = asyncio.Queue(maxsize=1)
        if self.latest is not None:
            mailbox.put_nowait(self.latest)
        self.viewers.add(mailbox)
        return mailbox

    def leave(self, mailbox: asyncio.Queue[str | _Gone]) -> None:
        self.viewers.discard(mailbox)
        if not self.viewers:
            self._task.cancel()
            self.service.hub.unregister(self.match_id, self._wake)
            if self.feeds.get(self.key) is self:
                del self.feeds[self.key]

    def _publish(self, push: str | _Gone) -> None:
        self.latest = push
        for mailbox in self.viewers:
            with contextlib.suppress(asyncio.QueueEmpty):
                mailbox.get_nowait()  # a push not yet taken is stale now
            mailbox.put_nowait(push)

    async def _run(self) -> None:
        sent: tuple[Any, ...] | None = None
        while True:
            began = time.monotonic()
            try:
                sent = await self._push_if_changed(sent)
            except StoreError as error:
                self._publish(_Gone(str(error)[:100]))
                return
            except StorageUnavailable:
                pass  # the database away a moment: the pages keep what they show
            took = time.monotonic() - began
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.get(), POLL_SECONDS)
            # events that come meanwhile go out together in the next push: a replay per
            # event of a busy match would take the writers' time, and a long match's
            # replay may take no more than a tenth of the server's
            pause = max(PUSH_SECONDS, took * REPLAY_SHARE_INVERSE)
            await asyncio.sleep(max(0.0, began + pause - time.monotonic()))

    async def _push_if_changed(self, sent: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
        """Push the state when the match has changed since ``sent``; what is pushed now."""
        service, match_id = self.service, self.match_id
        await run_in_threadpool(service.store.match, match_id)
        last = await run_in_threadpool(service.store.last_id, match_id)
        now = (last, service.live_inbox(match_id) is not None, service.cameras.get(match_id))
        if now == sent:
            return sent
        state = await run_in_threadpool(service.state, match_id)
        self._publish(json.dumps(state, ensure_ascii=False, separators=(",", ":")))
        live = state["live"]
        return state["last_id"], live["attached"], live["camera"]


def _feed(websocket: WebSocket, service: PanelService, match_id: int) -> MatchFeed:
    """The match's feed in this event loop (a test's client may bring another loop)."""
    app_state = websocket.app.state
    if not hasattr(app_state, "live_feeds"):
        app_state.live_feeds = {}
    feeds: dict[Any, MatchFeed] = app_state.live_feeds
    key = (asyncio.get_running_loop(), match_id)
    feed = feeds.get(key)
    if feed is None or isinstance(feed.latest, _Gone):
        feed = feeds[key] = MatchFeed(service, match_id, feeds, key)
    return feed


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
    feed = _feed(websocket, service, match_id)
    mailbox = feed.join()
    receiver = asyncio.ensure_future(_drain_incoming(websocket))
    try:
        while True:
            taker = asyncio.ensure_future(mailbox.get())
            await asyncio.wait({taker, receiver}, return_when=asyncio.FIRST_COMPLETED)
            if not taker.done():
                taker.cancel()
                return  # the page went away
            push = taker.result()
            if isinstance(push, _Gone):  # deleted while shown: the page goes elsewhere
                await websocket.close(code=4404, reason=push.reason)
                return
            try:
                await asyncio.wait_for(websocket.send_text(push), SEND_SECONDS)
            except TimeoutError:
                # a page that does not read: let it go rather than hold pushes for it
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        websocket.close(code=1013, reason="too slow"), SEND_SECONDS
                    )
                return
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        feed.leave(mailbox)
        receiver.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await receiver


async def _drain_incoming(websocket: WebSocket) -> None:
    """Clients send nothing that matters; this ends when they go away."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            await websocket.receive_text()
