"""`tabletop run` as a person starts it: a camera that is not there, a stream nobody serves,
a zone or calibration file that cannot be read: one line, exit status 2, in time."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = [sys.executable, "-m", "tabletop", "run", "--variant", "sabra", "--players", "A,B"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tabletop_run(*args: str, timeout: float = 30.0) -> tuple[subprocess.CompletedProcess[str],
                                                           float]:
    started = time.monotonic()
    result = subprocess.run([*RUN, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=timeout)
    return result, time.monotonic() - started


@pytest.mark.parametrize("source, named", [
    ("0", "camera 0"),
    ("7", "camera 7"),
    ("/dev/video42", "/dev/video42"),
    (f"http://127.0.0.1:{free_port()}/video", "the stream 'http://127.0.0.1:"),
])
def test_a_source_that_is_not_there_fails_in_time_with_one_line(source: str, named: str) -> None:
    result, seconds = tabletop_run("--source", source, "--headless")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("tabletop: error: cannot open ") and named in lines[0]
    assert seconds < 10.0 + 3.0  # the contract's 10 s, plus starting Python
    assert result.stdout == ""


@pytest.mark.parametrize("flag, content, message", [
    ("--zones", "{}", "a zone layout needs table_size and zones"),
    ("--zones", "not json", "zone layout"),
    ("--calibration", "{\"table_mm\": [900, 600]}", "calibration lacks 'image_corners'"),
])
def test_a_bad_table_file_is_one_line(tmp_path: Path, flag: str, content: str,
                                      message: str) -> None:
    path = tmp_path / "table.json"
    path.write_text(content)
    frames = tmp_path / "frames"
    frames.mkdir()
    result, _ = tabletop_run("--source", str(frames), "--headless", flag, str(path))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_table_size_must_be_width_by_height(tmp_path: Path) -> None:
    result, _ = tabletop_run("--source", str(tmp_path), "--headless", "--table-mm", "900")
    assert result.returncode == 2
    assert "--table-mm must be WIDTHxHEIGHT in millimetres, not '900'" in result.stderr
