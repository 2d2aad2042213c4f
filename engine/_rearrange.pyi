from collections.abc import Sequence

def solve(
    table: Sequence[int],
    rack: Sequence[int],
    weight_tile: Sequence[int],
    weight_joker: Sequence[int],
    value: Sequence[int],
    jokers_table: int,
    jokers_rack: int,
    copies: int,
    reference_mode: int,
    threshold: int,
    set_ok: bytes,
    incumbent: int = ...,
    beam: int = ...,
    budget: int = ...,
    seconds: float = ...,
    /,
) -> tuple[int, list[int]] | str | None: ...

def expansions() -> int: ...
