"""Pure functions behind the suite's dbt Python models (python_models/interp_*.py).

``correctness_table``: per training run, every correctness measure of :mod:`.measures`
with its chance level (the same attention's exact expected score against source-permuted
ground truths), its margin over chance and, where undefined (NaN), the reason; plus the
uniformity measures ``beta_entropy`` / ``alpha_entropy`` (1 = uniform attention). DA-RNN's
beta diagonal is set to NaN first (its input attention never covers the target itself,
paper Section 4.2), and its alpha (over encoder states, source -1) has no per-series lag
measure.

``rating_scores`` / ``rating_table``: the suite's ratings per (suite run, metric, dataset
variant) with the kit's :func:`tsrate.suites.rating.rate_scores` and the suite's rows of
``seeds/suite_rating_specs.csv`` (metrics: test_mse, test_mse_cv, beta_spearman_margin,
beta_auroc_margin, beta_std); the model is the rated system. Near-uniform attention
(:data:`NEAR_UNIFORM_ENTROPY`) is left unrated, with its reason, before rate_scores.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from tsrate.suites.interpretability.measures import correctness_with_chance
from tsrate.suites.rating import (
    metric_rule,
    stability_records,
    stability_rng,
    stability_table,
    suite_spec,
)
from tsrate.suites.rating import rating_table as kit_rating_table

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

#: The rule against uniform attention: at or above this mean (over seeds) normalised
#: entropy of beta, the attention counts as near-uniform (0.99: e.g. every cell within
#: ~0.035 of 1/5 over 5 series; (0.6, 0.4) over 2 series is 0.971) and its correctness
#: margins and its across-seed std are NOT rated: a ranking hidden in a flat attention is
#: not an interpretation, and a collapsed attention has nothing to be stable about.
NEAR_UNIFORM_ENTROPY = 0.99

#: Metrics the rule against uniform attention applies to (rated only where beta is peaked).
ATTENTION_METRICS = ("beta_spearman_margin", "beta_auroc_margin", "beta_std")


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
        for record in correctness_with_chance(beta, alpha, picks, matrix, lags):
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


def _uniform_reason(entropy: float) -> str:
    if not np.isfinite(entropy):
        return "beta_entropy undefined: cannot tell whether the attention is peaked"
    return (
        f"near-uniform attention: mean beta_entropy {entropy:.3f} >= {NEAR_UNIFORM_ENTROPY} "
        "(a ranking hidden in a flat attention is not an interpretation)"
    )


def rating_scores(
    prediction: pd.DataFrame, correctness: pd.DataFrame, stability: pd.DataFrame
) -> pd.DataFrame:
    """The long score table the suite rates (suite_run_id, variant_id, model_id, metric,
    raw_score, unrated_reason) over the main study only: test_mse (mean) and test_mse_cv
    from interp_prediction_scores; beta_spearman_margin and beta_auroc_margin (mean over
    seeds of the margin over chance, ``mean_margin``) from interp_correctness; beta_std
    (mean std of beta) from interp_stability.

    The rule against uniform attention: the two margins and beta_std of a model x variant
    whose mean beta_entropy (interp_correctness) is at or above :data:`NEAR_UNIFORM_ENTROPY`,
    or undefined, carry an ``unrated_reason`` (null otherwise); :func:`rating_table` leaves
    them out of the comparison and reports them unrated with that reason."""

    def main(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["in_main_study"].fillna(False).astype(bool)]

    prediction, correctness, stability = main(prediction), main(correctness), main(stability)
    keys = ["suite_run_id", "variant_id", "model_id"]
    beta = correctness[correctness["measure"].isin(["beta_spearman", "beta_auroc"])]
    beta_std = stability[stability["attention"] == "beta"]
    scores = pd.concat(
        [
            prediction[keys].assign(metric="test_mse", raw_score=prediction["test_mse_mean"]),
            prediction[keys].assign(metric="test_mse_cv", raw_score=prediction["test_mse_cv"]),
            # correctness is rated as the margin over chance (source-permuted ground truth)
            beta[keys].assign(
                metric=beta["measure"] + "_margin",
                raw_score=beta["mean_margin"],
                **(
                    {"undefined_reason": beta["undefined_reason"]}
                    if "undefined_reason" in beta
                    else {}
                ),
            ),
            beta_std[keys].assign(metric="beta_std", raw_score=beta_std["mean_std"]),
        ],
        ignore_index=True,
    )
    entropy = correctness.loc[correctness["measure"] == "beta_entropy", [*keys, "mean_value"]]
    entropy = entropy.rename(columns={"mean_value": "beta_entropy"})
    scores = scores.merge(entropy, on=keys, how="left")
    level = pd.to_numeric(scores["beta_entropy"], errors="coerce").astype(float)
    flat = scores["metric"].isin(ATTENTION_METRICS) & ~(level < NEAR_UNIFORM_ENTROPY)
    scores["unrated_reason"] = pd.Series([None] * len(scores), dtype="object")
    scores.loc[flat, "unrated_reason"] = [_uniform_reason(x) for x in level[flat]]
    return scores.drop(columns=["beta_entropy"])


def rating_table(
    scores: pd.DataFrame, levels: int, specs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Ratings per (suite run, metric, variant) by the kit's
    :func:`tsrate.suites.rating.rating_table` with the suite's rows of the rating specs
    (``specs``: default the seed file). ``scores``: suite_run_id, metric, variant_id,
    model_id, raw_score and optionally unrated_reason / undefined_reason. Undefined scores
    are listed, not rated (rating_reason "not rated: " + why); rows
    with an ``unrated_reason`` are not compared with the others and come back with a null
    rating and rank and that text as ``rating_reason``."""
    keys = ["suite_run_id", "metric", "variant_id"]
    return kit_rating_table(scores, "interpretability", keys, "model_id", levels, specs)


#: Up to this many training seeds the stability bootstrap is exact: every distinct draw of
#: n seeds with replacement (C(2n - 1, n) multisets: 3 for 2 seeds, 10 for 3, 126 for 5,
#: 462 for 6) weighted by its multinomial probability, instead of var bootstrap_resamples
#: random draws: the share is the bootstrap probability itself, without Monte Carlo error.
EXACT_MAX_SEEDS = 6


def exact_seed_draws(n: int) -> tuple[list[np.ndarray], list[float]]:
    """Every distinct bootstrap draw of ``n`` seeds (a multiset of seed positions, sorted)
    and its probability n! / (c_1! ... c_k!) / n^n, c_i the times position i is drawn;
    the probabilities sum to 1."""
    draws, weights = [], []
    for pick in itertools.combinations_with_replacement(range(n), n):
        counts = np.bincount(pick, minlength=n)
        ways = math.factorial(n) // math.prod(math.factorial(int(c)) for c in counts)
        draws.append(np.array(pick))
        weights.append(ways / n**n)
    return draws, weights


def _seed_matrix(frame: pd.DataFrame, value: str, seeds: list) -> pd.DataFrame:
    """model_id x seed of ``value`` (mean where a seed has several rows), columns in ``seeds``."""
    wide = frame.pivot_table(index="model_id", columns="seed", values=value, aggfunc="mean")
    return wide.reindex(columns=seeds)


def rating_stability_table(
    runs: pd.DataFrame,
    correctness: pd.DataFrame,
    attention: pd.DataFrame,
    ratings: pd.DataFrame,
    levels: int,
    resamples: int = 200,
    seed: int = 0,
    specs: pd.DataFrame | None = None,
    exact_max_seeds: int = EXACT_MAX_SEEDS,
) -> pd.DataFrame:
    """How firm each rating of ``ratings`` (int_interp_ratings_assigned) is: a bootstrap
    over the training seeds of each (suite run, dataset variant).

    With at most ``exact_max_seeds`` seeds (:data:`EXACT_MAX_SEEDS`) the bootstrap is
    exact: every distinct draw (:func:`exact_seed_draws`) weighted by its probability,
    ``n_resamples`` = the number of distinct draws, ``share_mc_se`` = 0; with more,
    ``resamples`` random draws.

    Each resample draws as many seeds as the variant has, with replacement, the same draw
    for every model (models trained on one seed share that seed's data split and
    initialisation stream), and recomputes each model's scores exactly as the marts do
    from its runs on the drawn seeds: test_mse = mean test MSE; test_mse_cv = sample std
    / mean; beta_spearman_margin / beta_auroc_margin = mean margin over chance
    (int_interp_correctness_measured); beta_std = mean over beta cells of the sample std
    across the drawn runs (``attention``: int_interp_attention_selected). Each resample is
    re-rated by the published rule (direction and ideal of the suite's rating spec). A model
    left unrated for near-uniform attention, or with a null published rating, gets a null
    share; so does every model of a variant trained on fewer than two seeds (one seed
    cannot be resampled). Random resamples are seeded by ``seed`` (var bootstrap_seed), the
    suite and the variant (:func:`tsrate.suites.rating.stability_rng`), not the suite run:
    identical runs, identical shares. Columns: suite_run_id, metric, variant_id, model_id,
    raw_score, rating, rating_levels, rating_reason, share_at_rating, share_mc_se (its Monte
    Carlo standard error), n_resamples, n_seeds, n_resamples_undefined
    (:func:`tsrate.suites.rating.stability_records`)."""
    spec = suite_spec("interpretability", specs)
    beta = attention[attention["attention"] == "beta"]
    records = []
    for (suite_run_id, variant_id), block in ratings.groupby(["suite_run_id", "variant_id"]):
        variant_runs = runs[
            (runs["suite_run_id"] == suite_run_id) & (runs["variant_id"] == variant_id)
        ]
        seeds = sorted(variant_runs["seed"].dropna().unique().tolist())
        in_variant = (correctness["suite_run_id"] == suite_run_id) & (
            correctness["variant_id"] == variant_id
        )
        scores: dict[str, pd.DataFrame] = {
            "test_mse": _seed_matrix(variant_runs, "test_mse", seeds)
        }
        for measure in ("beta_spearman", "beta_auroc"):
            part = correctness[in_variant & (correctness["measure"] == measure)]
            scores[f"{measure}_margin"] = _seed_matrix(part, "margin", seeds)
        cells = beta[(beta["suite_run_id"] == suite_run_id) & (beta["variant_id"] == variant_id)]
        # DA-RNN's diagonal is 0 on every seed by construction, not attention (as in
        # correctness_table and the mart interp_stability): left out of beta_std
        cells = cells[
            ~((cells["model_id"] == "darnn") & (cells["target_index"] == cells["source_index"]))
        ]
        cell_keys = ["target_index", "source_index", "lag"]
        cell_cube = {
            model_id: part.assign(lag=part["lag"].fillna(-1))
            .pivot_table(index=cell_keys, columns="seed", values="value", aggfunc="mean")
            .reindex(columns=seeds)
            .to_numpy(dtype=float)
            for model_id, part in cells.groupby("model_id")
        }
        weights = None
        if len(seeds) < 2:
            draws = []
        elif len(seeds) <= exact_max_seeds:
            draws, weights = exact_seed_draws(len(seeds))
        else:
            # seeded by the data's keys, not the suite run: a rerun draws the same resamples
            rng = stability_rng(seed, "interpretability", variant_id)
            draws = [rng.integers(0, len(seeds), len(seeds)) for _ in range(resamples)]
        for metric, rows in block.groupby("metric"):
            # every model's score is recomputed, so n_resamples_undefined counts the
            # resamples where it is undefined, as in the other suites; the kit re-rates only
            # the models with a published rating (stability_counts), so a near-uniform or
            # otherwise unrated one moves none of the others' resampled ratings
            models = list(rows["model_id"])
            resampled = [
                {m: _resampled_score(metric, m, pick, scores, cell_cube) for m in models}
                for pick in draws
            ]
            records += stability_records(
                {"suite_run_id": suite_run_id, "metric": metric, "variant_id": variant_id},
                rows,
                "model_id",
                resampled,
                levels,
                metric_rule(spec, metric),
                {"n_resamples": len(draws), "n_seeds": len(seeds)},
                interval=False,
                weights=weights,
            )
    keys = ["suite_run_id", "metric", "variant_id"]
    return stability_table(records, keys, "model_id", ["n_resamples", "n_seeds"], interval=False)


def _resampled_score(metric, model_id, pick, scores, cell_cube) -> float:
    """One model's ``metric`` recomputed on the seed columns ``pick`` (NaN if undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric in ("test_mse", "test_mse_cv"):
            wide = scores["test_mse"]
            if model_id not in wide.index:
                return float("nan")
            values = wide.loc[model_id].to_numpy(dtype=float)[pick]
            values = values[np.isfinite(values)]
            if metric == "test_mse":
                return float(values.mean()) if len(values) else float("nan")
            if len(values) < 2 or values.mean() <= 0:
                return float("nan")
            return float(values.std(ddof=1) / values.mean())
        if metric in scores:
            wide = scores[metric]
            if model_id not in wide.index:
                return float("nan")
            values = wide.loc[model_id].to_numpy(dtype=float)[pick]
            values = values[np.isfinite(values)]
            return float(values.mean()) if len(values) else float("nan")
        if metric == "beta_std":
            cube = cell_cube.get(model_id)
            if cube is None or len(pick) < 2:
                return float("nan")
            stds = np.nanstd(cube[:, pick], axis=1, ddof=1)
            return float(np.nanmean(stds)) if np.isfinite(stds).any() else float("nan")
    return float("nan")
