"""Statistical tests behind the statistical-bias score (WRS): Student t-tests and Algorithm 1.

The user-study statistics (one-sample and paired t-tests, Spearman) are in
:mod:`tsrate.methods.user_study`; they share this module's t distribution functions.

Pure functions: numbers / pandas in, small frozen dataclasses / DataFrames out. Nothing here
touches the warehouse; thin dbt Python models call these.

Conventions used throughout this module
---------------------------------------
* Student's t-test means the two-sample, two-sided test with pooled variance
  (``scipy.stats.ttest_ind(equal_var=True)``); degrees of freedom ``n_a + n_b - 2``.
* Variances are sample variances (``ddof=1``).
* A confidence level ``c`` (e.g. 0.95) rejects H0 "equal means" when ``p < 1 - c`` (strictly).
  Because that rule is monotone in ``c``, a pair rejected at 95 % is also rejected at 75 % and
  60 %: the per-level flags of one pair are nested.
* The Weighted Rejection Score (WRS, paper eq. 1 / Algorithm 1) is a SUM over unordered pairs of
  groups and over confidence levels of the level's weight whenever H0 is rejected; see
  :func:`weighted_rejection_scores` for the evidence from the paper's tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy import special as _special

__all__ = [
    "TTest",
    "pair_indices",
    "as_finite_1d",
    "t_cdf",
    "t_ppf",
    "t_sf",
    "validate_confidence_levels",
    "student_t_test",
    "student_t_test_from_summary",
    "text_array",
    "refuse_null_groups",
    "weighted_rejection_pairs",
    "weighted_rejection_scores",
    "PAIR_COLUMNS",
    "WRS_COLUMNS",
    "complete_systems",
    "wrs_pair_table",
    "wrs_table",
]

#: Output columns of :func:`weighted_rejection_pairs` (one row per pair x confidence level).
PAIR_COLUMNS: list[str] = [
    "system_id",
    "perturbation_id",
    "within_group",
    "group_a",
    "group_b",
    "n_a",
    "n_b",
    "mean_a",
    "mean_b",
    "t_statistic",
    "dof",
    "p_value",
    "confidence",
    "weight",
    "alpha",
    "t_critical",
    "rejected",
    "weighted_rejection",
]

#: Output columns of :func:`weighted_rejection_scores`.
WRS_COLUMNS: list[str] = ["system_id", "perturbation_id", "raw_score", "n_pairs", "max_score"]


# --------------------------------------------------------------------------------------
# Two-sample Student t-test
# --------------------------------------------------------------------------------------


# Student t distribution through scipy.special (the functions scipy.stats.t calls; the
# same values, tested): importing scipy.stats costs ~0.35 s more, paid by the first
# Python model of every dbt build.
def t_sf(t, dof):  # noqa: ANN001, ANN202 - scalars or arrays, as scipy.stats.t.sf
    return _special.stdtr(dof, -np.asarray(t, dtype=float))


def t_cdf(t, dof):  # noqa: ANN001, ANN202 - as scipy.stats.t.cdf
    return _special.stdtr(dof, np.asarray(t, dtype=float))


def t_ppf(q, dof):  # noqa: ANN001, ANN201 - as scipy.stats.t.ppf (stdtrit(df, 0) is +inf)
    """Student t quantile, as ``scipy.stats.t.ppf`` (elementwise, broadcast)."""
    q = np.asarray(q, dtype=float)
    quantile = _special.stdtrit(dof, q)
    return np.where((q == 0.0) & ~np.isnan(quantile), -np.inf, quantile)


@dataclass(frozen=True)
class TTest:
    """Result of a two-sample, two-sided Student t-test (pooled variance).

    ``t`` is ``(mean_a - mean_b) / se``: positive when group a has the larger mean.
    ``dof`` is ``n_a + n_b - 2``; ``p`` is the two-sided p-value.
    """

    t: float
    dof: int
    p: float
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float


def as_finite_1d(values: Sequence[float] | np.ndarray | pd.Series, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; drop or fix them first")
    return arr


def student_t_test_from_summary(
    n_a: int, mean_a: float, var_a: float, n_b: int, mean_b: float, var_b: float
) -> TTest:
    """Student t-test from group summaries (``var_*`` are sample variances, ddof=1).

    Same conventions and degenerate cases as :func:`student_t_test`; a variance of exactly 0
    marks a constant group.
    """
    n_a = int(n_a)
    n_b = int(n_b)
    if n_a < 2 or n_b < 2:
        raise ValueError(
            f"Student t-test needs at least 2 values in each group (got n_a={n_a}, n_b={n_b})"
        )
    dof = n_a + n_b - 2
    pooled = ((n_a - 1) * float(var_a) + (n_b - 1) * float(var_b)) / dof
    diff = float(mean_a) - float(mean_b)
    if pooled == 0.0:
        # Both groups constant: the test statistic is 0/0 or x/0.
        if diff == 0.0:
            t, p = 0.0, 1.0
        else:
            t, p = math.copysign(math.inf, diff), 0.0
    else:
        se = math.sqrt(pooled * (1.0 / n_a + 1.0 / n_b))
        t = diff / se
        p = float(2.0 * t_sf(abs(t), dof))
    return TTest(
        t=float(t),
        dof=dof,
        p=float(p),
        n_a=n_a,
        n_b=n_b,
        mean_a=float(mean_a),
        mean_b=float(mean_b),
    )


def student_t_test(
    a: Sequence[float] | np.ndarray | pd.Series, b: Sequence[float] | np.ndarray | pd.Series
) -> TTest:
    """Two-sample, two-sided Student t-test with pooled variance.

    Equals ``scipy.stats.ttest_ind(a, b, equal_var=True)`` wherever SciPy returns finite
    numbers. Degenerate cases, defined here because SciPy returns NaN or warns:

    * either group has fewer than 2 values -> ``ValueError``;
    * NaN or infinite values -> ``ValueError`` (clean the data first);
    * both groups constant (pooled variance 0) and equal means -> ``t = 0``, ``p = 1``;
    * both groups constant and different means -> ``t = +/-inf`` (sign of
      ``mean_a - mean_b``), ``p = 0``.

    A group is "constant" when all its values are identical (checked exactly, so tiny
    floating-point residue in the variance of a constant group cannot turn ``p = 1`` into
    a spurious rejection).
    """
    x = as_finite_1d(a, "a")
    y = as_finite_1d(b, "b")
    if x.size < 2 or y.size < 2:
        raise ValueError(
            f"Student t-test needs at least 2 values in each group (got n_a={x.size}, n_b={y.size})"
        )
    var_x = 0.0 if np.all(x == x[0]) else float(np.var(x, ddof=1))
    var_y = 0.0 if np.all(y == y[0]) else float(np.var(y, ddof=1))
    mean_x = float(x[0]) if var_x == 0.0 else float(np.mean(x))
    mean_y = float(y[0]) if var_y == 0.0 else float(np.mean(y))
    return student_t_test_from_summary(x.size, mean_x, var_x, y.size, mean_y, var_y)


# --------------------------------------------------------------------------------------
# Weighted Rejection Score (Algorithm 1)
# --------------------------------------------------------------------------------------


def validate_confidence_levels(confidence_levels: pd.DataFrame) -> pd.DataFrame:
    """The ``confidence_levels`` seed, checked (columns, levels in (0, 1), weights)."""
    missing = {"confidence", "weight"} - set(confidence_levels.columns)
    if missing:
        raise ValueError(f"confidence_levels lacks columns {sorted(missing)}")
    levels = confidence_levels[["confidence", "weight"]].astype(float)
    if levels.empty:
        raise ValueError("confidence_levels is empty")
    if not np.all((levels["confidence"] > 0) & (levels["confidence"] < 1)):
        raise ValueError("confidence levels must lie strictly between 0 and 1 (e.g. 0.95)")
    if not np.all(np.isfinite(levels["weight"])):
        raise ValueError("confidence level weights must be finite")
    if levels["confidence"].duplicated().any():
        raise ValueError("confidence levels must be distinct")
    return levels.sort_values("confidence", ascending=False).reset_index(drop=True)


def _group_summaries(frame: pd.DataFrame, keys: list[str], outcome: str) -> pd.DataFrame:
    """n, mean, sample variance per key; variance forced to 0 for exactly-constant groups.

    Sorted by the key VALUES (categorical keys are turned back into their values, so the
    order does not depend on the order of the categories).
    """
    grouped = frame.groupby(keys, sort=True, dropna=False, observed=True)[outcome]
    summary = grouped.agg(n="count", mean="mean", var="var", vmin="min", vmax="max").reset_index()
    constant = summary["vmin"] == summary["vmax"]
    summary.loc[constant, "var"] = 0.0
    summary.loc[constant, "mean"] = summary.loc[constant, "vmin"]
    for key in keys:
        if isinstance(summary[key].dtype, pd.CategoricalDtype):
            summary[key] = summary[key].astype(object)
    summary = summary.sort_values(keys, kind="stable").reset_index(drop=True)
    return summary.drop(columns=["vmin", "vmax"])


def _t_tests_from_summaries(
    n_a: np.ndarray,
    mean_a: np.ndarray,
    var_a: np.ndarray,
    n_b: np.ndarray,
    mean_b: np.ndarray,
    var_b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, dof, p) of :func:`student_t_test_from_summary` for arrays of pairs at once.

    The same floating-point operations in the same order, so the results are bit-identical
    to the scalar function (``scipy.stats.t.sf`` is one ufunc either way); the caller has
    checked ``n >= 2``.
    """
    dof = n_a + n_b - 2
    pooled = ((n_a - 1) * var_a + (n_b - 1) * var_b) / dof
    diff = mean_a - mean_b
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(pooled * (1.0 / n_a + 1.0 / n_b))
        t = diff / se
    p = 2.0 * t_sf(np.abs(t), dof)
    degenerate = pooled == 0.0
    if degenerate.any():
        # Both groups constant: t = 0, p = 1 for equal means, else t = +/-inf, p = 0.
        same = degenerate & (diff == 0.0)
        differ = degenerate & (diff != 0.0)
        t = np.where(same, 0.0, np.where(differ, np.copysign(np.inf, diff), t))
        p = np.where(same, 1.0, np.where(differ, 0.0, p))
    return t, dof, p


def pair_indices(block_starts: np.ndarray, block_sizes: np.ndarray) -> tuple[np.ndarray, ...]:
    """Row indices (a, b) of every unordered pair inside each block, in the order of
    ``itertools.combinations`` over the block's rows, blocks in order."""
    firsts: list[np.ndarray] = []
    seconds: list[np.ndarray] = []
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for start, size in zip(block_starts.tolist(), block_sizes.tolist(), strict=True):
        if size < 2:
            continue
        if size not in cache:
            cache[size] = np.triu_indices(size, k=1)
        ia, ib = cache[size]
        firsts.append(ia + start)
        seconds.append(ib + start)
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(firsts), np.concatenate(seconds)


def weighted_rejection_pairs(
    window_errors: pd.DataFrame,
    group_column: str,
    confidence_levels: pd.DataFrame,
    within_column: str | None = None,
    outcome: str = "max_abs_residual",
    *,
    dropna: bool = False,
    string_columns: bool = False,
) -> pd.DataFrame:
    """Pairwise Student t-tests behind the Weighted Rejection Score (paper Algorithm 1).

    For every ``system_id`` x ``perturbation_id`` and every unordered pair of distinct values
    of ``group_column`` (``group_a < group_b`` in sort order), the outcome distributions of the
    two groups are compared with :func:`student_t_test`. With ``within_column`` (e.g.
    ``group_column="ticker", within_column="industry"``) only pairs sharing the same value of
    ``within_column`` are compared: the paper's intra-industry (company) analysis. Without it
    (e.g. ``group_column="industry"``) every pair of groups is compared: the inter-industry
    analysis. Each window of a group is one observation (all windows of all tickers of an
    industry pool into that industry's sample).

    Output grain -- LONG format: one row per (system_id, perturbation_id, pair, confidence
    level), columns :data:`PAIR_COLUMNS`:

    * ``within_group`` -- the shared ``within_column`` value, or None without ``within_column``;
    * ``n_a, n_b, mean_a, mean_b, t_statistic, dof, p_value`` -- the pair's test (repeated on
      each level row of the pair; ``t_statistic > 0`` means group a has the larger mean);
    * ``confidence, weight`` -- the level from ``confidence_levels``; ``alpha = 1 - confidence``;
    * ``t_critical`` -- two-sided critical value ``t.ppf(1 - alpha/2, dof)`` (for display);
    * ``rejected`` -- H0 "equal means" rejected at this level: ``p_value < alpha``
      (equivalently ``|t| > t_critical``);
    * ``weighted_rejection`` -- this row's contribution to the WRS: ``weight`` if rejected,
      else 0.

    Long format was chosen so that per-level flags have fixed column names (no ``rejected_95``
    style columns that change with the seed) and so that the WRS is simply
    ``SUM(weighted_rejection)`` at the (system_id, perturbation_id) grain; the pair's own
    weighted rejections are ``SUM(weighted_rejection)`` over its level rows. Rows are sorted by
    system, perturbation, within_group, group_a, group_b, confidence (descending).

    Rows with a NaN outcome raise ``ValueError`` unless ``dropna=True`` (then they are dropped
    before testing and ``n_a``/``n_b`` count the remaining rows). Rows with a null
    ``group_column`` or ``within_column`` value always raise ``ValueError``: a null is no
    group to compare. A group with fewer than two observations in some system x
    perturbation raises ``ValueError`` naming it.

    Computation: the two-sample pooled t-test needs only n, mean and sample variance per
    group, so ONE groupby summarises every group and the tests of all pairs are computed at
    once with array arithmetic (:func:`student_t_test_from_summary`'s formulas and degenerate
    cases, bit for bit). Key columns may be pandas categoricals (cheap for millions of rows);
    the output holds their values. ``string_columns=True`` returns the text columns as
    pandas ``string`` (Arrow) instead of object -- the same values (None as <NA>), built from
    the few distinct group values by index instead of millions of Python strings (what
    :func:`wrs_pair_table` stores).
    """
    needed = {"system_id", "perturbation_id", group_column, outcome}
    if within_column is not None:
        needed.add(within_column)
    missing = needed - set(window_errors.columns)
    if missing:
        raise ValueError(f"window_errors lacks columns {sorted(missing)}")
    levels = validate_confidence_levels(confidence_levels)

    frame = window_errors[sorted(needed)]
    values = frame[outcome].to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        if not dropna:
            raise ValueError(
                f"{int(bad.sum())} rows have a NaN/infinite {outcome!r}; pass dropna=True to "
                "drop them"
            )
        frame = frame.loc[~bad]
        values = values[~bad]
    frame = frame.assign(**{outcome: values})

    if within_column is not None:
        # A group must belong to exactly one within-value (a ticker to one industry).
        spans = frame.groupby(group_column, observed=True)[within_column].nunique()
        if (spans > 1).any():
            raise ValueError(
                f"{group_column} values {sorted(map(str, spans[spans > 1].index))} appear under "
                f"more than one {within_column}"
            )
    keys = ["system_id", "perturbation_id"]
    if within_column is not None:
        keys.append(within_column)
    summary = _group_summaries(frame, [*keys, group_column], outcome)
    refuse_null_groups(summary, [group_column, within_column], size_column="n")

    # Blocks: consecutive summary rows sharing the keys (the summary is sorted by them).
    if len(summary):
        key_frame = summary[keys]
        new_block = np.ones(len(summary), dtype=bool)
        new_block[1:] = (key_frame.iloc[1:].to_numpy() != key_frame.iloc[:-1].to_numpy()).any(
            axis=1
        )
        starts = np.flatnonzero(new_block)
        sizes = np.diff(np.append(starts, len(summary)))
    else:
        starts = sizes = np.zeros(0, dtype=np.int64)
    ia, ib = pair_indices(starts, sizes)

    n = summary["n"].to_numpy(dtype=np.int64)
    mean = summary["mean"].to_numpy(dtype=float)
    var = summary["var"].to_numpy(dtype=float)
    small = (n[ia] < 2) | (n[ib] < 2)
    if small.any():
        first = int(np.flatnonzero(small)[0])
        ra, rb = summary.iloc[ia[first]], summary.iloc[ib[first]]
        raise ValueError(
            f"system {ra['system_id']!r}, perturbation {ra['perturbation_id']!r}: groups "
            f"{ra[group_column]!r} vs {rb[group_column]!r}: Student t-test needs at least 2 "
            f"values in each group (got n_a={int(ra['n'])}, n_b={int(rb['n'])})"
        )
    t, dof, p = _t_tests_from_summaries(n[ia], mean[ia], var[ia], n[ib], mean[ib], var[ib])

    confidence = levels["confidence"].to_numpy(dtype=float)
    weight = levels["weight"].to_numpy(dtype=float)
    alpha = 1.0 - confidence
    n_levels = confidence.size
    n_pairs = ia.size
    # t_critical depends on (dof, level) only: one ppf per distinct dof and level.
    dofs, dof_index = np.unique(dof, return_inverse=True)
    critical = t_ppf(1.0 - alpha[None, :] / 2.0, dofs[:, None]).reshape(dofs.size, n_levels)

    row_a = np.repeat(ia, n_levels)

    def text(column: str, rows: np.ndarray) -> np.ndarray | pd.api.extensions.ExtensionArray:
        values = summary[column].to_numpy(dtype=object)
        if string_columns:
            return text_array(values, rows)
        return values[rows]

    def per_pair(column: str) -> np.ndarray | pd.api.extensions.ExtensionArray:
        return text(column, row_a)

    rejected = np.repeat(p, n_levels) < np.tile(alpha, n_pairs)
    out = pd.DataFrame(
        {
            "system_id": per_pair("system_id"),
            "perturbation_id": per_pair("perturbation_id"),
            "within_group": (
                per_pair(within_column)
                if within_column is not None
                else (
                    text_array(np.array([None], dtype=object), np.zeros(row_a.size, np.int64))
                    if string_columns
                    else np.full(n_pairs * n_levels, None, dtype=object)
                )
            ),
            "group_a": per_pair(group_column),
            "group_b": text(group_column, np.repeat(ib, n_levels)),
            "n_a": np.repeat(n[ia], n_levels),
            "n_b": np.repeat(n[ib], n_levels),
            "mean_a": np.repeat(mean[ia], n_levels),
            "mean_b": np.repeat(mean[ib], n_levels),
            "t_statistic": np.repeat(t, n_levels),
            "dof": np.repeat(dof, n_levels),
            "p_value": np.repeat(p, n_levels),
            "confidence": np.tile(confidence, n_pairs),
            "weight": np.tile(weight, n_pairs),
            "alpha": np.tile(alpha, n_pairs),
            "t_critical": critical[dof_index].ravel(),
            "rejected": rejected,
            "weighted_rejection": np.where(rejected, np.tile(weight, n_pairs), 0.0),
        },
        columns=PAIR_COLUMNS,
    )
    return out.astype(
        {
            "n_a": "int64",
            "n_b": "int64",
            "dof": "int64",
            "rejected": "bool",
            "mean_a": "float64",
            "mean_b": "float64",
            "t_statistic": "float64",
            "p_value": "float64",
            "confidence": "float64",
            "weight": "float64",
            "alpha": "float64",
            "t_critical": "float64",
            "weighted_rejection": "float64",
        }
    )


def refuse_null_groups(
    frame: pd.DataFrame, columns: Sequence[str | None], size_column: str | None = None
) -> None:
    """Raise when a group (or within-group) column holds nulls. Algorithm 1 compares named
    groups (industries; companies inside one industry); a null is no group, and pooling the
    nulls into one would add pairs (and rejections) against an "unknown" industry, while a
    null within-value would silently drop its rows from every pair. The warehouse never has
    them (window_errors' industry and ticker are not null); a caller must label or drop them.
    ``size_column``: the rows are group summaries and this column counts their rows."""
    for column in columns:
        if column is None:
            continue
        null = frame[column].isna().to_numpy()
        nulls = int(frame.loc[null, size_column].sum() if size_column else null.sum())
        if nulls:
            raise ValueError(
                f"{nulls} rows have a null {column!r}: the WRS compares named groups; "
                "label or drop those rows first"
            )


def text_array(values: np.ndarray, rows: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """``values[rows]`` as a pandas ``string`` array (Arrow; None -> <NA>): the few distinct
    values are converted once and gathered by index, the same column as
    ``pd.Series(values[rows], dtype=object).astype("string")`` at a fraction of the cost."""
    table = pa.array([None if v is None else str(v) for v in values], type=pa.large_string())
    taken = table.take(pa.array(np.asarray(rows, dtype=np.int64)))
    return pd.arrays.ArrowStringArray(pa.chunked_array([taken], type=pa.large_string()))


WRS_DECIMALS = 10

#: The two WRS analyses (paper Algorithm 1): analysis -> (group column, column the pairs
#: must share, or None to compare every pair). Used by wrs_pairs and rating_stability.
WRS_ANALYSES: dict[str, tuple[str, str | None]] = {
    "industry": ("industry", None),
    "company": ("ticker", "industry"),
}


def weighted_rejection_scores(pairs: pd.DataFrame) -> pd.DataFrame:
    """Weighted Rejection Score per system x perturbation: a SUM over pairs and levels.

    ``raw_score = sum over unordered pairs and confidence levels of weight * rejected``, i.e.
    ``SUM(weighted_rejection)`` of :func:`weighted_rejection_pairs` rows (paper eq. 1,
    ``WRS = sum_i w_i * x_i`` with ``x_i`` the number of pairs rejected at level ``i``).
    Columns :data:`WRS_COLUMNS`: ``system_id, perturbation_id, raw_score``, plus ``n_pairs``
    (number of pairs compared) and ``max_score`` (``n_pairs * sum(weights)``, the score when
    every pair is rejected at every level) for context. Higher = more statistical bias.

    Why a SUM (not a mean over pairs): in the paper both analyses compare 3 pairs (3
    industries -> C(3,2) = 3 pairs; 6 companies -> one pair inside each of 3 industries), and
    the reported WRS values reach 6.9 (the Biased system, every row of Table 5), far above the
    largest possible per-pair mean (the sum of the weights, 2.4). Per pair the rejections are
    nested, so a pair contributes 0, w_60, w_60 + w_75 or w_60 + w_75 + w_95. With the stated
    weights 1 / 0.8 / 0.6 that is {0, 0.6, 1.4, 2.4} and a 3-pair sum can never be odd in the
    first decimal -- yet Table 5 reports 5.9 and 6.9. (Algorithm 1's input list names the
    confidence levels 95 / 70 / 60 % with the same weights 1 / 0.8 / 0.6: a 70 % level changes
    which pairs are rejected, not what a pair adds.) With weights 1 / 0.7 / 0.6, which the
    paper never states, a pair contributes {0, 0.6, 1.3, 2.3} and
    3-pair sums reproduce every WRS value printed in Table 5 (0.6, 2.6, 4.6, 5.2, 5.9, 6.9;
    6.9 = 3 x 2.3 = all pairs rejected at all levels, as expected for the Biased system),
    except one isolated 5.6 (WRSC P0, S_c; a row that also lists S_r twice). So the paper's
    WRS is a SUM over pairs; the weights actually used appear to be 1 / 0.7 / 0.6. We keep
    the weights in the ``confidence_levels`` seed (1 / 0.8 / 0.6 per DESIGN.md) so users can
    choose; the aggregation is the sum either way.

    Algorithm 1 as printed compares the critical value with the signed ``t`` of each pair
    ("if t_crit > t"), which would count a pair only when its first group has the larger mean;
    we use the two-sided test (``p < 1 - confidence``, i.e. ``|t| > t_crit``) that the text
    describes, so the score does not depend on the order in which groups are named.

    Accepts the long output of :func:`weighted_rejection_pairs`; a wide frame with one row per
    pair and a ``weighted_rejections`` column (pair total) is accepted too.
    """
    keys = ["system_id", "perturbation_id"]
    if "weighted_rejection" in pairs.columns:
        # Long format: one row per pair x level, so summing the weights gives the maximum.
        agg = pairs.groupby(keys, sort=True).agg(
            raw_score=("weighted_rejection", "sum"),
            max_score=("weight", "sum"),
            n_rows=("weight", "size"),
            n_levels=("confidence", "nunique"),
        )
        agg["n_pairs"] = agg["n_rows"] // agg["n_levels"]
    elif "weighted_rejections" in pairs.columns:
        agg = pairs.groupby(keys, sort=True).agg(
            raw_score=("weighted_rejections", "sum"), n_pairs=("weighted_rejections", "size")
        )
        agg["max_score"] = np.nan
    else:
        raise ValueError("pairs needs a weighted_rejection (long) or weighted_rejections column")
    out = agg.reset_index()
    # Scores are sums of a few weights: rounding removes the floating-point residue of the
    # summation order (0.8 + 0.6 vs 0.6 + 0.8) so equal scores share a rating.
    out["raw_score"] = out["raw_score"].astype(float).round(WRS_DECIMALS)
    out["max_score"] = out["max_score"].astype(float).round(WRS_DECIMALS)
    out["n_pairs"] = out["n_pairs"].astype("int64")
    return out[WRS_COLUMNS]


# --------------------------------------------------------------------------------------
# The wrs_pairs and wrs marts (both outcomes, every run)
# --------------------------------------------------------------------------------------

_PAIR_TEXT = ["run_id", "analysis", "outcome", "system_id", "perturbation_id", "within_group"]
_PAIR_TEXT += ["group_a", "group_b"]
_PAIR_NUMBER = ["mean_a", "mean_b", "t_statistic", "p_value", "confidence", "weight", "alpha"]
_PAIR_NUMBER += ["t_critical", "weighted_rejection"]
#: Columns and types of the ``wrs_pairs`` mart.
PAIR_TABLE_COLUMNS: list[str] = ["run_id", "analysis", "outcome", *PAIR_COLUMNS]
PAIR_TABLE_SCHEMA: dict[str, str] = {
    **dict.fromkeys(_PAIR_TEXT, "string"),
    **dict.fromkeys(["n_a", "n_b", "dof"], "int64"),
    **dict.fromkeys(_PAIR_NUMBER, "float64"),
    "rejected": "bool",
}
#: Columns and types of the ``wrs`` mart.
WRS_TABLE_COLUMNS: list[str] = ["run_id", "analysis", "outcome", "metric", *WRS_COLUMNS]
WRS_TABLE_SCHEMA: dict[str, str] = {
    **dict.fromkeys(["run_id", "analysis", "outcome", "metric", "system_id"], "string"),
    "perturbation_id": "string",
    **dict.fromkeys(["raw_score", "max_score"], "float64"),
    "n_pairs": "int64",
}


def complete_systems(window_errors: pd.DataFrame, outcome: str) -> np.ndarray:
    """Row mask: the rows of systems whose every window has a finite ``outcome`` (the
    robustness analyses compare a system on an outcome only over all of its windows)."""
    finite = np.isfinite(pd.to_numeric(window_errors[outcome], errors="coerce").to_numpy(float))
    # per system (a null system_id is one more system): any window without a finite value
    system, _ = pd.factorize(window_errors["system_id"], use_na_sentinel=False)
    gaps = np.bincount(system, weights=~finite, minlength=system.max(initial=-1) + 1) > 0
    return ~gaps[system]


def wrs_pair_table(
    window_errors: pd.DataFrame, confidence_levels: pd.DataFrame, outcomes: Sequence[str]
) -> pd.DataFrame:
    """Both WRS analyses (:data:`WRS_ANALYSES`) of every run and outcome, stacked:
    :func:`weighted_rejection_pairs` with ``run_id``, ``analysis`` and ``outcome`` in front.

    A system is analysed on an outcome only when every one of its windows has a finite value
    of it (:func:`complete_systems`): a system without quantile forecasts has no ``wql`` /
    ``coverage_error_80`` rows here, and robustness_scores lists it with a null score and the
    reason, never a score over part of its windows."""
    frames = []
    for run_id, errors in window_errors.groupby("run_id", sort=True, observed=True):
        for outcome in outcomes:
            complete = errors.loc[complete_systems(errors, str(outcome))]
            for analysis, (group_column, within_column) in WRS_ANALYSES.items():
                pairs = weighted_rejection_pairs(
                    complete,
                    group_column,
                    confidence_levels,
                    within_column,
                    str(outcome),
                    string_columns=True,
                )
                every = np.zeros(len(pairs), dtype=np.int64)
                constants = {"outcome": outcome, "analysis": analysis, "run_id": run_id}
                for column, value in constants.items():
                    pairs.insert(0, column, text_array(np.array([value], dtype=object), every))
                frames.append(pairs)
    if not frames:
        return pd.DataFrame(columns=PAIR_TABLE_COLUMNS).astype(PAIR_TABLE_SCHEMA)
    return pd.concat(frames, ignore_index=True)[PAIR_TABLE_COLUMNS].astype(PAIR_TABLE_SCHEMA)


def wrs_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per run, analysis, outcome, system and perturbation:
    :func:`weighted_rejection_scores` of each block of :func:`wrs_pair_table` rows."""
    frames = []
    for (run_id, analysis, outcome), block in pairs.groupby(
        ["run_id", "analysis", "outcome"], sort=True, observed=True
    ):
        scores = weighted_rejection_scores(block)
        scores.insert(0, "metric", f"wrs_{analysis}")
        scores.insert(0, "outcome", outcome)
        scores.insert(0, "analysis", analysis)
        scores.insert(0, "run_id", run_id)
        frames.append(scores)
    if not frames:
        return pd.DataFrame(columns=WRS_TABLE_COLUMNS).astype(WRS_TABLE_SCHEMA)
    return pd.concat(frames, ignore_index=True)[WRS_TABLE_COLUMNS].astype(WRS_TABLE_SCHEMA)
