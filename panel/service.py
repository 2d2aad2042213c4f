"""The store, the live hub and the replay together: what the routers and the live game use.

``live_inboxes`` holds, per match, the inbox of the live table the panel runs
beside (``panel.embed.start_panel`` puts it there): corrections and game
actions go to the table through it, and the state says whether one is
attached (``state["live"]["attached"]``: an inbox whose pipeline has not
ended).  ``cameras`` holds the live table's camera state (``state["live"]["camera"]``),
so the pages say when the camera has dropped out and is being reconnected.

Rounds scored by hand (a score sheet kept on paper, a game without the camera) are
scored here by the engine for the match's variant, like the live game's, and logged
as ``round_scored`` (``manual``) or, for an earlier round entered again,
``score_edited``.  The match list and the players' profiles are computed from every
match's replay, kept per match until it has a newer event.

One sign convention for what players read: a penalty game (Rommé, Wiener, ...) counts
penalty points, positive, the fewest best, in the match list, the profiles and the CSV
export as on the pages; the state keeps the engine's totals (higher is better, penalty
games negative) beside ``result.penalty``, which tells a display to turn them round.

A match is ended on the panel with ``match_closed`` (:meth:`PanelService.close_match`),
taken out with :meth:`EventStore.delete_match`, and played again by the same players with
:meth:`PanelService.rematch`.
"""

from __future__ import annotations

import csv
import io
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tabletop.engine.base import ROUND_FLAGS, RoundInput, RoundResult
from tabletop.engine.events import Event, event_to_json
from tabletop.engine.match import Match, MatchError
from tabletop.engine.rounds import round_from_json, score_round
from tabletop.live.bus import EventBus
from tabletop.live.corrections import Inbox
from tabletop.panel.events import (
    LogUndone,
    MatchClosedOnPanel,
    MatchSetUp,
    PanelEvent,
    ScoreEdited,
    panel_event_to_json,
)
from tabletop.panel.hints import HintPool
from tabletop.panel.hub import Hub
from tabletop.panel.state import last_undoable, match_for, replay
from tabletop.panel.store import EventStore, MatchInfo, StoredEvent, StoreError


class RoundRefused(ValueError):
    """A round entry the rules or the match refuse (answered 422 with the reason)."""


class RoundConflict(Exception):
    """A round entry that does not fit where the match stands: no players yet, a round
    not played (answered 409)."""


@dataclass(frozen=True)
class MatchDigest:
    """What the match list and the profiles need of one match, from its replay."""

    info: MatchInfo
    last_id: int
    """The newest event's log id when this was made (0: no events)."""
    updated_at: float
    variant: str
    variant_name: str
    players: list[str]
    round_scores: list[dict[str, int]]
    """As the engine counts them (penalty games negative)."""
    over: bool
    winner: str | None
    totals: dict[str, int]
    """As the players count them (penalty games: penalty points, positive)."""
    penalty: bool


@dataclass
class _Record:
    """One player's record while the profiles are added up."""

    name: str
    played: list[MatchDigest] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    """Round scores of point games (higher is better)."""
    penalties: list[int] = field(default_factory=list)
    """Penalty points taken in the rounds of penalty games (fewer is better)."""


class PanelService:
    def __init__(self, store: EventStore, turn_seconds: int = 120,
                 hints: HintPool | None = None) -> None:
        self.store = store
        self.hub = Hub()
        self.hints = hints or HintPool(workers=os.cpu_count() or 2, waiting=16)
        """The workers hints share (panel/hints.py)."""
        self.turn_seconds = turn_seconds
        self.live_inboxes: dict[int, Inbox] = {}
        self.cameras: dict[int, dict[str, str]] = {}
        """Per match, the live table's camera as its source last reported it (``state``:
        opening, live, reconnecting, lost, ended; ``message``): set from the camera's own
        thread by :meth:`set_camera`."""
        self.views: dict[int, dict[str, float]] = {}
        """Per match, what the live table's view says of the picture (``too_far_px``: the
        length of the card indices it leaves unread as too small), set by
        :meth:`set_too_far`."""
        self._digests: dict[int, MatchDigest] = {}
        self._rounds_lock = threading.Lock()
        """One round entry at a time, so two phones cannot both enter round n."""

    def record(
        self, match_id: int, event: Mapping[str, Any], *, key: str | None = None
    ) -> StoredEvent:
        """Append to the log, then wake the match's live clients (``key``: see
        :meth:`EventStore.append`)."""
        stored, new = self.store.appended(match_id, event, key=key)
        if new:
            self.hub.notify(match_id, stored.id)
        return stored

    def log(self, match_id: int, event: PanelEvent, *, key: str | None = None) -> StoredEvent:
        """Log one of the panel's own events, stamped with the time now unless it has one."""
        if event.at is None:
            event = replace(event, at=time.time())
        return self.record(match_id, panel_event_to_json(event), key=key)

    def undo_last(self, match_id: int, who: str) -> StoredEvent:
        target = last_undoable(self.store.events(match_id))
        if target is None:
            raise StoreError(f"match {match_id} has nothing to undo")
        return self.log(match_id, LogUndone(who=who, target=target.id, undone_type=target.type))

    def state(self, match_id: int) -> dict[str, Any]:
        info = self.store.match(match_id)
        data = replay(self.store.events(match_id), turn_seconds=self.turn_seconds)
        data["match_info"] = info.to_json()
        data["live"]["attached"] = self.live_inbox(match_id) is not None
        data["live"]["camera"] = self.cameras.get(match_id)
        data["live"]["view"] = self.views.get(match_id)
        return data

    # --- rounds scored by hand ---------------------------------------------------
    def score_manual_round(
        self, match_id: int, entry: Mapping[str, Any], *, key: str | None = None
    ) -> tuple[StoredEvent, int, dict[str, Any]]:
        """Score the next round from ``entry`` (a RoundEntry's fields) and log it: the stored
        event, the round's number and the engine's result.  With ``key``, an entry already
        logged under it is answered as it was, and nothing is scored again."""
        with self._rounds_lock:
            if key is not None:
                earlier = self.store.keyed(match_id, key)
                if earlier is not None:
                    return _keyed_round(earlier, key)
            state = self.state(match_id)
            _refuse_if_over(match_id, state)
            result, match = self._scored(state, entry, None)
            number = len(state["rounds"]) + 1
            event = _hand_scored_round(entry, number, result)
            event["totals"] = match.totals
            stored = self.record(match_id, event, key=key)
            return stored, number, result_json(stored.event)

    def preview_round(self, match_id: int, entry: Mapping[str, Any]) -> dict[str, Any]:
        """The engine's result for ``entry`` as the next round; nothing is logged."""
        state = self.state(match_id)
        _refuse_if_over(match_id, state)
        return self._scored(state, entry, None)[0].to_json()

    def edit_round(
        self, match_id: int, number: int, entry: Mapping[str, Any], *, key: str | None = None
    ) -> StoredEvent:
        """Score round ``number`` again from ``entry`` and log it as ``score_edited``."""
        with self._rounds_lock:
            if key is not None:
                earlier = self.store.keyed(match_id, key)
                if earlier is not None:
                    return earlier
            state = self.state(match_id)
            played = len(state["rounds"])
            if not 1 <= number <= played:
                raise RoundConflict(f"round {number} has not been played ({played} so far)")
            result, _ = self._scored(state, entry, number - 1)
            edit = ScoreEdited(
                who=entry["who"], round=number, scores=dict(result.scores), manual=True,
                winner=result.winner, details=result.details, doubled=result.doubled,
                problems=tuple(result.problems), extras=dict(result.extras),
                input=_entry_input(entry),
            )
            return self.log(match_id, edit, key=key)

    def _scored(
        self, state: dict[str, Any], entry: Mapping[str, Any], rounds: int | None
    ) -> tuple[RoundResult, Match]:
        """The round scored by the engine and the match (after its first ``rounds``
        rounds, all: None) that recorded it."""
        if len(state["setup"]["players"]) < 2:
            raise RoundConflict("the match has no players yet: set it up first")
        match = match_for(state, rounds)
        if match is None:
            problems = "; ".join(state["problems"]) or "no match"
            raise RoundConflict(f"the match's setup does not make a match: {problems}")
        result = score_round(_round_input(match, entry))
        try:
            match.record(result)
        except MatchError as error:
            raise RoundRefused(str(error)) from None
        return result, match

    def set_camera(self, match_id: int, state: str, message: str) -> None:
        """The live table's camera changed state: keep it and wake the pages."""
        self.cameras[match_id] = {"state": state, "message": message}
        self.hub.notify(match_id, self.store.last_id(match_id))

    def set_too_far(self, match_id: int, index_px: float) -> None:
        """The live table leaves card indices about ``index_px`` long unread: keep it and
        wake the pages."""
        self.views[match_id] = {"too_far_px": round(float(index_px), 1)}
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
        """The match a page opened without ``?match=`` shows: ``preferred`` (the panel's
        ``--match`` or ``--new``, the live table's match) while it is not deleted, else the
        first of the match list (live, then open, then finished, newest activity first),
        else a new one."""
        if preferred is not None:
            try:
                return self.store.match(preferred)
            except StoreError:
                pass  # deleted on a page: the list below
        rows = self.overview()
        if not rows:
            return self.store.create_match("Match 1")
        return self.store.match(int(rows[0]["id"]))

    # --- ending, deleting and playing a match again -------------------------------
    def close_match(self, match_id: int, who: str) -> StoredEvent:
        """End the match where it stands (``match_closed``): the one leading wins."""
        state = self.state(match_id)
        if state["result"]["over"]:
            raise RoundConflict(f"match {match_id} is already over")
        if self.live_inbox(match_id) is not None:
            raise RoundConflict(
                f"match {match_id} is being played at a watched table: end it there"
            )
        return self.log(match_id, MatchClosedOnPanel(who=who))

    def delete_match(self, match_id: int, who: str) -> MatchInfo:
        """Take the match out of the panel; one a live table plays now is refused."""
        if self.live_inbox(match_id) is not None:
            raise RoundConflict(
                f"match {match_id} is being played at a watched table: stop the run first"
            )
        info = self.store.delete_match(match_id, who)
        self._digests.pop(match_id, None)
        self.hub.notify(match_id, self.store.last_id(match_id))
        return info

    def rematch(self, match_id: int, who: str) -> MatchInfo:
        """A new match of the same game, options and players; the next dealer deals first."""
        state = self.state(match_id)
        setup = state["setup"]
        if len(setup["players"]) < 2:
            raise RoundConflict(f"match {match_id} has no players to play again")
        match = match_for(state)
        dealer = match.current_dealer if match is not None else int(setup["dealer"])
        info = self.store.create_match(_next_name(self.store.match(match_id).name))
        self.log(info.id, MatchSetUp(
            who=who,
            variant=setup["variant"],
            options=dict(setup["options"]),
            players=tuple(setup["players"]),
            dealer=dealer,
            rounds_limit=setup["rounds_limit"],
            target=setup["target"],
            turn_seconds=setup["turn_seconds"],
        ))
        return info

    # --- the match list and the players ------------------------------------------
    def digests(self) -> list[MatchDigest]:
        """Every match's digest in id order, made again for matches with newer events."""
        infos = self.store.matches()
        activity = self.store.activity()
        stale = [
            info
            for info in infos
            if info.id not in self._digests
            or self._digests[info.id].last_id != activity.get(info.id, (0, 0.0))[0]
        ]
        events = self.store.events_of([info.id for info in stale]) if stale else {}
        for info in stale:
            last_id, last_at = activity.get(info.id, (0, info.created_at))
            self._digests[info.id] = _digest(info, events[info.id], last_id, last_at)
        return [self._digests[info.id] for info in infos]

    def overview(self) -> list[dict[str, Any]]:
        """The match list: live first, then open ones and then finished ones, each newest
        activity first."""
        rows = []
        for digest in self.digests():
            if self.live_inbox(digest.info.id) is not None:
                status = "live"
            else:
                status = "finished" if digest.over else "open"
            rows.append(
                {
                    **digest.info.to_json(),
                    "updated_at": digest.updated_at,
                    "status": status,
                    "variant": digest.variant,
                    "variant_name": digest.variant_name,
                    "players": list(digest.players),
                    "rounds": len(digest.round_scores),
                    "winner": digest.winner,
                    "totals": dict(digest.totals),
                    "penalty": digest.penalty,
                }
            )
        rank = {"live": 0, "open": 1, "finished": 2}
        rows.sort(key=lambda row: (rank[row["status"]], -row["updated_at"], -row["id"]))
        return rows

    def players(self) -> list[dict[str, Any]]:
        """Every player of any match with their record, by name."""
        records = self._records()
        return [_profile(records[name]) for name in sorted(records, key=_name_order)]

    def player(self, name: str) -> dict[str, Any]:
        """One player's record and matches (newest first); StoreError if none has them."""
        record = self._records().get(name)
        if record is None:
            raise StoreError(f"no player named {name!r} in any match")
        played = sorted(record.played, key=lambda d: (-d.info.created_at, -d.info.id))
        return {
            **_profile(record),
            "matches_played": [
                {
                    "match_id": digest.info.id,
                    "name": digest.info.name,
                    "variant": digest.variant,
                    "variant_name": digest.variant_name,
                    "total": digest.totals.get(name, 0),
                    "penalty": digest.penalty,
                    "won": digest.over and digest.winner == name,
                    "finished": digest.over,
                    "created_at": digest.info.created_at,
                }
                for digest in played
            ],
        }

    def _records(self) -> dict[str, _Record]:
        records: dict[str, _Record] = {}
        for digest in self.digests():
            for name in digest.players:
                record = records.setdefault(name, _Record(name))
                record.played.append(digest)
                taken = [s[name] for s in digest.round_scores if name in s]
                if digest.penalty:
                    record.penalties += [-score for score in taken]
                else:
                    record.scores += taken
        return records

    def attach(self, bus: EventBus, match_id: int) -> Any:
        """Log every event published on ``bus`` to the match; returns the unsubscribe function."""

        def log_event(event: Event) -> None:
            self.record(match_id, event_to_json(event))

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
        penalty = bool(state["result"]["penalty"])
        unit = " penalty points" if penalty else ""
        writer.writerow(
            [
                "round",
                "dealer",
                *[_cell(f"{name}{unit}") for name in players],
                *[_cell(f"{name} total{unit}") for name in players],
            ]
        )
        sign = -1 if penalty else 1
        history = [e for e in (state["match"] or {}).get("history", []) if e["type"] == "round"]
        for entry in history:
            changes, totals = entry["changes"], entry["totals"]
            writer.writerow(
                [
                    entry["round"],
                    _cell(entry.get("dealer")),
                    *[sign * changes[name] if name in changes else "" for name in players],
                    *[sign * totals[name] if name in totals else "" for name in players],
                ]
            )
        return out.getvalue()


def _refuse_if_over(match_id: int, state: Mapping[str, Any]) -> None:
    if state["result"]["over"]:
        winner = state["result"]["winner"]
        raise RoundRefused(
            f"match {match_id} is over ({f'{winner} won' if winner else 'a draw'});"
            " no further round is scored"
        )


def _round_input(match: Match, entry: Mapping[str, Any]) -> RoundInput:
    """The engine's round from an entry: every player still in the match once, in seat
    order (Sabra gives a tie's leftover point to the earliest seat)."""
    given = [str(player["name"]) for player in entry["players"]]
    twice = sorted({name for name in given if given.count(name) > 1})
    if twice:
        raise RoundRefused(f"entered more than once: {', '.join(twice)}")
    strangers = [name for name in given if name not in match.players]
    if strangers:
        raise RoundRefused(
            f"not players of this match: {', '.join(strangers)} (its players:"
            f" {', '.join(match.players)})"
        )
    gone = [name for name in given if name in match.eliminated]
    if gone:
        raise RoundRefused(f"out of the match, they play no more rounds: {', '.join(gone)}")
    missing = [name for name in match.active_players if name not in given]
    if missing:
        raise RoundRefused(f"the round has no entry for {', '.join(missing)}")
    seat = {name: index for index, name in enumerate(match.players)}
    players = []
    for raw in sorted(entry["players"], key=lambda player: seat[player["name"]]):
        if not raw.get("out") and raw.get("hand") is None and raw.get("points") is None:
            raise RoundRefused(
                f"{raw['name']} did not go out: give the rack's items (hand) or its points"
            )
        player: dict[str, Any] = {"name": raw["name"]}
        player.update({flag: bool(raw.get(flag)) for flag in ROUND_FLAGS})
        for key in ("hand", "points", "melds", "win", "last_discard"):
            if raw.get(key) is not None:
                player[key] = raw[key]
        players.append(player)
    data = {
        "players": players,
        "pool_exhausted": bool(entry.get("pool_exhausted")),
        "trump": entry.get("trump"),
    }
    return round_from_json(data, match.variant)


def _entry_input(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key != "who"}


def _hand_scored_round(
    entry: Mapping[str, Any], number: int, result: RoundResult
) -> dict[str, Any]:
    """A round scored on the panel, logged as the game's ``round_scored`` (read back as
    :class:`~tabletop.engine.events.RoundScored`) with who entered it, the engine's whole
    result and the entry it was scored from."""
    return {
        "type": "round_scored",
        "seat": None,
        "who": entry["who"],
        "at": time.time(),
        "manual": True,
        "round": number,
        "scores": dict(result.scores),
        "winner": result.winner,
        "details": result.details,
        "doubled": result.doubled,
        "problems": list(result.problems),
        "extras": dict(result.extras),
        "input": _entry_input(entry),
    }


def result_json(event: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's result (``RoundResult.to_json()``) of a logged round."""
    return {
        "scores": dict(event.get("scores") or {}),
        "winner": event.get("winner"),
        "doubled": bool(event.get("doubled")),
        "details": dict(event.get("details") or {}),
        "problems": list(event.get("problems") or []),
        **dict(event.get("extras") or {}),
    }


def _keyed_round(stored: StoredEvent, key: str) -> tuple[StoredEvent, int, dict[str, Any]]:
    number = stored.event.get("round")
    if stored.type != "round_scored" or not isinstance(number, int):
        raise RoundRefused(f"Idempotency-Key {key!r} was given to a {stored.type} event")
    return stored, number, result_json(stored.event)


def _digest(
    info: MatchInfo, events: list[StoredEvent], last_id: int, last_at: float
) -> MatchDigest:
    state = replay(events)
    setup, result = state["setup"], state["result"]
    players = list(setup["players"])
    totals = (state["match"] or {}).get("totals") or {name: 0 for name in players}
    penalty = bool(result["penalty"])
    return MatchDigest(
        info=info,
        last_id=last_id,
        updated_at=last_at,
        variant=setup["variant"],
        variant_name=setup["variant_name"],
        players=players,
        round_scores=[dict(played["scores"]) for played in state["rounds"]],
        over=bool(result["over"]),
        winner=result["winner"],
        totals={name: -total if penalty else total for name, total in totals.items()},
        penalty=penalty,
    )


def _profile(record: _Record) -> dict[str, Any]:
    finished = [digest for digest in record.played if digest.over]
    scores, penalties = record.scores, record.penalties
    return {
        "name": record.name,
        "matches": len(record.played),
        "finished": len(finished),
        "wins": sum(1 for digest in finished if digest.winner == record.name),
        "rounds": len(scores) + len(penalties),
        "average_per_round": round(sum(scores) / len(scores), 2) if scores else 0.0,
        "best_round": max(scores) if scores else None,
        "penalty_rounds": len(penalties),
        "penalty_average_per_round": (
            round(sum(penalties) / len(penalties), 2) if penalties else None
        ),
        "fewest_penalty_points": min(penalties) if penalties else None,
        "last_played": max(digest.updated_at for digest in record.played),
    }


def _next_name(name: str) -> str:
    """The rematch's name: "Freitag" -> "Freitag 2", "Freitag 2" -> "Freitag 3"."""
    head, _, number = name.rpartition(" ")
    if head and number.isdigit():
        return f"{head} {int(number) + 1}"
    return f"{name} 2"[:80]


def _name_order(name: str) -> tuple[str, str]:
    return name.casefold(), name


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
