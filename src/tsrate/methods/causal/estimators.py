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

import hashlib
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

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

#: var ``distribution_aggregation`` -> how :func:`worst_case` aggregates (APE_m, PIE %)
#: over the distributions of a confounder (used by perturbation_effect_scores and
#: rating_stability).
DISTRIBUTION_AGGREGATIONS = {"max": ("max_abs", "max"), "mean": ("mean_abs", "mean")}


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


def draw_seed(seed: int, distribution_id: str, draw: int = 0) -> np.random.SeedSequence:
    """Seed of draw ``draw`` (0-based) of a distribution's confounded treatment assignment.

    Draw 0 is :func:`distribution_seed` itself -- the single draw of the paper, unchanged --
    and draw r > 0 seeds with the distribution id suffixed ``"#r"``. So ``treatment_draws: 1``
    reproduces the single draw, and adding draws never changes the earlier ones.
    """
    draw = int(draw)
    if draw < 0:
        raise ValueError(f"draw must be a non-negative integer (got {draw})")
    return distribution_seed(
        seed, str(distribution_id) if draw == 0 else f"{distribution_id}#{draw}"
    )


# --------------------------------------------------------------------------------------
# Treatment assignment
# --------------------------------------------------------------------------------------


def _count_at_most(cumulative: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``np.searchsorted(cumulative, u, side="right")`` for a short sorted ``cumulative``:
    the number of its entries <= u, counted with one comparison per entry (much faster than
    a binary search per unit for a handful of perturbations; the same integers)."""
    out = np.zeros(u.shape, dtype=np.int64)
    for edge in cumulative:
        out += u >= edge
    return out


def _check_weight(value: object, name: str, distribution_id: str) -> float:
    try:
        w = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"distribution {distribution_id!r}: {name} is not a number") from err
    if not np.isfinite(w) or w <= 0:
        raise ValueError(f"distribution {distribution_id!r}: {name} must be > 0 (got {value!r})")
    return w


@dataclass(frozen=True)
class TreatmentDraw:
    """One distribution's draw: ``codes[i]`` indexes :attr:`TreatmentDraws.perturbations`
    for unit ``i`` of :attr:`TreatmentDraws.units`; ``favored[i]`` marks its favoured units."""

    distribution: dict
    codes: np.ndarray
    favored: np.ndarray


@dataclass(frozen=True)
class TreatmentDraws:
    """The draws of :func:`assign_treatments` in compact form (:func:`treatment_draws`).

    ``units``: the units sorted by ``(ticker, window_end_date)``, index ``0..n-1``;
    ``perturbations``: ``[control, *sorted(treatments)]`` (the codes index it);
    ``draws``: an iterator of :class:`TreatmentDraw`, one per distribution kept, in
    ``distribution_id`` order, each drawn only when the iterator reaches it (so millions of
    rows never have to be held at once).
    """

    units: pd.DataFrame
    perturbations: np.ndarray
    draws: Iterator[TreatmentDraw]


def treatment_draws(
    units: pd.DataFrame,
    distributions: pd.DataFrame,
    perturbations: Sequence[str],
    seed: int,
    *,
    control: str = CONTROL,
    missing_favored: str = "raise",
    draw: int = 0,
) -> TreatmentDraws:
    """The draws of :func:`assign_treatments` as integer codes, one distribution at a time.

    Same arguments, validation, conventions and random numbers as :func:`assign_treatments`
    (which is built on it): ``assign_treatments`` is exactly the long-format expansion of
    these codes. Every argument is validated before the first draw. ``draw`` selects the
    repetition of the draw (:func:`draw_seed`; 0 = the paper's single draw).
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
    spans = base.groupby("ticker", observed=True)["industry"].nunique()
    if (spans > 1).any():
        raise ValueError(f"tickers in more than one industry: {sorted(spans[spans > 1].index)}")
    n = len(base)

    # The confounder values as strings, factorised once per column (favoured = one code).
    string_codes: dict[str, tuple[np.ndarray, dict[str, int]]] = {}

    def favored_mask(column: str, value: object) -> np.ndarray:
        if column not in string_codes:
            codes, uniques = pd.factorize(base[column].astype(str))
            string_codes[column] = (codes, {str(u): i for i, u in enumerate(uniques)})
        codes, lookup = string_codes[column]
        code = lookup.get(str(value))
        return codes == code if code is not None else np.zeros(n, dtype=bool)

    plan: list[tuple[dict, str, float, float]] = []
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
        if not favored_mask(column, dist["favored_value"]).any():
            if missing_favored == "raise":
                raise ValueError(
                    f"distribution {dist_id!r}: favored value {dist['favored_value']!r} of "
                    f"{column!r} matches no unit (filter the distributions, or pass "
                    "missing_favored='drop')"
                )
            if missing_favored == "drop":
                continue
        plan.append((dist, column, tw, cw))

    uniform_cum = np.arange(1, k + 2, dtype=float) / (k + 1)
    code_type = np.int8 if k < 127 else np.int64

    def draws() -> Iterator[TreatmentDraw]:
        for dist, column, tw, cw in plan:
            favored = favored_mask(column, dist["favored_value"])
            favored_w = np.array([cw, *([tw] * k)])
            favored_cum = np.cumsum(favored_w) / favored_w.sum()
            rng = np.random.default_rng(draw_seed(seed, str(dist["distribution_id"]), draw))
            u = rng.random(n)
            idx = np.where(favored, _count_at_most(favored_cum, u), _count_at_most(uniform_cum, u))
            idx = np.minimum(idx, k).astype(code_type)
            yield TreatmentDraw(distribution=dist, codes=idx, favored=favored)

    return TreatmentDraws(units=base, perturbations=ordered, draws=draws())


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
    For many distributions x units use :func:`treatment_draws` (the same draws as integer
    codes, one distribution at a time) instead of this long frame.
    """
    drawn = treatment_draws(
        units,
        distributions,
        perturbations,
        seed,
        control=control,
        missing_favored=missing_favored,
    )
    base, ordered = drawn.units, drawn.perturbations
    frames: list[pd.DataFrame] = []
    for draw in drawn.draws:
        dist = draw.distribution
        out = base.copy()
        out.insert(0, "favored_value", dist["favored_value"])
        out.insert(0, "confounder", dist["confounder"])
        out.insert(0, "distribution_id", dist["distribution_id"])
        out["perturbation_id"] = ordered[draw.codes].astype(str)
        out["is_favored"] = draw.favored
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


#: var ``confounder_distributions``: where the distributions come from.
DISTRIBUTION_SOURCES = ("derived", "seed")


def study_distributions(
    companies: pd.DataFrame,
    *,
    source: str = "derived",
    override: pd.DataFrame | None = None,
    max_company_distributions: int = 24,
    treated_weight: float = 2.0,
    control_weight: float = 1.0,
) -> pd.DataFrame:
    """The confounder distributions of a study (DESIGN.md method decisions).

    ``companies``: the study's ``(ticker, industry)`` pairs (e.g. the distinct ones of
    window_errors). ``source="derived"`` (default): one distribution per industry of the
    study, ``distribution_id = "industry:<industry>"``, and one per company,
    ``"company:<ticker>"``, each favouring that value with ``treated_weight`` (2) per
    treatment and ``control_weight`` (1) for P0 -- the paper's rule. Ids name the favoured
    value, so a distribution's draw (:func:`draw_seed`) does not change when the study gains or
    loses other tickers.

    Bound for large studies: at most ``max_company_distributions`` (K) company distributions,
    chosen deterministically and spread over industries: industries sorted, tickers sorted
    inside each, then taken round-robin (first ticker of every industry, then the second, ...)
    until K. Industry distributions are never bounded (industries are few). So the number of
    distributions is at most (#industries + K) whatever the number of tickers, and
    treatment_assignments grows linearly in windows.

    ``source="seed"``: ``override`` (the ``confounder_distributions`` seed) restricted to the
    rows whose favoured value is in the study (the others match no window and are dropped).
    Check it first with :func:`distribution_problems`.

    Returns :data:`DISTRIBUTION_COLUMNS` sorted by distribution_id.
    """
    if source not in DISTRIBUTION_SOURCES:
        raise ValueError(
            f"confounder_distributions must be one of {list(DISTRIBUTION_SOURCES)} (got {source!r})"
        )
    missing = {"ticker", "industry"} - set(companies.columns)
    if missing:
        raise ValueError(f"companies lacks columns {sorted(missing)}")
    comp = companies[["ticker", "industry"]].astype(str).drop_duplicates()
    if comp["ticker"].duplicated().any():
        raise ValueError("a ticker appears under more than one industry")
    if source == "seed":
        if override is None:
            raise ValueError("confounder_distributions: seed needs the seed table (override)")
        rows = override[DISTRIBUTION_COLUMNS].copy()
        column = rows["confounder"].astype(str).map(confounder_column)
        favored = rows["favored_value"].astype(str)
        keep = ((column == "industry") & favored.isin(set(comp["industry"]))) | (
            (column == "ticker") & favored.isin(set(comp["ticker"]))
        )
        rows = rows.loc[keep]
        return rows.sort_values("distribution_id").reset_index(drop=True)
    k = int(max_company_distributions)
    if k < 0:
        raise ValueError(f"max_company_distributions must be >= 0 (got {k})")
    by_industry = {
        industry: sorted(group["ticker"]) for industry, group in comp.groupby("industry", sort=True)
    }
    chosen: list[str] = []
    depth = 0
    while len(chosen) < k and any(depth < len(t) for t in by_industry.values()):
        for tickers in by_industry.values():
            if depth < len(tickers) and len(chosen) < k:
                chosen.append(tickers[depth])
        depth += 1
    rows = [(f"industry:{ind}", "industry", ind) for ind in by_industry]
    rows += [(f"company:{t}", "company", t) for t in chosen]
    out = pd.DataFrame(rows, columns=["distribution_id", "confounder", "favored_value"])
    out["treated_weight"] = float(treated_weight)
    out["control_weight"] = float(control_weight)
    return out.sort_values("distribution_id").reset_index(drop=True)[DISTRIBUTION_COLUMNS]


def distribution_problems(distributions: pd.DataFrame, companies: pd.DataFrame) -> list[str]:
    """One line per problem of an override table of distributions for a study.

    ``distributions``: the ``confounder_distributions`` seed (used with var
    ``confounder_distributions: seed``); ``companies``: the study's ``(ticker, industry)``.
    Reports missing columns, duplicate ids, unknown confounders, weights that are not
    positive numbers, and a confounder (industry, company) for which no distribution favours a
    value of the study -- that confounder's APE and PIE would be missing. An empty list means
    the override is usable. (Favoured values outside the study are not problems: those rows
    are dropped.)
    """
    missing = set(DISTRIBUTION_COLUMNS) - set(distributions.columns)
    if missing:
        return [f"confounder_distributions lacks columns {sorted(missing)}"]
    problems: list[str] = []
    dup = sorted(
        distributions.loc[distributions["distribution_id"].duplicated(), "distribution_id"]
        .astype(str)
        .unique()
    )
    if dup:
        problems.append(f"confounder_distributions: duplicate distribution_id {dup}")
    study = {
        "industry": set(companies["industry"].astype(str)),
        "ticker": set(companies["ticker"].astype(str)),
    }
    covered = {"industry": False, "ticker": False}
    for row in distributions.to_dict("records"):
        dist_id = str(row["distribution_id"])
        column = confounder_column(str(row["confounder"]))
        if column not in study:
            problems.append(
                f"confounder_distributions {dist_id}: unknown confounder {row['confounder']!r} "
                "(use 'industry' or 'company')"
            )
            continue
        for name in ("treated_weight", "control_weight"):
            try:
                _check_weight(row[name], name, dist_id)
            except ValueError as err:
                problems.append(
                    f"confounder_distributions {dist_id}: {name} must be a number > 0 (got {row[name]!r})"
                )
                del err
        if str(row["favored_value"]) in study[column]:
            covered[column] = True
    for column, name in (("industry", "industry"), ("ticker", "company")):
        if not covered[column]:
            problems.append(
                f"confounder_distributions: no {name} distribution favours a {name} of this study, "
                f"so ape_{name} and pie_{name} would be missing (hint: var "
                "confounder_distributions: derived)"
            )
    return problems


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
    scores, which makes the tie handling of the matching exact. :func:`stratum_propensity`
    is the closed form of the same maximum-likelihood fit (used by default).
    """
    # imported here: sklearn costs about a second to import, and the study check imports
    # this module (distribution_problems) before every run
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

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


def stratum_propensity(n_treated: np.ndarray, n_control: np.ndarray) -> np.ndarray:
    """Closed-form propensity of a discrete confounder: the stratum's treated share.

    The unpenalised logistic regression of :func:`propensity_scores` (one-hot stratum, no
    intercept) has one free coefficient per stratum, so its likelihood factorises by stratum
    and each stratum's maximum-likelihood propensity is ``n_T,s / (n_T,s + n_C,s)`` -- the
    value lbfgs converges to (to its tolerance, about 1e-8). A stratum with one arm gets
    exactly 1 or 0 (lbfgs stops close to it). Strata of equal share get bit-identical scores
    (``n / d`` is correctly rounded), so the tie rule of the matching sees them as tied.
    """
    n_treated = np.asarray(n_treated, dtype=float)
    n_control = np.asarray(n_control, dtype=float)
    return n_treated / (n_treated + n_control)


def _nearest_weighted_means(
    query: np.ndarray,
    pool_scores: np.ndarray,
    pool_sums: np.ndarray,
    pool_counts: np.ndarray,
    tol: float,
) -> np.ndarray:
    """:func:`nearest_neighbour_means` with pool entries that stand for several units: entry
    j holds ``pool_counts[j]`` units whose outcomes sum to ``pool_sums[j]`` (all at score
    ``pool_scores[j]``). Result: mean outcome of all units at the minimal distance."""
    if pool_scores.size == 0:
        raise ValueError("cannot match: the other arm is empty")
    uniq, inv = np.unique(pool_scores, return_inverse=True)
    sums = np.bincount(inv, weights=pool_sums, minlength=uniq.size)
    cnts = np.bincount(inv, weights=pool_counts, minlength=uniq.size)
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
    pool_values = np.asarray(pool_values, dtype=float)
    return _nearest_weighted_means(
        np.asarray(query, dtype=float),
        np.asarray(pool_scores, dtype=float),
        pool_values,
        np.ones(pool_values.shape),
        tol,
    )


def _matched_from_strata(
    n_t: np.ndarray,
    sum_t: np.ndarray,
    n_c: np.ndarray,
    sum_c: np.ndarray,
    estimand: str,
    tol: float,
) -> float:
    """APE_m from per-stratum counts and outcome sums of the two arms (closed form).

    The matching of :func:`perturbation_effects` with the propensity of
    :func:`stratum_propensity`: every unit of a stratum has the stratum's score, so matching
    a treated unit means taking the mean control outcome of the strata at the nearest score
    (its own stratum, at distance 0, when it has controls; with every stratum of EQUAL score,
    which changes nothing: pooling strata of equal propensity gives the same sum as
    stratifying them, for ATE and ATT alike) -- and likewise for control units. So the
    per-unit sums of the matching collapse to per-stratum sums. When every stratum present
    holds both arms this is exact stratification, computed directly.
    """
    present = (n_t + n_c) > 0
    n_t, sum_t, n_c, sum_c = n_t[present], sum_t[present], n_c[present], sum_c[present]
    has_t, has_c = n_t > 0, n_c > 0
    if has_t.all() and has_c.all():
        treated_total = float(np.sum(sum_t - n_t * (sum_c / n_c)))
        if estimand == "ATT":
            return treated_total / float(n_t.sum())
        control_total = float(np.sum(n_c * (sum_t / n_t) - sum_c))
        return (treated_total + control_total) / float(n_t.sum() + n_c.sum())
    score = stratum_propensity(n_t, n_c)
    y0 = _nearest_weighted_means(score[has_t], score[has_c], sum_c[has_c], n_c[has_c], tol)
    treated_total = float(np.sum(sum_t[has_t] - n_t[has_t] * y0))
    if estimand == "ATT":
        return treated_total / float(n_t.sum())
    y1 = _nearest_weighted_means(score[has_c], score[has_t], sum_t[has_t], n_t[has_t], tol)
    control_total = float(np.sum(n_c[has_c] * y1 - sum_c[has_c]))
    return (treated_total + control_total) / float(n_t.sum() + n_c.sum())


def _matched_logistic(
    y: np.ndarray, t: np.ndarray, strata: np.ndarray, estimand: str, tol: float, seed: int
) -> float:
    """APE_m with the fitted logistic propensity and unit-level matching (the reference
    implementation behind ``propensity="logistic"``)."""
    _, codes = np.unique(strata, return_inverse=True)
    _, e = propensity_scores(codes, t, seed=seed)
    y0_for_treated = nearest_neighbour_means(e[t], e[~t], y[~t], tol=tol)
    effect_treated = y[t] - y0_for_treated
    if estimand == "ATT":
        return float(effect_treated.mean())
    y1_for_control = nearest_neighbour_means(e[~t], e[t], y[t], tol=tol)
    return float((effect_treated.sum() + (y1_for_control - y[~t]).sum()) / y.size)


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
            ape_m = _matched_from_strata(
                n_t.astype(float), sums[code], n_c.astype(float), sum_c, estimand, tol
            )
        else:
            mask = (codes == code) | (codes == control_code)
            ape_m = _matched_logistic(
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


def check_method(estimand: str, propensity: str) -> str:
    estimand = estimand.upper()
    if estimand not in {"ATE", "ATT"}:
        raise ValueError(f"estimand must be 'ATE' or 'ATT' (got {estimand!r})")
    if propensity not in {"share", "logistic"}:
        raise ValueError(f"propensity must be 'share' or 'logistic' (got {propensity!r})")
    return estimand


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
    """
    estimand = check_method(estimand, "share")
    outcomes = np.asarray(outcomes, dtype=float)
    labels = np.asarray([str(p) for p in perturbations], dtype=object)
    if outcomes.ndim != 2 or outcomes.shape[1] != labels.size:
        raise ValueError("outcomes must be a (units x perturbations) matrix")
    if control not in set(labels):
        raise ValueError(f"full_grid has no outcomes for perturbation {control!r}")
    control_code = int(np.flatnonzero(labels == control)[0])
    assigned = np.asarray(assigned)
    draws = assigned[None, :] if assigned.ndim == 1 else assigned
    if draws.ndim != 2 or draws.shape[1] != outcomes.shape[0]:
        raise ValueError("assigned must have one entry per unit (row of outcomes)")
    if isinstance(strata, np.ndarray) and strata.ndim == 1:
        per_draw = [strata] * draws.shape[0]
    else:
        per_draw = list(strata)
    if len(per_draw) != draws.shape[0]:
        raise ValueError("strata must be one array, or one array per distribution")
    n_units = outcomes.shape[0]
    unit_index = np.arange(n_units)
    # True effect of every unit under every perturbation; the all-units ATE oracle is the
    # same for every distribution that observes every unit.
    with np.errstate(invalid="ignore"):
        effect = outcomes - outcomes[:, [control_code]]
    complete = np.isfinite(effect).all(axis=0)
    all_units_oracle = {c: float(effect[:, c].mean()) for c in range(labels.size) if complete[c]}

    frames_rows: list[dict[str, object]] = []
    flat = outcomes.ravel()
    n_strata_of: dict[int, int] = {}
    for d in range(draws.shape[0]):
        codes = draws[d].astype(np.int64)
        observed = codes >= 0
        every_unit = bool(observed.all())
        y = flat[unit_index * labels.size + (codes if every_unit else np.maximum(codes, 0))]
        if not np.all(np.isfinite(y if every_unit else y[observed])):
            raise ValueError(f"observed has NaN/infinite {outcome!r} values")
        stratum = np.asarray(per_draw[d], dtype=np.int64)
        if id(per_draw[d]) not in n_strata_of:
            n_strata_of[id(per_draw[d])] = int(stratum.max()) + 1 if stratum.size else 0
        n_strata = n_strata_of[id(per_draw[d])]

        def oracle(
            code: int,
            treated: np.ndarray | None,
            observed: np.ndarray = observed,
            every_unit: bool = every_unit,
        ) -> float:
            if treated is None and every_unit and code in all_units_oracle:
                return all_units_oracle[code]
            keep = observed if treated is None else np.zeros(n_units, dtype=bool)
            if treated is not None:
                keep[np.flatnonzero(observed)[treated]] = True
            diff = effect[keep, code]
            if not np.all(np.isfinite(diff)):
                raise ValueError(
                    f"full_grid lacks a finite {outcome!r} under {labels[code]!r} or "
                    f"{control!r} for some units (the counterfactual grid must be complete)"
                )
            return float(diff.mean())

        rows = _effect_records(
            y,
            codes,
            labels,
            control_code,
            stratum,
            n_strata,
            estimand,
            tie_tolerance,
            "share",
            0,
            oracle,
        )
        for row in rows:
            row["draw"] = d
        frames_rows.extend(rows)
    out = pd.DataFrame.from_records(frames_rows, columns=["draw", *EFFECT_COLUMNS])
    return out.astype({"draw": "int64", **_EFFECT_TYPES})


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
