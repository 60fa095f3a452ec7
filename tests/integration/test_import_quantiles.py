"""Imported predictions with quantile columns fill the imported system's probabilistic marts
(window_quantile_scores, probabilistic_scores, quantile_calibration, leaderboard WQL), each
checked against numpy from the file's values and raw.prices alone; an import without quantile
columns gets null probabilistic metrics with the reason.

One real warehouse and one real dbt build: a registered system without quantiles is imported
first (run 1), then one with quantiles (run 2, the same study); the build of run 2 rates both
(study scope), beside the study's naive and seasonal naive baselines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.warehouses import (
    QUANTILE_COLUMNS,
    QUANTILE_LEVELS,
    ingest,
    read,
    small_study,
)
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.robustness.forecast.plan import load_series

pytestmark = pytest.mark.slow

LEVELS = QUANTILE_LEVELS
FILE_COLUMNS = [f"q{level:g}" for level in LEVELS]
STORED_COLUMNS = QUANTILE_COLUMNS
#: standard normal quantiles at LEVELS (scipy.stats.norm.ppf), written out
Z = np.array([-1.2815516, -0.8416212, -0.5244005, -0.2533471, 0.0, 0.2533471, 0.5244005,
              0.8416212, 1.2815516])  # fmt: skip
STUDY = small_study(
    study_tickers=["AAPL", "JPM"],
    study_start="2022-09-01",
    study_end="2022-12-28",
    context_length=30,
    horizon=5,
    perturbations=["P0", "P1"],
    systems=["naive", "seasonal_naive"],
)
SELECT = "+window_quantile_scores +probabilistic_scores +quantile_calibration +leaderboard"
KEY = ["ticker", "window_end_date", "perturbation_id"]


def prediction_frame(warehouse) -> pd.DataFrame:
    """A full grid: a noisy point forecast of the actual, with normal quantiles around it
    whose spread grows with the step (so some steps are covered and some not)."""
    with connect(warehouse) as con:
        series = load_series(con, STUDY)
    rng = np.random.default_rng(27)
    frames = []
    for ticker, s in series.items():
        for perturbation_id in STUDY.perturbations:
            for step in range(1, STUDY.horizon + 1):
                actual = s.clean[s.end_positions + step]
                forecast = actual + rng.normal(0.0, 2.0, len(actual))
                frame = pd.DataFrame(
                    {
                        "ticker": ticker,
                        "window_end_date": pd.to_datetime(s.window_end_dates).strftime("%Y-%m-%d"),
                        "perturbation_id": perturbation_id,
                        "horizon_step": step,
                        "forecast": forecast,
                    }
                )
                spread = 0.6 * step
                for column, z in zip(FILE_COLUMNS, Z, strict=True):
                    frame[column] = forecast + spread * z
                frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory, dbt_target):
    root = tmp_path_factory.mktemp("import_quantiles")
    warehouse = root / "tsrate.duckdb"  # the name the shared parse is of
    ingest(warehouse, list(STUDY.tickers))
    frame = prediction_frame(warehouse)
    without = root / "points_only.csv"
    frame.drop(columns=FILE_COLUMNS).to_csv(without, index=False)
    with_quantiles = root / "with_quantiles.csv"
    frame.to_csv(with_quantiles, index=False)
    with connect(warehouse) as con:
        import_forecasts(
            con, without, "ext_points", STUDY, workers=1, metadata={"family": "foundation"}
        )
        summary = import_forecasts(
            con, with_quantiles, "ext_quantiles", STUDY, workers=1,
            metadata={"family": "foundation"},
        )  # fmt: skip
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select=SELECT,
    )
    return warehouse, summary.run_id, pd.read_csv(with_quantiles)


def with_actuals(warehouse, steps: pd.DataFrame) -> pd.DataFrame:
    """``steps`` with the clean actual: the close ``horizon_step`` trading days after
    ``window_end_date``, read from raw.prices."""
    prices = read(warehouse, "select ticker, price_date, close from raw.prices order by 1, 2")
    prices["price_date"] = prices["price_date"].dt.strftime("%Y-%m-%d")
    prices["position"] = prices.groupby("ticker").cumcount()
    origin = prices.rename(columns={"price_date": "window_end_date"})[
        ["ticker", "window_end_date", "position"]
    ]
    out = steps.merge(origin, on=["ticker", "window_end_date"], validate="many_to_one")
    out["position"] = out["position"] + out["horizon_step"]
    target = prices[["ticker", "position", "close"]].rename(columns={"close": "actual"})
    return out.merge(target, on=["ticker", "position"], validate="many_to_one")


def window_metrics(steps: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Per window: fev's WQL and the 80 % coverage, in numpy."""
    q = steps[columns].to_numpy(dtype=float)
    y = steps["actual"].to_numpy(dtype=float)[:, None]
    pinball = np.maximum(LEVELS * (y - q), (LEVELS - 1) * (y - q)).sum(axis=1)
    terms = steps[KEY].assign(
        pinball=pinball,
        abs_actual=np.abs(y[:, 0]),
        covered=((q[:, 0] <= y[:, 0]) & (y[:, 0] <= q[:, -1])).astype(float),
    )
    grouped = terms.groupby(KEY).agg(
        pinball=("pinball", "sum"), abs_actual=("abs_actual", "sum"), coverage=("covered", "mean")
    )
    grouped["wql"] = 2 * grouped["pinball"] / (len(LEVELS) * grouped["abs_actual"])
    return grouped.reset_index()


def test_imported_quantiles_are_scored_like_numpy(built):
    warehouse, run_id, frame = built
    expected = window_metrics(with_actuals(warehouse, frame), FILE_COLUMNS)
    scored = read(
        warehouse,
        "select ticker, strftime(window_end_date, '%Y-%m-%d') as window_end_date, "
        "perturbation_id, wql, coverage_80, probabilistic_reason from marts.window_quantile_scores "
        "where system_id = 'ext_quantiles' and run_id = ?",
        [run_id],
    )
    merged = expected.merge(
        scored, on=KEY, how="outer", validate="one_to_one", suffixes=("_numpy", "_mart")
    )
    assert len(merged) == len(expected) == len(scored) > 0
    np.testing.assert_allclose(merged["wql_mart"], merged["wql_numpy"], rtol=1e-9)
    np.testing.assert_allclose(merged["coverage_80"], merged["coverage"], rtol=1e-12)
    assert merged["probabilistic_reason"].isna().all()


def test_probabilistic_scores_and_calibration(built):
    warehouse, run_id, frame = built
    steps = with_actuals(warehouse, frame)
    expected = window_metrics(steps, FILE_COLUMNS)
    scores = read(
        warehouse,
        "select perturbation_id, metric, mean, reason from marts.probabilistic_scores "
        "where system_id = 'ext_quantiles' and run_id = ?",
        [run_id],
    ).set_index(["perturbation_id", "metric"])
    for perturbation_id, windows in expected.groupby("perturbation_id"):
        np.testing.assert_allclose(
            scores.loc[(perturbation_id, "wql"), "mean"], windows["wql"].mean(), rtol=1e-9
        )
        np.testing.assert_allclose(
            scores.loc[(perturbation_id, "coverage_80"), "mean"],
            windows["coverage"].mean(),
            rtol=1e-9,
        )
    assert scores["reason"].isna().all()
    assert 0 < expected["coverage"].mean() < 1  # the check can tell covered from not

    calibration = read(
        warehouse,
        "select perturbation_id, quantile_level, observed_share from marts.quantile_calibration "
        "where system_id = 'ext_quantiles' and run_id = ?",
        [run_id],
    )
    for (perturbation_id, level), share in calibration.set_index(
        ["perturbation_id", "quantile_level"]
    )["observed_share"].items():
        rows = steps[steps["perturbation_id"] == perturbation_id]
        column = FILE_COLUMNS[int(np.argmin(np.abs(LEVELS - level)))]
        np.testing.assert_allclose(share, (rows["actual"] <= rows[column]).mean(), rtol=1e-12)
    assert len(calibration) == len(LEVELS) * len(STUDY.perturbations)


def test_leaderboard_wql_skill_score_and_win_rate(built):
    warehouse, run_id, frame = built
    per_system = {"ext_quantiles": window_metrics(with_actuals(warehouse, frame), FILE_COLUMNS)}
    stored = read(
        warehouse,
        "select q.system_id, q.ticker, strftime(q.window_end_date, '%Y-%m-%d') as window_end_date, "
        "q.perturbation_id, q.horizon_step, " + ", ".join(f"q.{c}" for c in STORED_COLUMNS) + " "
        "from raw.forecast_quantiles q join raw.run_partitions p using (partition_key) "
        "where p.run_id = ? and q.system_id in ('naive', 'seasonal_naive')",
        [run_id],
    )
    for system_id, rows in stored.groupby("system_id"):
        per_system[system_id] = window_metrics(with_actuals(warehouse, rows), STORED_COLUMNS)
    task_error = {
        system_id: windows.groupby(["ticker", "perturbation_id"])["wql"].mean()
        for system_id, windows in per_system.items()
    }
    relative = pd.DataFrame(
        {s: np.clip(e / task_error["seasonal_naive"], 0.01, 100) for s, e in task_error.items()}
    )
    ours = relative["ext_quantiles"]
    skill = 1 - np.exp(np.log(ours).mean())
    wins = [
        ((ours < relative[other]) + 0.5 * (ours == relative[other])).mean()
        for other in relative.columns
        if other != "ext_quantiles"
    ]
    board = read(
        warehouse,
        "select system_id, skill_score, win_rate, reason from marts.leaderboard "
        "where scope = 'all' and metric = 'wql' and run_id = ?",
        [run_id],
    ).set_index("system_id")
    np.testing.assert_allclose(board.loc["ext_quantiles", "skill_score"], skill, rtol=1e-9)
    np.testing.assert_allclose(board.loc["ext_quantiles", "win_rate"], np.mean(wins), rtol=1e-9)
    # the system without quantiles is not ranked on WQL, and says why
    assert pd.isna(board.loc["ext_points", "skill_score"])
    assert "no quantile forecasts" in board.loc["ext_points", "reason"]


def test_an_import_without_quantiles_gets_nulls_and_the_reason(built):
    warehouse, run_id, _ = built
    windows = read(
        warehouse,
        "select wql, crps, msis, coverage_80, probabilistic_reason from marts.window_quantile_scores "
        "where system_id = 'ext_points' and run_id = ?",
        [run_id],
    )
    assert len(windows) > 0
    assert windows[["wql", "crps", "msis", "coverage_80"]].isna().all().all()
    assert (windows["probabilistic_reason"] == "the system gives no quantile forecasts "
            "(or they were not stored for this run)").all()  # fmt: skip
    scores = read(
        warehouse,
        "select mean, reason from marts.probabilistic_scores "
        "where system_id = 'ext_points' and run_id = ?",
        [run_id],
    )
    assert len(scores) > 0 and scores["mean"].isna().all()
    assert scores["reason"].str.contains("no quantile forecasts").all()
    assert read(
        warehouse,
        "select count(*) as n from raw.forecast_quantiles where system_id = 'ext_points'",
    )["n"][0] == 0  # fmt: skip
