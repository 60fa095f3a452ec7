"""Planted-error checks of the reasoning suite's science: the procedural scenario model's
curve (trend, cycle, events, noise), the what-if wording against the changed parameters,
the answer buckets, and the forecast references, each against a hand-worked value or a
closed form."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from tests.support.reasoning_items import PLAIN
from tsrate.suites.reasoning import scenario_model as sm
from tsrate.suites.reasoning import scenarios as sc


def test_trend_is_the_relative_change_from_the_first_to_the_last_step():
    """Docstring: trend = relative change of the level from the first to the last step;
    a +50 % trend on a level of 200 ends at exactly 300, linearly (equal steps)."""
    values = sm.clean_series(dataclasses.replace(PLAIN, trend=0.5))
    assert values[0] == pytest.approx(200.0)
    assert values[-1] == pytest.approx(300.0)
    np.testing.assert_allclose(np.diff(values), 100.0 / 49)


def test_cycle_has_the_subjects_period_and_a_relative_amplitude():
    """A 20 % weekly cycle on a level of 200: the curve repeats every 7 steps (not every
    3.5 or 14), swings +-40 at most, and at step 7/4 (quarter period) sin = 1 would give
    240; checked on the integer steps: max = 200 + 40 sin(2 pi 2 / 7)."""
    values = sm.clean_series(dataclasses.replace(PLAIN, amplitude=0.2, length=70))
    np.testing.assert_allclose(values[7:], values[:-7], atol=1e-9)
    assert not np.allclose(values[4:], values[:-4])
    assert values.max() == pytest.approx(200 + 40 * np.sin(2 * np.pi * 2 / 7))
    assert values.mean() == pytest.approx(200.0, abs=1e-9)  # whole cycles: zero mean


def test_a_step_multiplies_every_value_from_its_0_based_step_on():
    """Docstring: event_step is the 0-based index of the first affected value; a step of
    +60 % multiplies it and every later value by 1.6, and no earlier one."""
    event = dataclasses.replace(PLAIN, event_kind="step_up", event_step=30, event_effect=0.6)
    ratio = sm.clean_series(event) / sm.clean_series(PLAIN)
    np.testing.assert_allclose(ratio[:30], 1.0)
    np.testing.assert_allclose(ratio[30:], 1.6)


def test_a_spike_adds_a_share_of_the_starting_level_for_three_steps():
    """Docstring: the spike adds event_effect x the starting level for SPIKE_STEPS (3)
    steps from its step: +1.5 x 200 = +300 on steps 20, 21, 22 only."""
    spike = dataclasses.replace(PLAIN, event_kind="spike", event_step=20, event_effect=1.5)
    added = sm.clean_series(spike) - sm.clean_series(PLAIN)
    expected = np.zeros(50)
    expected[20:23] = 300.0
    np.testing.assert_allclose(added, expected)


def test_observed_noise_is_three_percent_of_the_starting_level():
    """Docstring: Gaussian noise of 3 % of the level. On a flat series of level 1,000 over
    4,000 steps the residual sd is 30 (sampling error ~1.1 %, rounding to 0.01 negligible)."""
    scenario = dataclasses.replace(PLAIN, base=1000.0, length=4000)
    residual = sm.observed_series(scenario) - sm.clean_series(scenario)
    assert np.std(residual) == pytest.approx(30.0, rel=0.05)


def test_explanation_miss_rescales_the_curve_by_least_squares():
    """Docstring: the residual after the BEST least-squares scale factor. A series that is
    exactly 2.5 x the clean curve is explained perfectly (miss 0); for a series s and curve
    c the optimum is (c.s)/(c.c), computed here by numpy's lstsq."""
    scenario = dataclasses.replace(PLAIN, trend=0.4, amplitude=0.15)
    curve = sm.clean_series(scenario)
    assert sm.explanation_miss(2.5 * curve, scenario) == pytest.approx(0.0, abs=1e-12)
    series = curve + np.random.default_rng(0).normal(0, 20, curve.size)
    (scale,), *_ = np.linalg.lstsq(curve[:, None], series, rcond=None)
    expected = np.sqrt(np.mean((series - scale * curve) ** 2) / np.mean(series**2))
    assert sm.explanation_miss(series, scenario) == pytest.approx(expected)


def test_first_timestamps_follow_the_frequency():
    """Hand-worked from START_DATE (Monday 2023-01-02): step 0 is that day; daily step 1 is
    Jan 3, weekly step 1 Jan 9, hourly step 1 01:00, monthly step 1 Feb 1."""
    day = PLAIN  # health: daily
    week = dataclasses.replace(PLAIN, subject_index=6)  # agriculture: weekly
    hour = dataclasses.replace(PLAIN, subject_index=2)  # transport: hourly
    month = dataclasses.replace(PLAIN, subject_index=5)  # climate: monthly
    assert sm.timestamp(day, 0) == "2023-01-02" and sm.timestamp(day, 1) == "2023-01-03"
    assert sm.timestamp(week, 1) == "2023-01-09"
    assert (
        sm.timestamp(hour, 0) == "2023-01-02 00:00" and sm.timestamp(hour, 1) == "2023-01-02 01:00"
    )
    assert sm.timestamp(month, 1) == "2023-02-01"


# --------------------------------------------------------------------------------------
# What-if wording against the changed parameters
# --------------------------------------------------------------------------------------

#: English multipliers of the what-if questions, read by hand.
_WORDS = {"twice": 2.0, "three times": 3.0, "half": 0.5}


def _stated_factor(text: str) -> float | None:
    for word, factor in _WORDS.items():
        if word in text:
            return factor
    return None


@pytest.mark.parametrize("kind", ["step_up", "step_down", "spike"])
def test_every_what_if_changes_the_parameter_by_what_its_sentence_says(kind):
    """Each question (true ones and their near copies) read as English: 'twice / three
    times / half as large' multiplies the event effect (step down capped at -90 %),
    'N% higher' the starting level by 1 + N/100, 'a cycle of plus or minus N%' sets the
    amplitude to N/100, 'twice as steep' doubles the trend, 'no cycle' / 'had not
    happened' / 'the other way' remove or reverse it."""
    base = dataclasses.replace(PLAIN, trend=0.3, event_kind=kind, event_step=30)
    effect = {"step_up": 0.6, "step_down": -0.3, "spike": 1.5}[kind]
    for amplitude in (0.0, 0.15):
        scenario = dataclasses.replace(base, event_effect=effect, amplitude=amplitude)
        changes = {**sm.what_ifs(scenario)}
        changes.update({f"near_{k}": v for k, v in sm.near_what_ifs(scenario).items()})
        for name, (text, changed) in changes.items():
            higher = re.search(r"(\d+)% higher", text)
            cycle = re.search(r"cycle of plus or minus (\d+)%", text)
            if higher:
                assert changed.base == pytest.approx(200.0 * (1 + int(higher[1]) / 100)), name
            elif cycle:
                assert changed.amplitude == pytest.approx(int(cycle[1]) / 100), name
            elif "had not happened" in text:
                assert changed.event_kind == "none", name
            elif "the other way" in text:
                assert changed.trend == -scenario.trend, name
            elif "no " in text and "cycle" in text:
                assert changed.amplitude == 0.0, name
            elif "steep" in text:
                assert changed.trend == pytest.approx(_stated_factor(text) * scenario.trend)
            elif "cycle" in text:
                assert changed.amplitude == pytest.approx(
                    _stated_factor(text) * scenario.amplitude
                ), name
            else:
                want = max(-0.9, _stated_factor(text) * effect)
                assert changed.event_effect == pytest.approx(want), name


def test_difference_buckets_match_their_option_texts():
    """The option texts: lower by more than 10 % (ratio < 0.9), within 10 % (0.9-1.1),
    higher by 10 % to 60 % (1.1-1.6), higher by more than 60 % (> 1.6); ratios within 3 %
    of an edge are too close to call (None)."""
    for ratio, text in (
        (0.8, "lower by more than 10%"),
        (1.0, "within 10%"),
        (1.2, "higher by 10% to 60%"),
        (1.55, "higher by 10% to 60%"),
        (1.7, "higher by more than 60%"),
    ):
        assert text in sc.DIFFERENCE_OPTIONS[sc.difference_bucket(ratio)], ratio
    for ratio in (0.885, 1.09, 1.62):
        assert sc.difference_bucket(ratio) is None, ratio


def test_forecast_items_state_the_0_based_horizon_step_of_the_event():
    """params["event_step"] is the 0-based index, within the future values, of the first
    value the step event changes: recomputed from the stored scenario, the curve with the
    event divided by the curve without it is 1 before that index and 1 + effect from it
    on."""
    rng = np.random.default_rng(3)
    for subject in range(6):
        item = sc.forecast_item(rng, subject, 100, 0.8)
        scenario = sm.scenario_from_dict(item.params["scenario"])
        without = dataclasses.replace(scenario, event_kind="none", event_step=-1)
        ratio = (sm.clean_series(scenario) / sm.clean_series(without))[len(item.series) :]
        step = item.params["event_step"]
        assert 0 <= step < len(item.future)
        np.testing.assert_allclose(ratio[:step], 1.0)
        np.testing.assert_allclose(ratio[step:], 1.0 + item.params["event_effect"])


# --------------------------------------------------------------------------------------
# Forecast references
# --------------------------------------------------------------------------------------


def test_predict_median_baseline_repeats_the_history_median():
    """The paper's "predict median" baseline, hand-worked: the history 1, 2, 100, 3, 4 has
    median 3 (its mean, 22, would follow the outlier)."""
    from tsrate.suites.reasoning.answerers import median_forecast

    np.testing.assert_array_equal(median_forecast([1, 2, 100, 3, 4], 4), [3.0] * 4)


def test_context_rule_applies_the_stated_step_from_its_horizon_index():
    """The context rule, hand-computed: the level is the mean of the last 10 history
    values; where the prompt holds the caption (which states the event's step and size)
    the forecast is level x (1 + effect) from the event's 0-based horizon index on, and the
    level everywhere else; without the caption it is the level throughout."""
    from tsrate.suites.reasoning.answerers import ContextRule

    item = sc.forecast_item(np.random.default_rng(5), 4, 100, 0.8)
    level = sum(item.series[-10:]) / 10
    step, effect = item.params["event_step"], item.params["event_effect"]
    expected = np.array([level] * step + [level * (1 + effect)] * (len(item.future) - step))
    rule = ContextRule()
    requests = rule.requests([item])
    answers = {r.condition: a for r, a in zip(requests, rule.answer(requests), strict=True)}
    np.testing.assert_allclose(answers["with_context"].forecast, expected)
    np.testing.assert_allclose(answers["with_all_context"].forecast, expected)
    np.testing.assert_allclose(answers["without_context"].forecast, level)
    np.testing.assert_allclose(answers["with_characteristics"].forecast, level)


# --------------------------------------------------------------------------------------
# Distractors are refuted by the series (miss recomputed by least squares here)
# --------------------------------------------------------------------------------------


def _miss(series, scenario: sm.Scenario) -> float:
    """Relative RMS residual of the series after the least-squares scale of the scenario's
    clean curve (numpy lstsq), over the RMS of the series."""
    series = np.asarray(series, dtype=float)
    curve = sm.clean_series(dataclasses.replace(scenario, length=len(series)))
    (scale,), *_ = np.linalg.lstsq(curve[:, None], series, rcond=None)
    return float(np.sqrt(np.mean((series - scale * curve) ** 2) / np.mean(series**2)))


def test_contrastive_distractors_explain_the_series_at_least_2_5_times_worse():
    """Docstring (contrastive mode): a distractor's clean curve misses the observed series
    by at least MIN_DISTRACTOR_MISS (0.08) and 2.5 times the true caption's miss."""
    items = sc.generate_items(sc.GeneratorConfig(seed=4, scenarios=16, distractors="contrastive"))
    checked = 0
    for item in (i for i in items if i.task == "etiological"):
        truth = sm.scenario_from_dict(item.params["scenario"])
        own = _miss(item.series, truth)
        for position, option in enumerate(item.params["option_scenarios"]):
            if position == item.answer_index:
                continue
            miss = _miss(item.series, sm.scenario_from_dict(option))
            assert miss >= max(0.08, 2.5 * own) - 1e-12
            checked += 1
    assert checked >= 12


def test_wrong_which_change_options_are_refuted_by_the_second_series():
    """Docstring: the wrong what-ifs of a which_change item explain the second series
    worse than MIN_DISTRACTOR_MISS (0.08) even after the best rescaling. (Seed 3 with 48
    scenarios draws a case where a what-if would otherwise pass for the right one.)"""
    items = sc.generate_items(sc.GeneratorConfig(seed=3, scenarios=48, forecasts=0))
    checked = 0
    for item in (i for i in items if i.task == "qa_two" and i.category == "which_change"):
        scenario = sm.scenario_from_dict(item.params["scenario"])
        changes = sm.what_ifs(scenario)
        for name in item.params["option_changes"][1:]:
            assert _miss(item.series_b, changes[name][1]) >= 0.08 - 1e-12
            checked += 1
    assert checked >= 9


def test_a_caption_invisible_within_the_noise_is_equivalent_even_on_a_clean_series():
    """A random distractor must not be a caption that explains the series as well as the
    truth. On a noise-free series the true caption's miss is 0, so 'within 1.5 x its miss'
    alone would let a caption through whose curve differs from the truth by far less than
    the 3 % noise: here a +2 % step on the very last value (miss ~0.003, recomputed by least
    squares) must still count as equivalent, and a falling, cycle-free caption not."""
    truth = dataclasses.replace(PLAIN, trend=0.3, amplitude=0.2)
    series = sm.clean_series(truth)
    invisible = dataclasses.replace(truth, event_kind="step_up", event_step=49, event_effect=0.02)
    assert 0 < _miss(series, invisible) < sm.NOISE / 3
    assert sc.equivalent_caption(series, truth, invisible)
    other = dataclasses.replace(PLAIN, subject_index=4, trend=-0.3)
    assert not sc.equivalent_caption(series, truth, other)
