"""`tsrate import` (without --no-build) records a failed build or publish on its run, as
`tsrate build` does (docs/operations.md, run states): a failed build marks the run
`build_failed`, a failed publish `publish_failed`, each with the last 2,000 characters of
the error. Before, the import's run stayed `forecasted`, so the next default `tsrate build`
took it again (and failed the same way) and `tsrate runs` showed it as a finished run.

Real parts: a warehouse of the bundled prices, a real forecast run of the naive baseline,
an imported prediction file, tsrate's dbt build in a child process and the real publish.
The build is made to fail by a forecast row stored twice (the forecasts' grain test
fails, as in test_sweep10_suitecli.py); the publish by a snapshot storage version DuckDB
does not know (`TSRATE_SNAPSHOT_STORAGE_VERSION`: publish refuses to write the snapshot,
after the import and its build). A real folder where the Parquet link must go no longer
does: the import refuses it before any work (tests/unit/test_s32_ops_preflight.py).
"""

from __future__ import annotations

import pytest

from tests.support.import_study import STUDY, external_p0_import, import_warehouse
from tests.support.warehouses import rows
from tsrate import TsrateError, cli
from tsrate.config import load_companies
from tsrate.platform import dbt_runner
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow


@pytest.fixture
def warehouse(tmp_path, monkeypatch, dbt_target):
    monkeypatch.setenv("TSRATE_PREFECT", "never")
    monkeypatch.delenv("TSRATE_VERBOSE", raising=False)
    return import_warehouse(tmp_path, monkeypatch, dbt_target)


def _import(warehouse, tmp_path) -> str:  # noqa: ANN001 - Paths
    """`tsrate import` of the external system's P0 predictions; the error it raised."""
    # --switch-study: the P0-only import is a study of its own beside the full run's (an
    # import of a study the warehouse holds no run of is refused without it)
    argv = [*external_p0_import(warehouse, tmp_path), "--no-baselines", "--switch-study"]
    args = cli.build_parser().parse_args(argv)
    with pytest.raises(TsrateError) as caught:
        args.func(args)
    return caught


def _imported_run(warehouse) -> tuple[str, str]:  # noqa: ANN001 - a Path
    ((status, message),) = rows(
        warehouse,
        "select status, message from raw.runs where list_contains(systems, 'external')",
    )
    return status, message


def test_an_import_whose_build_fails_marks_its_run_build_failed(warehouse, tmp_path):
    with connect(warehouse) as con:  # a run of the same study, one forecast row stored twice
        run_id = run_forecasts(con, STUDY, load_companies(), workers=1).run_id
        finish_run(con, run_id, "forecasted")
        con.execute("insert into raw.forecasts select * from raw.forecasts limit 1")
    caught = _import(warehouse, tmp_path)
    assert caught.type is dbt_runner.DbtError
    error = str(caught.value)
    status, message = _imported_run(warehouse)
    assert status == "build_failed"
    assert message == error[-2000:]


def test_an_import_whose_publish_fails_marks_its_run_publish_failed(
    warehouse, tmp_path, monkeypatch
):
    monkeypatch.setenv("TSRATE_SNAPSHOT_STORAGE_VERSION", "v0.0.0-unknown")
    caught = _import(warehouse, tmp_path)
    error = str(caught.value)
    assert "cannot write the snapshot" in error and "v0.0.0-unknown" in error
    status, message = _imported_run(warehouse)
    assert status == "publish_failed"
    assert message == error[-2000:]
