"""Pure functions behind the suite's dbt Python models
(python_models/reasoning/intermediate/int_rsn_*.py).

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

Sampled forecasts (``--forecast-samples N``, :mod:`.sampling`): the N sample prompts of a
forecast are one row; its point forecast is the element-wise median of the usable samples
(unusable only when none is), ``crps`` / ``crps_minmax`` the CRPS of their empirical
distribution normalised like the MAE (a single reply is a point mass: ``crps`` = ``mae``),
penalised by the same rule.

``forecast_intervals``: per (suite run, system, condition) the mean errors with percentile
bootstrap 95 % intervals over items (:mod:`tsrate.suites.intervals`), what the mart
``rsn_forecast_errors`` shows beside its answer counts.

``rating_table``: the suite's ratings per (suite run, metric, task) with the kit's
:func:`tsrate.suites.rating.rate_scores` and the suite's rows of ``seeds/suite_rating_specs.csv``
(metrics: accuracy, series_gap, mae, mse, crps, context_gain).

``rating_stability_table``: share of series resamples (each series with all its items) at
the published rating, each resample re-rated by the same rule (the spec's direction and
ideal), and the percentile 95 % interval of each rated score over the same resamples.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pandas as pd

from tsrate.suites import intervals
from tsrate.suites import rating as kit
from tsrate.suites.reasoning.sampling import crps_ensemble, median_forecast

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
    "crps",
    "crps_minmax",
    "baseline_crps",
    "baseline_crps_minmax",
    "is_answered",
    "n_samples",
    "n_usable_samples",
    "system_kind",
]
FLOAT_COLUMNS = [*FORECAST_COLUMNS[7:19]]
ERROR_COLUMNS = ("mae", "mse", "mae_minmax", "mse_minmax", "crps", "crps_minmax")


def history_scale(history, scaling: str = "zscore") -> float:
    """The scale errors are divided by: ``zscore`` = the history's population standard
    deviation, ``minmax`` = its range; 1 for a constant history."""
    history = np.asarray(history, dtype=float)
    if scaling == "zscore":
        scale = float(history.std())
    elif scaling == "minmax":
        scale = float(history.max() - history.min())
    else:
        raise ValueError(f"unknown scaling {scaling!r}: zscore or minmax")
    return scale if scale > 0 else 1.0


def normalised_errors(history, future, forecast, scaling: str = "zscore") -> tuple[float, float]:
    """(MAE, MSE) of ``forecast`` against ``future`` divided by the history's scale:
    ``zscore`` = its population standard deviation, ``minmax`` = its range (see the module
    docstring; the shift cancels in the error)."""
    scale = history_scale(history, scaling)
    error = (np.asarray(forecast, dtype=float) - np.asarray(future, dtype=float)) / scale
    return float(np.mean(np.abs(error))), float(np.mean(error**2))


def normalised_crps(history, future, samples, scaling: str = "zscore") -> float:
    """CRPS of the samples' empirical distribution (:func:`~tsrate.suites.reasoning.sampling.crps_ensemble`),
    averaged over the horizon and divided by the history's scale like the MAE (CRPS is
    scale-equivariant, so this is the CRPS of the normalised values)."""
    scale = history_scale(history, scaling)
    return float(np.mean(crps_ensemble(samples, future)) / scale)


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
    """One row per forecast (suite run, system, item, condition), answered or not.
    ``responses``: int_rsn_responses_scored rows (any task; forecast prompts are used; a
    sampled forecast has one row per sample, ``sample_index`` 0..N-1, else one row with
    ``sample_index`` null). The point forecast is the element-wise median of the usable
    samples (:func:`~tsrate.suites.reasoning.sampling.median_forecast`; one greedy reply:
    itself); the forecast is usable when at least one sample is. ``crps``: from the usable
    samples (one sample: the absolute error, so equal to ``mae``)."""
    records = []
    part = responses[responses["task"] == "forecast"]
    if "sample_index" not in part.columns:
        part = part.assign(sample_index=None)
    # a greedy prompt is a forecast of its own (in its suite run: two runs may send the same
    # prompt); a sampled forecast is its N sample prompts
    sampled = part["sample_index"].notna()
    forecast_key = (part["suite_run_id"] + "|" + part["prompt_hash"]).where(
        ~sampled,
        part["suite_run_id"]
        + "|"
        + part["system_id"]
        + "|"
        + part["item_id"]
        + "|"
        + part["condition"],
    )
    order = part.assign(_forecast=forecast_key, _sample=part["sample_index"].fillna(-1))
    order = order.sort_values(["_forecast", "_sample"], kind="stable")
    for _, block in order.groupby("_forecast", sort=False):
        first = block.iloc[0]
        history = np.asarray(first["series"], dtype=float)
        future = np.asarray(first["future"], dtype=float)
        ok = block["is_answered"].astype(bool) & block["parse_ok"].astype(bool)
        samples = [np.asarray(f, dtype=float) for f in block.loc[ok, "forecast"]]
        for forecast in samples:
            if forecast.shape != future.shape:
                raise ValueError(
                    f"forecast of {first['system_id']} on item {first['item_id']} has "
                    f"{forecast.size} values, the future {future.size}"
                )
        usable = bool(samples)
        record = {
            "suite_run_id": first["suite_run_id"],
            "prompt_hash": first["prompt_hash"],
            "item_id": first["item_id"],
            "system_id": first["system_id"],
            "condition": first["condition"],
            "category": first["category"],
            "usable": usable,
            "is_answered": bool(block["is_answered"].astype(bool).any()),
            "n_samples": len(block),
            "n_usable_samples": len(samples),
            "system_kind": first.get("system_kind"),
        }
        baseline = np.full(future.shape, float(np.median(history)))
        for scaling, suffix in (("zscore", ""), ("minmax", "_minmax")):
            mae, mse = normalised_errors(history, future, baseline, scaling)
            record[f"baseline_mae{suffix}"], record[f"baseline_mse{suffix}"] = mae, mse
            record[f"baseline_crps{suffix}"] = mae  # a point mass: CRPS = absolute error
            record[f"mae{suffix}"] = record[f"mse{suffix}"] = record[f"crps{suffix}"] = np.nan
            if usable:
                point = median_forecast(samples)
                mae, mse = normalised_errors(history, future, point, scaling)
                record[f"mae{suffix}"], record[f"mse{suffix}"] = mae, mse
                record[f"crps{suffix}"] = normalised_crps(history, future, samples, scaling)
        records.append(record)
    out = pd.DataFrame.from_records(records, columns=FORECAST_COLUMNS)
    out = out.astype(
        {
            "usable": "bool",
            "is_answered": "bool",
            "n_samples": "int64",
            "n_usable_samples": "int64",
            **{c: "float64" for c in FLOAT_COLUMNS},
        }
    )
    return penalised(out) if len(out) else out


#: Means per (suite run, system, condition) that :func:`forecast_intervals` returns beside
#: the intervals (every item, penalties included, except ``mae_parsed``: usable ones only).
MEAN_COLUMNS = [
    *ERROR_COLUMNS,
    "mae_parsed",
    "baseline_mae",
    "baseline_mse",
    "baseline_mae_minmax",
]
INTERVAL_COLUMNS = [
    "suite_run_id",
    "system_id",
    "condition",
    "n_scored",
    *MEAN_COLUMNS,
    *(f"{c}_{end}" for c in ERROR_COLUMNS for end in ("ci_low", "ci_high")),
]
#: Counts per (suite run, system, condition) beside the intervals, so the mart
#: rsn_forecast_errors reads this one model: forecasts (items), unanswered, answered but
#: unusable, sampled replies and usable ones.
COUNT_COLUMNS = ["n_items", "n_unanswered", "n_unparseable", "n_samples", "n_usable_samples"]


def forecast_intervals(scored: pd.DataFrame) -> pd.DataFrame:
    """The mean (penalised) errors per (suite run, system, condition) with their percentile
    bootstrap 95 % intervals, items resampled, seeded by the group's system and condition
    (not the suite run: identical items give identical intervals); ``n_scored`` =
    usable forecasts, ``mae_parsed`` = the mean over those only (reference, never rated),
    ``baseline_*`` = the predict-median baseline's means on the same items."""
    records = []
    keys = ["suite_run_id", "system_id", "condition"]
    for key, block in scored.groupby(keys, sort=True):
        record = dict(zip(keys, key, strict=True))
        usable = block["usable"].astype(bool)
        record["n_scored"] = int(usable.sum())
        answered = block["is_answered"].astype(bool)
        record["system_kind"] = block["system_kind"].iloc[0] if "system_kind" in block else None
        record["n_items"] = len(block)
        record["n_unanswered"] = int((~answered).sum())
        record["n_unparseable"] = int((answered & ~usable).sum())
        record["n_samples"] = int(block["n_samples"].sum())
        record["n_usable_samples"] = int(block["n_usable_samples"].sum())
        for column in MEAN_COLUMNS:
            source = "mae" if column == "mae_parsed" else column
            values = block.loc[usable, source] if column == "mae_parsed" else block[source]
            values = values.to_numpy(float)
            record[column] = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
        # system and condition, not the suite run: a rerun on identical items, same intervals
        seed = int.from_bytes(hashlib.sha256("|".join(key[1:]).encode()).digest()[:4], "little")
        for column in ERROR_COLUMNS:
            # over the items the mean is over (a missing error is left out of both)
            values = block[column].to_numpy(float)
            low, high = intervals.bootstrap_interval(
                values[np.isfinite(values)],
                seed=seed,
                what=f"{column} of system {key[1]} ({key[2]}, suite run {key[0]})",
            )
            record[f"{column}_ci_low"], record[f"{column}_ci_high"] = low, high
        records.append(record)
    out = pd.DataFrame.from_records(
        records, columns=[*INTERVAL_COLUMNS, "system_kind", *COUNT_COLUMNS]
    )
    return out.astype(
        {
            "n_scored": "int64",
            **{c: "float64" for c in INTERVAL_COLUMNS[4:]},
            **{c: "int64" for c in COUNT_COLUMNS},
        }
    )


#: why a null series_gap (no usable answer with or without the series) is not rated
NO_GAP_EVIDENCE = "no usable answer with or without the series: no evidence of a gap to compare"


def rating_scores(
    accuracy: pd.DataFrame, errors: pd.DataFrame, context: pd.DataFrame
) -> pd.DataFrame:
    """The long score table the suite rates (suite_run_id, system_id, metric, task,
    raw_score, unrated_reason, undefined_reason: why a series_gap may be undefined), from the marts rsn_task_accuracy (accuracy per choice task;
    series_gap per qa task), rsn_forecast_errors (mae, mse, crps per forecasting condition,
    task ``forecast_<condition>``) and rsn_context_effects (context_gain, task
    ``forecast``). A system that forecast fewer items of a condition than the most any
    system did (``--fracast N``) keeps its scores but is held back from the ranking
    (``unrated_reason``): its mean is over other, possibly easier, items."""
    keys = ["suite_run_id", "system_id"]
    qa = accuracy[accuracy["task"].isin(["qa_single", "qa_two", "qa_perturbed"])]
    errors = errors.assign(unrated_reason=None)
    if "n_items" in errors.columns and len(errors):
        # a mean over fewer items (``--fracast N``) is not comparable with the others'
        most = errors.groupby(["suite_run_id", "condition"])["n_items"].transform("max")
        fewer = errors["n_items"] < most
        errors.loc[fewer, "unrated_reason"] = [
            f"forecast {n} of the {m} forecasting items: its mean is over other items than "
            "the other systems' (not ranked)"
            for n, m in zip(errors.loc[fewer, "n_items"], most[fewer], strict=True)
        ]
    return pd.concat(
        [
            accuracy[keys].assign(
                metric="accuracy", task=accuracy["task"], raw_score=accuracy["accuracy"]
            ),
            qa[keys].assign(
                metric="series_gap",
                task=qa["task"],
                raw_score=qa["series_gap"],
                undefined_reason=NO_GAP_EVIDENCE,
            ),
            errors[[*keys, "unrated_reason"]].assign(
                metric="mae", task="forecast_" + errors["condition"], raw_score=errors["mae"]
            ),
            errors[[*keys, "unrated_reason"]].assign(
                metric="mse", task="forecast_" + errors["condition"], raw_score=errors["mse"]
            ),
            errors[[*keys, "unrated_reason"]].assign(
                metric="crps", task="forecast_" + errors["condition"], raw_score=errors["crps"]
            ),
            context[keys].assign(
                metric="context_gain", task="forecast", raw_score=context["mae_gain"]
            ),
        ],
        ignore_index=True,
    )


def rating_table(
    scores: pd.DataFrame, levels: int, specs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Ratings per (suite run, metric, task). ``scores``: suite_run_id, metric, task,
    system_id, raw_score (undefined scores listed, not rated); ``specs``: the rating specs
    (default: the seed file)."""
    return kit.rating_table(
        scores, "reasoning", ["suite_run_id", "metric", "task"], "system_id", levels, specs
    )


def item_values(responses: pd.DataFrame, scored: pd.DataFrame) -> pd.DataFrame:
    """Per item the value whose mean over items is each rated score (suite_run_id, metric,
    task, item_id, system_id, value): accuracy (1 = right, with the series; unanswered or
    unparseable = 0), series_gap (right with minus right without the series, QA items;
    none for a system without a usable answer in a condition), mae / mse per forecasting
    condition (penalised), context_gain (MAE without minus with context, items whose two
    forecasts are usable); crps as mae. ``series_id``: the series each item asks about
    (the unit the stability resamples draw; :func:`series_of_items`)."""
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
    gap = gap[gap["task"].isin(["qa_single", "qa_two", "qa_perturbed"])]
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
        for metric in ("mae", "mse", "crps"):
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
    values = pd.concat(parts, ignore_index=True)
    series = series_of_items(responses)
    return values.assign(series_id=values["item_id"].astype(str).map(series))


def series_of_items(responses: pd.DataFrame) -> dict[str, str]:
    """item_id -> the series it asks about (``series_id`` of int_rsn_responses_scored or of
    :func:`item_values`: an imported row's uuid, a generated item's scenario); an item
    without one (an older caller's frame) is its own series."""
    items = responses["item_id"].astype(str)
    if "series_id" not in responses.columns:
        return dict(zip(items, items, strict=True))
    return {
        item: item if pd.isna(series) else str(series)
        for item, series in zip(items, responses["series_id"], strict=True)
    }


def rating_stability_table(
    values: pd.DataFrame,
    ratings: pd.DataFrame,
    levels: int,
    resamples: int = intervals.BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    specs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """How firm each rating of ``ratings`` (int_rsn_ratings_assigned) is: the series of each
    (suite run, metric, task) of ``values`` (:func:`item_values`) are resampled with
    replacement, each bringing all of its items (a cluster bootstrap: several questions of
    an imported file about one series are one sampled unit; with one item per series, as
    generated data have, exactly the item bootstrap), one draw per resample for every
    system, each system's mean re-rated by
    the same rule (direction and ideal of the suite's rating spec ``specs``, default the
    seed file); ``share_at_rating`` = share of resamples giving the published rating (NaN
    for an unrated system); ``ci_low`` / ``ci_high`` = the percentile 95 % interval of the
    system's resampled score (:func:`tsrate.suites.intervals.resampled_interval`; like the core's
    ``rating_stability``), so every rated score -- series_gap and context_gain included --
    carries an interval; ``share_mc_se`` = the share's Monte Carlo standard error. The
    resamples are seeded by ``seed`` (var bootstrap_seed), the suite, metric and task
    (:func:`tsrate.suites.rating.stability_rng`), not the suite run: identical data, identical
    shares. ``rating_levels`` and ``rating_reason`` are copied from ``ratings``."""
    spec = kit.suite_spec("reasoning", specs)
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
        # the series is the sampled unit: a resample draws series, each with all its items
        # (numbered in the items' order, so one item per series draws as the items did)
        series = series_of_items(block)
        members = _cluster_members(intervals.cluster_order([series[str(i)] for i in wide.index]))
        # seeded by the data's keys, not the suite run: a rerun draws the same resamples
        rng = kit.stability_rng(seed, "reasoning", metric, task)
        matrix = wide.to_numpy(dtype=float)
        draws = []
        for _ in range(resamples):
            drawn = rng.integers(0, len(members), len(members))
            rows = matrix[np.concatenate([members[c] for c in drawn])] if len(members) else matrix
            with warnings.catch_warnings():  # a system missing in every drawn item: NaN
                warnings.simplefilter("ignore", RuntimeWarning)
                means = np.nanmean(rows, axis=0) if len(rows) else np.full(matrix.shape[1], np.nan)
            draws.append(dict(zip(wide.columns, means, strict=True)))
        # a system held back from the ranking (rating_scores' unrated_reason) keeps its row
        # and interval; the kit re-rates only the rated systems, so it moves none of the
        # others' resampled ratings
        records += kit.stability_records(
            {"suite_run_id": suite_run_id, "metric": metric, "task": task},
            published_rows,
            "system_id",
            draws,
            levels,
            kit.metric_rule(spec, metric),
            {"n_resamples": resamples, "n_items": len(matrix), "n_series": len(members)},
        )
    keys = ["suite_run_id", "metric", "task"]
    counts = ["n_resamples", "n_items", "n_series"]
    return kit.stability_table(records, keys, "system_id", counts)


def _cluster_members(index: np.ndarray) -> list[np.ndarray]:
    """Row positions of each cluster (``index``: each row's cluster,
    :func:`tsrate.suites.intervals.cluster_order`)."""
    count = int(index.max()) + 1 if len(index) else 0
    return [np.flatnonzero(index == c) for c in range(count)]
