"""bench/adversarial.py on one position per variant: every position is legal material for
its variant, and every call comes back within its budget."""

from __future__ import annotations

from bench.adversarial import positions, report, run
from tabletop.engine.solver import check_material
from tabletop.engine.variants import find_variant


def test_every_position_is_made_of_the_variants_material() -> None:
    for position in positions(3, seed=5):
        check_material(find_variant(position.variant), position.rack, position.table)


def test_each_call_is_bounded_by_its_budget() -> None:
    tallies = run(1, 0.2, seed=2)
    assert set(tallies) == {"rommee", "raeuber", "wiener", "rum500", "american-rummy", "remi",
                            "rummikub-american", "sabra"}
    for tally in tallies.values():
        assert max(tally.seconds) <= 0.2 * 1.1 + 0.05
    table = report(tallies, 0.2)
    assert table.splitlines()[0] == "budget 0.2 s per call" and "raeuber" in table
