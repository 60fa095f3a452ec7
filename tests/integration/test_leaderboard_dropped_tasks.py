"""A system forecast for P0 only (as a partial import) shrinks the leaderboard's scope
``all`` for every system (fev's "drop"): the mart's rows say how many tasks were dropped and
which system lacks them, counted here from ``marts.leaderboard_tasks`` alone."""

from __future__ import annotations

import pytest

from tests.support.warehouses import ingest, read, small_study
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow

STUDY = dict(
    study_tickers=["AAPL", "JPM"],
    study_start="2022-06-01",
    study_end="2022-08-31",
    context_length=30,
    horizon=6,
    perturbations=["P0", "P3"],
    systems=["naive", "seasonal_naive", "random"],
)
PARTIAL = "random"


@pytest.fixture(scope="module")
def partial_run(tmp_path_factory, dbt_target):
    warehouse = tmp_path_factory.mktemp("partial") / "tsrate.duckdb"
    study = small_study(**STUDY)
    ingest(warehouse, list(study.tickers))
    with connect(warehouse) as con:
        summary = run_forecasts(con, study, load_companies(), workers=1, progress=lambda m: None)
        finish_run(con, summary.run_id, "forecasted")
        for table in ("raw.forecasts", "raw.forecast_quantiles"):
            con.execute(
                f"delete from {table} where system_id = ? and perturbation_id <> 'P0'", [PARTIAL]
            )
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select="+leaderboard",
    )
    return warehouse


def test_the_rows_of_scope_all_name_the_system_that_forced_the_drop(partial_run):
    tasks = read(partial_run, "select * from marts.leaderboard_tasks where metric = 'smape'")
    pivot = tasks.pivot_table(
        index=["ticker", "perturbation_id"], columns="system_id", values="test_error"
    ).reindex(columns=STUDY["systems"])
    every = len(STUDY["study_tickers"]) * len(STUDY["perturbations"])
    pivot = pivot.reindex([(t, p) for t in STUDY["study_tickers"] for p in STUDY["perturbations"]])
    lacking = int(pivot[PARTIAL].isna().sum())
    assert lacking == len(STUDY["study_tickers"])  # every P3 task
    board = read(partial_run, "select * from marts.leaderboard where metric = 'smape'").set_index(
        ["scope", "system_id"]
    )
    everyone = board.loc["all"]
    assert (everyone["n_tasks"] == every - lacking).all()
    assert everyone.loc[PARTIAL, "num_failures"] == lacking
    assert (
        everyone["reason"]
        == f"{lacking} of {every} tasks dropped for every system: no smape from {PARTIAL} "
        f"({lacking}) (fev's missing_strategy 'drop'; compare the per-perturbation scopes)"
    ).all()
    # under P3 the partial system has no task at all: nothing is dropped, nothing said
    assert PARTIAL not in board.loc["P3"].index
    assert board.loc["P3", "reason"].isna().all()
    assert (board.loc["P3", "n_tasks"] == len(STUDY["study_tickers"])).all()
