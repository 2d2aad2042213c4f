"""What the command line says about itself: --version, -q/-v and the log lines, and
the one line that names the extra to install when an optional module is missing."""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from tabletop import cli
from tests.shared import scaled

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _root_logger() -> Iterator[None]:
    """main() sets up the root logger; each test here leaves it as it found it."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.setLevel(level)
    root.handlers[:] = handlers


def run_blocked(blocked: str, argv: list[str],
                cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """``tabletop ARGV`` in a fresh interpreter where importing ``blocked`` fails as
    for a module that is not installed."""
    code = (f"import sys; sys.modules[{blocked!r}] = None; "
            f"from tabletop.cli import main; sys.exit(main({argv!r}))")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=scaled(120))


# --- --version --------------------------------------------------------------------
def test_version_is_the_installed_package_version() -> None:
    result = subprocess.run([sys.executable, "-m", "tabletop", "--version"], cwd=REPO,
                            capture_output=True, text=True, timeout=scaled(60))
    assert result.returncode == 0, result.stderr
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert metadata.version("tabletop") == declared
    assert result.stdout == f"tabletop {declared}\n"


def test_version_needs_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("tabletop ")


# --- -q / -v and the log lines ------------------------------------------------------
@pytest.mark.parametrize(("options", "verbosity"), [
    ([], 0),
    (["-q"], -1),
    (["--quiet"], -1),
    (["-v"], 1),
    (["--verbose"], 1),
    (["-vv"], 2),
    (["-v", "-v"], 2),
    (["-vvv"], 2),
])
def test_verbosity_reaches_the_command_and_sets_the_log_level(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        options: list[str], verbosity: int) -> None:
    seen: list[int] = []

    def command(args: argparse.Namespace) -> int:
        seen.append(args.verbosity)
        log = logging.getLogger("tabletop.test")
        log.debug("a detail")
        log.info("a step")
        log.warning("a doubt")
        log.error("a failure")
        return 0

    monkeypatch.setattr(cli, "cmd_rules_variants", command)
    assert cli.main([*options, "rules", "variants"]) == 0
    assert seen == [verbosity]
    expected = {
        -1: ["error: a failure"],
        0: ["warning: a doubt", "error: a failure"],
        1: ["info: a step", "warning: a doubt", "error: a failure"],
        2: ["debug: a detail", "info: a step", "warning: a doubt", "error: a failure"],
    }[verbosity]
    assert capsys.readouterr().err.splitlines() == [f"tabletop: {line}" for line in expected]


def test_main_twice_logs_each_line_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-q", "rules", "variants"]) == 0
    assert cli.main(["rules", "variants"]) == 0
    capsys.readouterr()
    logging.getLogger("tabletop.test").warning("once")
    assert capsys.readouterr().err == "tabletop: warning: once\n"


def test_quiet_and_verbose_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["-q", "-v", "rules", "variants"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("tabletop: error: argument -v/--verbose: not allowed with")
    assert err.count("\n") == 1


# --- a missing module ------------------------------------------------------------------
@pytest.mark.parametrize(("module", "extra"), [
    ("ultralytics", "train"),
    ("ultralytics.engine.model", "train"),
    ("torch", "train"),
    ("onnx", "train"),
    ("onnxslim", "train"),
    ("rummikub_solver", "bench"),
    ("playwright.sync_api", "dev"),
    ("httpx", "dev"),
    ("schemathesis", "dev"),
])
def test_an_optional_module_names_its_extra(module: str, extra: str) -> None:
    message, status = cli.missing_module_message(
        ModuleNotFoundError(f"No module named {module!r}", name=module))
    top = module.partition(".")[0]
    assert message == (f"this needs the {extra!r} extra (module {top!r} is missing): "
                       f"pip install 'tabletop[{extra}]'")
    assert status == cli.EXIT_BAD_INPUT


def test_a_module_of_the_core_install_asks_for_a_reinstall() -> None:
    message, status = cli.missing_module_message(
        ModuleNotFoundError("No module named 'scipy'", name="scipy"))
    assert message.startswith("module 'scipy' is missing")
    assert "reinstall tabletop" in message
    assert status == cli.EXIT_INTERNAL


def test_an_import_without_a_module_name_still_gets_one_line() -> None:
    message, status = cli.missing_module_message(ImportError("libGL.so.1: cannot open"))
    assert message.startswith("an import failed (libGL.so.1: cannot open)")
    assert status == cli.EXIT_INTERNAL


def test_training_the_reader_without_torch_names_the_train_extra(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "crops-train.npz").touch()  # the crops are there: the next step is training
    result = run_blocked("torch", ["train", "--stage", "reader", "--data", str(tmp_path),
                                   "--out", str(out)])
    assert result.returncode == 2, result.stderr
    assert result.stderr == ("tabletop: error: this needs the 'train' extra (module 'torch' "
                             "is missing): pip install 'tabletop[train]'\n")


def test_a_pt_model_without_ultralytics_is_one_line(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    weights = REPO / "models" / "tabletop.pt"
    if not weights.is_file():
        pytest.skip("models/tabletop.pt is not in this checkout")
    image = tmp_path / "frame.jpg"
    cv2.imwrite(str(image), np.full((72, 128, 3), 90, np.uint8))
    result = run_blocked("ultralytics", ["detect", "--model", str(weights), str(image)])
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("tabletop: error: ")
    assert "'train' extra" in result.stderr and "tabletop[train]" in result.stderr


def test_a_postgresql_url_without_its_driver_says_what_to_install(tmp_path: Path) -> None:
    result = run_blocked("psycopg", ["panel", "--database", "postgresql+psycopg://u@127.0.0.1/m",
                                     "--export", "json", "--match", "1"], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr == ("tabletop: error: a PostgreSQL database needs its driver (module "
                             "'psycopg' is missing): pip install 'psycopg[binary]'\n")


def test_a_missing_core_module_asks_for_a_reinstall(tmp_path: Path) -> None:
    result = run_blocked("cv2", ["detect", str(tmp_path / "frame.jpg")])
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("tabletop: error: module 'cv2' is missing")
    assert "reinstall tabletop" in result.stderr
