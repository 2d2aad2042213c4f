"""The user's data folder: what tabletop keeps between runs.

:func:`data_dir` is ``$TABLETOP_DATA_DIR`` when that is set (and not empty),
else the platform's user data folder for tabletop (``~/.local/share/tabletop``
on Linux, ``~/Library/Application Support/tabletop`` on macOS,
``%LOCALAPPDATA%\\tabletop`` on Windows).  It holds the panel's match database
(``matches.sqlite3``), models adapted to a table (``models/``), the players'
corrections made during play (``corrections/``) and calibration files
(``calibration/``).  Each folder is created when first asked for.

Standard library and platformdirs only, so that any command may ask cheaply.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

DATA_DIR_ENV = "TABLETOP_DATA_DIR"
"""The environment variable that puts the data folder somewhere else."""
APP_NAME = "tabletop"
MATCHES_DATABASE = "matches.sqlite3"
"""The panel's match database, in the data folder."""


class DataDirError(ValueError):
    """The data folder cannot be created; the message names it."""


def _created(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DataDirError(
            f"cannot create the data folder {str(path)!r}: {error.strerror or error} "
            f"(set {DATA_DIR_ENV} to a folder that can be written)"
        ) from None
    return path


def data_dir() -> Path:
    """The data folder (absolute), created if missing."""
    configured = os.environ.get(DATA_DIR_ENV, "").strip()
    if configured:
        path = Path(configured).expanduser().absolute()
    else:
        # appauthor=False: no vendor folder above the app's on Windows
        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return _created(path)


def matches_database_path() -> Path:
    """The SQLite file of the panel's matches, in the data folder."""
    return data_dir() / MATCHES_DATABASE


def matches_database_url() -> str:
    """The SQLAlchemy URL of :func:`matches_database_path`."""
    return f"sqlite:///{matches_database_path().as_posix()}"


def adapted_models_dir(create: bool = True) -> Path:
    """The folder of models adapted to the user's table, created if missing (unless only
    looked in: a run on a read-only data folder reads what is there)."""
    folder = data_dir() / "models"
    return _created(folder) if create else folder


CORRECTIONS_FILE = "corrections.jsonl"
"""The players' corrections during play, in the detect JSONL form (``"partial": true``
lines), in the data folder's ``corrections/`` with the frames they were made on."""


def corrections_file() -> Path:
    """The annotations file the panel's corrections are kept in for ``tabletop adapt
    --corrections`` (its folder created if missing, the file not)."""
    return _created(data_dir() / "corrections") / CORRECTIONS_FILE


def calibration_dir() -> Path:
    """The folder of the user's calibration files, created if missing."""
    return _created(data_dir() / "calibration")
