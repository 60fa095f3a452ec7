"""Report data for the reading's sentences on forecast failures (a system that fell back to
its last value, one whose forecasts copied its own input): marts.forecast_failures_summary
written by hand, and the sentence's text as a reader sees it. No test here."""

from __future__ import annotations

import re

import pandas as pd

from tsrate.robustness.report.data import ReportData

#: the counts a summary row may hold after (system_id, perturbation_id, n_windows)
COUNTS = ("n_fallback_windows", "n_copied_windows")


def failures_summary(rows: list[tuple]) -> pd.DataFrame:
    """marts.forecast_failures_summary of run 'r1' from ``rows`` (system_id,
    perturbation_id, n_windows, then the fallback count and, in five-value rows, the copied
    count: nullable integers, None where a window was stored before they were counted)."""
    counts = list(COUNTS[: len(rows[0]) - 3])
    frame = pd.DataFrame(rows, columns=["system_id", "perturbation_id", "n_windows", *counts])
    return frame.assign(run_id="r1", **{c: frame[c].astype("Int64") for c in counts})


def failures_data(summary: pd.DataFrame, systems: dict[str, str]) -> ReportData:
    """Report data of run 'r1' holding only ``summary`` and ``systems`` (id -> name)."""
    empty = pd.DataFrame()
    names = pd.DataFrame({"system_id": list(systems), "display_name": list(systems.values())})
    return ReportData(
        "r1", "2026-01-01T00:00:00", {}, *([empty] * 6), names, *([empty] * 3),
        forecast_failures=summary,
    )  # fmt: skip


def text(html: str) -> str:
    """``html``'s text: every tag a space, white space folded, the ends stripped."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()
