"""The report's charts (tsrate.robustness.report's figures, radars, comparisons and
forecasts modules: the radars of Figures 5-9, the confounder bars of Figure 4, the forecast
plots) checked as data: each Vega-Lite spec's rows, axes, colours and dash pattern against
values worked out by hand from the small frames each test feeds in.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_report_figures.json): a metric dropped from or kept on a radar, a
chart drawn from too few groups or axes, a shifted x position, a wrong default horizon, a
swapped colour or a chart that reads another scope's, group's or pair's rows changes a
checked row.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from tests.support.report_frames import RUN, two_systems
from tsrate.html.charts import page_specs, spec_rows
from tsrate.robustness.report import comparisons, figures, forecasts, radars

#: Okabe-Ito's first two colours: the palette's first and second entries
BLUE, VERMILION = "#0072B2", "#D55E00"
#: the rank axis: best at 1, worst at 0.15 (tsrate.html.charts.rank_positions' docstring)
TOP, BOTTOM = 1.0, 0.15


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _rows(spec: dict) -> list[dict]:
    return list(spec_rows(spec))


def _encoding(spec: dict, channel: str) -> dict:
    """The first ``channel`` encoding of a spec (top level or its first layer)."""
    if "encoding" in spec and channel in spec["encoding"]:
        return spec["encoding"][channel]
    for layer in spec.get("layer", []):
        if channel in layer.get("encoding", {}):
            return layer["encoding"][channel]
    raise KeyError(channel)


# ----------------------------------------------------------------------------- radar helper


def _values(table: dict[tuple[str, str], float]):
    def value_of(name: str, metric: str):
        value = table.get((name, metric))
        attrs = {} if value is None else {"mart": "marts.m", "column": "c", "value": value}
        return value, attrs

    return value_of


def test_a_radar_keeps_a_metric_one_name_has_and_drops_one_no_name_has():
    """Axes: smape (both), mase (only b), sign_accuracy (both, higher is better), ape_industry
    (no value for anyone: dropped), pie_company (values, but no direction: dropped)."""
    table = {
        ("a", "smape"): 1.0,
        ("b", "smape"): 2.0,
        ("b", "mase"): 5.0,
        ("a", "sign_accuracy"): 40.0,
        ("b", "sign_accuracy"): 60.0,
        ("a", "pie_company"): 1.0,
        ("b", "pie_company"): 2.0,
    }
    directions = {"smape": False, "mase": False, "sign_accuracy": True, "ape_industry": False}
    metrics = ("smape", "mase", "ape_industry", "sign_accuracy", "pie_company")
    spec = figures.radar_for(
        "t", metrics, ["a", "b"], {"a": BLUE, "b": VERMILION}, _values(table), directions
    )
    assert spec is not None
    assert _encoding(spec, "x")["sort"] == ["SMAPE", "MASE", "Sign accuracy %"]
    got = {(r["series"], r["axis"]): r["position"] for r in _rows(spec)}
    assert got == pytest.approx(
        {
            ("a", "SMAPE"): TOP,
            ("b", "SMAPE"): BOTTOM,
            ("b", "MASE"): TOP,  # the only value on its axis
            ("a", "Sign accuracy %"): BOTTOM,
            ("b", "Sign accuracy %"): TOP,
        }
    )
    assert _encoding(spec, "color")["scale"] == {"domain": ["a", "b"], "range": [BLUE, VERMILION]}


def test_a_radar_needs_three_axes():
    table = {
        (n, m): v for n, v in (("a", 1.0), ("b", 2.0)) for m in ("smape", "mase", "pie_company")
    }
    directions = dict.fromkeys(("smape", "mase", "pie_company"), False)
    colours = {"a": BLUE, "b": VERMILION}
    three = figures.radar_for(
        "t", ("smape", "mase", "pie_company"), ["a", "b"], colours, _values(table), directions
    )
    assert three is not None and len(_rows(three)) == 6
    two = figures.radar_for("t", ("smape", "mase"), ["a", "b"], colours, _values(table), directions)
    assert two is None
    assert (
        figures.radar_for("t", ("smape", "mase", "pie_company"), [], {}, _values({}), directions)
        is None
    )


def test_without_a_direction_column_no_radar_is_drawn():
    """A ratings frame without ``higher_is_better`` states no direction: every metric is
    left out, so no radar (and no error)."""
    data = two_systems()
    data.ratings = data.ratings.drop(columns="higher_is_better")
    charts: dict[str, dict] = {}
    html = radars.radar_section(data, charts)
    assert charts == {} and 'id="radars"' in html


def test_the_average_radars_plot_system_summary_with_its_row():
    """The fixture's SMAPE: good 1, 2, 6 under P0-P2 (mean 3), bad 3, 4, 8 (mean 5); the
    average radar's SMAPE points carry marts.system_summary.avg_raw_score at those means."""
    charts: dict[str, dict] = {}
    radars.radar_section(two_systems(), charts)
    rows = [r for r in _rows(charts["radar-accuracy-average"]) if r["axis"] == "SMAPE"]
    got = {r["series"]: (r["mart"], r["column"], json.loads(r["where"]), r["value"]) for r in rows}
    assert got == {
        s: (
            "marts.system_summary",
            "avg_raw_score",
            {"run_id": RUN, "metric": "smape", "system_id": s},
            v,
        )
        for s, v in (("good", 3.0), ("bad", 5.0))
    }


# ----------------------------------------------------------------------------- forecast plots


def test_the_y_range_skips_missing_and_non_finite_values():
    # the finite prices 100 and 110: range 10, 20 % of the mean 105 = 21 -> pad 21
    assert forecasts.trace_y_range([None, 100.0, float("nan"), 110.0, float("inf")]) == (
        pytest.approx((79.0, 131.0))
    )
    assert forecasts.trace_y_range([None, float("nan")]) is None
    # all prices 0: no range, no level -> the 1e-9 floor
    assert forecasts.trace_y_range([0.0, 0.0]) == (-1e-9, 1e-9)


WINDOW = pd.Timestamp("2022-03-01")


def _window_data(perturbation: str = "P1", **overrides):
    """Two systems' 2-step forecasts at one window (good 101, 102; bad 111, 112; actual 101,
    102) and a 3-step context tail (steps 5-7, clean 104-106, input 104, 105, 0)."""
    traces = pd.DataFrame(
        [
            dict(run_id=RUN, system_id=s, ticker="AAA", window_end_date=WINDOW,
                 perturbation_id=perturbation, horizon_step=h,
                 target_date=WINDOW + pd.Timedelta(days=h), forecast=f + h, actual=100.0 + h)
            for s, f in (("good", 100.0), ("bad", 110.0))
            for h in (2, 1)
        ]
    )  # fmt: skip
    contexts = pd.DataFrame(
        [
            dict(ticker="AAA", window_end_date=WINDOW, perturbation_id=perturbation,
                 context_step=k, price_date=WINDOW - pd.Timedelta(days=8 - k),
                 clean_value=99.0 + k, input_value=0.0 if k == 7 else 99.0 + k)
            for k in (7, 5, 6)
        ]
    )  # fmt: skip
    chosen = pd.DataFrame(
        [dict(system_id="bad", ticker="AAA", window_end_date=WINDOW,
              perturbation_id=perturbation, disagreement=0.3)]
    )  # fmt: skip
    return two_systems(trace_windows=chosen, traces=traces, contexts=contexts, **overrides)


def _lines(spec: dict) -> dict[str, list[tuple[int, float]]]:
    lines: dict[str, list] = {}
    for row in _rows(spec):
        if "line" in row:
            lines.setdefault(row["line"], []).append((row["x"], row["y"]))
    return lines


def test_a_forecast_plot_read_without_prepared_windows():
    """The context steps 5, 6, 7 sit at x = -2, -1, 0 (the last one at the origin), the
    horizon steps at 1, 2; the perturbed input is the dashed grey line over x <= 0."""
    data = _window_data()
    chosen = next(data.trace_windows.itertuples())
    spec = forecasts.forecast_chart(data, chosen, {"good": BLUE, "bad": VERMILION})
    assert _lines(spec) == {
        "actual": [(-2, 104.0), (-1, 105.0), (0, 106.0), (1, 101.0), (2, 102.0)],
        # 0 is off the y scale (clean prices 101-106: pad 20 % of their mean 103.6 = 20.72,
        # more than their range 5): drawn on its lower edge
        "input (P1)": [(-2, 104.0), (-1, 105.0), (0, pytest.approx(101.0 - 20.72))],
        "good": [(1, 101.0), (2, 102.0)],
        "bad": [(1, 111.0), (2, 112.0)],
    }
    inputs = [r for r in _rows(spec) if r.get("line") == "input (P1)"]
    assert [
        (r["mart"], r["column"], r["value"], json.loads(r["where"])["context_step"]) for r in inputs
    ] == [
        ("marts.window_inputs", "input_value", 104.0, 5),
        ("marts.window_inputs", "input_value", 105.0, 6),
        ("marts.window_inputs", "input_value", 0.0, 7),
    ]
    dashed = _encoding(spec, "strokeDash")["condition"]["test"]["oneOf"]
    assert dashed == ["input (P1) (off scale)"]
    scale = _encoding(spec, "color")["scale"]
    assert scale["range"] == ["#222222", "#999999", BLUE, VERMILION]
    missing = chosen._replace(ticker="ZZZ")
    assert forecasts.forecast_chart(data, missing, {"good": BLUE, "bad": VERMILION}) is None


def test_a_clean_window_has_no_input_line():
    data = _window_data("P0")
    chosen = next(data.trace_windows.itertuples())
    spec = forecasts.forecast_chart(data, chosen, {"good": BLUE, "bad": VERMILION})
    assert list(_lines(spec)) == ["actual", "good", "bad"]


def test_without_ratings_the_forecast_lines_follow_the_system_ids():
    """No rated system: the systems of the traces, alphabetically (bad, good), coloured in
    that order."""
    data = _window_data(ratings=pd.DataFrame(), system_summary=pd.DataFrame())
    charts: dict[str, dict] = {}
    forecasts.forecasts_section(data, charts)
    (spec,) = charts.values()
    assert list(_lines(spec))[-2:] == ["bad", "good"]
    scale = _encoding(spec, "color")["scale"]
    assert scale["domain"][-2:] == ["bad", "good"] and scale["range"][-2:] == [BLUE, VERMILION]


@pytest.mark.parametrize(
    ("study", "tail"),
    [
        ({"context_length": 80}, 3),  # no horizon: 1 -> 3 horizons = 3 values
        ({"context_length": 80, "horizon": None}, 3),
        ({"context_length": 80, "horizon": 0}, 3),
        ({"context_length": 80, "horizon": 20}, 60),
        ({"context_length": 40, "horizon": 20}, 40),  # at most the whole context
    ],
)
def test_the_forecast_text_states_the_tail_drawn(study, tail):
    """Context values drawn: 3 horizons, at most the whole context
    (data.context_tail_length's docstring); an unknown horizon counts as 1."""
    html = forecasts.forecasts_section(_window_data(study=study), {})
    assert f"the last {tail} context values" in _plain(html)


# ----------------------------------------------------------------------------- Figure 4


def test_the_confounder_bars_plot_each_average_in_its_colour():
    """The fixture: APE over all systems industry 6, company 2; good 4, 1; bad has no row."""
    charts: dict[str, dict] = {}
    comparisons.confounder_section(two_systems(), charts)
    assert list(charts) == ["confounders-ape"]
    spec = charts["confounders-ape"]
    got = {
        (r["category"], r["series"]): (r["y"], r["column"], json.loads(r["where"]))
        for r in _rows(spec)
    }

    def where(grouped_by, system):
        return {
            "run_id": RUN,
            "measure": "ape",
            "grouped_by": grouped_by,
            "system_id": system,
            "perturbation_id": None,
        }

    assert got == {
        ("good", "industry"): (4.0, "industry_avg", where("system", "good")),
        ("good", "company"): (1.0, "company_avg", where("system", "good")),
        ("all", "industry"): (6.0, "industry_avg", where("all", None)),
        ("all", "company"): (2.0, "company_avg", where("all", None)),
    }
    assert _encoding(spec, "x")["sort"] == ["good", "bad", "all"]
    assert _encoding(spec, "color")["scale"] == {
        "domain": ["industry", "company"],
        "range": [BLUE, VERMILION],
    }


# ----------------------------------------------------------------------------- Figures 7-9

METRICS = ("wrs_industry", "ape_industry", "smape", "mase", "sign_accuracy")


def _groups() -> pd.DataFrame:
    """all_systems: foundation has two groups (yes: 1 + i per metric; no: 5 + i; sign
    accuracy 60 vs 40), modality one group on three metrics (enough axes, but nothing to
    rank it against: no radar); without_baselines: foundation with one group only."""
    rows = []
    for i, metric in enumerate(METRICS):
        for group, base, ids in (("yes", 1.0, "f1  f2"), ("no", 5.0, "n1")):
            value = (60.0 if group == "yes" else 40.0) if metric == "sign_accuracy" else base + i
            rows.append(("all_systems", "foundation", group, metric, value, ids))
    for metric, value in (("smape", 7.0), ("mase", 8.0), ("sign_accuracy", 50.0)):
        rows.append(("all_systems", "modality", "numeric", metric, value, "n1 f1"))
    rows.append(("without_baselines", "foundation", "yes", "smape", 9.0, "f2"))
    return pd.DataFrame(
        [
            dict(run_id=RUN, system_scope=s, comparison=c, group_name=g, metric=m,
                 avg_raw_score=v, system_ids=ids)
            for s, c, g, m, v, ids in rows
        ]
    )  # fmt: skip


def _tables(html: str) -> list[list[list[str]]]:
    return [
        [
            [_plain(c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        ]
        for table in re.findall(r"<table.*?</table>", html, re.S)
    ]


def test_group_radars_only_for_two_or_more_groups_each_from_its_own_rows():
    charts: dict[str, dict] = {}
    html = comparisons.group_section(two_systems(group_comparisons=_groups()), charts)
    radars = [n for n in charts if n.startswith("groups-")]
    assert radars == ["groups-all-systems-foundation"]
    spec = charts["groups-all-systems-foundation"]
    rows = {(r["series"], r["axis"]): r for r in _rows(spec)}
    assert {axis for _, axis in rows} == {
        "WRS industry", "APE industry", "SMAPE", "MASE", "Sign accuracy %",
    }  # fmt: skip
    for (group, _axis), row in rows.items():
        # 'yes' is lower on every lower-is-better metric and higher on sign accuracy
        assert row["position"] == pytest.approx(TOP if group == "yes" else BOTTOM)
        where = json.loads(row["where"])
        assert where["system_scope"] == "all_systems" and where["group_name"] == group
    assert rows["no", "MASE"]["value"] == 5.0 + 3
    assert _encoding(spec, "color")["scale"] == {
        "domain": ["yes", "no"],
        "range": [BLUE, VERMILION],
    }
    tables = _tables(html)
    foundation = tables[0]
    assert foundation[0] == ["Metric", "yes", "no"]
    assert foundation[1:] == [
        ["WRS industry", "1.00", "5.00"],
        ["WRS company", "–", "–"],
        ["APE industry", "2.00", "6.00"],
        ["APE company", "–", "–"],
        ["PIE % industry", "–", "–"],
        ["PIE % company", "–", "–"],
        ["SMAPE", "3.00", "7.00"],
        ["MASE", "4.00", "8.00"],
        ["Sign accuracy %", "60.00", "40.00"],
        ["systems", "f1 f2", "n1"],
    ]
    plain = _plain(html)
    assert "ARQ1 · Foundation vs non-foundation (Figure 7, right) Metric" in plain
    modality = tables[1]
    assert modality[0] == ["Metric", "numeric"] and modality[-1] == ["systems", "n1 f1"]
    assert ["SMAPE", "7.00"] in modality
    assert "ARQ2 · Uni-modal vs multi-modal (Figure 7, left) — only one group" in plain
    # the scope without baselines reads its own rows only: 'yes' SMAPE 9, one group
    baseline_free = tables[2]
    assert baseline_free[0] == ["Metric", "yes"] and ["SMAPE", "9.00"] in baseline_free
    assert baseline_free[-1] == ["systems", "f2"]
    assert len(tables) == 3


def test_group_tables_trace_each_number_to_its_group_row():
    html = comparisons.group_section(two_systems(group_comparisons=_groups()), {})
    spans = re.findall(r'<span class="num"([^>]*)>', html)
    wheres = [
        json.loads(re.search(r'data-where="([^"]*)"', s).group(1).replace("&quot;", '"'))
        for s in spans
        if "marts.group_comparisons" in s
    ]
    assert len(wheres) == 2 * 5 + 3 + 1
    assert {
        "run_id": RUN,
        "system_scope": "all_systems",
        "comparison": "modality",
        "group_name": "numeric",
        "metric": "smape",
    } in wheres


def test_no_group_rows_says_so_in_both_scopes():
    html = comparisons.group_section(two_systems(group_comparisons=pd.DataFrame()), {})
    assert _plain(html).count("No rated system in this scope") == 2


# ----------------------------------------------------------------------------- Figure 8


def _pairs() -> pd.DataFrame:
    """Model 'g' (g_num vs g_img) on four metrics: numeric 1 + i, multimodal 3 + i except
    sign accuracy (numeric 40, multimodal 70); model 'h' (h_num vs h_img) on SMAPE only."""
    rows = []
    for i, metric in enumerate(("wrs_industry", "smape", "mase", "sign_accuracy")):
        numeric, image = (40.0, 70.0) if metric == "sign_accuracy" else (1.0 + i, 3.0 + i)
        better = "numeric+image" if metric == "sign_accuracy" else "numeric"
        rows.append(("g", "g_num", "g_img", metric, numeric, image, better))
    rows.append(("h", "h_num", "h_img", "smape", 2.0, 1.0, "numeric+image"))
    return pd.DataFrame(
        [
            dict(run_id=RUN, base_model=b, numeric_system_id=n, multimodal_system_id=m,
                 metric=metric, numeric_avg_raw_score=x, multimodal_avg_raw_score=y,
                 better_variant=better, perturbation_ids="P0 P1")
            for b, n, m, metric, x, y, better in rows
        ]
    )  # fmt: skip


def test_a_modality_pair_radar_per_model_from_its_own_rows():
    charts: dict[str, dict] = {}
    html = comparisons.modality_pairs_block(two_systems(modality_pairs=_pairs()), charts)
    assert list(charts) == ["modality-pair-g"]  # h has one metric: no radar
    spec = charts["modality-pair-g"]
    rows = {(r["series"], r["axis"]): r for r in _rows(spec)}
    assert set(rows) == {
        (s, a)
        for s in ("g_num", "g_img")
        for a in ("WRS industry", "SMAPE", "MASE", "Sign accuracy %")
    }
    for (system, axis), row in rows.items():
        numeric_better = axis != "Sign accuracy %"
        best = "g_num" if numeric_better else "g_img"
        assert row["position"] == pytest.approx(TOP if system == best else BOTTOM)
    assert rows["g_img", "MASE"]["value"] == 3.0 + 2
    assert rows["g_img", "MASE"]["column"] == "multimodal_avg_raw_score"
    assert rows["g_num", "MASE"]["column"] == "numeric_avg_raw_score"
    assert json.loads(rows["g_num", "MASE"]["where"]) == {
        "run_id": RUN,
        "base_model": "g",
        "metric": "mase",
    }
    assert _encoding(spec, "color")["scale"] == {
        "domain": ["g_num", "g_img"],
        "range": [BLUE, VERMILION],
    }
    (table,) = _tables(html)
    assert table[1:] == [
        ["g", "WRS industry", "1.00", "3.00", "numeric", "P0 P1"],
        ["g", "SMAPE", "2.00", "4.00", "numeric", "P0 P1"],
        ["g", "MASE", "3.00", "5.00", "numeric", "P0 P1"],
        ["g", "Sign accuracy %", "40.00", "70.00", "numeric+image", "P0 P1"],
        ["h", "SMAPE", "2.00", "1.00", "numeric+image", "P0 P1"],
    ]


def test_without_pairs_the_block_lists_the_seeded_ones():
    html = comparisons.modality_pairs_block(two_systems(), {})
    assert "The systems seed pairs ghost (ghost_a, ghost_b): a pair is compared" in _plain(html)
    bare = two_systems(systems=two_systems().systems.drop(columns="base_model"))
    assert "The systems seed declares no pairs" in comparisons.modality_pairs_block(bare, {})


def test_every_radar_of_the_page_is_in_its_html():
    charts: dict[str, dict] = {}
    html = comparisons.group_section(
        two_systems(group_comparisons=_groups(), modality_pairs=_pairs()), charts
    )
    assert page_specs(html) == charts
    assert set(charts) == {"groups-all-systems-foundation", "modality-pair-g"}


def test_a_point_without_a_value_carries_no_row():
    """A missing value draws no point (rank chart rows come only from present values)."""
    spec = figures.radar_for(
        "t",
        ("smape", "mase", "pie_company"),
        ["a", "b"],
        {"a": BLUE, "b": VERMILION},
        _values({("a", m): 1.0 for m in ("smape", "mase", "pie_company")} | {("b", "smape"): 2.0}),
        dict.fromkeys(("smape", "mase", "pie_company"), False),
    )
    assert sorted((r["series"], r["axis"]) for r in _rows(spec)) == [
        ("a", "MASE"), ("a", "PIE % company"), ("a", "SMAPE"), ("b", "SMAPE"),
    ]  # fmt: skip
    assert all(isinstance(r["value"], float) for r in _rows(spec))
