"""The report's uncertainty and forecast builders, as pure functions over small hand-made
frames: the stability share and interval of every rating and the shaky ones, table 2, the
radar's rank positions, and the forecast traces' windows, range and plots (the page shell: tests/unit/test_report_page.py; the report built from a real snapshot:
tests/integration/test_report_marts.py and its neighbours).
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from tests.support.report_builders import (
    html_tags,
    stability_rows,
)
from tests.support.report_frames import RUN, two_systems
from tsrate.html.charts import (
    RANK_FLOOR,
    chart_rows,
    rank_positions,
    spec_rows,
)

# ----------------------------------------------------------------------------- uncertainty


def test_format_share_rounds_down_so_a_printed_60_percent_is_never_shaky():
    from tsrate.robustness.report.render import format_share, is_shaky

    assert format_share(0.599) == "59 %"
    assert format_share(0.6) == "60 %"
    assert format_share(0.995) == "99 %"
    assert format_share(1.0) == "100 %"
    assert format_share(0.0) == "0 %"
    assert format_share(None) == "–" and format_share(float("nan")) == "–"
    for share in (0.0, 0.3, 0.5999, 0.6, 0.61, 0.995, 1.0):
        printed = int(format_share(share).split()[0])
        assert is_shaky(share) == (printed < 60), share


def test_shaky_threshold_is_sixty_percent():
    from tsrate.robustness.report.render import SHAKY_SHARE, is_shaky

    assert SHAKY_SHARE == 0.6
    assert is_shaky(0.5999) and is_shaky(0.0)
    assert not is_shaky(0.6) and not is_shaky(1.0)
    assert not is_shaky(None) and not is_shaky(float("nan"))  # unknown is not called shaky


def test_every_rating_shows_its_share_and_interval_and_shaky_ones_are_flagged():
    from tsrate.robustness.report.render import rating_tables_section

    data = two_systems()
    data.stability = stability_rows(
        data, {("smape", "P1", "bad"): 0.55, ("mase", "P2", "good"): 0.6}
    )
    html = rating_tables_section(data)
    spans = [a for t, a in html_tags(html) if t == "span" and a.get("data-mart")]
    shares = [a for a in spans if a["data-column"] == "share"]
    assert len(shares) == len(data.ratings)  # one per rating
    assert all(a["data-mart"] == "marts.rating_stability" for a in shares)
    assert all(a["data-format"] == "percent" for a in shares)
    where = json.loads(
        next(
            a["data-where"]
            for a in shares
            if json.loads(a["data-where"])["system_id"] == "bad"
            and json.loads(a["data-where"])["metric"] == "smape"
            and json.loads(a["data-where"])["perturbation_id"] == "P1"
        )
    )
    rating = data.ratings.query(
        "metric == 'smape' and perturbation_id == 'P1' and system_id == 'bad'"
    )
    assert where["rating_level"] == int(rating["rating"].iloc[0])  # the share AT the rating
    assert {a["data-column"] for a in spans} >= {
        "rating",
        "raw_score",
        "ci_low",
        "ci_high",
        "share",
    }
    assert html.count('class="share shaky"') == 1  # 0.55 only; 0.6 is not shaky
    assert html.count("⚠</span>") == 1
    plain = re.sub(r"<[^>]+>", "", html)
    assert f"1 of {len(data.ratings)} ratings is shaky" in plain
    assert "bad · SMAPE · P1" not in plain  # shown in place, not as a list
    assert "55 % ⚠" in plain


def test_ratings_without_a_stability_mart_say_so():
    from tsrate.robustness.report.render import rating_tables_section

    html = rating_tables_section(two_systems())
    assert "has no <code>marts.rating_stability</code>" in html
    assert 'data-column="share"' not in html


def test_table_2_is_a_real_table_with_one_column_per_system_and_perturbation():
    from tsrate.robustness.report.render import summary_section

    html = summary_section(two_systems())
    assert "{" not in re.sub(r"<[^>]+>", "", html)  # no dict-like text
    tables = re.findall(r'<table class="table2">(.*?)</table>', html)
    assert len(tables) == 2
    headers = [re.findall(r"<th>(.*?)</th>", t) for t in tables]
    assert [re.sub(r"<[^>]+>", "", h) for h in headers[0]] == ["Metric", "good", "bad"]
    assert headers[1] == ["Metric", "P0", "P1", "P2"]
    # SMAPE row: good (mean 1 + (0+1+5)/3 = 3.0) beats bad (5.0) and is bold
    row = re.search(r"<tr><td>SMAPE ↓</td>(.*?)</tr>", tables[0]).group(1)
    cells = re.findall(r"<td>(.*?)</td>", row)
    assert '<b class="best">' in cells[0] and ">3.00<" in cells[0]
    assert "best" not in cells[1] and ">5.00<" in cells[1]


def test_radar_rank_positions_space_systems_evenly_whatever_an_outlier_does():
    assert rank_positions([1.0, 3.0, 2.0]) == pytest.approx([1.0, RANK_FLOOR, (1 + RANK_FLOOR) / 2])
    # an outlier moves only itself
    assert rank_positions([1.0, 1000.0, 2.0]) == rank_positions([1.0, 3.0, 2.0])
    assert rank_positions([1.0, 3.0], higher_is_better=True) == pytest.approx([RANK_FLOOR, 1.0])
    assert rank_positions([2.0, 2.0, 5.0]) == pytest.approx([1.0, 1.0, RANK_FLOOR])
    assert rank_positions([4.0, None, float("nan")]) == [1.0, None, None]


# ----------------------------------------------------------------------------- forecasts


def test_choose_trace_windows_hand_worked():
    """Per system in order, its 2 largest disagreements; a cell taken earlier is skipped.

    a: X 0.9, Y 0.5, Z 0.1      -> X, Y
    b: X 0.8 (taken), W 0.3, Z 0.3 (tie: W's ticker AAA < Z's ZZZ), V nan -> W, Z
    c: Y 0.7 (taken), X 0.2 (taken), W 0.1 (taken), Z 0.05 (taken) -> nothing left
    """
    from tsrate.robustness.report.render import choose_trace_windows

    d1, d2 = pd.Timestamp("2022-01-03"), pd.Timestamp("2022-01-04")
    cells = {
        "X": ("MMM", d1, "P0"),
        "Y": ("MMM", d2, "P1"),
        "Z": ("ZZZ", d1, "P0"),
        "W": ("AAA", d2, "P0"),
        "V": ("AAA", d1, "P0"),
    }
    scores = {
        "a": {"X": 0.9, "Y": 0.5, "Z": 0.1},
        "b": {"X": 0.8, "W": 0.3, "Z": 0.3, "V": float("nan")},
        "c": {"Y": 0.7, "X": 0.2, "W": 0.1, "Z": 0.05},
    }
    frame = pd.DataFrame(
        [
            dict(system_id=s, ticker=cells[c][0], window_end_date=cells[c][1],
                 perturbation_id=cells[c][2], disagreement=v)
            for s, values in scores.items()
            for c, v in values.items()
        ]
    )  # fmt: skip
    chosen = choose_trace_windows(frame, ["a", "b", "c"])
    got = [
        (r.system_id, r.ticker, r.window_end_date, r.perturbation_id) for r in chosen.itertuples()
    ]
    assert got == [
        ("a", *cells["X"]),
        ("a", *cells["Y"]),
        ("b", *cells["W"]),
        ("b", *cells["Z"]),
    ]
    # one window per system, and the order of systems decides who gets a shared cell
    one = choose_trace_windows(frame, ["c", "a", "b"], per_system=1)
    assert [(r.system_id, r.ticker) for r in one.itertuples()] == [
        ("c", "MMM"), ("a", "MMM"), ("b", "AAA"),
    ]  # fmt: skip
    assert [r.window_end_date for r in one.itertuples()] == [d2, d1, d2]
    assert choose_trace_windows(frame.iloc[0:0], ["a"]).empty


def test_trace_y_range_pads_the_clean_prices():
    from tsrate.robustness.report.render import trace_y_range

    # range 10 > 20 % of the mean level 105 (21)? no: the pad is 21
    assert trace_y_range([100.0, 110.0]) == pytest.approx((79.0, 131.0))
    # a wide range pads by itself: range 100 > 20 % of 100
    assert trace_y_range([50.0, 150.0]) == pytest.approx((-50.0, 250.0))
    assert trace_y_range([]) is None


def test_forecast_plots_are_drawn_for_the_chosen_windows():
    from tsrate.robustness.report.render import forecasts_section

    window = pd.Timestamp("2022-03-01")
    traces = pd.DataFrame(
        [
            dict(run_id=RUN, system_id=s, ticker="AAA", window_end_date=window,
                 perturbation_id="P1", horizon_step=h, target_date=window + pd.Timedelta(days=h),
                 forecast=f + h, actual=100.0 + h, residual=f + h - 100.0 - h)
            for s, f in (("good", 100.0), ("bad", 130.0))
            for h in (1, 2)
        ]
    )  # fmt: skip
    contexts = pd.DataFrame(
        [
            dict(ticker="AAA", window_end_date=window, perturbation_id="P1", context_step=k,
                 price_date=window - pd.Timedelta(days=3 - k), clean_value=99.0 + k,
                 input_value=0.0 if k == 3 else 99.0 + k)
            for k in (1, 2, 3)
        ]
    )  # fmt: skip
    chosen = pd.DataFrame(
        [dict(system_id="bad", ticker="AAA", window_end_date=window, perturbation_id="P1",
              disagreement=0.1)]
    )  # fmt: skip
    data = two_systems(trace_windows=chosen, traces=traces, contexts=contexts)
    charts: dict[str, dict] = {}
    html = forecasts_section(data, charts)
    assert list(charts) == ["forecast-aaa-2022-03-01-p1"]
    rows = list(spec_rows(charts["forecast-aaa-2022-03-01-p1"]))
    names = list(dict.fromkeys(r["line"] for r in rows if "line" in r))
    assert names == ["actual", "input (P1)", "good", "bad"]
    traced = [r for r in rows if "mart" in r]
    # 3 context values + 2 actuals, 3 inputs, 2 forecasts per system
    assert len(traced) == 3 + 2 + 3 + 2 * 2
    assert len(chart_rows(html)) == len(traced)
    forecast = [r for r in traced if r["column"] == "forecast"]
    assert {json.loads(r["where"])["system_id"] for r in forecast} == {"good", "bad"}
    assert json.loads(forecast[0]["where"])["window_end_date"] == "2022-03-01"
    assert "Chosen for <b>bad</b>" in html
    empty = forecasts_section(two_systems(), {})
    assert "No window has forecasts of two or more systems" in empty
