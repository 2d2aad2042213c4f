"""Small readable JSON files for a setup (calibration, zone layout)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: str | Path, obj: Any) -> Path:
    out = Path(path)
    out.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")
    return out


def read_json(path: str | Path, error: type[ValueError], what: str) -> Any:
    """The file's JSON, or ``error`` naming ``what`` could not be read and why."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as problem:
        raise error(f"cannot read the {what} {str(path)!r}: {problem}") from None
    except RecursionError:
        raise error(f"cannot read the {what} {str(path)!r}: nested too deep") from None
