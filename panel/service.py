"""The store, the live hub and the replay together: what the routers and the live game use.

``live_inboxes`` holds, per match, the inbox of the live table the panel runs
beside (``panel.embed.start_panel`` puts it there): corrections and game
actions go to the table through it, and the state says whether one is
attached (``state["live"]["attached"]``: an inbox whose watch loop has not
ended).  ``cameras`` holds the live table's camera state (``state["live"]["camera"]``),
so the pages say when the camera has dropped out and is being reconnected.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tabletop.live.bus import EventBus
from tabletop.live.corrections import Inbox
from tabletop.panel.hub import Hub
from tabletop.panel.state import last_undoable, replay
from tabletop.panel.store import EventStore, MatchInfo, StoredEvent, StoreError


class PanelService:
    def __init__(self, store: EventStore, turn_seconds: int = 120) -> None:
        self.store = store
        self.hub = Hub()
        self.turn_seconds = turn_seconds
        self.live_inboxes: dict[int, Inbox] = {}
        self.cameras: dict[int, dict[str, str]] = {}
        """Per match, the live table's camera as its source last reported it (``state``:
        opening, live, reconnecting, lost, ended; ``message``): set from the camera's own
        thread by :meth:`set_camera`."""

    def record(
        self, match_id: int, event: Mapping[str, Any], *, key: str | None = None
    ) -> StoredEvent:
        """Append to the log, then wake the match's live clients (``key``: see
        :meth:`EventStore.append`)."""
        stored, new = self.store.appended(match_id, event, key=key)
        if new:
            self.hub.notify(match_id, stored.id)
        return stored

    def correction(self, match_id: int, kind: str, who: str, **fields: Any) -> StoredEvent:
        """A panel event: who made it and when are part of it."""
        event = {"type": kind, "seat": None, "who": who, "at": time.time(), **fields}
        return self.record(match_id, event)

    def undo_last(self, match_id: int, who: str) -> StoredEvent:
        target = last_undoable(self.store.events(match_id))
        if target is None:
            raise StoreError(f"match {match_id} has nothing to undo")
        return self.correction(match_id, "undo", who, target=target.id, undone_type=target.type)

    def state(self, match_id: int) -> dict[str, Any]:
        info = self.store.match(match_id)
        data = replay(self.store.events(match_id), turn_seconds=self.turn_seconds)
        data["match_info"] = info.to_json()
        data["live"]["attached"] = self.live_inbox(match_id) is not None
        data["live"]["camera"] = self.cameras.get(match_id)
        return data

    def set_camera(self, match_id: int, state: str, message: str) -> None:
        """The live table's camera changed state: keep it and wake the pages."""
        self.cameras[match_id] = {"state": state, "message": message}
        self.hub.notify(match_id, self.store.last_id(match_id))

    def live_inbox(self, match_id: int) -> Inbox | None:
        """The inbox of the live table playing ``match_id``, while its loop runs."""
        inbox = self.live_inboxes.get(match_id)
        return None if inbox is None or inbox.closed else inbox

    def unfinished_match(
        self, variant_id: str, players: Sequence[str]
    ) -> tuple[int, list[dict[str, Any]]] | None:
        """The newest match of ``variant_id`` between ``players`` (in that seat order) that
        is not over, with its scored rounds; None when there is none to go on with."""
        for info in reversed(self.store.matches()):
            state = self.state(info.id)
            setup = state["setup"]
            if setup["variant"] != variant_id or list(setup["players"]) != list(players):
                continue
            match = state.get("match") or {}
            if match.get("over"):
                return None  # the last such match ended: a new one begins
            return info.id, list(state["rounds"])
        return None

    def current_match(self, preferred: int | None = None) -> MatchInfo:
        if preferred is not None:
            return self.store.match(preferred)
        matches = self.store.matches()
        if not matches:
            return self.store.create_match("Match 1")
        return matches[-1]

    def attach(self, bus: EventBus, match_id: int) -> Any:
        """Log every event published on ``bus`` to the match; returns the unsubscribe function."""

        def log_event(event: dict[str, Any]) -> None:
            self.record(match_id, event)

        return bus.subscribe(log_event)

    # --- export ----------------------------------------------------------------
    def export_json(self, match_id: int) -> dict[str, Any]:
        events = self.store.events(match_id)
        return {
            "match": self.store.match(match_id).to_json(),
            "events": [stored.to_json() for stored in events],
            "state": replay(events, turn_seconds=self.turn_seconds),
        }

    def export_csv(self, match_id: int, table: str) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if table == "events":
            writer.writerow(["id", "recorded_at", "seq", "t", "type", "seat", "who", "event"])
            for stored in self.store.events(match_id):
                event = stored.event
                writer.writerow(
                    [
                        stored.id,
                        f"{stored.recorded_at:.3f}",
                        _cell(event.get("seq")),
                        _cell(event.get("t")),
                        stored.type,
                        _cell(event.get("seat")),
                        _cell(event.get("who")),
                        _json_cell(event),
                    ]
                )
            return out.getvalue()
        state = self.state(match_id)
        players = state["setup"]["players"]
        writer.writerow(
            ["round", *map(_cell, players), *[_cell(f"{name} total") for name in players]]
        )
        history = [e for e in (state["match"] or {}).get("history", []) if e["type"] == "round"]
        for entry in history:
            writer.writerow(
                [
                    entry["round"],
                    *[entry["changes"].get(name, "") for name in players],
                    *[entry["totals"].get(name, "") for name in players],
                ]
            )
        return out.getvalue()


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    # A cell that a spreadsheet would run as a formula is quoted as text (CSV injection).
    return "'" + text if text[:1] in ("=", "+", "-", "@") and not _is_number(text) else text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _json_cell(event: Mapping[str, Any]) -> str:
    import json

    return _cell(json.dumps(dict(event), ensure_ascii=False, sort_keys=True))
