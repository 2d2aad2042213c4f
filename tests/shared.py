"""Paths the tests share: the checkout, its bundled samples, the shipped models and the
real photos (where this machine has them); the optional parts some tests need, each
named with the line that installs it; timeouts that grow with the machine's load."""

from __future__ import annotations

import glob
import importlib
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tabletop.engine.events import event_to_json
from tabletop.live.bus import EventBus
from tabletop.studio.replay import find_realdata
from tabletop.vision.detector import SHIPPED_MODELS

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "tabletop" / "samples"
SCENARIOS = SAMPLES / "scenarios"
VIDEOS = SAMPLES / "videos"
FINDER = SHIPPED_MODELS / "tabletop.onnx"
"""The shipped two-stage model's finder (its reader beside it)."""
REALDATA = find_realdata()
"""The real labelled photos (``shared/realdata``), or None where they are missing."""

TEST_COMMAND = "scripts/test"
"""The README's test command: it installs every part below, then runs the tests."""


# --- optional parts ---------------------------------------------------------------------------
def _module_present(name: str) -> Callable[[], bool]:
    def present() -> bool:
        try:
            importlib.import_module(name)
        except ImportError:
            return False
        return True
    return present


def _postgres_present() -> bool:
    return all(shutil.which(tool) or glob.glob(f"/usr/lib/postgresql/*/bin/{tool}")
               for tool in ("initdb", "pg_ctl"))


def _avr_present() -> bool:
    from tabletop.device.emulator import toolchain_missing

    return toolchain_missing() is None


def _fonts_present() -> bool:
    """Every TrueType face the renderer knows is installed: a seed draws the same deck, and
    so the same images, only where the same faces are."""
    from tabletop.studio.synth import shapes

    return set(shapes.TRUETYPE_FONTS) <= set(shapes.FONTS)


@dataclass(frozen=True)
class Part:
    """Something a test needs beyond the default install, and how to get it."""

    what: str
    install: str
    present: Callable[[], bool]


def _extra(module: str, extra: str, what: str) -> Part:
    return Part(f"{what} (the {extra} extra)",
                f".venv/bin/pip install -e '.[{extra}]'", _module_present(module))


CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None)
"""Debian's chromium, which the browser tests drive through Playwright."""
BOARD_PACKAGES = "gcc-avr avr-libc binutils-avr simavr libsimavr-dev make gcc libc6-dev"
FONT_PACKAGES = (
    "fonts-liberation fonts-dejavu-core fonts-dosis fonts-quicksand fonts-comfortaa "
    "fonts-league-spartan fonts-lato fonts-open-sans fonts-urw-base35 fonts-roboto-unhinted "
    "fonts-crosextra-carlito fonts-b612 fonts-sil-andika fonts-oxygen fonts-jura")
"""Debian's packages of the faces in studio/synth/shapes.py (as scripts/test installs)."""
PARTS: dict[str, Part] = {
    "torch": _extra("torch", "train", "PyTorch"),
    "onnx": _extra("onnx", "train", "onnx"),
    "ultralytics": _extra("ultralytics", "train", "ultralytics"),
    "rummikub_solver": _extra("rummikub_solver", "bench", "rummikub-solver"),
    "playwright": _extra("playwright", "dev", "Playwright"),
    "psycopg": _extra("psycopg", "dev", "psycopg"),
    "chromium": Part("Debian's chromium (/usr/bin/chromium)", "apt-get install chromium",
                     lambda: CHROMIUM is not None),
    "postgresql": Part("PostgreSQL's initdb and pg_ctl", "apt-get install postgresql",
                       _postgres_present),
    "avr": Part("the AVR toolchain and simavr (the emulated scoring board)",
                f"apt-get install {BOARD_PACKAGES}", _avr_present),
    "fonts": Part("the TrueType faces the renderer draws numerals in",
                  f"apt-get install {FONT_PACKAGES}", _fonts_present),
}


def missing(*parts: str) -> str | None:
    """What of ``parts`` is missing, with the line that installs it; None if nothing is."""
    absent = [PARTS[name] for name in parts if not PARTS[name].present()]
    if not absent:
        return None
    installs = "; ".join(part.install for part in absent)
    return (f"{', '.join(part.what for part in absent)} missing: install with {installs} "
            f"(or run {TEST_COMMAND}, which installs everything the tests need)")


def need(*parts: str) -> None:
    """Fail the calling test, saying what to install, unless all of ``parts`` are here: a
    test that cannot run is a failure to fix, never a quiet skip."""
    reason = missing(*parts)
    if reason:
        pytest.fail(reason, pytrace=False)


def need_module(name: str) -> ModuleType:
    """The module ``name`` (one of :data:`PARTS`), or the calling test fails saying how to
    install it."""
    need(name)
    return importlib.import_module(name)


needs = pytest.mark.needs
"""``@needs("chromium")`` (or ``pytestmark = needs(...)``): tests/conftest.py calls
:func:`need` before each such test runs."""


# --- timeouts ---------------------------------------------------------------------------------
def load_factor() -> float:
    """How much slower than an idle machine this one is now: 1 while the runnable
    processes fit its cores, more as they outnumber them (a full test run, other jobs)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1.0, load / (cores or 1))


def scaled(seconds: float) -> float:
    """``seconds`` on an idle machine, stretched by :func:`load_factor`: a test's timeout
    catches a hang, not a busy machine."""
    return seconds * load_factor()


def with_default_interrupt() -> None:
    """``preexec_fn`` for a command a test stops with Ctrl-C (SIGINT): a shell that starts
    a job in the background (``pytest ... &``) ignores SIGINT in it, every process started
    from it inherits that, and the command would never see the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


__all__ = ["CHROMIUM", "FINDER", "PARTS", "REALDATA", "REPO", "SAMPLES", "SCENARIOS",
           "SHIPPED_MODELS", "TEST_COMMAND", "VIDEOS", "load_factor", "missing", "need",
           "need_module", "needs", "scaled", "with_default_interrupt"]


def json_events(bus: EventBus) -> tuple[list[dict[str, Any]], Callable[[], None]]:
    """Collect the events published on ``bus`` as the JSON objects a person reads
    (CONTRACT.md): (the list, unsubscribe)."""
    events: list[dict[str, Any]] = []
    return events, bus.subscribe(lambda event: events.append(event_to_json(event)))
