"""The report's reading names the systems that fell back to their last value, with counts
traced to marts.forecast_failures_summary (sums over the system's rows)."""

from __future__ import annotations

import re

import pandas as pd

from tests.support.failure_notes import failures_data, failures_summary, text
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.fallbacks import fallback_counts, fallback_note


def _data(summary: pd.DataFrame) -> ReportData:
    return failures_data(summary, {"arima": "ARIMA", "naive": "Naive"})


def test_a_system_that_fell_back_gets_one_sentence_with_traced_counts():
    # arima: 3 + 4 of 40 + 40 windows = 7 of 80, 8.75 % printed rounded down as 8 %
    summary = failures_summary(
        [("arima", "P0", 40, 3), ("arima", "P3", 40, 4), ("naive", "P0", 40, 0)]
    )
    html = fallback_note(_data(summary))
    assert text(html) == (
        "ARIMA fell back to the last value on 7 of 80 windows (8 %): "
        "those windows are scored as its forecasts."
    )
    spans = re.findall(
        r'data-column="(\w+)" data-where="([^"]+)" data-value="([^"]+)" data-agg="sum"', html
    )
    where = "{&quot;run_id&quot;: &quot;r1&quot;, &quot;system_id&quot;: &quot;arima&quot;}"
    assert spans == [("n_fallback_windows", where, "7.0"), ("n_windows", where, "80.0")]  # fmt: skip


def test_no_fallback_no_sentence_and_an_unknown_cell_is_said():
    assert (
        fallback_note(_data(failures_summary([("arima", "P0", 40, 0), ("naive", "P0", 40, 0)])))
        == ""
    )
    assert fallback_note(_data(pd.DataFrame())) == ""
    unknown = failures_summary(
        [("arima", "P0", 40, 2), ("arima", "P3", 40, None), ("naive", "P3", 40, None)]
    )
    counts = fallback_counts(unknown)
    assert counts.values.tolist() == [["arima", 2, 80, 40]]
    assert "(2 %; unknown on 40 windows stored before fallbacks were recorded)" in text(
        fallback_note(_data(unknown))
    )
