"""A throwaway PostgreSQL cluster for the tests that run the store against a real server.

Needs Debian's ``postgresql`` package (initdb, pg_ctl) and psycopg; without them the
tests fail, naming the install line.  As root the cluster runs as the user ``nobody`` (PostgreSQL
refuses to run as root).  Each test module makes its own fixture of it::

    @pytest.fixture(scope="module")
    def postgres_url() -> Iterator[str]:
        with throwaway_cluster() as url:
            yield url
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
from contextlib import contextmanager

from tests.shared import need, scaled


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


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """A SQLAlchemy URL of a new cluster's ``postgres`` database, removed afterwards."""
    need("psycopg", "postgresql")
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    assert initdb is not None and pg_ctl is not None
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
            timeout=scaled(60),
        )
        shutil.rmtree(base, ignore_errors=True)
