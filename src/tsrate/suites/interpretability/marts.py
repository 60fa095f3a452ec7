"""Pure functions behind the suite's dbt Python models (python_models/interp_*.py).

``correctness_table``: per training run, every correctness measure of :mod:`.measures`
with its chance level (the same attention scored against source-permuted ground truths),
its margin over chance and, where undefined (NaN), the reason; plus the uniformity
measures ``beta_entropy`` / ``alpha_entropy`` (1 = uniform attention). DA-RNN's beta diagonal is
set to NaN first (its input attention never covers the target itself, paper Section 4.2),
and its alpha (over encoder states, source -1) has no per-series lag measure.

``rating_table``: the suite's ratings with :func:`tsrate.ratings.ratings_frame`; the
dataset variant takes the place of the perturbation and the model that of the system.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.ratings import ratings_frame
from tsrate.suites.interpretability.measures import correctness_with_chance

#: permuted ground truths per run for the chance level
CHANCE_PERMUTATIONS = 100

CORRECTNESS_COLUMNS = [
    "suite_run_id",
    "run_key",
    "variant_id",
    "model_id",
    "seed",
    "measure",
    "value",
    "chance",
    "margin",
    "undefined_reason",
]

#: Rated metrics and whether a higher raw score is better.
RATED_METRICS: dict[str, bool] = {
    "test_mse": False,  # mean test MSE over seeds (prediction score)
    "test_mse_cv": False,  # std / mean of test MSE over seeds (stability of performance)
    "beta_spearman_margin": True,  # mean Spearman correlation of beta minus chance
    "beta_auroc_margin": True,  # mean edge AUROC of beta minus chance
    "beta_std": False,  # mean std of beta across seeds
}
#: The rule against uniform attention: at or above this mean (over seeds) normalised
#: entropy of beta, the attention counts as near-uniform (0.99: e.g. every cell within
#: ~0.035 of 1/5 over 5 series; (0.6, 0.4) over 2 series is 0.971) and its correctness
#: margins and its across-seed std are NOT rated: a ranking hidden in a flat attention is
#: not an interpretation, and a collapsed attention has nothing to be stable about.
NEAR_UNIFORM_ENTROPY = 0.99

RATING_COLUMNS = [
    "suite_run_id",
    "metric",
    "variant_id",
    "model_id",
    "raw_score",
    "rating",
    "rating_levels",
    "higher_is_better",
    "rank",
]


def _matrices(frame: pd.DataFrame, n: int, window: int, kind: str):
    part = frame[frame["attention"] == kind]
    if part.empty:
        return None
    if kind == "alpha":
        part = part[part["source_index"] >= 0]
        if part.empty:
            return None
        out = np.zeros((n, n, window))
        out[part["target_index"], part["source_index"], part["lag"].astype(int) - 1] = part["value"]
        return out
    out = np.zeros((n, n))
    out[part["target_index"], part["source_index"]] = part["value"]
    return out


def correctness_table(
    runs: pd.DataFrame, attention: pd.DataFrame, truth: pd.DataFrame
) -> pd.DataFrame:
    """One row per (run, measure). ``runs``: int_interp_runs_selected; ``attention``:
    int_interp_attention_selected; ``truth``: stg_interp_truth."""
    records = []
    by_run = dict(tuple(attention.groupby("run_key"))) if len(attention) else {}
    by_variant = dict(tuple(truth.groupby("variant_key"))) if len(truth) else {}
    for run in runs.itertuples(index=False):
        n, window = int(run.n_series), int(run.window_length)
        frame = by_run.get(run.run_key)
        if frame is None:
            continue
        edges = by_variant.get(run.variant_key, truth.iloc[0:0])
        matrix = np.zeros((n, n))
        lags = np.zeros((n, n, window))
        for edge in edges.itertuples(index=False):
            matrix[edge.target_index, edge.source_index] += edge.weight
            if 1 <= edge.lag <= window:
                lags[edge.target_index, edge.source_index, edge.lag - 1] += edge.weight
        beta = _matrices(frame, n, window, "beta")
        if beta is None:
            continue
        if run.model_id == "darnn":
            beta = beta.copy()
            np.fill_diagonal(beta, np.nan)
        alpha = _matrices(frame, n, window, "alpha")
        picks = _matrices(frame, n, window, "tcdf_picks")
        for record in correctness_with_chance(
            beta, alpha, picks, matrix, lags, CHANCE_PERMUTATIONS, seed=0
        ):
            records.append(
                {
                    "suite_run_id": run.suite_run_id,
                    "run_key": run.run_key,
                    "variant_id": run.variant_id,
                    "model_id": run.model_id,
                    "seed": int(run.seed),
                    **record,
                }
            )
    out = pd.DataFrame.from_records(records, columns=CORRECTNESS_COLUMNS)
    return out.astype(
        {
            "seed": "int64",
            "value": "float64",
            "chance": "float64",
            "margin": "float64",
            "undefined_reason": "object",
        }
    )


def rated_scores(
    prediction: pd.DataFrame, correctness: pd.DataFrame, stability: pd.DataFrame
) -> pd.DataFrame:
    """The raw scores the suite rates (main-study variants only): test_mse, test_mse_cv,
    the correctness margins over chance (beta_spearman_margin, beta_auroc_margin) and
    beta_std -- the last three only where the mean beta_entropy over seeds is below
    :data:`NEAR_UNIFORM_ENTROPY` (the rule against uniform attention). Inputs: the marts
    interp_prediction_scores, interp_correctness, interp_stability."""
    keys = ["suite_run_id", "variant_id", "model_id"]

    def main(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["in_main_study"].fillna(False).astype(bool)]

    prediction, correctness, stability = main(prediction), main(correctness), main(stability)
    entropy = correctness.loc[correctness["measure"] == "beta_entropy", keys + ["mean_value"]]
    decided = entropy.loc[entropy["mean_value"] < NEAR_UNIFORM_ENTROPY, keys]
    margins = correctness[correctness["measure"].isin(["beta_spearman", "beta_auroc"])]
    margins = margins.merge(decided, on=keys, how="inner")
    beta_std = stability[stability["attention"] == "beta"].merge(decided, on=keys, how="inner")
    return pd.concat(
        [
            prediction[keys].assign(metric="test_mse", raw_score=prediction["test_mse_mean"]),
            prediction[keys].assign(metric="test_mse_cv", raw_score=prediction["test_mse_cv"]),
            margins[keys].assign(
                metric=margins["measure"] + "_margin", raw_score=margins["mean_margin"]
            ),
            beta_std[keys].assign(metric="beta_std", raw_score=beta_std["mean_std"]),
        ],
        ignore_index=True,
    )


def rating_table(scores: pd.DataFrame, levels: int) -> pd.DataFrame:
    """Ratings per (suite run, metric, variant). ``scores``: suite_run_id, metric,
    variant_id, model_id, raw_score (undefined scores are left out)."""
    frame = scores.copy()
    frame["raw_score"] = frame["raw_score"].astype(float)
    frame = frame[np.isfinite(frame["raw_score"].to_numpy())]
    unknown = sorted(set(frame["metric"]) - set(RATED_METRICS))
    if unknown:
        raise ValueError(f"no rating direction for metrics {unknown}")
    parts = []
    for suite_run_id, block in frame.groupby("suite_run_id", sort=True):
        renamed = block.rename(columns={"variant_id": "perturbation_id", "model_id": "system_id"})
        rated = ratings_frame(renamed, levels, RATED_METRICS)
        rated = rated.rename(columns={"perturbation_id": "variant_id", "system_id": "model_id"})
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
