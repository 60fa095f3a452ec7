"""A new run id (core or suite) reaches dbt's SQL without costing a re-parse.

tsrate passes the run the marts describe as env vars (``TSRATE_RUN_ID``,
``TSRATE_<PREFIX>_SUITE_RUN_ID``), read by the models only when they run: dbt's partial
parse then finds nothing changed between two builds of different runs. Checked with real
``dbt compile`` children on a temporary warehouse: the compiled SQL names each new run, and
dbt's own log of the second compile says it skipped parsing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tsrate import dbt
from tsrate.suites import SUITES
from tsrate.warehouse import connect

pytestmark = pytest.mark.slow

MODELS = ["int_runs_selected", "int_und_suite_runs_selected"]


def _compile(warehouse: Path, target: Path, run_id: str, suite_run_id: str) -> tuple[str, str]:
    """Compile the two run-selecting models; return (their compiled SQL, dbt's log of it)."""
    log = target / "logs" / "dbt.log"
    if log.exists():
        log.unlink()
    env = {"TSRATE_RUN_ID": run_id, SUITES["understanding"].run_env: suite_run_id}
    dbt.run_dbt(["compile", "--select", *MODELS], None, warehouse, lambda _: None, target, env)
    compiled = target / "compiled" / "tsrate" / "models"
    sql = (compiled / "intermediate" / "int_runs_selected.sql").read_text() + (
        compiled / "understanding" / "intermediate" / "int_und_suite_runs_selected.sql"
    ).read_text()
    return sql, log.read_text()


def test_a_new_run_id_is_compiled_in_without_a_reparse(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    target = tmp_path / "target"
    with connect(warehouse):
        pass
    first, _ = _compile(warehouse, target, "run-one", "und-one")
    assert "'run-one'" in first and "'und-one'" in first

    second, log = _compile(warehouse, target, "run-two", "und-two")
    assert "'run-two'" in second and "'und-two'" in second
    assert "run-one" not in second and "und-one" not in second
    assert "no changes found, skipping parsing" in log, log[-3000:]

    # 'latest' (what `tsrate build` of the newest run and plain dbt use): the newest
    # complete run, chosen in SQL
    latest, _ = _compile(warehouse, target, "latest", "")
    assert "row_number() over (order by started_at desc" in latest
    assert "run-two" not in latest and "und-two" not in latest
