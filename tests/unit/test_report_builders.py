"""The report's HTML and chart builders, as pure functions over small hand-made frames (the
page shell: tests/unit/test_report_page.py; the report built from a real snapshot:
tests/integration/test_report.py)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pandas as pd
import pytest

from tests.support.report_frames import ROBUSTNESS, RUN, two_systems
from tsrate.html.charts import (
    RANK_FLOOR,
    chart_rows,
    check_specs,
    figure,
    page_specs,
    rank_positions,
    spec_rows,
)
from tsrate.robustness.report.render import (
    ReportData,
    build_report,
    format_number,
    num,
    reading_paragraph,
    study_section,
)

# ----------------------------------------------------------------------------- numbers


def test_format_number_precision():
    assert format_number(4491.3) == "4,491"
    assert format_number(3.14159) == "3.14"
    assert format_number(0.012345) == "0.0123"
    assert format_number(0) == "0.00"
    assert format_number(3.0, integer=True) == "3"
    assert format_number(None) == "–"
    assert format_number(float("nan")) == "–"


def test_num_carries_its_mart_row():
    html = num(0.5, "ratings", "raw_score", {"run_id": RUN, "metric": "smape"})
    assert 'data-mart="marts.ratings"' in html and 'data-column="raw_score"' in html
    where = json.loads(re.search(r'data-where="([^"]*)"', html).group(1).replace("&quot;", '"'))
    assert where == {"metric": "smape", "run_id": RUN}
    assert 'data-value="0.5"' in html and ">0.5<" in html
    assert "data-mart" not in num(None, "ratings", "raw_score", {})


# ----------------------------------------------------------------------------- html


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def test_report_is_self_contained_and_every_chart_is_a_vega_lite_spec():
    report = build_report(two_systems(), generated_at="now")
    tags = _tags(report.html)
    assert not [t for t, a in tags if t in ("link", "img", "iframe")]
    assert not [a for t, a in tags if t == "script" and a.get("src")]
    assert not re.search(r"(src|href)=\"https?:", report.html)
    # outside the inlined libraries (whose code names url( and @import), no fetch either;
    # the browser test checks that the page makes no request at all
    outside = re.sub(r"<script>.*?</script>", "", report.html, flags=re.S)
    assert "@import" not in outside and "url(" not in outside
    expected = {
        "radar-robustness-p1",
        "radar-robustness-p2",
        "radar-robustness-average",
        "radar-accuracy-p0",
        "radar-accuracy-average",
        "confounders-ape",
    }
    assert expected <= set(report.charts)
    assert "radar-robustness-p0" not in report.charts  # P0 has only WRS: 2 axes
    specs = page_specs(report.html)
    assert specs == report.charts  # every chart is in the page, spec for spec
    for spec in specs.values():
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v6")
    assert "<svg" not in outside  # drawn by Vega in the browser, not by hand
    assert "vegaEmbed" in report.html  # the libraries are inlined
    # specs are not validated while the report is written (it ends every run): here each
    # one is, against the Vega-Lite schema
    assert check_specs(report.html) == len(specs)


def test_the_spec_check_names_an_invalid_chart():
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "data": {"values": [{"x": 1, "y": 2}]},
        "mark": {"type": "line"},
        "encoding": {"x": {"field": "x", "type": "quantitative"}},
    }
    assert check_specs(figure("fine", spec, "a valid chart")) == 1
    planted = {**spec, "mark": {"type": "lnie"}}
    with pytest.raises(ValueError, match="chart 'planted' is not a valid Vega-Lite spec"):
        check_specs(figure("fine", spec, "") + figure("planted", planted, ""))


def test_verdict_comes_first_and_names_best_and_worst_with_the_gap():
    report = build_report(two_systems(), generated_at="now")
    assert report.html.index('id="verdict"') < report.html.index('id="study"')
    verdict = re.search(r'<section id="verdict">(.*?)</section>', report.html, re.S).group(1)
    plain = re.sub(r"<[^>]+>", "", verdict)
    # good: rating 1 everywhere, bad: 3 everywhere -> a gap of 2 levels
    assert "good is the most robust" in plain and "bad the least" in plain
    assert "a gap of 2.00 rating levels" in plain
    assert "lowest mean SMAPE" in plain
    overview = re.search(r'<section id="overview">(.*?)</section>', report.html, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", overview, re.S)
    assert len(rows) == 3 and "good" in rows[1] and "bad" in rows[2]


def test_every_number_in_the_report_names_its_mart():
    report = build_report(two_systems(), generated_at="now")
    spans = [a for t, a in _tags(report.html) if t == "span" and "num" in a.get("class", "")]
    traced = [a for a in spans if "data-mart" in a]
    assert len(traced) > 50
    assert all(a["data-mart"].startswith("marts.") and "data-value" in a for a in traced)
    assert all(json.loads(a["data-where"])["run_id"] == RUN for a in traced)
    # the rating tables read marts.ratings: 'good' has the lowest SMAPE under P1
    smape_p1 = [
        a
        for a in traced
        if a["data-mart"] == "marts.ratings"
        and json.loads(a["data-where"]).get("metric") == "smape"
        and json.loads(a["data-where"]).get("perturbation_id") == "P1"
        and a["data-column"] == "raw_score"
    ]
    assert [json.loads(a["data-where"])["system_id"] for a in smape_p1] == ["good", "bad"]
    assert [float(a["data-value"]) for a in smape_p1] == [2.0, 4.0]


def test_reading_names_the_most_robust_system_and_the_worst_perturbation():
    text = reading_paragraph(two_systems())
    plain = re.sub(r"<[^>]+>", "", text)
    assert "the most robust is good" in plain
    assert "the least robust bad" in plain
    assert "hurts most is P2" in plain
    assert "most accurate system by SMAPE is good" in plain
    assert "industry as the confounder shows more bias" in plain
    assert "(6.00 vs 2.00)" in plain


def test_reading_without_ratings_says_so():
    empty = two_systems(ratings=pd.DataFrame(), system_summary=pd.DataFrame())
    assert "No ratings" in reading_paragraph(empty)


def test_study_lists_unavailable_systems_and_perturbations_with_why():
    html = study_section(two_systems())
    plain = re.sub(r"<[^>]+>", "", html)
    assert "ghost_a (Ghost A)" in plain and "Needs ghost weights." in plain
    assert "Needs a ghost API." in plain
    assert "acts on image inputs, and no rated system takes images" in plain
    rated_table = plain.split("Systems rated")[1].split("Systems not rated in this run")[0]
    assert "good" in rated_table and "ghost" not in rated_table


def test_study_lists_seed_systems_left_out_of_the_study():
    systems = two_systems().systems
    extra = dict(system_id="spare", display_name="Spare", implementation="tsrate.systems.x",
                 base_model=None, modality="numeric", description="Needs the spare extra.")  # fmt: skip
    data = two_systems(systems=pd.concat([systems, pd.DataFrame([extra])], ignore_index=True))
    plain = re.sub(r"<[^>]+>", "", study_section(data))
    assert "spare (Spare)not in this study (var systems;" in plain
    assert "Needs the spare extra." in plain


def test_groups_with_one_side_and_no_pairs_are_explained_not_drawn():
    report = build_report(two_systems(), generated_at="now")
    plain = re.sub(r"<[^>]+>", "", report.html)
    assert "only one group has rated systems" in plain
    assert not [n for n in report.charts if n.startswith("groups-")]
    assert "No pair is rated in this run" in plain and "ghost (ghost_a, ghost_b)" in plain
    assert "No rated system in this scope" in plain  # without_baselines has no rows


def test_every_sql_mart_has_an_enforced_contract_and_a_documented_grain():
    """BI users rely on the marts' types and descriptions: check the YAML of each.

    dbt enforces contracts on SQL models only, so the Python marts are left out here.
    """
    import yaml

    from tsrate.config import project_dir

    marts = project_dir() / "models" / "marts"
    for sql in sorted(marts.glob("*.sql")):
        spec = yaml.safe_load(sql.with_suffix(".yml").read_text())
        model = next(m for m in spec["models"] if m["name"] == sql.stem)
        assert model["config"]["contract"]["enforced"] is True, sql.stem
        assert "one row per" in " ".join(model["description"].split()).lower(), sql.stem
        for column in model["columns"]:
            assert column.get("data_type") and column.get("description"), (sql.stem, column)


def test_loading_a_missing_or_foreign_snapshot_names_the_problem(tmp_path):
    import duckdb

    from tsrate import TsrateError
    from tsrate.robustness.report.render import load_report_data, write_report

    missing = tmp_path / "published" / "tsrate.duckdb"
    with pytest.raises(TsrateError, match="no published snapshot at .*tsrate.duckdb"):
        write_report(missing, tmp_path / "report.html")
    foreign = tmp_path / "other.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("create schema marts; create table marts.ratings (run_id varchar)")
    con.close()
    with pytest.raises(TsrateError, match="not a complete tsrate snapshot.*marts.system_summary"):
        load_report_data(foreign)
    assert not (tmp_path / "report.html").exists()


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


def _stability(data: ReportData, shares: dict) -> pd.DataFrame:
    """rating_stability rows at each published rating; share 1 unless given in ``shares``."""
    frame = data.ratings[["metric", "perturbation_id", "system_id", "rating", "raw_score"]].copy()
    frame["share"] = [
        shares.get((r.metric, r.perturbation_id, r.system_id), 1.0) for r in frame.itertuples()
    ]
    frame["ci_low"] = frame["raw_score"] - 0.5
    frame["ci_high"] = frame["raw_score"] + 0.5
    frame["n_valid"] = frame["n_resamples"] = 200
    frame["confidence"] = 0.95
    return frame.drop(columns="raw_score")


def test_every_rating_shows_its_share_and_interval_and_shaky_ones_are_flagged():
    from tsrate.robustness.report.render import rating_tables_section

    data = two_systems()
    data.stability = _stability(data, {("smape", "P1", "bad"): 0.55, ("mase", "P2", "good"): 0.6})
    html = rating_tables_section(data)
    spans = [a for t, a in _tags(html) if t == "span" and a.get("data-mart")]
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
    assert f"1 of {len(data.ratings)} ratings are shaky" in plain
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


# ----------------------------------------------------------------------------- separation


WRS_FLAT = "does not separate systems on this study: every system at the maximum WRS"
TIED = "all systems tied and the metric has no ideal value: the score does not separate them"


def _flagged_data() -> ReportData:
    """two_systems() with the flags of the marts: WRS company under P0 does not separate systems
    (at the paper's outcome only), the APE company scores under P1 are not separable, and
    MASE under P2 has a null rating with its reason; plus the scale-free outcome's ratings."""
    from tsrate.robustness.report.render import PAPER_OUTCOME

    data = two_systems()
    ratings = data.ratings.copy()
    ratings["rating"] = ratings["rating"].astype("Int64")
    ratings["rating_reason"] = None
    ratings["separable"] = pd.array([pd.NA] * len(ratings), dtype="boolean")
    ratings["separation_reason"] = None
    ape = (ratings["metric"] == "ape_company") & (ratings["perturbation_id"] == "P1")
    ratings.loc[ape, "separable"] = False
    for system, other in (("good", "bad"), ("bad", "good")):
        ratings.loc[ape & (ratings["system_id"] == system), "separation_reason"] = (
            f"not separable from {other}: the scores differ by 2, less than their spread 3"
        )
    mase = (ratings["metric"] == "mase") & (ratings["perturbation_id"] == "P2")
    ratings.loc[mase, "rating"] = pd.NA
    ratings.loc[mase, "rating_reason"] = TIED
    robust = ratings[ratings["metric"].isin(ROBUSTNESS)]
    cells = robust[["metric", "perturbation_id"]].drop_duplicates()
    separation = pd.concat(
        [cells.assign(outcome=PAPER_OUTCOME), cells.assign(outcome="relative_max_abs_residual")]
    )
    separation["separates_systems"] = True
    separation["separation_reason"] = None
    for metric, outcome in (
        ("wrs_company", PAPER_OUTCOME),
        ("wrs_industry", "relative_max_abs_residual"),
    ):
        at = (
            (separation["metric"] == metric)
            & (separation["perturbation_id"] == "P0")
            & (separation["outcome"] == outcome)
        )
        separation.loc[at, ["separates_systems", "separation_reason"]] = [False, WRS_FLAT]
    relative = robust.assign(
        outcome="relative_max_abs_residual", raw_score=robust["raw_score"] / 100
    )
    data.ratings = ratings
    data.separation = separation.reset_index(drop=True)
    data.outcome_ratings = relative.reset_index(drop=True)
    return data


def _rows(html: str) -> list[str]:
    return re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)


def test_scores_that_do_not_separate_systems_are_flagged_at_their_outcome():
    from tsrate.robustness.report.render import PAPER_OUTCOME, rating_tables_section

    html = rating_tables_section(_flagged_data())
    flags = [a for t, a in _tags(html) if t == "em" and "no-separation" in a.get("class", "")]
    wheres = [json.loads(a["data-where"]) for a in flags]
    # one in the paper's table (WRS company), one in the scale-free one (WRS industry)
    assert [(w["metric"], w["perturbation_id"], w["outcome"]) for w in wheres] == [
        ("wrs_company", "P0", PAPER_OUTCOME),
        ("wrs_industry", "P0", "relative_max_abs_residual"),
    ]
    assert all(a["data-mart"] == "marts.robustness_scores" for a in flags)
    assert all(a["data-column"] == "separates_systems" and a["data-value"] == "0.0" for a in flags)
    assert all(a["data-text-column"] == "separation_reason" for a in flags)
    flagged_rows = [r for r in _rows(html) if WRS_FLAT in r]
    assert len(flagged_rows) == 2
    assert "WRS company" in flagged_rows[0] and "<td>P0</td>" in flagged_rows[0]
    assert "WRS industry" in flagged_rows[1] and "<td>P0</td>" in flagged_rows[1]
    plain = re.sub(r"<[^>]+>", "", html)
    assert f"⊘ {WRS_FLAT}" in plain
    assert "do not separate systems on this study (⊘): 1;" in plain


def test_systems_within_their_spread_are_marked_not_separable():
    from tsrate.robustness.report.render import rating_tables_section

    html = rating_tables_section(_flagged_data())
    paper, scale_free = html.split('data-outcome="relative_max_abs_residual"')
    marks = [a for t, a in _tags(paper) if t == "em" and "not-separable" in a.get("class", "")]
    assert [json.loads(a["data-where"])["system_id"] for a in marks] == ["good", "bad"]
    assert {json.loads(a["data-where"])["metric"] for a in marks} == {"ape_company"}
    assert not {"outcome"} & {k for a in marks for k in json.loads(a["data-where"])}
    # the scale-free rows carry their own flags, keyed by their outcome
    other = [a for t, a in _tags(scale_free) if t == "em" and "not-separable" in a.get("class", "")]
    assert [json.loads(a["data-where"])["outcome"] for a in other] == [
        "relative_max_abs_residual"
    ] * 2
    assert all(a["data-column"] == "separable" and a["data-value"] == "0.0" for a in marks)
    row = next(r for r in _rows(html) if "APE company" in r and "<td>P1</td>" in r)
    assert "not separable from bad: the scores differ by 2" in row
    assert "not separable from good" in row
    other = next(r for r in _rows(html) if "APE company" in r and "<td>P2</td>" in r)
    assert "not-separable" not in other
    plain = re.sub(r"<[^>]+>", "", html)
    assert "over treatment draws (≈): 2;" in plain


def test_a_null_rating_shows_its_reason():
    from tsrate.robustness.report.render import rating_tables_section

    html = rating_tables_section(_flagged_data())
    row = next(r for r in _rows(html) if "MASE" in r and "<td>P2</td>" in r)
    assert row.count('<span class="rating none"><span class="num missing">–</span>') == 2
    reasons = [a for t, a in _tags(row) if t == "em" and "rating-reason" in a.get("class", "")]
    assert len(reasons) == 2
    assert all(a["data-text-column"] == "rating_reason" for a in reasons)
    assert row.count(TIED) == 2
    assert "rating-reason" not in "".join(r for r in _rows(html) if "MASE" not in r)
    assert "ratings with a rating reason: 2." in re.sub(r"<[^>]+>", "", html)


def test_the_scale_free_outcome_has_its_own_labelled_table():
    from tsrate.robustness.report.render import PAPER_OUTCOME, rating_tables_section

    data = _flagged_data()
    html = rating_tables_section(data)
    paper, scale_free = html.split('data-outcome="relative_max_abs_residual"')
    assert "Robustness — the paper&#x27;s outcome: R^max" in paper
    assert "scale-free outcome: R^max divided by" in scale_free
    spans = [a for t, a in _tags(scale_free) if t == "span" and a.get("data-mart")]
    raw = [a for a in spans if a["data-column"] == "raw_score"]
    assert len(raw) == len(data.outcome_ratings)
    expected = {
        (r.metric, r.perturbation_id, r.system_id): r.raw_score
        for r in data.outcome_ratings.itertuples()
    }
    for a in raw:
        where = json.loads(a["data-where"])
        assert where["outcome"] == "relative_max_abs_residual"
        key = (where["metric"], where["perturbation_id"], where["system_id"])
        assert float(a["data-value"]) == expected[key]
    assert not [a for a in spans if a["data-mart"] == "marts.rating_stability"]
    # the paper's table is unchanged: its raw scores carry no outcome (read at R^max)
    paper_raw = [
        json.loads(a["data-where"])
        for t, a in _tags(paper)
        if t == "span" and a.get("data-column") == "raw_score"
    ]
    assert paper_raw and all("outcome" not in w for w in paper_raw)
    assert PAPER_OUTCOME not in {w.get("outcome") for w in paper_raw}


def test_a_report_without_flags_or_other_outcomes_has_none():
    from tsrate.robustness.report.render import rating_tables_section

    html = rating_tables_section(two_systems())
    assert 'class="flag' not in html and "data-outcome" not in html
    plain = re.sub(r"<[^>]+>", "", html)
    assert "(⊘): 0; " in plain and "(≈): 0; " in plain and "rating reason: 0." in plain


# ----------------------------------------------------------------------------- lookups


def test_cell_lookups_find_the_rows_a_boolean_mask_finds():
    """The report's indexed lookup (one index per frame and key columns) returns the first
    row that ``frame[(frame[k] == v) & ...]`` returns, for hits, misses, nulls, duplicates,
    integer keys, and a frame changed after it was indexed (a new frame object)."""
    import random

    from tsrate.robustness.report.render import first_row, float_value

    rng = random.Random(7)
    systems = ["naive", "arima", None, "fracast"]
    frame = pd.DataFrame(
        {
            "system_id": [rng.choice(systems) for _ in range(200)],
            "metric": [rng.choice(["smape", "mase", "wrs_company"]) for _ in range(200)],
            "step": [rng.randint(1, 5) for _ in range(200)],
            "score": [rng.random() if rng.random() > 0.1 else None for _ in range(200)],
        }
    )
    for _ in range(300):
        where = {
            "system_id": rng.choice([*systems[:2], "fracast", "missing"]),
            "metric": rng.choice(["smape", "mase", "wrs_company"]),
            "step": rng.randint(0, 6),
        }
        mask = pd.Series(True, index=frame.index)
        for key, value in where.items():
            mask &= frame[key] == value
        expected = frame.index[mask.to_numpy()]
        got = first_row(frame, where)
        assert got == (int(expected[0]) if len(expected) else None), where
        value = float_value(frame, "score", **where)
        if got is None or pd.isna(frame["score"].iat[got]):
            assert value is None
        else:
            assert value == frame["score"].iat[got]
    changed = frame.iloc[::-1].reset_index(drop=True)
    where = {"system_id": "naive", "metric": "smape", "step": 3}
    mask = (
        (changed["system_id"] == "naive") & (changed["metric"] == "smape") & (changed["step"] == 3)
    )
    hits = changed.index[mask.to_numpy()]
    assert first_row(changed, where) == (int(hits[0]) if len(hits) else None)
    # float keys take the mask path: 1.0 finds the rows the mask finds
    assert first_row(frame, {"step": 1.0}) == int(frame.index[frame["step"] == 1][0])


def _verdict_text(data: ReportData) -> str:
    report = build_report(data, generated_at="now")
    verdict = re.search(r'<section id="verdict">(.*?)</section>', report.html, re.S).group(1)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", verdict))


def _with_twin(base: ReportData, of: str = "good") -> ReportData:
    """``base`` plus a system 'twin' rated exactly as ``of``."""
    twin = {
        name: pd.concat([frame, frame[frame["system_id"] == of].assign(system_id="twin")])
        for name, frame in (("system_summary", base.system_summary), ("ratings", base.ratings))
    }
    return two_systems(**twin)


def test_verdict_names_systems_that_tie_together():
    """Two systems with the same mean rating are both the most robust: the verdict does not
    crown the first by name order (the default study's fracast and naive tie at 1.90)."""
    tied = _with_twin(two_systems())
    tied.stability = _stability(tied, {("smape", "P1", "twin"): 0.3})  # twin's one shaky
    plain = _verdict_text(tied)
    assert "Of 3 rated systems, good and twin tie as the most robust" in plain
    assert "and bad the least" in plain
    assert "is the most robust" not in plain
    # the firmness counts both leaders' ratings, each named
    n = int((tied.ratings["system_id"] == "good").sum())
    assert (
        f"How firm: 1 of the leaders' {2 * n} ratings are shaky (good 0 of {n}, twin 1 of {n};"
        in plain
    )
    laggards = _verdict_text(_with_twin(two_systems(), of="bad"))
    assert "good is the most robust" in laggards and "bad and twin tie as the least" in laggards


def test_verdict_says_when_the_ratings_do_not_separate_the_systems():
    base = two_systems()
    summary = base.system_summary.assign(avg_rating=2.0)
    plain = _verdict_text(two_systems(system_summary=summary))
    assert "All 2 rated systems have the same mean robustness rating" in plain
    assert "the ratings do not separate them" in plain
    assert "most robust" not in plain


def _board(good: tuple[float, float], bad: tuple[float, float]) -> pd.DataFrame:
    """marts.leaderboard's all-perturbation SMAPE rows: (lower, upper) skill-score bounds."""
    return pd.DataFrame(
        [dict(BOARD_ROW, scope="all", system_id=system, skill_score=(low + high) / 2,
              skill_score_lower=low, skill_score_upper=high)
         for system, (low, high) in (("good", good), ("bad", bad))]
        + [dict(BOARD_ROW, scope="P1", system_id="bad", skill_score=0.9,
                skill_score_lower=0.8, skill_score_upper=0.95)]  # another scope: not read
    )  # fmt: skip


BOARD_ROW = dict(run_id=RUN, metric="smape", win_rate=0.5, win_rate_lower=0.4,
                 win_rate_upper=0.6, average_rank=1.5, n_tasks=6, num_failures=0,
                 baseline_system_id="bad", reason=None)  # fmt: skip


@pytest.mark.parametrize(
    ("good", "bad", "says"),
    [
        ((0.3, 0.4), (0.1, 0.2), "good has the lowest mean SMAPE (3.00), clearly ahead of bad"),
        (
            (0.1, 0.3),
            (0.2, 0.4),
            "good has the lowest mean SMAPE (3.00), but not separably from bad",
        ),
        ((0.05, 0.1), (0.2, 0.3), "yet the leaderboard ranks bad (5.00) ahead"),
    ],
)
def test_verdict_says_whether_the_leaderboard_separates_the_lowest_smape(good, bad, says):
    """The runner-up by mean SMAPE against the leader, by the leaderboard's 95 % skill-score
    intervals (all perturbations): apart, overlapping, or apart the other way."""
    plain = _verdict_text(two_systems(leaderboard=_board(good, bad)))
    assert says in plain
    assert (
        f"([{good[0]:.3g}, {good[1]:.3g}] vs [{bad[0]:.3g}, {bad[1]:.3g}])"
        in plain.replace("0.0,", "0,")
        or f"[{good[0]}, {good[1]}] vs [{bad[0]}, {bad[1]}]" in plain
    )


def test_verdict_without_a_leaderboard_says_nothing_of_separation():
    plain = _verdict_text(two_systems())
    assert "lowest mean SMAPE (3.00) and bad the highest (5.00)" in plain
    assert "leaderboard" not in plain


@pytest.mark.parametrize(
    ("good", "bad", "says"),
    [
        ((0.3, 0.4), (0.1, 0.2), "By MASE, good has the lowest mean too (3.00), clearly ahead of"),
        ((0.1, 0.3), (0.2, 0.4), "By MASE, good has the lowest mean too (3.00), but not separably"),
        ((0.05, 0.1), (0.2, 0.3), "By MASE, good has the lowest mean too (3.00), yet the leader"),
    ],
)
def test_verdict_says_whether_the_leaderboard_separates_the_lowest_mase(good, bad, says):
    """The lowest mean MASE against the runner-up, by the leaderboard's MASE skill-score
    intervals, and never by its SMAPE rows (the default study's fracast is clearly ahead of
    naive on SMAPE but not on MASE)."""
    board = _board((0.3, 0.4), (0.1, 0.2))  # SMAPE: good clearly ahead
    mase = _board(good, bad).assign(metric="mase")
    plain = _verdict_text(two_systems(leaderboard=pd.concat([board, mase], ignore_index=True)))
    assert says in plain
    assert "MASE skill scores' 95 %" in plain
    mase_sentence = plain[plain.index("By MASE") :]
    assert f"[{good[0]:.3g}, {good[1]:.3g}] vs [{bad[0]:.3g}, {bad[1]:.3g}]" in mase_sentence


def test_verdict_names_the_lowest_mase_when_it_is_not_the_lowest_smape():
    base = two_systems()
    summary = base.system_summary.copy()
    mase = summary["metric"] == "mase"
    summary.loc[mase, "avg_raw_score"] = summary.loc[mase, "system_id"].map(
        {"good": 4.0, "bad": 2.5}
    )
    plain = _verdict_text(two_systems(system_summary=summary))
    assert "good has the lowest mean SMAPE (3.00)" in plain
    assert "By MASE, bad has the lowest mean (2.50)." in plain
    assert "lowest mean too" not in plain
