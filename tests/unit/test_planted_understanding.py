"""Planted-error checks of the understanding suite's science: each test pins one coefficient,
lag, scale or direction of a generator or a score to what the module docstrings (or
Appendix B of the paper) state, computed independently (closed forms, hand-worked examples,
statsmodels / scipy), so that changing it in the product fails here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tsrate.suites.understanding import generators as g
from tsrate.suites.understanding.generators.base import ar1, count_peaks
from tsrate.suites.understanding.generators.multivariate import (
    correlation,
    cross_correlation,
    dynamic_correlation,
)
from tsrate.suites.understanding.generators.univariate import (
    garch_returns,
    structural_breaks,
    trend,
)

# --------------------------------------------------------------------------------------
# Generators: long series, so that a parameter is estimated to within a few per cent
# --------------------------------------------------------------------------------------


def test_linear_trend_noise_is_standard_normal_about_the_labelled_line():
    """Docstring: linear a t + b with N(0, 1) noise. The residual about the LABELLED line
    (not a fit) has sd 1 (sampling error of an sd over 2,000 points: ~1.6 %)."""
    rng = np.random.default_rng(1)
    for kind in ("linear_up", "linear_down"):
        values, _, labels, _, _ = trend(rng, 2000, kind)
        t = np.arange(2000)
        residual = values - (labels["slope"] * t + labels["intercept"])
        assert np.std(residual, ddof=1) == pytest.approx(1.0, abs=0.07)
        assert abs(residual.mean()) < 0.1


def test_variance_shift_multiplies_the_sd_by_four():
    """Docstring: variance shift = sd x 4, so the variance after the break is 16 times the
    variance before (an F ratio; 1,000 points each side keep it within 16 +- 30 %)."""
    rng = np.random.default_rng(2)
    for _ in range(5):
        values, _, labels, _, _ = structural_breaks(rng, 2000, "variance_shift")
        k = labels["break_index"]
        ratio = np.var(values[k:], ddof=1) / np.var(values[:k], ddof=1)
        assert 16 / 1.3 < ratio < 16 * 1.3


def test_noise_to_trend_break_starts_the_trend_at_the_break_without_a_jump():
    """Docstring: noise -> trend. The trend grows from 0 at the break (a regime change, not
    also a mean shift): a line fitted to the series after the break passes through the
    pre-break level at the break (the slope is 0.4-1 a day, so a jump of slope x k would
    be tens of units)."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        values, _, labels, _, _ = structural_breaks(rng, 400, "noise_trend_change")
        k = labels["break_index"]
        t = np.arange(400)
        fit = stats.linregress(t[k:], values[k:])
        at_break = fit.intercept + fit.slope * k
        assert 0.4 - 0.05 <= abs(fit.slope) <= 1.0 + 0.05
        assert abs(at_break - values[:k].mean()) < 1.0  # noise sd 1, ~200 points each side


def test_garch_starts_at_its_unconditional_variance():
    """Docstring: GARCH(1,1) started at the unconditional variance omega / (1 - alpha -
    beta) (= 1 for the paper's 0.1, 0.2, 0.7). The first return of 4,000 independent runs
    has that variance (sampling error ~2.2 %); a start at omega would give 0.1."""
    rng = np.random.default_rng(4)
    first = np.array([garch_returns(rng, 1)[0] for _ in range(4000)])
    assert np.var(first) == pytest.approx(1.0, rel=0.1)
    first = np.array([garch_returns(rng, 1, 0.05, 0.3, 0.65)[0] for _ in range(4000)])
    assert np.var(first) == pytest.approx(0.05 / (1 - 0.3 - 0.65), rel=0.1)


def test_ar1_starts_in_its_stationary_distribution():
    """An AR(1) x_t = phi x_{t-1} + e_t, e ~ N(0, s^2), is stationary only if x_0 has
    variance s^2 / (1 - phi^2) (5.26 s^2 at phi 0.9). Checked at the first and the tenth
    value over 4,000 runs (a start at e_0 would give 1 and 1 + ... + 0.81^9 = 4.3)."""
    rng = np.random.default_rng(5)
    runs = np.array([ar1(rng, 10, 0.9, 2.0) for _ in range(4000)])
    expected = 4.0 / (1 - 0.81)
    assert np.var(runs[:, 0]) == pytest.approx(expected, rel=0.1)
    assert np.var(runs[:, 9]) == pytest.approx(expected, rel=0.1)


def test_count_peaks_counts_maxima_then_minima():
    """Hand-worked: 0 1 0 1 0 has two interior maxima and one interior minimum;
    5 3 4 2 6 has one maximum (4) and two minima (3, 2)."""
    assert count_peaks(np.array([0.0, 1, 0, 1, 0])) == (2, 1)
    assert count_peaks(np.array([5.0, 3, 4, 2, 6])) == (1, 2)


def test_correlation_pairs_have_the_labelled_correlation():
    """Docstring: two Gaussian series with correlation rho. Over 3,000 points the sample
    correlation is within 0.04 of the labelled rho (its sd is (1 - rho^2) / sqrt(n) < 0.02);
    scaling and shifting each series does not change it."""
    rng = np.random.default_rng(6)
    for kind in ("positive", "negative", "positive", "negative"):
        values, _, labels, _, _ = correlation(rng, 3000, kind)
        r = np.corrcoef(values[:, 0], values[:, 1])[0, 1]
        assert 0.6 <= abs(labels["rho"]) <= 0.95
        assert r == pytest.approx(labels["rho"], abs=0.04)


def test_cross_correlation_leader_is_ar1_with_phi_0_3():
    """Docstring: Series1 is AR(1) with phi 0.3: its lag-1 autocorrelation over 3,000
    points is 0.3 (sd ~0.017); and Series2 = sign x Series1 shifted by the lag + 0.3 noise:
    the cross-correlation at the lag is sign x sd1 / sqrt(sd1^2 + 0.09) with sd1^2 =
    1 / (1 - 0.09)."""
    from statsmodels.tsa.stattools import acf

    rng = np.random.default_rng(7)
    expected = 1.0 / np.sqrt(1.0 + 0.09 * (1 - 0.09))
    for kind in ("positive_lagged", "negative_direct"):
        values, _, labels, _, _ = cross_correlation(rng, 3000, kind)
        a, b = values[:, 0], values[:, 1]
        assert acf(a, nlags=1)[1] == pytest.approx(0.3, abs=0.07)
        lag = labels["lag"]
        r = np.corrcoef(a[: len(a) - lag], b[lag:])[0, 1]
        sign = 1.0 if labels["sign"] == "positive" else -1.0
        assert r == pytest.approx(sign * expected, abs=0.02)


def test_dynamic_correlation_switches_between_40_and_60_percent():
    """Docstring: the switch lies at a random point in [40 %, 60 %]. Then for 'correlated
    first half' the first 40 % is correlated at rho all through and the last 40 % not at
    all (n = 1,000: sampling sd of each ~0.05)."""
    rng = np.random.default_rng(8)
    n = 1000
    for _ in range(30):
        values, _, labels, _, _ = dynamic_correlation(rng, n, "correlated_first_half")
        assert int(0.4 * n) <= labels["switch_index"] <= int(0.6 * n)
        head, tail = values[: int(0.4 * n)], values[int(0.6 * n) :]
        assert np.corrcoef(head.T)[0, 1] == pytest.approx(labels["rho"], abs=0.1)
        assert abs(np.corrcoef(tail.T)[0, 1]) < 0.2


# --------------------------------------------------------------------------------------
# Scoring one answer (hand-worked)
# --------------------------------------------------------------------------------------


def test_a_number_one_unit_off_in_the_last_printed_digit_is_wrong():
    """Correct = equal to the printed truth at the prompt's decimals: 12.35 for 12.34 is
    wrong at 2 decimals (off by one printed unit), 12.340 is right; at 1 decimal 12.3 is
    right and 12.4 wrong. Absolute percentage error: |12.35 - 12.34| / 12.34 x 100."""
    from tsrate.suites.understanding.scoring import Parsed, score_answer

    truth = {"value": 12.34, "date": "2020-01-01"}
    off = score_answer("retrieval", truth, Parsed(True, value=12.35), 2)
    assert off["correct"] is False
    assert off["abs_pct_error"] == pytest.approx(0.01 / 12.34 * 100)
    assert score_answer("retrieval", truth, Parsed(True, value=12.340), 2)["correct"] is True
    assert (
        score_answer("retrieval", {"value": 12.3}, Parsed(True, value=12.4), 1)["correct"] is False
    )


def test_any_of_tied_extreme_dates_is_a_correct_date():
    """When the printed minimum occurs on two dates, naming either is the right date (the
    expected ``dates`` list holds both); a third date is wrong."""
    from tsrate.suites.understanding.scoring import Parsed, score_answer

    expected = {"value": 1.5, "dates": ["2020-01-03", "2020-01-07"]}
    for date, ok in (("2020-01-03", True), ("2020-01-07", True), ("2020-01-05", False)):
        out = score_answer("arithmetic_min", expected, Parsed(True, value=1.5, date=date), 2)
        assert out["correct"] is True and out["date_correct"] is ok


# --------------------------------------------------------------------------------------
# What a correct answer is (the expected values of the prompts)
# --------------------------------------------------------------------------------------


def _trend_sample(values) -> g.Sample:
    import datetime as dt

    return g.Sample(
        dataset="trend",
        split="test",
        index=0,
        seed=123,
        start_date=dt.date(2020, 1, 1),
        values=np.asarray(values, dtype=float),
        sub_feature="none",
        labels={},
        qualitative="q",
        quantitative="q",
    )


def test_extremes_and_retrieved_values_are_the_printed_numbers():
    """The model sees the series at the prompt's decimals, so the truth is what it sees:
    1.004 and 1.001 both print as 1.00 -- the minimum is 1.00 on BOTH dates (the raw
    minimum would be 1.001 on Jan 2 only) -- and 2.006 prints as 2.01, the maximum. The
    retrieved value on any date is that date's printed number."""
    from tsrate.suites.understanding.tasks import build_prompts

    values = [1.004, 1.001, 2.006, 1.5, 1.7, 1.2]
    sample = _trend_sample(values)
    prompts = build_prompts(
        sample, ("csv",), 2, {}, tasks=("retrieval", "arithmetic_min", "arithmetic_max")
    )
    by_task = {p.task: p.expected for p in prompts}
    assert by_task["arithmetic_min"] == {"value": 1.0, "dates": ["2020-01-01", "2020-01-02"]}
    assert by_task["arithmetic_max"] == {"value": 2.01, "dates": ["2020-01-03"]}
    retrieval = by_task["retrieval"]
    day = (np.datetime64(retrieval["date"]) - np.datetime64("2020-01-01")).astype(int)
    assert retrieval["value"] == float(f"{values[day]:.2f}")
    assert retrieval["value"] != values[day]  # every value here has a third decimal


def test_search_asks_present_values_for_every_other_replicate_of_the_eight_cells():
    """Docstring: the 8 (quadrant, extreme) cells cycle with the index; every other
    REPLICATE (index // 8 even) is asked about a present value. So indices 0-7 and 16-23
    are 'yes' and 8-15, 24-31 'no', and both extremes of every quadrant get as many 'yes'
    questions (an index-parity rule would ask only the 'max' cells)."""
    from tsrate.suites.understanding.tasks import build_prompts

    answers = {}
    for index in range(32):
        s = g.generate_sample("brownian", "test", index, 5, position_length=40)
        (p,) = build_prompts(s, ("csv",), 2, {}, tasks=("search",))
        answers[index] = p.expected["answer"]
        printed = {f"{v:.2f}" for v in s.values}
        value = f"{p.expected['value']:.2f}"
        assert (value in printed) == (p.expected["answer"] == "yes")
    assert [answers[i] for i in range(32)] == (["yes"] * 8 + ["no"] * 8) * 2


def test_a_series_without_volatility_has_no_changing_volatility():
    """The volatility detection question asks whether volatility CHANGES over time; the
    paper's "no volatility" series (a smooth drift) and constant volatility both say no,
    clustered, leverage and increasing volatility say yes."""
    from tsrate.suites.understanding.tasks import build_prompts

    for kind, answer in (
        ("none", "no"),
        ("constant", "no"),
        ("clustered", "yes"),
        ("leverage", "yes"),
        ("increasing", "yes"),
    ):
        s = g.generate_sample("volatility", "test", 0, 11, kind=kind)
        (p,) = build_prompts(s, ("csv",), 2, {}, tasks=("detection",))
        assert p.expected["answer"] == answer, kind


# --------------------------------------------------------------------------------------
# Shared intervals (tsrate.suites.intervals): the 95 % percentile intervals
# --------------------------------------------------------------------------------------


def test_bootstrap_interval_is_the_central_95_percent_percentile_interval():
    """Against scipy.stats.bootstrap (percentile method, its own resampling): with 20,000
    resamples both estimate the 2.5 % and 97.5 % quantiles of the bootstrap distribution of
    the mean to ~0.003; the 5 % / 95 % quantiles would sit ~0.02 inside."""
    from tsrate.suites.intervals import bootstrap_interval

    data = np.random.default_rng(9).normal(0.0, 1.0, 200)
    low, high = bootstrap_interval(data, resamples=20_000, seed=1)
    ref = stats.bootstrap(
        (data,), np.mean, n_resamples=20_000, method="percentile", random_state=2
    ).confidence_interval
    assert low == pytest.approx(ref.low, abs=0.008)
    assert high == pytest.approx(ref.high, abs=0.008)


def test_resampled_interval_is_the_2_5_and_97_5_percentiles_of_the_finite_scores():
    """Hand-worked: the scores 0, 1, ..., 100 (plus undefined NaN resamples, left out) have
    the 2.5 % and 97.5 % quantiles 2.5 and 97.5 (linear interpolation at rank 0.025 x 100)."""
    from tsrate.suites.intervals import resampled_interval

    scores = [*range(101), float("nan"), float("nan")]
    assert resampled_interval(scores) == pytest.approx((2.5, 97.5))
