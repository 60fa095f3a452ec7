"""The report's forecast plots: for each system, the windows where its forecast strays
furthest from the others, drawn beside the context it received and the clean actuals."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from tsrate.html.charts import Line, Point, chart_name, esc, line_chart
from tsrate.robustness.report.data import (
    TRACE_WINDOWS_PER_SYSTEM,
    ReportData,
    context_tail_length,
)
from tsrate.robustness.report.figures import chart_figure
from tsrate.robustness.report.numbers import (
    format_number,
    provenance,
    source_note,
    system_colours,
    system_order,
)


def _trace_where(data: ReportData, ticker, window, perturbation) -> dict:
    return {
        "run_id": data.run_id,
        "ticker": ticker,
        "window_end_date": str(pd.Timestamp(window).date()),
        "perturbation_id": perturbation,
    }


def trace_y_range(values: Sequence[float]) -> tuple[float, float] | None:
    """The y axis of a forecast plot: the clean prices (context tail and actuals) padded by
    their own range or 20 % of their mean level, whichever is larger. Forecasts beyond it are
    drawn on the edge, marked off scale (e.g. the Biased baseline, or a forecast of 0 after
    a drop-to-zero), so they do not flatten the actual series."""
    present = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not present:
        return None
    low, high = min(present), max(present)
    pad = max(high - low, 0.2 * abs(sum(present) / len(present)), 1e-9)
    return low - pad, high + pad


def _window_rows(frame: pd.DataFrame) -> dict[tuple, list]:
    """The rows of a forecast_traces or window_inputs frame (``itertuples``, read once) per
    window: (ticker, window_end_date as a Timestamp, perturbation_id), in frame order."""
    if frame.empty:
        return {}
    windows: dict[tuple, list] = {}
    dates = pd.to_datetime(frame["window_end_date"])
    for date, row in zip(dates, frame.itertuples(), strict=True):
        windows.setdefault((row.ticker, date, row.perturbation_id), []).append(row)
    return windows


def forecast_chart(
    data: ReportData,
    chosen,
    colours: Mapping[str, str],
    windows: tuple[dict[tuple, list], dict[tuple, list]] | None = None,
) -> dict | None:
    """Forecast vs actual for one chosen window: the context tail as each system received it
    and clean, the clean actuals over the horizon, and every system's forecast.

    ``windows``: ``data.traces`` and ``data.contexts`` per window (:func:`_window_rows`),
    read here when not given; :func:`forecasts_section` reads them once for every chart."""
    ticker, window, perturbation = chosen.ticker, chosen.window_end_date, chosen.perturbation_id
    cell = _trace_where(data, ticker, window, perturbation)
    traces, contexts = windows or (_window_rows(data.traces), _window_rows(data.contexts))
    key = (ticker, pd.Timestamp(window), perturbation)
    mine = traces.get(key, [])
    if not mine:
        return None
    tail = sorted(contexts.get(key, []), key=lambda row: row.context_step)
    last_step = int(max(row.context_step for row in tail)) if tail else 0
    lines = []
    actual_x, actual_points = [], []
    for row in tail:
        x = int(row.context_step) - last_step
        actual_x.append(x)
        where = {**cell, "context_step": int(row.context_step)}
        actual_points.append(
            Point(
                float(row.clean_value),
                f"clean input {row.price_date:%Y-%m-%d}: {format_number(row.clean_value)}",
                provenance("window_inputs", "clean_value", where, row.clean_value),
            )
        )
    steps: dict[object, object] = {}
    for row in mine:
        steps.setdefault(row.horizon_step, row)  # the first row of each step
    for row in sorted(steps.values(), key=lambda row: row.horizon_step):
        actual_x.append(int(row.horizon_step))
        where = {**cell, "system_id": row.system_id, "horizon_step": int(row.horizon_step)}
        actual_points.append(
            Point(
                float(row.actual),
                f"actual {pd.Timestamp(row.target_date):%Y-%m-%d}: {format_number(row.actual)}",
                provenance("forecast_traces", "actual", where, row.actual),
            )
        )
    lines.append(Line("actual", actual_x, actual_points, "#222222"))
    if perturbation != "P0" and tail:
        points = []
        for row in tail:
            value = None if pd.isna(row.input_value) else float(row.input_value)
            where = {**cell, "context_step": int(row.context_step)}
            points.append(
                Point(
                    value,
                    f"{perturbation} input {row.price_date:%Y-%m-%d}: {format_number(value)}",
                    provenance("window_inputs", "input_value", where, value)
                    if value is not None
                    else {},
                )
            )
        lines.append(
            Line(
                f"input ({perturbation})", [p for p in actual_x if p <= 0], points, "#999999", True
            )
        )
    forecasts: dict[str, list] = {}
    for row in mine:
        forecasts.setdefault(row.system_id, []).append(row)
    for system in [s for s in colours if s in forecasts]:
        rows = sorted(forecasts[system], key=lambda row: row.horizon_step)
        points = []
        for row in rows:
            where = {**cell, "system_id": system, "horizon_step": int(row.horizon_step)}
            value = None if pd.isna(row.forecast) else float(row.forecast)
            points.append(
                Point(
                    value,
                    f"{system} step {row.horizon_step}: {format_number(value)}",
                    provenance("forecast_traces", "forecast", where, value)
                    if value is not None
                    else {},
                )
            )
        lines.append(Line(system, [int(row.horizon_step) for row in rows], points, colours[system]))
    title = f"{ticker} · origin {pd.Timestamp(window):%Y-%m-%d} · {perturbation}"
    return line_chart(
        title,
        lines,
        x_label="trading days from the origin",
        y_label="close (price units)",
        y_range=trace_y_range([p.value for p in actual_points]),
    )


def forecasts_section(data: ReportData, charts: dict[str, dict]) -> str:
    """Forecasts beside actuals for the windows where each system strays most from the rest."""
    parts = ['<section id="forecasts"><h2>Forecasts beside actuals</h2>']
    if "forecast_traces" in data.missing_marts:
        parts.append("<p>This snapshot has no <code>marts.forecast_traces</code>.</p></section>")
        return "".join(parts)
    if data.trace_windows.empty:
        parts.append("<p>No window has forecasts of two or more systems to compare.</p></section>")
        return "".join(parts)
    tail = context_tail_length(
        int(data.study.get("context_length", 0) or 0), int(data.study.get("horizon", 1) or 1)
    )
    parts.append(
        f"<p>For each system, the {TRACE_WINDOWS_PER_SYSTEM} windows (ticker, origin, "
        "perturbation) where its forecast strays furthest from the other systems: largest mean "
        "over the horizon of |forecast − consensus| / actual, consensus = the median forecast "
        "of all systems at that step (<code>marts.forecast_traces.consensus_forecast</code>); "
        "a window already shown for an earlier system is skipped. Each plot shows the last "
        f"{tail} context values (clean, black; as the systems received them under a "
        "perturbation, grey dashed), the clean actuals after the origin (dashed line) and "
        "every system's forecast. The y axis spans the clean prices (padded by their range or "
        "20 % of their level): a forecast beyond it sits on the edge as a triangle and its "
        "legend entry says off scale; hover for its value. Click a legend entry to hide a "
        "line.</p>"
        '<div class="grid">'
    )
    systems = system_order(data) or sorted(set(data.traces["system_id"]))
    colours = system_colours(systems)
    windows = _window_rows(data.traces), _window_rows(data.contexts)
    for chosen in data.trace_windows.itertuples():
        spec = forecast_chart(data, chosen, colours, windows)
        if spec is None:
            continue
        name = chart_name(
            f"forecast {chosen.ticker} {pd.Timestamp(chosen.window_end_date):%Y-%m-%d} "
            f"{chosen.perturbation_id}"
        )
        parts.append(
            chart_figure(
                name,
                spec,
                charts,
                f"Chosen for <b>{esc(chosen.system_id)}</b>: where it strays most. Source: "
                "<code>marts.forecast_traces</code>, <code>marts.window_inputs</code>.",
            )
        )
    parts.append("</div>")
    parts.append(source_note("forecast_traces", "window_inputs"))
    parts.append("</section>")
    return "".join(parts)
