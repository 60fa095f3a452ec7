"""A plain `dbt build` (no run id: 'latest' in int_runs_selected) anchors on the run that
`tsrate build` builds: the newest run that can be built, a run whose publish failed
included (docs/operations.md, `tsrate build`). Before, 'latest' took only forecasted and
succeeded runs, so with the newest run publish_failed dbt built an older run's marts
while `tsrate build` built the newer one's. The Python side is
tests/unit/test_reviewF_buildable_runs.py.

Real parts: a DuckDB warehouse with tsrate's raw tables, runs inserted with their
statuses, dbt building int_runs_selected and its parents in a child process.
"""

from __future__ import annotations

import pytest

from tests.support.study_runs import runs_warehouse
from tests.support.warehouses import rows
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import buildable_run, connect

pytestmark = pytest.mark.slow


def test_plain_dbt_latest_anchors_on_the_run_tsrate_build_builds(tmp_path, dbt_target, monkeypatch):
    for name in ("TSRATE_RUN_ID", "TSRATE_STUDY_ID", "TSRATE_RUN_SCOPE"):
        monkeypatch.delenv(name, raising=False)  # plain dbt: the var's default, 'latest'
    warehouse = tmp_path / "tsrate.duckdb"
    runs_warehouse(warehouse).close()
    with connect(warehouse) as con:
        expected, _notes = buildable_run(con)
    assert expected == "r2-publish-failed"  # by hand: the newest run that can be built
    dbt.run_dbt(
        ["build", "--select", "+int_runs_selected", "--exclude", "resource_type:test",
         "resource_type:unit_test"],
        None, warehouse, lambda line: None, dbt_target,
    )  # fmt: skip
    assert rows(warehouse, "select run_id from intermediate.int_runs_selected") == [(expected,)]
