"""Item permanence: an item that no hand touched does not leave the table.

A detector misses items now and then: the whole frame's pass a tile on one frame,
the incremental detector (:mod:`tabletop.vision.incremental`) a meld whose region it
looked at again beside a move.  Taken at its word, the table loses that meld and the
turn looks like a rearrangement.  The picture says otherwise: where an item lay, it
still shows what it showed when the table was committed.  So a committed item whose
track is gone is *held* (kept on the table as it was read, at its place) while

* the picture at its place is as it was at the commit, and showed something there
  (a plain patch, as a made-up test frame has, vouches for no item), and
* no live item lies there now (a new track over it is the item seen again, read
  afresh).

It is let go once its place looks otherwise on a still table (a hand took it) or a
live item lies there.  Each newly held item is looked at again (the watcher's second
look, :mod:`tabletop.live.spots`) before the table is judged.

*A camera event*: a frame that suddenly shows much less.  When, from one frame to
the next, with no hand moving before, most of the items seen (and at least
:data:`CAMERA_EVENT_ITEMS`) vanish and the picture changed where they lay, the
camera's view changed (a stream that reconnected and restarted its picture, a
covered lens, a camera knocked away), not the table.  Every committed item lost
then is held whatever the picture shows, until an item lies at its place again or
an item that appeared since reads as it did; the watcher says so once
(:attr:`tabletop.live.watcher.TableWatcher.camera_events`), and the game turns it into a
``warning`` (code :data:`tabletop.live.events.CAMERA_EVENT_CODE`).

Pure picture arithmetic on frame patches; the watcher decides when to ask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.live.tracking import Track

Image = npt.NDArray[np.uint8]
Box = Sequence[float] | npt.NDArray[np.float64]

CAMERA_EVENT_ITEMS = 4
"""The fewest items vanishing in one frame that can make a camera event."""
CAMERA_EVENT_SHARE = 0.5
"""The share of the items seen in the frame before that must vanish at once."""
PIXEL_THRESHOLD = 18
"""Grey levels a blurred pixel must change by to count (as the motion meter counts)."""
PLACE_CHANGED_SHARE = 0.25
"""A place whose pixels changed by this share or more looks otherwise: a tile taken
away shows the table, one laid shows a tile; a shadow or the light's drift changes
less."""
PLACE_TEXTURE = 6.0
"""The least grey spread (standard deviation) a place must show to vouch for an item:
a tile or card face has a number and edges; a plain patch shows nothing."""


def place_patch(frame: Image, box: Box) -> Image | None:
    """The blurred grey picture of ``frame`` inside ``box`` (x1, y1, x2, y2, pixels), or
    None where the box lies off the frame."""
    height, width = frame.shape[:2]
    x1, y1 = max(0, int(np.floor(box[0]))), max(0, int(np.floor(box[1])))
    x2, y2 = min(width, int(np.ceil(box[2]))), min(height, int(np.ceil(box[3])))
    if x2 - x1 < 2 or y2 - y1 < 2:
        return None
    crop = frame[y1:y2, x1:x2]
    grey = crop if crop.ndim == 2 else cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.GaussianBlur(grey, (5, 5), 0), dtype=np.uint8)


def shows_something(patch: Image | None) -> bool:
    """Whether a place's picture shows more than a plain patch."""
    return patch is not None and float(patch.std()) >= PLACE_TEXTURE


def changed_share(before: Image, after: Image) -> float:
    """The share of the place's pixels that changed (1.0 where the patches differ in size:
    the place is not comparable)."""
    if before.shape != after.shape:
        return 1.0
    return float((cv2.absdiff(before, after) > PIXEL_THRESHOLD).mean())


def looks_otherwise(before: Image | None, frame: Image, box: Box) -> bool:
    """Whether ``frame`` shows the place ``box`` otherwise than ``before`` did."""
    after = place_patch(frame, box)
    if before is None or after is None:
        return True
    return changed_share(before, after) >= PLACE_CHANGED_SHARE


def still_shows(before: Image | None, frame: Image, box: Box) -> bool:
    """Whether ``frame`` shows the place as ``before`` did, and ``before`` showed an item
    there: the picture vouches for an item the detector no longer finds."""
    return shows_something(before) and not looks_otherwise(before, frame, box)


def is_camera_event(vanished: int, seen_before: int) -> bool:
    """Whether ``vanished`` items of the ``seen_before`` seen a frame ago going at once
    (with no hand moving, where the picture changed) is the camera's view changing."""
    return vanished >= max(CAMERA_EVENT_ITEMS, CAMERA_EVENT_SHARE * seen_before)


@dataclass
class Held:
    """A committed item the detector no longer finds, kept on the table."""

    track: Track
    """The item's track as it was committed (a frozen :class:`tabletop.live.tracking.Track`)."""
    patch: Image | None
    """The picture of its place at the commit; None for an item held by a camera event."""
    since: float
    """When it was first held."""

    @property
    def by_camera(self) -> bool:
        return self.patch is None
