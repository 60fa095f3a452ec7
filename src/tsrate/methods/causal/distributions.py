"""Confounder distributions and the confounded treatment draw (paper section 4.2,
Algorithm 2; DESIGN.md method decisions).

For each *confounder distribution* every window draws one perturbation, with the favoured
value of the confounder (an industry or a company) drawing the treatments P1..P6 more often
than the control P0 (``treated_weight`` / ``control_weight``). The estimators that undo the
bias this creates live in :mod:`tsrate.methods.causal.matching` and
:mod:`tsrate.methods.causal.estimators`.

Conventions
-----------
* A *unit* is one window of one ticker, keyed by ``(ticker, window_end_date)``.
* The control perturbation is ``"P0"`` (:data:`CONTROL`); every other perturbation id is a
  treatment.
* Confounder names: ``"industry"``, ``"ticker"``; ``"company"`` is an alias of ``"ticker"``
  (:func:`confounder_column`). Any other name is used as a column name as is.
* Seeds: every distribution seeds its own generator from ``(seed, distribution_id)``
  (:func:`distribution_seed`, :func:`draw_seed`), so its draw does not depend on the others.
* Scale: a study of 500 companies has ~500 distributions x ~170 000 windows per perturbation
  set; :func:`treatment_draws` works on integer codes one distribution at a time instead of
  long DataFrames.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "CONTROL",
    "ASSIGNMENT_COLUMNS",
    "DISTRIBUTION_COLUMNS",
    "DISTRIBUTION_SOURCES",
    "TreatmentDraw",
    "TreatmentDraws",
    "assign_treatments",
    "confounder_column",
    "default_distributions",
    "distribution_problems",
    "distribution_seed",
    "draw_seed",
    "study_distributions",
    "treatment_draws",
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
