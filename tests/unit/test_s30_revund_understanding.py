"""Review against the paper (Appendix B) of the understanding suite's statistical analyst:
double and triple spikes are 2 / 3 anomalies on CONSECUTIVE days and a step spike lasts 4
days or more (the generator's convention), so the analyst must read a run of 2 spike days
as a double spike and a run of 3 as a triple spike, not count separate runs."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.suites.understanding import analyst as an
from tsrate.suites.understanding.generators.univariate import anomalies


def _flat(n: int = 100) -> np.ndarray:
    # alternating +-0.1: noise sd from the changes is 0.2 / (0.6745 sqrt 2), spikes of 10
    # are far above 6 robust z
    return 0.1 * np.resize([1.0, -1.0], n)


@pytest.mark.parametrize(
    ("days", "kind"),
    [
        ([50], "single_spike"),
        ([50, 51], "double_spike"),
        ([50, 51, 52], "triple_spike"),
        ([50, 51, 52, 53], "step_spike"),
        (list(range(50, 60)), "step_spike"),
    ],
)
def test_a_run_of_consecutive_spike_days_is_read_by_its_length(days, kind):
    y = _flat()
    y[days] += 10.0
    assert an.anomaly_kind(y) == kind


@pytest.mark.parametrize("kind", ["double_spike", "triple_spike"])
def test_generated_double_and_triple_spikes_are_classified_as_generated(kind):
    """The generator's own series (printed at 2 decimals, as a prompt shows them): the
    analyst's class agrees with the generator's label on every one of 20 series."""
    said = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(30, 151))
        values, sub_feature, labels, *_ = anomalies(rng, n, kind)
        assert sub_feature == kind and len(labels["positions"]) == {"double_spike": 2}.get(kind, 3)
        said.append(an.anomaly_kind(np.round(values, 2)))
    assert said == [kind] * 20


def test_a_level_shift_half_way_along_is_a_level_shift_not_a_trend():
    """A persistent jump of 10 noise sds on day 50 of 100: a straight line fitted to it has
    R^2 of about 0.7 (so it passes the trend test), but one step fits it to the noise: it is
    a level shift (and the series has anomalies), whatever the trend test says."""
    rng = np.random.default_rng(3)
    y = 50.0 + rng.normal(0.0, 1.0, 100)
    y[50:] += 10.0
    assert an.has_trend(y)  # the trap: a line explains most of a mid-series jump
    assert an.anomaly_kind(y) == "level_shift"
    # a straight trend of the same rise is still no level shift
    ramp = 50.0 + 0.2 * np.arange(100) + rng.normal(0.0, 1.0, 100)
    assert an.anomaly_kind(ramp) != "level_shift"


def test_generated_level_shifts_are_read_as_level_shifts():
    """The generator's level shifts (a persistent jump of 8-15 sd, not in the first or
    last 10 % of the series), printed at 2 decimals: every one of 20 is read as one."""
    said = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(30, 151))
        values, sub_feature, labels, *_ = anomalies(rng, n, "level_shift")
        assert sub_feature == "level_shift" and 8 <= abs(labels["magnitude"]) <= 15
        said.append(an.anomaly_kind(np.round(values, 2)))
    assert said == ["level_shift"] * 20


def _sse_line(x):
    t = np.arange(len(x))
    return float(np.sum((x - np.polyval(np.polyfit(t, x, 1), t)) ** 2))


def _sse_best_step(x):
    return min(
        float(np.sum((x[:k] - x[:k].mean()) ** 2) + np.sum((x[k:] - x[k:].mean()) ** 2))
        for k in range(1, len(x))
    )


@pytest.mark.parametrize(
    ("values", "beats"),
    [
        ([0.0, 0.0, 10.0, 10.0], True),  # 4 days: the shortest series it judges
        ([0.0, 0.0, 10.0], False),  # 3 days: too short to tell a jump from a line
        ([0.0, *[10.0] * 9], True),  # the jump right after the first day (step SSE 0)
        ([*[10.0] * 9, 0.0], True),  # ... and right before the last
        (list(np.arange(10.0)), False),  # a straight line: the line fits exactly
        # a jump of 4 on a slope: 0.5 a day leaves the step 0.33 of the line's squared
        # residuals (a jump), 0.75 a day 0.74 (under the line's, but not under half)
        (list(np.repeat([0.0, 4.0], 4) + 0.5 * np.arange(8)), True),
        (list(np.repeat([0.0, 4.0], 4) + 0.75 * np.arange(8)), False),
    ],
)
def test_a_step_beats_the_line_when_it_leaves_under_half_its_squared_residuals(values, beats):
    x = np.array(values)
    if len(x) >= 4:  # the rule, computed by loops here
        assert (_sse_best_step(x) < 0.5 * _sse_line(x)) is beats
    assert an._step_beats_line(x) is beats


def test_a_jump_on_a_trend_needs_more_than_five_noise_sds():
    """Steps of e every third day (most changes 0: the noise is the 1e-9 floor) with a jump
    of d on day 15 of 30: the line passes the trend test, one step beats it; the edge
    medians differ by d + e. d + e = 5e-9 is exactly 5 noise sds (no level shift, and no
    spike: z <= 5); 7e-9 is a level shift."""
    e = 1e-9
    for d, kind in ((4e-9, "none"), (6e-9, "level_shift")):
        x = np.tile([0.0, 0.0, 0.0, e, e, e], 5)
        x[15:] += d
        assert an.has_trend(x) and an._step_beats_line(x) and an._frozen_run(x) == 3
        assert an.anomaly_kind(x) == kind, d


def test_a_jump_without_a_trend_needs_only_five_noise_sds():
    """Without a trend the step test is not needed: steps of d every third day (noise the
    1e-9 floor, no step beating the line) at 5.5 noise sds are a level shift."""
    x = np.tile([0.0, 0.0, 0.0, 5.5e-9, 5.5e-9, 5.5e-9], 5)
    assert not an.has_trend(x) and not an._step_beats_line(x)
    assert an.anomaly_kind(x) == "level_shift"
