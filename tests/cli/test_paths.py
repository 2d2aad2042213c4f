"""The user data folder (live/paths.py) and the panel's database in it."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import platformdirs
import pytest

from tabletop import paths


def test_the_environment_variable_places_the_folder_and_it_is_created(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "nested" / "data"
    monkeypatch.setenv("TABLETOP_DATA_DIR", str(folder))
    assert paths.data_dir() == folder
    assert folder.is_dir()


def test_a_relative_folder_is_made_absolute(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TABLETOP_DATA_DIR", "here")
    assert paths.data_dir() == tmp_path / "here"
    assert paths.matches_database_url() == f"sqlite:///{tmp_path / 'here' / 'matches.sqlite3'}"


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME is Linux's")
@pytest.mark.parametrize("unset", [True, False])
def test_without_the_variable_the_folder_is_platformdirs_user_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unset: bool) -> None:
    if unset:
        monkeypatch.delenv("TABLETOP_DATA_DIR", raising=False)
    else:
        monkeypatch.setenv("TABLETOP_DATA_DIR", "")  # empty counts as not set
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    expected = tmp_path / "xdg" / "tabletop"
    assert Path(platformdirs.user_data_dir("tabletop", appauthor=False)) == expected
    assert paths.data_dir() == expected
    assert expected.is_dir()


def test_the_helpers_are_folders_and_files_inside_it(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLETOP_DATA_DIR", str(tmp_path))
    assert paths.matches_database_url() == f"sqlite:///{tmp_path}/matches.sqlite3"
    assert paths.adapted_models_dir() == tmp_path / "models"
    assert paths.calibration_dir() == tmp_path / "calibration"
    assert (tmp_path / "models").is_dir() and (tmp_path / "calibration").is_dir()


def test_a_folder_that_cannot_be_made_is_a_one_line_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TABLETOP_DATA_DIR", str(blocker / "data"))
    with pytest.raises(paths.DataDirError, match="cannot create the data folder"):
        paths.data_dir()

    from tabletop.cli import main

    assert main(["panel", "--export", "json", "--match", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tabletop: error: cannot create the data folder")
    assert "TABLETOP_DATA_DIR" in err
    assert err.count("\n") == 1


# --- the panel's database ----------------------------------------------------------
def test_the_panel_keeps_its_matches_in_the_data_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import main
    from tabletop.panel.service import PanelService
    from tabletop.panel.settings import PanelSettings
    from tabletop.panel.store import EventStore

    data = tmp_path / "data"
    monkeypatch.setenv("TABLETOP_DATA_DIR", str(data))
    monkeypatch.delenv("TABLETOP_PANEL_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    settings = PanelSettings()
    assert settings.database_url == f"sqlite:///{data}/matches.sqlite3"
    match = PanelService(EventStore(settings.database_url), 120).store.create_match("club night")

    with sqlite3.connect(data / "matches.sqlite3") as db:
        tables = {row[0] for row in db.execute("select name from sqlite_master")}
    assert tables, "the store made no tables in the data folder's database"
    assert not list(tmp_path.glob("*.sqlite3")), "nothing is written into the current folder"

    # the command with no --database finds the same match there
    assert main(["panel", "--export", "json", "--match", str(match.id)]) == 0
    assert "club night" in capsys.readouterr().out


def test_the_environment_still_names_another_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tabletop.panel.settings import PanelSettings

    data = tmp_path / "data"
    monkeypatch.setenv("TABLETOP_DATA_DIR", str(data))
    url = f"sqlite:///{tmp_path / 'club.sqlite3'}"
    monkeypatch.setenv("TABLETOP_PANEL_DATABASE_URL", url)
    assert PanelSettings().database_url == url
    assert PanelSettings(database_url="sqlite:///given.db").database_url == "sqlite:///given.db"
    assert not data.exists(), "a database named elsewhere leaves the data folder alone"
