"""The numeric what-if options do not give the answer away without the series.

``counterfactual_event`` and ``counterfactual_scale`` items are asked with and without the
series; the gap says whether a model reads it. If the options alone singled out the key (one
option ``factor`` times another, the key the midpoint of two others, the key always the
largest ...), a model could score without the series and the gap would measure nothing.
These tests play simple option-only rules over 300 generated items of each kind and bound
their accuracy by chance plus 4 binomial standard errors; they also recompute the key from
the scenario's parameters (the clean curve's formula written out here, not the suite's
``clean_series``) and check the options' spacing as docs/suites/reasoning.md states it.
"""

from __future__ import annotations

import functools
import itertools
import math
import re

import numpy as np
import pytest

from tsrate.suites.reasoning import scenario_model as sm
from tsrate.suites.reasoning import scenarios as sc
from tsrate.suites.reasoning.tasks import choice_messages

N = 300
CHANCE = 0.25


def _number(option: str) -> float:
    return float(re.search(r"about ([\d,.]+)", option).group(1).replace(",", ""))


@functools.cache
def _items(category: str) -> tuple:
    """Up to 300 items of ``category``, one per seed: a scenario of its own (a step event
    for ``counterfactual_event``) and an item generator of its own."""
    items = []
    for seed in range(N):
        kind = ("step_up", "step_down")[seed % 2] if category == "counterfactual_event" else None
        scenario = sm.draw_scenario(np.random.default_rng(seed), seed % len(sm.SUBJECTS), 100, kind)
        item = sc.single_series_item(np.random.default_rng(10_000 + seed), scenario, category)
        if item is not None:
            items.append(item)
    assert len(items) >= 0.75 * N
    return tuple(items)


# --------------------------------------------------------------------------- option-only rules


def _near(a: float, b: float, rel: float = 0.015) -> bool:
    """Equal up to the 3 significant figures the option texts keep (and a little more)."""
    return abs(a - b) <= rel * max(abs(a), abs(b))


def _largest(values, item):
    return int(np.argmax(values))


def _smallest(values, item):
    return int(np.argmin(values))


def _lower_median(values, item):
    return int(np.argsort(values)[1])


def _upper_median(values, item):
    return int(np.argsort(values)[2])


def _factor_times_another(values, item):
    """The option that is the stated factor (2, 3 or 10) times another option."""
    factor = item.params.get("factor")
    if factor is None:
        return None
    for i, j in itertools.permutations(range(len(values)), 2):
        if _near(values[i], factor * values[j]):
            return i
    return None


def _midpoint_of_two_others(values, item):
    for i in range(len(values)):
        others = [values[k] for k in range(len(values)) if k != i]
        if any(_near(values[i], (a + b) / 2) for a, b in itertools.combinations(others, 2)):
            return i
    return None


def _geometric_midpoint_of_two_others(values, item):
    for i in range(len(values)):
        others = [values[k] for k in range(len(values)) if k != i]
        if any(_near(values[i], math.sqrt(a * b)) for a, b in itertools.combinations(others, 2)):
            return i
    return None


def _round_ratio_hub(values, item):
    """The option with the most others at a ratio of 1.5, 1.6, 0.6, 0.5, 2, 3 or 10 to it
    (ratios a hand-written distractor list tends to use); none when no option has one."""
    ratios = (0.5, 0.6, 1.5, 1.6, 2.0, 3.0, 10.0)
    counts = [
        sum(any(_near(v, r * values[i]) for r in ratios) for k, v in enumerate(values) if k != i)
        for i in range(len(values))
    ]
    return int(np.argmax(counts)) if max(counts) > 0 else None


RULES = {
    "largest": _largest,
    "smallest": _smallest,
    "lower median": _lower_median,
    "upper median": _upper_median,
    "factor x another option": _factor_times_another,
    "midpoint of two others": _midpoint_of_two_others,
    "geometric midpoint of two others": _geometric_midpoint_of_two_others,
    "round-ratio hub": _round_ratio_hub,
}


def _bound(n: int) -> float:
    """Hits a rule may score on the n items it picks on: chance plus 4 standard errors."""
    return CHANCE * n + 4 * math.sqrt(n * CHANCE * (1 - CHANCE))


@pytest.mark.parametrize("category", ["counterfactual_event", "counterfactual_scale"])
@pytest.mark.parametrize("rule", sorted(RULES))
def test_no_option_only_rule_finds_the_key_above_chance(category, rule):
    """Each rule looks only at the numbers in the option texts (what a model sees without
    the series); on the items it makes a pick for, its hits stay below chance + 4 SE."""
    picked = hits = 0
    for item in _items(category):
        values = [_number(o) for o in item.options]
        choice = RULES[rule](values, item)
        if choice is None:
            continue
        picked += 1
        hits += choice == item.answer_index
    assert hits <= _bound(picked), f"{rule}: {hits} of {picked} right, chance {CHANCE}"


@pytest.mark.parametrize("category", ["counterfactual_event", "counterfactual_scale"])
def test_the_key_sits_at_every_position_and_every_rank_about_equally(category):
    """The letter of the key and its rank among the sorted options are both uniform:
    each of the 4 counts within 4 SE of a quarter."""
    positions = np.zeros(4, dtype=int)
    ranks = np.zeros(4, dtype=int)
    n = len(_items(category))
    for item in _items(category):
        values = [_number(o) for o in item.options]
        positions[item.answer_index] += 1
        ranks[sorted(values).index(values[item.answer_index])] += 1
    se = math.sqrt(n * CHANCE * (1 - CHANCE))
    assert np.all(np.abs(positions - n / 4) <= 4 * se), positions
    assert np.all(np.abs(ranks - n / 4) <= 4 * se), ranks


# --------------------------------------------------------------------------- the key


def _without_event_last_value(params: dict) -> float:
    """The clean curve at the last step with the event left out, from the parameters:
    base x (1 + trend) plus the cycle base x amplitude x sin(2 pi (n - 1) / period)."""
    n = params["length"]
    period = sm.SUBJECTS[params["subject_index"]].period
    base = params["base"]
    return base * (1 + params["trend"]) + base * params["amplitude"] * math.sin(
        2 * math.pi * (n - 1) / period
    )


@pytest.mark.parametrize("category", ["counterfactual_event", "counterfactual_scale"])
def test_the_key_is_the_true_what_if_value(category):
    for item in _items(category):
        if category == "counterfactual_event":
            expected = _without_event_last_value(item.params["scenario"])
        else:
            factor = int(re.search(r"been (\d+) times as large", item.question).group(1))
            assert item.params["factor"] == factor
            expected = factor * max(item.series)
        assert item.params["correct_value"] == pytest.approx(expected, rel=1e-9)
        assert item.params["option_values"][item.answer_index] == item.params["correct_value"]
        assert _number(item.options[item.answer_index]) == pytest.approx(expected, rel=5e-3)


# --------------------------------------------------------------------------- spacing

#: docs/suites/reasoning.md: neighbouring options (sorted) differ by a factor of 1.2 to 1.6
STEP_LOW, STEP_HIGH = 1.2, 1.6


@pytest.mark.parametrize("category", ["counterfactual_event", "counterfactual_scale"])
def test_options_are_distinct_and_neighbours_differ_by_the_stated_factors(category):
    for item in _items(category):
        raw = sorted(item.params["option_values"])
        steps = [b / a for a, b in itertools.pairwise(raw)]
        assert raw[0] > 0
        assert all(STEP_LOW - 1e-9 <= s <= STEP_HIGH + 1e-9 for s in steps), steps
        # as written: 3 significant figures move a value by at most 0.5 %
        written = sorted(_number(o) for o in item.options)
        assert all(b / a >= STEP_LOW * 0.99 for a, b in itertools.pairwise(written)), written
        assert len(set(item.options)) == 4
        # and as the default prompt writes them, on the series' scale
        prompt = choice_messages(item, "with_series", "llmtime_gpt4")[-1]["content"]
        shown = re.findall(r"^[A-D]\. about (\d+)$", prompt, re.MULTILINE)
        assert len(shown) == 4 and len(set(shown)) == 4, shown


def test_the_steps_between_neighbours_are_drawn_over_the_whole_stated_range():
    """Log-uniform on [1.2, 1.6]: about half the steps fall below the geometric middle
    sqrt(1.2 x 1.6) (within 4 SE), and the smallest and largest come near the ends; equal
    steps would make every option the geometric midpoint of its neighbours."""
    steps = []
    for category in ("counterfactual_event", "counterfactual_scale"):
        for item in _items(category):
            raw = sorted(item.params["option_values"])
            steps += [b / a for a, b in itertools.pairwise(raw)]
    steps = np.asarray(steps)
    n = len(steps)
    below = int(np.sum(steps < math.sqrt(STEP_LOW * STEP_HIGH)))
    assert abs(below - n / 2) <= 4 * math.sqrt(n / 4), (below, n)
    assert steps.min() < 1.21 and steps.max() > 1.59
