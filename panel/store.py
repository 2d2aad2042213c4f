"""The match store: every event of every match in one append-only log.

A match's state (setup, table, turn, scores) is never stored as such: it is a
replay of its events (:mod:`tabletop.panel.state`).  The log sits behind a SQLAlchemy
URL.  The default is an SQLite file (WAL journal, ``synchronous=FULL``, so
a process killed with ``kill -9`` loses nothing that ``append`` returned
for); a club running many tables points every table at one PostgreSQL
server (``postgresql+psycopg://user@host/db``).

Append-only is kept by the interface (there is no update or delete) and, in
the database itself, by triggers that refuse UPDATE and DELETE on the log:
an undo is a new event that names the event it takes back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

Event = dict[str, Any]

metadata = MetaData()

matches_table = Table(
    "matches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("created_at", Float, nullable=False),
)

events_table = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("match_id", Integer, ForeignKey("matches.id"), nullable=False, index=True),
    Column("type", String(64), nullable=False),
    Column("recorded_at", Float, nullable=False),
    Column("payload", Text, nullable=False),
)

event_keys_table = Table(
    "event_keys",
    metadata,
    Column("match_id", Integer, ForeignKey("matches.id"), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("event_id", Integer, ForeignKey("events.id"), nullable=False),
)
"""A client's own id for an event it posts: a repeat of the same id (a retry after a lost
answer) is answered with the event already stored, and nothing is written twice."""

_SQLITE_GUARDS: tuple[str, ...] = (
    "CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events"
    " BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events"
    " BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END",
)
_POSTGRES_GUARDS: tuple[str, ...] = (
    "CREATE OR REPLACE FUNCTION events_append_only() RETURNS trigger AS $$"
    " BEGIN RAISE EXCEPTION 'the event log is append-only'; END; $$ LANGUAGE plpgsql",
    "DROP TRIGGER IF EXISTS events_append_only ON events",
    "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events"
    " FOR EACH ROW EXECUTE FUNCTION events_append_only()",
)


class StoreError(ValueError):
    """A request the store cannot satisfy (unknown match, an event that is not an object)."""


@dataclass(frozen=True)
class StoredEvent:
    """One line of the log: the event as published, and where and when it was written."""

    id: int
    """Position in the whole log (all matches), increasing."""
    match_id: int
    recorded_at: float
    """Wall-clock time (Unix seconds) of the write."""
    event: Event

    @property
    def type(self) -> str:
        return str(self.event.get("type", ""))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "recorded_at": self.recorded_at, **self.event}


@dataclass(frozen=True)
class MatchInfo:
    id: int
    name: str
    created_at: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "created_at": self.created_at}


class EventStore:
    """The append-only log behind a SQLAlchemy URL (``sqlite:///path.db`` by default)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine: Engine = create_engine(url, future=True)
        self.dialect = self.engine.dialect.name
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        metadata.create_all(self.engine)
        guards = _SQLITE_GUARDS if self.dialect == "sqlite" else ()
        if self.dialect == "postgresql":
            guards = _POSTGRES_GUARDS
        with self.engine.begin() as connection:
            for statement in guards:
                connection.execute(text(statement))

    def close(self) -> None:
        self.engine.dispose()

    # --- matches -------------------------------------------------------------
    def create_match(self, name: str) -> MatchInfo:
        now = time.time()
        with self.engine.begin() as connection:
            result = connection.execute(insert(matches_table).values(name=name, created_at=now))
            match_id = _inserted_id(result)
        return MatchInfo(match_id, name, now)

    def matches(self) -> list[MatchInfo]:
        with self.engine.connect() as connection:
            rows = connection.execute(select(matches_table).order_by(matches_table.c.id))
            return [MatchInfo(int(r.id), str(r.name), float(r.created_at)) for r in rows]

    def match(self, match_id: int) -> MatchInfo:
        with self.engine.connect() as connection:
            row = connection.execute(
                select(matches_table).where(matches_table.c.id == match_id)
            ).first()
        if row is None:
            raise StoreError(f"no match with id {match_id!r}")
        return MatchInfo(int(row.id), str(row.name), float(row.created_at))

    # --- the log ---------------------------------------------------------------
    def append(
        self, match_id: int, event: Mapping[str, Any], *, key: str | None = None
    ) -> StoredEvent:
        """Write one event; when this returns, the event is committed (durable).

        ``key``: the client's id for it; an event already stored under the same key in
        this match is returned instead, and nothing is written (see :meth:`appended`)."""
        return self.appended(match_id, event, key=key)[0]

    def appended(
        self, match_id: int, event: Mapping[str, Any], *, key: str | None = None
    ) -> tuple[StoredEvent, bool]:
        """:meth:`append`, and whether the event is new (False: its key was seen before)."""
        if not isinstance(event, Mapping) or not isinstance(event.get("type"), str):
            raise StoreError(f"an event is an object with a string 'type', not {event!r}")
        self.match(match_id)
        if key is not None:
            earlier = self.keyed(match_id, key)
            if earlier is not None:
                return earlier, False
        payload = dict(event)
        encoded = json.dumps(payload, ensure_ascii=False, sort_keys=True, allow_nan=False)
        now = time.time()
        try:
            with self.engine.begin() as connection:
                result = connection.execute(
                    insert(events_table).values(
                        match_id=match_id,
                        type=str(payload["type"])[:64],
                        recorded_at=now,
                        payload=encoded,
                    )
                )
                event_id = _inserted_id(result)
                if key is not None:
                    connection.execute(
                        insert(event_keys_table).values(
                            match_id=match_id, key=key, event_id=event_id
                        )
                    )
        except IntegrityError:
            # the same key from a retry that raced this one: the transaction wrote nothing
            earlier = self.keyed(match_id, key) if key is not None else None
            if earlier is None:
                raise
            return earlier, False
        return StoredEvent(event_id, match_id, now, payload), True

    def keyed(self, match_id: int, key: str) -> StoredEvent | None:
        """The event stored in the match under the client's ``key``, if any."""
        query = (
            select(events_table)
            .join(event_keys_table, event_keys_table.c.event_id == events_table.c.id)
            .where(event_keys_table.c.match_id == match_id, event_keys_table.c.key == key)
        )
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
        if row is None:
            return None
        return StoredEvent(
            int(row.id), int(row.match_id), float(row.recorded_at), json.loads(row.payload)
        )

    def events_of(self, match_ids: Collection[int]) -> dict[int, list[StoredEvent]]:
        """The events of several matches at once, each match's in log order."""
        found: dict[int, list[StoredEvent]] = {match_id: [] for match_id in match_ids}
        ordered = sorted(found)
        with self.engine.connect() as connection:
            # bounded lists: SQLite takes a limited number of parameters per statement
            for start in range(0, len(ordered), _IDS_PER_QUERY):
                chunk = ordered[start : start + _IDS_PER_QUERY]
                query = (
                    select(events_table)
                    .where(events_table.c.match_id.in_(chunk))
                    .order_by(events_table.c.id)
                )
                for row in connection.execute(query):
                    found[int(row.match_id)].append(_stored(row))
        return found

    def activity(self) -> dict[int, tuple[int, float]]:
        """Per match with events: its newest event's log id and when it was written."""
        query = select(
            events_table.c.match_id,
            func.max(events_table.c.id),
            func.max(events_table.c.recorded_at),
        ).group_by(events_table.c.match_id)
        with self.engine.connect() as connection:
            return {
                int(match_id): (int(last_id), float(last_at))
                for match_id, last_id, last_at in connection.execute(query)
            }

    def events(self, match_id: int, after: int = 0) -> list[StoredEvent]:
        """The match's events in log order (only those with id > ``after``)."""
        return list(self.iter_events(match_id, after))

    def iter_events(self, match_id: int, after: int = 0) -> Iterator[StoredEvent]:
        query = (
            select(events_table)
            .where(events_table.c.match_id == match_id, events_table.c.id > after)
            .order_by(events_table.c.id)
        )
        with self.engine.connect() as connection:
            for row in connection.execute(query):
                yield StoredEvent(
                    int(row.id), int(row.match_id), float(row.recorded_at), json.loads(row.payload)
                )

    def last_id(self, match_id: int) -> int:
        """The log id of the match's newest event (0: none yet)."""
        with self.engine.connect() as connection:
            query = select(func.max(events_table.c.id)).where(events_table.c.match_id == match_id)
            return int(connection.execute(query).scalar_one() or 0)

    def count(self, match_id: int) -> int:
        with self.engine.connect() as connection:
            query = select(func.count()).where(events_table.c.match_id == match_id)
            return int(connection.execute(query).scalar_one())


_IDS_PER_QUERY = 500


def _stored(row: Any) -> StoredEvent:
    return StoredEvent(
        int(row.id), int(row.match_id), float(row.recorded_at), json.loads(row.payload)
    )


def _inserted_id(result: Any) -> int:
    key = result.inserted_primary_key
    if key is None:
        raise StoreError("the database did not return the new row's id")
    return int(key[0])


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL: readers (the panel) never block the writer (the game).  FULL: a commit
    # is on disk before it returns, so neither kill -9 nor a power cut loses it.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def sqlite_url(path: str) -> str:
    """The SQLAlchemy URL of an SQLite file."""
    return f"sqlite:///{path}"
