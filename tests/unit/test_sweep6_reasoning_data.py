"""The reasoning suite's procedural items (tsrate.suites.reasoning.scenarios) against rules
and numbers worked out independently of the code: the equivalence and contrastive
thresholds, the which-change and perturbed-twin refutation bounds, each at exactly its
bound (the misses fed in by hand); the option spacing rule on hand-picked candidates; the
numeric what-if answers rebuilt from the scenario's parameters or series and their
distractors' ladder (neighbours 1.2 to 1.6 times apart);
the item counts at the edges (exactly three usable distractors, two); the difference
question's last quarter (3 to 100 steps); the forecast event's window in the horizon; the
configuration's documented defaults and bounds; the order categories are tried in.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_reasoning_data.json): each test pins a bound, a count or a value, so a
changed factor, comparison or default in these files changes a checked result.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from tests.support.reasoning_items import PLAIN
from tsrate import TsrateError
from tsrate.suites.reasoning import scenario_model as sm
from tsrate.suites.reasoning import scenarios as sc


def _number(option: str) -> float:
    return float(re.search(r"about ([\d,.]+)", option).group(1).replace(",", ""))


def _fake_misses(monkeypatch, misses: dict[float, float]) -> None:
    """explanation_miss replaced by a table keyed by the scenario's base level, so a test
    sets each caption's miss exactly (the rules compare misses, not series)."""
    monkeypatch.setattr(sc, "explanation_miss", lambda series, s: misses[s.base])


# --------------------------------------------------------------------------- equivalence


@pytest.mark.parametrize(
    ("own", "other", "equivalent"),
    [
        (0.25, 0.375, True),  # exactly 1.5 x the truth's miss: "within" includes the bound
        (0.25, 0.3751, False),
        (0.25, 0.5, False),  # 2 x: clearly worse, a fair distractor
        (0.001, 0.0149, True),  # the truth's miss floored at NOISE / 3 = 0.01: bound 0.015
        (0.001, 0.0151, False),
    ],
)
def test_equivalent_caption_is_within_1_5_times_the_floored_own_miss(
    monkeypatch, own, other, equivalent
):
    """Docstring: a caption is equivalent when its miss is within EQUIVALENT_MISS_FACTOR
    (1.5) times the true caption's own miss, that miss floored at NOISE / 3 (0.01). The
    other scenario differs in subject and features, so only the miss rule decides."""
    truth = PLAIN
    other_scenario = dataclasses.replace(
        PLAIN, subject_index=1, base=300.0, trend=0.4, event_kind="spike", event_step=30
    )
    _fake_misses(monkeypatch, {200.0: own, 300.0: other})
    series = sm.clean_series(truth)
    assert sc.equivalent_caption(series, truth, other_scenario) is equivalent


def test_a_caption_with_the_same_features_differs_only_by_subject(monkeypatch):
    """Same visible features (trend direction, cycle, event kind) in the same subject: the
    caption could pass for the truth whatever the misses; another subject with the same
    features, or the same subject with other features, is judged by its miss alone."""
    _fake_misses(monkeypatch, {200.0: 0.01, 260.0: 0.9})
    same = dataclasses.replace(PLAIN, base=260.0)  # same signature, same subject
    series = sm.clean_series(PLAIN)
    assert sc.equivalent_caption(series, PLAIN, same) is True
    other_subject = dataclasses.replace(same, subject_index=1)
    assert sc.equivalent_caption(series, PLAIN, other_subject) is False
    other_features = dataclasses.replace(same, trend=0.4)
    assert sc.equivalent_caption(series, PLAIN, other_features) is False


# --------------------------------------------------------------------------- etiological


def _rising(base: float, **changes) -> sm.Scenario:
    """A distractor scenario: same subject as PLAIN, rising (another signature), its own
    caption (the level is in the caption)."""
    return dataclasses.replace(PLAIN, base=base, trend=0.4, **changes)


@pytest.mark.parametrize(
    ("own", "bound"),
    [(0.05, 0.125), (0.01, 0.08)],  # 2.5 x 0.05; MIN_DISTRACTOR_MISS above 2.5 x 0.01
)
def test_contrastive_distractors_miss_by_at_least_the_larger_bound(monkeypatch, own, bound):
    """Docstring: a contrastive distractor differs in a visible feature AND misses the
    series by at least max(MIN_DISTRACTOR_MISS, 2.5 x the true caption's miss). Pool: three
    that qualify (one exactly at the bound), one just below it, one far off but with the
    truth's features. The three are the distractors, each once, for any seed."""
    pool = [_rising(301.0), _rising(302.0), _rising(303.0), _rising(304.0)]
    same_features = dataclasses.replace(PLAIN, subject_index=1, base=305.0)
    _fake_misses(
        monkeypatch,
        {200.0: own, 301.0: bound, 302.0: 0.2, 303.0: 0.3, 304.0: bound - 1e-4, 305.0: 0.9},
    )
    for seed in range(12):
        item = sc.etiological_item(
            np.random.default_rng(seed), PLAIN, [*pool, same_features], "contrastive"
        )
        assert item is not None
        assert item.options[item.answer_index] == sm.caption(PLAIN)
        distractors = [o for i, o in enumerate(item.options) if i != item.answer_index]
        assert sorted(distractors) == sorted(sm.caption(s) for s in pool[:3])


def test_contrastive_needs_three_qualifying_captions(monkeypatch):
    """Two qualifying captions (and others too close) make no item: None, not an error and
    not an item with fewer options."""
    _fake_misses(monkeypatch, {200.0: 0.05, 301.0: 0.2, 302.0: 0.3, 303.0: 0.1, 304.0: 0.1})
    pool = [_rising(301.0), _rising(302.0), _rising(303.0), _rising(304.0)]
    for seed in range(3):
        assert sc.etiological_item(np.random.default_rng(seed), PLAIN, pool, "contrastive") is None


def test_random_distractors_need_three_that_are_not_equivalent(monkeypatch):
    """Random mode redraws equivalent captions (miss within 1.5 x 0.05 = 0.075): with only
    two that are not, there is no item; with three, the item has exactly those three."""
    _fake_misses(monkeypatch, {200.0: 0.05, 301.0: 0.5, 302.0: 0.5, 303.0: 0.06, 304.0: 0.07})
    pool = [_rising(301.0), _rising(302.0), _rising(303.0), _rising(304.0)]
    for seed in range(3):
        assert sc.etiological_item(np.random.default_rng(seed), PLAIN, pool) is None
    _fake_misses(
        monkeypatch, {200.0: 0.05, 301.0: 0.5, 302.0: 0.5, 303.0: 0.06, 304.0: 0.07, 305.0: 0.4}
    )
    item = sc.etiological_item(np.random.default_rng(0), PLAIN, [*pool, _rising(305.0)])
    distractors = [o for i, o in enumerate(item.options) if i != item.answer_index]
    assert sorted(distractors) == sorted(sm.caption(_rising(b)) for b in (301.0, 302.0, 305.0))


# --------------------------------------------------------------------------- option spacing


def test_spaced_options_keeps_three_positive_finite_values_at_least_12_percent_apart():
    """Greedy, in order: a candidate is kept when it is positive, finite and at least 0.12
    (relative to the other value) from the correct one and every kept one; three are kept.
    Hand-worked: correct 100; NaN, inf, -50 and 0 are skipped; 0.5 is kept (its gap to 100
    is 0.995); 105 is 0.05 from 100 (skipped); 200 and 400 are kept; 800 comes too late."""
    got = sc.spaced_options(
        100.0, [float("nan"), float("inf"), -50.0, 0.0, 0.5, 105.0, 200.0, 400.0, 800.0]
    )
    assert got == [0.5, 200.0, 400.0]
    assert sc.spaced_options(100.0, [200.0, 300.0, 400.0, 500.0]) == [200.0, 300.0, 400.0]
    assert sc.spaced_options(100.0, [200.0, 300.0]) is None
    assert sc.spaced_options(100.0, [200.0, 300.0], k=2) == [200.0, 300.0]


def test_spaced_options_gap_of_exactly_12_percent_is_enough():
    """3 / 25 = 0.12 = MIN_OPTION_GAP exactly (the same double): 28 and 22 are each exactly
    0.12 from 25 ("at least"), and 22 is 6 / 28 from 28; 40 is then the third."""
    assert abs(28.0 - 25.0) / 25.0 == sc.MIN_OPTION_GAP
    assert sc.spaced_options(25.0, [28.0, 22.0, 40.0, 60.0]) == [28.0, 22.0, 40.0]


def test_spaced_options_measures_a_gap_to_zero_against_1e_9():
    """A correct value of 0 has no relative gap; the code divides by max(|0|, 1e-9), so
    1.5e-10 is 0.15 away (kept) and 1e-10 only 0.1 (skipped)."""
    assert sc.spaced_options(0.0, [1e-10, 1.5e-10, 1.0, 2.0]) == [1.5e-10, 1.0, 2.0]


# --------------------------------------------------------------------------- what-if numbers


def _option_values(item) -> tuple[float, list[float]]:
    values = [_number(o) for o in item.options]
    return values[item.answer_index], sorted(
        v for i, v in enumerate(values) if i != item.answer_index
    )


def _on_a_ladder(answer: float, others: list[float]) -> bool:
    """docs/suites/reasoning.md: sorted, neighbouring options differ by a factor of 1.2 to
    1.6 (read back from texts of 3 significant figures: 1 % slack)."""
    values = sorted([answer, *others])
    steps = [b / a for a, b in zip(values, values[1:], strict=False)]
    return len(values) == 4 and all(1.2 * 0.99 <= s <= 1.6 * 1.01 for s in steps)


def test_a_hand_worked_event_what_if():
    """Level 200, +50 % trend over 50 days, no cycle; from day 31 a drop of 50 %. Without
    the drop the last value is 200 x 1.5 = 300 (the answer). The distractors are a ladder
    around it (neighbours 1.2 to 1.6 times apart), not the observed last value 150 or its
    mirror 2 x 300 - 150 = 450: with those the answer was the midpoint of two options."""
    scenario = dataclasses.replace(
        PLAIN, trend=0.5, event_kind="step_down", event_step=30, event_effect=-0.5
    )
    item = sc.single_series_item(np.random.default_rng(0), scenario, "counterfactual_event")
    answer, others = _option_values(item)
    assert answer == 300.0 and item.params["correct_value"] == pytest.approx(300.0)
    assert _on_a_ladder(answer, others)
    assert 150.0 not in others and 450.0 not in others
    assert all(o.endswith(" admissions") for o in item.options)


@pytest.mark.parametrize("trend", [0.5, -0.4, 0.0])
@pytest.mark.parametrize(
    ("kind", "effect"),
    [("step_down", -0.5), ("step_down", -0.3), ("step_up", 0.6), ("step_up", 1.0)],
)
def test_event_what_if_answer_and_distractors_from_the_parameters(trend, kind, effect):
    """No cycle: the last value without the event is base x (1 + trend), whatever the
    event did; the distractors are a ladder around it (neighbours 1.2 to 1.6 times apart),
    so every step event gets an item."""
    scenario = dataclasses.replace(
        PLAIN, trend=trend, event_kind=kind, event_step=30, event_effect=effect
    )
    correct = 200.0 * (1 + trend)
    item = sc.single_series_item(np.random.default_rng(1), scenario, "counterfactual_event")
    answer, others = _option_values(item)
    assert answer == pytest.approx(correct, rel=5e-3)
    assert item.params["correct_value"] == pytest.approx(correct)
    assert _on_a_ladder(answer, others)


def test_event_what_if_asks_only_about_steps():
    """A spike or no event has no 'level without the event' question: None."""
    for kind in ("spike", "none"):
        scenario = dataclasses.replace(PLAIN, event_kind=kind, event_step=30, event_effect=1.0)
        assert (
            sc.single_series_item(np.random.default_rng(0), scenario, "counterfactual_event")
            is None
        )
    step = dataclasses.replace(PLAIN, event_kind="step_up", event_step=30, event_effect=1.0)
    assert sc.single_series_item(np.random.default_rng(0), step, "counterfactual_event") is not None


@pytest.mark.parametrize("amplitude", [0.0, 0.2])
def test_scale_what_if_answer_and_distractors_from_the_series(amplitude):
    """factor x the observed maximum; the distractors are a ladder around it (neighbours
    1.2 to 1.6 times apart; no longer the maximum itself, which made the answer the option
    factor times another). The factor is 2, 3 or 10, as the question states; all three are
    drawn."""
    scenario = dataclasses.replace(
        PLAIN, trend=0.4, amplitude=amplitude, event_kind="spike", event_step=20, event_effect=1.5
    )
    series = np.asarray(sm.observed_series(scenario))
    factors = set()
    for seed in range(30):
        item = sc.single_series_item(np.random.default_rng(seed), scenario, "counterfactual_scale")
        factor = int(re.search(r"been (\d+) times as large", item.question).group(1))
        factors.add(factor)
        correct = factor * series.max()
        answer, others = _option_values(item)
        assert item.params["factor"] == factor
        assert answer == pytest.approx(correct, rel=5e-3)
        assert _on_a_ladder(answer, others)
    assert factors == {2, 3, 10}


@pytest.mark.parametrize(
    ("trend", "answer"),
    [
        (0.4, "lower than observed"),
        (-0.3, "higher than observed"),
        (0.0, "about the same as observed"),
    ],
)
def test_trend_what_if_answer(trend, answer):
    """Without a rising trend the last values would be lower, without a falling one higher;
    a flat series keeps them (each option is right for one direction)."""
    scenario = dataclasses.replace(PLAIN, trend=trend)
    item = sc.single_series_item(np.random.default_rng(0), scenario, "counterfactual_trend")
    assert item.options[item.answer_index] == answer
    assert sorted(item.options) == sorted(sc.TREND_OPTIONS)


# --------------------------------------------------------------------------- two series

#: a rising series with a weekly cycle and a step up: five what-ifs apply
EVENTFUL = dataclasses.replace(
    PLAIN, trend=0.4, amplitude=0.2, event_kind="step_up", event_step=30, event_effect=0.6
)
#: each what-if's (fake) miss of the second series: one exactly at MIN_DISTRACTOR_MISS, one
#: just below it
CHANGE_MISSES = {
    "event_removed": 0.08,
    "event_doubled": 0.0799,
    "trend_reversed": 0.2,
    "cycle_removed": 0.3,
    "level_raised": 0.4,
}


def test_which_change_distractors_miss_the_second_series_by_at_least_8_percent(monkeypatch):
    """Docstring: a wrong 'which change' option must be refuted by the second series (miss
    >= MIN_DISTRACTOR_MISS = 0.08, "at least"). With the misses above, event_doubled never
    appears; when neither boundary change is the truth, the three others are exactly the
    distractors."""
    changes = sm.what_ifs(EVENTFUL)
    assert sorted(changes) == sorted(CHANGE_MISSES)
    by_scenario = {changed: CHANGE_MISSES[name] for name, (_, changed) in changes.items()}
    monkeypatch.setattr(sc, "explanation_miss", lambda series, s: by_scenario[s])
    seen = set()
    for seed in range(20):
        item = sc.two_series_item(np.random.default_rng(seed), EVENTFUL, "which_change")
        truth = item.params["change"]
        seen.add(truth)
        wrong = set(item.params["option_changes"][1:])
        assert "event_doubled" not in wrong
        if truth != "event_doubled":
            assert wrong == set(CHANGE_MISSES) - {truth, "event_doubled"}
    assert {"trend_reversed", "level_raised"} & seen


def test_direct_miss_is_the_relative_rms_without_rescaling():
    """Flat curve 200; series 200, 200, 200, 300: residual RMS sqrt(100^2 / 4) = 50, series
    RMS sqrt((3 x 200^2 + 300^2) / 4) = sqrt(52,500); no rescaling, so twice the curve
    misses by exactly 0.5."""
    series = np.array([200.0, 200.0, 200.0, 300.0])
    assert sc.direct_miss(series, PLAIN) == pytest.approx(50 / np.sqrt(52_500), rel=1e-12)
    twice = 2 * sm.clean_series(PLAIN)
    assert sc.direct_miss(twice, PLAIN) == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize(("miss", "made"), [(0.08, True), (0.0799, False)])
def test_a_perturbed_twin_needs_its_near_copy_refuted_by_at_least_8_percent(
    monkeypatch, miss, made
):
    """Docstring: no twin when the near copy's direct miss of the second series is below
    MIN_DISTRACTOR_MISS; exactly 0.08 is enough. (Seed 1 draws event_removed; seed 0's
    trend_reversed has no twin at all: its near what-if's series, the trend twice as steep,
    is explained within 7 % by a wrong option, the level 50 % higher rescaled.)"""
    original = sc.two_series_item(np.random.default_rng(1), EVENTFUL, "which_change")
    assert original is not None
    monkeypatch.setattr(sc, "direct_miss", lambda series, scenario: miss)
    twin = sc.perturbed_item(np.random.default_rng(0), original)
    assert (twin is not None) is made


# --------------------------------------------------------------------------- forecasts


@pytest.mark.parametrize(
    ("length", "share"),
    [(100, 0.8), (30, 0.9), (30, 0.84), (100, 0.79), (40, 0.75)],
)
def test_forecast_events_fall_after_the_first_horizon_step_in_its_first_half(length, share):
    """The event (a step up or down, both drawn) starts at 0-based horizon step 1 at the
    earliest (one unaffected horizon value first) and before step max(2, horizon // 2):
    100 x 0.8 -> horizon 20, steps 1..9; 30 x 0.9 -> horizon 3, step 1 only; 30 x 0.84 ->
    history 25, horizon 5, step 1; 100 x 0.79 -> horizon 21, steps 1..9; 40 x 0.75 ->
    horizon 10, steps 1..4. Over 300 draws every allowed step occurs."""
    history = round(length * share)
    horizon = length - history
    allowed = set(range(1, max(2, horizon // 2)))
    rng = np.random.default_rng(5)
    steps, kinds = set(), set()
    for index in range(300):
        item = sc.forecast_item(rng, index % len(sm.SUBJECTS), length, share)
        assert len(item.series) == history and item.horizon == horizon
        steps.add(item.params["event_step"])
        kinds.add(item.params["scenario"]["event_kind"])
    assert steps == allowed
    assert kinds == {"step_up", "step_down"}


@pytest.mark.parametrize(("length", "quarter"), [(3, 1), (5, 1), (8, 2), (100, 25)])
def test_difference_compares_the_means_of_the_last_quarter(length, quarter):
    """The last max(1, length // 4) steps: 3 -> 1 (never none: the whole series would be
    [-0:]), 5 -> 1, 8 -> 2, 100 -> 25. Rising +40 % over the series, 200 at the start:
    the clean curve 200 (1 + 0.4 x) with x = t / (n - 1); the ratio of the what-if's mean
    to the curve's over those steps, worked out per what-if."""
    scenario = dataclasses.replace(PLAIN, length=length, trend=0.4)
    t = np.arange(length, dtype=float)
    curve = 200 * (1 + 0.4 * t / (length - 1))
    changed = {
        "trend_reversed": 200 * (1 - 0.4 * t / (length - 1)),
        "cycle_added": curve + 200 * 0.2 * np.sin(2 * np.pi * t / 7),
        "level_raised": 1.5 * curve,
        "level_lowered": 0.6 * curve,  # the two difference-only level changes
        "level_doubled": 2.0 * curve,
    }
    seen = set()
    for seed in range(12):
        item = sc.two_series_item(np.random.default_rng(seed), scenario, "difference")
        if item is None:
            continue
        name = item.params["change"]
        seen.add(name)
        expected = changed[name][-quarter:].mean() / curve[-quarter:].mean()
        assert item.params["ratio"] == pytest.approx(expected, rel=1e-12)
        assert f"Over the last {quarter} days" in item.question
    assert len(seen) >= 2


# --------------------------------------------------------------------------- configuration


def test_the_default_dataset_size_is_the_documented_one():
    """docs/suites/reasoning.md: 24 scenarios, 12 forecasting items, 100 steps (80
    history, 20 horizon), random distractors, perturbed twins."""
    config = sc.GeneratorConfig()
    assert (config.scenarios, config.forecasts, config.length) == (24, 12, 100)
    assert config.context_share == 0.8 and config.distractors == "random" and config.perturbed


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({"length": 30}, True),
        ({"length": 29}, False),
        ({"context_share": 0.5}, True),
        ({"context_share": 0.4999}, False),
        ({"context_share": 0.9499}, True),
        ({"context_share": 0.95}, False),
        ({"scenarios": 4}, True),
        ({"scenarios": 3}, False),
    ],
)
def test_configuration_bounds_are_inclusive_where_the_messages_say(changes, valid):
    """'at least 30 steps', 'context_share must be in [0.5, 0.95)', 'at least 4
    scenarios': each bound on its stated side."""
    if valid:
        sc.GeneratorConfig(**changes)
    else:
        with pytest.raises(TsrateError):
            sc.GeneratorConfig(**changes)


def test_each_scenario_tries_the_question_categories_in_rotation(monkeypatch):
    """Scenario i asks single-series category i mod 3 first, then the next ones in order
    (i + 1, i + 2 mod 3), and two-series category i mod 2 first, then the other; with no
    category applying (both makers stubbed to None) every scenario tries them all, in
    that order."""
    tried_single: list[list[str]] = []
    tried_two: list[list[str]] = []

    def single(rng, scenario, category):
        if not tried_single or len(tried_single[-1]) == 3:
            tried_single.append([])
        tried_single[-1].append(category)

    def two(rng, scenario, category):
        if not tried_two or len(tried_two[-1]) == 2:
            tried_two.append([])
        tried_two[-1].append(category)

    monkeypatch.setattr(sc, "single_series_item", single)
    monkeypatch.setattr(sc, "two_series_item", two)
    sc.generate_items(sc.GeneratorConfig(seed=3, scenarios=5, forecasts=0))
    singles, twos = sc.SINGLE_CATEGORIES, sc.TWO_CATEGORIES
    assert tried_single == [[singles[(i + k) % 3] for k in range(3)] for i in range(5)]
    assert tried_two == [[twos[(i + k) % 2] for k in range(2)] for i in range(5)]
