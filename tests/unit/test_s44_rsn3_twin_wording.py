"""A perturbed twin (Section 5.3) whose key is not given away by its wording.

Each twin's key and lure are the two wordings of one what-if (the plain "50% higher", the
altered "20% higher"); a coin seeded by the scenario picks which one the second series
shows. Checked here against the test's own reading of the sentences and its own curve
(level, trend, cycle, event, noise as docs/suites/reasoning.md states them), not the
generator's tables: the key is what the second series was drawn from, the lure and the
wrong options are refuted by it, the lure is a near copy (it changes the same part of the
scenario), either wording is the key about half the time, and the key's letter is uniform.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import re

import numpy as np

from tsrate.suites.reasoning import scenario_model as sm
from tsrate.suites.reasoning import scenarios as sc

SEEDS = range(700, 716)


@functools.cache
def _items() -> tuple:
    out = []
    for seed in SEEDS:
        out.extend(sc.generate_items(sc.GeneratorConfig(seed=seed)))
    return tuple(out)


def _twins() -> list:
    return [i for i in _items() if i.task == "qa_perturbed"]


def _originals() -> dict:
    return {i.item_id: i for i in _items() if i.task == "qa_two"}


def _stated(text: str, s: sm.Scenario) -> tuple[str, sm.Scenario]:
    """(the part of the scenario it changes, the scenario the sentence describes)."""
    if "had not happened" in text:
        return "event", dataclasses.replace(s, event_kind="none", event_step=-1, event_effect=0.0)
    size = re.search(r"the effect of .* had been (twice|three times|half) as large", text)
    if size:
        factor = {"twice": 2.0, "three times": 3.0, "half": 0.5}[size[1]]
        return "event", dataclasses.replace(s, event_effect=max(-0.9, factor * s.event_effect))
    if "trend had gone the other way" in text:
        return "trend", dataclasses.replace(s, trend=-s.trend)
    if "trend had been twice as steep" in text:
        return "trend", dataclasses.replace(s, trend=2 * s.trend)
    if re.search(r"there had been no [\w-]+ cycle", text):
        return "cycle", dataclasses.replace(s, amplitude=0.0)
    if re.search(r"the [\w-]+ cycle had been twice as large", text):
        return "cycle", dataclasses.replace(s, amplitude=2 * s.amplitude)
    cycle = re.search(r"cycle of plus or minus (\d+)%", text)
    if cycle:
        return "cycle", dataclasses.replace(s, amplitude=int(cycle[1]) / 100)
    level = re.search(r"starting level had been (\d+)% higher", text)
    if level:
        return "level", dataclasses.replace(s, base=s.base * (1 + int(level[1]) / 100))
    raise AssertionError(f"unread what-if: {text}")


def _curve(s: sm.Scenario) -> np.ndarray:
    """Level x (1 + trend x t / (n - 1)) + level x amplitude x sin(2 pi t / period); a step
    multiplies everything from its step on, a spike adds effect x level for 3 steps."""
    t = np.arange(s.length, dtype=float)
    y = s.base * (1 + s.trend * t / (s.length - 1))
    y = y + s.base * s.amplitude * np.sin(2 * np.pi * t / sm.SUBJECTS[s.subject_index].period)
    if s.event_kind in ("step_up", "step_down"):
        y[s.event_step :] *= 1 + s.event_effect
    elif s.event_kind == "spike":
        y[s.event_step : s.event_step + 3] += s.base * s.event_effect
    return y


def _observed(s: sm.Scenario, noise_of: sm.Scenario) -> np.ndarray:
    """The curve plus 3 % of its level times the first scenario's seeded normal draw."""
    draw = np.random.default_rng(noise_of.noise_seed).standard_normal(s.length)
    return np.round(_curve(s) + s.base * 0.03 * draw, 2)


def _rms(x) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def test_the_key_is_the_what_if_the_second_series_shows_and_the_others_are_refuted():
    twins = _twins()
    assert len(twins) >= 80
    near_keys = 0
    for twin in twins:
        scenario = sc.scenario_from_dict(twin.params["scenario"])
        second = np.asarray(twin.series_b)
        key = twin.options[twin.answer_index]
        lure = twin.options[twin.params["perturbed_index"]]
        _, truth = _stated(key, scenario)
        np.testing.assert_allclose(second, _observed(truth, scenario), atol=0.011)
        # the lure, as stated, misses the second series by >= 8 % (relative RMS, no rescale)
        assert _rms(second - _curve(_stated(lure, scenario)[1])) / _rms(second) >= 0.08
        # every other wrong option misses it by >= 8 % even after the best rescaling
        for k, option in enumerate(twin.options):
            if k in (twin.answer_index, twin.params["perturbed_index"]):
                continue
            curve = _curve(_stated(option, scenario)[1])
            scaled = curve * float(curve @ second) / float(curve @ curve)
            assert _rms(second - scaled) / _rms(second) >= 0.08, (option, key)
        near_keys += twin.params["near_is_key"]
    assert near_keys > 0


def test_the_lure_is_a_near_copy_of_the_key():
    """Documented rule: the lure changes the same part of the scenario (the event, the
    trend, the cycle or the starting level) as the key, in the other wording: other numbers
    or another size word, the same opening words."""
    for twin in _twins():
        scenario = sc.scenario_from_dict(twin.params["scenario"])
        key = twin.options[twin.answer_index]
        lure = twin.options[twin.params["perturbed_index"]]
        assert lure != key and lure.split()[:2] == key.split()[:2] == ["What", "if"]
        assert _stated(lure, scenario)[0] == _stated(key, scenario)[0], (key, lure)


def test_the_wording_that_is_the_key_elsewhere_is_the_twins_key_about_half_the_time():
    """The rule the audit played: of a twin's key and lure, pick the wording that is the key
    of ``which_change`` items. It picked the key in every twin when the near copy always
    carried the altered wording; now it must be right in half the twins, +- 4 SE."""

    def wording(text: str) -> str:
        text = re.sub(r"(the effect of ).*?( had been)", r"\1EVENT\2", text)
        text = re.sub(r"What if .*? had not happened", "What if EVENT had not happened", text)
        return re.sub(r"\b(a|no|the) [\w-]+ cycle", r"\1 CYCLE cycle", text)

    originals = [i for i in _items() if i.task == "qa_two" and i.category == "which_change"]
    keys = {wording(i.options[i.answer_index]) for i in originals}
    decided = hits = 0
    for twin in _twins():
        key = wording(twin.options[twin.answer_index])
        lure = wording(twin.options[twin.params["perturbed_index"]])
        if (key in keys) != (lure in keys):
            decided += 1
            hits += key in keys
    assert decided >= 60
    assert abs(hits - decided / 2) <= 4 * math.sqrt(decided / 4), (hits, decided)


def test_the_twins_key_letter_is_uniform_and_a_kept_original_keeps_its_series():
    twins = _twins()
    originals = _originals()
    letters = collections.Counter(t.answer_index for t in twins)
    n = len(twins)
    se = math.sqrt(n * 0.25 * 0.75)
    assert all(abs(letters[k] - n / 4) <= 4 * se for k in range(4)), letters
    for twin in twins:
        original = originals[twin.params["original_item_id"]]
        assert twin.answer_index == original.answer_index
        assert twin.series == original.series and twin.question == original.question
        changed = {k for k in range(4) if twin.options[k] != original.options[k]}
        if twin.params["near_is_key"]:  # the altered what-if drawn: key and series redrawn
            assert changed == {twin.answer_index, twin.params["perturbed_index"]}
            assert twin.series_b != original.series_b
            assert (
                twin.options[twin.params["perturbed_index"]]
                == original.options[original.answer_index]
            )
        else:  # the original as it is, one wrong option replaced by the lure
            assert changed == {twin.params["perturbed_index"]}
            assert twin.series_b == original.series_b


def test_no_twin_unless_each_wordings_series_refutes_the_other():
    """Whatever its coin, a twin needs both: the near what-if's curve misses the plain
    what-if's series by >= 8 % and the plain curve misses the near series by >= 8 %
    (relative RMS, unscaled). These seeds hold originals where only one of the two holds
    (misses of 0.0785 / 0.0842, 0.0808 / 0.0783, ...): they must have no twin, or a
    tails twin would offer a lure its series does not refute."""
    one_sided = 0
    for seed in (12, 38, 42, 55, 102, 106):
        items = sc.generate_items(sc.GeneratorConfig(seed=seed, scenarios=24, forecasts=0))
        twinned = {i.params["original_item_id"] for i in items if i.task == "qa_perturbed"}
        for item in items:
            if item.task != "qa_two" or item.category != "which_change":
                continue
            scenario = sc.scenario_from_dict(item.params["scenario"])
            near = sm.near_what_ifs(scenario).get(item.params["change"])
            if near is None:
                continue
            plain = _stated(item.options[item.answer_index], scenario)[1]
            altered = _stated(near[0], scenario)[1]
            misses = []
            for shown, other in ((plain, altered), (altered, plain)):
                series = _observed(shown, scenario)
                misses.append(_rms(series - _curve(other)) / _rms(series))
            if min(misses) < 0.08:
                one_sided += max(misses) >= 0.08
                assert item.item_id not in twinned, (seed, item.params["change"], misses)
    assert one_sided >= 5


def test_no_twin_whose_altered_what_if_would_draw_values_at_or_below_zero():
    """A heads twin shows the altered what-if's series; a falling trend twice as steep or a
    fall three times as large can take it below zero (a count of admissions cannot be). No
    twin then, whatever the coin. These seeds hold such originals (minimum -3.34, -21.17,
    -83.79, ...)."""
    below = 0
    for seed in (5, 22, 27):
        items = sc.generate_items(sc.GeneratorConfig(seed=seed, scenarios=24, forecasts=0))
        twinned = {i.params["original_item_id"] for i in items if i.task == "qa_perturbed"}
        for item in items:
            if item.task != "qa_two" or item.category != "which_change":
                continue
            scenario = sc.scenario_from_dict(item.params["scenario"])
            near = sm.near_what_ifs(scenario).get(item.params["change"])
            if near is not None and _observed(_stated(near[0], scenario)[1], scenario).min() <= 0:
                below += 1
                assert item.item_id not in twinned, (seed, item.params["change"])
    assert below >= 3
