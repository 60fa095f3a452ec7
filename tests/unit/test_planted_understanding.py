"""Planted-error checks of the understanding suite's science: each test pins one coefficient,
lag, scale or direction of a generator or a score to what the module docstrings (or
Appendix B of the paper) state, computed independently (closed forms, hand-worked examples,
statsmodels / scipy), so that changing it in the product fails here."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

from tests.support.understanding_samples import trend_sample
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


def test_count_peaks_is_strict_on_plateaus():
    """The docstring's "strict": a point must be above (below) both neighbours. A flat top
    0 1 1 0 and a flat bottom 1 0 0 1 have no strict extremum (the sign-change count gave
    two of each); a plateau on a slope (0 1 1 2) is neither too. Checked against a loop."""
    for series in ([0.0, 1, 1, 0], [1.0, 0, 0, 1], [0.0, 1, 1, 2], [0.0, 2, 1, 1, 3, 0]):
        x = np.array(series)
        maxima = sum(x[i] > x[i - 1] and x[i] > x[i + 1] for i in range(1, len(x) - 1))
        minima = sum(x[i] < x[i - 1] and x[i] < x[i + 1] for i in range(1, len(x) - 1))
        assert count_peaks(x) == (maxima, minima)
    assert count_peaks(np.array([0.0, 1, 1, 0])) == (0, 0)
    assert count_peaks(np.array([0.0, 2, 1, 1, 3, 0])) == (2, 0)


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


def test_extremes_and_retrieved_values_are_the_printed_numbers():
    """The model sees the series at the prompt's decimals, so the truth is what it sees:
    1.004 and 1.001 both print as 1.00 -- the minimum is 1.00 on BOTH dates (the raw
    minimum would be 1.001 on Jan 2 only) -- and 2.006 prints as 2.01, the maximum. The
    retrieved value on any date is that date's printed number."""
    from tsrate.suites.understanding.tasks import build_prompts

    values = [1.004, 1.001, 2.006, 1.5, 1.7, 1.2]
    sample = trend_sample(values)
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


# --------------------------------------------------------------------------------------
# The statistical analyst (reference answerer): the standard statistics its docstring names
# --------------------------------------------------------------------------------------


def test_analyst_robust_z_scales_by_the_noise_sd():
    """Noise sd from changes: the differences of N(0, s^2) noise have sd s sqrt(2), and
    their median absolute value is 0.6745 s sqrt(2). So the robust z of 5,000 points of
    N(0, 2^2) noise has sd ~1 (the rolling median of 21 adds ~4 %), not 1 / sqrt(2)."""
    from tsrate.suites.understanding.analyst import _robust_z

    x = np.random.default_rng(10).normal(0.0, 2.0, 5000)
    assert np.std(_robust_z(x)) == pytest.approx(1.04, abs=0.06)


def test_analyst_changepoint_finds_a_variance_break_off_centre():
    """Gaussian likelihood ratio of one mean-and-variance change: N(0, 1) for 60 steps,
    then N(0, 3^2) for 140. The scan's best split is within 3 steps of 60, and its LR is
    n log var(x) - k log var(a) - (n - k) log var(b) at that split (computed here)."""
    from tsrate.suites.understanding.analyst import changepoint

    rng = np.random.default_rng(11)
    x = np.concatenate([rng.normal(0, 1, 60), rng.normal(0, 3, 140)])
    k, lr = changepoint(x)
    assert abs(k - 60) <= 3
    expected = 200 * np.log(x.var()) - k * np.log(x[:k].var()) - (200 - k) * np.log(x[k:].var())
    assert lr == pytest.approx(expected)


def test_analyst_cross_lag_is_how_many_days_the_second_series_follows():
    """Docstring: the lag L of the largest |cross-correlation|, b following a by L days.
    b_t = -a_{t-3} (plus a little noise): lag +3, correlation about -1; swapped, -3."""
    from tsrate.suites.understanding.analyst import cross_lag

    rng = np.random.default_rng(12)
    a = rng.normal(0, 1, 203)
    b = -a[:-3] + 0.05 * rng.normal(0, 1, 200)
    a = a[3:]
    lag, r = cross_lag(a, b)
    assert lag == 3 and r < -0.95
    assert cross_lag(b, a)[0] == -3


def test_analyst_excess_kurtosis_is_zero_for_gaussian_noise():
    """Excess kurtosis m4 / m2^2 - 3 (computed by hand on the detrended series): ~0 for
    10,000 Gaussian values (sd ~0.05), ~3 (here computed) for Student-t with 6 dof."""
    from tsrate.suites.understanding.analyst import excess_kurtosis

    rng = np.random.default_rng(13)
    for x in (rng.normal(0, 1, 10_000), rng.standard_t(6, 10_000)):
        y = x - np.polyval(np.polyfit(np.arange(x.size), x, 1), np.arange(x.size))
        m2, m4 = np.mean((y - y.mean()) ** 2), np.mean((y - y.mean()) ** 4)
        assert excess_kurtosis(x) == pytest.approx(m4 / m2**2 - 3, abs=1e-9)
    assert abs(excess_kurtosis(rng.normal(0, 1, 10_000))) < 0.2


def test_analyst_trend_needs_r2_of_one_half_and_p_below_one_in_a_thousand():
    """Docstring: trend = OLS with R^2 >= 0.5 and p < 0.001. A significant but weak trend
    (R^2 ~0.1 over 1,000 points, computed as corr(t, x)^2) is no trend; a strong one
    (R^2 ~0.9) is."""
    from tsrate.suites.understanding.analyst import has_trend

    rng = np.random.default_rng(14)
    t = np.arange(1000.0)
    weak = 0.001 * t + rng.normal(0, 1, 1000)
    strong = 0.01 * t + rng.normal(0, 1, 1000)
    assert 0.03 < np.corrcoef(t, weak)[0, 1] ** 2 < 0.2
    assert np.corrcoef(t, strong)[0, 1] ** 2 > 0.8
    assert not has_trend(weak) and has_trend(strong)


def test_analyst_stationarity_is_adf_rejecting_and_kpss_not_rejecting():
    """Docstring: stationary = ADF p < 0.05 and KPSS p > 0.05. White noise is stationary;
    its random walk (cumulative sum) is not."""
    from tsrate.suites.understanding.analyst import is_stationary

    rng = np.random.default_rng(15)
    noise = rng.normal(0, 1, 400)
    assert is_stationary(noise)
    assert not is_stationary(np.cumsum(noise))


def test_analyst_seasonality_needs_a_fifth_of_the_spectral_power():
    """Docstring: seasonality = the periodogram peak's share of spectral power (>= 0.2).
    White noise spreads its power (no peak near a fifth over 100 points); a sinusoid of
    amplitude 5 in unit noise concentrates ~90 % in one peak."""
    from tsrate.suites.understanding.analyst import has_seasonality

    rng = np.random.default_rng(16)
    t = np.arange(100)
    assert not any(has_seasonality(rng.normal(0, 1, 100)) for _ in range(30))
    assert has_seasonality(5 * np.sin(2 * np.pi * t / 10) + rng.normal(0, 1, 100))


def test_analyst_leverage_is_larger_moves_after_falls():
    """Docstring: the asymmetry of |change| after falls vs rises. Changes -1, +3, -1, +3,
    ...: after every fall a move of 3, after every rise a move of 1 -- leverage."""
    from tsrate.suites.understanding.analyst import volatility_kind

    changes = np.tile([-1.0, 3.0], 40)
    assert volatility_kind(100 + np.cumsum(changes)) == "leverage"


def _analyst_answer(sample: g.Sample, task: str) -> tuple[str, str]:
    from tsrate.suites.understanding.analyst import StatisticalAnalyst
    from tsrate.suites.understanding.tasks import build_prompts

    (prompt,) = build_prompts(sample, ("csv",), 2, {}, tasks=(task,))
    expected = prompt.expected["answer"]
    return StatisticalAnalyst().answer(prompt), expected


def test_analyst_reads_negative_correlation_as_correlation():
    """Docstring: correlation = Pearson |r| >= 0.3, and dynamic correlation compares |r| of
    the halves: a negative correlation (rho <= -0.6) is detected, and a NEGATIVE correlation
    confined to one half is placed in that half."""
    found = 0
    for i in range(40):
        s = g.generate_sample("correlation", "test", i, 11, kind="negative", min_length=120)
        answer, expected = _analyst_answer(s, "detection")
        assert answer == expected == "yes"
    for kind in ("correlated_first_half", "correlated_second_half"):
        for i in range(60):
            s = g.generate_sample("dynamic_correlation", "test", i, 11, kind=kind, min_length=150)
            if s.labels["rho"] > 0:
                continue
            answer, expected = _analyst_answer(s, "classification")
            assert answer == expected == kind
            found += 1
    assert found > 20


def test_leverage_returns_follow_the_papers_recursion_with_its_floor():
    """Paper (Appendix B, volatility): sigma_t = sigma_{t-1} (1 + 0.3) after a negative
    return, max(sigma_{t-1} (1 - 0.3), 0.01) otherwise, from a base of 0.1; r_t = sigma
    eps_t. The eps are re-drawn from the same seed (the generator's first draw), sigma is
    read off as r / eps and checked step by step against the paper's recursion; over 5,000
    steps the floor 0.01 is reached (seven rises in a row suffice)."""
    from tsrate.suites.understanding.generators.univariate import leverage_returns

    r = leverage_returns(np.random.default_rng(17), 5000)
    eps = np.random.default_rng(17).normal(0.0, 1.0, 5000)
    sigma = r / eps
    expected = np.empty(5000)
    expected[0] = 0.1
    for t in range(1, 5000):
        previous = expected[t - 1]
        expected[t] = previous * 1.3 if r[t - 1] < 0 else max(previous * 0.7, 0.01)
    np.testing.assert_allclose(sigma, expected, rtol=1e-9)
    assert expected.min() == 0.01


def test_sinusoidal_position_series_have_periods_between_n_6_and_n_2():
    """Docstring: period P in [n / 6, n / 2]. The period is estimated independently: the
    best least-squares fit of level + a sin + b cos over a grid of periods from n / 12 to
    n; every estimate lies within 5 % of [n / 6, n / 2] (n = 175)."""
    n = 175
    t = np.arange(n)
    grid = np.linspace(n / 12, n, 800)
    for index in range(40):
        s = g.generate_sample("sinusoidal", "test", index, 11, position_length=n)
        errors = []
        for period in grid:
            design = np.column_stack(
                [np.ones(n), np.sin(2 * np.pi * t / period), np.cos(2 * np.pi * t / period)]
            )
            _, residual, *_ = np.linalg.lstsq(design, s.values, rcond=None)
            errors.append(residual[0])
        best = grid[int(np.argmin(errors))]
        assert n / 6 * 0.95 <= best <= n / 2 * 1.05, (index, best)


def test_cross_correlation_detection_asks_about_the_lag_not_the_sign():
    """The cross-correlation question asks whether one series follows the other with a
    time lag: yes for both lagged kinds (positive or negative), no for both direct ones."""
    from tsrate.suites.understanding.tasks import build_prompts

    for kind in ("positive_direct", "positive_lagged", "negative_direct", "negative_lagged"):
        s = g.generate_sample("cross_correlation", "test", 0, 11, kind=kind)
        (p,) = build_prompts(s, ("csv",), 2, {}, tasks=("detection",))
        assert p.expected["answer"] == ("yes" if kind.endswith("lagged") else "no"), kind


def test_the_matching_answer_letter_labels_the_series_own_description():
    """Matching: the expected letter is the one whose option, as printed in the prompt,
    is the series' own description (intra: qualitative + quantitative; cross: its
    qualitative one); the other three letters hold other series' descriptions."""
    from tsrate.suites.understanding.tasks import build_prompts

    datasets = ("trend", "seasonality", "anomalies", "volatility")
    pool = {d: [g.generate_sample(d, "test", i, 11) for i in range(6)] for d in datasets}
    letters_seen = set()
    for sample in pool["trend"]:
        prompts = build_prompts(
            sample, ("csv",), 2, pool, tasks=("matching_intra", "matching_cross")
        )
        assert {p.task for p in prompts} == {"matching_intra", "matching_cross"}
        for p in prompts:
            own = sample.qualitative
            if p.task == "matching_intra":
                own = f"{sample.qualitative} {sample.quantitative}"
            options = dict(re.findall(r"^([ABCD])\. (.*)$", p.text, flags=re.MULTILINE))
            assert options[p.expected["answer"]] == own
            assert sum(text == own for text in options.values()) == 1
            letters_seen.add(p.expected["answer"])
    assert len(letters_seen) >= 3  # the right letter moves
