"""The panel on a disk that is full or a folder that is read-only, made real: a small
tmpfs filled to the last byte, a folder mounted read-only (as root, chmod does not stop
writes; without root, a folder chmod'ed read-only).

A storage failure is one line: at start, on the command line; for a write, a 503 whose
``detail`` the page shows, with nothing of the write kept; and the panel goes on once
the disk has room again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tabletop.panel.store import EventStore
from tests.panel.clients import PANEL_URL, panel_client
from tests.shared import scaled

REPO = Path(__file__).resolve().parents[2]
ROOT = os.geteuid() == 0


def _mount(*arguments: str) -> None:
    done = subprocess.run(["mount", *arguments], capture_output=True, text=True, timeout=scaled(30))
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip()}): run as root")


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "256k") -> Iterator[Path]:
    """A real filesystem of ``size`` at ``folder``."""
    folder.mkdir()
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], timeout=scaled(30), check=False)


def fill(folder: Path) -> Path:
    """Fill the filesystem of ``folder`` to its last byte; the filler file."""
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(descriptor, b"\0" * 4096)
        with contextlib.suppress(OSError):
            while True:
                os.write(descriptor, b"\0")
    finally:
        os.close(descriptor)
    return filler


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` as a read-only folder: a read-only bind mount beside it (root), or the
    folder itself chmod'ed."""
    if not ROOT:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    view = folder.with_name(folder.name + "-ro")
    view.mkdir()
    _mount("--bind", str(folder), str(view))
    try:
        _mount("-o", "remount,ro,bind", str(view))
        yield view
    finally:
        subprocess.run(["umount", "-l", str(view)], timeout=scaled(30), check=False)


def _tabletop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabletop", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _note(client: TestClient, match_id: int, text: str) -> int:
    answer = client.post(
        f"/api/matches/{match_id}/events", json={"type": "note", "seat": None, "text": text}
    )
    return answer.status_code


def test_a_write_on_a_full_disk_is_refused_whole_and_taken_once_space_is_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with small_disk(tmp_path / "disk") as disk, panel_client(disk) as client:
        match_id = client.post("/api/matches", json={"name": "Friday"}).json()["id"]
        assert _note(client, match_id, "before") == 201
        filler = fill(disk)
        caplog.clear()
        answer = client.post(
            f"/api/matches/{match_id}/events",
            json={"type": "note", "seat": None, "text": "x" * 20_000},
        )
        assert answer.status_code == 503, answer.text
        detail = answer.json()["detail"]
        assert "disk is full" in detail and "nothing was saved" in detail
        assert "\n" not in detail and "Error" not in detail
        assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
        texts = [event.get("text") for event in client.get(
            f"/api/matches/{match_id}/events").json()]
        assert texts == ["before"]
        filler.unlink()
        assert _note(client, match_id, "after") == 201
        texts = [event.get("text") for event in client.get(
            f"/api/matches/{match_id}/events").json()]
        assert texts == ["before", "after"]


def test_the_page_shows_the_refusal_of_a_full_disk(tmp_path: Path) -> None:
    """The 503 is JSON with a ``detail``, which the page's fetch helper (core.js) shows."""
    with small_disk(tmp_path / "disk") as disk, panel_client(disk) as client:
        match_id = client.post("/api/matches", json={"name": "Friday"}).json()["id"]
        fill(disk)
        answer = client.post(
            f"/api/matches/{match_id}/setup",
            json={"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben"]},
            headers={"Origin": PANEL_URL},
        )
        assert answer.status_code == 503
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["detail"].startswith("the match database ")


@pytest.mark.parametrize("cause", ["read-only", "full"])
def test_a_panel_on_a_folder_it_cannot_write_says_so_in_one_line(
    tmp_path: Path, cause: str
) -> None:
    with contextlib.ExitStack() as stack:
        if cause == "full":
            folder = stack.enter_context(small_disk(tmp_path / "disk", "64k"))
            fill(folder)
        else:
            (tmp_path / "data").mkdir()
            folder = stack.enter_context(read_only(tmp_path / "data"))
        done = _tabletop("panel", "--database", f"sqlite:///{folder / 'm.db'}", "--port", "1")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"tabletop: error: the match database {folder / 'm.db'} ")
    assert "internal" not in lines[0] and "OperationalError" not in lines[0]


def test_an_export_reads_a_database_in_a_read_only_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    store = EventStore(f"sqlite:///{data / 'm.db'}")
    match_id = store.create_match("Friday").id
    store.append(match_id, {"type": "note", "text": "kept"})
    store.close()
    with read_only(data) as view:
        done = _tabletop(
            "panel", "--database", f"sqlite:///{view / 'm.db'}",
            "--export", "events-csv", "--match", str(match_id),
        )
    assert done.returncode == 0, done.stderr
    assert "kept" in done.stdout


def test_a_headless_run_reads_a_video_with_a_read_only_data_folder(tmp_path: Path) -> None:
    """A headless run stores nothing (no panel, no corrections): a data folder it cannot
    write is no reason to refuse it."""
    data = tmp_path / "data"
    data.mkdir()
    video = REPO / "tabletop" / "samples" / "videos" / "sabra.mp4"
    with read_only(data) as view:
        done = subprocess.run(
            [sys.executable, "-m", "tabletop", "run", "--source", str(video), "--variant",
             "sabra", "--players", "Ana,Ben,Cem", "--headless"],
            cwd=REPO, capture_output=True, text=True, timeout=scaled(300),
            env={**os.environ, "TABLETOP_DATA_DIR": str(view)},
        )
        assert not any(view.iterdir())
    assert done.returncode == 0, done.stderr
    tables = [json.loads(line) for line in done.stdout.splitlines()]
    assert any(event["type"] == "table" and event["melds"] for event in tables)
