"""The command line as users and independent test suites call it (CONTRACT.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared import scaled

REPO = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabletop", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )


@pytest.mark.parametrize(
    ("variant", "meld", "expected"),
    [
        # CONTRACT.md's own example
        (
            "sabra",
            "R5 JK R7",
            {
                "valid": True,
                "kind": "run",
                "value": 18,
                "items": ["R5", "JK=R6", "R7"],
                "reason": None,
            },
        ),
        # [sabra] "12-13-1 ist keine regelgerechte Folge"
        ("sabra", "R12 R13 R1", {"valid": False, "kind": None}),
        # [american] "sowohl 1-2-3 als auch 12-13-1 regelgerechte Folgen"
        ("rummikub-american", "r12 r13 r1", {"valid": True, "kind": "run", "value": 26}),
        # [rommee] "♣D–♣K–♣A" is a run; the ace after the king counts 11 -> 10+10+11
        ("rommee", "QC KC AC", {"valid": True, "kind": "run", "value": 31}),
        # [rum500] "K A 2 ist ungültig"
        ("rum500", "KS AS 2S", {"valid": False}),
    ],
)
def test_rules_check_json(variant: str, meld: str, expected: dict[str, object]) -> None:
    result = run("rules", "check", "--variant", variant, *meld.split(), "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    for key, value in expected.items():
        assert answer[key] == value, (key, answer)
    if not answer["valid"]:
        assert answer["reason"]


@pytest.mark.parametrize(
    ("variant", "meld", "items", "hint"),
    [
        # issue 45: players read R12 R13 JK as R11 R12 R13; [sabra] makes the joker's place
        # say what it stands for, so the answer asks to move it, and the meld is valid
        ("sabra", "R12 R13 JK", ["JK=R11", "R12", "R13"], True),
        ("sabra", "JK R12 R13", ["JK=R11", "R12", "R13"], False),
        ("remi", "R12 JK R10 R13", ["R10", "JK=R11", "R12", "R13"], True),
        # [rommee] says nothing of the place: read as the run, nothing to move
        ("rommee", "KS AS JK", ["JK=QS", "KS", "AS"], False),
    ],
)
def test_rules_check_reads_a_joker_out_of_place_as_the_run(
    variant: str, meld: str, items: list[str], hint: bool
) -> None:
    result = run("rules", "check", "--variant", variant, meld, "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["valid"] is True and answer["kind"] == "run" and answer["items"] == items
    assert answer["reason"] is None
    assert ("hint" in answer) is hint
    if hint:
        assert answer["hint"].startswith("move the joker")
        words = run("rules", "check", "--variant", variant, meld)
        assert "move the joker" in words.stdout and words.stdout.startswith("valid run")


def test_rules_variants_name_the_players_each_game_allows() -> None:
    result = run("rules", "variants", "--json")
    players = {v["id"]: v["players"] for v in json.loads(result.stdout)}
    assert players["sabra"] == [2, 4] and players["remi"] == [2, 4]
    assert players["rum500"] == [2, 8] and players["american-rummy"] == [2, 6]
    assert players["rommee"] == players["raeuber"] == players["wiener"] == [2, 6]
    assert "Rummikub (Sabra), 2 to 4 players" in run("rules", "variants").stdout


def test_ambiguous_meld_lists_every_reading() -> None:
    # CONTRACT.md: "R5 JK JK could be a set or a run" -> every reading listed
    result = run("rules", "check", "--variant", "sabra", "R5 JK JK", "--json")
    answer = json.loads(result.stdout)
    kinds = sorted(reading["kind"] for reading in answer["readings"])
    assert kinds == ["run", "set"]
    assert answer["valid"] is True


def test_option_changes_the_answer() -> None:
    # [american-rummy] "es sei denn, daß das vor dem Spiel ausdrücklich vereinbart wird"
    plain = json.loads(
        run("rules", "check", "--variant", "american-rummy", "QH KH AH", "--json").stdout
    )
    agreed = json.loads(
        run(
            "rules",
            "check",
            "--variant",
            "american-rummy",
            "--option",
            "ace_high=true",
            "QH KH AH",
            "--json",
        ).stdout
    )
    assert (plain["valid"], agreed["valid"]) == (False, True)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["rules", "check", "--variant", "sabra", "X9"], "'X9'"),
        (["rules", "check", "--variant", "bogus", "R1 R2 R3"], "'bogus'"),
        (["rules", "check", "--variant", "sabra", "--option", "nope=1", "R1 R2 R3"], "'nope'"),
        (["rules", "check", "--variant", "sabra", " ".join(["R1"] * 40)], "40"),
        (["rules", "check", "--variant", "sabra", ""], "empty"),
        (["rules", "check", "--variant", "sabra", "R７ R8 R9"], "R７"),
        (["rules", "check", "--variant", "sabra", "Ä1 Ä2 Ä3"], "Ä1"),
        (["rules", "check", "--variant", "sabra"], "required"),
        (["rules", "score", "/nonexistent/round.json"], "cannot read"),
        (["rules", "frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]
    assert "Traceback" not in result.stderr


def test_score_reads_stdin_and_reports_bad_json() -> None:
    result = run("rules", "score", "-", stdin="{not json")
    assert result.returncode == 2
    assert "not valid JSON" in result.stderr


def test_rules_commands_do_not_import_heavy_packages() -> None:
    code = (
        "import sys\n"
        "from tabletop.cli import main\n"
        "main(['rules', 'check', '--variant', 'sabra', 'R1', 'R2', 'R3'])\n"
        "heavy = sorted(m for m in ('torch', 'ultralytics', 'cv2', 'numpy') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=scaled(60)
    )
    assert "HEAVY []" in result.stdout, result.stdout + result.stderr


def test_table_reports_every_problem_at_once() -> None:
    result = run("rules", "table", "--variant", "sabra", "R3 R4 R6 | R3 R3 K3", "--json")
    answer = json.loads(result.stdout)
    codes = sorted(problem["code"] for problem in answer["problems"])
    assert codes == ["invalid_meld", "invalid_meld", "too_many_copies"]
    assert answer["valid"] is False
