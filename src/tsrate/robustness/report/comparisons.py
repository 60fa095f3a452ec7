"""The report's comparisons of groups: industry vs company as confounder (Figure 4, bars),
the groups of ARQ1-ARQ3 (Figures 7 and 9) and each model's numeric vs numeric+image
variant (Figure 8), as radars (:func:`.figures.radar_for`) beside their tables."""

from __future__ import annotations

import json

import pandas as pd

from tsrate.html.charts import Point, Series, bar_chart, chart_name, colour_for, esc
from tsrate.robustness.report.data import (
    ACCURACY_METRICS,
    COMPARISONS,
    METRIC_LABELS,
    ROBUSTNESS_METRICS,
    SCOPES,
    ReportData,
)
from tsrate.robustness.report.figures import chart_figure, metric_directions, radar_for
from tsrate.robustness.report.numbers import (
    first_row,
    float_value,
    format_number,
    num,
    provenance,
    source_note,
    system_order,
    table_html,
)


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
            chart_figure(
                chart_name(f"confounders {measure}"),
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
    directions = metric_directions(data)
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
                spec = radar_for(title, metrics, groups, colours, value_of, directions)
                if spec:
                    parts.append(
                        chart_figure(
                            chart_name(f"groups {scope} {comparison}"),
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
    directions = metric_directions(data)
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

        spec = radar_for(
            f"{base}: numeric vs numeric+image",
            metrics,
            list(colours),
            colours,
            value_of,
            directions,
        )
        if spec:
            parts.append(
                chart_figure(
                    chart_name(f"modality pair {base}"),
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
