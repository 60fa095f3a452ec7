"""The understanding report: polar charts of the paper's Figure 2 and the format table of its
Table 4, in one offline HTML file.

:func:`polar_chart` is pure (numbers in, SVG out) and, unlike :func:`tsrate.svg.radar_chart`
(which rescales each axis so the best system sits on the rim), draws scores on an ABSOLUTE
0-1 radius, as Figure 2 does: F1 or accuracy 1 on the rim, 0 at the centre.
:func:`write_report` reads the suite's marts (``und_*``) read-only and writes the HTML.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from tsrate.suites.publishing import html_page, write_html
from tsrate.svg import colour_for, esc
from tsrate.warehouse import connect


def polar_chart(
    title: str, axes: Sequence[str], series: Mapping[str, Sequence[float | None]], size: int = 320
) -> str:
    """Scores in [0, 1] per axis for each named series, on an absolute radius (rings at
    0.25, 0.5, 0.75, 1). Missing values (None/NaN) are skipped. Needs 3+ axes."""
    if len(axes) < 3:
        raise ValueError(f"a polar chart needs at least 3 axes, got {list(axes)}")
    for name, values in series.items():
        if len(values) != len(axes):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(axes)} axes")
    margin, legend = 90, 160
    width, height = size + 2 * margin + legend, size + 2 * margin - 40
    cx, cy, radius = margin + size / 2, margin - 20 + size / 2, size / 2
    angles = [-math.pi / 2 + 2 * math.pi * i / len(axes) for i in range(len(axes))]

    def xy(angle: float, r: float) -> tuple[float, float]:
        return cx + radius * r * math.cos(angle), cy + radius * r * math.sin(angle)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" role="img" '
        f'aria-label="{esc(title)}"><title>{esc(title)}</title>',
        f'<text x="{width / 2:.1f}" y="18" font-size="13" font-weight="bold" text-anchor="middle">{esc(title)}</text>',
        '<g stroke="#cccccc" fill="none">',
    ]
    for ring in (0.25, 0.5, 0.75, 1.0):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(a, ring) for a in angles))
        parts.append(f'<polygon points="{pts}"/>')
    for angle in angles:
        x, y = xy(angle, 1.0)
        parts.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y:.1f}"/>')
    parts.append("</g>")
    for ring in (0.5, 1.0):
        parts.append(
            f'<text x="{cx + 3:.1f}" y="{cy - radius * ring + 10:.1f}" font-size="9" fill="#888">{ring:g}</text>'
        )
    for angle, name in zip(angles, axes, strict=True):
        x, y = xy(angle, 1.12)
        anchor = "middle" if abs(math.cos(angle)) < 0.3 else ("start" if x > cx else "end")
        parts.append(
            f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="11" text-anchor="{anchor}">{esc(name)}</text>'
        )
    for index, (name, values) in enumerate(series.items()):
        colour = colour_for(index)
        coords = []
        parts.append(f'<g class="series" data-series="{esc(name)}">')
        for angle, axis, value in zip(angles, axes, values, strict=True):
            if value is None or not math.isfinite(float(value)):
                continue
            r = min(1.0, max(0.0, float(value)))
            x, y = xy(angle, r)
            coords.append((x, y))
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}" data-value="{float(value):.4f}">'
                f"<title>{esc(name)} · {esc(axis)}: {float(value):.3f}</title></circle>"
            )
        if len(coords) >= 3:
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            parts.insert(
                len(parts) - len(coords),
                f'<polygon points="{pts}" fill="{colour}" fill-opacity="0.12" stroke="{colour}" stroke-width="2"/>',
            )
        parts.append("</g>")
        ly = 50 + 18 * index
        lx = size + 2 * margin + 5
        parts.append(
            f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{colour}"/>'
            f'<text x="{lx + 17}" y="{ly}" font-size="11">{esc(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _figure2(scores: pd.DataFrame) -> list[str]:
    """(a) detection F1 per feature, (b) retrieval / min / max accuracy per feature; the csv
    format where present (the paper's main results), else the mean over formats."""
    if scores.empty:
        return ["<p>No scores yet: run <code>tsrate suite understanding run</code>.</p>"]
    chosen = scores[scores["format"] == "csv"] if (scores["format"] == "csv").any() else scores
    out = []
    detection = chosen[chosen["task"] == "detection"]
    if detection["feature"].nunique() >= 3:
        table = detection.pivot_table(
            index="system_id", columns="feature", values="f1", aggfunc="mean"
        )
        out.append(
            polar_chart(
                "Feature detection (F1)",
                list(table.columns),
                {s: list(table.loc[s]) for s in table.index},
            )
        )
    numeric = chosen[chosen["task"].isin(["retrieval", "arithmetic_min", "arithmetic_max"])]
    numeric = numeric[
        ~numeric["feature"].isin(["brownian", "outlier", "monotone", "monotone_noise"])
    ]
    if not numeric.empty:
        label = numeric["task"].map(
            {"retrieval": "value", "arithmetic_min": "min", "arithmetic_max": "max"}
        )
        numeric = numeric.assign(axis=numeric["feature"] + " " + label)
        table = numeric.pivot_table(
            index="system_id", columns="axis", values="accuracy", aggfunc="mean"
        )
        if table.shape[1] >= 3:
            out.append(
                polar_chart(
                    "Information retrieval and arithmetic reasoning (accuracy)",
                    list(table.columns),
                    {s: list(table.loc[s]) for s in table.index},
                )
            )
    return out


TASK_ORDER = (
    "detection",
    "classification",
    "retrieval",
    "arithmetic_min",
    "arithmetic_max",
    "matching_intra",
    "matching_cross",
)


def format_table_html(table: pd.DataFrame) -> str:
    """Table 4: one block per system, rows = formats, columns = tasks (F1 or accuracy);
    the best format of each column in bold."""
    if table.empty:
        return "<p>No format scores yet.</p>"
    parts = []
    for system_id, block in table.groupby("system_id", sort=True):
        wide = block.pivot_table(index="format", columns="task", values="score", aggfunc="mean")
        tasks = [t for t in TASK_ORDER if t in wide.columns]
        head = "".join(f"<th>{html.escape(t)}</th>" for t in tasks)
        rows = []
        for fmt in wide.index:
            cells = []
            for t in tasks:
                value = wide.loc[fmt, t]
                best = wide[t].max()
                text = "" if pd.isna(value) else f"{value:.2f}"
                if not pd.isna(value) and value == best:
                    text = f"<b>{text}</b>"
                cells.append(f"<td>{text}</td>")
            rows.append(f"<tr><th>{html.escape(fmt)}</th>{''.join(cells)}</tr>")
        parts.append(
            f"<h3>{html.escape(system_id)}</h3><table><tr><th>format</th>{head}</tr>{''.join(rows)}</table>"
        )
    return "".join(parts)


def write_report(warehouse: Path, output: Path) -> Path:
    """Write the HTML report from the suite's marts; returns ``output``."""
    with connect(warehouse, read_only=True) as con:

        def read(sql: str) -> pd.DataFrame:
            try:
                return con.execute(sql).df()
            except Exception:  # noqa: BLE001 - the marts do not exist before a build
                return pd.DataFrame()

        scores = read("select * from marts.und_scores")
        table = read("select * from marts.und_format_table")
        bias = read(
            "select system_id, dataset, task, format, max(quadrant_gap_pct) as gap, "
            "bool_or(position_bias) as position_bias from marts.und_position_bias "
            "group by all order by system_id, dataset, task, format"
        )
        ratings = read(
            "select metric, system_id, avg(rating) as mean_rating, count(*) as n_features "
            "from marts.und_ratings group by all order by metric, system_id"
        )
    suite_runs = sorted(scores["suite_run_id"].unique()) if not scores.empty else []
    sections = [
        "<h1>Time-series understanding</h1>",
        f"<p>Suite run: {html.escape(', '.join(suite_runs) or 'none')}. Charts: the csv "
        "format; scores on an absolute 0-1 radius (paper Figure 2).</p>",
        *_figure2(scores),
        "<h2>Formats (paper Table 4)</h2>",
        "<p>F1 for detection and classification, accuracy otherwise; mean over features.</p>",
        format_table_html(table),
        "<h2>Position bias (gap between quadrants, points; flagged over 10)</h2>",
        bias.to_html(index=False, float_format=lambda v: f"{v:.1f}")
        if not bias.empty
        else "<p>none</p>",
        "<h2>Ratings (mean rating over features)</h2>",
        ratings.to_html(index=False, float_format=lambda v: f"{v:.2f}")
        if not ratings.empty
        else "<p>none</p>",
    ]
    style = (
        "body{font-family:Helvetica,Arial,sans-serif;margin:2em;max-width:1200px}"
        "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}"
    )
    return write_html(output, html_page("tsrate understanding", "".join(sections), style))
