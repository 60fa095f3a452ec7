"""Numeric options of what-if questions are written on the scale of the series beside them.

``counterfactual_event`` / ``counterfactual_scale`` items ask for a value ("the highest value
would then be"). Under an LLMTime encoding the series is rescaled, so options in raw units
could not be compared with it. These tests read the prompt as a model does and recompute
the expected numbers from the scaler's definition (the paper's Appendix A.1 / LLMTime
``get_scaler``), not from the suite's encoder.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest

from tsrate.suites.reasoning.scenarios import GeneratorConfig, generate_items
from tsrate.suites.reasoning.tasks import choice_messages

NUMERIC = ("counterfactual_event", "counterfactual_scale")


@functools.cache
def _numeric_items():
    items = [i for i in generate_items(GeneratorConfig()) if i.category in NUMERIC]
    assert {i.category for i in items} == set(NUMERIC) and len(items) >= 8
    return items


def _prompt(item, encoding: str, condition: str = "with_series") -> str:
    return choice_messages(item, condition, encoding)[-1]["content"]


def _option_lines(prompt: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^[A-D]\. (.*)$", prompt, re.MULTILINE)]


def _gpt4_numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"-?\d+", text)]


def _gpt4_scale(series) -> float:
    """llmtime_gpt4 (basic): divide by the 0.3-quantile of |x| (at least 0.01)."""
    return max(float(np.quantile(np.abs(np.asarray(series)), 0.3)), 0.01)


def _written(value: float) -> int:
    """A scaled value with 3 digits of precision, the point dropped (truncated)."""
    return math.floor(abs(value) * 1000 + 1e-6) * (1 if value >= 0 else -1)


@pytest.mark.parametrize("index", range(8))
def test_default_encoding_writes_the_keyed_option_on_the_series_scale(index):
    item = _numeric_items()[index]
    prompt = _prompt(item, "llmtime_gpt4")
    lines = prompt.splitlines()
    series_line = lines[lines.index(next(x for x in lines if x.startswith("Question:"))) - 2]
    written_series = _gpt4_numbers(series_line)
    scale = _gpt4_scale(item.series)
    assert written_series == [_written(v / scale) for v in item.series]

    options = _option_lines(prompt)
    assert len(options) == 4 and all(re.fullmatch(r"about -?\d+", o) for o in options)
    keyed = _gpt4_numbers(options[item.answer_index])[0]
    assert abs(keyed - item.params["correct_value"] / scale * 1000) <= 1
    if item.category == "counterfactual_scale":
        # the value it describes: factor times the highest value written in the series
        factor = item.params["factor"]
        assert abs(keyed - factor * max(written_series)) <= factor
    # every option on the same scale, and the key still the only option near the truth
    shown = [_gpt4_numbers(o)[0] for o in options]
    gaps = sorted(abs(s - item.params["correct_value"] / scale * 1000) for s in shown)
    assert gaps[0] <= 1 < 0.1 * keyed < gaps[1]


def test_offset_encoding_writes_options_with_its_offset_and_spaced_digits():
    item = next(i for i in _numeric_items() if i.category == "counterfactual_scale")
    prompt = _prompt(item, "llmtime_gpt")
    values = np.asarray(item.series)
    offset = values.min() - 0.3 * (values.max() - values.min())
    scale = float(np.quantile(values - offset, 0.95))
    keyed = _option_lines(prompt)[item.answer_index]
    assert re.fullmatch(r"about -?(\d )*\d", keyed)
    written = int(keyed.removeprefix("about ").replace(" ", ""))
    assert abs(written - (item.params["correct_value"] - offset) / scale * 1000) <= 1


def test_options_and_question_are_the_same_with_and_without_the_series():
    for item in _numeric_items():
        with_series = _prompt(item, "llmtime_gpt4").split("Question:")[1]
        without = _prompt(item, "llmtime_gpt4", "without_series").split("Question:")[1]
        assert with_series == without
        assert "same scale" in with_series


def test_plain_values_keep_the_raw_unit_options():
    for item in _numeric_items():
        prompt = _prompt(item, "plain")
        assert _option_lines(prompt) == list(item.options)
        assert "same scale" not in prompt


def test_option_values_that_do_not_match_the_options_are_refused_in_one_line():
    import dataclasses

    from tsrate import TsrateError

    item = _numeric_items()[0]
    broken = dataclasses.replace(
        item, params={**item.params, "option_values": item.params["option_values"][:3]}
    )
    with pytest.raises(TsrateError) as caught:
        choice_messages(broken, "with_series", "llmtime_gpt4")
    assert "3 option values for 4 options" in str(caught.value)
    assert "hint:" in str(caught.value) and "\n" not in str(caught.value)
