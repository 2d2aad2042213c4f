"""Hostile input on the command line: every case is one plain line on stderr and exit 2,
never a traceback, an internal error or a hang; then a bounded fuzz over the rules and
solve commands."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabletop.cli import MAX_ARGUMENT_CHARS, MAX_FILE_BYTES, MAX_JSON_DEPTH, main

ROUND = {"variant": "sabra", "players": [{"name": "Ana", "out": True}, {"name": "Ben",
                                                                       "hand": "R5"}]}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None,
         monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    status = main(argv)
    return status, capsys.readouterr().err


def _one_plain_line(error: str) -> str:
    assert error.endswith("\n") and error.count("\n") == 1, error
    assert "Traceback" not in error and "internal error" not in error
    assert error.startswith("tabletop: error: ")
    return error


@pytest.mark.parametrize(
    ("stdin", "says"),
    [
        ("[" * 993, f"at most {MAX_JSON_DEPTH}"),
        ('{"a": ' * 40 + "1" + "}" * 40, "nests 40 levels"),
        ('{"variant": "sabra", "t": NaN}', "NaN"),
        ('{"variant": "sabra", "t": -Infinity}', "-Infinity"),
        (json.dumps({**ROUND, "players": [{"name": "Ana", "out": True,
                                           "melds": ["R1 R2 R3 | K4 K5 K6"]},
                                          {"name": "Ben"}]}), "holds one meld, not 2"),
        (json.dumps({**ROUND, "players": [{"name": "Ana", "out": True},
                                          {"name": "Ben", "hand": "R5 " * 300}]}),
         "a hand of 300 items"),
        (json.dumps({**ROUND, "players": [{"name": f"P{i}"} for i in range(20)]}),
         "at most 12 players"),
        ('"not an object"', "must be a JSON object"),
        ("x" * (MAX_FILE_BYTES + 1), f"over {MAX_FILE_BYTES} characters"),
        ('{"variant": "sabra", "players": [{"name": "A\\"b[[[[", "out": true}, {"name": "B"}]}',
         None),
    ],
)
def test_a_hostile_round_file_is_one_line(
    stdin: str, says: str | None, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status, error = _run(["rules", "score", "-", "--json"], capsys, stdin, monkeypatch)
    if says is None:  # brackets inside a string are not nesting
        assert status == 0, error
        return
    assert status == 2
    assert says in _one_plain_line(error)


@pytest.mark.parametrize(
    ("variant", "option", "says"),
    [
        ("rum500", "target=-1", "takes 1 to 1000000"),
        ("rum500", "target=0", "takes 1 to 1000000"),
        ("american-rummy", "target=1000001", "takes 1 to 1000000"),
        ("wiener", "knock_limit=99999999999999999999999", "whole number"),
        ("wiener", "knock_limit=101", "takes 0 to 100"),
        ("wiener", "knock_limit=٣", "whole number"),  # an Arabic-Indic three
        ("wiener", "elimination=１０１", "whole number"),  # full-width digits
        ("wiener", "elimination=1e3", "whole number"),
        ("remi", "initial_meld=44", "takes one of 50, 45"),
        ("sabra", "dutch=maybe", "true or false"),
        ("sabra", "no_such_option=1", "unknown option"),
        ("sabra", "=1", "NAME=VALUE"),
    ],
)
def test_every_option_value_is_checked_for_its_type_and_range(
    variant: str, option: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, error = _run(["rules", "check", "--variant", variant, "--option", option, "AS 2S 3S"],
                         capsys)
    assert status == 2 and says in _one_plain_line(error)


@pytest.mark.parametrize(
    ("rack", "says"),
    [
        # Räuber-Rommé is checked like every other variant
        ("R1 R2 R3", "not one of the cards"),
        ("AS AS AS 2S 3S", "3 times"),
        ("JK " * 9, "9 jokers"),
    ],
)
def test_the_material_is_checked_for_raeuber(
    rack: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, error = _run(["solve", "--variant", "raeuber", "--rack", rack, "--json"], capsys)
    assert status == 2 and says in _one_plain_line(error)


def test_an_argument_longer_than_any_input_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rack = "R1 " * (MAX_ARGUMENT_CHARS // 3 + 1)
    status, error = _run(["solve", "--variant", "sabra", "--rack", rack], capsys)
    assert status == 2 and "longer than any rack" in _one_plain_line(error)


def test_a_scenario_nested_too_deep_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "deep.json"
    scenario.write_text("[" * 5000)
    status, error = _run(["run", "--source", f"scenario:{scenario}", "--variant", "sabra",
                          "--players", "A,B", "--headless"], capsys)
    assert status == 2 and "nested too deep" in _one_plain_line(error)


# --- fuzz ------------------------------------------------------------------------------
TOKENS = st.sampled_from([
    "R1", "R7", "R13", "K5", "B10", "O12", "JK", "JK=R5", "AS", "10H", "QD", "KS", "2C",
    "R0", "R14", "X9", "1S", "JK=JK", "|", "||", "", "r3", "ÄS", "JK=", "10", "\u0663",
])
VARIANTS = st.sampled_from(["sabra", "rummikub-american", "rummikub-international", "remi",
                            "rum500", "american-rummy", "rommee", "raeuber", "wiener",
                            "nonsense"])
OPTIONS = st.sampled_from(["", "initial_meld=45", "target=-5", "knock_limit=x", "dutch=true",
                           "decks=2", "jokers=false", "values=flat", "bogus=1", "=",
                           "joker_penalty=25", "discard_pile=false", "ace_around=yes"])
ITEMS = st.lists(TOKENS, max_size=8).map(" ".join)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    variant = draw(VARIANTS)
    option = draw(OPTIONS)
    extra = ["--option", option] if option else []
    kind = draw(st.sampled_from(["check", "table", "solve", "solve-initial"]))
    if kind == "check":
        return ["rules", "check", "--variant", variant, *extra, draw(ITEMS), "--json"]
    if kind == "table":
        return ["rules", "table", "--variant", variant, *extra,
                " | ".join(draw(st.lists(ITEMS, max_size=3))), "--json"]
    table = " | ".join(draw(st.lists(ITEMS, max_size=2)))
    line = ["solve", "--variant", variant, *extra, "--rack", draw(ITEMS), "--table", table,
            "--json"]
    return [*line, "--initial"] if kind == "solve-initial" else line


@settings(max_examples=1500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_fuzzed_command_lines_never_crash(argv: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        patch.setattr("sys.stderr", err)
        status = main(argv)
    assert status in (0, 2), (argv, err.getvalue())
    if status == 2:
        _one_plain_line(err.getvalue())
    else:
        for line in out.getvalue().splitlines():
            json.loads(line)
