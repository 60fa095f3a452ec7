"""What every chart section of the report shares: a chart's registration beside its HTML,
each metric's direction and the rank chart (the paper's radar) that the radars of
Figures 5-9 are drawn with.

The sections live beside this module: :mod:`.radars` (Figures 5-6), :mod:`.comparisons`
(Figure 4 and Figures 7-9) and :mod:`.forecasts` (the forecast plots). Each section
function takes ``charts`` (name -> spec, filled as it goes; ``tsrate report`` also writes
them as ``report-charts/<name>.vl.json``) and returns HTML holding the specs
(:func:`tsrate.html.charts.figure`); the page renders them with the inlined Vega-Embed.
Every plotted number carries its mart row (``mart``, ``column``, ``where``, ``value``),
shown in its tooltip and re-read by the integration test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tsrate.html.charts import Point, Series, figure, rank_chart
from tsrate.robustness.report.data import METRIC_LABELS, ReportData
from tsrate.robustness.report.numbers import format_number


def chart_figure(name: str, spec: dict, charts: dict[str, dict], caption: str) -> str:
    """The figure's HTML, its spec kept in ``charts`` under ``name``."""
    charts[name] = spec
    return figure(name, spec, caption)


def metric_directions(data: ReportData) -> dict[str, bool]:
    """Each rated metric's direction, as ``marts.ratings`` states it (``higher_is_better``)."""
    ratings = data.ratings
    if ratings.empty or "higher_is_better" not in ratings.columns:
        return {}
    return {
        str(metric): bool(higher)
        for metric, higher in ratings.groupby("metric")["higher_is_better"].first().items()
    }


def radar_for(
    title: str,
    metrics: Sequence[str],
    names: Sequence[str],
    colours: Mapping[str, str],
    value_of,
    higher_is_better: Mapping[str, bool],
    marks: Mapping[str, str] | None = None,
) -> dict | None:
    """A rank chart (the paper's radar) over ``metrics`` for ``names``; ``value_of(name, metric)``
    -> (value, attrs); each metric's direction from ``higher_is_better`` (the ratings mart's;
    a metric it does not rate is left out: its direction is unknown). ``marks``: a short mark
    after a name in the legend ("mid (P0 only)"; :func:`.coverage.fewer_marks`)."""
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
        legend = f"{name} ({marks[name]})" if marks and name in marks else name
        series.append(Series(legend, points, colours[name]))
    return rank_chart(title, [METRIC_LABELS.get(m, m) for m in present], series, directions)
