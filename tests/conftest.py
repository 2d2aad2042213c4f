"""Fixtures shared by test files."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user data folder (live/paths.py) is a temporary one for the whole run, for
    the tests and the commands they start: nothing lands in the real one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TABLETOP_DATA_DIR", str(tmp_path_factory.mktemp("tabletop-data")))
        yield


@pytest.fixture(scope="module")
def emulator_built() -> None:
    """The board firmware and its simavr runner, built; skipped where the AVR toolchain
    is missing (CI installs it and must not skip)."""
    from tabletop.device.emulator import build, toolchain_missing

    missing = toolchain_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must build the emulated board: {missing}")
        pytest.skip(missing)
    build()
