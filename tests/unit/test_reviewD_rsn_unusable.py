"""The reasoning report's "Every answer counts" lines: every unusable answer of a system,
unanswered or unparseable, with the series and without it, and every unusable forecast.

The expected counts are added up by hand from the rows below, not from the report."""

from __future__ import annotations

import pandas as pd

from tsrate.suites.reasoning.report import unusable_lines

FORECASTS = pd.DataFrame([{"system_id": "m", "n_items": 4, "n_unanswered": 1, "n_unparseable": 0}])


def task_row(**changes) -> dict:
    row = {
        "task": "qa_single",
        "system_id": "m",
        "n_items": 5,
        "n_unanswered": 1,
        "n_unparseable": 1,
        "n_items_without_series": 5,
        "n_unparseable_without_series": 1,
        "n_unanswered_without_series": 2,
    }
    return {**row, **changes}


def test_unanswered_prompts_without_the_series_count_as_unusable():
    """With the series 1 unanswered + 1 unparseable; without it 2 unanswered + 1
    unparseable; forecasts 1 unanswered: 6 of 5 + 5 + 4 = 14 answers."""
    text = unusable_lines(pd.DataFrame([task_row()]), FORECASTS)
    assert "<li>m: 6 of 14 answers unusable</li>" in text


def test_a_task_asked_only_with_the_series_counts_its_own_answers():
    """etiological has no without-series prompts (nulls): 2 of 5, plus the forecasts' 1 of 4."""
    row = task_row(
        task="etiological",
        n_items_without_series=None,
        n_unparseable_without_series=None,
        n_unanswered_without_series=None,
    )
    text = unusable_lines(pd.DataFrame([row]), FORECASTS)
    assert "<li>m: 3 of 9 answers unusable</li>" in text


def test_an_older_snapshot_without_the_unanswered_column_still_reports():
    """A snapshot published before the mart carried n_unanswered_without_series: its
    unparseable answers still count (1 + 1 with, 1 without, 1 forecast: 4 of 14)."""
    row = task_row()
    del row["n_unanswered_without_series"]
    text = unusable_lines(pd.DataFrame([row]), FORECASTS)
    assert "<li>m: 4 of 14 answers unusable</li>" in text
