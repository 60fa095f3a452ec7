"""The reading's copied-windows sentences: a single copied window is named like many, and the
sentences follow the systems' ids whatever order the mart's rows come in. Counts are summed
here from the rows given, not read from the builder."""

from __future__ import annotations

import re

import pandas as pd

from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.fallbacks import copied_counts, copied_note


def _data(summary: pd.DataFrame) -> ReportData:
    empty = pd.DataFrame()
    systems = pd.DataFrame({"system_id": ["alpha", "beta"], "display_name": ["Alpha", "Beta"]})
    return ReportData(
        "r1", "2026-01-01T00:00:00", {}, *([empty] * 6), systems, *([empty] * 3),
        forecast_failures=summary,
    )  # fmt: skip


def _summary(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["system_id", "perturbation_id", "n_windows", "n_copied_windows"])  # fmt: skip
    return frame.assign(
        run_id="r1",
        n_fallback_windows=pd.array([0] * len(frame), dtype="Int64"),
        n_copied_windows=frame["n_copied_windows"].astype("Int64"),
    )


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


ROWS = [  # beta's rows first: the mart's order is not the systems' order
    ("beta", "P0", 5, 1),
    ("alpha", "P0", 4, 0),
    ("beta", "P1", 5, 0),
    ("alpha", "P1", 4, 2),
]


def test_one_copied_window_is_named():
    counts = copied_counts(_summary(ROWS)).set_index("system_id")
    for system in ("alpha", "beta"):
        mine = [r for r in ROWS if r[0] == system]
        assert counts.loc[system, "n_copied_windows"] == sum(r[3] for r in mine)
        assert counts.loc[system, "n_windows"] == sum(r[2] for r in mine)
    assert "Beta's forecast repeated a stretch of its own input on 1 of 10 windows" in _text(
        copied_note(_data(_summary(ROWS)))
    )


def test_the_sentences_follow_the_system_ids():
    text = _text(copied_note(_data(_summary(ROWS))))
    assert text.index("Alpha's forecast") < text.index("Beta's forecast")
    assert list(copied_counts(_summary(ROWS))["system_id"]) == sorted({r[0] for r in ROWS})
