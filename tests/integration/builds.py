"""Forecast a small study into a warehouse and build its marts with dbt (a process pool and
a dbt child: integration tests only)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb

from tests.support.warehouses import ERROR_MARTS, ingest
from tsrate.config import Study, load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts


def forecast_and_build(
    warehouse: Path,
    study: Study,
    target: Path,
    force: bool = False,
    workers: int = 1,
    select: str | None = ERROR_MARTS,
    on_line: Callable[[str], None] | None = None,
    before_build: Callable[[duckdb.DuckDBPyConnection, str], None] | None = None,
) -> str:
    """Forecast ``study`` into ``warehouse`` and dbt-build ``select`` (None: every model);
    ``on_line`` gets the build's summary lines; ``before_build(con, run_id)`` may change the
    stored run before the build. One process forecasts (``workers=1``): the
    pool forecasts the same (tests/integration/test_forecast_pool.py) and costs each
    build about 0.7 CPU-s to start."""
    with connect(warehouse) as con:
        summary = run_forecasts(
            con,
            study,
            load_companies(),
            force=force,
            workers=workers,
            progress=lambda message: None,
        )
        finish_run(con, summary.run_id, "forecasted")
        if before_build is not None:
            before_build(con, summary.run_id)
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=target,
        on_line=on_line or (lambda line: None),
        select=select,
    )
    return summary.run_id


def failures_summary_built(warehouse: Path, study: Study, target: Path, unrecorded: str) -> str:
    """Ingest ``study``'s tickers, forecast it and dbt-build marts.forecast_failures_summary
    (and its unit tests), with naive's JPM P3 partition's ``unrecorded`` count set null as in
    a partition stored before that count was recorded (as the migration leaves it)."""
    ingest(warehouse, list(study.tickers))

    def unrecorded_partition(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
        con.execute(
            f"update raw.forecast_partitions set {unrecorded} = null "
            "where system_id = 'naive' and ticker = 'JPM' and perturbation_id = 'P3'"
        )

    return forecast_and_build(
        warehouse,
        study,
        target,
        select="+forecast_failures_summary",
        before_build=unrecorded_partition,
    )


def unit_cases_pass(
    selection: list[str],
    folder: Path,
    dbt_target: Path,
    monkeypatch,  # noqa: ANN001 - pytest's fixture
    env: dict[str, str] | None = None,
) -> None:
    """Build ``selection`` (dbt --select/--exclude arguments) on an empty warehouse in
    ``folder`` with the dbt unit cases forced on (``TSRATE_ALWAYS_UNIT_TESTS=1``: a build
    that passes its selection to dbt itself may skip cases that passed before in the same
    target); ``dbt.run_dbt`` raises when a model or a unit case fails."""
    monkeypatch.setenv("TSRATE_ALWAYS_UNIT_TESTS", "1")
    warehouse = folder / "tsrate.duckdb"
    with connect(warehouse):
        pass
    command = ["build", *selection, "--indirect-selection", "cautious"]
    assert dbt.run_dbt(command, None, warehouse, None, dbt_target, env)


#: The interpretability suite's build as `tsrate suite interpretability run` runs it
#: (tsrate.suites.publishing).
INTERP_SELECT = ["tsrate-build", "--select", "tag:interpretability"]
#: The tiny settings of the interpretability tests' suite runs, without sensitivity studies.
INTERP_TINY = {
    "length": 260,
    "burn_in": 20,
    "settings": {"test_length": 40, "hidden": 3, "epochs": 2, "batch_size": 64},
}
#: :data:`INTERP_TINY` with tiny sensitivity studies (of IMV-LSTM (Tensor) alone).
INTERP_TINY_SENSITIVITY = {
    **INTERP_TINY,
    "sensitivity_f": (0.3, 0.6),
    "sensitivity_sigma": (0.1,),
    "sensitivity_n": (5,),
    "sensitivity_models": ("imv_tensor",),
}


def interpretability_built(warehouse: Path, models: list[str], target: Path) -> str:
    """A real (small) interpretability suite run in ``warehouse``: ``models`` trained on
    dataset 4 with the small configuration's two seeds and :data:`INTERP_TINY`'s settings (no
    sensitivity studies), then dbt builds the suite's marts as its run does (the run named by
    the suite's env var). Returns the suite run id."""
    from tsrate.suites import SUITES
    from tsrate.suites.interpretability.suite import (
        plan_units,
        plan_variants,
        resolve_config,
        run_units,
    )

    config = resolve_config("small", overrides=INTERP_TINY)
    variants = plan_variants(config, [4], sensitivity=False)
    units = plan_units(config, variants, models)
    suite_run_id, trained, _ = run_units(warehouse, config, variants, units, lambda _: None)
    assert trained == len(units) == 2 * len(models)  # models x 2 seeds
    run = {SUITES["interpretability"].run_env: suite_run_id}  # as the suite's run passes it
    dbt.run_dbt(INTERP_SELECT, None, warehouse, lambda _: None, target, env_vars=run)
    return suite_run_id
