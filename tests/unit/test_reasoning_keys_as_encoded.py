"""The answer keys of procedural choice items hold for the numbers a model reads.

Keys are computed on raw values (a ``difference`` item's bucket from the ratio of the
clean curves' last-quarter means; the equivalence test that keeps etiological distractors
wrong). These tests decode the series the way the prompt shows them (the text after
"First series:" / "Second series:", read back as written, no inverse scaling) and check
the key against those numbers. The default choice encoding (basic scaling: divide only)
keeps ratios; ``llmtime_gpt`` subtracts an offset first, and some keys do not hold.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tsrate.suites.reasoning.encoding import DEFAULT_CHOICE_ENCODING, Scaler, decode
from tsrate.suites.reasoning.scenario_model import NOISE
from tsrate.suites.reasoning.scenarios import (
    DIFFERENCE_OPTIONS,
    EQUIVALENT_MISS_FACTOR,
    GeneratorConfig,
    clean_series,
    difference_bucket,
    explanation_miss,
    generate_items,
    scenario_from_dict,
)
from tsrate.suites.reasoning.tasks import choice_messages

CONFIGS = {"default": GeneratorConfig(), "96 scenarios": GeneratorConfig(scenarios=96)}


@functools.cache
def _items(config_name: str):
    return generate_items(CONFIGS[config_name])


def _written(item, encoding: str, label: str) -> np.ndarray:
    """The series after ``label`` in the with-series prompt, as the numbers written."""
    lines = choice_messages(item, "with_series", encoding)[-1]["content"].splitlines()
    return decode(lines[lines.index(label) + 1], encoding, Scaler(), len(item.series))


def _written_single(item, encoding: str) -> np.ndarray:
    for line in choice_messages(item, "with_series", encoding)[-1]["content"].splitlines():
        try:
            return decode(line, encoding, Scaler(), len(item.series))
        except ValueError:
            continue
    raise AssertionError("no series line in the prompt")


def _key_bucket(item) -> int | None:
    """The option bucket the key is about: a ``difference`` item's keyed option; for a
    ``which_change`` item, the bucket of its keyed change's raw ratio (None near an edge)."""
    if item.category == "difference":
        return DIFFERENCE_OPTIONS.index(item.options[item.answer_index])
    scenario = scenario_from_dict(item.params["scenario"])
    changed = scenario_from_dict(item.params["changed"])
    quarter = max(1, scenario.length // 4)
    return difference_bucket(
        float(clean_series(changed)[-quarter:].mean() / clean_series(scenario)[-quarter:].mean())
    )


def _misplaced_two_series(config_name: str, encoding: str) -> tuple[list[str], int]:
    misplaced, checked = [], 0
    for item in _items(config_name):
        if item.task not in ("qa_two", "qa_perturbed"):
            continue
        key = _key_bucket(item)
        if key is None:
            continue
        first = _written(item, encoding, "First series:")
        second = _written(item, encoding, "Second series:")
        quarter = max(1, len(item.series) // 4)
        ratio = float(second[-quarter:].mean() / first[-quarter:].mean())
        checked += 1
        if int(np.searchsorted((0.9, 1.1, 1.6), ratio)) != key:
            misplaced.append(f"{item.category} {item.params['change']}: {ratio:.3f}, key {key}")
    return misplaced, checked


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
def test_default_choice_encoding_shows_ratios_in_the_keys_bucket(config_name):
    misplaced, checked = _misplaced_two_series(config_name, DEFAULT_CHOICE_ENCODING)
    categories = {i.category for i in _items(config_name) if i.task == "qa_two"}
    assert categories == {"difference", "which_change"} and checked >= 20
    assert misplaced == []


def test_the_offset_encoding_misplaces_some_written_ratios():
    """The same check fails under llmtime_gpt (the earlier choice default)."""
    misplaced, _ = _misplaced_two_series("default", "llmtime_gpt")
    assert any(m.startswith("difference") for m in misplaced)


def _near_distractors(config_name: str, encoding: str) -> int:
    """Etiological items with a distractor whose curve explains the written series within
    the suite's equivalence threshold (scenarios.equivalent_caption's miss test)."""
    count = 0
    for item in _items(config_name):
        if item.task != "etiological":
            continue
        written = _written_single(item, encoding)
        truth = scenario_from_dict(item.params["scenario"])
        limit = EQUIVALENT_MISS_FACTOR * max(explanation_miss(written, truth), NOISE / 3)
        others = [
            scenario_from_dict(p)
            for i, p in enumerate(item.params["option_scenarios"])
            if i != item.answer_index
        ]
        count += any(explanation_miss(written, other) <= limit for other in others)
    return count


def test_no_etiological_distractor_fits_the_written_series_by_default():
    assert _near_distractors("default", DEFAULT_CHOICE_ENCODING) == 0
    assert _near_distractors("default", "llmtime_gpt") > 0
