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
import os
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

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
from sqlalchemy.engine import Engine, make_url
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

deleted_matches_table = Table(
    "deleted_matches",
    metadata,
    Column("match_id", Integer, ForeignKey("matches.id"), primary_key=True),
    Column("deleted_at", Float, nullable=False),
    Column("who", String(64), nullable=False),
)
"""Matches taken out of the panel (a quit camera run's leftover, a test): their events stay
in the log, which is append-only, but the match is no longer listed, shown or written to."""

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


class StorageUnavailable(ValueError):
    """The database cannot do what is asked of it now: the disk is full, the file or its
    folder is read-only, the server cannot be reached.  Nothing of the failed write is
    kept (its transaction is rolled back); the same write succeeds once the cause is
    gone.  The message is one line naming the database and the cause: the command line
    prints it, the panel answers it with 503."""


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

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        """``read_only``: only read (an export): an SQLite file is opened so that neither
        it nor its folder needs to be writable, and nothing is created."""
        self.url = url
        self.engine: Engine = create_engine(
            _read_only_sqlite(url) if read_only else url, future=True
        )
        self.dialect = self.engine.dialect.name
        event.listen(self.engine, "handle_error", _storage_failure(self.engine))
        if self.dialect == "sqlite":
            event.listen(
                self.engine, "connect", _sqlite_read_pragmas if read_only else _sqlite_pragmas
            )
        if read_only:
            return
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
        """Every match not deleted, in id order."""
        deleted = select(deleted_matches_table.c.match_id)
        query = select(matches_table).where(matches_table.c.id.not_in(deleted))
        with self.engine.connect() as connection:
            rows = connection.execute(query.order_by(matches_table.c.id))
            return [MatchInfo(int(r.id), str(r.name), float(r.created_at)) for r in rows]

    def match(self, match_id: int) -> MatchInfo:
        """The match; StoreError for an id that names none, or a deleted one."""
        with self.engine.connect() as connection:
            row = connection.execute(
                select(matches_table).where(matches_table.c.id == match_id)
            ).first()
            gone = connection.execute(
                select(deleted_matches_table.c.match_id).where(
                    deleted_matches_table.c.match_id == match_id
                )
            ).first()
        if row is None:
            raise StoreError(f"no match with id {match_id!r}")
        if gone is not None:
            raise StoreError(f"match {match_id} ({row.name}) was deleted")
        return MatchInfo(int(row.id), str(row.name), float(row.created_at))

    def delete_match(self, match_id: int, who: str) -> MatchInfo:
        """Take the match out of the panel (its events stay in the log)."""
        info = self.match(match_id)
        with self.engine.begin() as connection:
            connection.execute(
                insert(deleted_matches_table).values(
                    match_id=match_id, deleted_at=time.time(), who=who[:64]
                )
            )
        return info

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


def _sqlite_read_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _read_only_sqlite(url: str) -> str:
    """An SQLite URL opened read-only (``mode=ro``); other URLs as they are."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return url
    if parsed.database == ":memory:" or parsed.query.get("uri"):
        return url
    path = Path(parsed.database).resolve()
    # a WAL database in a folder nobody may write to has no -shm file to share: read it
    # as a file nothing else changes meanwhile (an export reads it once)
    immutable = not os.access(path.parent, os.W_OK | os.X_OK) and not Path(
        f"{path}-shm"
    ).exists()
    query = "mode=ro" + ("&immutable=1" if immutable else "")
    return f"sqlite:///file:{quote(str(path))}?{query}&uri=true"


_SQLITE_CAUSES = {
    "SQLITE_FULL": "cannot be written: the disk is full",
    "SQLITE_READONLY": "cannot be written: it or its folder is read-only",
    "SQLITE_CANTOPEN": "cannot be opened: it or its folder is missing or read-only",
    "SQLITE_IOERR": "cannot be read or written: the disk answers with an input/output error",
    "SQLITE_PERM": "cannot be opened: permission denied",
    "SQLITE_BUSY": "is busy: another program holds it locked",
}
_POSTGRES_CAUSES = {
    "53": "is out of resources on its server (the disk full?)",
    "25006": "cannot be written: the server is read-only",
    "08": "cannot be reached",
}


def _storage_failure(engine: Engine) -> Any:
    """A ``handle_error`` listener turning the database's failures of storage (not of the
    query) into :class:`StorageUnavailable`."""
    where = (
        engine.url.database or "?"
        if engine.dialect.name == "sqlite"
        else engine.url.render_as_string(hide_password=True)
    )
    where = where.removeprefix("file:").split("?", 1)[0]

    def listener(context: Any) -> None:
        error = context.original_exception
        cause = None
        name = str(getattr(error, "sqlite_errorname", ""))
        if name:
            cause = next(
                (text for prefix, text in _SQLITE_CAUSES.items() if name.startswith(prefix)),
                None,
            )
        state = str(getattr(error, "sqlstate", "") or getattr(error, "pgcode", "") or "")
        if state:
            cause = next(
                (text for prefix, text in _POSTGRES_CAUSES.items() if state.startswith(prefix)),
                None,
            )
        elif type(error).__name__ == "OperationalError" and engine.dialect.name != "sqlite":
            cause = _POSTGRES_CAUSES["08"]  # no answer at all: no state
        if cause is not None:
            raise StorageUnavailable(f"the match database {where} {cause}") from error

    return listener


def sqlite_url(path: str) -> str:
    """The SQLAlchemy URL of an SQLite file."""
    return f"sqlite:///{path}"
