"""The report's charts (Figures 4-9 and the forecast plots) as Vega-Lite specs.

Each section function takes ``charts`` (name -> spec, filled as it goes; ``tsrate report``
also writes them as ``report-charts/<name>.vl.json``) and returns HTML holding the specs
(:func:`tsrate.html.charts.figure`); the page renders them with the inlined Vega-Embed.
Every plotted number carries its mart row (``mart``, ``column``, ``where``, ``value``),
shown in its tooltip and re-read by the integration test.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import pandas as pd

from tsrate.html.charts import (
    Line,
    Point,
    Series,
    bar_chart,
    chart_name,
    colour_for,
    esc,
    figure,
    line_chart,
    rank_chart,
)
from tsrate.robustness.report.data import (
    ACCURACY_METRICS,
    COMPARISONS,
    METRIC_LABELS,
    ROBUSTNESS_METRICS,
    SCOPES,
    TRACE_WINDOWS_PER_SYSTEM,
    ReportData,
    context_tail_length,
)
from tsrate.robustness.report.numbers import (
    first_row,
    float_value,
    format_number,
    num,
    perturbation_order,
    provenance,
    source_note,
    system_colours,
    system_order,
    table_html,
)


def _chart_name(text: str) -> str:
    return chart_name(text)


def _figure(name: str, spec: dict, charts: dict[str, dict], caption: str) -> str:
    charts[name] = spec
    return figure(name, spec, caption)


def _higher_is_better(data: ReportData) -> dict[str, bool]:
    """Each rated metric's direction, as ``marts.ratings`` states it (``higher_is_better``)."""
    ratings = data.ratings
    if ratings.empty or "higher_is_better" not in ratings.columns:
        return {}
    return {
        str(metric): bool(higher)
        for metric, higher in ratings.groupby("metric")["higher_is_better"].first().items()
    }


def _radar_for(
    title: str,
    metrics: Sequence[str],
    names: Sequence[str],
    colours: Mapping[str, str],
    value_of,
    higher_is_better: Mapping[str, bool],
) -> dict | None:
    """A rank chart (the paper's radar) over ``metrics`` for ``names``; ``value_of(name, metric)``
    -> (value, attrs); each metric's direction from ``higher_is_better`` (the ratings mart's;
    a metric it does not rate is left out: its direction is unknown)."""
    present = [
        m
        for m in metrics
        if m in higher_is_better and any(value_of(n, m)[0] is not None for n in names)
    ]
    if len(present) < 3 or not names:
        return None
    series, directions = [], []
    for metric in present:
        directions.append(higher_is_better[metric])
    for name in names:
        points = []
        for metric in present:
            value, attrs = value_of(name, metric)
            label = f"{name} · {METRIC_LABELS.get(metric, metric)}: {format_number(value)}"
            points.append(Point(value, label, attrs if value is not None else {}))
        series.append(Series(name, points, colours[name]))
    return rank_chart(title, [METRIC_LABELS.get(m, m) for m in present], series, directions)


def radar_section(data: ReportData, charts: dict[str, dict]) -> str:
    """Figures 5-6: robustness and accuracy radars per perturbation and averaged."""
    directions = _higher_is_better(data)
    systems = system_order(data)
    colours = system_colours(systems)
    ratings, summary = data.ratings, data.system_summary
    parts = [
        '<section id="radars"><h2>Robustness and accuracy by rank, in the shape of Figures 5–6</h2>'
    ]
    parts.append(
        "<p>The paper's radar plots, unrolled: one column per metric ranks the systems in the "
        "chart, the best raw score at the top, the worst at the bottom, the others evenly "
        "between them by rank, equal scores together (↓ lower raw score is better, ↑ higher is "
        "better), so a line that stays high is better. A rank scale, not a min-max one, so that "
        "an outlier such as the Biased baseline cannot push every other system to the top; the "
        "distances are in the tables and tooltips. Hover a point for its raw score and mart "
        "row; click a legend entry to highlight a system.</p>"
    )
    for family, metrics, paper_figure in (
        ("Robustness", ROBUSTNESS_METRICS, "Figure 5"),
        ("Accuracy", ACCURACY_METRICS, "Figure 6"),
    ):
        parts.append(f'<h3>{family} ({paper_figure})</h3><div class="grid">')
        for perturbation in perturbation_order(data):

            def value_of(system: str, metric: str, perturbation=perturbation):
                value = float_value(
                    ratings,
                    "raw_score",
                    system_id=system,
                    metric=metric,
                    perturbation_id=perturbation,
                )
                where = {
                    "run_id": data.run_id,
                    "metric": metric,
                    "perturbation_id": perturbation,
                    "system_id": system,
                }
                return value, (
                    provenance("ratings", "raw_score", where, value) if value is not None else {}
                )

            title = f"{family} · {perturbation}"
            spec = _radar_for(title, metrics, systems, colours, value_of, directions)
            if spec:
                parts.append(
                    _figure(
                        _chart_name(f"radar {family} {perturbation}"),
                        spec,
                        charts,
                        f"{esc(title)}. Source: <code>marts.ratings</code> (raw_score).",
                    )
                )

        def average_of(system: str, metric: str):
            value = float_value(summary, "avg_raw_score", system_id=system, metric=metric)
            where = {"run_id": data.run_id, "metric": metric, "system_id": system}
            return value, (
                provenance("system_summary", "avg_raw_score", where, value)
                if value is not None
                else {}
            )

        title = f"{family} · average over perturbations"
        spec = _radar_for(title, metrics, systems, colours, average_of, directions)
        if spec:
            parts.append(
                _figure(
                    _chart_name(f"radar {family} average"),
                    spec,
                    charts,
                    f"{esc(title)}. Source: <code>marts.system_summary</code> (avg_raw_score).",
                )
            )
        parts.append("</div>")
    parts.append(
        '<p class="note">P0 is the control: APE and PIE measure the other perturbations '
        "against it, so P0 has only its WRS (see the rating tables) and no robustness radar.</p>"
    )
    parts.append(source_note("ratings", "system_summary"))
    parts.append("</section>")
    return "".join(parts)


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
        name = _chart_name(
            f"forecast {chosen.ticker} {pd.Timestamp(chosen.window_end_date):%Y-%m-%d} "
            f"{chosen.perturbation_id}"
        )
        parts.append(
            _figure(
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


def confounder_section(data: ReportData, charts: dict[str, dict]) -> str:
    """Figure 4: industry vs company as grouping / confounder, per measure."""
    frame = data.confounder_comparison
    parts = [
        '<section id="confounders"><h2>Industry vs company as confounder, in the shape of Figure 4</h2>'
    ]
    if frame.empty:
        parts.append("<p>No confounder comparison in this run.</p></section>")
        return "".join(parts)
    parts.append(
        "<p>Mean raw score with the industry and with the company as grouping (WRS) or "
        "confounder (APE, PIE), per system and over all systems; lower is better, so the "
        'taller bar shows more bias.</p><div class="grid">'
    )
    systems = system_order(data)
    colours = {"industry": colour_for(0), "company": colour_for(1)}
    labels = {"wrs": "WRS", "ape": "APE (price units)", "pie": "PIE %"}
    rows = []
    for measure in ("wrs", "ape", "pie"):
        subset = frame[frame["measure"] == measure]
        if subset.empty:
            continue
        categories = [*systems, "all"]
        series = []
        for confounder in ("industry", "company"):
            column = f"{confounder}_avg"
            points = []
            for category in categories:
                if category == "all":
                    position = first_row(subset, {"grouped_by": "all"})
                    where = {"grouped_by": "all", "system_id": None, "perturbation_id": None}
                else:
                    position = first_row(subset, {"grouped_by": "system", "system_id": category})
                    where = {"grouped_by": "system", "system_id": category, "perturbation_id": None}
                where = {"run_id": data.run_id, "measure": measure, **where}
                value = (
                    None
                    if position is None or pd.isna(subset[column].iat[position])
                    else float(subset[column].iat[position])
                )
                attrs = (
                    provenance("confounder_comparison", column, where, value)
                    if value is not None
                    else {}
                )
                points.append(
                    Point(value, f"{category} · {confounder}: {format_number(value)}", attrs)
                )
            series.append(Series(confounder, points, colours[confounder]))
        title = f"{labels[measure]}: industry vs company"
        parts.append(
            _figure(
                _chart_name(f"confounders {measure}"),
                bar_chart(title, categories, series, y_label=labels[measure]),
                charts,
                f"{esc(title)}. Source: <code>marts.confounder_comparison</code>.",
            )
        )
        overall = subset[subset["grouped_by"] == "all"]
        if not overall.empty:
            row = overall.iloc[0]
            where = {
                "run_id": data.run_id,
                "grouped_by": "all",
                "measure": measure,
                "system_id": None,
                "perturbation_id": None,
            }
            rows.append(
                [
                    esc(labels[measure]),
                    num(row["industry_avg"], "confounder_comparison", "industry_avg", where),
                    num(row["company_avg"], "confounder_comparison", "company_avg", where),
                    esc(row["more_biased_confounder"] or ""),
                ]
            )
    parts.append("</div>")
    parts.append(table_html(["Measure", "Industry", "Company", "More bias"], rows))
    parts.append(source_note("confounder_comparison"))
    parts.append("</section>")
    return "".join(parts)


def group_section(data: ReportData, charts: dict[str, dict]) -> str:
    """Figures 7-9: group comparisons (ARQ1-ARQ3) and the modality pairs (Figure 8)."""
    directions = _higher_is_better(data)
    parts = [
        '<section id="groups"><h2>Group comparisons (ARQ1–ARQ3), in the shape of Figures 7–9</h2>'
    ]
    if "group_comparisons" in data.missing_marts:
        parts.append("<p>This snapshot has no <code>marts.group_comparisons</code>.</p></section>")
        return "".join(parts)
    parts.append(
        "<p>Each metric averaged over the systems of a group (each system's mean over its "
        "perturbations, systems weighted equally); groups come from <code>marts.system_catalog</code>. "
        "A group without rated systems has no row. Radar axes rank the groups "
        "(best on the rim, worst near the centre).</p>"
    )
    frame = data.group_comparisons
    metrics = (*ROBUSTNESS_METRICS, *ACCURACY_METRICS)
    for scope, scope_label in SCOPES.items():
        scoped = frame[frame["system_scope"] == scope] if not frame.empty else frame
        parts.append(f"<h3>{esc(scope_label.capitalize())}</h3>")
        if scoped.empty:
            parts.append("<p>No rated system in this scope (the study rates only baselines).</p>")
            continue
        parts.append('<div class="grid">')
        tables = []
        for comparison, (title, seed_column) in COMPARISONS.items():
            rows = scoped[scoped["comparison"] == comparison]
            groups = list(dict.fromkeys(rows["group_name"]))
            if not groups:
                tables.append(
                    f"<p><b>{esc(title)}</b>: no rated system has a group here "
                    f"(<code>marts.system_catalog.{esc(seed_column)}</code>).</p>"
                )
                continue
            colours = {g: colour_for(i) for i, g in enumerate(groups)}

            def value_of(group: str, metric: str, rows=rows, comparison=comparison, scope=scope):
                value = float_value(rows, "avg_raw_score", group_name=group, metric=metric)
                where = {
                    "run_id": data.run_id,
                    "system_scope": scope,
                    "comparison": comparison,
                    "group_name": group,
                    "metric": metric,
                }
                return value, (
                    provenance("group_comparisons", "avg_raw_score", where, value)
                    if value is not None
                    else {}
                )

            if len(groups) >= 2:
                spec = _radar_for(title, metrics, groups, colours, value_of, directions)
                if spec:
                    parts.append(
                        _figure(
                            _chart_name(f"groups {scope} {comparison}"),
                            spec,
                            charts,
                            f"{esc(title)} — {esc(scope_label)}. Source: "
                            "<code>marts.group_comparisons</code>.",
                        )
                    )
            table_rows = []
            for metric in metrics:
                cells = [esc(METRIC_LABELS.get(metric, metric))]
                for group in groups:
                    value, attrs = value_of(group, metric)
                    where = json.loads(attrs["data-where"]) if attrs else {}
                    cells.append(num(value, "group_comparisons", "avg_raw_score", where))
                table_rows.append(cells)
            members = [
                "systems",
                *[
                    esc(" ".join(rows[rows["group_name"] == g]["system_ids"].iloc[0].split()))
                    for g in groups
                ],
            ]
            table_rows.append(members)
            note = (
                ""
                if len(groups) >= 2
                else " — only one group has rated systems: nothing to compare yet"
            )
            tables.append(
                f"<p><b>{esc(title)}</b>{note}</p>"
                + table_html(["Metric", *map(esc, groups)], table_rows)
            )
        parts.append("</div>")
        parts.extend(tables)
    parts.append(source_note("group_comparisons"))
    parts.append(modality_pairs_block(data, charts))
    parts.append("</section>")
    return "".join(parts)


def modality_pairs_block(data: ReportData, charts: dict[str, dict]) -> str:
    """Figure 8: numeric vs numeric+image variant of the same model."""
    directions = _higher_is_better(data)
    parts = ["<h3>ARQ2 per model · numeric vs numeric+image variant, in the shape of Figure 8</h3>"]
    pairs = data.modality_pairs
    if pairs.empty:
        known = []
        if not data.systems.empty and "base_model" in data.systems:
            seeded = data.systems[data.systems["base_model"].notna()]
            for base, group in seeded.groupby("base_model"):
                known.append(f"{esc(base)} ({', '.join(esc(s) for s in group['system_id'])})")
        parts.append(
            "<p>No pair is rated in this run: both variants of a model must be rated. "
            + (
                "The systems seed pairs "
                + "; ".join(known)
                + ": a pair is compared once both of its variants are rated in one run "
                "(see Systems rated and Systems not rated in this run)."
                if known
                else "The systems seed declares no pairs (column base_model)."
            )
            + "</p>"
        )
        parts.append(source_note("modality_pairs"))
        return "".join(parts)
    parts.append('<div class="grid">')
    metrics = (*ROBUSTNESS_METRICS, *ACCURACY_METRICS)
    rows = []
    for base in sorted(set(pairs["base_model"])):
        subset = pairs[pairs["base_model"] == base]
        names = {
            "numeric": str(subset["numeric_system_id"].iloc[0]),
            "numeric+image": str(subset["multimodal_system_id"].iloc[0]),
        }
        colours = {names["numeric"]: colour_for(0), names["numeric+image"]: colour_for(1)}
        columns = {
            names["numeric"]: "numeric_avg_raw_score",
            names["numeric+image"]: "multimodal_avg_raw_score",
        }

        def value_of(system: str, metric: str, subset=subset, columns=columns, base=base):
            value = float_value(subset, columns[system], metric=metric)
            where = {"run_id": data.run_id, "base_model": base, "metric": metric}
            return value, (
                provenance("modality_pairs", columns[system], where, value)
                if value is not None
                else {}
            )

        spec = _radar_for(
            f"{base}: numeric vs numeric+image",
            metrics,
            list(colours),
            colours,
            value_of,
            directions,
        )
        if spec:
            parts.append(
                _figure(
                    _chart_name(f"modality pair {base}"),
                    spec,
                    charts,
                    f"{esc(base)}. Source: <code>marts.modality_pairs</code>.",
                )
            )
        for row in subset.itertuples():
            where = {"run_id": data.run_id, "base_model": base, "metric": row.metric}
            rows.append(
                [
                    esc(base),
                    esc(METRIC_LABELS.get(row.metric, row.metric)),
                    num(
                        row.numeric_avg_raw_score, "modality_pairs", "numeric_avg_raw_score", where
                    ),
                    num(
                        row.multimodal_avg_raw_score,
                        "modality_pairs",
                        "multimodal_avg_raw_score",
                        where,
                    ),
                    esc(row.better_variant),
                    esc(row.perturbation_ids),
                ]
            )
    parts.append("</div>")
    parts.append(
        table_html(["Model", "Metric", "Numeric", "Numeric+image", "Better", "Perturbations"], rows)
    )
    parts.append(source_note("modality_pairs"))
    return "".join(parts)
