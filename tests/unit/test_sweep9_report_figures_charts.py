"""The shared chart helpers (tsrate.html.charts) at their edges: escaping, the provenance
JSON and the spec JSON (sorted keys, no NaN), colour scales given or defaulted, tooltip
fields, rows read back from nested specs, numpy cells made plain, a series whose points do
not match its categories, points exactly on the y range's edges, the rank axis of one
value, and the builders' defaults (colour, dash, the rule at the origin, the sizes the
1,280 px page lays out), each against a hand-written expectation.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_figures.json).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tsrate.html import charts as ch
from tsrate.html.charts import Line, Point, Series


def test_escaping_quotes_both_kinds():
    assert ch.esc("a\"b'<c>&") == "a&quot;b&#x27;&lt;c&gt;&amp;"


def test_provenance_json_sorts_its_keys():
    fields = ch.traced("ratings", "raw_score", {"system_id": "s", "metric": "m"}, 2)
    assert fields == {
        "mart": "marts.ratings",
        "column": "raw_score",
        "where": '{"metric": "m", "system_id": "s"}',
        "value": 2.0,
    }


def test_spec_json_sorts_keys_and_refuses_nan():
    assert ch.spec_json({"b": 1, "a": "</script>"}) == '{"a": "<\\/script>", "b": 1}'
    with pytest.raises(ValueError):
        ch.spec_json({"a": float("nan")})


def test_a_colour_scale_uses_the_colours_given_or_the_palette():
    assert ch.colour_scale(["x", "y"]) == {"domain": ["x", "y"], "range": ["#0072B2", "#D55E00"]}
    given = ch.colour_scale(["x", "y"], {"x": "#111111", "y": "#222222"})
    assert given == {"domain": ["x", "y"], "range": ["#111111", "#222222"]}


def test_tooltip_fields_come_first_then_the_mart_row_once():
    rows = [{"x": 1, "value": 2.0, "mart": "marts.m"}, {"where": "{}"}]
    assert ch.tooltip_fields(rows, ["x", "value", "absent"]) == [
        {"field": "x", "type": "nominal"},
        {"field": "value", "type": "quantitative"},
        {"field": "mart", "type": "nominal"},
        {"field": "where", "type": "nominal"},
    ]


def test_an_altair_chart_is_written_without_validation():
    """Specs are not validated while a report is written (to_spec's docstring): an Altair
    chart with an invalid width still gives its dict."""
    import altair as alt

    chart = alt.Chart({"values": [{"x": 1}]}).mark_point()
    chart.width = "wide"  # set after the fact: properties() would validate it
    assert ch.to_spec(chart)["width"] == "wide"


def test_rows_are_read_from_nested_specs():
    spec = {
        "spec": {"data": {"values": [{"a": 1}]}},
        "hconcat": [{"data": {"values": [{"b": 2}, 3]}}],
        "datasets": {"d": [{"c": 3}]},
        "encoding": {"y": {"axis": {"values": [0.15, 1]}}},
    }
    assert sorted(json.dumps(r) for r in ch.spec_rows(spec)) == [
        '{"a": 1}',
        '{"b": 2}',
        '{"c": 3}',
    ]


def test_cells_are_made_plain():
    rows = ch._table([{"a": np.int64(3), "b": np.float64("nan")}, {"c": "text", "a": 1.5}])
    assert rows == [{"a": 3, "b": None, "c": None}, {"a": 1.5, "b": None, "c": "text"}]
    assert type(rows[0]["a"]) is int
    assert json.loads(ch.spec_json({"rows": rows}))["rows"][0]["a"] == 3


def test_a_series_must_have_a_point_per_category():
    with pytest.raises(ValueError):
        ch.bar_chart("t", ["a", "b"], [Series("s", [Point(1.0)])])


def test_a_line_must_have_a_point_per_x():
    with pytest.raises(ValueError):
        ch.line_chart("t", [Line("l", [0, 1], [Point(1.0)])])


def test_the_defaults_of_series_and_lines():
    assert Series("s", []).colour == "#0072B2"
    line = Line("l", [], [])
    assert line.colour == "#0072B2" and line.dashed is False


def test_a_point_on_the_edge_of_the_range_is_on_scale():
    spec = ch.line_chart(
        "t", [Line("l", [0, 1, 2], [Point(0.0), Point(10.0), Point(10.5)])], y_range=(0.0, 10.0)
    )
    rows = spec["datasets"]["rows"]
    assert [(r["y"], r["off_scale"]) for r in rows] == [(0.0, False), (10.0, False), (10.0, True)]
    assert [r["series"] for r in rows] == ["l (off scale)"] * 3
    below = ch.line_chart("t", [Line("m", [0], [Point(-1.0)])], y_range=(0.0, 10.0))
    assert below["datasets"]["rows"][0]["y"] == 0.0
    assert below["datasets"]["rows"][0]["label"] == " (off scale)"


def test_a_rank_axis_of_one_value_puts_everyone_on_top():
    assert ch.rank_positions([2.0, 2.0]) == [1.0, 1.0]
    assert ch.rank_positions([5.0]) == [1.0]


def test_a_rank_axis_is_lower_is_better_unless_told():
    assert ch.rank_positions([2.0, 1.0, 3.0]) == pytest.approx([(1.0 + 0.15) / 2, 1.0, 0.15])


def test_the_builders_default_sizes_and_origin():
    """The default sizes the report pages lay out in a 1,280 px grid (rank and bar charts
    360 x 220, line charts 420 x 240 with the origin rule at x = 0, score charts 520 x 240
    on a 0-1 scale), and the worst rank at 0.15."""
    series = [Series("a", [Point(1.0), Point(2.0)]), Series("b", [Point(2.0), Point(1.0)])]
    rank = ch.rank_chart("t", ["x", "y"], series, [False, False])
    assert (rank["width"], rank["height"]) == (360, 220)
    positions = sorted(r["position"] for r in rank["data"]["values"])
    assert positions == pytest.approx([0.15, 0.15, 1.0, 1.0])
    bar = ch.bar_chart("t", ["x", "y"], series)
    assert (bar["width"], bar["height"]) == (360, 220)
    line = ch.line_chart("t", [Line("l", [0], [Point(1.0)])])
    assert (line["width"], line["height"]) == (420, 240)
    assert line["layer"][2]["data"] == {"values": [{"x": 0}]}
    score = ch.score_chart("t", ["x", "y"], series)
    assert (score["width"], score["height"]) == (520, 240)
    assert score["layer"][0]["encoding"]["y"]["scale"] == {"domain": [0.0, 1.0]}
    assert rank["config"] == {"view": {"continuousWidth": 300, "continuousHeight": 300}}
