"""Perturbation-effect estimation (APE_o, APE_m, PIE %) and the worst case over distributions.

The paper's RQ2/RQ3 (sections 3.2, 4.2, 5.2; Algorithms 2-3): for each *confounder
distribution* every window draws one perturbation, with the favoured value of the confounder
(an industry or a company) drawing the treatments P1..P6 more often than the control P0. The
observational effect (APE_o, a plain difference of means) is then biased by the confounder;
propensity-score matching (APE_m) removes that bias. PIE % = ||APE_o| - |APE_m|| x 100.

Because tsrate runs every window under every perturbation (the full counterfactual grid), the
true effect is known as well (``ape_oracle``), so the estimator's error can be shown beside
the estimate. For the ATE the oracle averages over every unit (eq. 2 over the population)
while APE_m averages over the units of its two arms, each stratum weighted by its units
there; ``matching_error`` holds that weighting too (docs/ratings.md, "Oracle"). The confounded draws live in :mod:`tsrate.methods.causal.distributions`, the
propensity matching in :mod:`tsrate.methods.causal.matching`; their public names are
re-exported here, the entry point of the method.

Conventions
-----------
* A *unit* is one window of one ticker, keyed by ``(ticker, window_end_date)``.
* The control perturbation is ``"P0"``; every other perturbation id is a treatment and is
  compared with the control alone (units assigned to other treatments are ignored).
* Confounder names: ``"industry"``, ``"ticker"``; ``"company"`` is an alias of ``"ticker"``.
  Any other name is used as a column name as is.
* Effects are ``treated minus control`` on the outcome (default ``max_abs_residual``):
  a positive APE means the perturbation increases the error.
* The propensity of a discrete confounder is computed in closed form by default: the
  unpenalised one-hot logistic regression's maximum-likelihood fit IS the stratum's treated
  share (:func:`stratum_propensity`), so matching reduces to per-stratum counts and sums.
  ``perturbation_effects(..., propensity="logistic")`` keeps the scikit-learn fit and
  unit-level matching as the reference (same results up to rounding; see there).
* Scale: a study of 500 companies has ~500 distributions x ~170 000 windows per perturbation
  set; :func:`treatment_draws` and :func:`grid_perturbation_effects` work on integer codes
  one distribution at a time instead of long DataFrames.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tsrate.methods.causal.distributions import (
    ASSIGNMENT_COLUMNS,
    CONTROL,
    DISTRIBUTION_COLUMNS,
    DISTRIBUTION_SOURCES,
    TreatmentDraw,
    TreatmentDraws,
    assign_treatments,
    confounder_column,
    default_distributions,
    distribution_problems,
    distribution_seed,
    draw_seed,
    study_distributions,
    treatment_draws,
)
from tsrate.methods.causal.matching import (
    check_method,
    matched_effects,
    matched_logistic,
    nearest_neighbour_means,
    propensity_scores,
    stratum_propensity,
)

# The estimators are the entry point of the causal method: the names of the distributions
# and matching modules that callers use with them are re-exported here.
__all__ = [
    "CONTROL",
    "DISTRIBUTION_AGGREGATIONS",
    "ASSIGNMENT_COLUMNS",
    "DISTRIBUTION_COLUMNS",
    "EFFECT_COLUMNS",
    "confounder_column",
    "distribution_seed",
    "assign_treatments",
    "treatment_draws",
    "TreatmentDraw",
    "TreatmentDraws",
    "default_distributions",
    "study_distributions",
    "distribution_problems",
    "draw_seed",
    "DISTRIBUTION_SOURCES",
    "propensity_scores",
    "stratum_propensity",
    "grid_perturbation_effects",
    "grid_perturbation_effects_many",
    "nearest_neighbour_means",
    "perturbation_effects",
    "worst_case",
]

#: Output columns of :func:`perturbation_effects`.
EFFECT_COLUMNS: list[str] = [
    "perturbation_id",
    "n_treated",
    "n_control",
    "ape_observational",
    "ape_matched",
    "ape_oracle",
    "matching_error",
    "pie_percent",
    "strata_without_overlap",
    "n_strata",
    "estimand",
]

#: var ``distribution_aggregation`` -> how :func:`worst_case` aggregates (APE_m, PIE %)
#: over the distributions of a confounder (used by perturbation_effect_scores and
#: rating_stability).
DISTRIBUTION_AGGREGATIONS = {"max": ("max_abs", "max"), "mean": ("mean_abs", "mean")}


def _effect_records(
    y: np.ndarray,
    codes: np.ndarray,
    labels: np.ndarray,
    control_code: int,
    strata: np.ndarray,
    n_strata: int,
    estimand: str,
    tol: float,
    propensity: str,
    seed: int,
    oracle,
) -> list[dict[str, object]]:
    """The rows of :func:`perturbation_effects` for one system under one distribution.

    ``y``: observed outcome per unit; ``codes``: index into ``labels`` of the perturbation
    each unit was assigned (-1: not observed); ``strata``: confounder code 0..n_strata-1 per
    unit; ``oracle(code, treated_mask)``: the true effect (NaN when unknown).
    """
    observed = codes >= 0
    if not observed.all():
        y, codes, strata = y[observed], codes[observed], strata[observed]
    n_labels = labels.size
    # One stable sort groups each arm's units contiguously, in their original order (so the
    # arm means are bit-identical to masked means); small codes sort by radix.
    small = codes.astype(np.int8) if n_labels < 127 else codes
    order = np.argsort(small, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=n_labels))])
    y_sorted = y[order]
    # Per (perturbation, stratum): unit counts and outcome sums, one bincount each.
    key = codes * n_strata + strata
    counts = np.bincount(key, minlength=n_labels * n_strata).reshape(n_labels, n_strata)
    sums = np.bincount(key, weights=y, minlength=n_labels * n_strata)
    sums = sums.reshape(n_labels, n_strata)

    n_control = int(bounds[control_code + 1] - bounds[control_code])
    if n_control == 0:
        raise ValueError(f"no unit is assigned the control {labels[control_code]!r}")
    mean_c = y_sorted[bounds[control_code] : bounds[control_code + 1]].mean()
    n_c, sum_c = counts[control_code], sums[control_code]
    has_c = n_c > 0
    present = [c for c in range(n_labels) if c != control_code and bounds[c + 1] > bounds[c]]
    rows: list[dict[str, object]] = []
    for code in sorted(present, key=lambda c: str(labels[c])):
        y_t = y_sorted[bounds[code] : bounds[code + 1]]
        n_t = counts[code]
        has_t = n_t > 0
        in_sub = has_t | has_c
        ape_o = float(y_t.mean() - mean_c)
        if propensity == "share":
            ape_m = float(
                matched_effects(
                    n_t[None, in_sub].astype(float),
                    sums[code][None, in_sub],
                    n_c[None, in_sub].astype(float),
                    sum_c[None, in_sub],
                    estimand,
                    tol,
                )[0]
            )
        else:
            mask = (codes == code) | (codes == control_code)
            ape_m = matched_logistic(
                y[mask], codes[mask] == code, strata[mask], estimand, tol, seed
            )
        ape_oracle = oracle(code, codes == code if estimand == "ATT" else None)
        rows.append(
            {
                "perturbation_id": str(labels[code]),
                "n_treated": int(y_t.size),
                "n_control": n_control,
                "ape_observational": ape_o,
                "ape_matched": ape_m,
                "ape_oracle": ape_oracle,
                "matching_error": ape_m - ape_oracle,
                "pie_percent": abs(abs(ape_o) - abs(ape_m)) * 100.0,
                "strata_without_overlap": int(np.sum(has_t[in_sub] != has_c[in_sub])),
                "n_strata": int(in_sub.sum()),
                "estimand": estimand,
            }
        )
    return rows


_EFFECT_TYPES = {
    "n_treated": "int64",
    "n_control": "int64",
    "strata_without_overlap": "int64",
    "n_strata": "int64",
    "ape_observational": "float64",
    "ape_matched": "float64",
    "ape_oracle": "float64",
    "matching_error": "float64",
    "pie_percent": "float64",
}


def _potential_outcomes(
    full_grid: pd.DataFrame, unit_columns: list[str], outcome: str
) -> pd.DataFrame:
    """The counterfactual grid as a (unit x perturbation_id) table of outcomes."""
    missing = {*unit_columns, "perturbation_id", outcome} - set(full_grid.columns)
    if missing:
        raise ValueError(f"full_grid lacks columns {sorted(missing)}")
    grid = full_grid[[*unit_columns, "perturbation_id", outcome]]
    if grid.duplicated([*unit_columns, "perturbation_id"]).any():
        raise ValueError("full_grid must have one row per unit and perturbation (one system)")
    return grid.pivot(index=unit_columns, columns="perturbation_id", values=outcome)


def _oracle(
    wide: pd.DataFrame, keys: pd.Index, treatment: str, control: str, outcome: str
) -> np.ndarray:
    """Per-unit true effect Y(treatment) - Y(control) for the units ``keys`` (in order)."""
    for pid in (treatment, control):
        if pid not in wide.columns:
            raise ValueError(f"full_grid has no outcomes for perturbation {pid!r}")
    y1 = wide[treatment].reindex(keys).to_numpy(dtype=float)
    y0 = wide[control].reindex(keys).to_numpy(dtype=float)
    if not (np.all(np.isfinite(y1)) and np.all(np.isfinite(y0))):
        raise ValueError(
            f"full_grid lacks a finite {outcome!r} under {treatment!r} or {control!r} for some "
            "units (the counterfactual grid must be complete)"
        )
    return y1 - y0


def perturbation_effects(
    observed: pd.DataFrame,
    confounder: str,
    control: str = CONTROL,
    estimand: str = "ATE",
    outcome: str = "max_abs_residual",
    full_grid: pd.DataFrame | None = None,
    seed: int = 0,
    *,
    unit_columns: Sequence[str] = ("ticker", "window_end_date"),
    tie_tolerance: float = 1e-12,
    propensity: str = "share",
) -> pd.DataFrame:
    """APE_o, APE_m, PIE % (and the oracle APE) for ONE system under ONE distribution.

    ``observed``: one row per unit with its assigned ``perturbation_id``, its confounder
    column (``confounder``; ``"company"`` means ``ticker``) and ``outcome`` under the assigned
    perturbation (i.e. :func:`assign_treatments` joined to the system's window errors).

    For each treatment ``p != control`` present (sorted), on the units assigned ``p`` or
    ``control`` only:

    * ``ape_observational`` = mean(Y | p) - mean(Y | control);
    * ``ape_matched``: propensity e(z) = P(p | confounder value z) from an unpenalised
      logistic regression on the one-hot confounder, then 1-nearest-neighbour matching on e
      with replacement, every unit at the minimal distance being a match and their outcomes
      AVERAGED (:func:`nearest_neighbour_means`; never the first index). The missing
      potential outcome of each unit is imputed from its matches in the other arm.
      ``estimand="ATE"``: mean over all p/control units of ``Y_i(1) - Y_i(0)``; ``"ATT"``:
      mean over the treated units.
      ``propensity`` says how e is obtained: ``"share"`` (default) -- the closed form of the
      maximum-likelihood fit, the stratum's treated share (:func:`stratum_propensity`), and
      the matching computed from per-stratum counts and sums; ``"logistic"`` -- the
      scikit-learn fit (:func:`propensity_scores`) and unit-level matching. Both give the
      same estimate up to floating-point rounding (the logistic fit is the share to lbfgs'
      tolerance; units of a stratum are tied either way); the closed form is exact and
      O(n) instead of one model fit per treatment. The only possible difference: a stratum
      WITHOUT overlap is matched to the nearest other stratum, and if two candidates have
      exactly equal shares the closed form averages both while the fitted scores may differ
      in their last digits and pick one.
      With a discrete confounder and both arms in every stratum this equals exact
      stratification: ATE = sum_s (N_s / N) (mean_T,s - mean_C,s), ATT weights by the treated
      counts n_T,s / n_T (units of a stratum share a score; their own stratum is at distance
      0, so all of its other-arm units are the tied matches; strata of equal score pool
      without changing the sum). Strata with only one arm (``strata_without_overlap``) are
      matched to the nearest propensity of another stratum.
    * ``pie_percent`` = | |ape_observational| - |ape_matched| | x 100 (paper eq. 3);
    * with ``full_grid`` (this system's window errors: every unit under every perturbation,
      keyed by ``unit_columns``): ``ape_oracle`` = the true effect -- ATE: mean of
      Y(p) - Y(control) over ALL units in ``observed`` (whatever they were assigned); ATT: over
      the units assigned p -- and ``matching_error = ape_matched - ape_oracle``. NaN otherwise.
      (The ATE's APE_m averages over the p/control units only, so where the effect differs
      between strata its expectation differs from this oracle: docs/ratings.md, "Oracle".)

    ``seed`` is passed to scikit-learn as ``random_state`` (``propensity="logistic"``); the
    result is deterministic (ties are averaged, not broken at random). Raises ``ValueError``
    if the control arm is empty or an outcome is NaN.

    Returns :data:`EFFECT_COLUMNS`, one row per treatment: ``perturbation_id, n_treated,
    n_control, ape_observational, ape_matched, ape_oracle, matching_error, pie_percent,
    strata_without_overlap`` (confounder values present among the p/control units with only
    one arm), ``n_strata`` (confounder values present), ``estimand``.
    :func:`grid_perturbation_effects` computes the same for many distributions at once from
    a (unit x perturbation) outcome matrix.
    """
    estimand = check_method(estimand, propensity)
    column = confounder_column(confounder)
    unit_columns = list(unit_columns)
    needed = {"perturbation_id", column, outcome}
    if full_grid is not None:
        needed |= set(unit_columns)
    missing = needed - set(observed.columns)
    if missing:
        raise ValueError(f"observed lacks columns {sorted(missing)}")
    if full_grid is not None and observed.duplicated(unit_columns).any():
        raise ValueError(f"observed must have one row per unit {unit_columns}")
    y_all = observed[outcome].to_numpy(dtype=float)
    if not np.all(np.isfinite(y_all)):
        raise ValueError(f"observed has NaN/infinite {outcome!r} values")
    pid_all = observed["perturbation_id"].astype(str).to_numpy()
    if not np.any(pid_all == control):
        raise ValueError(f"no unit is assigned the control {control!r}")
    codes, labels = pd.factorize(pid_all, sort=True)
    labels = np.asarray(labels, dtype=object)
    control_code = int(np.flatnonzero(labels == control)[0])
    strata, stratum_values = pd.factorize(observed[column], sort=True)
    if np.any(strata < 0):
        raise ValueError(f"observed has missing {column!r} values")

    wide = None
    all_keys = pd.Index([])
    if full_grid is not None:
        wide = _potential_outcomes(full_grid, unit_columns, outcome)
        all_keys = (
            pd.MultiIndex.from_frame(observed[unit_columns])
            if len(unit_columns) > 1
            else pd.Index(observed[unit_columns[0]])
        )

    def oracle(code: int, treated: np.ndarray | None) -> float:
        if wide is None:
            return np.nan
        keys = all_keys if treated is None else all_keys[np.flatnonzero(treated)]
        return float(_oracle(wide, keys, str(labels[code]), control, outcome).mean())

    rows = _effect_records(
        y_all,
        codes.astype(np.int64),
        labels,
        control_code,
        strata.astype(np.int64),
        len(stratum_values),
        estimand,
        tie_tolerance,
        propensity,
        seed,
        oracle,
    )
    out = pd.DataFrame.from_records(rows, columns=EFFECT_COLUMNS)
    return out.astype(_EFFECT_TYPES)


def grid_perturbation_effects(
    outcomes: np.ndarray,
    perturbations: Sequence[str],
    assigned: np.ndarray,
    strata: np.ndarray | Sequence[np.ndarray],
    control: str = CONTROL,
    estimand: str = "ATE",
    *,
    tie_tolerance: float = 1e-12,
    outcome: str = "max_abs_residual",
) -> pd.DataFrame:
    """:func:`perturbation_effects` with a full grid, for many distributions at once.

    ``outcomes``: (units x perturbations) matrix, ``outcomes[i, j]`` = unit i's outcome under
    ``perturbations[j]`` (the system's full grid; NaN where it was not run).
    ``assigned``: (units,) -- or (distributions x units) -- index into ``perturbations`` of
    the perturbation each unit drew (-1: the unit is not part of the draw).
    ``strata``: the confounder code (0..S-1) of every unit -- one array for all
    distributions, or a sequence with one array per distribution (e.g. industry codes for
    the industry distributions, ticker codes for the company ones).

    Row by row the same as ``perturbation_effects(observed, ..., full_grid=grid)`` where
    ``observed`` holds the units with ``assigned >= 0`` (in unit order) and their outcome
    under the assigned perturbation: same conventions, closed-form propensity
    (``propensity="share"``), same checks. Returns :data:`EFFECT_COLUMNS` with a leading
    ``draw`` column (the row of ``assigned``; 0 for a 1-D ``assigned``).
    :func:`grid_perturbation_effects_many` does the same for several grids at once.
    """
    return grid_perturbation_effects_many(
        [outcomes],
        perturbations,
        assigned,
        strata,
        control,
        estimand,
        tie_tolerance=tie_tolerance,
        outcomes=[outcome],
    )[0]


def grid_perturbation_effects_many(
    grids: Sequence[np.ndarray],
    perturbations: Sequence[str],
    assigned: np.ndarray,
    strata: np.ndarray | Sequence[np.ndarray],
    control: str = CONTROL,
    estimand: str = "ATE",
    *,
    tie_tolerance: float = 1e-12,
    outcomes: Sequence[str] | None = None,
) -> list[pd.DataFrame]:
    """:func:`grid_perturbation_effects` of several (units x perturbations) grids (systems,
    outcomes) under the same draws: one frame per grid, each the same, bit for bit, as
    ``grid_perturbation_effects(grid, ...)`` (``outcomes``: the outcome name of each grid,
    for messages). What depends on the draw alone -- the arms' sort order, per-stratum
    counts, overlap -- is computed once per draw for every grid; per grid only the outcome
    gather, the per-stratum sums and the arm means remain, and APE_m of every grid is one
    row-wise :func:`matched_effects` call per treatment."""
    estimand = check_method(estimand, "share")
    labels = np.asarray([str(p) for p in perturbations], dtype=object)
    grids = [np.asarray(g, dtype=float) for g in grids]
    names = ["max_abs_residual"] * len(grids) if outcomes is None else [str(o) for o in outcomes]
    if len(names) != len(grids):
        raise ValueError("outcomes must name every grid")
    for g in grids:
        if g.ndim != 2 or g.shape[1] != labels.size:
            raise ValueError("outcomes must be a (units x perturbations) matrix")
    if control not in set(labels):
        raise ValueError(f"full_grid has no outcomes for perturbation {control!r}")
    control_code = int(np.flatnonzero(labels == control)[0])
    assigned = np.asarray(assigned)
    draws = assigned[None, :] if assigned.ndim == 1 else assigned
    n_units = grids[0].shape[0] if grids else 0
    if draws.ndim != 2 or any(g.shape[0] != draws.shape[1] for g in grids):
        raise ValueError("assigned must have one entry per unit (row of outcomes)")
    if isinstance(strata, np.ndarray) and strata.ndim == 1:
        per_draw = [strata] * draws.shape[0]
    else:
        per_draw = list(strata)
    if len(per_draw) != draws.shape[0]:
        raise ValueError("strata must be one array, or one array per distribution")
    n_labels = labels.size
    unit_index = np.arange(n_units)
    effects, all_units_oracle, flats = [], [], []
    for g in grids:
        # True effect of every unit under every perturbation; the all-units ATE oracle is
        # the same for every distribution that observes every unit.
        with np.errstate(invalid="ignore"):
            effect = g - g[:, [control_code]]
        complete = np.isfinite(effect).all(axis=0)
        effects.append(effect)
        all_units_oracle.append(
            {c: float(effect[:, c].mean()) for c in range(n_labels) if complete[c]}
        )
        flats.append(g.ravel())
    label_order = sorted(range(n_labels), key=lambda c: str(labels[c]))
    records: list[list[dict[str, object]]] = [[] for _ in grids]
    n_strata_of: dict[int, int] = {}
    for d in range(draws.shape[0]):
        codes = draws[d].astype(np.int64)
        observed = codes >= 0
        every_unit = bool(observed.all())
        stratum = np.asarray(per_draw[d], dtype=np.int64)
        if id(per_draw[d]) not in n_strata_of:
            n_strata_of[id(per_draw[d])] = int(stratum.max()) + 1 if stratum.size else 0
        n_strata = n_strata_of[id(per_draw[d])]
        flat_index = unit_index * n_labels + (codes if every_unit else np.maximum(codes, 0))
        if every_unit:
            obs_codes, obs_strata, obs_index = codes, stratum, flat_index
        else:
            obs_codes, obs_strata = codes[observed], stratum[observed]
            obs_index = flat_index[observed]
        ys = []
        for k, flat in enumerate(flats):
            y = flat[obs_index]
            if not np.all(np.isfinite(y)):
                raise ValueError(f"observed has NaN/infinite {names[k]!r} values")
            ys.append(y)
        # One stable sort groups each arm's units contiguously, in their original order (so
        # the arm means are bit-identical to masked means); small codes sort by radix.
        small = obs_codes.astype(np.int8) if n_labels < 127 else obs_codes
        order = np.argsort(small, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(obs_codes, minlength=n_labels))])
        # Per (perturbation, stratum): unit counts (shared) and outcome sums (per grid).
        key = obs_codes * n_strata + obs_strata
        counts = np.bincount(key, minlength=n_labels * n_strata).reshape(n_labels, n_strata)
        n_control = int(bounds[control_code + 1] - bounds[control_code])
        if n_control == 0:
            raise ValueError(f"no unit is assigned the control {labels[control_code]!r}")
        sums = [
            np.bincount(key, weights=y, minlength=n_labels * n_strata).reshape(n_labels, n_strata)
            for y in ys
        ]
        y_sorted = [y[order] for y in ys]
        c0, c1 = bounds[control_code], bounds[control_code + 1]
        mean_c = [ys_k[c0:c1].mean() for ys_k in y_sorted]
        n_c = counts[control_code]
        has_c = n_c > 0
        for code in label_order:
            if code == control_code or bounds[code + 1] <= bounds[code]:
                continue
            t0, t1 = bounds[code], bounds[code + 1]
            n_t = counts[code]
            has_t = n_t > 0
            in_sub = has_t | has_c
            width = int(in_sub.sum())
            rows = len(grids)
            ape_m = matched_effects(
                np.broadcast_to(n_t[None, in_sub].astype(float), (rows, width)),
                np.stack([s[code][in_sub] for s in sums]),
                np.broadcast_to(n_c[None, in_sub].astype(float), (rows, width)),
                np.stack([s[control_code][in_sub] for s in sums]),
                estimand,
                tie_tolerance,
            )
            treated = codes == code if estimand == "ATT" else None
            if treated is not None and not every_unit:
                treated = obs_codes == code
            for k in range(rows):
                ape_o = float(y_sorted[k][t0:t1].mean() - mean_c[k])
                a_m = float(ape_m[k])
                ape_oracle = _grid_oracle(
                    effects[k],
                    all_units_oracle[k],
                    code,
                    treated,
                    observed,
                    every_unit,
                    names[k],
                    labels,
                    control,
                )
                records[k].append(
                    {
                        "draw": d,
                        "perturbation_id": str(labels[code]),
                        "n_treated": int(t1 - t0),
                        "n_control": n_control,
                        "ape_observational": ape_o,
                        "ape_matched": a_m,
                        "ape_oracle": ape_oracle,
                        "matching_error": a_m - ape_oracle,
                        "pie_percent": abs(abs(ape_o) - abs(a_m)) * 100.0,
                        "strata_without_overlap": int(np.sum(has_t[in_sub] != has_c[in_sub])),
                        "n_strata": width,
                        "estimand": estimand,
                    }
                )
    return [
        pd.DataFrame.from_records(rows, columns=["draw", *EFFECT_COLUMNS]).astype(
            {"draw": "int64", **_EFFECT_TYPES}
        )
        for rows in records
    ]


def _grid_oracle(
    effect: np.ndarray,
    all_units: dict[int, float],
    code: int,
    treated: np.ndarray | None,
    observed: np.ndarray,
    every_unit: bool,
    outcome: str,
    labels: np.ndarray,
    control: str,
) -> float:
    """The true effect of ``code`` over the observed units (ATE; cached when every unit is
    observed) or over the ``treated`` ones (ATT; a mask over the observed units)."""
    if treated is None and every_unit and code in all_units:
        return all_units[code]
    keep = observed if treated is None else np.zeros(effect.shape[0], dtype=bool)
    if treated is not None:
        keep[np.flatnonzero(observed)[treated]] = True
    diff = effect[keep, code]
    if not np.all(np.isfinite(diff)):
        raise ValueError(
            f"full_grid lacks a finite {outcome!r} under {labels[code]!r} or "
            f"{control!r} for some units (the counterfactual grid must be complete)"
        )
    return float(diff.mean())


# --------------------------------------------------------------------------------------
# Aggregation over distributions
# --------------------------------------------------------------------------------------


def worst_case(
    values: pd.DataFrame,
    by: list[str],
    value: str,
    how: str = "max_abs",
    *,
    id_column: str | None = "distribution_id",
) -> pd.DataFrame:
    """Aggregate a per-distribution value over distributions (the paper's worst case).

    ``how``: ``"max_abs"`` -- max of |value| (raw APE = max over distributions of
    |APE_m|); ``"max"`` -- max of value (raw PIE = max over distributions of PIE %, which is
    already non-negative); ``"mean"`` -- mean of value; ``"mean_abs"`` -- mean of |value|.
    NaN values are skipped.

    Returns ``[*by, value, "n_values"]`` (``n_values`` = non-NaN values aggregated), sorted
    by ``by``. For ``"max_abs"``/``"max"`` and when ``id_column`` is in ``values``, also
    ``worst_<id_column>``: the id attaining the maximum (the smallest id on ties).
    """
    if how not in {"max_abs", "max", "mean", "mean_abs"}:
        raise ValueError("how must be 'max_abs', 'max', 'mean' or 'mean_abs'")
    missing = {*by, value} - set(values.columns)
    if missing:
        raise ValueError(f"values lacks columns {sorted(missing)}")
    frame = values.copy()
    v = frame[value].astype(float)
    frame["_v"] = v.abs() if how in {"max_abs", "mean_abs"} else v
    frame = frame.loc[frame["_v"].notna()]
    grouped = frame.groupby(by, sort=True)["_v"]
    if how in {"max_abs", "max"}:
        out = grouped.max().rename(value).to_frame()
    else:
        out = grouped.mean().rename(value).to_frame()
    out["n_values"] = grouped.size().astype("int64")
    out = out.reset_index()
    if how in {"max_abs", "max"} and id_column is not None and id_column in frame.columns:
        ordered = frame.sort_values(
            [*by, "_v", id_column], ascending=[True] * len(by) + [False, True]
        )
        worst = ordered.drop_duplicates(by, keep="first")[[*by, id_column]]
        out = out.merge(worst.rename(columns={id_column: f"worst_{id_column}"}), on=by, how="left")
    return out
