"""Fixtures shared by test files."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def emulator_built() -> None:
    """The board firmware and its simavr runner, built; skipped where the AVR toolchain
    is missing (CI installs it and must not skip)."""
    from device.emulator import build, toolchain_missing

    missing = toolchain_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must build the emulated board: {missing}")
        pytest.skip(missing)
    build()
