"""`tabletop run` as a person starts it: a camera that is not there, a stream nobody serves,
a zone or calibration file that cannot be read: one line, exit status 2, in time.  What
it says at a terminal (a pty): the events in words, each warning once, the real reason an
opening does not count (issue 45, items 10 and 11)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.shared import REALDATA, scaled

ROOT = Path(__file__).resolve().parents[2]
TABLETOP_RUN = [sys.executable, "-m", "tabletop", "run"]
RUN = [*TABLETOP_RUN, "--variant", "sabra", "--players", "A,B"]


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


# --- at the terminal ---------------------------------------------------------------------
def in_terminal(*args: str, timeout: float = 60.0) -> tuple[int, str]:
    """``tabletop ARGS`` with standard output and error on one pseudo-terminal, as a person
    sees it: (exit status, everything written, escape codes and all)."""
    main, side = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "tabletop", *args], cwd=ROOT,
                               stdin=subprocess.DEVNULL, stdout=side, stderr=side)
    os.close(side)
    written = bytearray()
    deadline = time.monotonic() + scaled(timeout)
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            written += chunk
        else:
            pytest.fail(f"tabletop {' '.join(args)} did not end: {written.decode()!r}")
        return process.wait(scaled(10)), written.decode()
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)


def screen_lines(written: str) -> list[str]:
    """The lines left on the screen: a carriage return and an erased line (the status
    line's redraw) leave only what follows them."""
    lines = []
    for raw in written.replace("\r\n", "\n").split("\n"):
        shown = re.split(r"\r(?:\x1b\[2K)?", raw)[-1]
        if shown.strip():
            lines.append(shown)
    return lines


def write_scenario(folder: Path, steps: list[dict[str, Any]], variant: str = "sabra") -> Path:
    path = folder / "table.json"
    path.write_text(json.dumps({"variant": variant, "players": ["Ana", "Ben"],
                                "steps": steps}), encoding="utf-8")
    return path


# Ana opens with 72 of 30, but R5 R6 R8 is no meld; the table is put back; Ben lays
# R12 R13 JK (read as JK=R11 R12 R13) and is told to move the joker, with no penalty.
STEPS: list[dict[str, Any]] = [
    {"t": 1.0, "snapshot": {"melds": ["R10 R11 R12", "K13 B13 O13", "R5 R6 R8"]}},
    {"t": 2.0, "press": "end_turn", "seat": 0},
    {"t": 2.5, "snapshot": {"melds": []}},
    {"t": 3.0, "snapshot": {"melds": ["R12 R13 JK"]}},
    {"t": 4.0, "press": "end_turn", "seat": 1},
]


def test_the_terminal_shows_events_in_words_each_warning_once(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, STEPS)
    status, written = in_terminal("run", "--source", f"scenario:{scenario}", "--variant",
                                  "sabra", "--players", "Ana,Ben", "--headless")
    assert status == 0, written
    lines = screen_lines(written)
    assert not [line for line in lines if line.lstrip().startswith("{")], lines
    assert any(line.endswith("Ana lays R5 R6 R8") for line in lines), lines
    # item 11: the opening's value is enough; the words name the meld and why
    (opening,) = [line for line in lines if "opening is worth 72 of 30" in line]
    assert "not enough" not in opening
    assert "does not count yet: R5 R6 R8: " in opening and "not a run" in opening
    warnings = [line for line in lines if "WARNING" in line]
    assert len(warnings) == len(set(warnings)) == 3, warnings
    assert any("R5 R6 R8 is not a legal meld" in line for line in warnings)
    assert any("draws 3 as a penalty" in line for line in warnings)
    # item 3: the joker at the end is a hint, not a second penalty
    (hint,) = [line for line in warnings if "move the joker" in line]
    assert "JK=R11 R12 R13" in hint
    assert sum("as a penalty" in line for line in warnings) == 1


def test_with_an_events_file_the_terminal_still_shows_words(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, STEPS)
    events = tmp_path / "events.jsonl"
    done = subprocess.run([*TABLETOP_RUN, "--variant", "sabra", "--players", "Ana,Ben",
                           "--source", f"scenario:{scenario}", "--headless",
                           "--events-jsonl", str(events)],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 0, done.stderr
    assert "Ana lays R10 R11 R12" in done.stdout
    assert "WARNING" in done.stdout and "{" not in done.stdout
    written = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["seq"] for e in written] == list(range(1, len(written) + 1))
    assert sum(e["type"] == "warning" for e in written) == done.stdout.count("WARNING")


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["piped", "asked"])
def test_a_program_reading_standard_output_gets_json_lines(tmp_path: Path,
                                                           flags: list[str]) -> None:
    scenario = write_scenario(tmp_path, STEPS)
    done = subprocess.run([*TABLETOP_RUN, "--variant", "sabra", "--players", "Ana,Ben",
                           "--source", f"scenario:{scenario}", "--headless", *flags],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["seq"] == 1 and {"seq", "t", "type", "seat"} <= set(events[0])
    assert any(e["type"] == "warning" and e["code"] == "joker_out_of_place" for e in events)
    assert "WARNING" not in done.stderr


# American Rummy: the stock's top card (4D) turned up starts the talon; Ana lays a run
# and discards 8C over it, so only the 8C shows; Ben takes the 8C (the 4D shows again),
# lays it in a run and discards KH over the 4D.
SQUARED_PILE: list[dict[str, Any]] = [
    {"t": 1.0, "snapshot": {"discards": ["4D"]}},
    {"t": 2.0, "snapshot": {"seats": {"0": ["10H JH QH"]}, "discards": ["4D"]}},
    {"t": 3.0, "snapshot": {"seats": {"0": ["10H JH QH"]}, "discards": ["8C"]}},
    {"t": 4.0, "snapshot": {"seats": {"0": ["10H JH QH"]}, "discards": ["4D"]}},
    {"t": 5.0, "snapshot": {"seats": {"0": ["10H JH QH"], "1": ["8C 9C 10C"]},
                            "discards": ["4D"]}},
    {"t": 6.0, "snapshot": {"seats": {"0": ["10H JH QH"], "1": ["8C 9C 10C"]},
                            "discards": ["KH"]}},
]


def test_a_squared_discard_pile_with_its_upcard_reads_as_played(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, SQUARED_PILE, variant="american-rummy")
    done = subprocess.run([*TABLETOP_RUN, "--variant", "american-rummy", "--players",
                           "Ana,Ben", "--source", f"scenario:{scenario}", "--headless",
                           "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    piled = [(e["type"], e["seat"], e.get("item") or e.get("items")) for e in events
             if e["type"] in ("discard_taken", "item_discarded")]
    assert piled == [("item_discarded", 0, "8C"), ("discard_taken", 1, ["8C"]),
                     ("item_discarded", 1, "KH")]
    ended = [e for e in events if e["type"] == "turn_ended"]
    assert [(e["seat"], e["valid"]) for e in ended] == [(0, True), (1, True)]


# --- the command line: help, options, players -------------------------------------------
def test_run_help_lists_the_variants_and_explains_option() -> None:
    done = subprocess.run([sys.executable, "-m", "tabletop", "run", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=scaled(30))
    assert done.returncode == 0
    for variant_id in ("sabra", "rummikub-american", "rummikub-international", "remi",
                       "rum500", "american-rummy", "rommee", "raeuber", "wiener"):
        assert re.search(rf"^  {re.escape(variant_id)} ", done.stdout, re.M), variant_id
    assert "Rummikub (Sabra), 2-4 players" in done.stdout
    assert "--option NAME=VALUE sets a house rule" in done.stdout
    assert "--option joker_penalty=25" in done.stdout
    assert "tabletop rules variants" in done.stdout and "docs/variants.md" in done.stdout
    assert (ROOT / "docs" / "variants.md").exists()


@pytest.mark.parametrize(("variant", "option", "known"), [
    ("sabra", "initial_meld=45", "dutch, freed_joker, joker_penalty"),
    ("rommee", "joker_penalty=25", "ace_around, discard_must_meld, initial_meld"),
])
def test_an_option_the_variant_does_not_know_is_one_line(tmp_path: Path, variant: str,
                                                         option: str, known: str) -> None:
    done = subprocess.run([*TABLETOP_RUN, "--variant", variant, "--players", "A,B", "--source",
                           str(tmp_path), "--headless", "--option", option],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(30))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    name = option.split("=")[0]
    assert f"unknown option {name!r} for {variant} (known: {known}" in done.stderr


@pytest.mark.parametrize(("variant", "players", "message"), [
    # [sabra], [american] "von zwei, drei oder vier Spielern"
    ("sabra", 5, "Rummikub (Sabra) is played by 2 to 4 players, not 5"),
    ("rummikub-american", 5, "played by 2 to 4 players, not 5"),
    ("rummikub-international", 5, "played by 2 to 4 players, not 5"),
    ("remi", 5, "played by 2 to 4 players, not 5"),  # [remi] "zwei, drei oder vier"
    ("rum500", 9, "played by 2 to 8 players, not 9"),  # [rum500] "von 2 bis ungefähr 8"
    # [american-rummy] "zwei bis sechs ... mehr als sechs ... mit zwei Kartenpaketen"
    ("american-rummy", 7, "played by 2 to 6 players, not 7 (more than six play with two"),
    ("rommee", 7, "played by 2 to 6 players, not 7"),  # [rommee] "zwei bis sechs"
    ("raeuber", 7, "played by 2 to 6 players, not 7"),
    ("wiener", 7, "played by 2 to 6 players, not 7"),
])
def test_a_player_count_the_rules_do_not_allow_is_one_line(tmp_path: Path, variant: str,
                                                           players: int, message: str) -> None:
    names = ",".join(f"P{n}" for n in range(players))
    done = subprocess.run([*TABLETOP_RUN, "--variant", variant, "--players", names, "--source",
                           str(tmp_path), "--headless"],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(30))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


@pytest.mark.parametrize(("variant", "players", "options"), [
    ("sabra", 4, []),
    ("american-rummy", 7, ["--option", "decks=2"]),
])
def test_the_most_players_the_rules_allow_play(tmp_path: Path, variant: str, players: int,
                                               options: list[str]) -> None:
    scenario = write_scenario(tmp_path, [{"t": 1.0, "press": "end_turn", "seat": 0}], variant)
    names = ",".join(f"P{n}" for n in range(players))
    done = subprocess.run([*TABLETOP_RUN, "--variant", variant, "--players", names, "--source",
                           f"scenario:{scenario}", "--headless", *options],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 0, done.stderr
    turns = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(e["type"], e["seat"]) for e in turns if e["type"] == "turn_started"] == [
        ("turn_started", 0), ("turn_started", 1)]


@pytest.mark.parametrize(("video", "told"), [("rommee", True), ("sabra", False)])
def test_cards_too_small_to_read_are_left_unread_and_said_once(video: str, told: bool) -> None:
    """The bundled Rommé video is 640x360: its card indices are 7-14 px, under what the
    reader reads (vision.detector.SMALLEST_INDEX_PX).  The run says so, once; the tile
    video has no cards and says nothing of the kind."""
    samples = ROOT / "tabletop" / "samples" / "videos"
    header = json.loads((samples / f"{video}.truth.jsonl").read_text().splitlines()[0])
    result = subprocess.run(
        [*TABLETOP_RUN, "--source", str(samples / f"{video}.mp4"), "--variant", video,
         "--players", ",".join(header["players"]), "--headless", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=scaled(300))
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if "too small to read" in line]
    assert len(said) == (1 if told else 0), result.stderr
    if told:
        size = int(re.search(r"about (\d+) px long", said[0]).group(1))  # type: ignore[union-attr]
        assert 5 <= size < 12 and "bring the camera closer" in said[0]


def _run_squared_pile_game(steps: list[Any], tmp_path: Path) -> tuple[Any, list[dict[str, Any]]]:
    """The Rommé game of ``steps`` composed from deal2's real card indices on a squared
    pile, filmed, and ``tabletop run`` on the video: (the replay, the events it wrote)."""
    from tabletop.studio.card_replay import card_settings, load_card_bank
    from tabletop.studio.replay import ReplaySettings, compose

    settings = card_settings(seed=4, base=ReplaySettings(squared_pile=True))
    replay = compose(steps, players=("Ana", "Ben"), variant="rommee", settings=settings,
                     bank=load_card_bank(REALDATA, use_images=["deal2"]), realdata=REALDATA)
    files = replay.write(tmp_path / "game")
    events = tmp_path / "events.jsonl"
    done = subprocess.run([*TABLETOP_RUN, "--source", str(files.video), "--variant", "rommee",
                           "--players", "Ana,Ben", "--zones", str(files.zones), "--no-markers",
                           "--headless", "--events-jsonl", str(events)],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(300))
    assert done.returncode == 0, done.stderr
    return replay, [json.loads(line) for line in events.read_text().splitlines()]


@pytest.mark.skipif(REALDATA is None, reason="the real photos are missing")
def test_a_squared_pile_of_real_cards_on_camera_reads_as_played(tmp_path: Path) -> None:
    """A Rommé game composed from real card indices, as a camera films it: each move ends
    with a discard laid squarely on the one before (only the top card shows), and a
    player takes the top discard once.  ``tabletop run`` on the video tells each discard
    and the take, and no other."""
    from bench.replays import seen_pile_moves, true_pile_moves
    from tabletop.studio.replay import ReplayStep

    steps = [
        ReplayStep((("10C", "JC", "QC", "KC"),), seat=0, discards=("7C",)),
        ReplayStep((("10C", "JC", "QC", "KC"), ("QS", "QD", "QC"), ("4S", "5S", "6S")), seat=1,
                   discards=("7C", "KD")),
        ReplayStep((("10C", "JC", "QC", "KC"), ("QS", "QD", "QC"), ("4S", "5S", "6S")), seat=0,
                   discards=("7C",)),
        ReplayStep((("10C", "JC", "QC", "KC"), ("QS", "QD", "QC"), ("4S", "5S", "6S"),
                    ("JD", "QD", "KD")), seat=0, discards=("7C", "2H")),
    ]
    replay, seen = _run_squared_pile_game(steps, tmp_path)
    assert seen_pile_moves(seen) == true_pile_moves(replay.truth()) == [
        ("discard", ("7C",)), ("discard", ("KD",)), ("taken", ("KD",)), ("discard", ("2H",))]
    assert [e["melds"] for e in seen if e["type"] == "table"][-1] == [
        "10C JC QC KC", "QS QD QC", "4S 5S 6S", "JD QD KD"]


@pytest.mark.skipif(REALDATA is None, reason="the real photos are missing")
def test_a_discard_laid_squarely_on_its_twin_on_camera_ends_the_turn(tmp_path: Path) -> None:
    """Rommé is played with two decks: Ben discards the other deck's 7C on Ana's 7C, a
    little off it as a hand lays it.  The pile reads as before, yet ``tabletop run`` tells
    the discard and ends Ben's turn, so that Ana's next meld is hers."""
    from bench.replays import seen_pile_moves, true_pile_moves
    from tabletop.studio.replay import ReplayStep

    steps = [
        ReplayStep((("10C", "JC", "QC", "KC"),), seat=0, discards=("7C",)),
        ReplayStep((("10C", "JC", "QC", "KC"), ("QS", "QD", "QC")), seat=1,
                   discards=("7C", "7C")),
        ReplayStep((("10C", "JC", "QC", "KC"), ("QS", "QD", "QC"), ("4S", "5S", "6S")),
                   seat=0, discards=("7C", "7C", "2H")),
    ]
    replay, seen = _run_squared_pile_game(steps, tmp_path)
    assert seen_pile_moves(seen) == true_pile_moves(replay.truth()) == [
        ("discard", ("7C",)), ("discard", ("7C",)), ("discard", ("2H",))]
    assert [(e["seat"], e["meld"]) for e in seen if e["type"] == "meld_laid"] == [
        (0, "10C JC QC KC"), (1, "QS QD QC"), (0, "4S 5S 6S")]
