"""Pure functions behind the suite's dbt Python models (python_models/rsn_*.py).

Every answer counts. ``forecast_errors``: one row per forecast prompt of the run, answered
or not: MAE and MSE on normalised values, beside the "predict median" baseline on the same
item (paper Section 6). Normalisation (ours; the paper normalises each series), two
variants side by side: **z-scored** (``mae``, ``mse``: errors divided by the population
standard deviation, ddof 0, of the history the forecaster saw) and **min-max**
(``mae_minmax``, ``mse_minmax``: errors divided by the history's range, max - min); a
constant history uses scale 1. So a z-scored error of 1 is one standard deviation of the
history, a min-max error of 1 its whole range. An unusable forecast (no reply, unparseable)
is charged the **penalty** of :func:`penalised`: the largest error of any usable forecast
on the same item and condition in the run (any system), and at least the predict-median
baseline's error on that item; ``usable`` = False marks it. So a system none of whose
forecasts is usable ranks last (or tied last) on every error metric.

``forecast_intervals``: per (suite run, system, condition) the mean errors with percentile
bootstrap 95 % intervals over items (:mod:`tsrate.suites.intervals`).

``rating_table``: the suite's ratings with :func:`tsrate.ratings.ratings_frame`; the task
(or forecasting condition) takes the perturbation's slot, the system the system's.

``rating_stability_table``: share of item resamples at the published rating.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from tsrate.ratings import ratings_frame
from tsrate.suites import intervals

FORECAST_COLUMNS = [
    "suite_run_id",
    "prompt_hash",
    "item_id",
    "system_id",
    "condition",
    "category",
    "usable",
    "mae",
    "mse",
    "mae_minmax",
    "mse_minmax",
    "baseline_mae",
    "baseline_mse",
    "baseline_mae_minmax",
    "baseline_mse_minmax",
]
ERROR_COLUMNS = ("mae", "mse", "mae_minmax", "mse_minmax")

#: Rated metrics and whether a higher raw score is better.
RATED_METRICS: dict[str, bool] = {
    "accuracy": True,  # choice tasks, with the series; unparseable = wrong
    "series_gap": True,  # accuracy with minus without the series (qa tasks)
    "mae": False,  # normalised forecast MAE, per forecasting condition
    "mse": False,
    "context_gain": True,  # MAE without minus MAE with context, paired items
}

RATING_COLUMNS = [
    "suite_run_id",
    "metric",
    "task",
    "system_id",
    "raw_score",
    "rating",
    "rating_levels",
    "higher_is_better",
    "rank",
]


def normalised_errors(history, future, forecast, scaling: str = "zscore") -> tuple[float, float]:
    """(MAE, MSE) of ``forecast`` against ``future`` divided by the history's scale:
    ``zscore`` = its population standard deviation, ``minmax`` = its range (see the module
    docstring; the shift cancels in the error)."""
    history = np.asarray(history, dtype=float)
    if scaling == "zscore":
        scale = float(history.std())
    elif scaling == "minmax":
        scale = float(history.max() - history.min())
    else:
        raise ValueError(f"unknown scaling {scaling!r}: zscore or minmax")
    scale = scale if scale > 0 else 1.0
    error = (np.asarray(forecast, dtype=float) - np.asarray(future, dtype=float)) / scale
    return float(np.mean(np.abs(error))), float(np.mean(error**2))


def penalised(frame: pd.DataFrame) -> pd.DataFrame:
    """Fill the errors of unusable rows: per (suite run, item, condition) and error column,
    the largest error of the usable rows and the baseline's error, whichever is larger."""
    out = frame.copy()
    keys = ["suite_run_id", "item_id", "condition"]
    for column in ERROR_COLUMNS:
        worst = out[column].where(out["usable"]).groupby([out[k] for k in keys]).transform("max")
        floor = out[f"baseline_{column}"]
        penalty = np.fmax(worst.to_numpy(dtype=float), floor.to_numpy(dtype=float))
        out[column] = np.where(out["usable"], out[column], penalty)
    return out


def forecast_errors(responses: pd.DataFrame) -> pd.DataFrame:
    """One row per forecast prompt (answered or not). ``responses``:
    int_rsn_responses_scored rows (any task; forecast prompts are used)."""
    records = []
    part = responses[responses["task"] == "forecast"]
    for row in part.itertuples(index=False):
        history = np.asarray(row.series, dtype=float)
        future = np.asarray(row.future, dtype=float)
        usable = bool(row.is_answered) and bool(row.parse_ok)
        record = {
            "suite_run_id": row.suite_run_id,
            "prompt_hash": row.prompt_hash,
            "item_id": row.item_id,
            "system_id": row.system_id,
            "condition": row.condition,
            "category": row.category,
            "usable": usable,
        }
        baseline = np.full(future.shape, float(np.median(history)))
        for scaling, suffix in (("zscore", ""), ("minmax", "_minmax")):
            mae, mse = normalised_errors(history, future, baseline, scaling)
            record[f"baseline_mae{suffix}"], record[f"baseline_mse{suffix}"] = mae, mse
            record[f"mae{suffix}"] = record[f"mse{suffix}"] = np.nan
            if usable:
                forecast = np.asarray(row.forecast, dtype=float)
                if forecast.shape != future.shape:
                    raise ValueError(
                        f"prompt {row.prompt_hash}: forecast has {forecast.size} values, the future {future.size}"
                    )
                mae, mse = normalised_errors(history, future, forecast, scaling)
                record[f"mae{suffix}"], record[f"mse{suffix}"] = mae, mse
        records.append(record)
    out = pd.DataFrame.from_records(records, columns=FORECAST_COLUMNS)
    out = out.astype({"usable": "bool", **{c: "float64" for c in FORECAST_COLUMNS[7:]}})
    return penalised(out) if len(out) else out


INTERVAL_COLUMNS = [
    "suite_run_id",
    "system_id",
    "condition",
    *(f"{c}_{end}" for c in ERROR_COLUMNS for end in ("ci_low", "ci_high")),
]


def forecast_intervals(scored: pd.DataFrame) -> pd.DataFrame:
    """Percentile bootstrap 95 % intervals of the mean (penalised) errors per (suite run,
    system, condition), items resampled; seeded by the group's key."""
    records = []
    keys = ["suite_run_id", "system_id", "condition"]
    for key, block in scored.groupby(keys, sort=True):
        record = dict(zip(keys, key, strict=True))
        seed = int.from_bytes(hashlib.sha256("|".join(key).encode()).digest()[:4], "little")
        for column in ERROR_COLUMNS:
            low, high = intervals.bootstrap_interval(block[column].to_numpy(float), seed=seed)
            record[f"{column}_ci_low"], record[f"{column}_ci_high"] = low, high
        records.append(record)
    out = pd.DataFrame.from_records(records, columns=INTERVAL_COLUMNS)
    return out.astype({c: "float64" for c in INTERVAL_COLUMNS[3:]})


def rating_table(scores: pd.DataFrame, levels: int) -> pd.DataFrame:
    """Ratings per (suite run, metric, task). ``scores``: suite_run_id, metric, task,
    system_id, raw_score (undefined scores are left out)."""
    frame = scores.copy()
    frame["raw_score"] = frame["raw_score"].astype(float)
    frame = frame[np.isfinite(frame["raw_score"].to_numpy())]
    unknown = sorted(set(frame["metric"]) - set(RATED_METRICS))
    if unknown:
        raise ValueError(f"no rating direction for metrics {unknown}")
    parts = []
    for suite_run_id, block in frame.groupby("suite_run_id", sort=True):
        rated = ratings_frame(
            block.rename(columns={"task": "perturbation_id"}), levels, RATED_METRICS
        )
        rated = rated.rename(columns={"perturbation_id": "task"})
        rated.insert(0, "suite_run_id", suite_run_id)
        parts.append(rated)
    if not parts:
        return pd.DataFrame(columns=RATING_COLUMNS).astype(
            {
                "raw_score": "float64",
                "rating": "int64",
                "rating_levels": "int64",
                "higher_is_better": "bool",
                "rank": "int64",
            }
        )
    return pd.concat(parts, ignore_index=True)[RATING_COLUMNS]


STABILITY_COLUMNS = [
    "suite_run_id",
    "metric",
    "task",
    "system_id",
    "raw_score",
    "rating",
    "share_at_rating",
    "n_resamples",
    "n_items",
]


def item_values(responses: pd.DataFrame, scored: pd.DataFrame) -> pd.DataFrame:
    """Per item the value whose mean over items is each rated score (suite_run_id, metric,
    task, item_id, system_id, value): accuracy (1 = right, with the series; unanswered or
    unparseable = 0), series_gap (right with minus right without the series, QA items;
    none for a system without a usable answer in a condition), mae / mse per forecasting
    condition (penalised), context_gain (MAE without minus with context, items whose two
    forecasts are usable)."""
    parts = []
    choice = responses[responses["task"] != "forecast"].copy()
    choice["value"] = choice["is_correct"].fillna(False).astype(float)
    cols = ["suite_run_id", "task", "item_id", "system_id", "value"]
    with_series = choice[choice["condition"] == "with_series"][cols]
    parts.append(with_series.assign(metric="accuracy"))
    without = choice[choice["condition"] == "without_series"][cols]
    gap = with_series.merge(
        without, on=["suite_run_id", "task", "item_id", "system_id"], suffixes=("", "_without")
    )
    gap = gap[gap["task"].isin(["qa_single", "qa_two"])]
    # no usable answer in a condition: no evidence of a gap (the mart's series_gap is null)
    usable = choice.assign(ok=choice["is_answered"].astype(bool) & choice["parse_ok"].astype(bool))
    any_ok = usable.groupby(["suite_run_id", "task", "system_id", "condition"])["ok"].any()
    keep = [
        bool(any_ok.get((r.suite_run_id, r.task, r.system_id, "with_series"), False))
        and bool(any_ok.get((r.suite_run_id, r.task, r.system_id, "without_series"), False))
        for r in gap.itertuples(index=False)
    ]
    gap = gap[np.array(keep, dtype=bool)] if len(gap) else gap
    parts.append(
        gap.assign(metric="series_gap", value=gap["value"] - gap["value_without"])[
            [*cols, "metric"]
        ]
    )
    if len(scored):
        for metric in ("mae", "mse"):
            parts.append(
                scored.assign(
                    metric=metric, task="forecast_" + scored["condition"], value=scored[metric]
                )[[*cols, "metric"]]
            )
        usable = scored[scored["usable"]]  # a gain pairs usable forecasts only
        w = usable[usable["condition"] == "with_context"]
        wo = usable[usable["condition"] == "without_context"]
        paired = wo.merge(w, on=["suite_run_id", "item_id", "system_id"], suffixes=("", "_with"))
        parts.append(
            paired.assign(
                metric="context_gain", task="forecast", value=paired["mae"] - paired["mae_with"]
            )[[*cols, "metric"]]
        )
    return pd.concat(parts, ignore_index=True)


def rating_stability_table(
    values: pd.DataFrame,
    ratings: pd.DataFrame,
    levels: int,
    resamples: int = intervals.BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """How firm each rating of ``ratings`` (rsn_ratings_assigned) is: the items of each
    (suite run, metric, task) of ``values`` (:func:`item_values`) are resampled with
    replacement (one draw per resample for every system), each system's mean re-rated;
    ``share_at_rating`` = share of resamples giving the published rating."""
    records = []
    for (suite_run_id, metric, task), block in values.groupby(["suite_run_id", "metric", "task"]):
        published_rows = ratings[
            (ratings["suite_run_id"] == suite_run_id)
            & (ratings["metric"] == metric)
            & (ratings["task"] == task)
        ]
        if published_rows.empty:
            continue
        wide = block.pivot_table(
            index="item_id", columns="system_id", values="value", aggfunc="mean"
        )
        digest = hashlib.sha256(f"{suite_run_id}|{metric}|{task}".encode()).digest()[:4]
        rng = np.random.default_rng([seed, int.from_bytes(digest, "little")])
        matrix = wide.to_numpy(dtype=float)
        draws = []
        for _ in range(resamples):
            rows = matrix[rng.integers(0, len(matrix), len(matrix))]
            with np.errstate(invalid="ignore"):
                means = np.nanmean(rows, axis=0) if len(rows) else np.full(matrix.shape[1], np.nan)
            draws.append(dict(zip(wide.columns, means, strict=True)))
        published = {
            row.system_id: None if pd.isna(row.rating) else int(row.rating)
            for row in published_rows.itertuples(index=False)
        }
        shares = intervals.stability_shares(published, draws, levels)
        for row in published_rows.itertuples(index=False):
            records.append(
                {
                    "suite_run_id": suite_run_id,
                    "metric": metric,
                    "task": task,
                    "system_id": row.system_id,
                    "raw_score": float(row.raw_score),
                    "rating": None if pd.isna(row.rating) else int(row.rating),
                    "share_at_rating": shares[row.system_id],
                    "n_resamples": resamples,
                    "n_items": len(matrix),
                }
            )
    out = pd.DataFrame.from_records(records, columns=STABILITY_COLUMNS)
    return out.astype(
        {
            "raw_score": "float64",
            "rating": "Int64",
            "share_at_rating": "float64",
            "n_resamples": "int64",
            "n_items": "int64",
        }
    )
