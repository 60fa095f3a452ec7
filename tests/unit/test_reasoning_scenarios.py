"""Reasoning suite: every procedural caption, distractor and answer can be checked against
the generating parameters and the series themselves."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.suites.reasoning.answerers import ContextRule, median_forecast
from tsrate.suites.reasoning.marts import normalised_errors
from tsrate.suites.reasoning.scenarios import (
    DIFFERENCE_EDGES,
    DOMAINS,
    MIN_OPTION_GAP,
    NOISE,
    GeneratorConfig,
    caption,
    clean_series,
    difference_bucket,
    etiological_item,
    explanation_miss,
    generate_items,
    noise_draw,
    observed_series,
    scenario_from_dict,
    what_ifs,
)

CONFIG = GeneratorConfig(seed=7, scenarios=36, forecasts=12)


@pytest.fixture(scope="module")
def items():
    return generate_items(CONFIG)


def by_task(items, task):
    return [item for item in items if item.task == task]


def _number(option: str) -> float:
    return float(re.search(r"about ([\d,.]+)", option).group(1).replace(",", ""))


def test_ten_domains_and_every_task(items):
    assert len(DOMAINS) >= 10
    assert len({item.domain for item in items}) >= 10
    assert {item.task for item in items} == {
        "etiological",
        "qa_single",
        "qa_two",
        "qa_perturbed",
        "forecast",
    }
    assert {item.category for item in by_task(items, "qa_single")} == {
        "counterfactual_event",
        "counterfactual_scale",
        "counterfactual_trend",
    }
    assert {item.category for item in by_task(items, "qa_two")} == {"which_change", "difference"}


def test_seeded(items):
    again = generate_items(CONFIG)
    assert [i.item_id for i in again] == [i.item_id for i in items]
    other = generate_items(dataclasses.replace(CONFIG, seed=8))
    assert {i.item_id for i in other}.isdisjoint({i.item_id for i in items})
    with pytest.raises(TsrateError, match="at least 4 scenarios"):
        GeneratorConfig(scenarios=3)


def test_captions_are_written_from_the_parameters_and_the_series_refutes_distractors():
    items = generate_items(dataclasses.replace(CONFIG, distractors="contrastive"))
    etiological = by_task(items, "etiological")
    assert len(etiological) >= 30
    for item in etiological:
        truth = scenario_from_dict(item.params["scenario"])
        np.testing.assert_array_equal(item.series, observed_series(truth))
        assert item.options[item.answer_index] == caption(truth)
        scenarios = [scenario_from_dict(p) for p in item.params["option_scenarios"]]
        assert [caption(s) for s in scenarios] == list(item.options)
        signatures = [s.signature for s in scenarios]
        assert signatures.count(truth.signature) == 1  # each distractor differs visibly
        misses = [explanation_miss(np.asarray(item.series), s) for s in scenarios]
        # the true caption explains the series to the noise level; an oracle reading the
        # series picks it every time
        assert misses[item.answer_index] < 2 * NOISE
        assert int(np.argmin(misses)) == item.answer_index


def _miss(series, scenario) -> float:
    """Relative RMS residual of the series after a least-squares scale of the scenario's
    clean curve, by numpy's lstsq (independent of explanation_miss)."""
    curve = clean_series(dataclasses.replace(scenario, length=len(series)))
    coef, *_ = np.linalg.lstsq(curve[:, None], series, rcond=None)
    return float(np.linalg.norm(series - coef[0] * curve) / np.linalg.norm(series))


def test_random_distractors_are_other_scenarios_never_the_truth_and_seeded(items):
    assert CONFIG.distractors == "random"  # the paper's way is the default
    etiological = by_task(items, "etiological")
    assert len(etiological) == CONFIG.scenarios
    truths = [scenario_from_dict(item.params["scenario"]) for item in etiological]
    below_contrastive = 0
    for item, truth in zip(etiological, truths, strict=True):
        assert item.params["distractors"] == "random"
        assert len(set(item.options)) == 4
        options = [scenario_from_dict(p) for p in item.params["option_scenarios"]]
        assert options[item.answer_index] == truth
        series = np.asarray(item.series)
        for position, other in enumerate(options):
            if position == item.answer_index:
                continue
            assert other in truths and other != truth  # another scenario of the dataset
            assert caption(other) != caption(truth)
            # never equivalent: the truth explains the series clearly better
            assert _miss(series, other) > 1.5 * _miss(series, truth)
            below_contrastive += _miss(series, other) < 2.5 * _miss(series, truth) or (
                other.signature == truth.signature
            )
    # random draws include distractors the contrastive filter would have refused
    assert below_contrastive >= 1
    again = by_task(generate_items(CONFIG), "etiological")
    assert [i.options for i in again] == [i.options for i in etiological]
    contrastive = by_task(
        generate_items(dataclasses.replace(CONFIG, distractors="contrastive")), "etiological"
    )
    assert [i.options for i in contrastive] != [i.options for i in etiological]
    with pytest.raises(TsrateError, match="distractors must be one of"):
        GeneratorConfig(distractors="easy")


def test_an_equivalent_random_distractor_is_redrawn():
    truth = scenario_from_dict(generate_items(CONFIG)[0].params["scenario"])
    twin = dataclasses.replace(truth, noise_seed=truth.noise_seed + 1)  # same caption
    near = dataclasses.replace(truth, base=truth.base * 2)  # same shape, other level
    others = [
        scenario_from_dict(i.params["scenario"])
        for i in by_task(generate_items(CONFIG), "etiological")[1:6]
    ]
    for seed in range(20):
        item = etiological_item(np.random.default_rng(seed), truth, [twin, near, *others])
        chosen = [scenario_from_dict(p) for p in item.params["option_scenarios"]]
        assert twin not in chosen and near not in chosen


def test_caption_states_the_numbers():
    items = generate_items(GeneratorConfig(seed=1, scenarios=4, forecasts=1))
    scenario = scenario_from_dict(items[-1].params["scenario"])
    text = caption(scenario)
    s = scenario.subject
    assert f"{s.frequency} {scenario.event_step + 1}" in text
    assert f"{abs(scenario.trend) * 100:.0f}%" in text or scenario.trend == 0
    assert s.sentence in text and s.unit in text


def test_single_series_answers_follow_from_parameters_and_series(items):
    for item in by_task(items, "qa_single"):
        scenario = scenario_from_dict(item.params["scenario"])
        series = np.asarray(item.series)
        if item.category == "counterfactual_event":
            without = dataclasses.replace(scenario, event_kind="none", event_step=-1)
            expected = clean_series(without)[-1]
        elif item.category == "counterfactual_scale":
            expected = item.params["factor"] * series.max()
        else:
            expected = None
            wanted = (
                "lower than observed"
                if scenario.trend > 0
                else "higher than observed"
                if scenario.trend < 0
                else "about the same as observed"
            )
            assert item.options[item.answer_index] == wanted
            continue
        numbers = [_number(option) for option in item.options]
        assert numbers[item.answer_index] == pytest.approx(expected, rel=0.01)
        for k, value in enumerate(numbers):
            if k != item.answer_index:
                assert abs(value - expected) / expected >= MIN_OPTION_GAP - 0.01
        # the question itself does not give the level away
        assert not re.search(r"\d{3,}", item.context)


def test_two_series_answers_follow_from_the_series(items):
    two = by_task(items, "qa_two")
    assert len(two) >= 30
    for item in two:
        scenario = scenario_from_dict(item.params["scenario"])
        changes = what_ifs(scenario)
        # difference items may also show the level times 0.6 or 2 (docs/suites/reasoning.md)
        factor = {"level_lowered": 0.6, "level_doubled": 2.0}.get(item.params["change"])
        if factor is not None and item.category == "difference":
            changed = dataclasses.replace(scenario, base=scenario.base * factor)
        else:
            changed = changes[item.params["change"]][1]
        second = np.asarray(item.series_b)
        np.testing.assert_array_equal(second, observed_series(changed, noise_draw(scenario)))
        if item.category == "which_change":
            names = item.params["option_changes"]
            assert item.options[item.answer_index] == changes[names[0]][0]
            misses = {
                changes[name][0]: explanation_miss(second, changes[name][1]) for name in names
            }
            assert min(misses, key=misses.get) == item.options[item.answer_index]
        else:
            quarter = len(second) // 4
            observed_ratio = second[-quarter:].mean() / np.asarray(item.series)[-quarter:].mean()
            # the noisy series land in the same bucket as the parameters (edges are 3 % away)
            assert difference_bucket(observed_ratio) == difference_bucket(item.params["ratio"])
            bucket = int(np.searchsorted(DIFFERENCE_EDGES, item.params["ratio"]))
            assert (
                item.answer_index
                == [
                    k
                    for k, o in enumerate(item.options)
                    if o == sorted(item.options, key=_order)[bucket]
                ][0]
            )


def _order(option: str) -> int:
    from tsrate.suites.reasoning.scenarios import DIFFERENCE_OPTIONS

    return DIFFERENCE_OPTIONS.index(option)


def test_forecast_context_states_the_future(items):
    forecasts = by_task(items, "forecast")
    rule = ContextRule()
    requests = rule.requests(forecasts)
    answers = {r.prompt_hash: r.forecast for r in rule.answer(requests)}
    errors: dict[str, list[float]] = {}
    for item in forecasts:
        step = item.params["event_step"]
        assert 0 <= step < item.horizon  # the event falls inside the horizon
        scenario = scenario_from_dict(item.params["scenario"])
        assert f"{scenario.subject.frequency} {scenario.event_step + 1} on" in item.context
        # the context states enough to forecast to the noise level: the curve its numbers
        # describe continues the series
        stated = clean_series(scenario)[len(item.series) :]
        miss = np.abs(stated - np.asarray(item.future)).mean() / scenario.base
        assert miss < 2 * NOISE
        median = median_forecast(item.series, item.horizon)
        assert (
            normalised_errors(item.series, item.future, stated)[0]
            < normalised_errors(item.series, item.future, median)[0]
        )
        for r in requests:
            if r.item is item:
                errors.setdefault(r.condition, []).append(
                    normalised_errors(item.series, item.future, answers[r.prompt_hash])[0]
                )
    # reading the stated effect helps the simple context rule on average
    assert np.mean(errors["with_context"]) < np.mean(errors["without_context"])
    # every combination holding the caption reads it; the others cannot (no numbers)
    for condition in ("with_context_metadata", "with_all_context"):
        assert errors[condition] == errors["with_context"]
    for condition in ("with_characteristics", "with_characteristics_metadata"):
        assert errors[condition] == errors["without_context"]
