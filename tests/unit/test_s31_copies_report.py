"""The report's reading names the systems whose forecasts repeated a stretch of their own
input, with counts traced to marts.forecast_failures_summary (sums over the system's rows),
beside the fallback sentence."""

from __future__ import annotations

import re

import pandas as pd

from tests.support.failure_notes import failures_data, failures_summary, text
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.fallbacks import copied_counts, copied_note, fallback_note


def _data(summary: pd.DataFrame) -> ReportData:
    return failures_data(summary, {"gemma3_270m": "gemma3_270m", "naive": "Naive"})


def test_a_system_that_copied_gets_one_sentence_with_traced_counts():
    # gemma: 4 + 3 of 6 + 6 windows = 7 of 12, 58.3 % printed as 58 %
    summary = failures_summary(
        [
            ("gemma3_270m", "P0", 6, 0, 4),
            ("gemma3_270m", "P1", 6, 0, 3),
            ("naive", "P0", 6, 0, 0),
        ]
    )
    html = copied_note(_data(summary))
    assert text(html) == (
        "gemma3_270m's forecast repeated a stretch of its own input on 7 of 12 windows "
        "(58 %): those copies are scored as its forecasts."
    )
    spans = re.findall(
        r'data-column="(\w+)" data-where="([^"]+)" data-value="([^"]+)" data-agg="sum"', html
    )
    where = "{&quot;run_id&quot;: &quot;r1&quot;, &quot;system_id&quot;: &quot;gemma3_270m&quot;}"
    assert spans == [("n_copied_windows", where, "7.0"), ("n_windows", where, "12.0")]
    # the reading's fallback note carries it, after the fallback sentence when there is one
    assert fallback_note(_data(summary)) == html
    with_fallback = failures_summary([("gemma3_270m", "P0", 6, 2, 4), ("naive", "P0", 6, 0, 0)])
    both = text(fallback_note(_data(with_fallback)))
    assert both.startswith("gemma3_270m fell back to the last value on 2 of 6 windows")
    assert both.endswith("its own input on 4 of 6 windows (66 %): those copies are scored as its forecasts.")  # fmt: skip


def test_no_copy_no_sentence_and_an_unknown_cell_is_said():
    none = failures_summary([("gemma3_270m", "P0", 6, 0, 0), ("naive", "P0", 6, 0, 0)])
    assert copied_note(_data(none)) == "" and fallback_note(_data(none)) == ""
    assert copied_note(_data(pd.DataFrame())) == ""
    older = failures_summary([("naive", "P0", 6, 0, 0)]).drop(columns="n_copied_windows")
    assert copied_note(_data(older)) == ""  # a mart built before the column existed
    unknown = failures_summary(
        [("gemma3_270m", "P0", 40, 0, 2), ("gemma3_270m", "P3", 40, 0, None), ("naive", "P3", 40, 0, None)]
    )  # fmt: skip
    assert copied_counts(unknown).values.tolist() == [["gemma3_270m", 2, 80, 40]]
    assert "(2 %; unknown on 40 windows stored before copies were counted)" in text(
        copied_note(_data(unknown))
    )
