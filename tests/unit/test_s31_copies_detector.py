"""Copied windows: a forecast that repeats a contiguous stretch of its own context, anywhere
in it, value by value (relative tolerance 1e-9), against the context as the system saw it.

Hand-made contexts and forecasts for each case (start, middle, tail, near miss, constant
stretches, missing values, printed decimals, a one-value horizon), and a check against an
independent brute-force reading of the rule (plain loops, ``math.isclose``) on random
windows with planted copies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tsrate.robustness.forecast.copies import (
    COPY_RTOL,
    copied_windows,
    count_copied_windows,
    shown_contexts,
    shown_decimals,
)

CONTEXT = np.array([101.5, 102.25, 99.75, 100.0, 103.125, 104.5, 102.0, 101.0])


def _copied(forecast, context=CONTEXT, decimals=None) -> bool:
    rows = copied_windows(np.array([context]), np.array([forecast], dtype=float), decimals)
    return bool(rows[0])


def test_a_copy_at_the_start_in_the_middle_or_at_the_tail_is_found():
    assert _copied(CONTEXT[:3])  # the context's first values (what Gemma 3 270M answers)
    assert _copied(CONTEXT[2:5])
    assert _copied(CONTEXT[-3:])
    assert _copied(CONTEXT)  # d = n: the whole context


def test_a_near_miss_a_reordering_or_a_longer_horizon_is_not_a_copy():
    near = CONTEXT[2:5] * (1 + 1e-7)  # each value a hundred-thousandth of a percent off
    assert not _copied(near)
    assert not _copied(CONTEXT[2:5] * (1 + 100 * COPY_RTOL))
    assert _copied(CONTEXT[2:5] * (1 + COPY_RTOL / 4))  # within the tolerance: float noise
    # the tolerance is 1e-9 of the value: 1.5e-9 off is no copy, 0.5e-9 off is
    assert not _copied(CONTEXT[2:5] * (1 + 1.5e-9))
    assert _copied(CONTEXT[2:5] * (1 + 0.5e-9))
    assert not _copied(CONTEXT[2:5][::-1])
    assert not _copied([CONTEXT[0], CONTEXT[2], CONTEXT[3]])  # not contiguous
    one_off = CONTEXT[2:5].copy()
    one_off[1] += 0.01
    assert not _copied(one_off)
    # a horizon longer than the context cannot copy it
    assert not _copied(np.concatenate([CONTEXT, CONTEXT[:1]]))


def test_a_flat_forecast_is_a_copy_only_of_a_constant_stretch_as_long():
    # the naive baseline's forecast: the last value repeated; the context never holds it
    # three times in a row, so it is no copy
    assert not _copied([101.0] * 3)
    assert not _copied([101.0] * 2, np.array([100.0, 101.0, 99.0, 101.0]))
    # two equal values in a row are a stretch for a horizon of two, not of three
    stale = np.array([100.0, 100.5, 100.5, 99.0, 100.5])
    assert _copied([100.5, 100.5], stale)
    assert not _copied([100.5, 100.5, 100.5], stale)
    assert _copied([100.5] * 3, np.array([99.0, 100.5, 100.5, 100.5, 101.0]))


def test_a_missing_value_matches_nothing_and_a_failed_window_is_no_copy():
    context = CONTEXT.copy()
    context[3] = np.nan
    assert not _copied(CONTEXT[2:5], context)
    assert _copied(CONTEXT[4:7], context)
    contexts = np.array([CONTEXT, CONTEXT])
    forecasts = np.array([CONTEXT[:3], [np.nan] * 3])
    assert copied_windows(contexts, forecasts).tolist() == [True, False]
    assert count_copied_windows(contexts, forecasts) == 1


def test_a_language_model_is_compared_with_its_context_as_printed():
    context = np.array([100.123, 100.456, 100.789, 101.005, 99.994])
    printed = [100.12, 100.46, 100.79, 101.0, 99.99]  # f"{v:.2f}" of each
    assert shown_contexts(context, 2).tolist() == [float(f"{v:.2f}") for v in context]
    assert shown_contexts(context, 2).tolist()[:3] == printed[:3]
    assert _copied(printed[1:4], context, decimals=2)
    # next to a half, the printed value is the binary value's own rounding (numpy's may differ)
    halves = np.array([0.125, 2.675, 1.005, 100.125, np.inf, -np.inf, np.nan])
    read_back = shown_contexts(halves, 2)
    assert read_back[:4].tolist() == [float(f"{v:.2f}") for v in halves[:4]]
    assert np.isnan(read_back[4:]).all()  # the prompt writes NaN for a non-finite value
    many = np.round(np.random.default_rng(1).uniform(-1000, 1000, 20000), 3)
    assert shown_contexts(many, 2).tolist() == [float(f"{v:.2f}") for v in many]
    assert not _copied(printed[1:4], context)  # the raw values were not what it saw
    assert _copied(context[1:4], context)  # a numeric system copies the values themselves
    assert not _copied(context[1:4], context, decimals=2)

    class Settings:
        decimals = 3

    class Llm:
        settings = Settings()

    assert shown_decimals(Llm()) == 3
    assert shown_decimals(object()) is None
    for odd in (True, "2", 2.0):  # a setting that is no count of decimals prints nothing here
        Settings.decimals = odd
        assert shown_decimals(Llm()) is None


def test_a_one_value_horizon_is_not_counted():
    contexts = np.array([CONTEXT])
    # the rule itself reads one value as a stretch of one; only the count leaves it out
    assert copied_windows(contexts, np.array([[CONTEXT[3]]])).tolist() == [True]
    assert copied_windows(contexts, np.array([[CONTEXT[3] + 0.5]])).tolist() == [False]
    assert copied_windows(contexts, np.zeros((1, 0))).tolist() == [False]  # no forecast
    assert count_copied_windows(contexts, np.array([[CONTEXT[-1]]])) is None
    assert count_copied_windows(contexts, np.array([CONTEXT[:2]])) == 1


def _brute_force(context, forecast, decimals=None) -> bool:
    """The rule read literally: some start i with every value equal to the printed (or
    raw) context value at i + j, relatively within 1e-9."""
    shown = [
        v if decimals is None or math.isnan(v) else float(f"{v:.{decimals}f}") for v in context
    ]
    d = len(forecast)
    for start in range(len(shown) - d + 1):
        if all(
            not math.isnan(shown[start + j])
            and math.isclose(forecast[j], shown[start + j], rel_tol=1e-9, abs_tol=0.0)
            for j in range(d)
        ):
            return True
    return False


@pytest.mark.parametrize("decimals", [None, 2])
def test_random_windows_with_planted_copies_agree_with_the_rule_read_literally(decimals):
    rng = np.random.default_rng(7)
    n_windows, n, d = 300, 12, 3
    contexts = np.round(100 + rng.normal(0, 0.3, (n_windows, n)).cumsum(axis=1), 3)
    contexts[rng.random((n_windows, n)) < 0.05] = np.nan
    contexts[::17, 4:8] = contexts[::17, 4:5]  # some constant stretches
    forecasts = np.round(100 + rng.normal(0, 0.3, (n_windows, d)), 3)
    shown = shown_contexts(contexts, decimals)
    for row in range(0, n_windows, 3):  # plant copies at random starts
        start = rng.integers(0, n - d + 1)
        forecasts[row] = shown[row, start : start + d]
    for row in range(1, n_windows, 9):  # flat forecasts of the last value (naive)
        forecasts[row] = shown[row, -1]
    for row in range(2, n_windows, 11):  # near misses
        forecasts[row] = shown[row, 2 : 2 + d] * (1 + 1e-8)
    expected = [_brute_force(c, f, decimals) for c, f in zip(contexts, forecasts, strict=True)]
    got = copied_windows(contexts, forecasts, decimals).tolist()
    assert got == expected
    assert 50 < sum(expected) < n_windows  # copies and non-copies both present


def test_a_partition_is_counted_against_the_context_its_system_saw():
    from types import SimpleNamespace

    from tsrate.robustness.forecast.copies import partition_copies
    from tsrate.systems.base import QUANTILE_LEVELS, ForecastBatch, QuantileForecasts
    from tsrate.systems.failures import PartialForecasts, WindowFailure

    contexts = np.array([[100.123, 100.456, 100.789, 101.005], [99.5, 99.25, 99.0, 98.75]])
    batch = ForecastBatch(
        ticker="T",
        perturbation_id="P0",
        window_end_dates=np.array(["2022-01-03", "2022-01-04"], dtype="datetime64[D]"),
        contexts=contexts,
        horizon=2,
        clean_futures=np.zeros((2, 2)),
        study_range=(0.0, 1.0),
    )
    forecasts = np.array([[100.46, 100.79], [99.25, 99.0]])  # row 0: cents as printed
    printing = SimpleNamespace(settings=SimpleNamespace(decimals=2))  # a language model
    assert partition_copies(batch, forecasts, printing) == 2
    assert partition_copies(batch, forecasts, object()) == 1  # a numeric system: raw values
    quantiles = np.repeat(forecasts[:, :, None], len(QUANTILE_LEVELS), axis=2)
    assert partition_copies(batch, QuantileForecasts(forecasts, quantiles, ()), printing) == 2
    failed = PartialForecasts(
        np.array([[np.nan, np.nan], [99.25, 99.0]]), (WindowFailure(0, "short", ""),)
    )
    assert partition_copies(batch, failed, printing) == 1  # a failed window is no copy
