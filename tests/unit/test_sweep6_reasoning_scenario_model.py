"""The reasoning suite's scenario model (tsrate.suites.reasoning.scenario_model) against
values worked out independently of the code: the clean curve rebuilt step by step from its
docstring, the observed series from the documented 3 % noise, timestamps from the standard
library's calendar, the least-squares miss from numpy's lstsq, the what-if changes from the
numbers their questions state ("twice as large", "50% higher", "plus or minus 20%"), number
texts worked by hand, and each drawn scenario redrawn here in the same order from a
generator with the same seed (a scripted generator for the exact-boundary draws).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_reasoning_models.json): each test pins exact values, so a changed
coefficient, range, comparison or rounding in the model changes a checked value. The
redrawn scenarios follow the generator's draw order: a harmless reordering of its draws
fails them too.
"""

from __future__ import annotations

import dataclasses
import datetime
import math

import numpy as np
import pytest

from tsrate.suites.reasoning import scenario_model as sm

RETAIL, FINANCE, TRANSPORT, CLIMATE, AGRICULTURE = 4, 1, 2, 5, 6


def scenario(**changes) -> sm.Scenario:
    base = sm.Scenario(
        subject_index=RETAIL,
        length=20,
        base=400.0,
        trend=0.4,
        amplitude=0.2,
        event_kind="step_up",
        event_step=12,
        event_effect=0.5,
        noise_seed=7,
    )
    return dataclasses.replace(base, **changes)


# --------------------------------------------------------------------------- the design


def test_each_subjects_period_is_its_cycle_in_steps():
    """A weekly cycle of a daily series is 7 steps, a trading week 5, a daily cycle of an
    hourly series 24, a yearly one of a monthly series 12, a quarterly one of a weekly
    series 13 (52 / 4)."""
    steps = {
        ("weekly", "day"): 7,
        ("trading-week", "day"): 5,
        ("daily", "hour"): 24,
        ("yearly", "month"): 12,
        ("quarterly", "week"): 13,
    }
    for s in sm.SUBJECTS:
        assert s.period == steps[(s.cycle, s.frequency)], s.domain


def test_the_subjects_base_ranges():
    """The design's starting-level ranges per domain (the level a series starts near), as
    the generator specifies them: a changed range is a changed dataset."""
    assert {s.domain: s.base_range for s in sm.SUBJECTS} == {
        "health": (150, 400),
        "finance": (200, 900),
        "transport": (800, 3000),
        "energy": (20, 80),
        "retail": (300, 1200),
        "climate": (40, 160),
        "agriculture": (5000, 20000),
        "technology": (50, 400),
        "education": (200, 1500),
        "environment": (15, 60),
        "tourism": (40, 200),
        "manufacturing": (50, 150),
    }


def test_the_model_constants():
    """3 % noise (docs/suites/reasoning.md), a spike of 3 steps; the contrastive
    distractor miss of 0.08 and the relative option gap of 0.12 (scenarios.py's docstring
    names them)."""
    assert (sm.NOISE, sm.SPIKE_STEPS, sm.MIN_DISTRACTOR_MISS, sm.MIN_OPTION_GAP) == (
        0.03,
        3,
        0.08,
        0.12,
    )


# --------------------------------------------------------------------------- the series


def reference_clean(sc: sm.Scenario, period: int) -> np.ndarray:
    """Step by step: level x (1 + trend x t / (n - 1)) plus base x amplitude x
    sin(2 pi t / period); a step event multiplies every value from its step on by
    (1 + effect); a spike adds base x effect to 3 values from its step."""
    n = sc.length
    out = []
    for t in range(n):
        value = sc.base * (1 + sc.trend * t / (n - 1))
        value += sc.base * sc.amplitude * math.sin(2 * math.pi * t / period)
        if sc.event_kind in ("step_up", "step_down") and t >= sc.event_step:
            value *= 1 + sc.event_effect
        if sc.event_kind == "spike" and sc.event_step <= t < sc.event_step + 3:
            value += sc.base * sc.event_effect
        out.append(value)
    return np.array(out)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"amplitude": 0.0},
        {"event_kind": "step_down", "event_effect": -0.3, "trend": -0.35},
        {"event_kind": "spike", "event_effect": 1.5, "event_step": 5},
        {"event_kind": "spike", "event_effect": 1.5, "event_step": 18},  # cut at the end
        {"event_kind": "none", "event_step": -1, "event_effect": 0.0, "trend": 0.0},
        {"subject_index": CLIMATE, "length": 7},
        {"subject_index": TRANSPORT, "length": 2, "event_step": 1},
    ],
)
def test_clean_series_is_rebuilt_from_its_definition(changes):
    sc = scenario(**changes)
    expected = reference_clean(sc, sc.subject.period)
    np.testing.assert_allclose(sm.clean_series(sc), expected, rtol=1e-12, atol=1e-9)


def test_observed_series_adds_three_percent_of_the_level_times_the_seeded_draw():
    sc = scenario()
    draw = np.random.default_rng(7).standard_normal(20)
    np.testing.assert_array_equal(sm.noise_draw(sc), draw)
    expected = np.round(reference_clean(sc, 7) + 400.0 * 0.03 * draw, 2)
    np.testing.assert_allclose(sm.observed_series(sc), expected, atol=1e-9)
    zero = np.zeros(20)
    np.testing.assert_allclose(
        sm.observed_series(sc, zero), np.round(reference_clean(sc, 7), 2), atol=1e-9
    )


def test_explanation_miss_is_the_relative_rms_after_the_least_squares_scale():
    sc = scenario(amplitude=0.0, event_kind="none", event_step=-1, event_effect=0.0)
    rng = np.random.default_rng(3)
    series = 2.5 * sm.clean_series(sc)[:15] + rng.normal(0, 20, 15)
    curve = reference_clean(dataclasses.replace(sc, length=15), 7)
    (scale,), *_ = np.linalg.lstsq(curve[:, None], series, rcond=None)
    expected = np.sqrt(np.mean((series - scale * curve) ** 2)) / np.sqrt(np.mean(series**2))
    assert sm.explanation_miss(series, sc) == pytest.approx(expected, rel=1e-12)
    assert sm.explanation_miss(3.0 * curve, sc) == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- texts


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (0.0, "0"),
        (100.0, "100"),  # no digits after the point: the zeros stay
        (150, "150"),
        (1234.5, "1,234"),  # digits never below 0: large numbers keep every integer digit
        (12000, "12,000"),
        (45.678, "45.7"),
        (2.5, "2.5"),
        (9.996, "10"),  # 3 significant figures of 9.996: 10.0, trailing zeros cut
        (0.012345, "0.0123"),
        (-3.14159, "-3.14"),
    ],
)
def test_number_text_by_hand(value, text):
    assert sm.number_text(value) == text


def test_event_sentences_name_the_one_based_step_and_the_size():
    assert sm.event_sentence(scenario(event_effect=1.0)) == (
        "From day 13 on, a promotion doubles the values."
    )
    assert sm.event_sentence(scenario(event_effect=0.5)) == (
        "From day 13 on, a promotion raises the values by about 50%."
    )
    # 1.5e-9 from doubling: not a doubling (the tolerance is 1e-9)
    assert sm.event_sentence(scenario(event_effect=1.0 + 1.5e-9)) == (
        "From day 13 on, a promotion raises the values by about 100%."
    )
    assert sm.event_sentence(scenario(event_effect=1.0 - 5e-10)) == (
        "From day 13 on, a promotion doubles the values."
    )
    assert sm.event_sentence(
        scenario(event_kind="step_down", event_effect=-0.35, event_step=0)
    ) == ("From day 1 on, a competitor opening next door lowers the values by about 35%.")
    assert sm.event_sentence(scenario(event_kind="spike", event_effect=1.2)) == (
        "On day 13, a holiday rush causes a brief spike of about 120% of the starting level, "
        "lasting 3 days."
    )
    assert sm.event_sentence(scenario(event_kind="none", event_step=-1)) == (
        "No outside event disturbs it."
    )


def test_captions_and_characteristics_by_trend_and_cycle():
    flat = scenario(trend=0.0, amplitude=0.0)
    assert flat.trend_direction == "flat"
    assert flat.signature == ("flat", False, "step_up")
    assert sm.caption(flat) == (
        "The daily sales of a grocery store over 20 days (day 1 to 20). It starts near 400 "
        "units and has no underlying trend, with no regular cycle. From day 13 on, a "
        "promotion raises the values by about 50%."
    )
    assert sm.characteristics(flat) == (
        "The values show no long-run trend. There is no regular cycle. A promotion can shift "
        "the level upward and keep it there. Random fluctuations of a few percent move "
        "around the pattern."
    )
    rising = scenario(trend=0.001, amplitude=0.001)
    assert rising.trend_direction == "rising" and rising.signature[1] is True
    assert "rises steadily by about 0% over the period, with a weekly cycle of about plus or " in (
        sm.caption(rising)
    )
    assert "A weekly pattern repeats every 7 days." in sm.characteristics(rising)
    falling = scenario(trend=-0.001)
    assert falling.trend_direction == "falling"
    assert "falls steadily" in sm.caption(falling)


def test_short_captions():
    assert sm.short_caption(scenario()) == "Daily sales of a grocery store, affected by a promotion"
    assert sm.short_caption(scenario(event_kind="none", event_step=-1)) == (
        "Daily sales of a grocery store, undisturbed by outside events"
    )


def reference_timestamp(subject_index: int, step: int) -> str:
    start = datetime.datetime(2023, 1, 2)
    frequency = sm.SUBJECTS[subject_index].frequency
    if frequency == "month":
        year, month = divmod(step, 12)
        return f"{2023 + year:04d}-{month + 1:02d}-01"
    if frequency == "hour":
        return (start + datetime.timedelta(hours=step)).strftime("%Y-%m-%d %H:00")
    days = step * (7 if frequency == "week" else 1)
    return (start + datetime.timedelta(days=days)).strftime("%Y-%m-%d")


@pytest.mark.parametrize("subject_index", [RETAIL, TRANSPORT, CLIMATE, AGRICULTURE])
@pytest.mark.parametrize("step", [0, 1, 6, 7, 23, 25, 99])
def test_timestamps_against_the_calendar(subject_index, step):
    sc = scenario(subject_index=subject_index)
    assert sm.timestamp(sc, step) == reference_timestamp(subject_index, step)


def test_metadata_spans_the_whole_series():
    sc = scenario(subject_index=AGRICULTURE, length=30)
    assert sm.metadata(sc) == {
        "start": "2023-01-02",
        "end": reference_timestamp(AGRICULTURE, 29),
        "frequency": "weekly",
        "units": "litres",
    }


# --------------------------------------------------------------------------- what-ifs


def test_what_ifs_change_what_their_questions_state():
    sc = scenario()
    got = {name: changed for name, (_, changed) in sm.what_ifs(sc).items()}
    assert got == {
        "event_removed": scenario(event_kind="none", event_step=-1, event_effect=0.0),
        "event_doubled": scenario(event_effect=1.0),  # twice as large
        "trend_reversed": scenario(trend=-0.4),
        "cycle_removed": scenario(amplitude=0.0),
        "level_raised": scenario(base=600.0),  # 50% higher
    }
    near = {name: changed for name, (_, changed) in sm.near_what_ifs(sc).items()}
    assert near == {
        "event_removed": scenario(event_effect=0.25),  # half as large
        "event_doubled": scenario(event_effect=1.5),  # three times as large
        "trend_reversed": scenario(trend=0.8),  # twice as steep
        "cycle_removed": scenario(amplitude=0.4),  # twice as large
        "level_raised": scenario(base=480.0),  # 20% higher
    }


def test_what_ifs_of_a_fall_stop_at_minus_90_percent_and_a_flat_series_gains_a_cycle():
    """A step down doubled or tripled cannot fall below -90 % (values stay positive); a
    series without cycle or trend gets "a cycle of plus or minus 20%" (near copy: 50%) and
    no trend question; a series without event no event questions."""
    down = scenario(event_kind="step_down", event_effect=-0.4, trend=0.0, amplitude=0.0)
    got = {name: changed for name, (_, changed) in sm.what_ifs(down).items()}
    assert set(got) == {"event_removed", "event_doubled", "cycle_added", "level_raised"}
    assert got["event_doubled"].event_effect == pytest.approx(-0.8)
    assert got["cycle_added"].amplitude == 0.2
    near = {name: changed for name, (_, changed) in sm.near_what_ifs(down).items()}
    assert set(near) == {"event_removed", "event_doubled", "cycle_added", "level_raised"}
    assert near["event_doubled"].event_effect == -0.9  # 3 x -0.4 = -1.2, held at -0.9
    assert near["event_removed"].event_effect == pytest.approx(-0.2)
    assert near["cycle_added"].amplitude == 0.5
    steeper = scenario(event_kind="step_down", event_effect=-0.5)
    doubled = sm.what_ifs(steeper)["event_doubled"][1]
    assert doubled.event_effect == -0.9  # 2 x -0.5 = -1.0, held at -0.9
    spike = scenario(event_kind="spike", event_effect=1.5)
    assert sm.what_ifs(spike)["event_doubled"][1].event_effect == 3.0
    assert sm.near_what_ifs(spike)["event_doubled"][1].event_effect == 4.5
    calm = scenario(event_kind="none", event_step=-1, event_effect=0.0)
    assert set(sm.what_ifs(calm)) == {"trend_reversed", "cycle_removed", "level_raised"}
    assert set(sm.near_what_ifs(calm)) == {"trend_reversed", "cycle_removed", "level_raised"}


def test_scenario_round_trips_through_its_dict():
    sc = scenario()
    data = sc.to_dict()
    assert data["domain"] == "retail"
    assert sm.scenario_from_dict(data) == sc


# --------------------------------------------------------------------------- drawing


def nice(value: float) -> float:
    """Two significant figures."""
    return float(f"{value:.2g}")


def to_step(value: float, step: float) -> float:
    return round(float(np.rint(value / step)) * step, 6)


def redraw(seed: int, subject_index: int, length: int, event_kind=None, window=(0.55, 0.75)):
    """The generator's draws in order: the trend direction (rising, falling, flat), both
    trend sizes (rising 0.3-0.6, falling 0.3-0.45, to 0.05), a cycle with probability 0.6
    (0.12-0.25, to 0.05), the event kind if not given, its effect (step up: doubling with
    probability 0.4, else 0.5-0.9 to 0.05; step down -0.3 to -0.5 to 0.05; spike 1-2 to
    0.1), its step in [round(0.55 n), round(0.75 n)), the base (uniform in the subject's
    range, 2 significant figures) and a 31-bit noise seed."""
    rng = np.random.default_rng(seed)
    direction = ("rising", "falling", "flat")[int(rng.integers(3))]
    rising = to_step(rng.uniform(0.3, 0.6), 0.05)
    falling = -to_step(rng.uniform(0.3, 0.45), 0.05)
    trend = {"rising": rising, "falling": falling, "flat": 0.0}[direction]
    amplitude = to_step(rng.uniform(0.12, 0.25), 0.05) if rng.random() < 0.6 else 0.0
    kind = event_kind or ("step_up", "step_down", "spike", "none")[int(rng.integers(4))]
    if kind == "step_up":
        effect = 1.0 if rng.random() < 0.4 else to_step(rng.uniform(0.5, 0.9), 0.05)
    elif kind == "step_down":
        effect = -to_step(rng.uniform(0.3, 0.5), 0.05)
    elif kind == "spike":
        effect = to_step(rng.uniform(1.0, 2.0), 0.1)
    else:
        effect = 0.0
    low, high = round(window[0] * length), round(window[1] * length)
    step = -1 if kind == "none" else int(rng.integers(low, max(low + 1, high)))
    base = nice(rng.uniform(*sm.SUBJECTS[subject_index].base_range))
    return sm.Scenario(
        subject_index, length, base, trend, amplitude, kind, step, effect, int(rng.integers(2**31))
    )


@pytest.mark.parametrize("seed", range(40))
def test_draw_scenario_redrawn(seed):
    subject_index = seed % len(sm.SUBJECTS)
    length = (100, 40, 9, 23)[seed % 4]
    got = sm.draw_scenario(np.random.default_rng(seed), subject_index, length)
    assert got == redraw(seed, subject_index, length)
    kind = ("step_up", "step_down", "spike", "none")[seed % 4]
    got = sm.draw_scenario(np.random.default_rng(seed), subject_index, length, kind)
    assert got == redraw(seed, subject_index, length, kind)
    got = sm.draw_scenario(np.random.default_rng(seed), subject_index, length, kind, (0.5, 0.5))
    assert got == redraw(seed, subject_index, length, kind, (0.5, 0.5))
    if kind != "none":
        assert got.event_step == round(0.5 * length)  # an empty window: its start


class Scripted:
    """A generator whose draws are given: ``integers`` and ``random`` return the next of
    their lists, ``uniform`` its low end."""

    def __init__(self, integers, randoms):
        self.integers_, self.randoms = list(integers), list(randoms)

    def integers(self, low, high=None):
        return self.integers_.pop(0)

    def random(self):
        return self.randoms.pop(0)

    def uniform(self, low, high):
        return low


def test_draws_at_exactly_the_probability_thresholds():
    """random() = 0.6 exactly: no cycle (a cycle needs < 0.6); a step up at random() = 0.4
    exactly: not a doubling (needs < 0.4): the low end of 0.5-0.9; just below: the other
    branch."""
    at = sm.draw_scenario(Scripted([0, 0, 5, 99], [0.6, 0.4]), RETAIL, 20)
    assert (at.amplitude, at.event_kind, at.event_effect) == (0.0, "step_up", 0.5)
    assert (at.trend, at.event_step, at.base, at.noise_seed) == (0.3, 5, 300.0, 99)
    below = sm.draw_scenario(Scripted([0, 0, 5, 99], [0.5999, 0.3999]), RETAIL, 20)
    assert (below.amplitude, below.event_effect) == (0.1, 1.0)
