"""Patches between two match states, for the live scoreboard's pushes (routers/live.py).

A patch is a JSON Patch (RFC 6902) using only its ``add``, ``remove`` and ``replace``
operations, applied in order.  :func:`diff` keeps it small for the changes a match goes
through: a value changed deep in the state is replaced where it is, a round appended to a
list is one ``add`` at its end, and an event put at the head of the newest-first feed
(with the oldest falling off its end) is one ``add`` at ``0`` and one ``remove``.  A part
whose operations would take more room than the part itself is replaced whole.

:func:`apply` is the reading side (the page's is ``static/patch.js``): it returns the
patched state and leaves the one it was given as it was.
"""

from __future__ import annotations

import json
from typing import Any

Op = dict[str, Any]


class PatchError(ValueError):
    """A patch that does not fit the document it was applied to."""


def diff(old: Any, new: Any) -> list[Op]:
    """The operations that turn ``old`` into ``new`` (both JSON values)."""
    if _same(old, new):
        return []
    return _diff(old, new, "")


def apply(document: Any, ops: list[Op]) -> Any:
    """``document`` with ``ops`` applied; ``document`` itself is not changed.  Raises
    :class:`PatchError` where an operation does not fit."""
    copies: set[int] = set()  # containers made here, which may be changed in place
    root = document
    for op in ops:
        kind, tokens = op.get("op"), _tokens(op.get("path"))
        if kind not in ("add", "remove", "replace"):
            raise PatchError(f"unknown operation {kind!r}")
        if not tokens:
            if kind == "remove":
                raise PatchError("the whole document cannot be removed")
            root = _value(op)
            continue
        root = _own(root, copies)
        parent = root
        for token in tokens[:-1]:
            key = _key(parent, token, ending=False)
            if isinstance(parent, dict) and key not in parent:
                raise PatchError(f"no member {key!r}")
            child = _own(parent[key], copies)
            parent[key] = child
            parent = child
        _change(parent, tokens[-1], kind, op)
    return root


# --- working out a patch ----------------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: Python's ``True == 1`` and ``1 == 1.0`` are different values on a page.
    Containers compare as text (the encoder is C, a walk in Python would be ten times
    slower); the same members in another order then differ, which costs only a few
    operations that change nothing."""
    if a != b or type(a) is not type(b):
        return False
    return not isinstance(a, dict | list) or _text(a) == _text(b)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _size(value: Any) -> int:
    return len(_text(value))


def _pointer(path: str, token: str | int) -> str:
    return f"{path}/{str(token).replace('~', '~0').replace('/', '~1')}"


def _diff(old: Any, new: Any, path: str) -> list[Op]:
    """Operations for values known to differ; the whole value replaced where that is no
    larger (the document root is never replaced: the caller sends a whole state then)."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops = _object_ops(old, new, path)
    elif isinstance(old, list) and isinstance(new, list):
        ops = _array_ops(old, new, path)
    else:
        return [{"op": "replace", "path": path, "value": new}]
    whole = [{"op": "replace", "path": path, "value": new}]
    return ops if not path or _size(ops) < _size(whole) else whole


def _object_ops(old: dict[str, Any], new: dict[str, Any], path: str) -> list[Op]:
    ops: list[Op] = [{"op": "remove", "path": _pointer(path, key)} for key in old
                     if key not in new]
    for key, value in new.items():
        if key not in old:
            ops.append({"op": "add", "path": _pointer(path, key), "value": value})
        elif not _same(old[key], value):
            ops += _diff(old[key], value, _pointer(path, key))
    return ops


def _array_ops(old: list[Any], new: list[Any], path: str) -> list[Op]:
    """Items compared place by place, or after items put at the head (the feed, newest
    first) or gone from it: a way that leaves the rest in place is taken at once (a round
    appended, an event at the feed's head), else the smallest of the three."""
    shifts = [0]
    if old and new:
        if old[0] in new[1:]:
            shifts.append(new.index(old[0], 1))
        if new[0] in old[1:]:
            shifts.append(-old.index(new[0], 1))
    for shift in shifts:
        kept, rest = (old, new[shift:]) if shift >= 0 else (old[-shift:], new)
        common = min(len(kept), len(rest))
        if kept[:common] == rest[:common]:
            return _aligned(old, new, path, shift)
    candidates = [_aligned(old, new, path, shift) for shift in shifts]
    return min(candidates, key=_size)


def _aligned(old: list[Any], new: list[Any], path: str, shift: int) -> list[Op]:
    """``shift`` > 0: that many of ``new``'s items put before ``old``'s; < 0: that many of
    ``old``'s first items removed; then the rest compared place by place, the tail added
    or removed."""
    ops: list[Op] = []
    rest, offset = new, 0
    if shift > 0:
        ops += [{"op": "add", "path": _pointer(path, i), "value": new[i]} for i in range(shift)]
        rest, offset = new[shift:], shift
    elif shift < 0:
        ops += [{"op": "remove", "path": _pointer(path, 0)}] * -shift
        old = old[-shift:]
    for i, (was, now) in enumerate(zip(old, rest, strict=False)):
        if not _same(was, now):
            ops += _diff(was, now, _pointer(path, offset + i))
    if len(old) > len(rest):
        # from the end, so that each index still names the item meant
        ops += [{"op": "remove", "path": _pointer(path, offset + i)}
                for i in range(len(old) - 1, len(rest) - 1, -1)]
    else:
        ops += [{"op": "add", "path": _pointer(path, "-"), "value": value}
                for value in rest[len(old):]]
    return ops


# --- applying one ------------------------------------------------------------------------
def _tokens(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError(f"not a JSON pointer: {path!r}")
    return [token.replace("~1", "/").replace("~0", "~") for token in path.split("/")[1:]]


def _own(value: Any, copies: set[int]) -> Any:
    """``value``, or a shallow copy of it that this patch may change."""
    if id(value) in copies or not isinstance(value, dict | list):
        return value
    copy: dict[str, Any] | list[Any] = dict(value) if isinstance(value, dict) else list(value)
    copies.add(id(copy))
    return copy


def _key(container: Any, token: str, *, ending: bool) -> Any:
    """The key or index ``token`` names in ``container``; ``ending``: the place just past
    the last item of an array is allowed (``add``)."""
    if isinstance(container, dict):
        return token
    if isinstance(container, list):
        if ending and token == "-":
            return len(container)
        if not token.isdigit() or (token != "0" and token.startswith("0")):
            raise PatchError(f"not an array index: {token!r}")
        index = int(token)
        if index > len(container) or (index == len(container) and not ending):
            raise PatchError(f"index {index} is past the array's end")
        return index
    raise PatchError(f"{token!r} names a part of a value that has none")


def _change(parent: Any, token: str, kind: str, op: Op) -> None:
    key = _key(parent, token, ending=kind == "add")
    if kind == "add":
        if isinstance(parent, list):
            parent.insert(key, _value(op))
        else:
            parent[key] = _value(op)
        return
    if isinstance(parent, dict) and key not in parent:
        raise PatchError(f"no member {key!r} to {kind}")
    if kind == "remove":
        del parent[key]
    else:
        parent[key] = _value(op)


def _value(op: Op) -> Any:
    if "value" not in op:
        raise PatchError(f"{op.get('op')} at {op.get('path')!r} has no value")
    return op["value"]
