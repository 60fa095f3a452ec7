"""Missing values in the suites' bootstrap are never dropped silently.

* A mean's bootstrap (:func:`tsrate.suites.intervals.bootstrap_interval`) refuses missing
  values up front, in one line naming the system and score.
* A statistic undefined on some resamples: the interval of the others while they are at
  most 5 % of the resamples, withheld (NaN) beyond.
* The rating-stability tables count, per system, the resamples in which its re-scored
  value is undefined (``n_resamples_undefined``) and withhold its share and interval when
  they exceed 5 %.

Expected values are replayed with numpy from the documented seeding (the same generator
and draws), not with the suite's code."""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest

from tsrate.suites import intervals
from tsrate.suites.reasoning import marts as rsn


def test_a_means_bootstrap_refuses_missing_values_in_one_line():
    with pytest.raises(intervals.MissingValuesError) as caught:
        intervals.bootstrap_interval([1.0, np.nan, 3.0, np.inf], what="mae of system s (t)")
    message = str(caught.value)
    assert message.startswith("bootstrap interval of mae of system s (t): 2 of 4 values")
    assert "\n" not in message and "score every item" in message


def replay(n: int, statistic, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    return np.array([statistic(d) for d in draws], dtype=float)


@pytest.mark.parametrize("crowded", [4, 2])
def test_an_undefined_statistic_counts_and_withholds_past_five_percent(crowded):
    """The statistic is undefined when item 0 is drawn ``crowded`` times or more: rare for
    4 (under 5 % of 400 resamples of 20 items), common for 2 (about 26 %)."""
    x = np.linspace(1.0, 3.0, 20)

    def statistic(index: np.ndarray) -> float:
        return float("nan") if (index == 0).sum() >= crowded else float(x[index].mean())

    got = intervals.bootstrap_interval(np.arange(20), statistic, resamples=400, seed=9)
    results = replay(20, statistic, 400, 9)
    undefined = int(np.isnan(results).sum())
    assert undefined > 0  # the case is real in both settings
    if undefined <= 0.05 * 400:
        assert crowded == 4
        expected = np.quantile(results[~np.isnan(results)], [0.025, 0.975])
        assert got == (float(expected[0]), float(expected[1]))
    else:
        assert crowded == 2 and np.isnan(got).all()


def group_rng(seed: int, *parts: str) -> np.random.Generator:
    digest = hashlib.sha256("|".join(parts).encode()).digest()[:4]
    return np.random.default_rng([seed, int.from_bytes(digest, "little")])


def test_the_stability_table_counts_each_systems_undefined_resamples():
    """12 items: a answers every one, c 11, b one only (like context_gain, whose items are a
    system's usable pairs): b's mean is undefined whenever its item is not drawn."""
    items = [f"i{k:02d}" for k in range(12)]
    rng = np.random.default_rng(1)
    rows = []
    for system, answered in (("a", items), ("b", items[:1]), ("c", items[1:])):
        rows += [
            {"suite_run_id": "r", "metric": "mae", "task": "forecast_x", "item_id": i,
             "system_id": system, "value": float(rng.uniform(1, 2))}
            for i in answered
        ]  # fmt: skip
    values = pd.DataFrame(rows)
    means = values.groupby("system_id")["value"].mean()
    ratings = pd.DataFrame(
        {"suite_run_id": "r", "metric": "mae", "task": "forecast_x",
         "system_id": ["a", "b", "c"], "raw_score": means[["a", "b", "c"]].to_numpy(),
         "rating": pd.array([1, 2, 3], dtype="Int64"), "rating_reason": None}
    )  # fmt: skip
    table = rsn.rating_stability_table(values, ratings, 3, resamples=300, seed=5)
    table = table.set_index("system_id")

    wide = values.pivot_table(index="item_id", columns="system_id", values="value")
    matrix = wide.to_numpy()
    draw = group_rng(5, "reasoning", "mae", "forecast_x")  # suite, metric, task
    resampled = []
    for _ in range(300):
        picked = matrix[draw.integers(0, 12, 12)]
        with warnings.catch_warnings():  # a system missing in every drawn item: NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            resampled.append(np.nanmean(picked, axis=0))
    resampled = np.array(resampled)  # resamples x (a, b, c)
    undefined = np.isnan(resampled).sum(axis=0)
    assert undefined[0] == 0 and undefined[2] == 0 and undefined[1] > 0.05 * 300
    assert table["n_resamples_undefined"].to_dict() == dict(
        zip("abc", undefined.tolist(), strict=True)
    )
    # b: too many undefined resamples -> no share, no interval
    assert np.isnan(table.loc["b", "share_at_rating"])
    assert np.isnan(table.loc["b", ["ci_low", "ci_high"]].astype(float)).all()
    # a and c: the percentile interval of every resample, widened to the published score
    for column, system in ((0, "a"), (2, "c")):
        low, high = np.quantile(resampled[:, column], [0.025, 0.975])
        point = means[system]
        low, high = min(low, point), max(high, point)
        assert table.loc[system, "ci_low"] == pytest.approx(low, abs=0, rel=1e-15)
        assert table.loc[system, "ci_high"] == pytest.approx(high, abs=0, rel=1e-15)
        assert 0 <= table.loc[system, "share_at_rating"] <= 1
