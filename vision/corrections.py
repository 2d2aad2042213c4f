"""What the live table keeps of a player's correction, for ``tabletop adapt
--corrections``: the item's box in the frame it was seen in and the label the player gave
it, appended to an annotations file (JSONL, as :mod:`tabletop.vision.detections` reads)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.detections import Detections, ImageDetections
from tabletop.vision.labels import Kind


class CorrectionError(ValueError):
    """A correction that cannot be kept (a frame that is no picture, a file not read)."""


def _relative(path: Path, folder: Path) -> str:
    try:
        return os.path.relpath(path.absolute(), folder.absolute())
    except ValueError:  # another drive (Windows)
        return str(path.absolute())


@dataclass(frozen=True)
class CorrectedItem:
    """One correction from the panel: the frame the item was seen in, its box there
    (frame pixels) and the label the player gave it."""

    frame: npt.NDArray[np.uint8] | str | Path
    """The frame (BGR, as the camera gave it) or its image file."""
    box: Sequence[float]
    label: str
    kind: Kind


def corrections_to_jsonl(corrections: Iterable[CorrectedItem], out: str | Path,
                         images: str = "images") -> int:
    """Append the corrections to the annotations JSONL ``out`` (made if missing) as
    ``"partial": true`` lines, one per frame (corrections of one frame, by identity of
    the array or by file, share a line); frames given as arrays are saved as JPEG files
    in ``images/`` beside ``out``, named by their content.  Returns the lines written.
    ``tabletop adapt`` takes the file (with others or alone) and teaches the readers the
    corrected items only."""
    import cv2

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    groups: dict[Any, tuple[Any, list[CorrectedItem]]] = {}
    for item in corrections:
        key = (str(Path(item.frame).absolute()) if isinstance(item.frame, (str, Path))
               else id(item.frame))
        groups.setdefault(key, (item.frame, []))[1].append(item)
    lines = []
    for frame, items in groups.values():
        if isinstance(frame, (str, Path)):
            path = Path(frame)
            picture = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if picture is None:
                raise CorrectionError(f"cannot read the corrected frame {str(path)!r}")
        else:
            picture = np.asarray(frame)
            if picture.ndim != 3 or picture.shape[2] != 3:
                raise CorrectionError(f"a corrected frame must be a BGR image (H, W, 3), not "
                                 f"{picture.shape}")
            digest = hashlib.sha1(np.ascontiguousarray(picture).tobytes()).hexdigest()[:16]
            path = out.parent / images / f"correction-{digest}.jpg"
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_file() and not cv2.imwrite(str(path), picture,
                                                      [cv2.IMWRITE_JPEG_QUALITY, 95]):
                raise CorrectionError(f"cannot write the corrected frame to {str(path)!r}")
        height, width = picture.shape[:2]
        detections = Detections(np.array([list(map(float, item.box)) for item in items]),
                                tuple(item.label for item in items),
                                tuple(item.kind for item in items), np.ones(len(items)))
        record = ImageDetections(_relative(path, out.parent), width, height,
                                 detections.clipped(width, height))
        lines.append(json.dumps({**record.to_json(with_confidence=False), "partial": True}))
    with open(out, "a", encoding="utf-8") as handle:
        handle.writelines(f"{line}\n" for line in lines)
    return len(lines)
