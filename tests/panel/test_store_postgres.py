"""The store against a real PostgreSQL: a throwaway cluster started by the test.

Needs Debian's ``postgresql`` package (initdb, pg_ctl) and psycopg; fails,
naming the install line, without them (see tests/panel/postgres.py).  Run it alone with
``python -m pytest tests/panel/test_store_postgres.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

from tabletop.panel.service import PanelService
from tabletop.panel.store import EventStore
from tests.panel.postgres import throwaway_cluster


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with throwaway_cluster() as url:
        yield url


def test_two_tables_share_one_server(postgres_url: str) -> None:
    """A club: two tables (two stores) write to one server; each reads both logs whole."""
    table_one, table_two = EventStore(postgres_url), EventStore(postgres_url)
    assert table_one.dialect == "postgresql"
    one = table_one.create_match("table 1")
    two = table_two.create_match("table 2")
    service_one, service_two = PanelService(table_one), PanelService(table_two)
    setup = {"type": "setup", "who": "Ana", "variant": "sabra", "players": ["Ana", "Ben"]}
    service_one.record(one.id, setup)
    service_two.record(two.id, {**setup, "players": ["Cem", "Dan"]})
    service_one.record(
        one.id,
        {
            "type": "round_scored",
            "seq": 1,
            "t": 1.0,
            "seat": None,
            "scores": {"Ana": 41, "Ben": -41},
        },
    )
    service_two.record(
        two.id,
        {"type": "round_scored", "seq": 1, "t": 1.0, "seat": None, "scores": {"Cem": -7, "Dan": 7}},
    )
    # Each table's panel sees the other's match through the shared server.
    assert service_two.state(one.id)["match"]["totals"] == {"Ana": 41, "Ben": -41}
    assert service_one.state(two.id)["match"]["totals"] == {"Cem": -7, "Dan": 7}
    service_one.undo_last(one.id, "Ben")
    assert service_two.state(one.id)["match"]["totals"] == {"Ana": 0, "Ben": 0}
    assert table_two.count(one.id) == 3
    table_one.close()
    table_two.close()


def test_postgres_refuses_to_rewrite_the_log(postgres_url: str) -> None:
    store = EventStore(postgres_url)
    match = store.create_match("m")
    store.append(match.id, {"type": "table", "melds": []})
    for statement in ("UPDATE events SET type = 'x'", "DELETE FROM events"):
        with pytest.raises(DatabaseError, match="append-only"), store.engine.begin() as c:
            c.execute(text(statement))
    assert store.count(match.id) == 1
    store.close()
