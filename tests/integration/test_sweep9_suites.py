"""The interpretability suite's training loop with worker processes
(tsrate.suites.interpretability.suite.run_units, workers=2): units train in spawned
processes, not in this one, and are stored here as in the in-process loop; one unit, or one
worker, trains in this process. Starts processes, so not a unit test.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; the survivors are in
tests/planted/sweep9_suites.json): a changed bound on the worker count or the unit count
trains in the wrong place, which this test sees in this process' one-dataset cache.
"""

from __future__ import annotations

import dataclasses

import duckdb
import pytest

from tsrate.suites.interpretability import suite
from tsrate.suites.interpretability.suite import SMALL, plan_units, plan_variants, run_units
from tsrate.suites.interpretability.training import TrainSettings

pytestmark = pytest.mark.slow

TINY = dataclasses.replace(
    SMALL,
    length=120,
    burn_in=10,
    seeds=(1, 2),
    settings=TrainSettings(window=5, test_length=20, hidden=2, epochs=1, batch_size=32),
    settings_overridden=("window", "test_length", "hidden", "epochs", "batch_size"),
)


def test_two_workers_train_in_other_processes_and_one_unit_trains_here(
    tmp_path, monkeypatch
) -> None:
    """Four cores (whatever this machine has), two workers: 4 // 2 = 2 torch threads each
    (torch refuses the float 4 / 2)."""
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    warehouse = tmp_path / "w.duckdb"
    variants = plan_variants(TINY, [4], sensitivity=False)
    units = plan_units(TINY, variants, ["imv_tensor"])
    assert len(units) == 2
    suite._worker_cache.clear()
    _, trained, reused = run_units(warehouse, TINY, variants, units, lambda _: None, workers=2)
    assert (trained, reused) == (2, 0)
    assert suite._worker_cache == {}  # generated and trained in the workers
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("select count(*) from raw.interp_runs").fetchone() == (2,)
        assert con.execute("select status from raw.suite_runs").fetchone() == ("trained",)
    finally:
        con.close()
    # one pending unit: no pool for it, whatever the workers
    one = dataclasses.replace(TINY, seeds=(3,))
    units = plan_units(one, variants, ["imv_tensor"])
    _, trained, _ = run_units(warehouse, one, variants, units, lambda _: None, workers=2)
    assert trained == 1 and list(suite._worker_cache) == [variants[0].variant_key]


def test_more_workers_than_cores_still_train_with_one_thread_each(tmp_path, monkeypatch) -> None:
    """One core, two workers: each worker gets max(1, 1 // 2) = 1 torch thread (torch
    refuses 0 and a float), and both units are stored."""
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    warehouse = tmp_path / "w.duckdb"
    variants = plan_variants(TINY, [4], sensitivity=False)
    units = plan_units(TINY, variants, ["imv_tensor"])
    suite._worker_cache.clear()
    _, trained, _ = run_units(warehouse, TINY, variants, units, lambda _: None, workers=2)
    assert trained == 2 and suite._worker_cache == {}
