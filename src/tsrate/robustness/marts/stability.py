"""How stable the ratings are: a circular block bootstrap over window dates (the library
behind the dbt model ``rating_stability``).

Per run the ordered window dates are resampled in blocks
(tsrate.methods.ratings.date_multiplicities, one seed for every metric, so every metric sees the
same alternative histories) and each rated metric is recomputed per resample:

* accuracy (smape, mase, sign_accuracy): the mean over windows
  (tsrate.methods.ratings.block_bootstrap_ratings);
* wrs_industry / wrs_company: the Student t-tests of every pair re-run on the resampled
  windows (tsrate.methods.stability.wrs_resampled);
* ape_* / pie_*: the published estimator on the resampled windows: APE_m and PIE % of every
  treatment draw (var treatment_draws, the draws of perturbation_effects, held fixed) of
  every distribution, averaged over the draws, then the worst case over the confounder's
  distributions (tsrate.methods.stability.effects_resampled, mean_over_draws,
  aggregate_distributions).
  With the max aggregation only the `bootstrap_effect_distributions` distributions that
  were worst on the original data (by |APE_m| and by PIE %) are re-estimated per system,
  treatment and confounder (0 = all; exact whenever a confounder has no more).

The robustness metrics are resampled for every outcome of var robustness_outcomes (one
``outcome`` per row; each outcome's systems are those analysed on it, every window finite),
the accuracy metrics once (outcome null). raw_score and rating are those of the published
marts (robustness_scores, accuracy_scores: a score they leave unrated is not rated here);
every resampled metric is the published estimator, so with every multiplicity 1 it gives
the published score, and the interval describes that score. Resampled scores within
floating noise of 0 are 0, and so are interval ends (tsrate.methods.ratings.bootstrap_summary,
the rule of snap_to_zero).
The resamples are PAIRED (the same dates for every system of a run), so ``separable`` says
whether a system's score can be told apart from every other system's of its metric x
outcome x perturbation: not when the bootstrap interval of some difference includes 0
(tsrate.methods.separation.bootstrap_separation).
Tunables come from python_models/intermediate/int_ratings_bootstrapped.yml.
"""

import contextlib
import os
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from tsrate.methods.causal.distributions import CONTROL, confounder_column
from tsrate.methods.causal.effects import draw_matrix
from tsrate.methods.causal.estimators import DISTRIBUTION_AGGREGATIONS
from tsrate.methods.ratings import (
    BOOTSTRAP_COLUMNS,
    block_bootstrap_ratings,
    bootstrap_summary,
    date_multiplicities,
    too_few_dates,
    withhold_bootstrap,
)
from tsrate.methods.stability import (
    aggregate_distributions,
    date_positions,
    effects_resampled,
    wrs_resampled,
)
from tsrate.methods.wrs import WRS_ANALYSES, complete_systems
from tsrate.platform.marts_io import Units, outcome_grid

ACCURACY_METRICS = ["smape", "mase", "sign_accuracy"]
#: Threads that resample side by side (the work is numpy that releases the GIL): each
#: outcome's WRS, and parts of a perturbation set's distributions for the effects. While
#: they run, BLAS uses one thread per call (the threads already fill the cores; BLAS's own
#: threads would spin against them).
WORKERS = max(1, min(4, os.cpu_count() or 1))
AGGREGATIONS = DISTRIBUTION_AGGREGATIONS
COLUMNS = [
    "run_id",
    "metric",
    "outcome",
    *BOOTSTRAP_COLUMNS,
    "higher_is_better",
    "block_length",
    "bootstrap_seed",
    "confidence",
]

#: Column types of the table (stable even when it is empty).
TEXT = ["run_id", "metric", "outcome", "system_id", "perturbation_id"]
INTEGER = ["rating_level", "rating_levels", "n_resamples", "n_valid"]
INTEGER += ["block_length", "bootstrap_seed"]
NUMBER = ["raw_score", "ci_low", "ci_high", "share", "confidence"]
SCHEMA = {
    **dict.fromkeys(TEXT, "string"),
    **dict.fromkeys(INTEGER, "int64"),
    **dict.fromkeys(NUMBER, "float64"),
    "higher_is_better": "bool",
    "rating": "Int64",  # null where marts.ratings has none (lone or tied, no ideal)
    "separable": "boolean",  # null where the system has no valid resample
    "separation_reason": "string",
}


def _robustness_point(scores: pd.DataFrame, metric: str, keys: pd.DataFrame) -> np.ndarray:
    """The published raw score (robustness_scores) of every system x perturbation in keys."""
    published = scores.loc[scores["metric"] == metric].set_index(["system_id", "perturbation_id"])
    index = pd.MultiIndex.from_frame(keys[["system_id", "perturbation_id"]].astype(str))
    return published["raw_score"].reindex(index).to_numpy(dtype=float)


def _robustness_maximum(scores: pd.DataFrame, metric: str, keys: pd.DataFrame) -> np.ndarray:
    """The known worst value (WRS: max_score) of every system x perturbation in keys."""
    published = scores.loc[scores["metric"] == metric].set_index(["system_id", "perturbation_id"])
    index = pd.MultiIndex.from_frame(keys[["system_id", "perturbation_id"]].astype(str))
    return published["max_score"].reindex(index).to_numpy(dtype=float)


def _summaries(
    metric: str,
    keys: pd.DataFrame,
    point: np.ndarray,
    boot: np.ndarray,
    levels: int,
    confidence: float,
    maximum: np.ndarray | None = None,
) -> pd.DataFrame:
    """bootstrap_summary over the groups with a published (finite) point score; the rating
    rule of marts.ratings (ideal 0 for robustness metrics, WRS's max_score as worst value)."""
    keep = np.isfinite(point)
    keys = keys.loc[keep].reset_index(drop=True)
    worst = None if maximum is None else maximum[keep]
    label = {"metric": metric}
    out = bootstrap_summary(
        keys, point[keep], boot[:, keep], levels, confidence, ideal=0.0, maximum=worst, **label
    )
    out.insert(0, "metric", metric)
    return out


def wrs_stability(
    errors: pd.DataFrame,
    scores: pd.DataFrame,
    confidence_levels: pd.DataFrame,
    dates: np.ndarray,
    weights: np.ndarray,
    outcome: str,
    levels: int,
    confidence: float,
) -> list[pd.DataFrame]:
    """wrs_industry and wrs_company on every resample (the analyses of wrs_pairs)."""
    frames = []
    for analysis, (group_column, within_column) in WRS_ANALYSES.items():
        keys, _, boot = wrs_resampled(
            errors, group_column, confidence_levels, within_column, dates, weights, outcome
        )
        metric = f"wrs_{analysis}"
        point = _robustness_point(scores, metric, keys)
        maximum = _robustness_maximum(scores, metric, keys)
        frames.append(_summaries(metric, keys, point, boot, levels, confidence, maximum))
    return frames


def _worst_distributions(
    effects: pd.DataFrame,
    run_id: str,
    system_ids: list[str],
    distribution_ids: pd.Series,
    treatments: list[str],
    top_k: int,
) -> np.ndarray:
    """(systems x distributions x treatments) mask of the distributions to resample: per
    system, treatment and confounder the ``top_k`` with the largest |APE_m| and the
    ``top_k`` with the largest PIE % on the original data (perturbation_effects); every
    distribution when ``top_k`` is 0."""
    shape = (len(system_ids), len(distribution_ids), len(treatments))
    if top_k <= 0:
        return np.ones(shape, dtype=bool)
    selected = np.zeros(shape, dtype=bool)
    run = effects.loc[effects["run_id"].astype(str) == run_id]
    system_of = {s: i for i, s in enumerate(system_ids)}
    distribution_of = {d: i for i, d in enumerate(distribution_ids)}
    treatment_of = {t: i for i, t in enumerate(treatments)}
    run = run.loc[
        run["system_id"].isin(system_of)
        & run["distribution_id"].isin(distribution_of)
        & run["perturbation_id"].isin(treatment_of)
    ].assign(abs_ape=lambda f: f["ape_matched"].abs())
    keys = ["system_id", "perturbation_id", "confounder"]
    for column in ("abs_ape", "pie_percent"):
        ranked = run.sort_values(
            [*keys, column, "distribution_id"], ascending=[True] * 3 + [False, True]
        )
        top = ranked.groupby(keys, sort=False).head(top_k)
        selected[
            top["system_id"].map(system_of).to_numpy(),
            top["distribution_id"].map(distribution_of).to_numpy(),
            top["perturbation_id"].map(treatment_of).to_numpy(),
        ] = True
    return selected


def draw_strata(units: Units, confounders: np.ndarray, strata: str) -> list[np.ndarray]:
    """The stratum code of every unit for each distribution, as ``perturbation_effects``
    matches it (var ``effect_strata``: the distribution's confounder, or the company)."""
    return [
        units.strata["ticker" if strata == "company" else confounder_column(c)] for c in confounders
    ]


def mean_over_draws(values: np.ndarray, n_draws: int) -> np.ndarray:
    """(systems x resamples x (draws x distributions) x treatments) -> the mean over draws
    (systems x resamples x distributions x treatments), skipping draws left out (NaN: an
    empty arm), as ``perturbation_effects`` publishes the mean of the draws that estimate."""
    n_sys, n_res, rows, n_treat = values.shape
    per_draw = values.reshape(n_sys, n_res, n_draws, rows // n_draws, n_treat)
    finite = np.isfinite(per_draw)
    count = finite.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(finite, per_draw, 0.0).sum(axis=2) / np.where(count > 0, count, np.nan)


def resampled_outcomes(settings: dict) -> list[str]:
    """The robustness outcomes whose ratings are resampled: var ``robustness_outcomes`` (a
    list, or the space-separated text a dbt config renders from it) with the default view's
    var ``robustness_outcome`` among them; without the list, the default alone."""
    default = str(settings["robustness_outcome"])
    listed = settings.get("robustness_outcomes")
    names = listed.split() if isinstance(listed, str) else [str(o) for o in listed or []]
    return names if default in names else [default, *names]


def effect_resamples(
    errors: pd.DataFrame,
    effects: pd.DataFrame,
    top_k: int,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    run_id: str,
    dates: np.ndarray,
    weights: np.ndarray,
    settings: dict,
    pool: Executor | None = None,
) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """ape_* and pie_* on every resample (metric -> (keys: system_id, perturbation_id,
    outcome; resamples x keys)), by the estimator ``perturbation_effect_scores`` publishes,
    for every outcome of :func:`resampled_outcomes`: every one of the var ``treatment_draws``
    treatment draws of every distribution (:func:`tsrate.methods.causal.effects.draw_matrix`,
    seeded by var ``causal_seed`` as ``perturbation_effects``), matched on the strata of var
    ``effect_strata``, is re-estimated on the resampled windows; APE_m and PIE % are averaged
    over the draws that estimate (:func:`mean_over_draws`), then the worst case over each
    confounder's distributions is taken per resample. With every multiplicity 1 this is the
    published score (before floating noise is snapped to 0).

    As ``perturbation_effects``, a system is estimated on an outcome only when every one of
    its windows has a finite value of it (a system without quantile forecasts has no wql):
    no key otherwise. The outcomes of a perturbation set share the resample weights, the
    units, the treatment draws and their strata, so every (system, outcome) grid of the set
    is estimated in one pass of :func:`tsrate.methods.stability.effects_resampled`: what
    depends on the counts alone (the weighted counts, the matching's sort of the strata and
    its nearest strata) is worked out once for all outcomes, and each outcome's numbers are
    bit for bit those of a pass over that outcome alone. The pass is split into parts of
    the set's distributions (every draw of each; :func:`_distribution_parts`), which run on
    ``pool``'s threads when one is given (the same numbers: each distribution is computed
    alone); a part holds its distributions' draw means only. The worst distributions (var
    ``bootstrap_effect_distributions``) are chosen per outcome from that outcome's published
    means."""
    outcomes = resampled_outcomes(settings)
    estimand = str(settings["matching_estimand"])
    aggregation = str(settings["distribution_aggregation"])
    seed, n_draws = int(settings["causal_seed"]), int(settings["treatment_draws"])
    strata_rule = str(settings["effect_strata"])
    ape_how, pie_how = AGGREGATIONS[aggregation]
    if aggregation != "max":
        top_k = 0  # a mean needs every distribution
    usable = perturbation_sets.loc[
        (perturbation_sets["run_id"] == run_id) & perturbation_sets["has_effects"].astype(bool)
    ]
    units = Units(errors)
    day_of_unit = date_positions(units.days[units.day_of_unit], dates)
    sets = []
    for perturbation_set, systems in usable.groupby("perturbation_set", sort=True):
        labels = sorted(str(perturbation_set).split())
        meta, matrix = draw_matrix(units.frame, distributions, labels, seed, n_draws)
        if meta.empty:
            continue
        confounders = meta["confounder"].astype(str).replace({"ticker": "company"}).to_numpy()
        strata = draw_strata(units, confounders, strata_rule) * n_draws
        jobs, grids = [], []
        for system_id in sorted(systems["system_id"].astype(str)):
            rows = errors.loc[errors["system_id"] == system_id]
            for outcome in outcomes:
                finite = pd.to_numeric(rows[outcome], errors="coerce").to_numpy(dtype=float)
                if not np.isfinite(finite).all():
                    continue  # not analysed on this outcome: perturbation_effects has no row
                # column-major: effects_resampled reads a label's units side by side (its
                # transpose is then a view, not a copy per part)
                grid = outcome_grid(rows, units, labels, outcome, system_id)
                grids.append(np.asfortranarray(grid))
                jobs.append((system_id, outcome))
        if not jobs:
            continue
        treatments = [label for label in labels if label != CONTROL]
        # each outcome's grids (those of the systems analysed on it)
        of_outcome = {o: [i for i, (_, job) in enumerate(jobs) if job == o] for o in outcomes}
        selected = np.zeros((len(jobs), len(meta), len(treatments)), dtype=bool)
        for outcome, at in of_outcome.items():
            if at:
                selected[at] = _worst_distributions(
                    effects.loc[effects["outcome"] == outcome],
                    run_id,
                    [jobs[i][0] for i in at],
                    meta["distribution_id"].astype(str),
                    treatments,
                    top_k,
                )
        # the same distributions in every draw; a draw without a control window estimates
        # nothing (perturbation_effects leaves it out)
        selected = np.tile(selected, (1, n_draws, 1))
        selected &= (matrix == labels.index(CONTROL)).any(axis=1)[None, :, None]
        parts = []
        for chosen in _distribution_parts(selected, len(meta), n_draws, WORKERS if pool else 1):
            # every draw of the part's distributions (the rows are draw-major)
            at = (np.arange(n_draws)[:, None] * len(meta) + chosen[None, :]).ravel()
            task = (
                grids,
                labels,
                matrix[at],
                [strata[i] for i in at],
                day_of_unit,
                weights,
                estimand,
                selected[:, at],
                n_draws,
            )
            future = pool.submit(_effect_part, *task) if pool else _done(_effect_part(*task))
            parts.append((chosen, future))
        sets.append((jobs, of_outcome, len(meta), treatments, confounders, parts))
    collected: dict[str, list[tuple[pd.DataFrame, np.ndarray]]] = {}
    for jobs, of_outcome, n_distributions, treatments, confounders, parts in sets:
        shape = (len(jobs), weights.shape[0], n_distributions, len(treatments))
        ape, pie = np.full(shape, np.nan), np.full(shape, np.nan)
        for chosen, done in parts:
            ape[:, :, chosen], pie[:, :, chosen] = done.result()
        rule = (confounders, ape_how, pie_how)
        for outcome, at in of_outcome.items():
            if not at:
                continue
            systems = [(jobs[i][0], outcome) for i in at]
            for metric, keys, boot in _worst_cases(ape[at], pie[at], treatments, rule, systems):
                collected.setdefault(metric, []).append((keys, boot))
    return {
        metric: (
            pd.concat([k for k, _ in parts], ignore_index=True),
            np.concatenate([b for _, b in parts], axis=1),
        )
        for metric, parts in sorted(collected.items())
    }


def _distribution_parts(
    selected: np.ndarray, n_distributions: int, n_draws: int, workers: int
) -> list[np.ndarray]:
    """The distributions in contiguous parts of about equal work (the selected (system,
    draw, treatment) entries each holds), two parts a worker, none empty of work."""
    work = selected.reshape(selected.shape[0], n_draws, n_distributions, -1).sum(axis=(0, 1, 3))
    todo = np.flatnonzero(work)
    if todo.size == 0:
        return []
    n_parts = min(todo.size, 2 * workers if workers > 1 else 1)
    share = np.cumsum(work[todo]) / work[todo].sum()
    part = np.minimum((share * n_parts - 1e-9).astype(np.int64), n_parts - 1)
    return [todo[part == k] for k in range(n_parts) if (part == k).any()]


def _done(value: object) -> Future:
    """A finished future holding ``value`` (a pass run without a pool)."""
    future: Future = Future()
    future.set_result(value)
    return future


def _effect_part(
    grids: list[np.ndarray],
    labels: list[str],
    matrix: np.ndarray,
    strata: list[np.ndarray],
    day_of_unit: np.ndarray,
    weights: np.ndarray,
    estimand: str,
    selected: np.ndarray,
    n_draws: int,
) -> tuple[np.ndarray, np.ndarray]:
    """APE_m and PIE % of every (system, outcome) grid on every resample for a part of a
    perturbation set's distributions (``matrix``: every draw of them, draw-major), averaged
    over the draws: (grids x resamples x the part's distributions x treatments) each."""
    _, ape, pie = effects_resampled(
        grids, labels, matrix, strata, day_of_unit, weights, CONTROL, estimand, selected=selected
    )
    return mean_over_draws(ape, n_draws), mean_over_draws(pie, n_draws)


def _worst_cases(
    ape: np.ndarray,
    pie: np.ndarray,
    treatments: list[str],
    rule: tuple[np.ndarray, str, str],
    systems: list[tuple[str, str]],
) -> list[tuple[str, pd.DataFrame, np.ndarray]]:
    """One outcome's (metric, keys, resamples x keys) per measure and confounder from its
    systems' draw means (``systems``: (system_id, outcome) per row of ``ape`` and ``pie``).
    ``rule``: every distribution's confounder and the aggregations of APE_m and PIE % over
    a confounder's distributions."""
    confounders, ape_how, pie_how = rule
    keys = pd.DataFrame(
        [(system_id, t, outcome) for system_id, outcome in systems for t in treatments],
        columns=["system_id", "perturbation_id", "outcome"],
    )
    if ape.shape[1] == 0:  # no resample drawn (a withheld run): the keys, no values
        names = [f"{m}_{c}" for c in sorted(set(confounders)) for m in ("ape", "pie")]
        return [(name, keys, np.empty((0, len(keys)))) for name in names]
    out = []
    for confounder in sorted(set(confounders)):
        chosen = confounders == confounder
        for measure, values, how in (("ape", ape, ape_how), ("pie", pie, pie_how)):
            # (systems x resamples x distributions x treatments) -> (resamples x keys)
            worst = aggregate_distributions(np.moveaxis(values[:, :, chosen], 2, -1), how)
            boot = np.moveaxis(worst, 1, 0).reshape(values.shape[1], -1)
            out.append((f"{measure}_{confounder}", keys, boot))
    return out


def effect_stability(
    errors: pd.DataFrame,
    effects: pd.DataFrame,
    top_k: int,
    scores: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    run_id: str,
    dates: np.ndarray,
    weights: np.ndarray,
    settings: dict,
    levels: int,
    confidence: float,
    pool: Executor | None = None,
) -> list[pd.DataFrame]:
    """The bootstrap summaries of :func:`effect_resamples` around the published scores,
    each outcome rated and separated on its own (``scores``: robustness_scores of every
    outcome)."""
    resamples = effect_resamples(
        errors,
        effects,
        top_k,
        perturbation_sets,
        distributions,
        run_id,
        dates,
        weights,
        settings,
        pool,
    )
    frames = []
    for metric, (keys, boot) in resamples.items():
        for outcome in sorted(keys["outcome"].unique()):
            cols = (keys["outcome"] == outcome).to_numpy()
            at = keys.loc[cols, ["system_id", "perturbation_id"]].reset_index(drop=True)
            point = _robustness_point(scores.loc[scores["outcome"] == outcome], metric, at)
            frame = _summaries(metric, at, point, boot[:, cols], levels, confidence)
            frame.insert(1, "outcome", outcome)
            frames.append(frame)
    return frames


def _unrated_accuracy(errors: pd.DataFrame, published: pd.DataFrame, metric: str) -> list:
    """The (system_id, perturbation_id) pairs of ``errors`` that accuracy_scores (the run's
    rows, ``published``) does not rate on ``metric``: no row, or a mean that is null or not a
    finite number (a NaN among the windows makes the published mean NaN)."""
    rows = published.loc[published["metric"] == metric]
    finite = np.isfinite(pd.to_numeric(rows["mean"], errors="coerce").to_numpy(dtype=float))
    rated = set(
        zip(
            rows["system_id"].astype(str)[finite],
            rows["perturbation_id"].astype(str)[finite],
            strict=True,
        )
    )
    present = errors.groupby(["system_id", "perturbation_id"], observed=True, sort=True).size()
    return [(s, p) for s, p in present.index if (str(s), str(p)) not in rated]


def accuracy_stability(
    errors: pd.DataFrame,
    accuracy_scores: pd.DataFrame,
    levels: int,
    n_resamples: int,
    block_length: int,
    seed: int,
    confidence: float,
) -> list[pd.DataFrame]:
    """The accuracy metrics' bootstrap (the mean over windows) of one run's ``errors``, for
    the systems x perturbations accuracy_scores rates: one whose published mean is undefined
    (no window with a value) or NaN is not rated there, so it is neither rated nor compared
    here -- its values are left out, its dates kept (the run's histories)."""
    frames = []
    for metric in ACCURACY_METRICS:
        values = errors[["system_id", "perturbation_id", "window_end_date", metric]]
        values = values.rename(columns={metric: "value"})
        unrated = _unrated_accuracy(values, accuracy_scores, metric)
        if unrated:
            pairs = pd.MultiIndex.from_arrays([values["system_id"], values["perturbation_id"]])
            values = values.assign(value=values["value"].mask(pairs.isin(unrated)))
        if not np.isfinite(values["value"].to_numpy(dtype=float)).any():
            continue  # nothing the published mart rates
        # accuracy metrics have no ideal in marts.ratings: a lone or all-tied group is
        # not rated (rating null), so not here either
        boot = block_bootstrap_ratings(
            values,
            levels,
            n_resamples,
            block_length,
            seed,
            "mean",
            confidence=confidence,
            ideal=None,
            # the published rule's direction (marts.ratings): sign accuracy's best is L
            higher_is_better=metric == "sign_accuracy",
            metric=metric,
        )
        boot.insert(0, "metric", metric)
        boot.insert(1, "outcome", None)
        frames.append(boot)
    return frames


def _run_stability(
    run_id: str,
    errors: pd.DataFrame,
    robustness_scores: pd.DataFrame,
    effects: pd.DataFrame,
    confidence_levels: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    settings: dict,
    accuracy_scores: pd.DataFrame,
    pool: Executor,
) -> list[pd.DataFrame]:
    """:func:`rating_stability`'s frames of one run: the accuracy metrics, then WRS and the
    effects of every outcome, the outcomes' passes on ``pool``'s threads (the WRS of each
    outcome one task, submitted before the effects are prepared)."""
    levels = int(settings["rating_levels"])
    n_resamples = int(settings["bootstrap_resamples"])
    seed = int(settings["bootstrap_seed"])
    confidence = float(settings["bootstrap_confidence"])
    dates = np.unique(errors["window_end_date"].to_numpy().astype("datetime64[D]"))
    block = int(settings["bootstrap_block_length"])
    withheld = too_few_dates(dates.size, block)
    if withheld is None:
        weights = date_multiplicities(dates.size, block, n_resamples, seed)
    else:  # no resample drawn (0 x dates): the point scores and ratings only
        weights = np.zeros((0, dates.size))
    published = accuracy_scores.loc[accuracy_scores["run_id"].astype(str) == run_id]
    run_frames = accuracy_stability(errors, published, levels, n_resamples, block, seed, confidence)
    scores = robustness_scores.loc[robustness_scores["run_id"] == run_id]
    errors = errors.assign(
        system_id=errors["system_id"].astype(str),
        perturbation_id=errors["perturbation_id"].astype(str),
    )
    wrs_passes = []
    columns = ["system_id", "perturbation_id", "window_end_date", "ticker", "industry"]
    for outcome in resampled_outcomes(settings):
        # a system is compared on an outcome only over all of its windows (wrs_pairs); each
        # task gets its own frame of the columns it reads (threads never share one)
        complete = pd.DataFrame({c: errors[c] for c in dict.fromkeys([*columns, outcome])})
        kept = complete_systems(errors, outcome)
        if not kept.all():
            complete = complete.loc[kept]
        if complete.empty:
            continue
        at = scores.loc[scores["outcome"] == outcome]
        wrs_passes.append(
            (
                outcome,
                pool.submit(
                    wrs_stability,
                    complete,
                    at,
                    confidence_levels,
                    dates,
                    weights,
                    outcome,
                    levels,
                    confidence,
                ),
            )
        )
    effect_frames = effect_stability(
        errors,
        effects,
        int(settings["bootstrap_effect_distributions"]),
        scores,
        perturbation_sets,
        distributions,
        run_id,
        dates,
        weights,
        settings,
        levels,
        confidence,
        pool,
    )
    for outcome, done in wrs_passes:
        for boot in done.result():
            boot.insert(1, "outcome", outcome)
            run_frames.append(boot)
    run_frames += effect_frames
    if withheld is not None:
        run_frames = [withhold_bootstrap(boot, withheld) for boot in run_frames]
    for boot in run_frames:
        boot.insert(0, "run_id", run_id)
        boot["higher_is_better"] = boot["metric"] == "sign_accuracy"
        boot["block_length"] = block
        boot["bootstrap_seed"] = seed
        boot["confidence"] = confidence
    return run_frames


def rating_stability(
    window_errors: pd.DataFrame,
    robustness_scores: pd.DataFrame,
    effects: pd.DataFrame,
    confidence_levels: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    settings: dict,
    *,
    accuracy_scores: pd.DataFrame,
) -> pd.DataFrame:
    """One row per run, metric, outcome, system, perturbation and rating level.

    Robustness metrics are resampled for every outcome of :func:`resampled_outcomes`
    (``robustness_scores`` and ``effects``: the published rows of every outcome), each
    outcome's systems only those analysed on it (every window finite, as the published
    scores); accuracy metrics, which have no outcome (null), once. Every metric and outcome
    of a run uses the same seed and the same ordered window dates, hence the same resampled
    histories. A run with fewer than two blocks of dates is not resampled: its point scores
    and ratings only, with null interval, share and separable and the reason
    (tsrate.methods.ratings.too_few_dates) as separation_reason.
    """
    aggregation = str(settings["distribution_aggregation"])
    if aggregation not in AGGREGATIONS:
        raise ValueError(
            f"distribution_aggregation must be one of {sorted(AGGREGATIONS)} (got {aggregation!r})"
        )
    frames = []
    one_blas_thread = (
        threadpool_limits(limits=1, user_api="blas") if WORKERS > 1 else contextlib.nullcontext()
    )
    pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="rating_stability")
    try:
        with one_blas_thread:
            for run_id, errors in window_errors.groupby("run_id", sort=True, observed=True):
                frames += _run_stability(
                    str(run_id),
                    errors,
                    robustness_scores,
                    effects,
                    confidence_levels,
                    perturbation_sets,
                    distributions,
                    settings,
                    accuracy_scores,
                    pool,
                )
    finally:
        # on an error the passes still queued are dropped (it is raised without them)
        pool.shutdown(wait=True, cancel_futures=True)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    out = pd.concat(frames, ignore_index=True)[COLUMNS]
    out["rating"] = out["rating"].astype("Int64").mask(out["rating"] == 0)
    out = out.astype(SCHEMA)
    return out.sort_values(
        ["run_id", "metric", "outcome", "perturbation_id", "system_id", "rating_level"],
        kind="stable",
    ).reset_index(drop=True)


SETTINGS = [
    "rating_levels",
    "bootstrap_resamples",
    "bootstrap_block_length",
    "bootstrap_seed",
    "bootstrap_confidence",
    "robustness_outcome",
    "robustness_outcomes",
    "matching_estimand",
    "distribution_aggregation",
    "bootstrap_effect_distributions",
    "causal_seed",
    "treatment_draws",
    "effect_strata",
]
