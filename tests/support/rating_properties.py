"""Properties every rating mart must have (core and suites): call from integration tests.

``assert_ratings_never_mislead(frame, group_by=[...])`` checks, inside every group (one
metric x perturbation / task / feature x outcome ...):

* a better raw score never gets a worse rating: for lower-is-better metrics a lower raw
  score never has a higher rating; for higher-is-better metrics (rating L = best, the paper's
  sign-accuracy convention) a higher raw score never has a lower rating -- i.e. in both
  directions the rating is non-decreasing in the raw score (rating 1 = lowest score);
* equal raw scores share one rating;
* ratings lie in 1..rating_levels, or are null with a non-empty ``rating_reason`` (when the
  frame has that column);
* a group whose systems all tie (or a lone system) has a reason when the frame carries
  ``rating_reason``;
* no raw score sits within floating noise of 0 without being 0 (|x| <= 1e-12 x max(1, scale));
* a lone system or an all-tied group on a metric with an ideal (0) but no known worst value
  (:data:`UNBOUNDED_METRICS`: the core's APE and PIE, the suites' MAE, MSE, CRPS, MAPE, test
  MSE ...) is not rated unless its score is the ideal 0 (issue 25 item 4): there is no scale
  to put it on. The list is written out here, not read from the code or the rating spec, so
  a metric that loses its "no worst value" status in the code fails the test.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

NOISE = 1e-12
#: Metric names (lower-cased) with ideal 0 and no known worst value, in every rating mart.
UNBOUNDED_METRICS = frozenset(
    {
        # generic error names
        "mae", "mse", "rmse", "crps", "mase", "wql", "mape",
        # core (marts.ratings, marts.rating_stability): effects have no worst value
        "ape_company", "ape_industry", "pie_company", "pie_industry",
        # understanding, reasoning (mae, mse, crps above), interpretability
        "retrieval_mape", "arithmetic_mape", "test_mse", "test_mse_cv", "beta_std",
    }
)  # fmt: skip


def rating_problems(
    frame: pd.DataFrame,
    group_by: Sequence[str],
    *,
    score: str = "raw_score",
    rating: str = "rating",
) -> list[str]:
    """One line per violated property (empty when the frame is sound)."""
    problems: list[str] = []
    if frame.empty:
        return problems
    has_reason = "rating_reason" in frame.columns
    for key, block in frame.groupby(list(group_by), sort=True, dropna=False):
        x = block[score].astype(float).to_numpy()
        r = pd.array(block[rating], dtype="Int64")
        levels = block["rating_levels"].astype(int).to_numpy()
        finite = np.isfinite(x)
        scale = max(1.0, float(np.max(np.abs(x[finite])))) if finite.any() else 1.0
        tiny = finite & (x != 0) & (np.abs(x) <= NOISE * scale)
        if tiny.any():
            problems.append(f"{key}: raw scores within floating noise of 0 are not stored as 0")
        rated = ~np.asarray(r.isna(), dtype=bool)
        rv = r.to_numpy(dtype="float64", na_value=np.nan)
        if ((rv[rated] < 1) | (rv[rated] > levels[rated])).any():
            problems.append(f"{key}: a rating outside 1..rating_levels")
        if has_reason:
            reasons = block["rating_reason"].to_numpy(dtype=object)
            for i in np.flatnonzero(~rated):
                if not isinstance(reasons[i], str) or not reasons[i].strip():
                    problems.append(f"{key}: a null rating without a rating_reason")
                    break
            metric = str(block["metric"].iloc[0]).lower() if "metric" in block.columns else ""
            single = np.unique(x[finite]).size == 1
            if single and metric in UNBOUNDED_METRICS and (rated & finite & (x != 0)).any():
                problems.append(
                    f"{key}: a lone or all-tied group on {metric} (no known worst value) is rated"
                )
            if len(block) >= 1 and single:
                if not all(isinstance(v, str) and v.strip() for v in reasons[finite]):
                    problems.append(f"{key}: a lone or all-tied group without a rating_reason")
        keep = rated & finite
        xs, rs = x[keep], rv[keep]
        order = np.argsort(xs, kind="stable")
        xs, rs = xs[order], rs[order]
        if (np.diff(rs) < 0).any():
            problems.append(f"{key}: a better raw score has a worse rating")
        for value in np.unique(xs):
            if np.unique(rs[xs == value]).size > 1:
                problems.append(f"{key}: equal raw scores {value!r} have different ratings")
                break
    return problems


def assert_ratings_never_mislead(
    frame: pd.DataFrame,
    group_by: Sequence[str],
    *,
    score: str = "raw_score",
    rating: str = "rating",
) -> None:
    """``AssertionError`` listing every violated property of :func:`rating_problems`."""
    problems = rating_problems(frame, group_by, score=score, rating=rating)
    assert not problems, "\n".join(problems)


def interval_problems(
    frame: pd.DataFrame,
    group_by: Sequence[str],
    *,
    score: str = "raw_score",
    low: str = "ci_low",
    high: str = "ci_high",
) -> list[str]:
    """Properties of every rating-stability mart with intervals (core and suites): each
    published raw score lies inside its own interval (ci_low <= raw_score <= ci_high, where
    the row has an interval), and no interval end sits within floating noise of 0 without
    being 0 (|x| <= 1e-12 x max(1, largest |raw score| or |end| of the group))."""
    problems: list[str] = []
    for key, block in frame.groupby(list(group_by), sort=True, dropna=False):
        x = block[score].astype(float).to_numpy()
        lo = block[low].astype(float).to_numpy()
        hi = block[high].astype(float).to_numpy()
        has = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(x)
        outside = has & ((x < lo) | (x > hi))
        if outside.any():
            i = np.flatnonzero(outside)[0]
            who = block.iloc[i].get("system_id", block.iloc[i].get("model_id", i))
            problems.append(
                f"{key}: {outside.sum()} raw score(s) outside their interval, e.g. {who}: "
                f"{x[i]!r} not in [{lo[i]!r}, {hi[i]!r}]"
            )
        values = np.concatenate([x, lo, hi])
        finite = np.isfinite(values)
        scale = max(1.0, float(np.max(np.abs(values[finite])))) if finite.any() else 1.0
        tiny = finite & (values != 0) & (np.abs(values) <= NOISE * scale)
        if tiny.any():
            problems.append(f"{key}: interval ends within floating noise of 0 are not 0")
    return problems


def assert_scores_inside_intervals(frame: pd.DataFrame, group_by: Sequence[str], **names) -> None:
    """``AssertionError`` listing every violated property of :func:`interval_problems`."""
    problems = interval_problems(frame, group_by, **names)
    assert not problems, "\n".join(problems)
