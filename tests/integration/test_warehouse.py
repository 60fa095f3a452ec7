"""The warehouse end to end on real prices: forecasts, dbt marts, reuse, force, bad input.

Each test module builds its own temporary DuckDB file with the real pipeline pieces
(skfolio prices, real systems, real dbt build); nothing here is mocked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.integration.builds import forecast_and_build
from tests.support.warehouses import (
    ERROR_MARTS,
    independent_window_errors,
    ingest,
    read,
    small_study,
)
from tsrate import TsrateError
from tsrate.config import load_companies, project_dir
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import run_forecasts

pytestmark = pytest.mark.slow
METRICS = ["max_abs_residual", "smape", "mase", "sign_accuracy"]


#: Every third window: the module's study forecasts ARIMA twice (built, then forced), about
#: 35 CPU-s each at stride 1; the grid, the reuse and the recomputation are the same.
STRIDE = 3


def study():
    return small_study(stride=STRIDE)


@pytest.fixture(scope="module")
def built(tmp_path_factory, dbt_target):
    root = tmp_path_factory.mktemp("warehouse")
    warehouse = root / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "MSFT", "JPM", "BAC"])
    run_id = forecast_and_build(warehouse, study(), dbt_target)
    return warehouse, run_id, root


def test_marts_hold_the_full_grid(built):
    warehouse, run_id, _ = built
    windows = read(
        warehouse,
        "select ticker, count(*) n from raw.windows where run_id = ? group by 1",
        [run_id],
    )
    study_days = read(
        warehouse,
        "select count(*) n from raw.prices where ticker = 'AAPL' "
        "and price_date between '2022-06-01' and '2022-12-28'",
    )["n"][0]
    assert (windows["n"] == (study_days - 40 - 10) // STRIDE + 1).all()
    errors = read(warehouse, "select * from marts.window_errors")
    assert len(errors) == 4 * 4 * 4 * windows["n"].iloc[0]
    assert set(errors["system_id"]) == {"naive", "arima", "random", "biased"}
    assert set(errors["perturbation_id"]) == {"P0", "P1", "P2", "P3"}
    assert set(errors["run_id"]) == {run_id}
    scores = read(warehouse, "select * from marts.accuracy_scores")
    assert len(scores) == 4 * 4 * 3


def test_window_errors_match_an_independent_computation(built):
    warehouse, run_id, _ = built
    mart = read(warehouse, "select * from marts.window_errors")
    mart["window_end_date"] = pd.to_datetime(mart["window_end_date"])
    expected = independent_window_errors(warehouse, run_id)
    merged = expected.merge(
        mart,
        on=["system_id", "ticker", "window_end_date", "perturbation_id"],
        suffixes=("_expected", "_mart"),
        validate="one_to_one",
    )
    assert len(merged) == len(mart) == len(expected)
    for metric in METRICS:
        np.testing.assert_allclose(
            merged[f"{metric}_mart"],
            merged[f"{metric}_expected"],
            rtol=1e-9,
            atol=1e-9,
            err_msg=metric,
        )
    # the Biased system's residual is exactly its company offset
    biased = merged[merged["system_id"] == "biased"]
    offsets = load_companies().set_index("ticker")["biased_offset"]
    np.testing.assert_allclose(
        biased["max_abs_residual_mart"], biased["ticker"].map(offsets), atol=1e-9
    )


def test_accuracy_scores_match_an_independent_aggregation(built):
    warehouse, run_id, _ = built
    expected = independent_window_errors(warehouse, run_id)
    mart = read(warehouse, "select * from marts.accuracy_scores")
    for metric in ["smape", "mase", "sign_accuracy"]:
        grouped = expected.groupby(["system_id", "perturbation_id"])[metric].agg(
            ["mean", "std", "count"]
        )
        rows = (
            mart[mart["metric"] == metric]
            .set_index(["system_id", "perturbation_id"])
            .loc[grouped.index]
        )
        np.testing.assert_allclose(rows["mean"], grouped["mean"], rtol=1e-9)
        np.testing.assert_allclose(rows["std"], grouped["std"], rtol=1e-9)
        assert (rows["n"].to_numpy() == grouped["count"].to_numpy()).all()


def test_each_perturbed_window_shows_exactly_one_perturbed_input(built):
    warehouse, _, _ = built
    counts = read(
        warehouse,
        "select perturbation_id, ticker, window_end_date, "
        "count_if(is_perturbed) n, count(*) steps from marts.window_inputs group by all",
    )
    assert (counts["steps"] == 40).all()
    assert (counts.loc[counts["perturbation_id"] == "P0", "n"] == 0).all()
    assert (counts.loc[counts["perturbation_id"] != "P0", "n"] == 1).all()
    missing = read(
        warehouse,
        "select count(*) n from marts.window_inputs "
        "where perturbation_id = 'P3' and is_perturbed and input_value is not null",
    )
    assert missing["n"][0] == 0


def test_rerun_reuses_every_partition_and_duplicates_nothing(built, dbt_target):
    warehouse, first_run, root = built
    before = read(warehouse, "select count(*) n from raw.forecasts")["n"][0]
    marts_before = read(warehouse, "select * from marts.window_errors order by all").drop(
        columns="run_id"
    )
    second_run = forecast_and_build(warehouse, study(), dbt_target)
    assert read(warehouse, "select count(*) n from raw.forecasts")["n"][0] == before
    reused = read(warehouse, "select reused from raw.run_partitions where run_id = ?", [second_run])
    assert len(reused) == 64 and reused["reused"].all()
    marts_after = read(warehouse, "select * from marts.window_errors order by all")
    assert set(marts_after["run_id"]) == {second_run}
    pd.testing.assert_frame_equal(marts_after.drop(columns="run_id"), marts_before)


def test_force_recomputes_appends_and_gives_the_same_marts(built, dbt_target):
    warehouse, _, root = built
    before = read(warehouse, "select count(*) n from raw.forecasts")["n"][0]
    marts_before = read(warehouse, "select * from marts.window_errors order by all").drop(
        columns="run_id"
    )
    forced_run = forecast_and_build(warehouse, study(), dbt_target, force=True)
    assert read(warehouse, "select count(*) n from raw.forecasts")["n"][0] == 2 * before
    reused = read(warehouse, "select reused from raw.run_partitions where run_id = ?", [forced_run])
    assert len(reused) == 64 and not reused["reused"].any()
    marts_after = read(warehouse, "select * from marts.window_errors order by all").drop(
        columns="run_id"
    )
    pd.testing.assert_frame_equal(marts_after, marts_before)


def test_another_company_set_through_config_alone(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["KO", "PEP", "XOM", "CVX"])
    study = small_study(study_tickers=["KO", "PEP", "XOM", "CVX"], systems=["naive", "biased"])
    forecast_and_build(warehouse, study, dbt_target)
    errors = read(
        warehouse, "select ticker, industry, count(*) n from marts.window_errors group by all"
    )
    assert set(errors["ticker"]) == {"KO", "PEP", "XOM", "CVX"}
    assert set(errors["industry"]) == {"Consumer Staples", "Energy"}


def test_unknown_ticker_and_too_short_series_change_nothing(built):
    warehouse, _, _ = built
    runs_before = read(warehouse, "select count(*) n from raw.runs")["n"][0]
    with connect(warehouse) as con:
        with pytest.raises(TsrateError, match=r"unknown ticker\(s\) \['ZZZ'\]"):
            run_forecasts(
                con, small_study(study_tickers=["AAPL", "ZZZ"]), load_companies(), workers=1
            )
        with pytest.raises(TsrateError, match="AAPL.*too short for one window"):
            run_forecasts(con, small_study(study_start="2022-11-01"), load_companies(), workers=1)
    assert read(warehouse, "select count(*) n from raw.runs")["n"][0] == runs_before


def _tsrate(*args, warehouse):
    env = dict(os.environ, TSRATE_WAREHOUSE=str(warehouse))
    return subprocess.run(
        [sys.executable, "-m", "tsrate.cli", *args],
        env=env,
        cwd=project_dir(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_bad_files_are_rejected_and_the_warehouse_is_unchanged(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL"])
    checksum = "select count(*), sum(close), max(loaded_at) from raw.prices"
    before = read(warehouse, checksum)
    cases = {
        "dupes.csv": ("ticker,date,close\nAAPL,2022-01-03,1\nAAPL,2022-01-03,2\n", "duplicate"),
        "text.csv": ("ticker,date,close\nAAPL,2022-01-03,one\n", "non-numeric"),
        "negative.csv": ("ticker,date,close\nAAPL,2022-01-03,-5\n", "non-positive"),
        "empty.csv": ("", "file is empty"),
        "columns.csv": ("symbol,date,price\nAAPL,2022-01-03,1\n", "missing column"),
    }
    for name, (text, expected) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        result = _tsrate("ingest", str(path), warehouse=warehouse)
        assert result.returncode == 2, result.stderr
        assert expected in result.stderr and name in result.stderr
        assert "Traceback" not in result.stderr
    pd.testing.assert_frame_equal(read(warehouse, checksum), before)


def test_good_file_replaces_only_its_tickers(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "MSFT"])
    path = tmp_path / "mine.csv"
    path.write_text(
        "ticker,date,close\nMSFT,2022-01-03,10\nMSFT,2022-01-04,11\nNEW,2022-01-03,1\nNEW,2022-01-04,2\n"
    )
    count = "select ticker, count(*) n from raw.prices group by 1"
    before = read(warehouse, count).set_index("ticker")["n"]
    result = _tsrate("ingest", str(path), warehouse=warehouse)  # changes MSFT: refused
    assert result.returncode == 2, result.stderr
    assert "would be replaced by different values (MSFT 2;" in result.stderr
    assert "Traceback" not in result.stderr
    assert read(warehouse, count).set_index("ticker")["n"].to_dict() == before.to_dict()
    result = _tsrate("ingest", str(path), "--replace", warehouse=warehouse)
    assert result.returncode == 0, result.stderr
    assert f"2 replaced; {before['MSFT'] - 2:,} removed" in result.stdout
    counts = read(warehouse, count).set_index("ticker")["n"]
    assert counts["MSFT"] == 2 and counts["NEW"] == 2 and counts["AAPL"] == before["AAPL"]


KILL_SCRIPT = textwrap.dedent(
    """
    import sys
    from tests.support.warehouses import small_study
    from tsrate.config import load_companies
    from tsrate.robustness.forecast.execute import run_forecasts
    from tsrate.platform.warehouse import connect

    if __name__ == "__main__":
        study = small_study(
            study_tickers=["AAPL", "JPM"], systems=["arima", "naive"], stride=int(sys.argv[2])
        )
        with connect(sys.argv[1]) as con:
            run_forecasts(con, study, load_companies(), workers=1,
                          progress=lambda m: print(m, flush=True))
    """
)


def test_killed_run_resumes_without_duplicates(tmp_path, built, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    script = tmp_path / "kill_me.py"
    script.write_text(KILL_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(project_dir()))
    process = subprocess.Popen(
        [sys.executable, str(script), str(warehouse), str(STRIDE)],
        cwd=project_dir(),
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    landed = 0
    for line in process.stdout:
        if line.startswith("["):
            landed += 1
            if landed == 3:
                process.send_signal(signal.SIGKILL)
                break
    process.wait(timeout=60)
    time.sleep(0.2)
    stored = read(warehouse, "select count(*) n from raw.forecast_partitions")["n"][0]
    assert 3 <= stored < 16
    study = small_study(study_tickers=["AAPL", "JPM"], systems=["arima", "naive"], stride=STRIDE)
    run_id = forecast_and_build(warehouse, study, dbt_target)
    reused = read(
        warehouse,
        "select count_if(reused) r, count(*) n from raw.run_partitions where run_id = ?",
        [run_id],
    )
    assert reused["r"][0] == stored and reused["n"][0] == 16
    dupes = read(
        warehouse,
        "select count(*) n from (select system_id, ticker, window_end_date, perturbation_id, "
        "horizon_step, count(*) c from raw.forecasts group by all having c > 1)",
    )
    assert dupes["n"][0] == 0
    # identical to the uninterrupted run of the same partitions in another warehouse
    resumed = read(warehouse, "select * exclude (run_id) from marts.window_errors order by all")
    reference_warehouse, _, _ = built
    reference = read(
        reference_warehouse,
        "select * exclude (run_id) from marts.window_errors "
        "where ticker in ('AAPL', 'JPM') and system_id in ('arima', 'naive') order by all",
    )
    pd.testing.assert_frame_equal(resumed, reference)


def _another_process_can_write(warehouse) -> tuple[bool, str]:
    """Open ``warehouse`` read-write from a fresh process (DuckDB's lock is per process: this
    process's own connections never block its own opens, so the check must be elsewhere)."""
    probe = "import sys, duckdb; duckdb.connect(sys.argv[1]).close()"
    done = subprocess.run(
        [sys.executable, "-c", probe, str(warehouse)], capture_output=True, text=True, timeout=60
    )
    return done.returncode == 0, done.stderr.strip()[-300:]


def test_dbt_releases_the_file(built):
    """After the build no process (dbt's pre-started child included) holds the warehouse."""
    warehouse, _, _ = built
    free, why = _another_process_can_write(warehouse)
    assert free, f"the warehouse is still held after dbt finished: {why}"
    # the probe itself can fail: while this process holds the file, another cannot open it
    held = duckdb.connect(str(warehouse))
    try:
        free_while_held, why = _another_process_can_write(warehouse)
    finally:
        held.close()
    assert not free_while_held and "lock" in why.lower(), why


def test_a_warehouse_of_an_older_version_still_builds(built, tmp_path, dbt_target):
    """Upgrades: a seed that gained a column and raw tables added later must not break the
    build of an existing warehouse, and nothing stored is lost."""
    import shutil

    from tsrate.platform import dbt_runner as dbt

    warehouse, run_id, _ = built
    old = tmp_path / "old" / "tsrate.duckdb"  # the file name keeps dbt's shared parse
    old.parent.mkdir()
    shutil.copy(warehouse, old)
    con = duckdb.connect(str(old))
    try:
        con.execute("alter table seeds.systems drop column base_model")
        for table in ("forecast_failures", "run_skipped_systems", "sentiments"):
            con.execute(f"drop table if exists raw.{table}")
        forecasts = con.execute("select count(*) from raw.forecasts").fetchone()[0]
    finally:
        con.close()
    dbt.build(
        run_id=run_id,
        warehouse=old,
        target_path=dbt_target,
        on_line=lambda _: None,
        select=ERROR_MARTS,
    )
    columns = read(
        old, "select column_name from information_schema.columns where table_name = 'systems'"
    )
    assert "base_model" in set(columns["column_name"])
    assert read(old, "select count(*) n from raw.forecast_failures")["n"].item() == 0
    assert read(old, "select count(*) n from raw.forecasts")["n"].item() == forecasts
    assert read(old, "select count(*) n from marts.window_errors")["n"].item() > 0
