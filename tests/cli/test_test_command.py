"""The README's test command, ``scripts/test``: it installs every part a test needs (the
extras, Debian's packages), and a test whose part is missing fails naming the line that
installs it, never skips or passes unseen."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared import PARTS, REPO, load_factor, scaled

SCRIPT = REPO / "scripts" / "test"

HIDE_FONTS = """
import pathlib
_is_file = pathlib.Path.is_file
pathlib.Path.is_file = lambda path: (not str(path).startswith("/usr/share/fonts")
                                     and _is_file(path))
import tabletop.studio.synth.shapes
pathlib.Path.is_file = _is_file
"""
"""A plugin that loads the renderer as on a machine without Debian's fonts."""


def _pytest_on_a_bare_machine(tmp_path: Path, plugin: str, test: str,
                              path: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m pytest TEST`` with ``plugin`` loaded first (what the machine lacks) and,
    if given, a PATH without Debian's programs."""
    (tmp_path / "bare_machine.py").write_text(plugin)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "bare_machine", "-p", "no:cacheprovider",
         "-x", "-q", "-rfEs", test],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=scaled(300))


def _blocked(module: str) -> str:
    return f"import sys\nsys.modules[{module!r}] = None  # import {module} fails\n"


@pytest.mark.parametrize(("plugin", "path", "test", "says"), [
    (_blocked("onnx"), None,
     "tests/studio/test_adapt.py::test_a_fitted_finder_moves_its_boxes_inside_the_graph",
     "onnx (the train extra) missing: install with .venv/bin/pip install -e '.[train]'"),
    (_blocked("torch"), None,
     "tests/vision/test_reader.py::test_a_reader_net_refuses_malformed_widths",
     "PyTorch (the train extra) missing: install with .venv/bin/pip install -e '.[train]'"),
    (_blocked("rummikub_solver"), None, "tests/bench/test_solver.py",
     "rummikub-solver (the bench extra) missing: install with "
     ".venv/bin/pip install -e '.[bench]'"),
    ("", "/nonexistent", "tests/panel/test_e2e.py",
     "Debian's chromium (/usr/bin/chromium) missing: install with apt-get install chromium"),
    ("", "/nonexistent", "tests/device/test_emulated.py",
     "simavr (the emulated scoring board) missing: install with apt-get install gcc-avr"),
    (HIDE_FONTS, None,
     "tests/studio/test_synth.py::test_stroke_faces_draw_tile_numerals_but_never_card_indices",
     "the TrueType faces the renderer draws numerals in missing: install with "
     "apt-get install fonts-liberation"),
], ids=["onnx", "torch", "rummikub-solver", "chromium", "simavr", "fonts"])
def test_a_missing_part_fails_naming_its_install_line(
        tmp_path: Path, plugin: str, path: str | None, test: str, says: str) -> None:
    result = _pytest_on_a_bare_machine(tmp_path, plugin, test, path)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert re.search(r"^(FAILED|ERROR) tests/", out, re.MULTILINE), out
    assert says in out and "(or run scripts/test, which installs everything" in out, out
    assert "skipped" not in out.lower(), out


def test_the_command_installs_every_part_the_tests_name() -> None:
    script = SCRIPT.read_text()
    assert os.access(SCRIPT, os.X_OK)
    assert ".venv/bin/python -m pip install -q -e '.[dev,bench,train]'" in script
    for name, part in PARTS.items():
        if part.install.startswith("apt-get install "):
            for package in part.install.removeprefix("apt-get install ").split():
                assert re.search(rf"\b{re.escape(package)}\b", script), (name, package)
        else:
            extra = re.fullmatch(r"\.venv/bin/pip install -e '\.\[(\w+)\]'", part.install)
            assert extra and extra[1] in ("dev", "bench", "train"), (name, part.install)
    assert script.rstrip().endswith('exec .venv/bin/python -m pytest "$@"')
    # CI runs the linters and then exactly the README's command
    ci = (REPO / ".ci" / "run").read_text().rstrip().splitlines()
    assert ci[-1] == "scripts/test"


@pytest.mark.parametrize(("load", "cores", "factor"), [
    (0.3, 2, 1.0),   # idle: the timeouts as written
    (2.0, 2, 1.0),   # busy but not queueing
    (8.0, 2, 4.0),   # a full test run beside other jobs: four times as long
    (8.0, 16, 1.0),  # the same load on a larger machine
])
def test_timeouts_grow_with_the_machines_load(monkeypatch: pytest.MonkeyPatch, load: float,
                                             cores: int, factor: float) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)))
    assert load_factor() == factor
    assert scaled(30) == 30 * factor


def _unscaled_process_timeouts(source: str) -> list[int]:
    """Lines where a test gives a process (``subprocess.run`` and the like, or a
    ``process.wait`` / ``communicate``) a timeout written as a bare number."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner, name = ast.unparse(node.func.value), node.func.attr
        given = {k.arg: k.value for k in node.keywords}
        if owner == "subprocess" and name in ("run", "check_output", "check_call", "call"):
            limit = given.get("timeout")
        elif "process" in owner and name in ("wait", "communicate"):
            limit = given.get("timeout", node.args[0] if node.args and name == "wait" else None)
        else:
            continue
        if isinstance(limit, ast.Constant):
            lines.append(node.lineno)
    return lines


def test_every_process_timeout_in_the_tests_scales_with_the_load() -> None:
    unscaled = {str(path.relative_to(REPO)): found
                for path in sorted((REPO / "tests").rglob("*.py"))
                if (found := _unscaled_process_timeouts(path.read_text()))}
    assert unscaled == {}, "wrap these timeouts in tests.shared.scaled()"
    assert _unscaled_process_timeouts("subprocess.run(['x'], timeout=30)") == [1]
