"""``tsrate suite reasoning build`` builds, publishes and reports the run a ``--no-build``
run stored (one real dbt build; the chosen run and the refusals:
tests/unit/test_suite_build_action.py)."""

from __future__ import annotations

import pytest

from tests.support.warehouses import rows
from tsrate import cli
from tsrate.platform.publish import published_path

pytestmark = pytest.mark.slow


def test_a_stored_run_is_built_by_the_build_action(tmp_path, monkeypatch, dbt_target, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_PREFECT", "never")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("DBT_TARGET_PATH", str(dbt_target))
    monkeypatch.delenv("TSRATE_VERBOSE", raising=False)
    argv = ["suite", "reasoning", "run", "--scenarios", "4", "--forecasts", "2", "--fracast"]
    assert cli.main([*argv, "0", "--tasks", "qa_single", "--no-build"]) == 0
    ((suite_run_id,),) = rows(warehouse, "select suite_run_id from raw.suite_runs")
    command = f"tsrate suite reasoning build {suite_run_id}"
    assert command in capsys.readouterr().out
    assert not published_path(warehouse).exists()

    assert cli.main(command.split()[1:]) == 0
    out = capsys.readouterr().out
    report = warehouse.parent / "reports" / "reasoning.html"
    assert f"reasoning suite run {suite_run_id} built and published; report: {report}" in out
    assert rows(warehouse, "select status from raw.suite_runs") == [("succeeded",)]
    published = rows(
        published_path(warehouse), "select distinct suite_run_id from marts.rsn_task_accuracy"
    )
    assert published == [(suite_run_id,)] and suite_run_id in report.read_text()
