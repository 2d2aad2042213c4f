"""Fixtures shared by test files, and the ``needs`` mark (tests/shared.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.shared import PARTS, need


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"needs(*parts): fails the test, naming the install line, unless each "
                   f"part is here (one of {', '.join(PARTS)})")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        unknown = [part for part in mark.args if part not in PARTS]
        if unknown:
            pytest.fail(f"needs{unknown}: not a known part (tests/shared.py PARTS)")
        need(*mark.args)


@pytest.fixture(scope="session", autouse=True)
def _data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user data folder (live/paths.py) is a temporary one for the whole run, for
    the tests and the commands they start: nothing lands in the real one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TABLETOP_DATA_DIR", str(tmp_path_factory.mktemp("tabletop-data")))
        yield


@pytest.fixture(scope="module")
def emulator_built() -> None:
    """The board firmware and its simavr runner, built; the test fails, naming the
    packages to install, where the AVR toolchain is missing."""
    from tabletop.device.emulator import build

    need("avr")
    build()
