"""The store against a real PostgreSQL: a throwaway cluster started by the test.

Needs Debian's ``postgresql`` package (initdb, pg_ctl) and psycopg; skips
cleanly without them.  Run it alone with
``python -m pytest tests/test_store_postgres.py``.  As root the cluster runs
as the user ``nobody`` (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

from tabletop.panel.service import PanelService
from tabletop.panel.store import EventStore

pytest.importorskip("psycopg")


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    base = tempfile.mkdtemp(prefix="tabletop-pg-")
    data, port = os.path.join(base, "data"), _free_port()
    prefix: list[str] = []
    user = pwd.getpwuid(os.getuid()).pw_name
    if os.getuid() == 0:
        user = "nobody"
        nobody = pwd.getpwnam(user)
        os.chown(base, nobody.pw_uid, nobody.pw_gid)
        prefix = ["runuser", "-u", user, "--"]
    run = {"check": True, "capture_output": True, "timeout": 60}
    subprocess.run([*prefix, initdb, "-D", data, "-A", "trust", "-U", user], **run)  # type: ignore[call-overload]
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(  # type: ignore[call-overload]
        [
            *prefix,
            pg_ctl,
            "-D",
            data,
            "-o",
            options,
            "-l",
            os.path.join(base, "log"),
            "-w",
            "start",
        ],
        **run,
    )
    try:
        yield f"postgresql+psycopg://{user}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", data, "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(base, ignore_errors=True)


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
