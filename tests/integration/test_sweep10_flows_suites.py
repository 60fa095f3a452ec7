"""The three suites' flows build by default: run in this process (no Prefect API) on tiny
settings, each one's dbt build is started after its answers are stored, and fails here at
once (its target is a file, not a folder), so the suite run is marked ``build_failed``.
Without a build (``build=False``, tests/unit/test_sweep10_flows_suites.py) the same runs
succeed with nothing built.

Written for round 10 of the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep10_flows.json): a flow whose ``build`` defaulted to False would store
its answers and return, no marts, no report.
"""

from __future__ import annotations

import duckdb
import pytest

from flows.interpretability import interpretability_flow
from flows.reasoning import reasoning_flow
from flows.understanding import understanding_flow
from tests.support.tiny_suites import GENERATOR, INTERPRETABILITY, UNDERSTANDING
from tsrate.platform.dbt_runner import DbtError

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("suite", ["understanding", "interpretability", "reasoning"])
def test_a_suite_flow_builds_by_default(tmp_path, suite):
    warehouse = tmp_path / "w.duckdb"
    target = tmp_path / "target"
    target.write_text("not a folder")
    options = {"warehouse": str(warehouse), "target_path": str(target)}
    run = {
        "understanding": lambda: understanding_flow.fn(overrides=UNDERSTANDING, **options),
        "interpretability": lambda: interpretability_flow.fn(
            datasets=[2],
            models=["imv_tensor"],
            seeds=[0],
            overrides=INTERPRETABILITY,
            sensitivity=False,
            workers=1,
            **options,
        ),  # fmt: skip
        "reasoning": lambda: reasoning_flow.fn(generator=GENERATOR, fracast=0, **options),
    }[suite]
    with pytest.raises(DbtError, match=f"tsrate-build --select tag:{suite}"):
        run()
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("select suite, status from raw.suite_runs").fetchall() == [
            (suite, "build_failed")
        ]
    finally:
        con.close()
