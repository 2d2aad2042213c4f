"""The live pipeline's stages as declared interfaces: frames -> detector -> watcher -> game.

A detector is anything that turns a frame into :class:`Detections`, and a watcher anything
that turns those into committed table snapshots.  Some know more, and each such part is a
protocol of its own, asked for with ``isinstance`` where it is used: an incremental
detector decides by the frames' own clock (:class:`Clocked`), looks at a spot again
(:class:`SecondLook`) and says while a change is still settling (:class:`Settling`); the
table view tells what happened to the camera (:class:`CameraEvents`) and takes the
detector's parts (:class:`Attaching`); a camera is opened before the model loads
(:class:`Opening`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tabletop.live.snapshot import TableSnapshot
    from tabletop.vision.detections import Detections


@runtime_checkable
class Detector(Protocol):
    """A frame (BGR pixels) to the items found in it."""

    def __call__(self, image: Any) -> Detections: ...


@runtime_checkable
class Clocked(Protocol):
    """A detector that decides by the frames' own clock (a replay's video time)."""

    def set_time(self, t: float) -> None: ...


@runtime_checkable
class SecondLook(Protocol):
    """A detector that can look at given spots of a frame again."""

    def look_again(self, image: Any, boxes: Any, kinds: Sequence[str]) -> Detections: ...


@runtime_checkable
class Settling(Protocol):
    """A detector that knows the picture is still changing where it last looked."""

    def settling(self) -> bool: ...


@runtime_checkable
class Watcher(Protocol):
    """Detections of a frame at time ``t`` to a committed table (None: nothing new)."""

    def update(self, t: float, frame: Any, detections: Detections) -> TableSnapshot | None: ...


@runtime_checkable
class CameraEvents(Protocol):
    """A watcher that also tells what happened to the camera (moved, covered, back)."""

    def take_camera_events(self) -> list[str]: ...


@runtime_checkable
class Attaching(Protocol):
    """A watcher that takes the detector's second look and its word on settling."""

    def attach(self, detector: object) -> None: ...


@runtime_checkable
class Opening(Protocol):
    """A frame source opened before it is read (a camera that is not there fails then)."""

    def open(self) -> None: ...
