"""Charts as Vega-Lite specs, rendered in the page by Vega-Embed with no network.

A chart is a Vega-Lite spec (built with Altair, or a plain dict) embedded in the page as
``<script type="application/json" class="vega-spec">``; the page shell
(:mod:`tsrate.html.page`) inlines the Vega, Vega-Lite and Vega-Embed libraries once (from
``vl-convert-python``'s bundler) and one small script renders every spec as SVG. So a
report opens offline, from a file, in any browser and in headless Chromium.

Conventions every chart follows:

- Data rides inside the spec (``data.values``), one row per plotted mark. A row that shows a
  mart number carries its provenance as plain fields: ``mart`` (``marts.<name>``),
  ``column``, ``where`` (JSON equality filters, a list meaning IN) and ``value`` (the full
  number); the report's integration test re-reads each from the snapshot, and the
  tooltip shows them (:func:`tooltip_fields`).
- Colours come from :data:`PALETTE` (colour-blind friendly), systems in the report's order.
- :func:`figure` wraps a spec with its caption; :func:`chart_rows` reads a page's charts
  back (tests, tools).
- A chart is never drawn from cells below a stated minimum number of items: callers filter
  with :func:`enough` and say so in the caption.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence

#: Colour-blind-friendly categorical palette (Okabe-Ito, then Tableau), cycled.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#8C564B",
    "#F0E442",
    "#7F7F7F",
    "#BCBD22",
    "#17BECF",
    "#9467BD",
    "#1F3A93",
)
#: provenance fields a chart row may carry (see the module docstring)
PROVENANCE_FIELDS = ("mart", "column", "where", "value")


def colour_for(index: int) -> str:
    """The palette colour of the ``index``-th series (cycled)."""
    return PALETTE[index % len(PALETTE)]


def esc(text: object) -> str:
    """Escape text for HTML content and attribute values."""
    return html.escape(str(text), quote=True)


def chart_name(text: str) -> str:
    """A stable id for a chart from its title: lower-case words joined by ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def traced(
    mart: str, column: str, where: Mapping[str, object], value: float | None
) -> dict[str, object]:
    """The provenance fields of one plotted number (empty when the number is missing)."""
    if value is None:
        return {}
    return {
        "mart": f"marts.{mart}",
        "column": column,
        "where": json.dumps(dict(where), sort_keys=True, default=str),
        "value": float(value),
    }


def colour_scale(names: Sequence[str], colours: Mapping[str, str] | None = None) -> dict:
    """A Vega-Lite ``scale`` mapping ``names`` to their colours (palette order by default)."""
    colours = colours or {n: colour_for(i) for i, n in enumerate(names)}
    return {"domain": list(names), "range": [colours[n] for n in names]}


def tooltip_fields(rows: Sequence[Mapping[str, object]], first: Sequence[str]) -> list[dict]:
    """Tooltip entries: ``first`` (the chart's own fields), then the mart row it reads."""
    present = {key for row in rows for key in row}
    fields = [f for f in first if f in present]
    fields += [f for f in PROVENANCE_FIELDS if f in present and f not in fields]
    return [{"field": f, "type": "nominal" if f != "value" else "quantitative"} for f in fields]


def enough(n: object, minimum: int) -> bool:
    """Whether a cell of ``n`` items may be drawn (``n`` missing counts as too few)."""
    try:
        return int(n) >= minimum
    except (TypeError, ValueError):
        return False


def to_spec(chart: object) -> dict:
    """A Vega-Lite spec dict from an Altair chart or a dict.

    Specs are not validated while a report is written: Altair's JSON-schema validation was
    about 40 % of the core report's time (the report ends every run). The tests validate
    every spec of every report page against the Vega-Lite schema (:func:`check_specs`)."""
    if isinstance(chart, Mapping):
        return dict(chart)
    return chart.to_dict(validate=False)  # type: ignore[attr-defined]


def spec_json(spec: Mapping) -> str:
    """The spec as JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(spec, sort_keys=True, default=str, allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def figure(name: str, chart: object, caption: str, css: str = "") -> str:
    """A ``<figure>``: the chart's mount point, its spec and its caption (HTML).

    ``name`` must be unique in the page (:func:`chart_name`); it is the figure's
    ``data-chart`` and the mount's id suffix."""
    spec = to_spec(chart)
    return (
        f'<figure class="chart-figure {esc(css)}" data-chart="{esc(name)}">'
        f'<div class="vega-chart" id="chart-{esc(name)}"></div>'
        f'<script type="application/json" class="vega-spec" data-chart="{esc(name)}">'
        f"{spec_json(spec)}</script><figcaption>{caption}</figcaption></figure>"
    )


_SPEC = re.compile(
    r'<script type="application/json" class="vega-spec" data-chart="([^"]+)">(.*?)</script>',
    flags=re.S,
)


def page_specs(page: str) -> dict[str, dict]:
    """Every chart spec of a page: name -> spec."""
    return {
        html.unescape(name): json.loads(text.replace("<\\/", "</").replace("<\\!--", "<!--"))
        for name, text in _SPEC.findall(page)
    }


def check_specs(page: str) -> int:
    """Validate every chart spec of ``page`` against the Vega-Lite schema Altair ships;
    raise on the first invalid one (naming its chart); return how many were checked."""
    from altair.vegalite.v6.schema import core

    specs = page_specs(page)
    for name, spec in specs.items():
        try:
            core.Root.validate(spec)
        except Exception as error:
            raise ValueError(f"chart {name!r} is not a valid Vega-Lite spec: {error}") from error
    return len(specs)


def spec_rows(spec: Mapping) -> Iterable[dict]:
    """Every data row of a spec: inline ``data.values`` and top-level ``datasets``."""
    stack = [spec]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            values = node.get("values") if isinstance(node.get("values"), list) else None
            if values is not None and "data" not in node:
                yield from (row for row in values if isinstance(row, dict))
            for key, child in node.items():
                if key == "datasets" and isinstance(child, Mapping):
                    for rows in child.values():
                        yield from (row for row in rows if isinstance(row, dict))
                elif isinstance(child, Mapping | list):
                    stack.append(child)
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, Mapping | list))


def chart_rows(page: str) -> list[dict]:
    """Every traced row (with ``mart``) of every chart in ``page``, with its chart name."""
    return [
        {**row, "chart": name}
        for name, spec in page_specs(page).items()
        for row in spec_rows(spec)
        if "mart" in row
    ]


# ----------------------------------------------------------------------------- builders
# The report's three chart kinds, as Vega-Lite specs built with Altair. Each takes plain
# points (value, tooltip label, provenance) so a section states what it plots, not how.

#: position (0-1, 1 = best) given to the worst value on a rank axis
RANK_FLOOR = 0.15


@dataclasses.dataclass(frozen=True)
class Point:
    """One plotted number: ``value`` (None = missing), its tooltip label and provenance
    (:func:`traced` fields, or the ``data-*`` attributes of a traced ``<span>``)."""

    value: float | None
    label: str = ""
    attrs: Mapping[str, object] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Series:
    """A named colour: one point per axis (rank chart) or category (bar chart)."""

    name: str
    points: Sequence[Point]
    colour: str = PALETTE[0]


@dataclasses.dataclass(frozen=True)
class Line:
    """A line over integer x positions, one point per x (None breaks the line)."""

    name: str
    x: Sequence[int]
    points: Sequence[Point]
    colour: str = PALETTE[0]
    dashed: bool = False


def _provenance(attrs: Mapping[str, object]) -> dict[str, object]:
    """Chart-row provenance from :func:`traced` fields or ``data-*`` attributes."""
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


def rank_positions(
    values: Sequence[float | None], higher_is_better: bool = False
) -> list[float | None]:
    """Place one axis by rank in [RANK_FLOOR, 1]: best -> 1, worst -> RANK_FLOOR.

    The k distinct values are spaced evenly (dense ranks), whatever their distances, so an
    outlier moves only itself; equal values share a position. Lower is better unless
    ``higher_is_better``. One distinct value: all at 1. Missing values stay None.
    """
    present = sorted({v for v in values if v is not None and math.isfinite(v)})
    if higher_is_better:
        present.reverse()
    if not present:
        return [None for _ in values]
    rank = {v: i for i, v in enumerate(present)}
    steps = max(len(present) - 1, 1)
    return [
        None if v is None or not math.isfinite(v) else 1.0 - (1.0 - RANK_FLOOR) * rank[v] / steps
        for v in values
    ]


def _legend_filter(names: Sequence[str], colours: Sequence[str]):
    """A colour encoding and a legend-bound selection that fades the other series."""
    import altair as alt

    pick = alt.selection_point(fields=["series"], bind="legend", name="pick")
    colour = alt.Color(
        "series:N",
        title=None,
        scale=alt.Scale(domain=list(names), range=list(colours)),
        legend=alt.Legend(orient="bottom", columns=3, labelLimit=0, symbolLimit=0),
    )
    opacity = alt.condition(pick, alt.value(1.0), alt.value(0.12))
    return pick, colour, opacity


def _tooltip(rows: Sequence[Mapping[str, object]]) -> list:
    import altair as alt

    fields = [alt.Tooltip("label:N", title="point")]
    present = {key for row in rows for key in row}
    for name in ("mart", "column", "where"):
        if name in present:
            fields.append(alt.Tooltip(f"{name}:N", title=name))
    if "value" in present:
        fields.append(alt.Tooltip("value:Q", title="value", format=".6g"))
    return fields


def rank_chart(
    title: str,
    axes: Sequence[str],
    series: Sequence[Series],
    higher_is_better: Sequence[bool],
    width: int = 360,
) -> dict:
    """Systems (or groups) ranked on several metrics: one column per metric, the best at the
    top (1) and the worst at RANK_FLOOR (:func:`rank_positions`), one line per series; the
    raw value is in the tooltip. The paper's radar plots, drawn where positions read off."""
    import altair as alt
    import pandas as pd

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
                    **_provenance(point.attrs),
                }
            )
    pick, colour, opacity = _legend_filter([s.name for s in series], [s.colour for s in series])
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
        tooltip=_tooltip(rows)
    )
    return chart.add_params(pick).properties(width=width, height=220).to_dict(validate=False)


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    y_label: str = "",
    width: int = 360,
) -> dict:
    """Grouped bars: one group per category, one bar per series; missing values skipped."""
    import altair as alt
    import pandas as pd

    rows = [
        {
            "category": category,
            "series": one.name,
            "y": float(point.value),
            "label": point.label,
            **_provenance(point.attrs),
        }
        for one in series
        for category, point in zip(categories, one.points, strict=True)
        if point.value is not None and math.isfinite(float(point.value))
    ]
    pick, colour, opacity = _legend_filter([s.name for s in series], [s.colour for s in series])
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
            tooltip=_tooltip(rows),
        )
        .add_params(pick)
        .properties(width=width, height=220)
    )
    return chart.to_dict(validate=False)


def line_chart(
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
    import altair as alt
    import pandas as pd

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
                    **_provenance(point.attrs),
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
    pick, colour, opacity = _legend_filter(names, colours)
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
        tooltip=_tooltip(rows),
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


def heatmap(
    frame,
    x: str,
    y: str,
    value: str,
    title: str,
    x_title: str = "",
    y_title: str = "",
    domain: tuple[float, float] | None = None,
    width: int = 240,
    height: int = 240,
) -> dict:
    """A matrix as coloured cells (``frame`` long: one row per cell; tooltips show the row)."""
    import altair as alt

    scale = alt.Scale(scheme="blues", domain=list(domain)) if domain else alt.Scale(scheme="blues")
    tips = [
        alt.Tooltip(f"{c}:{'Q' if frame[c].dtype.kind in 'fiu' else 'N'}") for c in frame.columns
    ]
    chart = (
        alt.Chart(frame, title=alt.Title(title, anchor="start"))
        .mark_rect()
        .encode(
            x=alt.X(f"{x}:O", title=x_title or None),
            y=alt.Y(f"{y}:O", title=y_title or None),
            color=alt.Color(f"{value}:Q", scale=scale, title=None),
            tooltip=tips,
        )
        .properties(width=width, height=height)
    )
    return chart.to_dict(validate=False)


def score_chart(
    title: str,
    axes: Sequence[str],
    series: Sequence[Series],
    domain: tuple[float, float] = (0.0, 1.0),
    y_label: str = "score",
    width: int = 520,
) -> dict:
    """Scores on an ABSOLUTE scale (``domain``), one column per axis and one line per
    series: the unrolled form of a radar plot whose rim is the best possible score."""
    import altair as alt
    import pandas as pd

    rows = [
        {"axis": axis, "series": one.name, "y": float(point.value), "label": point.label,
         **_provenance(point.attrs)}
        for one in series
        for axis, point in zip(axes, one.points, strict=True)
        if point.value is not None and math.isfinite(float(point.value))
    ]  # fmt: skip
    pick, colour, opacity = _legend_filter([s.name for s in series], [s.colour for s in series])
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
        tooltip=_tooltip(rows)
    )
    return chart.add_params(pick).properties(width=width, height=240).to_dict(validate=False)
