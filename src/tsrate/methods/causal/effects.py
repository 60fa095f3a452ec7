"""APE and PIE of a whole study: repeated confounded draws, both outcomes, oracle beside.

The library behind the dbt models ``perturbation_effects`` and ``perturbation_effect_scores``
(paper eqs. 2-3, Algorithm 3; DESIGN.md method decisions).

Conventions
-----------
* Distributions come from :func:`tsrate.methods.causal.distributions.study_distributions` (derived from the study
  by default). Every distribution's treatment draw is repeated ``draws`` times (var
  ``treatment_draws``): draw r uses :func:`tsrate.methods.causal.distributions.draw_seed` ``(seed, id, r)``, so draw 0
  is the paper's single draw (the one stored in ``treatment_assignments``) and
  ``draws = 1`` reproduces it exactly.
* Per draw, APE_o, APE_m and PIE % are estimated (:func:`tsrate.methods.causal.estimators.grid_perturbation_effects`);
  the published value is their MEAN over draws and the spread their sample standard
  deviation over draws (ddof = 1; NaN for one draw). PIE % is averaged per draw
  (mean of | |APE_o,r| - |APE_m,r| | x 100), not recomputed from the mean APEs. The per-draw
  rows averaged can be kept (``draw_rows``) and published beside the means
  (:func:`with_draws`; the mart ``perturbation_effect_draws``).
* A draw that leaves an arm empty (no window drawn the control P0, or none drawn the
  treatment) cannot estimate that effect: it is LEFT OUT of that distribution's mean for
  that treatment, never an error. ``n_draws`` counts the draws used and
  ``n_draws_left_out`` those left out (``draws = n_draws + n_draws_left_out``); a
  (distribution, treatment) whose every draw is left out has no row. Leaving a draw out
  conditions the mean on both arms being non-empty; where no draw is empty (the default
  study) the estimate is exactly that of every draw.
* The oracle (true effect: every window ran under every perturbation) is kept beside the
  estimate: ``ape_oracle`` (mean over draws; the ATE oracle is the same in every draw) and
  ``matching_error = ape_matched - ape_oracle``.
* Values within floating noise of 0 (|x| <= 1e-12 x max(1, largest |x| of the column for the
  system and outcome, or of the score's metric x perturbation x outcome)) are stored as 0
  (:func:`tsrate.methods.ratings.snap_to_zero`).
* Outcomes: each name is a window_errors column (``max_abs_residual`` = the paper's R^max in
  price units; ``relative_max_abs_residual`` = R^max divided by the window's last clean
  context value; ``wql`` = the window's weighted quantile loss and ``coverage_error_80`` =
  |coverage of the 80 % interval - 0.8|, both lower is better and null without quantile
  forecasts). All outcomes are computed in one pass, one row per outcome. A system is
  analysed on an outcome only when every one of its windows has a finite value of it;
  otherwise it has no row for that outcome (robustness_scores then gives it a null score
  and the reason), never an estimate over part of its windows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from tsrate.methods.causal.distributions import CONTROL, confounder_column, treatment_draws
from tsrate.methods.causal.estimators import (
    DISTRIBUTION_AGGREGATIONS,
    EFFECT_COLUMNS,
    grid_perturbation_effects,
    grid_perturbation_effects_many,
    worst_case,
)
from tsrate.methods.ratings import snap_to_zero
from tsrate.platform.marts_io import Units, outcome_grid

#: Threads that estimate a perturbation set's grids (systems x outcomes) side by side (the
#: work is numpy that mostly releases the GIL).
EFFECT_WORKERS = max(1, min(4, os.cpu_count() or 1))

__all__ = [
    "DRAW_COLUMNS",
    "EFFECTS_COLUMNS",
    "EFFECTS_SCHEMA",
    "SCORE_COLUMNS",
    "SCORE_SCHEMA",
    "draw_matrix",
    "effect_means",
    "study_effects",
    "with_draws",
    "summarise_draws",
    "effect_scores",
]

#: what names a row's system and confounder distribution, in every frame of this module
_LABELS = ["run_id", "system_id", "distribution_id", "confounder", "favored_value"]
_LABELS += ["perturbation_set"]
EFFECTS_COLUMNS = [
    *_LABELS,
    *EFFECT_COLUMNS,  # what tsrate.methods.causal.estimators.perturbation_effects returns per distribution
    "outcome",
    "n_draws",
    "ape_observational_sd",
    "ape_matched_sd",
    "pie_percent_sd",
    "n_draws_left_out",
]
_TEXT = [*_LABELS, "perturbation_id", "estimand", "outcome"]
_INTEGER = ["n_treated", "n_control", "strata_without_overlap", "n_strata", "n_draws"]
_INTEGER += ["n_draws_left_out"]
_NUMBER = ["ape_observational", "ape_matched", "ape_oracle", "matching_error", "pie_percent"]
_NUMBER += ["ape_observational_sd", "ape_matched_sd", "pie_percent_sd"]
EFFECTS_SCHEMA = {
    **dict.fromkeys(_TEXT, "string"),
    **dict.fromkeys(_INTEGER, "int64"),
    **dict.fromkeys(_NUMBER, "float64"),
}
#: One row per draw of a :func:`study_effects` row (``draw`` = r of
#: :func:`tsrate.methods.causal.distributions.draw_seed`): the very values its mean averages.
DRAW_COLUMNS = [
    *_LABELS,
    "perturbation_id",
    "outcome",
    "draw",
    *EFFECT_COLUMNS[1:],
]


def draw_matrix(
    units: pd.DataFrame,
    distributions: pd.DataFrame,
    labels: Sequence[str],
    seed: int,
    draws: int,
) -> tuple[pd.DataFrame, np.ndarray]:
    """(distributions, (draws x distributions) x units matrix of codes into ``labels``).

    ``units``: ticker, industry, window_end_date sorted by (ticker, window_end_date) -- the
    order of :class:`tsrate.platform.marts_io.Units` and of :func:`tsrate.methods.causal.distributions.treatment_draws`.
    Row ``r * D + d`` holds draw r of distribution d (distributions in id order; those whose
    favoured value matches no unit are dropped).
    """
    draws = int(draws)
    if draws < 1:
        raise ValueError(f"treatment_draws must be an integer >= 1 (got {draws})")
    labels = [str(p) for p in labels]
    rows: list[np.ndarray] = []
    meta: list[dict] = []
    for r in range(draws):
        drawn = treatment_draws(units, distributions, labels, seed, missing_favored="drop", draw=r)
        to_label = np.array([labels.index(str(p)) for p in drawn.perturbations], dtype=np.int8)
        for draw in drawn.draws:
            rows.append(to_label[draw.codes])
            if r == 0:
                meta.append(draw.distribution)
    frame = pd.DataFrame.from_records(meta, columns=list(distributions.columns))
    if not rows:
        return frame, np.zeros((0, len(units)), dtype=np.int8)
    return frame.reset_index(drop=True), np.vstack(rows)


def summarise_draws(
    per_draw: pd.DataFrame, n_distributions: int, draws: int | None = None
) -> pd.DataFrame:
    """Mean and spread over draws of :func:`grid_perturbation_effects` rows.

    ``per_draw`` has a ``draw`` column numbering rows ``r * n_distributions + d``. Returns
    one row per (distribution index ``d``, perturbation_id) with the means (counts rounded
    to integers), ``*_sd`` (sample standard deviation, ddof = 1; NaN for one draw), the max
    of the overlap counts, ``n_draws`` (draws with both arms) and ``n_draws_left_out``
    (``draws - n_draws``: draws of the distribution without this treatment's row because an
    arm was empty; 0 when ``draws`` is None).
    """
    frame = per_draw.copy()
    frame["d"] = frame["draw"] % n_distributions
    grouped = frame.groupby(["d", "perturbation_id"], sort=True)
    out = grouped[
        ["ape_observational", "ape_matched", "ape_oracle", "matching_error", "pie_percent"]
    ].mean()
    for column in ("n_treated", "n_control"):
        out[column] = grouped[column].mean().round().astype("int64")
    for column in ("strata_without_overlap", "n_strata"):
        out[column] = grouped[column].max()
    out["estimand"] = grouped["estimand"].first()
    out["n_draws"] = grouped.size().astype("int64")
    left_out = 0 if draws is None else int(draws) - out["n_draws"]
    out["n_draws_left_out"] = pd.Series(left_out, index=out.index).astype("int64")
    for column in ("ape_observational", "ape_matched", "pie_percent"):
        out[f"{column}_sd"] = grouped[column].std(ddof=1)
    # one draw: the mean IS that draw (bit for bit), as the paper's single draw
    return out.reset_index()


def _draw_frame(
    per_draw: pd.DataFrame,
    meta: pd.DataFrame,
    n_distributions: int,
    run_id: str,
    system_id: str,
    perturbation_set: str,
    outcome: str,
) -> pd.DataFrame:
    """:data:`DRAW_COLUMNS` from :func:`grid_perturbation_effects` rows numbered
    ``r * n_distributions + d`` (the rows :func:`summarise_draws` averages)."""
    code = per_draw["draw"].to_numpy()
    out = per_draw.copy()
    out["draw"] = code // n_distributions
    d = code % n_distributions
    for column in ("distribution_id", "confounder", "favored_value"):
        out[column] = meta[column].astype(str).to_numpy()[d]
    out["run_id"], out["system_id"] = run_id, system_id
    out["perturbation_set"], out["outcome"] = perturbation_set, outcome
    return out[DRAW_COLUMNS]


def with_draws(effects: pd.DataFrame, draw_rows: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """One frame for one dbt Python model: the :func:`study_effects` rows (``draw`` null)
    followed by the per-draw rows it averaged (``draw`` = r; the mean-only columns n_draws,
    *_sd and n_draws_left_out null). :func:`effect_means` takes the means back out."""
    means = effects.assign(draw=pd.NA)
    frames = [means, *(f for f in draw_rows if not f.empty)]
    out = pd.concat(frames, ignore_index=True)[[*EFFECTS_COLUMNS, "draw"]]
    keys = ["run_id", "system_id", "outcome", "distribution_id", "perturbation_id"]
    out = out.sort_values([*keys, "draw"], kind="stable", na_position="first")
    schema = {k: ("Int64" if v == "int64" else v) for k, v in EFFECTS_SCHEMA.items()}
    return out.reset_index(drop=True).astype(schema | {"draw": "Int64"})


def effect_means(rows: pd.DataFrame) -> pd.DataFrame:
    """The :func:`study_effects` rows of a :func:`with_draws` frame (all rows of a frame
    without ``draw``), as :data:`EFFECTS_SCHEMA`."""
    if "draw" not in rows.columns:
        return rows
    means = rows.loc[rows["draw"].isna()].drop(columns="draw").reset_index(drop=True)
    return means.astype(EFFECTS_SCHEMA)


def _missing_windows(grid: np.ndarray, units: Units, labels: list[str]) -> str:
    """For an error message: which tickers a system has no window row for, per perturbation
    of its set (its grid's NaN cells), with the usual cause; empty when it has them all."""
    parts = []
    for column, label in enumerate(labels):
        absent = np.isnan(grid[:, column])
        if absent.any():
            tickers = sorted(set(units.frame.loc[absent, "ticker"].astype(str)))
            parts.append(f"{label}: {', '.join(tickers)}")
    if not parts:
        return ""
    return (
        f"; it has no windows of ticker(s) {'; '.join(parts)} (every system is rated on every "
        "window of the study: a prediction file of some tickers? import it again with every "
        "ticker of the study)"
    )


def _effects_in_threads(
    grids: list[np.ndarray],
    labels: list[str],
    assigned: np.ndarray,
    strata: list[np.ndarray],
    estimand: str,
    outcomes: list[str],
) -> list[pd.DataFrame]:
    """:func:`grid_perturbation_effects_many` of every grid (one frame per grid, in order),
    the grids split into up to :data:`EFFECT_WORKERS` runs estimated on as many threads:
    each grid's numbers are computed alone (the shared per-draw counts are recomputed per
    run), so they are those of one call, bit for bit."""
    parts = min(EFFECT_WORKERS, len(grids))
    if parts <= 1:
        return grid_perturbation_effects_many(
            grids, labels, assigned, strata, CONTROL, estimand, outcomes=outcomes
        )
    cuts = np.linspace(0, len(grids), parts + 1).round().astype(int).tolist()
    with ThreadPoolExecutor(parts, thread_name_prefix="study_effects") as pool:
        runs = [
            pool.submit(
                grid_perturbation_effects_many,
                grids[start:stop],
                labels,
                assigned,
                strata,
                CONTROL,
                estimand,
                outcomes=outcomes[start:stop],
            )
            for start, stop in zip(cuts[:-1], cuts[1:], strict=True)
        ]
        return [frame for run in runs for frame in run.result()]


def study_effects(
    window_errors: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    seed: int,
    *,
    draws: int = 1,
    estimand: str = "ATE",
    outcomes: Sequence[str] = ("max_abs_residual",),
    strata: str = "confounder",
    draw_rows: list[pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """:data:`EFFECTS_COLUMNS`: one row per run, system, distribution, treatment and outcome.

    ``window_errors``: run_id, system_id, ticker, industry, window_end_date, perturbation_id
    and every column named in ``outcomes``; ``perturbation_sets``: system_perturbation_sets
    (run_id, system_id, perturbation_set, has_effects); ``distributions``:
    :data:`tsrate.methods.causal.distributions.DISTRIBUTION_COLUMNS`. Each system's windows get the perturbation
    drawn for its perturbation set, ``draws`` times (see the module conventions).

    ``strata`` (var ``effect_strata``): what APE_m matches on. ``"confounder"`` (default, the
    paper's): the distribution's own confounder (industry or company). ``"company"`` -- a
    PRECISION OPTION, not the paper's estimator: every distribution is matched on the company.
    Valid because the draw's probabilities depend on the industry or company only, so they are
    constant within a company; it removes the between-company outcome differences that make
    the industry-stratified estimate noisy. For company distributions nothing changes.

    ``draw_rows``: when a list, the per-draw rows each mean is taken over are appended to it
    (:data:`DRAW_COLUMNS` frames, as estimated: not snapped to 0), for :func:`with_draws`.
    """
    if strata not in {"confounder", "company"}:
        raise ValueError(f"effect_strata must be 'confounder' or 'company' (got {strata!r})")
    outcomes = list(dict.fromkeys(str(o) for o in outcomes))
    if not outcomes:
        raise ValueError("need at least one outcome")
    missing = set(outcomes) - set(window_errors.columns)
    if missing:
        raise ValueError(f"window_errors lacks outcome columns {sorted(missing)}")
    frames = []
    usable = perturbation_sets.loc[perturbation_sets["has_effects"].astype(bool)]
    for run_id, run_sets in usable.groupby("run_id", sort=True):
        errors = window_errors.loc[window_errors["run_id"].astype(str) == str(run_id)]
        units = Units(errors)
        for perturbation_set, systems in run_sets.groupby("perturbation_set", sort=True):
            labels = sorted(str(perturbation_set).split())
            meta, matrix = draw_matrix(units.frame, distributions, labels, seed, draws)
            if meta.empty:
                continue
            n_dist = len(meta)
            codes = []
            for confounder in meta["confounder"]:
                column = "ticker" if strata == "company" else confounder_column(str(confounder))
                if column not in units.strata:
                    raise ValueError(f"run {run_id}: unknown confounder {confounder!r}")
                codes.append(units.strata[column])
            codes = codes * int(draws)
            # draws without a control window estimate nothing: left out (module conventions)
            kept = np.flatnonzero((matrix == labels.index(CONTROL)).any(axis=1))
            if kept.size == 0:
                continue
            # every system and outcome of the set under the same draws: one batched pass
            jobs, grids = [], []
            for system_id in sorted(systems["system_id"]):
                system_errors = errors.loc[errors["system_id"] == system_id]
                for outcome in outcomes:
                    values = pd.to_numeric(system_errors[outcome], errors="coerce")
                    if not np.isfinite(values.to_numpy(dtype=float)).all():
                        continue  # not analysed on this outcome (module conventions)
                    grids.append(outcome_grid(system_errors, units, labels, outcome, system_id))
                    jobs.append((system_id, outcome))
            if not jobs:
                continue
            try:
                per_draws = _effects_in_threads(
                    grids,
                    labels,
                    matrix[kept],
                    [codes[i] for i in kept],
                    estimand,
                    [outcome for _, outcome in jobs],
                )
            except ValueError:
                # name the system in the message, as the one-grid call did
                for (system_id, outcome), grid in zip(jobs, grids, strict=True):
                    try:
                        grid_perturbation_effects(
                            grid,
                            labels,
                            matrix[kept],
                            [codes[i] for i in kept],
                            CONTROL,
                            estimand,
                            outcome=outcome,
                        )
                    except ValueError as err:
                        hint = _missing_windows(grid, units, labels)
                        raise ValueError(
                            f"run {run_id}, system {system_id!r}: {err}{hint}"
                        ) from err
                raise
            for (system_id, outcome), per_draw in zip(jobs, per_draws, strict=True):
                per_draw["draw"] = kept[per_draw["draw"].to_numpy()]
                effects = summarise_draws(per_draw, n_dist, draws)
                if draw_rows is not None:
                    labels_of = (str(run_id), system_id, perturbation_set, outcome)
                    draw_rows.append(_draw_frame(per_draw, meta, n_dist, *labels_of))
                for column in _NUMBER:  # floating noise of 0 is stored as 0
                    effects[column] = snap_to_zero(effects[column].to_numpy())
                d = effects.pop("d").to_numpy()
                for column in ("favored_value", "confounder", "distribution_id"):
                    effects.insert(0, column, meta[column].astype(str).to_numpy()[d])
                effects.insert(0, "system_id", system_id)
                effects.insert(0, "run_id", str(run_id))
                effects["perturbation_set"] = perturbation_set
                effects["outcome"] = outcome
                frames.append(effects)
    if not frames:
        return pd.DataFrame(columns=EFFECTS_COLUMNS).astype(EFFECTS_SCHEMA)
    out = pd.concat(frames, ignore_index=True)[EFFECTS_COLUMNS]
    out = out.sort_values(
        ["run_id", "system_id", "outcome", "distribution_id", "perturbation_id"], kind="stable"
    )
    return out.reset_index(drop=True).astype(EFFECTS_SCHEMA)


# --------------------------------------------------------------------------------------
# Scores: aggregation over distributions
# --------------------------------------------------------------------------------------

SCORE_KEYS = ["run_id", "system_id", "perturbation_id", "outcome", "confounder"]
SCORE_COLUMNS = [
    "run_id",
    "system_id",
    "perturbation_id",
    "outcome",
    "confounder",
    "measure",
    "metric",
    "raw_score",
    "score_spread",
    "n_draws",
    "n_draws_left_out",
    "oracle_score",
    "n_distributions",
    "worst_distribution_id",
    "aggregation",
    "estimand",
]
_SCORE_TEXT = ["run_id", "system_id", "perturbation_id", "outcome", "confounder", "measure"]
_SCORE_TEXT += ["metric", "worst_distribution_id", "aggregation", "estimand"]
SCORE_SCHEMA = {
    **dict.fromkeys(_SCORE_TEXT, "string"),
    **dict.fromkeys(["raw_score", "score_spread", "oracle_score"], "float64"),
    **dict.fromkeys(["n_distributions", "n_draws", "n_draws_left_out"], "int64"),
}


def _spread(effects: pd.DataFrame, scores: pd.DataFrame, sd_column: str, how: str) -> pd.Series:
    """The standard error over draws of an aggregated score: max aggregations take the sd
    of the worst distribution (the one giving the score) over the square root of ITS draws
    (a distribution can average fewer draws than another when draws were left out); mean
    aggregations the mean of the sds over the square root of the most draws of any."""
    if how in {"max_abs", "max"}:
        worst = scores[[*SCORE_KEYS, "worst_distribution_id"]].merge(
            effects[[*SCORE_KEYS, "distribution_id", sd_column, "n_draws"]].rename(
                columns={"distribution_id": "worst_distribution_id"}
            ),
            on=[*SCORE_KEYS, "worst_distribution_id"],
            how="left",
        )
        return worst[sd_column] / np.sqrt(worst["n_draws"].astype(float))
    grouped = effects.groupby(SCORE_KEYS, sort=True)
    mean_sd = grouped[sd_column].mean() / np.sqrt(grouped["n_draws"].max().astype(float))
    return scores[SCORE_KEYS].merge(mean_sd.rename("sd").reset_index(), on=SCORE_KEYS, how="left")[
        "sd"
    ]


def effect_scores(effects: pd.DataFrame, aggregation: str) -> pd.DataFrame:
    """APE and PIE raw scores: one row per run, system, perturbation, outcome, confounder and
    measure (ape | pie), from :func:`study_effects` rows.

    ``aggregation`` (var ``distribution_aggregation``): ``max`` -- raw APE = max over the
    confounder's distributions of |mean APE_m|, raw PIE = max of mean PIE % (the paper's
    worst case); ``mean`` -- their means. ``score_spread``: the standard error over draws of
    the score, i.e. the standard deviation over draws (see :func:`_spread`) divided by
    the square root of the draws averaged (for ``max``, the worst distribution's own draws),
    because the score rated is the mean of the draws (NaN for one draw); ``oracle_score`` aggregates |ape_oracle| the same way (APE
    rows; NaN for PIE, which has no oracle). ``n_draws_left_out``: draws left out of the
    distributions' means because an arm was empty, summed over the distributions.
    """
    if aggregation not in DISTRIBUTION_AGGREGATIONS:
        raise ValueError(
            "distribution_aggregation must be one of "
            f"{sorted(DISTRIBUTION_AGGREGATIONS)} (got {aggregation!r})"
        )
    if effects.empty:
        return pd.DataFrame(columns=SCORE_COLUMNS).astype(SCORE_SCHEMA)
    ape_how, pie_how = DISTRIBUTION_AGGREGATIONS[aggregation]
    effects = effects.copy()
    effects["confounder"] = effects["confounder"].replace({"ticker": "company"})
    n_draws = effects.groupby(SCORE_KEYS, sort=True)["n_draws"].max().rename("n_draws")
    if "n_draws_left_out" not in effects.columns:  # rows from before draws were left out
        effects["n_draws_left_out"] = 0
    left_out = effects.groupby(SCORE_KEYS, sort=True)["n_draws_left_out"].sum()

    ape = worst_case(effects, SCORE_KEYS, "ape_matched", ape_how).rename(
        columns={"ape_matched": "raw_score"}
    )
    if "worst_distribution_id" not in ape.columns:
        ape["worst_distribution_id"] = None
    ape["score_spread"] = _spread(effects, ape, "ape_matched_sd", ape_how).to_numpy()
    oracle = worst_case(effects, SCORE_KEYS, "ape_oracle", ape_how, id_column=None)
    ape = ape.merge(
        oracle[[*SCORE_KEYS, "ape_oracle"]].rename(columns={"ape_oracle": "oracle_score"}),
        on=SCORE_KEYS,
        how="left",
    )
    ape["measure"] = "ape"
    ape["aggregation"] = ape_how

    pie = worst_case(effects, SCORE_KEYS, "pie_percent", pie_how).rename(
        columns={"pie_percent": "raw_score"}
    )
    if "worst_distribution_id" not in pie.columns:
        pie["worst_distribution_id"] = None
    pie["score_spread"] = _spread(effects, pie, "pie_percent_sd", pie_how).to_numpy()
    pie["oracle_score"] = float("nan")
    pie["measure"] = "pie"
    pie["aggregation"] = pie_how

    out = pd.concat([ape, pie], ignore_index=True)
    out = out.rename(columns={"n_values": "n_distributions"})
    out["metric"] = out["measure"] + "_" + out["confounder"]
    out = out.merge(n_draws.reset_index(), on=SCORE_KEYS, how="left")
    out = out.merge(left_out.reset_index(), on=SCORE_KEYS, how="left")
    estimands = effects.groupby(SCORE_KEYS)["estimand"].first().rename("estimand").reset_index()
    out = out.merge(estimands, on=SCORE_KEYS, how="left")
    out = out.sort_values([*SCORE_KEYS, "measure"]).reset_index(drop=True)[SCORE_COLUMNS]
    # floating noise of 0 is stored as 0, per metric x perturbation x outcome (the rule of
    # tsrate.methods.ratings.snap_to_zero: |x| <= 1e-12 x max(1, largest |x| of the group))
    group = ["run_id", "metric", "perturbation_id", "outcome"]
    for column in ("raw_score", "oracle_score"):
        out[column] = out.groupby(group, sort=False)[column].transform(
            lambda x: snap_to_zero(x.to_numpy())
        )
    return out.astype(SCORE_SCHEMA)
