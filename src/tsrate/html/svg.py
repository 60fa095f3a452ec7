"""Small, dependency-free SVG charts for the report: radar plots and grouped bar charts.

Every function is pure: numbers in, an SVG string out. The SVG is self-contained (no
fonts, scripts or images to fetch), so it renders inline in the offline report and as a
file of its own. Conventions:

- A radar plot shows *goodness*: each axis is scaled across the series in the chart so
  that the best value sits on the rim and the worst near the centre, matching the paper's
  Figures 5-9 ("farther from the centre is better"). The report uses the rank scale
  (:func:`radar_rank_positions`: evenly spaced by rank, ties together), so one outlier such
  as the Biased baseline cannot squash every other system onto the rim; the min-max scale
  (:func:`radar_positions`) keeps distances. The raw value of every point is in its
  tooltip and in ``data-value``.
- A line chart (:func:`line_chart`) draws series over integer x positions, e.g. a window's
  context tail (x <= 0) and its horizon (x >= 1) with a dashed line at the origin.
- Points and bars may carry provenance attributes (``data-mart``, ``data-column``,
  ``data-where``, ``data-value``) naming the mart row the number comes from.
- Series are ``<g class="series" data-series="NAME">`` groups and legend entries
  ``<g class="legend-item" data-series="NAME">``, so a small script can toggle them.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Mapping, Sequence

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

#: Radius (fraction of the full radius) given to the worst value on a radar axis.
RADAR_FLOOR = 0.15


@dataclasses.dataclass(frozen=True)
class Point:
    """One plotted number: ``value`` (None = missing), its tooltip and provenance attributes."""

    value: float | None
    label: str = ""
    attrs: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Series:
    """A named line (radar) or bar colour (bar chart): one point per axis or category."""

    name: str
    points: Sequence[Point]
    colour: str = PALETTE[0]


def colour_for(index: int) -> str:
    """The palette colour of the ``index``-th series (cycled)."""
    return PALETTE[index % len(PALETTE)]


def esc(text: object) -> str:
    """Escape text for SVG/HTML content and attribute values."""
    return html.escape(str(text), quote=True)


def _attrs(attrs: Mapping[str, str]) -> str:
    return "".join(f' {esc(key)}="{esc(value)}"' for key, value in attrs.items())


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def radar_positions(
    values: Sequence[float | None], higher_is_better: bool = False
) -> list[float | None]:
    """Scale one axis to radii in [RADAR_FLOOR, 1]: best value -> 1, worst -> RADAR_FLOOR.

    Lower raw values are better unless ``higher_is_better``. When every value is equal
    they all sit on the rim (none is worse than another). Missing values stay None.
    """
    present = [v for v in values if v is not None and math.isfinite(v)]
    if not present:
        return [None for _ in values]
    low, high = min(present), max(present)
    out: list[float | None] = []
    for v in values:
        if v is None or not math.isfinite(v):
            out.append(None)
        elif high == low:
            out.append(1.0)
        else:
            badness = (v - low) / (high - low)
            if higher_is_better:
                badness = 1.0 - badness
            out.append(1.0 - (1.0 - RADAR_FLOOR) * badness)
    return out


def radar_rank_positions(
    values: Sequence[float | None], higher_is_better: bool = False
) -> list[float | None]:
    """Scale one axis by rank to radii in [RADAR_FLOOR, 1]: best -> 1, worst -> RADAR_FLOOR.

    The k distinct values are spaced evenly (dense ranks), whatever their distances, so an
    outlier moves only itself; equal values share a radius. Lower is better unless
    ``higher_is_better``. One distinct value: all on the rim. Missing values stay None.
    """
    present = sorted({v for v in values if v is not None and math.isfinite(v)})
    if higher_is_better:
        present.reverse()
    if not present:
        return [None for _ in values]
    rank = {v: i for i, v in enumerate(present)}
    steps = max(len(present) - 1, 1)
    return [
        None if v is None or not math.isfinite(v) else 1.0 - (1.0 - RADAR_FLOOR) * rank[v] / steps
        for v in values
    ]


def _legend(series: Sequence[Series], x: float, y: float, row_height: float = 16) -> str:
    parts = []
    for i, s in enumerate(series):
        ty = y + i * row_height
        parts.append(
            f'<g class="legend-item" data-series="{esc(s.name)}" style="cursor:pointer">'
            f'<rect x="{_fmt(x)}" y="{_fmt(ty - 9)}" width="12" height="12" fill="{esc(s.colour)}"/>'
            f'<text x="{_fmt(x + 17)}" y="{_fmt(ty + 1)}" font-size="11">{esc(s.name)}</text></g>'
        )
    return "".join(parts)


def _legend_named(series: Sequence[Series], keys: Sequence[str], x: float, y: float) -> str:
    """A legend whose entries show ``series[i].name`` but toggle ``data-series=keys[i]``."""
    parts = []
    for i, (s, key) in enumerate(zip(series, keys, strict=True)):
        ty = y + i * 16
        parts.append(
            f'<g class="legend-item" data-series="{esc(key)}" style="cursor:pointer">'
            f'<rect x="{_fmt(x)}" y="{_fmt(ty - 9)}" width="12" height="12" fill="{esc(s.colour)}"/>'
            f'<text x="{_fmt(x + 17)}" y="{_fmt(ty + 1)}" font-size="11">{esc(s.name)}</text></g>'
        )
    return "".join(parts)


def _frame(width: float, height: float, title: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {_fmt(width)} {_fmt(height)}" width="{_fmt(width)}" height="{_fmt(height)}" '
        f'font-family="Helvetica, Arial, sans-serif" aria-label="{esc(title)}">'
        f"<title>{esc(title)}</title>"
        f'<rect x="0" y="0" width="{_fmt(width)}" height="{_fmt(height)}" fill="#ffffff"/>'
        f'<text x="{_fmt(width / 2)}" y="18" font-size="13" font-weight="bold" '
        f'text-anchor="middle">{esc(title)}</text>'
        f"{body}</svg>"
    )


def radar_chart(
    title: str,
    axes: Sequence[str],
    series: Sequence[Series],
    higher_is_better: Sequence[bool] | None = None,
    size: float = 300,
    scale: str = "rank",
) -> str:
    """A radar plot of ``series`` over ``axes`` (needs at least 3 axes).

    Each series' points hold raw values; they are scaled per axis with
    :func:`radar_rank_positions` (``scale="rank"``) or :func:`radar_positions`
    (``scale="minmax"``), ``higher_is_better[i]`` for axis i (default all False).
    """
    if scale not in ("rank", "minmax"):
        raise ValueError(f"scale must be 'rank' or 'minmax', got {scale!r}")
    position = radar_rank_positions if scale == "rank" else radar_positions
    if len(axes) < 3:
        raise ValueError(f"a radar plot needs at least 3 axes, got {list(axes)}")
    for s in series:
        if len(s.points) != len(axes):
            raise ValueError(f"series {s.name!r} has {len(s.points)} points for {len(axes)} axes")
    directions = list(higher_is_better or [False] * len(axes))
    legend_width, label_margin = 150, 80
    width, height = size + 2 * label_margin + legend_width, size + 40
    cx, cy, radius = label_margin + size / 2, 30 + size / 2 - 5, size / 2 - 30
    angles = [-math.pi / 2 + 2 * math.pi * i / len(axes) for i in range(len(axes))]

    def xy(angle: float, r: float) -> tuple[float, float]:
        return cx + radius * r * math.cos(angle), cy + radius * r * math.sin(angle)

    parts = ['<g class="grid" stroke="#cccccc" fill="none">']
    for ring in (0.25, 0.5, 0.75, 1.0):
        ring_points = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in (xy(a, ring) for a in angles))
        parts.append(f'<polygon points="{ring_points}"/>')
    for angle in angles:
        x, y = xy(angle, 1.0)
        parts.append(f'<line x1="{_fmt(cx)}" y1="{_fmt(cy)}" x2="{_fmt(x)}" y2="{_fmt(y)}"/>')
    parts.append("</g>")
    for angle, name, up in zip(angles, axes, directions, strict=True):
        x, y = xy(angle, 1.17)
        anchor = "middle" if abs(math.cos(angle)) < 0.3 else ("start" if x > cx else "end")
        arrow = "↑" if up else "↓"
        parts.append(
            f'<text x="{_fmt(x)}" y="{_fmt(y + 4)}" font-size="11" text-anchor="{anchor}">'
            f"{esc(name)} {arrow}</text>"
        )
    radii_by_axis = [
        position([s.points[i].value for s in series], directions[i]) for i in range(len(axes))
    ]
    for index, s in enumerate(series):
        radii = [radii_by_axis[i][index] for i in range(len(axes))]
        coords = [xy(a, r) for a, r in zip(angles, radii, strict=True) if r is not None]
        parts.append(f'<g class="series" data-series="{esc(s.name)}">')
        if len(coords) >= 3:
            polygon = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in coords)
            parts.append(
                f'<polygon points="{polygon}" fill="{esc(s.colour)}" fill-opacity="0.12" '
                f'stroke="{esc(s.colour)}" stroke-width="2"/>'
            )
        for angle, r, point, name in zip(angles, radii, s.points, axes, strict=True):
            if r is None:
                continue
            x, y = xy(angle, r)
            tooltip = point.label or f"{s.name} · {name}: {point.value}"
            parts.append(
                f'<circle cx="{_fmt(x)}" cy="{_fmt(y)}" r="3.5" fill="{esc(s.colour)}"'
                f"{_attrs(point.attrs)}><title>{esc(tooltip)}</title></circle>"
            )
        parts.append("</g>")
    parts.append(_legend(series, size + 2 * label_margin + 10, 50))
    return _frame(width, height, title, "".join(parts))


def nice_max(value: float) -> float:
    """The smallest 1/2/2.5/5 x 10^k at or above ``value`` (axis top); 1 for value <= 0."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        top = step * 10**exponent
        if top >= value * (1 - 1e-12):
            return top
    return 10 ** (exponent + 1)


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    y_label: str = "",
    height: float = 260,
) -> str:
    """Grouped vertical bars: one group per category, one bar per series (values >= 0)."""
    for s in series:
        if len(s.points) != len(categories):
            raise ValueError(
                f"series {s.name!r} has {len(s.points)} points for {len(categories)} categories"
            )
    values = [p.value for s in series for p in s.points if p.value is not None]
    if any(v < 0 for v in values):
        raise ValueError(f"bar_chart draws values >= 0 only; {title!r} has {min(values)}")
    top = nice_max(max(values, default=0.0))
    left, right, bottom, legend_width = 60, 20, 60, 130
    group_width = max(48.0, 18.0 * max(len(series), 1) + 16)
    plot_width = group_width * max(len(categories), 1)
    width = left + plot_width + right + legend_width
    plot_top, plot_bottom = 34, height - bottom
    scale = (plot_bottom - plot_top) / top
    parts = ['<g class="axes" font-size="10">']
    for tick in range(5):
        tick_value = top * tick / 4
        y = plot_bottom - tick_value * scale
        parts.append(
            f'<line x1="{left}" y1="{_fmt(y)}" x2="{_fmt(left + plot_width)}" y2="{_fmt(y)}" '
            f'stroke="#e3e3e3"/><text x="{left - 4}" y="{_fmt(y + 3)}" text-anchor="end">'
            f"{esc(f'{tick_value:g}')}</text>"
        )
    parts.append(
        f'<line x1="{left}" y1="{plot_top}" x2="{left}" y2="{_fmt(plot_bottom)}" stroke="#555"/>'
        f'<line x1="{left}" y1="{_fmt(plot_bottom)}" x2="{_fmt(left + plot_width)}" '
        f'y2="{_fmt(plot_bottom)}" stroke="#555"/>'
    )
    if y_label:
        parts.append(
            f'<text x="14" y="{_fmt((plot_top + plot_bottom) / 2)}" font-size="11" '
            f'text-anchor="middle" transform="rotate(-90 14 {_fmt((plot_top + plot_bottom) / 2)})">'
            f"{esc(y_label)}</text>"
        )
    for i, category in enumerate(categories):
        x = left + group_width * (i + 0.5)
        parts.append(
            f'<text x="{_fmt(x)}" y="{_fmt(plot_bottom + 14)}" text-anchor="middle">'
            f"{esc(category)}</text>"
        )
    parts.append("</g>")
    bar_width = (group_width - 16) / max(len(series), 1)
    for j, s in enumerate(series):
        parts.append(f'<g class="series" data-series="{esc(s.name)}">')
        for i, point in enumerate(s.points):
            if point.value is None:
                continue
            x = left + group_width * i + 8 + bar_width * j
            bar_height = point.value * scale
            tooltip = point.label or f"{s.name} · {categories[i]}: {point.value}"
            parts.append(
                f'<rect x="{_fmt(x)}" y="{_fmt(plot_bottom - bar_height)}" '
                f'width="{_fmt(max(bar_width - 2, 1))}" height="{_fmt(bar_height)}" '
                f'fill="{esc(s.colour)}"{_attrs(point.attrs)}><title>{esc(tooltip)}</title></rect>'
            )
        parts.append("</g>")
    parts.append(_legend(series, left + plot_width + right, 50))
    return _frame(width, height, title, "".join(parts))


@dataclasses.dataclass(frozen=True)
class Line:
    """A line of a :func:`line_chart`: ``points[i]`` is drawn at ``x[i]`` (None: a gap)."""

    name: str
    x: Sequence[int]
    points: Sequence[Point]
    colour: str = PALETTE[0]
    dashed: bool = False


def axis_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1/2/2.5/5 x 10^k steps) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        return [low]
    step = nice_max((high - low) / max(count - 1, 1))
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def line_chart(
    title: str,
    lines: Sequence[Line],
    x_label: str = "",
    y_label: str = "",
    marker_x: float | None = 0.5,
    width: float = 520,
    height: float = 280,
    y_range: tuple[float, float] | None = None,
) -> str:
    """Lines over integer x positions; a dashed vertical line at ``marker_x`` (the origin).

    Every present point is a small circle carrying its provenance ``attrs`` and tooltip;
    consecutive present points of a line are joined (a None breaks the line). ``y_range``
    fixes the y axis (default: every value); a point outside it is drawn on the edge as a
    triangle pointing out (class ``clipped``; its tooltip keeps the value) and its line's
    legend entry says "off scale", so one outlier cannot flatten the other lines.
    """
    for line in lines:
        if len(line.x) != len(line.points):
            raise ValueError(
                f"line {line.name!r} has {len(line.points)} points for {len(line.x)} x"
            )
    xs = [x for line in lines for x in line.x]
    values = [
        p.value
        for line in lines
        for p in line.points
        if p.value is not None and math.isfinite(p.value)
    ]
    if not xs or not values:
        raise ValueError(f"line chart {title!r} has nothing to draw")
    if y_range is not None:
        low, high = float(y_range[0]), float(y_range[1])
        ticks = axis_ticks(low, high)
    else:
        ticks = axis_ticks(min(values), max(values))
        low, high = min(ticks[0], min(values)), max(ticks[-1], max(values))
    if high <= low:
        low, high = low - 1, high + 1
    left, right, top, bottom, legend_width = 64, 16, 34, 40, 130
    plot_width = width - left - right - legend_width
    x_low, x_high = min(xs), max(xs)
    x_span = max(x_high - x_low, 1)

    def px(x: float) -> float:
        return left + (x - x_low) / x_span * plot_width

    def py(v: float) -> float:
        v = min(max(v, low), high)  # clipped values sit on the edge
        return height - bottom - (v - low) / (high - low) * (height - top - bottom)

    parts = ['<g class="axes" font-size="10">']
    for tick in ticks:
        if low <= tick <= high:
            y = py(tick)
            parts.append(
                f'<line x1="{left}" y1="{_fmt(y)}" x2="{_fmt(left + plot_width)}" y2="{_fmt(y)}" '
                f'stroke="#e3e3e3"/><text x="{left - 4}" y="{_fmt(y + 3)}" text-anchor="end">'
                f"{esc(f'{tick:g}')}</text>"
            )
    bottom_y = height - bottom
    parts.append(
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{_fmt(bottom_y)}" stroke="#555"/>'
        f'<line x1="{left}" y1="{_fmt(bottom_y)}" x2="{_fmt(left + plot_width)}" '
        f'y2="{_fmt(bottom_y)}" stroke="#555"/>'
    )
    for x in sorted({x_low, x_high} | ({0} & set(xs))):
        parts.append(
            f'<text x="{_fmt(px(x))}" y="{_fmt(bottom_y + 13)}" text-anchor="middle">{x}</text>'
        )
    if x_label:
        parts.append(
            f'<text x="{_fmt(left + plot_width / 2)}" y="{_fmt(height - 6)}" font-size="11" '
            f'text-anchor="middle">{esc(x_label)}</text>'
        )
    if y_label:
        middle = (top + bottom_y) / 2
        parts.append(
            f'<text x="12" y="{_fmt(middle)}" font-size="11" text-anchor="middle" '
            f'transform="rotate(-90 12 {_fmt(middle)})">{esc(y_label)}</text>'
        )
    if marker_x is not None and x_low <= marker_x <= x_high:
        parts.append(
            f'<line class="origin" x1="{_fmt(px(marker_x))}" y1="{top}" x2="{_fmt(px(marker_x))}" '
            f'y2="{_fmt(bottom_y)}" stroke="#888" stroke-dasharray="4 3"/>'
        )
    parts.append("</g>")
    legend = []
    for line in lines:
        clipped_any = False
        parts.append(f'<g class="series" data-series="{esc(line.name)}">')
        run: list[str] = []
        segments: list[list[str]] = [run]
        for x, point in zip(line.x, line.points, strict=True):
            if point.value is None or not math.isfinite(point.value):
                run = []
                segments.append(run)
                continue
            run.append(f"{_fmt(px(x))},{_fmt(py(point.value))}")
        dash = ' stroke-dasharray="5 3"' if line.dashed else ""
        for segment in segments:
            if len(segment) >= 2:
                parts.append(
                    f'<polyline points="{" ".join(segment)}" fill="none" '
                    f'stroke="{esc(line.colour)}" stroke-width="1.8"{dash}/>'
                )
        for x, point in zip(line.x, line.points, strict=True):
            if point.value is None or not math.isfinite(point.value):
                continue
            tooltip = point.label or f"{line.name} · {x}: {point.value}"
            cx, cy = px(x), py(point.value)
            if low <= point.value <= high:
                parts.append(
                    f'<circle cx="{_fmt(cx)}" cy="{_fmt(cy)}" r="2" fill="{esc(line.colour)}"'
                    f"{_attrs(point.attrs)}><title>{esc(tooltip)}</title></circle>"
                )
                continue
            clipped_any = True
            tip = -5 if point.value > high else 5  # the triangle points out of the plot
            triangle = (
                f"{_fmt(cx - 4)},{_fmt(cy)} {_fmt(cx + 4)},{_fmt(cy)} {_fmt(cx)},{_fmt(cy + tip)}"
            )
            parts.append(
                f'<polygon class="clipped" points="{triangle}" fill="{esc(line.colour)}"'
                f"{_attrs(point.attrs)}><title>{esc(tooltip)} (off scale)</title></polygon>"
            )
        parts.append("</g>")
        name = f"{line.name} (off scale)" if clipped_any else line.name
        legend.append(Series(name, [], line.colour))
    parts.append(
        _legend_named(legend, [line.name for line in lines], left + plot_width + right, 50)
    )
    return _frame(width, height, title, "".join(parts))
