"""Reasoning suite: the paper's perturbed questions (Section 5.3) and context combinations
(Figure A.5), checked against the series and the prompt text, independently of the
generator's own bookkeeping."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.scenarios import (
    MIN_DISTRACTOR_MISS,
    NOISE,
    GeneratorConfig,
    characteristics,
    clean_series,
    generate_items,
    metadata,
    scenario_from_dict,
)
from tsrate.suites.reasoning.tasks import (
    CONDITIONS,
    FORECAST_CONTEXTS,
    forecast_context,
    forecast_messages,
)

CONFIG = GeneratorConfig(seed=11, scenarios=36, forecasts=12)


@pytest.fixture(scope="module")
def items():
    return generate_items(CONFIG)


def stated_scenario(text: str, scenario):
    """The scenario a what-if sentence describes, read from its words and numbers (the
    test's own reading, not the generator's tables)."""
    if "had not happened" in text:
        return dataclasses.replace(scenario, event_kind="none", event_step=-1, event_effect=0.0)
    if text.startswith("What if the effect of"):
        factor = {"twice as large": 2.0, "three times as large": 3.0, "half as large": 0.5}[
            re.search(r"had been (.+)\?$", text).group(1)
        ]
        return dataclasses.replace(scenario, event_effect=max(-0.9, factor * scenario.event_effect))
    if "trend had gone the other way" in text:
        return dataclasses.replace(scenario, trend=-scenario.trend)
    if "trend had been twice as steep" in text:
        return dataclasses.replace(scenario, trend=2 * scenario.trend)
    if re.search(r"there had been no \w[\w-]* cycle", text):
        return dataclasses.replace(scenario, amplitude=0.0)
    if "cycle had been twice as large" in text:
        return dataclasses.replace(scenario, amplitude=2 * scenario.amplitude)
    match = re.search(r"cycle of plus or minus (\d+)%", text)
    if match:
        return dataclasses.replace(scenario, amplitude=int(match.group(1)) / 100)
    match = re.search(r"starting level had been (\d+)% higher", text)
    if match:
        return dataclasses.replace(scenario, base=scenario.base * (1 + int(match.group(1)) / 100))
    raise AssertionError(f"unread what-if: {text}")


def relative_rms(series, curve) -> float:
    series = np.asarray(series, dtype=float)
    return float(np.linalg.norm(series - curve) / np.linalg.norm(series))


def test_perturbed_twins_keep_the_answer_and_the_series_refutes_the_near_copy(items):
    originals = {i.item_id: i for i in items if i.task == "qa_two"}
    twins = [i for i in items if i.task == "qa_perturbed"]
    which = [i for i in originals.values() if i.category == "which_change"]
    assert len(twins) >= 8 and len(twins) >= len(which) // 2
    assert CONDITIONS["qa_perturbed"] == ("with_series", "without_series")
    positions = set()
    flipped = 0
    for twin in twins:
        original = originals[twin.params["original_item_id"]]
        assert original.category == twin.category == "which_change"
        assert (twin.question, twin.series, twin.context) == (
            original.question,
            original.series,
            original.context,
        )
        assert twin.answer_index == original.answer_index
        changed = [k for k in range(4) if twin.options[k] != original.options[k]]
        lure = twin.params["perturbed_index"]
        if twin.series_b == original.series_b:  # one wrong option replaced by the near copy
            assert changed == [lure] != [twin.answer_index]
        else:  # the near what-if drawn instead: it is the key, the original's key the lure
            assert changed == sorted([lure, twin.answer_index]) and lure != twin.answer_index
            assert twin.options[lure] == original.options[original.answer_index]
            flipped += 1
        positions.add(lure)
        near, right = twin.options[lure], twin.options[twin.answer_index]
        # "similar looking": the same opening words as the right option
        assert near.split()[:2] == right.split()[:2]
        scenario = scenario_from_dict(twin.params["scenario"])
        second = np.asarray(twin.series_b)
        right_miss = relative_rms(second, clean_series(stated_scenario(right, scenario)))
        near_miss = relative_rms(second, clean_series(stated_scenario(near, scenario)))
        assert right_miss < 2 * NOISE  # the right what-if produces the second series
        assert near_miss >= MIN_DISTRACTOR_MISS  # the near copy does not
        if "starting level" in right:  # a level what-if read straight off the two series
            ratio = second.mean() / np.asarray(twin.series).mean()
            higher = int(re.search(r"(\d+)% higher", right).group(1))
            assert ratio == pytest.approx(1 + higher / 100, rel=0.02)
    assert len(positions) >= 2  # the replaced wrong option is drawn, not fixed
    assert 0 < flipped < len(twins)  # either wording is the truth in some twins
    # seeded; off when asked
    assert [i.options for i in generate_items(CONFIG) if i.task == "qa_perturbed"] == [
        t.options for t in twins
    ]
    off = generate_items(dataclasses.replace(CONFIG, perturbed=False))
    assert not any(i.task == "qa_perturbed" for i in off)


def _forecast(items) -> Item:
    return next(i for i in items if i.task == "forecast")


def test_each_context_combination_holds_exactly_its_pieces(items):
    assert list(FORECAST_CONTEXTS) == list(CONDITIONS["forecast"])
    assert len(FORECAST_CONTEXTS) == 6  # wo, Ca, Ch, CaMe, ChMe, all
    for item in [i for i in items if i.task == "forecast"]:
        scenario = scenario_from_dict(item.params["scenario"])
        pieces = item.params["context_pieces"]
        assert pieces["description"] == item.context
        assert pieces["characteristics"] == characteristics(scenario)
        for condition, named in FORECAST_CONTEXTS.items():
            messages, _ = forecast_messages(item, condition, "llmtime_gpt")
            text = messages[-1]["content"]
            assert (item.context in text) == ("description" in named), condition
            assert (pieces["characteristics"] in text) == ("characteristics" in named)
            assert ("was collected between" in text) == ("metadata" in named)
            assert text.startswith("Context: ") == bool(named)
            if named:
                block = text.split("\n\n")[0].removeprefix("Context: ")
                assert len(block.split("\n")) == len(named)  # one line per piece, no more


def test_characteristics_state_no_step_or_size_and_metadata_spans_the_series(items):
    for item in [i for i in items if i.task == "forecast"]:
        scenario = scenario_from_dict(item.params["scenario"])
        text = characteristics(scenario)
        assert not re.search(r"\d+%|\d{2,}", text.replace(f"{scenario.subject.period} ", ""))
        meta = metadata(scenario)
        frequency = {"hour": "h", "day": "D", "week": "7D", "month": "MS"}[
            scenario.subject.frequency
        ]
        stamps = pd.date_range(meta["start"], periods=scenario.length, freq=frequency)
        assert pd.Timestamp(meta["end"]) == stamps[-1]
        assert meta["units"] == scenario.subject.unit
        sentence = forecast_context(item, "with_characteristics_metadata").split("\n")[1]
        assert f"next {item.horizon} data points" in sentence
        assert meta["start"] in sentence and meta["end"] in sentence


def test_a_missing_piece_is_an_error_not_a_silent_other_condition():
    bare = Item(task="forecast", category="x", series=(1.0,) * 20, future=(1.0,) * 5,
                context="A caption.")  # fmt: skip
    assert forecast_context(bare, "with_context") == "A caption."
    with pytest.raises(TsrateError, match="has no characteristics"):
        forecast_context(bare, "with_characteristics")
    with pytest.raises(TsrateError, match="no condition 'with_everything'"):
        forecast_context(bare, "with_everything")


def test_imported_forecasts_carry_the_public_pieces(tmp_path):
    from tests.support.reasoning_dataset import good_rows, series_row, write
    from tsrate.suites.reasoning.dataset import import_items

    items = import_items(write(tmp_path / "tsqa.jsonl", good_rows()), seed=3)
    forecast = next(i for i in items if i.task == "forecast")
    row = series_row(0)
    text = forecast_context(forecast, "with_all_context").split("\n")
    assert text[0] == row["description"]
    assert text[1] == " ".join(row["characteristics"])  # a list: one line
    assert text[2] == (
        "The time series was collected between 2024-01-01 and 2024-01-20 with a collection "
        'frequency of daily, and the data unit is "visitors". You will predict the next 4 '
        "data points."
    )
    assert forecast_context(forecast, "with_characteristics") == text[1]


def test_the_random_answerer_scores_chance_within_its_interval():
    from statsmodels.stats.proportion import proportion_confint

    from tsrate.suites.reasoning.answerers import RandomChoice

    items = generate_items(GeneratorConfig())
    rule = RandomChoice(0)
    requests = rule.requests(items)
    assert {r.item.task for r in requests} == {
        "etiological", "qa_single", "qa_two", "qa_perturbed"
    }  # fmt: skip
    answers = rule.answer(requests)
    right = [a.choice == r.item.answer_index for r, a in zip(requests, answers, strict=True)]
    low, high = proportion_confint(sum(right), len(right), method="wilson")
    assert low <= 0.25 <= high and len(right) == 24 + 2 * (24 + 24 + 10)


def test_an_older_items_table_takes_perturbed_items(tmp_path):
    import duckdb

    from tsrate.suites.reasoning import schema, storage

    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute("create schema raw")
    con.execute(schema.DDL.replace("'qa_perturbed', ", ""))  # the table before the task
    items = generate_items(GeneratorConfig(scenarios=4, forecasts=1))
    storage.store_items(con, "r1", [i for i in items if i.task != "qa_perturbed"])
    storage.store_items(con, "r2", items)
    counts = dict(con.execute("select task, count(*) from raw.rsn_items group by 1").fetchall())
    assert counts["qa_perturbed"] >= 1 and sum(counts.values()) == len(items)
    with pytest.raises(duckdb.ConstraintException):  # the check itself is kept
        con.execute(
            "insert into raw.rsn_items select * replace ('nonsense' as task, 'x' as item_id) "
            "from raw.rsn_items limit 1"
        )


def test_the_command_line_passes_the_papers_options_to_the_flow(monkeypatch, capsys):
    """``tsrate suite reasoning run`` options reach the flow: sampling, temperature, encodings
    and distractors; the defaults are the paper's (LLMTime choice prompts, random
    distractors) and one greedy forecast reply; a sample count below 1 is refused."""
    import argparse

    import tsrate.platform.orchestration
    from tsrate.suites.reasoning.cli import add_run_arguments, run_from_args

    calls = []
    monkeypatch.setattr(
        tsrate.platform.orchestration, "run_flow", lambda flow, **kw: calls.append(kw) or "rsn-x"
    )
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    run_from_args(parser.parse_args([]))
    default = calls[-1]
    assert (default["choice_encoding"], default["forecast_encoding"]) == (
        "llmtime_gpt4",
        "llmtime_gpt4",
    )
    assert default["forecast_samples"] == 1 and default["forecast_temperature"] is None
    assert default["generator"]["distractors"] == "random"
    run_from_args(
        parser.parse_args(
            [
                "--forecast-samples", "20", "--forecast-temperature", "0.9",
                "--forecast-encoding", "llmtime_gpt", "--choice-encoding", "plain",
                "--distractors", "contrastive", "--llm", "endpoint:m",
            ]
        )
    )  # fmt: skip
    chosen = calls[-1]
    assert (chosen["forecast_samples"], chosen["forecast_temperature"]) == (20, 0.9)
    assert (chosen["forecast_encoding"], chosen["choice_encoding"]) == ("llmtime_gpt", "plain")
    assert chosen["generator"]["distractors"] == "contrastive" and chosen["llms"] == ["endpoint:m"]
    assert "rsn-x" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parser.parse_args(["--forecast-samples", "0"])
