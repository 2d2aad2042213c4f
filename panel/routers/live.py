"""The live scoreboard: the match state pushed over a WebSocket after every event, and
when a live table attaches or goes away (its pipeline ends) and when its camera changes
state (drops out, is reconnected).

Every page watching a match shares one :class:`MatchFeed`: the match is read and its
state replayed once per change (at most once per :data:`PUSH_SECONDS`, and for a long
match at most a tenth of the time: :data:`REPLAY_SHARE_INVERSE`), whatever the
number of pages, so the phones at a table do not slow down those who write.

Each state pushed has a version, ``"<last_id>.<n>"`` (``n`` counts the feed's pushes).
A page is sent the whole state first::

    {"version": "41.3", "state": {...}}

and from then on a patch (panel/patch.py: JSON Patch, RFC 6902) from the version it was
last sent to the newest::

    {"version": "42.4", "base": "41.3", "patch": [{"op": "add", "path": "/rounds/-", ...}]}

A patch is worked out once per base and shared by every page at that base, off the
event loop, along with the newest state's text.  A page further behind than the states
kept (:data:`KEPT_STATES`), or one whose patch would be no smaller than the state, is
sent the whole state instead.  A page that holds no state at a patch's base (one that
could not apply the last patch) sends ``{"want": "state"}`` and is sent the whole state
next.

A page that falls behind is sent only the newest (nothing waits for it but a note that
there is news), and one that does not take a push within :data:`SEND_SECONDS` is
disconnected (it reconnects when it can) instead of having pushes piled up for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.concurrency import run_in_threadpool

from tabletop.panel import patch
from tabletop.panel.dependencies import TOKEN_COOKIE, token_matches
from tabletop.panel.service import PanelService
from tabletop.panel.settings import PanelSettings
from tabletop.panel.store import StorageUnavailable, StoreError

router = APIRouter(tags=["live"])
log = logging.getLogger(__name__)
POLL_SECONDS = 1.0
"""Also look at the log this often: a game in another process may write to the same store."""
PUSH_SECONDS = 0.2
"""At most one push of a match this often: a faster scoreboard tells a person nothing more."""
REPLAY_SHARE_INVERSE = 10
"""A push waits at least this many times as long as its replay took."""
SEND_SECONDS = 10.0
"""A page that does not take a push within this long is disconnected."""
KEPT_STATES = 8
"""The states a patch may start from: the newest and those the pages were last sent."""


class _Gone:
    """The match was deleted while shown."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(frozen=True)
class _Push:
    """A state pushed: its version, the state (a patch's base later), the whole message."""

    version: str
    state: dict[str, Any]
    whole: str


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _whole(version: str, state: dict[str, Any]) -> str:
    return f'{{"version":{_text(version)},"state":{_text(state)}}}'


def _patch(base: str, was: dict[str, Any], push: _Push) -> str:
    """The message that takes a page from ``was`` (version ``base``) to ``push``: a patch,
    or the whole state where the patch would be no smaller."""
    ops = _text(patch.diff(was, push.state))
    message = f'{{"version":{_text(push.version)},"base":{_text(base)},"patch":{ops}}}'
    return message if len(message) < len(push.whole) else push.whole


def _prepare(version: str, state: dict[str, Any],
             bases: dict[str, dict[str, Any]]) -> tuple[_Push, dict[str, str]]:
    """The push of ``state`` and its patches from ``bases`` (run off the event loop: a long
    match's state takes some milliseconds to compare and encode)."""
    push = _Push(version, state, _whole(version, state))
    return push, {base: _patch(base, was, push) for base, was in bases.items()}


class Viewer:
    """One page: the version it was last sent, and a note that there is something newer."""

    def __init__(self) -> None:
        self.held: str | None = None
        self.news = asyncio.Event()


class MatchFeed:
    """The pushes of one match to every page of this server watching it."""

    def __init__(
        self, service: PanelService, match_id: int, feeds: dict[Any, MatchFeed], key: Any
    ) -> None:
        self.service = service
        self.match_id = match_id
        self.feeds = feeds
        self.key = key
        self.viewers: set[Viewer] = set()
        self.latest: _Push | _Gone | None = None
        self._pushes = 0
        self._kept: dict[str, dict[str, Any]] = {}
        """The states pages may hold, by version, oldest first (the newest among them)."""
        self._patches: dict[str, str] = {}
        """The messages to the newest state, by the version a page holds."""
        self._wake = service.hub.register(match_id)
        self._task = asyncio.ensure_future(self._run())

    def join(self) -> Viewer:
        viewer = Viewer()
        if self.latest is not None:
            viewer.news.set()
        self.viewers.add(viewer)
        return viewer

    def leave(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            self._task.cancel()
            self.service.hub.unregister(self.match_id, self._wake)
            if self.feeds.get(self.key) is self:
                del self.feeds[self.key]

    def message_for(self, viewer: Viewer) -> str | _Gone | None:
        """What ``viewer`` is to be sent now (None: it has the newest state already); it
        holds the newest state once that is sent."""
        latest = self.latest
        if latest is None or isinstance(latest, _Gone):
            return latest
        base = viewer.held
        if base == latest.version:
            return None
        viewer.held = latest.version
        if base is None:
            return latest.whole
        message = self._patches.get(base)
        if message is None and base in self._kept:
            # a page that took the previous push while this one was prepared: rare, and
            # then the patch is worked out here once for all the pages at that base
            message = self._patches[base] = _patch(base, self._kept[base], latest)
        return latest.whole if message is None else message

    def _publish(self, push: _Push | _Gone, patches: dict[str, str] | None = None) -> None:
        self.latest = push
        self._patches = patches or {}
        if isinstance(push, _Push):
            held = {viewer.held for viewer in self.viewers}
            kept = {version: state for version, state in self._kept.items() if version in held}
            kept[push.version] = push.state
            self._kept = dict(list(kept.items())[-KEPT_STATES:])
        for viewer in self.viewers:
            viewer.news.set()

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
            except Exception:
                # a feed that stopped would leave every page on its last state with no sign
                log.exception("match %d: its state could not be pushed", self.match_id)
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
        now = (last, service.live_inbox(match_id) is not None, service.cameras.get(match_id),
               service.views.get(match_id))
        if now == sent:
            return sent
        state = await run_in_threadpool(service.state, match_id)
        self._pushes += 1
        version = f"{state['last_id']}.{self._pushes}"
        held = {viewer.held for viewer in self.viewers}
        bases = {base: was for base, was in self._kept.items() if base in held}
        if isinstance(self.latest, _Push):  # where a page that is sent it now will be
            bases[self.latest.version] = self.latest.state
        push, patches = await run_in_threadpool(_prepare, version, state, bases)
        self._publish(push, patches)
        live = state["live"]
        return state["last_id"], live["attached"], live["camera"], live["view"]


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
    viewer = feed.join()
    listener = asyncio.ensure_future(_listen(websocket, viewer))
    try:
        while True:
            news = asyncio.ensure_future(viewer.news.wait())
            await asyncio.wait({news, listener}, return_when=asyncio.FIRST_COMPLETED)
            if not news.done():
                news.cancel()
                return  # the page went away
            viewer.news.clear()
            message = feed.message_for(viewer)
            if message is None:
                continue
            if isinstance(message, _Gone):  # deleted while shown: the page goes elsewhere
                await websocket.close(code=4404, reason=message.reason)
                return
            try:
                await asyncio.wait_for(websocket.send_text(message), SEND_SECONDS)
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
        feed.leave(viewer)
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await listener


async def _listen(websocket: WebSocket, viewer: Viewer) -> None:
    """A page asks for the whole state (``{"want": "state"}``) when it cannot apply a
    patch; anything else it sends is ignored.  This ends when the page goes away."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            text = await websocket.receive_text()
            with contextlib.suppress(ValueError):
                asked = json.loads(text)
                if isinstance(asked, dict) and asked.get("want") == "state":
                    viewer.held = None
                    viewer.news.set()
