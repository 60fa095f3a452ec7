"""The reading's note on windows a system did not really forecast (its last-value fallback),
and on windows whose forecast repeats a stretch of the system's own input.

ARIMA (a failed fit) and fracast (too few finite values) forecast a window's last observed
value when their model fails there; those windows are scored as the system's forecasts, so
the reading says how many there were (``marts.forecast_failures_summary``). Likewise a
model (a small language model, typically) may answer with a copy of a piece of its context
(:mod:`tsrate.robustness.forecast.copies`): scored as its forecast, and counted beside."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from tsrate.html.charts import esc
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.numbers import display_names, format_share, num


class _Wording(NamedTuple):
    """What one paragraph counts (a column of ``forecast_failures_summary``) and says."""

    column: str
    id: str  # the paragraph's HTML id
    did: str  # after the system's name, before its count
    unknown: str  # why some windows have no count
    scored: str  # what is scored as its forecasts


_FALLBACKS = _Wording(
    "n_fallback_windows", "fallbacks", " fell back to the last value on ",
    "stored before fallbacks were recorded", "those windows",
)  # fmt: skip
_COPIES = _Wording(
    "n_copied_windows", "copies", "'s forecast repeated a stretch of its own input on ",
    "stored before copies were counted", "those copies",
)  # fmt: skip


def _counts(summary: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per system with a positive ``column`` total: that total (summed where known),
    n_windows (all its windows) and n_unknown (windows of cells whose ``column`` is null);
    empty when ``summary`` is, or has no ``column`` (a mart built before it existed)."""
    columns = ["system_id", column, "n_windows", "n_unknown"]
    if summary.empty or column not in summary:
        return pd.DataFrame(columns=columns)
    frame = summary.assign(n_unknown=summary["n_windows"].where(summary[column].isna(), 0))
    totals = (
        frame.groupby("system_id", sort=True)[[column, "n_windows", "n_unknown"]]
        .sum(min_count=0)
        .reset_index()
    )
    return totals[totals[column] > 0][columns].reset_index(drop=True)


def fallback_counts(summary: pd.DataFrame) -> pd.DataFrame:
    """Per system with fallback windows: n_fallback_windows (summed where known), n_windows
    (all its windows) and n_unknown (windows of cells stored before fallbacks were recorded,
    whose count is null); systems without a fallback window are not listed."""
    return _counts(summary, _FALLBACKS.column)


def copied_counts(summary: pd.DataFrame) -> pd.DataFrame:
    """Per system with copied windows: n_copied_windows (summed where known), n_windows (all
    its windows) and n_unknown (windows of cells without a count, null); systems without a
    copied window are not listed."""
    return _counts(summary, _COPIES.column)


def _paragraph(data: ReportData, wording: _Wording) -> str:
    """One sentence per system counted in ``wording.column``, its counts traced to
    ``forecast_failures_summary`` (empty when no system has one)."""
    counts = _counts(data.forecast_failures, wording.column)
    if counts.empty:
        return ""
    names = display_names(data)
    sentences = []
    for row in counts.itertuples():
        count = getattr(row, wording.column)
        where = {"run_id": data.run_id, "system_id": row.system_id}
        unknown = (
            f"; unknown on {int(row.n_unknown)} windows {wording.unknown}" if row.n_unknown else ""
        )
        sentences.append(
            f"{esc(names.get(row.system_id, row.system_id))}{wording.did}"
            + num(float(count), "forecast_failures_summary", wording.column, where,
                  agg="sum", integer=True)
            + " of "
            + num(float(row.n_windows), "forecast_failures_summary", "n_windows", where,
                  agg="sum", integer=True)
            + f" windows ({esc(format_share(count / row.n_windows))}"
            + f"{unknown}): {wording.scored} are scored as its forecasts."
        )  # fmt: skip
    return f'<p class="reading" id="{wording.id}">{" ".join(sentences)}</p>'


def copied_note(data: ReportData) -> str:
    """One sentence per system whose forecasts repeated a stretch of their own input, a
    paragraph of the reading (empty when none did)."""
    return _paragraph(data, _COPIES)


def fallback_note(data: ReportData) -> str:
    """One sentence per system with fallback windows, a paragraph of the reading (empty when
    no system fell back), followed by the copied windows' paragraph (:func:`copied_note`)."""
    return _paragraph(data, _FALLBACKS) + copied_note(data)
