"""Confounded treatment assignment and perturbation-effect estimation (APE, PIE %).

The paper's RQ2/RQ3 (sections 3.2, 4.2, 5.2; Algorithms 2-3): for each *confounder
distribution* every window draws one perturbation, with the favoured value of the confounder
(an industry or a company) drawing the treatments P1..P6 more often than the control P0. The
observational effect (APE_o, a plain difference of means) is then biased by the confounder;
propensity-score matching (APE_m) removes that bias. PIE % = ||APE_o| - |APE_m|| x 100.

Because tsrate runs every window under every perturbation (the full counterfactual grid), the
true effect is known as well (``ape_oracle``), so the estimator's error can be shown beside
the estimate.

Conventions
-----------
* A *unit* is one window of one ticker, keyed by ``(ticker, window_end_date)``.
* The control perturbation is ``"P0"``; every other perturbation id is a treatment and is
  compared with the control alone (units assigned to other treatments are ignored).
* Confounder names: ``"industry"``, ``"ticker"``; ``"company"`` is an alias of ``"ticker"``.
  Any other name is used as a column name as is.
* Effects are ``treated minus control`` on the outcome (default ``max_abs_residual``):
  a positive APE means the perturbation increases the error.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

__all__ = [
    "CONTROL",
    "ASSIGNMENT_COLUMNS",
    "DISTRIBUTION_COLUMNS",
    "EFFECT_COLUMNS",
    "confounder_column",
    "distribution_seed",
    "assign_treatments",
    "default_distributions",
    "propensity_scores",
    "nearest_neighbour_means",
    "perturbation_effects",
    "worst_case",
]

CONTROL = "P0"

#: Output columns of :func:`assign_treatments`.
ASSIGNMENT_COLUMNS: list[str] = [
    "distribution_id",
    "confounder",
    "favored_value",
    "ticker",
    "industry",
    "window_end_date",
    "perturbation_id",
    "is_favored",
]

#: Columns of a confounder-distribution table (the ``confounder_distributions`` seed).
DISTRIBUTION_COLUMNS: list[str] = [
    "distribution_id",
    "confounder",
    "favored_value",
    "treated_weight",
    "control_weight",
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

_ALIASES = {"company": "ticker"}


def confounder_column(confounder: str) -> str:
    """Column holding a confounder: ``"company"`` -> ``"ticker"``, anything else unchanged."""
    return _ALIASES.get(confounder, confounder)


def distribution_seed(seed: int, distribution_id: str) -> np.random.SeedSequence:
    """Per-distribution seed: ``SeedSequence([seed, *sha256(distribution_id) words])``.

    Stable across processes and Python versions (no salted ``hash()``), so a distribution's
    draw does not change when other distributions are added, removed or reordered.
    """
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer (got {seed})")
    digest = hashlib.sha256(str(distribution_id).encode("utf-8")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, len(digest), 4)]
    return np.random.SeedSequence([seed, *words])


# --------------------------------------------------------------------------------------
# Treatment assignment
# --------------------------------------------------------------------------------------


def _check_weight(value: object, name: str, distribution_id: str) -> float:
    try:
        w = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"distribution {distribution_id!r}: {name} is not a number") from err
    if not np.isfinite(w) or w <= 0:
        raise ValueError(f"distribution {distribution_id!r}: {name} must be > 0 (got {value!r})")
    return w


def assign_treatments(
    units: pd.DataFrame,
    distributions: pd.DataFrame,
    perturbations: Sequence[str],
    seed: int,
    *,
    control: str = CONTROL,
    missing_favored: str = "raise",
) -> pd.DataFrame:
    """Draw one perturbation per unit (window) for every confounder distribution.

    ``units`` has one row per ``(ticker, window_end_date)`` with its ``industry``.
    ``distributions`` has columns :data:`DISTRIBUTION_COLUMNS`; ``confounder`` is
    ``"industry"`` or ``"company"``/``"ticker"`` (see :func:`confounder_column`).
    ``perturbations`` lists the perturbations a unit may draw, including ``control``; pass
    only those the rated system accepts (DESIGN.md).

    For each distribution, units whose confounder value equals ``favored_value`` (compared as
    strings) draw each treatment with probability ``treated_weight / W`` and the control with
    ``control_weight / W`` where ``W = control_weight + k * treated_weight`` (k treatments;
    with the default weights 2 / 1 the control share is ``1 / (1 + 2k)``). Every other unit
    draws uniformly, ``1 / (k + 1)`` each.

    Reproducibility: units are sorted by ``(ticker, window_end_date)`` and perturbations put
    in the order ``[control, *sorted(treatments)]`` before drawing, so the result does not
    depend on row order; each distribution draws from its own generator
    (:func:`distribution_seed`), so adding a distribution does not change the others. One
    uniform number per unit is inverted through the cumulative weights.

    ``missing_favored``: what to do with a distribution whose favoured value matches no unit
    -- ``"raise"`` (default), ``"drop"`` (leave it out) or ``"keep"`` (all units then draw
    uniformly).

    Returns :data:`ASSIGNMENT_COLUMNS`, one row per distribution x unit, sorted by
    distribution_id, ticker, window_end_date. ``confounder`` and ``favored_value`` are copied
    from ``distributions``; ``is_favored`` marks the units holding the favoured value.
    """
    missing = {"ticker", "industry", "window_end_date"} - set(units.columns)
    if missing:
        raise ValueError(f"units lacks columns {sorted(missing)}")
    missing = set(DISTRIBUTION_COLUMNS) - set(distributions.columns)
    if missing:
        raise ValueError(f"distributions lacks columns {sorted(missing)}")
    if missing_favored not in {"raise", "drop", "keep"}:
        raise ValueError("missing_favored must be 'raise', 'drop' or 'keep'")
    if distributions["distribution_id"].duplicated().any():
        raise ValueError("distribution_id values must be unique")

    perts = [str(p) for p in perturbations]
    if len(set(perts)) != len(perts):
        raise ValueError(f"perturbations contains duplicates: {perts}")
    if control not in perts:
        raise ValueError(f"perturbations must include the control {control!r}")
    treatments = sorted(p for p in perts if p != control)
    if not treatments:
        raise ValueError("perturbations must include at least one treatment besides the control")
    ordered = np.array([control, *treatments], dtype=object)
    k = len(treatments)

    base = units[["ticker", "industry", "window_end_date"]].sort_values(
        ["ticker", "window_end_date"], kind="mergesort"
    )
    base = base.reset_index(drop=True)
    if base.duplicated(["ticker", "window_end_date"]).any():
        raise ValueError("units must have one row per (ticker, window_end_date)")
    spans = base.groupby("ticker")["industry"].nunique()
    if (spans > 1).any():
        raise ValueError(f"tickers in more than one industry: {sorted(spans[spans > 1].index)}")
    n = len(base)

    uniform_cum = np.arange(1, k + 2, dtype=float) / (k + 1)
    frames: list[pd.DataFrame] = []
    for dist in distributions.sort_values("distribution_id").to_dict("records"):
        dist_id = str(dist["distribution_id"])
        column = confounder_column(str(dist["confounder"]))
        if column not in base.columns:
            raise ValueError(
                f"distribution {dist_id!r}: unknown confounder {dist['confounder']!r} "
                "(use 'industry', 'company' or 'ticker')"
            )
        tw = _check_weight(dist["treated_weight"], "treated_weight", dist_id)
        cw = _check_weight(dist["control_weight"], "control_weight", dist_id)
        favored = (base[column].astype(str) == str(dist["favored_value"])).to_numpy()
        if not favored.any():
            if missing_favored == "raise":
                raise ValueError(
                    f"distribution {dist_id!r}: favored value {dist['favored_value']!r} of "
                    f"{column!r} matches no unit (filter the distributions, or pass "
                    "missing_favored='drop')"
                )
            if missing_favored == "drop":
                continue
        favored_w = np.array([cw, *([tw] * k)])
        favored_cum = np.cumsum(favored_w) / favored_w.sum()
        rng = np.random.default_rng(distribution_seed(seed, dist_id))
        u = rng.random(n)
        idx = np.where(
            favored,
            np.searchsorted(favored_cum, u, side="right"),
            np.searchsorted(uniform_cum, u, side="right"),
        )
        idx = np.minimum(idx, k)
        out = base.copy()
        out.insert(0, "favored_value", dist["favored_value"])
        out.insert(0, "confounder", dist["confounder"])
        out.insert(0, "distribution_id", dist["distribution_id"])
        out["perturbation_id"] = ordered[idx].astype(str)
        out["is_favored"] = favored
        frames.append(out)
    if not frames:
        empty = base.iloc[0:0].copy()
        for col in ("distribution_id", "confounder", "favored_value", "perturbation_id"):
            empty[col] = pd.Series(dtype=object)
        empty["is_favored"] = pd.Series(dtype=bool)
        return empty[ASSIGNMENT_COLUMNS]
    return pd.concat(frames, ignore_index=True)[ASSIGNMENT_COLUMNS]


def default_distributions(
    companies: pd.DataFrame, *, treated_weight: float = 2.0, control_weight: float = 1.0
) -> pd.DataFrame:
    """The paper's distributions: DI1..DIk favour one industry each (industries sorted),
    DC1..DCm favour one company each (sorted by industry, then ticker).

    ``companies`` needs ``ticker`` and ``industry``. Returns :data:`DISTRIBUTION_COLUMNS`
    with ``confounder`` ``"industry"`` for DI rows and ``"company"`` for DC rows.
    """
    missing = {"ticker", "industry"} - set(companies.columns)
    if missing:
        raise ValueError(f"companies lacks columns {sorted(missing)}")
    comp = companies[["ticker", "industry"]].drop_duplicates()
    if comp["ticker"].duplicated().any():
        raise ValueError("a ticker appears under more than one industry")
    comp = comp.sort_values(["industry", "ticker"])
    industries = sorted(comp["industry"].unique())
    rows = [("DI" + str(i + 1), "industry", ind) for i, ind in enumerate(industries)]
    rows += [("DC" + str(j + 1), "company", t) for j, t in enumerate(comp["ticker"])]
    out = pd.DataFrame(rows, columns=["distribution_id", "confounder", "favored_value"])
    out["treated_weight"] = float(treated_weight)
    out["control_weight"] = float(control_weight)
    return out


# --------------------------------------------------------------------------------------
# Propensity-score matching
# --------------------------------------------------------------------------------------


def propensity_scores(
    strata: np.ndarray, treated: np.ndarray, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Logistic propensity P(treated | stratum) for a discrete confounder.

    ``strata`` are integer codes 0..S-1 per unit, ``treated`` booleans. The model is
    scikit-learn ``LogisticRegression`` on the one-hot stratum (one column per stratum, no
    intercept, so the model is identified) and UNPENALISED (``C=np.inf``, lbfgs): its maximum
    likelihood fit is the stratum's treated share. It is fitted on the 2S distinct
    (stratum, arm) rows with the arm counts as sample weights -- the same likelihood as
    fitting every unit, at a fraction of the cost. A stratum with only one arm has no finite
    MLE; lbfgs then stops with the propensity close to 0 or 1 (the convergence warning is
    silenced; :func:`perturbation_effects` reports such strata).

    Returns ``(per_stratum, per_unit)`` propensities. Units of one stratum get bit-identical
    scores, which makes the tie handling of the matching exact.
    """
    strata = np.asarray(strata, dtype=np.int64)
    treated = np.asarray(treated, dtype=bool)
    n_strata = int(strata.max()) + 1 if strata.size else 0
    counts = np.zeros((n_strata, 2))
    np.add.at(counts, (strata, treated.astype(np.int64)), 1.0)
    rows_s, rows_t = np.nonzero(counts)
    x = np.zeros((rows_s.size, n_strata))
    x[np.arange(rows_s.size), rows_s] = 1.0
    model = LogisticRegression(
        C=np.inf, fit_intercept=False, solver="lbfgs", max_iter=1000, tol=1e-10, random_state=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, rows_t, sample_weight=counts[rows_s, rows_t])
    per_stratum = model.predict_proba(np.eye(n_strata))[:, 1]
    return per_stratum, per_stratum[strata]


def nearest_neighbour_means(
    query: np.ndarray, pool_scores: np.ndarray, pool_values: np.ndarray, *, tol: float = 1e-12
) -> np.ndarray:
    """1-nearest-neighbour matching on a score, with replacement, AVERAGING TIES.

    For each query score, the pool units at the minimal absolute distance (within ``tol``)
    are all matches and the result is the mean of their values. With a discrete confounder
    a whole stratum shares one score, so this returns the stratum's mean instead of the
    value of whichever unit happens to come first. Vectorised over distinct pool scores
    (sort + prefix sums), O((n_query + n_pool) log n_pool).
    """
    query = np.asarray(query, dtype=float)
    pool_scores = np.asarray(pool_scores, dtype=float)
    pool_values = np.asarray(pool_values, dtype=float)
    if pool_scores.size == 0:
        raise ValueError("cannot match: the other arm is empty")
    uniq, inv = np.unique(pool_scores, return_inverse=True)
    sums = np.bincount(inv, weights=pool_values, minlength=uniq.size)
    cnts = np.bincount(inv, minlength=uniq.size).astype(float)
    csum = np.concatenate([[0.0], np.cumsum(sums)])
    ccnt = np.concatenate([[0.0], np.cumsum(cnts)])
    pos = np.searchsorted(uniq, query)
    left = np.clip(pos - 1, 0, uniq.size - 1)
    right = np.clip(pos, 0, uniq.size - 1)
    d_left = np.where(pos > 0, np.abs(query - uniq[left]), np.inf)
    d_right = np.where(pos < uniq.size, np.abs(uniq[right] - query), np.inf)
    d_min = np.minimum(d_left, d_right)
    lo = np.searchsorted(uniq, query - d_min - tol, side="left")
    hi = np.searchsorted(uniq, query + d_min + tol, side="right")
    return (csum[hi] - csum[lo]) / (ccnt[hi] - ccnt[lo])


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
) -> pd.DataFrame:
    """APE_o, APE_m, PIE % (and the oracle APE) for ONE system under ONE distribution.

    ``observed``: one row per unit with its assigned ``perturbation_id``, its confounder
    column (``confounder``; ``"company"`` means ``ticker``) and ``outcome`` under the assigned
    perturbation (i.e. :func:`assign_treatments` joined to the system's window errors).

    For each treatment ``p != control`` present (sorted), on the units assigned ``p`` or
    ``control`` only:

    * ``ape_observational`` = mean(Y | p) - mean(Y | control);
    * ``ape_matched``: propensity e(z) from :func:`propensity_scores` (unpenalised logistic
      regression on the one-hot confounder = the stratum's treated share), then
      1-nearest-neighbour matching on e with replacement, every unit at the minimal distance
      being a match and their outcomes AVERAGED (:func:`nearest_neighbour_means`; never the
      first index). The missing potential outcome of each unit is imputed from its matches
      in the other arm. ``estimand="ATE"``: mean over all p/control units of
      ``Y_i(1) - Y_i(0)``; ``"ATT"``: mean over the treated units.
      With a discrete confounder and both arms in every stratum this equals exact
      stratification: ATE = sum_s (N_s / N) (mean_T,s - mean_C,s), ATT weights by the treated
      counts n_T,s / n_T (units of a stratum share a score; their own stratum is at distance
      0, so all of its other-arm units are the tied matches). Strata with only one arm
      (``strata_without_overlap``) are matched to the nearest propensity of another stratum.
    * ``pie_percent`` = | |ape_observational| - |ape_matched| | x 100 (paper eq. 3);
    * with ``full_grid`` (this system's window errors: every unit under every perturbation,
      keyed by ``unit_columns``): ``ape_oracle`` = the true effect -- ATE: mean of
      Y(p) - Y(control) over ALL units in ``observed`` (whatever they were assigned); ATT: over
      the units assigned p -- and ``matching_error = ape_matched - ape_oracle``. NaN otherwise.

    ``seed`` is passed to scikit-learn as ``random_state``; the result is deterministic
    (ties are averaged, not broken at random). Raises ``ValueError`` if the control arm is
    empty or an outcome is NaN.

    Returns :data:`EFFECT_COLUMNS`, one row per treatment: ``perturbation_id, n_treated,
    n_control, ape_observational, ape_matched, ape_oracle, matching_error, pie_percent,
    strata_without_overlap`` (confounder values present among the p/control units with only
    one arm), ``n_strata`` (confounder values present), ``estimand``.
    """
    estimand = estimand.upper()
    if estimand not in {"ATE", "ATT"}:
        raise ValueError(f"estimand must be 'ATE' or 'ATT' (got {estimand!r})")
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

    wide = None
    all_keys = pd.Index([])
    if full_grid is not None:
        wide = _potential_outcomes(full_grid, unit_columns, outcome)
        all_keys = (
            pd.MultiIndex.from_frame(observed[unit_columns])
            if len(unit_columns) > 1
            else pd.Index(observed[unit_columns[0]])
        )
    rows: list[dict[str, object]] = []
    for treatment in sorted(set(pid_all) - {control}):
        mask = (pid_all == treatment) | (pid_all == control)
        sub = observed.loc[mask]
        y = y_all[mask]
        t = pid_all[mask] == treatment
        codes, uniques = pd.factorize(sub[column], sort=True)
        if np.any(codes < 0):
            raise ValueError(f"observed has missing {column!r} values")
        n_strata = len(uniques)
        has_t = np.bincount(codes[t], minlength=n_strata) > 0
        has_c = np.bincount(codes[~t], minlength=n_strata) > 0
        no_overlap = int(np.sum(has_t != has_c))

        ape_o = float(y[t].mean() - y[~t].mean())
        _, e = propensity_scores(codes, t, seed=seed)
        y0_for_treated = nearest_neighbour_means(e[t], e[~t], y[~t], tol=tie_tolerance)
        effect_treated = y[t] - y0_for_treated
        if estimand == "ATT":
            ape_m = float(effect_treated.mean())
        else:
            y1_for_control = nearest_neighbour_means(e[~t], e[t], y[t], tol=tie_tolerance)
            ape_m = float((effect_treated.sum() + (y1_for_control - y[~t]).sum()) / y.size)

        ape_oracle = np.nan
        if wide is not None:
            if estimand == "ATE":
                ape_oracle = float(_oracle(wide, all_keys, treatment, control, outcome).mean())
            else:
                treated_keys = all_keys[np.flatnonzero(mask)[t]]
                ape_oracle = float(_oracle(wide, treated_keys, treatment, control, outcome).mean())
        rows.append(
            {
                "perturbation_id": treatment,
                "n_treated": int(t.sum()),
                "n_control": int((~t).sum()),
                "ape_observational": ape_o,
                "ape_matched": ape_m,
                "ape_oracle": ape_oracle,
                "matching_error": ape_m - ape_oracle,
                "pie_percent": abs(abs(ape_o) - abs(ape_m)) * 100.0,
                "strata_without_overlap": no_overlap,
                "n_strata": n_strata,
                "estimand": estimand,
            }
        )
    out = pd.DataFrame.from_records(rows, columns=EFFECT_COLUMNS)
    return out.astype(
        {
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
    )


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
