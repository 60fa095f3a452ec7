"""Charts as Vega-Lite specs, rendered in the page by Vega-Embed with no network.

A chart is a Vega-Lite spec (a plain dict: the builders below write the specs Altair writes
for the same charts, without Altair's cost; an Altair chart is accepted too) embedded in the page as
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
# The report's chart kinds as plain Vega-Lite specs (dicts). Each takes plain points (value,
# tooltip label, provenance) so a section states what it plots, not how. They are the specs
# Altair writes for the same charts (tests/unit/test_chart_specs.py compares them), built
# without Altair: its object model and encoding inference were about half of the core
# report's time (the report ends every run).

#: The Vega-Lite schema the specs follow (the one the installed Altair writes; the unit
#: test of the builders fails when an upgrade of Altair changes it).
VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
#: Altair's default view config, kept so a spec is the one Altair would write.
_VIEW_CONFIG = {"view": {"continuousWidth": 300, "continuousHeight": 300}}
#: the legend-bound selection's name; a layered chart binds it to its first layer
_PICK = "pick"
_VIEW = "view_0"
#: the dataset the layers of a line chart with a marker rule share
_ROWS = "rows"

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


def _plain(value: object) -> object:
    """A JSON-ready cell: numpy scalars as Python values, NaN and infinities as null."""
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, str | bytes):
        value = item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _table(rows: Sequence[Mapping[str, object]], columns: Sequence[str] = ()) -> list[dict]:
    """Rows as one table: every row has every key (first-seen order after ``columns``),
    null where a row lacks one, as a data frame's records would."""
    keys = list(dict.fromkeys([*columns, *(key for row in rows for key in row)]))
    return [{key: _plain(row.get(key)) for key in keys} for row in rows]


def _legend_filter(names: Sequence[str], colours: Sequence[str]) -> tuple[dict, dict, dict]:
    """A legend-bound selection that fades the other series, the colour encoding and the
    opacity encoding that reads it."""
    pick = {"name": _PICK, "select": {"type": "point", "fields": ["series"]}, "bind": "legend"}
    colour = {
        "field": "series",
        "type": "nominal",
        "title": None,
        "scale": {"domain": list(names), "range": list(colours)},
        "legend": {"orient": "bottom", "columns": 3, "labelLimit": 0, "symbolLimit": 0},
    }
    opacity = {"condition": {"param": _PICK, "value": 1.0}, "value": 0.12}
    return pick, colour, opacity


def _series_legend(series: Sequence[Series]) -> tuple[dict, dict, dict]:
    """:func:`_legend_filter` over the series' names and colours."""
    return _legend_filter([s.name for s in series], [s.colour for s in series])


def _value_rows(key: str, labels: Sequence[str], series: Sequence[Series]) -> list[dict]:
    """One row per present value: ``key`` (its label), ``series``, ``y``, the point's tooltip
    label and provenance; missing and non-finite values skipped (bar and score charts)."""
    return _table(
        [
            {key: label, "series": one.name, "y": float(point.value), "label": point.label,
             **_provenance(point.attrs)}
            for one in series
            for label, point in zip(labels, one.points, strict=True)
            if point.value is not None and math.isfinite(float(point.value))
        ]
    )  # fmt: skip


def _tooltip(rows: Sequence[Mapping[str, object]]) -> list[dict]:
    fields = [{"field": "label", "type": "nominal", "title": "point"}]
    present = {key for row in rows for key in row}
    for name in ("mart", "column", "where"):
        if name in present:
            fields.append({"field": name, "type": "nominal", "title": name})
    if "value" in present:
        fields.append({"field": "value", "type": "quantitative", "title": "value", "format": ".6g"})
    return fields


def _title(text: str) -> dict:
    return {"text": text, "anchor": "start"}


def _top(spec: dict) -> dict:
    """A top-level spec: the schema and Altair's default view config added."""
    return {"$schema": VEGA_LITE_SCHEMA, "config": _VIEW_CONFIG, **spec}


def _nominal_axis(field: str, order: Sequence[str]) -> dict:
    return {
        "field": field,
        "type": "nominal",
        "sort": list(order),
        "title": None,
        "axis": {"labelAngle": -30, "labelLimit": 0},
    }


def _lines_with_points(
    title: str,
    rows: list[dict],
    encoding: dict,
    pick: dict,
    width: int,
    height: int,
) -> dict:
    """A line per series with a point (and its tooltip) at each row: two layers sharing the
    data, the title and ``encoding``; the legend selection bound to the first layer."""
    line = {
        "mark": {"type": "line", "strokeWidth": 2},
        "encoding": encoding,
        "name": _VIEW,
        "title": _title(title),
    }
    points = {
        "mark": {"type": "point", "filled": True, "size": 60},
        "encoding": {**encoding, "tooltip": _tooltip(rows)},
        "title": _title(title),
    }
    return _top(
        {
            "data": {"values": rows},
            "layer": [line, points],
            "params": [{**pick, "views": [_VIEW]}],
            "width": width,
            "height": height,
        }
    )


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
    rows = _table(rows)
    pick, colour, opacity = _series_legend(series)
    encoding = {
        "x": _nominal_axis("axis", axes),
        "y": {
            "field": "position",
            "type": "quantitative",
            "scale": {"domain": [0, 1]},
            "title": "rank (top = best)",
            "axis": {
                "values": [RANK_FLOOR, 1],
                "labelExpr": "datum.value == 1 ? 'best' : 'worst'",
            },
        },
        "color": colour,
        "opacity": opacity,
        "detail": {"field": "series", "type": "nominal"},
    }
    return _lines_with_points(title, rows, encoding, pick, width, 220)


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    y_label: str = "",
    width: int = 360,
) -> dict:
    """Grouped bars: one group per category, one bar per series; missing values skipped."""
    rows = _value_rows("category", categories, series)
    pick, colour, opacity = _series_legend(series)
    return _top(
        {
            "data": {"values": rows},
            "mark": {"type": "bar"},
            "encoding": {
                "x": _nominal_axis("category", categories),
                "xOffset": {"field": "series", "type": "nominal", "sort": [s.name for s in series]},
                "y": {"field": "y", "type": "quantitative", "title": y_label or None},
                "color": colour,
                "opacity": opacity,
                "tooltip": _tooltip(rows),
            },
            "params": [pick],
            "title": _title(title),
            "width": width,
            "height": 220,
        }
    )


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
    rows, names, colours, dashed = [], [], [], []
    for line in lines:
        clipped = False
        own = []
        for x, point in zip(line.x, line.points, strict=True):
            if point.value is None or not math.isfinite(float(point.value)):
                continue
            y, off = float(point.value), False
            if y_range is not None and not y_range[0] <= y <= y_range[1]:
                y, off, clipped = min(max(y, y_range[0]), y_range[1]), True, True
            own.append(
                {
                    "x": int(x),
                    "y": y,
                    "off_scale": off,
                    "line": line.name,
                    "label": point.label + (" (off scale)" if off else ""),
                    **_provenance(point.attrs),
                }
            )
        rows += own
        name = f"{line.name} (off scale)" if clipped else line.name
        for row in rows:
            if row["line"] == line.name:
                row["series"] = name
        names.append(name)
        colours.append(line.colour)
        dashed.append(name if line.dashed else None)
    rows = _table(rows)
    pick, colour, opacity = _legend_filter(names, colours)
    y_scale = {"domain": list(y_range), "nice": False} if y_range else {"zero": False}
    encoding = {
        "x": {
            "field": "x",
            "type": "quantitative",
            "title": x_label or None,
            "axis": {"tickMinStep": 1},
        },
        "y": {"field": "y", "type": "quantitative", "title": y_label or None, "scale": y_scale},
        "color": colour,
        "opacity": opacity,
    }
    dash_names = [n for n in dashed if n]
    lines_layer = {
        "mark": {"type": "line", "strokeWidth": 1.8, "clip": True},
        "encoding": {
            **encoding,
            "strokeDash": {
                "condition": {
                    "test": {"field": "series", "oneOf": dash_names or ["\u0000"]},
                    "value": [5, 3],
                },
                "value": [1, 0],
            },
            "detail": {"field": "series", "type": "nominal"},
        },
        "name": _VIEW,
    }
    points_layer = {
        "mark": {"type": "point", "filled": True, "size": 30},
        "encoding": {
            **encoding,
            "shape": {
                "condition": {"test": "datum.off_scale", "value": "triangle-up"},
                "value": "circle",
            },
            "tooltip": _tooltip(rows),
        },
    }
    spec = {
        "layer": [lines_layer, points_layer],
        "params": [{**pick, "views": [_VIEW]}],
        "title": _title(title),
        "width": width,
        "height": 240,
    }
    if marker_x is None:
        spec["data"] = {"values": rows}
    else:  # the rule has its own data: the lines and points name theirs (embedded once)
        spec["datasets"] = {_ROWS: rows}
        for layer in spec["layer"]:
            layer["data"] = {"name": _ROWS}
        spec["layer"].append(
            {
                "data": {"values": [{"x": _plain(marker_x)}]},
                "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#888"},
                "encoding": {"x": {"field": "x", "type": "quantitative"}},
            }
        )
    return _top(spec)


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
    rows = _value_rows("axis", axes, series)
    pick, colour, opacity = _series_legend(series)
    encoding = {
        "x": _nominal_axis("axis", axes),
        "y": {
            "field": "y",
            "type": "quantitative",
            "scale": {"domain": list(domain)},
            "title": y_label,
        },
        "color": colour,
        "opacity": opacity,
        "detail": {"field": "series", "type": "nominal"},
    }
    return _lines_with_points(title, rows, encoding, pick, width, 240)
