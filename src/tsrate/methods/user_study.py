"""The user-study statistics of the robustness paper (section 5.4, Tables 3-4): one-sample
and paired t-tests and Spearman's rank correlation, and their application to the
``user_study_summary`` seed (the library behind the dbt model ``user_study_tests``).

Pure functions, as :mod:`tsrate.methods.wrs`, whose t distribution functions they share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tsrate.methods.wrs import as_finite_1d, t_cdf, t_sf

__all__ = [
    "OneSampleTTest",
    "PairedTTest",
    "SpearmanResult",
    "one_sample_t_right",
    "one_sample_t_right_from_summary",
    "paired_t",
    "paired_t_from_summary",
    "spearman",
    "COLUMNS",
    "user_study_tests",
]


@dataclass(frozen=True)
class OneSampleTTest:
    """One-sample, right-tailed t-test of H0: mean <= hypothesised_mean.

    ``t = (mean - hypothesised_mean) / (sd / sqrt(n))`` with the sample sd (ddof=1),
    ``dof = n - 1``, ``p = P(T_dof >= t)``.
    """

    t: float
    dof: int
    p: float
    n: int
    mean: float
    sd: float
    hypothesised_mean: float


@dataclass(frozen=True)
class PairedTTest:
    """Paired t-test on differences ``d = before - after``.

    ``t = mean(d) / (sd(d) / sqrt(n))`` (sample sd, ddof=1), ``dof = n - 1``.
    ``p_two_sided`` tests H0: mean(d) = 0. ``p_less`` is the one-sided p for the alternative
    mean(d) < 0 (i.e. "before < after"; the paper's hypotheses "mean Q4 <= mean Q6" are rejected
    in favour of "after is larger" with this p), ``p_greater`` for mean(d) > 0.
    """

    t: float
    dof: int
    p_two_sided: float
    p_less: float
    p_greater: float
    n: int
    mean_diff: float
    sd_diff: float


@dataclass(frozen=True)
class SpearmanResult:
    """Spearman rank correlation ``rho`` (average ranks for ties) with its two-sided p-value
    (SciPy's t-approximation) and the number of pairs ``n``."""

    rho: float
    p: float
    n: int


def one_sample_t_right_from_summary(
    mean: float, sd: float, n: int, hypothesised_mean: float
) -> OneSampleTTest:
    """Right-tailed one-sample t-test from summary statistics (``sd`` is ddof=1).

    Reproduces the paper's Table 3 from its printed mean and sd with n = 26 and a
    hypothesised mean of 2. ``sd == 0``: ``t = +/-inf`` (p = 0 or 1) if the mean differs,
    ``t = 0, p = 1`` (H0 not rejected) if it equals the hypothesised mean. ``n < 2`` raises.
    """
    n = int(n)
    if n < 2:
        raise ValueError(f"one-sample t-test needs n >= 2 (got {n})")
    if not (math.isfinite(mean) and math.isfinite(sd) and sd >= 0):
        raise ValueError("mean must be finite and sd finite and >= 0")
    diff = float(mean) - float(hypothesised_mean)
    dof = n - 1
    if sd == 0.0:
        if diff == 0.0:
            t, p = 0.0, 1.0
        else:
            t = math.copysign(math.inf, diff)
            p = 0.0 if diff > 0 else 1.0
    else:
        t = diff / (float(sd) / math.sqrt(n))
        p = float(t_sf(t, dof))
    return OneSampleTTest(
        t=float(t),
        dof=dof,
        p=float(p),
        n=n,
        mean=float(mean),
        sd=float(sd),
        hypothesised_mean=float(hypothesised_mean),
    )


def one_sample_t_right(
    values: Sequence[float] | np.ndarray | pd.Series, hypothesised_mean: float
) -> OneSampleTTest:
    """Right-tailed one-sample t-test of H0: mean <= ``hypothesised_mean``.

    Equals ``scipy.stats.ttest_1samp(values, hypothesised_mean, alternative="greater")``.
    NaN values raise ``ValueError``; see :func:`one_sample_t_right_from_summary` for the
    constant-sample convention.
    """
    x = as_finite_1d(values, "values")
    if x.size < 2:
        raise ValueError(f"one-sample t-test needs n >= 2 (got {x.size})")
    constant = bool(np.all(x == x[0]))
    sd = 0.0 if constant else float(np.std(x, ddof=1))
    mean = float(x[0]) if constant else float(np.mean(x))
    return one_sample_t_right_from_summary(mean, sd, x.size, hypothesised_mean)


def paired_t_from_summary(mean_diff: float, sd_diff: float, n: int) -> PairedTTest:
    """Paired t-test from the mean and sample sd (ddof=1) of the n paired differences.

    ``sd_diff == 0``: ``t = 0`` and all p = 1 when ``mean_diff == 0``, else ``t = +/-inf``.
    ``n < 2`` raises ``ValueError``.
    """
    n = int(n)
    if n < 2:
        raise ValueError(f"paired t-test needs n >= 2 pairs (got {n})")
    if not (math.isfinite(mean_diff) and math.isfinite(sd_diff) and sd_diff >= 0):
        raise ValueError("mean_diff must be finite and sd_diff finite and >= 0")
    dof = n - 1
    if sd_diff == 0.0:
        if mean_diff == 0.0:
            t, p2, pl, pg = 0.0, 1.0, 1.0, 1.0
        else:
            t = math.copysign(math.inf, mean_diff)
            p2 = 0.0
            pl, pg = (1.0, 0.0) if mean_diff > 0 else (0.0, 1.0)
    else:
        t = float(mean_diff) / (float(sd_diff) / math.sqrt(n))
        pl = float(t_cdf(t, dof))
        pg = float(t_sf(t, dof))
        p2 = float(min(1.0, 2.0 * t_sf(abs(t), dof)))
    return PairedTTest(
        t=float(t),
        dof=dof,
        p_two_sided=float(p2),
        p_less=float(pl),
        p_greater=float(pg),
        n=n,
        mean_diff=float(mean_diff),
        sd_diff=float(sd_diff),
    )


def paired_t(
    before: Sequence[float] | np.ndarray | pd.Series,
    after: Sequence[float] | np.ndarray | pd.Series,
) -> PairedTTest:
    """Paired t-test on ``d = before - after`` (same length, paired by position).

    Equals ``scipy.stats.ttest_rel(before, after)`` (two-sided; ``alternative="less"`` /
    ``"greater"`` for the one-sided p-values). The paper reports e.g. ``t = -1.89`` for
    before = Q8, after = Q10: negative t means responses rose after the ratings were shown.
    """
    x = as_finite_1d(before, "before")
    y = as_finite_1d(after, "after")
    if x.size != y.size:
        raise ValueError(f"before and after must have the same length ({x.size} != {y.size})")
    d = x - y
    if d.size < 2:
        raise ValueError(f"paired t-test needs n >= 2 pairs (got {d.size})")
    constant = bool(np.all(d == d[0]))
    sd = 0.0 if constant else float(np.std(d, ddof=1))
    mean = float(d[0]) if constant else float(np.mean(d))
    return paired_t_from_summary(mean, sd, d.size)


def spearman(
    a: Sequence[float] | np.ndarray | pd.Series, b: Sequence[float] | np.ndarray | pd.Series
) -> SpearmanResult:
    """Spearman rank correlation; equals ``scipy.stats.spearmanr(a, b)``.

    Needs at least 3 pairs of finite values and non-constant inputs (a constant input has no
    ranks to correlate: ``ValueError``).
    """
    x = as_finite_1d(a, "a")
    y = as_finite_1d(b, "b")
    if x.size != y.size:
        raise ValueError(f"a and b must have the same length ({x.size} != {y.size})")
    if x.size < 3:
        raise ValueError(f"Spearman correlation needs at least 3 pairs (got {x.size})")
    if np.all(x == x[0]) or np.all(y == y[0]):
        raise ValueError("Spearman correlation is undefined for a constant input")
    from scipy import stats

    res = stats.spearmanr(x, y)
    return SpearmanResult(rho=float(res.statistic), p=float(res.pvalue), n=int(x.size))


COLUMNS = [
    "test_id",
    "source_table",
    "test_kind",
    "question",
    "question_after",
    "hypothesis",
    "n",
    "mean",
    "sd",
    "mean_after",
    "sd_after",
    "hypothesised_mean",
    "mean_diff",
    "sd_diff",
    "sd_diff_source",
    "t_statistic",
    "dof",
    "p_value",
    "p_two_sided",
    "alpha",
    "rejected",
    "reported_t",
    "reported_p",
    "reported_rho",
    "is_recomputed",
]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def user_study_tests(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per test of the seed, with the recomputed statistics where possible."""
    rows = []
    for test in summary.sort_values("test_id").to_dict("records"):
        row = {column: test.get(column) for column in COLUMNS if column in test}
        row.update(
            mean_diff=None,
            sd_diff=None,
            sd_diff_source=None,
            t_statistic=None,
            dof=None,
            p_value=None,
            p_two_sided=None,
            rejected=None,
            is_recomputed=False,
        )
        kind = test["test_kind"]
        if kind == "one_sample_t_right":
            result = one_sample_t_right_from_summary(
                test["mean"], test["sd"], test["n"], test["hypothesised_mean"]
            )
            row.update(t_statistic=result.t, dof=result.dof, p_value=result.p)
        elif kind == "paired_t" and not _missing(test["reported_t"]) and test["reported_t"] != 0:
            # The paper prints no sd of the paired differences: back it out of its t
            # (t = mean_diff / (sd_diff / sqrt(n))), so the recomputed t equals the printed
            # one and the p-value checks the paper's.
            mean_diff = float(test["mean"]) - float(test["mean_after"])
            sd_diff = abs(mean_diff) * math.sqrt(int(test["n"])) / abs(float(test["reported_t"]))
            result = paired_t_from_summary(mean_diff, sd_diff, test["n"])
            row.update(
                mean_diff=mean_diff,
                sd_diff=sd_diff,
                sd_diff_source="derived from the reported t",
                t_statistic=result.t,
                dof=result.dof,
                p_value=result.p_less,  # H1: before < after
                p_two_sided=result.p_two_sided,
            )
        if row["p_value"] is not None:
            row["is_recomputed"] = True
            row["rejected"] = bool(row["p_value"] < float(test["alpha"]))
        rows.append(row)
    out = pd.DataFrame.from_records(rows, columns=COLUMNS)
    strings = ["test_id", "source_table", "test_kind", "question", "question_after"]
    strings += ["hypothesis", "sd_diff_source"]
    return out.astype(
        {
            **dict.fromkeys(strings, "string"),
            "n": "Int64",
            "dof": "Int64",
            "mean_diff": "float64",
            "sd_diff": "float64",
            "t_statistic": "float64",
            "p_value": "float64",
            "p_two_sided": "float64",
            "rejected": "boolean",
            "is_recomputed": "bool",
        }
    )
