"""`tabletop board ...` against the fake board (socket:// URL)."""

from __future__ import annotations

import json

import pytest

from tabletop.cli import main
from tabletop.device.fake import FakeBoard


def test_board_status_json(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeBoard() as fake:
        fake.seat = 1
        assert main(["board", "status", "--port", fake.url, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["model"], status["seat"], status["seats"]) == ("TTB1", 1, 4)


def test_board_test_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeBoard() as fake:
        assert main(["board", "test", "--port", fake.url, "--step", "0", "--quiet"]) == 0
        shown = [c for c in fake.commands if c.startswith(("SEAT", "SHOW", "FLAGS"))]
    assert "SEAT 3" in shown and "FLAGS 7" in shown and "SHOW 8888" in shown
    assert shown[-3:] == ["SEAT -", "FLAGS 0", "SHOW"]  # left dark
    assert "test pattern done" in capsys.readouterr().out


def test_board_status_no_board(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["board", "status", "--port", "socket://127.0.0.1:9", "--timeout", "0.3"]) == 1
    assert "no board answered" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["bogus://x", "nosuchscheme://board"])
def test_board_port_that_cannot_be_a_port(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["board", "status", "--port", port, "--timeout", "5"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and port in error


def test_board_find_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["board", "find", "--json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), list)
