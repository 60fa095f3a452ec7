"""The chart builders write the Vega-Lite specs Altair writes for the same charts.

tsrate.html.charts builds its specs as plain dicts (Altair's object model was about half of
the core report's time). The reference here is the Altair code they replaced: for each chart
kind and a range of inputs (missing values, off-scale points, dashed lines, no marker, no
rows, provenance from traced fields and from data-* attributes, numpy numbers), both specs
are equal once Altair's hashed dataset and view names are resolved, and every plain spec is
valid Vega-Lite."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd
import pytest

from tsrate.html.charts import (
    PALETTE,
    RANK_FLOOR,
    Line,
    Point,
    Series,
    bar_chart,
    line_chart,
    rank_chart,
    rank_positions,
    score_chart,
    traced,
)

# ------------------------------------------------------------- the Altair reference


def altair_provenance(attrs: Mapping[str, object]) -> dict[str, object]:
    if not attrs:
        return {}
    if "data-mart" in attrs:
        return {
            "mart": attrs["data-mart"],
            "column": attrs["data-column"],
            "where": attrs["data-where"],
            "value": float(attrs["data-value"]),
            **({"agg": attrs["data-agg"]} if attrs.get("data-agg") else {}),
        }
    return dict(attrs)


def altair_legend_filter(names: Sequence[str], colours: Sequence[str]):
    """A colour encoding and a legend-bound selection that fades the other series."""

    pick = alt.selection_point(fields=["series"], bind="legend", name="pick")
    colour = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(names), range=list(colours)),
        legend=alt.Legend(orient="bottom", columns=3, labelLimit=0, symbolLimit=0),
    )
    opacity = alt.condition(pick, alt.value(1.0), alt.value(0.12))
    return pick, colour, opacity


def altair_tooltip(rows: Sequence[Mapping[str, object]]) -> list:

    fields = [alt.Tooltip("label:N", title="point")]
    present = {key for row in rows for key in row}
    for name in ("mart", "column", "where"):
        if name in present:
            fields.append(alt.Tooltip(f"{name}:N", title=name))
    if "value" in present:
        fields.append(alt.Tooltip("value:Q", title="value", format=".6g"))
    return fields


def altair_rank_chart(
    title: str,
    axes: Sequence[str],
    series: Sequence[Series],
    higher_is_better: Sequence[bool],
    width: int = 360,
) -> dict:
    """Systems (or groups) ranked on several metrics: one column per metric, the best at the
    top (1) and the worst at RANK_FLOOR (:func:`rank_positions`), one line per series; the
    raw value is in the tooltip. The paper's radar plots, drawn where positions read off."""

    rows: list[dict] = []
    for index, axis in enumerate(axes):
        values = [s.points[index].value for s in series]
        positions = rank_positions(values, higher_is_better[index])
        for one, position in zip(series, positions, strict=True):
            if position is None:
                continue
            point = one.points[index]
            rows.append(
                {
                    "axis": axis,
                    "series": one.name,
                    "position": position,
                    "label": point.label,
                    **altair_provenance(point.attrs),
                }
            )
    pick, colour, opacity = altair_legend_filter(
        [s.name for s in series], [s.colour for s in series]
    )
    base = alt.Chart(pd.DataFrame(rows), title=alt.Title(title, anchor="start")).encode(
        x=alt.X("axis:N", sort=list(axes), title=None, axis=alt.Axis(labelAngle=-30, labelLimit=0)),
        y=alt.Y(
            "position:Q",
            scale=alt.Scale(domain=[0, 1]),
            title="rank (top = best)",
            axis=alt.Axis(values=[RANK_FLOOR, 1], labelExpr="datum.value == 1 ? 'best' : 'worst'"),
        ),
        color=colour,
        opacity=opacity,
        detail="series:N",
    )
    chart = base.mark_line(strokeWidth=2) + base.mark_point(filled=True, size=60).encode(
        tooltip=altair_tooltip(rows)
    )
    return chart.add_params(pick).properties(width=width, height=220).to_dict(validate=False)


def altair_bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    y_label: str = "",
    width: int = 360,
) -> dict:
    """Grouped bars: one group per category, one bar per series; missing values skipped."""

    rows = [
        {
            "category": category,
            "series": one.name,
            "y": float(point.value),
            "label": point.label,
            **altair_provenance(point.attrs),
        }
        for one in series
        for category, point in zip(categories, one.points, strict=True)
        if point.value is not None and math.isfinite(float(point.value))
    ]
    pick, colour, opacity = altair_legend_filter(
        [s.name for s in series], [s.colour for s in series]
    )
    chart = (
        alt.Chart(
            pd.DataFrame(rows, columns=["category", "series", "y", "label"])
            if not rows
            else pd.DataFrame(rows),
            title=alt.Title(title, anchor="start"),
        )
        .mark_bar()
        .encode(
            x=alt.X(
                "category:N",
                sort=list(categories),
                title=None,
                axis=alt.Axis(labelAngle=-30, labelLimit=0),
            ),
            xOffset=alt.XOffset("series:N", sort=[s.name for s in series]),
            y=alt.Y("y:Q", title=y_label or None),
            color=colour,
            opacity=opacity,
            tooltip=altair_tooltip(rows),
        )
        .add_params(pick)
        .properties(width=width, height=220)
    )
    return chart.to_dict(validate=False)


def altair_line_chart(
    title: str,
    lines: Sequence[Line],
    x_label: str = "",
    y_label: str = "",
    y_range: tuple[float, float] | None = None,
    marker_x: float | None = 0,
    width: int = 420,
) -> dict:
    """Lines over integer x; a dashed rule at ``marker_x`` (the forecast origin).

    ``y_range`` fixes the y axis; a value beyond it is drawn on the edge as a triangle,
    its tooltip and legend entry say "off scale", so one outlier cannot flatten the rest."""

    rows, names, colours, dashed = [], [], [], []
    for line in lines:
        clipped = False
        for x, point in zip(line.x, line.points, strict=True):
            if point.value is None or not math.isfinite(float(point.value)):
                continue
            y, off = float(point.value), False
            if y_range is not None and not y_range[0] <= y <= y_range[1]:
                y, off, clipped = min(max(y, y_range[0]), y_range[1]), True, True
            rows.append(
                {
                    "x": int(x),
                    "y": y,
                    "off_scale": off,
                    "line": line.name,
                    "label": point.label + (" (off scale)" if off else ""),
                    **altair_provenance(point.attrs),
                }
            )
        name = f"{line.name} (off scale)" if clipped else line.name
        for row in rows:
            if row["line"] == line.name:
                row["series"] = name
        names.append(name)
        colours.append(line.colour)
        dashed.append(name if line.dashed else None)
    frame = pd.DataFrame(rows)
    pick, colour, opacity = altair_legend_filter(names, colours)
    y_scale = alt.Scale(domain=list(y_range), nice=False) if y_range else alt.Scale(zero=False)
    base = alt.Chart(frame).encode(
        x=alt.X("x:Q", title=x_label or None, axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("y:Q", title=y_label or None, scale=y_scale),
        color=colour,
        opacity=opacity,
    )
    dash_names = [n for n in dashed if n]
    lines_layer = base.mark_line(strokeWidth=1.8, clip=True).encode(
        strokeDash=alt.condition(
            alt.FieldOneOfPredicate(field="series", oneOf=dash_names or ["\u0000"]),
            alt.value([5, 3]),
            alt.value([1, 0]),
        ),
        detail="series:N",
    )
    points_layer = base.mark_point(filled=True, size=30).encode(
        shape=alt.condition("datum.off_scale", alt.value("triangle-up"), alt.value("circle")),
        tooltip=altair_tooltip(rows),
    )
    layers = [lines_layer, points_layer]
    if marker_x is not None:
        layers.append(
            alt.Chart(pd.DataFrame({"x": [marker_x]}))
            .mark_rule(strokeDash=[4, 3], color="#888")
            .encode(x="x:Q")
        )
    chart = alt.layer(*layers, title=alt.Title(title, anchor="start"))
    return chart.add_params(pick).properties(width=width, height=240).to_dict(validate=False)


def altair_score_chart(
    title: str,
    axes: Sequence[str],
    series: Sequence[Series],
    domain: tuple[float, float] = (0.0, 1.0),
    y_label: str = "score",
    width: int = 520,
) -> dict:
    """Scores on an ABSOLUTE scale (``domain``), one column per axis and one line per
    series: the unrolled form of a radar plot whose rim is the best possible score."""

    rows = [
        {"axis": axis, "series": one.name, "y": float(point.value), "label": point.label,
         **altair_provenance(point.attrs)}
        for one in series
        for axis, point in zip(axes, one.points, strict=True)
        if point.value is not None and math.isfinite(float(point.value))
    ]  # fmt: skip
    pick, colour, opacity = altair_legend_filter(
        [s.name for s in series], [s.colour for s in series]
    )
    base = alt.Chart(
        pd.DataFrame(rows, columns=["axis", "series", "y", "label"]) if not rows
        else pd.DataFrame(rows), title=alt.Title(title, anchor="start")
    ).encode(
        x=alt.X("axis:N", sort=list(axes), title=None, axis=alt.Axis(labelAngle=-30, labelLimit=0)),
        y=alt.Y("y:Q", scale=alt.Scale(domain=list(domain)), title=y_label),
        color=colour,
        opacity=opacity,
        detail="series:N",
    )  # fmt: skip
    chart = base.mark_line(strokeWidth=2) + base.mark_point(filled=True, size=60).encode(
        tooltip=altair_tooltip(rows)
    )
    return chart.add_params(pick).properties(width=width, height=240).to_dict(validate=False)


# ------------------------------------------------------------- the comparison


def resolved(spec: dict) -> dict:
    """``spec`` with Altair's named datasets inlined and its hashed view names made one
    name; rows as plain JSON values (what the page embeds)."""
    spec = copy.deepcopy(spec)
    datasets = spec.pop("datasets", {})

    def walk(node):
        if isinstance(node, dict):
            data = node.get("data")
            if isinstance(data, dict) and "name" in data:
                node["data"] = {"values": datasets[data["name"]]}
            if str(node.get("name", "")).startswith("view_"):
                node["name"] = "view"
            if "views" in node:
                node["views"] = ["view" for _ in node["views"]]
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(spec)
    return json.loads(json.dumps(spec, sort_keys=True, allow_nan=False))


def same(plain: dict, reference: dict) -> None:
    assert resolved(plain) == resolved(reference)
    alt.vegalite.v6.schema.core.Root.validate(plain)


TRACED = traced("ratings", "rating", {"system_id": "naive", "metric": "smape"}, 0.25)
ATTRS = {
    "data-mart": "marts.accuracy_scores",
    "data-column": "value",
    "data-where": '{"metric": "mase"}',
    "data-value": "1.5",
    "data-agg": "mean",
}


def series_cases() -> list[list[Series]]:
    return [
        [
            Series("naive", [Point(1.0, "a", TRACED), Point(2.0, "b")], PALETTE[0]),
            Series("arima", [Point(3.0, "c"), Point(None, "d")], PALETTE[1]),
            Series("random", [Point(np.float64(2.0), "e", ATTRS), Point(float("nan"))], PALETTE[2]),
        ],
        [Series("only", [Point(None), Point(None)], PALETTE[3])],  # nothing to draw
        [Series("tied", [Point(5.0), Point(5.0)]), Series("tied too", [Point(5.0), Point(1.0)])],
    ]


@pytest.mark.parametrize("case", range(3))
@pytest.mark.parametrize("higher", [(False, True), (True, True)])
def test_rank_chart_is_altairs(case, higher):
    series = series_cases()[case]
    same(
        rank_chart("Ranks", ["SMAPE", "sign"], series, list(higher)),
        altair_rank_chart("Ranks", ["SMAPE", "sign"], series, list(higher)),
    )


@pytest.mark.parametrize("case", range(3))
def test_bar_and_score_charts_are_altairs(case):
    series = series_cases()[case]
    same(
        bar_chart("Bars", ["P1", "P2"], series, y_label="APE", width=300),
        altair_bar_chart("Bars", ["P1", "P2"], series, y_label="APE", width=300),
    )
    same(bar_chart("Bars", ["P1", "P2"], series), altair_bar_chart("Bars", ["P1", "P2"], series))
    same(
        score_chart("Scores", ["trend", "noise"], series, (0.0, 5.0), "F1"),
        altair_score_chart("Scores", ["trend", "noise"], series, (0.0, 5.0), "F1"),
    )


LINES = [
    Line("actual", [-2, -1, 0, 1], [Point(10.0, "t-2"), Point(11.0), Point(12.0, "", TRACED),
                                    Point(13.0)], PALETTE[0]),
    Line("naive", [1, 2], [Point(np.float32(12.5), "h1", ATTRS), Point(250.0, "h2")], PALETTE[1],
         dashed=True),
    Line("gap", [1, 2, 3], [Point(11.0), Point(None), Point(float("inf"))], PALETTE[2]),
]  # fmt: skip


@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(x_label="step", y_label="price", y_range=(9.0, 20.0)),  # naive's h2 off scale
        dict(marker_x=None, width=500),
        dict(marker_x=-1, y_range=(0.0, 1000.0)),
    ],
)
@pytest.mark.parametrize("lines", [LINES, LINES[:1], LINES[2:], []])
def test_line_chart_is_altairs(options, lines):
    same(
        line_chart("Forecasts", lines, **options), altair_line_chart("Forecasts", lines, **options)
    )


def test_off_scale_points_sit_on_the_edge_and_say_so():
    spec = line_chart("F", LINES, y_range=(9.0, 20.0))
    rows = [row for row in spec["datasets"]["rows"] if row["line"] == "naive"]
    assert [(row["y"], row["off_scale"], row["series"]) for row in rows] == [
        (12.5, False, "naive (off scale)"),
        (20.0, True, "naive (off scale)"),
    ]
    assert rows[1]["label"] == "h2 (off scale)"
