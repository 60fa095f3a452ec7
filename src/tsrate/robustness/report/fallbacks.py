"""The reading's note on windows a system did not really forecast (its last-value fallback),
and on windows whose forecast repeats a stretch of the system's own input.

ARIMA (a failed fit) and fracast (too few finite values) forecast a window's last observed
value when their model fails there; those windows are scored as the system's forecasts, so
the reading says how many there were (``marts.forecast_failures_summary``). Likewise a
model (a small language model, typically) may answer with a copy of a piece of its context
(:mod:`tsrate.robustness.forecast.copies`): scored as its forecast, and counted beside."""

from __future__ import annotations

import pandas as pd

from tsrate.html.charts import esc
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.numbers import format_share, num


def fallback_counts(summary: pd.DataFrame) -> pd.DataFrame:
    """Per system with fallback windows: n_fallback_windows (summed where known), n_windows
    (all its windows) and n_unknown (windows of cells stored before fallbacks were recorded,
    whose count is null); systems without a fallback window are not listed."""
    columns = ["system_id", "n_fallback_windows", "n_windows", "n_unknown"]
    if summary.empty or "n_fallback_windows" not in summary:
        return pd.DataFrame(columns=columns)
    frame = summary.assign(
        n_unknown=summary["n_windows"].where(summary["n_fallback_windows"].isna(), 0)
    )
    totals = (
        frame.groupby("system_id", sort=True)[["n_fallback_windows", "n_windows", "n_unknown"]]
        .sum(min_count=0)
        .reset_index()
    )
    return totals[totals["n_fallback_windows"] > 0][columns].reset_index(drop=True)


def copied_counts(summary: pd.DataFrame) -> pd.DataFrame:
    """Per system with copied windows: n_copied_windows (summed where known), n_windows (all
    its windows) and n_unknown (windows of cells without a count, null); systems without a
    copied window are not listed."""
    columns = ["system_id", "n_copied_windows", "n_windows", "n_unknown"]
    if summary.empty or "n_copied_windows" not in summary:
        return pd.DataFrame(columns=columns)
    frame = summary.assign(
        n_unknown=summary["n_windows"].where(summary["n_copied_windows"].isna(), 0)
    )
    totals = (
        frame.groupby("system_id", sort=True)[["n_copied_windows", "n_windows", "n_unknown"]]
        .sum(min_count=0)
        .reset_index()
    )
    return totals[totals["n_copied_windows"] > 0][columns].reset_index(drop=True)


def _names(data: ReportData) -> dict[str, str]:
    if not data.systems.empty and "display_name" in data.systems:
        return dict(zip(data.systems["system_id"], data.systems["display_name"], strict=False))
    return {}


def copied_note(data: ReportData) -> str:
    """One sentence per system whose forecasts repeated a stretch of their own input, a
    paragraph of the reading (empty when none did)."""
    counts = copied_counts(data.forecast_failures)
    if counts.empty:
        return ""
    names = _names(data)
    sentences = []
    for row in counts.itertuples():
        where = {"run_id": data.run_id, "system_id": row.system_id}
        unknown = (
            f"; unknown on {int(row.n_unknown)} windows stored before copies were counted"
            if row.n_unknown
            else ""
        )
        sentences.append(
            f"{esc(names.get(row.system_id, row.system_id))}'s forecast repeated a stretch of "
            + "its own input on "
            + num(float(row.n_copied_windows), "forecast_failures_summary",
                  "n_copied_windows", where, agg="sum", integer=True)
            + " of "
            + num(float(row.n_windows), "forecast_failures_summary", "n_windows", where,
                  agg="sum", integer=True)
            + f" windows ({esc(format_share(row.n_copied_windows / row.n_windows))}"
            + f"{unknown}): those copies are scored as its forecasts."
        )  # fmt: skip
    return f'<p class="reading" id="copies">{" ".join(sentences)}</p>'


def fallback_note(data: ReportData) -> str:
    """One sentence per system with fallback windows, a paragraph of the reading (empty when
    no system fell back), followed by the copied windows' paragraph (:func:`copied_note`)."""
    return _fallback_paragraph(data) + copied_note(data)


def _fallback_paragraph(data: ReportData) -> str:
    counts = fallback_counts(data.forecast_failures)
    if counts.empty:
        return ""
    names = _names(data)
    sentences = []
    for row in counts.itertuples():
        where = {"run_id": data.run_id, "system_id": row.system_id}
        unknown = (
            f"; unknown on {int(row.n_unknown)} windows stored before fallbacks were recorded"
            if row.n_unknown
            else ""
        )
        sentences.append(
            f"{esc(names.get(row.system_id, row.system_id))} fell back to the last value on "
            + num(float(row.n_fallback_windows), "forecast_failures_summary",
                  "n_fallback_windows", where, agg="sum", integer=True)
            + " of "
            + num(float(row.n_windows), "forecast_failures_summary", "n_windows", where,
                  agg="sum", integer=True)
            + f" windows ({esc(format_share(row.n_fallback_windows / row.n_windows))}"
            + f"{unknown}): those windows are scored as its forecasts."
        )  # fmt: skip
    return f'<p class="reading" id="fallbacks">{" ".join(sentences)}</p>'
