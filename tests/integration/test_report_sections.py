"""The report end to end, its sections on the page: every section with its charts as
Vega-Lite specs, the forecast traces and plots, each rating's stability and the shaky ones
counted, and the page opened in Chromium (no console errors, the charts drawn, the verdict's
numbers recomputed from the snapshot).

The study (tests/integration/report_study.py) runs the naive, random and biased systems on
four companies, relabelled in a copy of the project's systems seed so that every section has
something to show; the dbt build and the report are the real ones, built once per test
process.
"""

from __future__ import annotations

import json
import math
import re

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.integration.browser import Chromium, decode_png, find_chromium
from tests.integration.report_study import (
    STUDY,
    built_report,
)
from tests.support.report_marts import (
    outcome_clause,
    traced_elements,
)
from tsrate.config import project_dir
from tsrate.html.charts import PALETTE, page_specs
from tsrate.robustness.report.render import (
    SHAKY_SHARE,
    TRACE_WINDOWS_PER_SYSTEM,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reported(tmp_path_factory, session_parse):
    return built_report(tmp_path_factory, session_parse)


def test_report_has_every_section_and_its_charts_as_vega_lite_specs(reported):
    html = reported["output"].read_text()
    for heading in (
        "This study and the paper's",
        "in the shape of Table 2",
        "in the shape of Tables 5–6",
        "The paper's printed numbers beside this run's",
        "Reading the results",
        "The study",
        "Table 2",
        "Tables 5–6",
        "Figures 5–6",
        "Figure 4",
        "Figures 7–9",
        "Figure 8",
        "Forecasts beside actuals",
    ):
        assert heading in html, heading
    plain = re.sub(r"<[^>]+>", "", html)
    # seed rows without an implementation are listed as not runnable, with the seed's reason
    seed = pd.read_csv(project_dir() / "seeds" / "systems.csv", dtype=str, keep_default_na=False)
    for row in seed[seed["implementation"] == ""].itertuples():
        assert f"{row.system_id} ({row.display_name})" in plain
    # random is relabelled multi-modal here, so P4-P6 are simply not in the study
    assert "P4Centre pixel black" in plain and "not in this study" in plain
    charts = sorted((reported["output"].parent / "report-charts").glob("*.vl.json"))
    names = {chart.name.removesuffix(".vl.json") for chart in charts}
    assert {
        "radar-robustness-p1",
        "radar-robustness-average",
        "radar-accuracy-p0",
        "radar-accuracy-average",
        "confounders-wrs",
        "confounders-ape",
        "confounders-pie",
        "groups-all-systems-foundation",
        "groups-all-systems-modality",
        "groups-all-systems-purpose",
        "groups-all-systems-architecture",
        "modality-pair-demo",
    } <= names
    forecasts = [n for n in names if n.startswith("forecast-")]
    assert len(forecasts) == TRACE_WINDOWS_PER_SYSTEM * len(STUDY.systems)
    specs = page_specs(html)
    assert set(specs) == names  # each spec file is the page's own chart
    for chart in charts:
        assert json.loads(chart.read_text()) == specs[chart.name.removesuffix(".vl.json")]
    assert not re.search(r"(src|href)=\"https?:", html)


def test_forecast_traces_are_published_and_match_window_errors(reported):
    """The mart holds every forecast step beside its actual; tsrate publish carries it."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        kind = con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'marts' "
            "and table_name = 'forecast_traces'"
        ).fetchone()[0]
        traces = con.execute("select * from marts.forecast_traces").df()
        errors = con.execute("select * from marts.window_errors").df()
    finally:
        con.close()
    assert kind == 1  # a table in the snapshot (a view in the live warehouse)
    keys = ["system_id", "ticker", "window_end_date", "perturbation_id"]
    assert len(traces) == len(errors) * STUDY.horizon
    assert not traces.duplicated([*keys, "horizon_step"]).any()
    np.testing.assert_allclose(traces["residual"], traces["forecast"] - traces["actual"])
    per_window = traces.assign(abs_residual=traces["residual"].abs()).groupby(keys)
    merged = errors.merge(per_window["abs_residual"].max().rename("rmax").reset_index(), on=keys)
    assert len(merged) == len(errors)
    np.testing.assert_allclose(merged["rmax"], merged["max_abs_residual"], rtol=1e-12)
    # the consensus is the median over systems at each step (numpy, independently)
    step = ["ticker", "window_end_date", "perturbation_id", "horizon_step"]
    median = traces.groupby(step)["forecast"].transform(lambda f: np.median(f.to_numpy()))
    np.testing.assert_allclose(traces["consensus_forecast"], median, rtol=1e-12)
    assert (traces["n_systems"] == traces.groupby(step)["forecast"].transform("count")).all()


def test_forecast_plots_show_where_each_system_strays_most(reported):
    """The plotted windows follow the stated rule, recomputed here from the snapshot."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        traces = con.execute("select * from marts.forecast_traces").df()
    finally:
        con.close()
    traces["dev"] = (traces["forecast"] - traces["consensus_forecast"]).abs() / traces["actual"]
    cells = ["ticker", "window_end_date", "perturbation_id"]
    scores = traces.groupby(["system_id", *cells])["dev"].mean().reset_index()
    taken, expected = set(), []
    for system in STUDY.systems:
        mine = scores[scores["system_id"] == system].sort_values(
            ["dev", *cells], ascending=[False, True, True, True]
        )
        picked = [
            c
            for c in zip(
                mine["ticker"], mine["window_end_date"], mine["perturbation_id"], strict=True
            )
            if c not in taken
        ][:TRACE_WINDOWS_PER_SYSTEM]
        taken.update(picked)
        expected += [(system, *c) for c in picked]
    html = reported["output"].read_text()
    shown = re.findall(
        r'data-chart="forecast-([a-z]+)-(\d{4}-\d{2}-\d{2})-(p\d)".*?'
        r"Chosen for <b>([^<]+)</b>",
        html,
        flags=re.S,
    )
    assert [(s, t.upper(), d, p.upper()) for t, d, p, s in shown] == [
        (s, t, f"{pd.Timestamp(d):%Y-%m-%d}", p) for s, t, d, p in expected
    ]


def test_every_rating_shows_its_stability_and_the_shaky_ones_are_counted(reported):
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        at_paper_outcome = {  # robustness marts may carry an outcome: the report reads R^max
            mart: outcome_clause(con, mart, alias)
            for mart, alias in (("ratings", "r"), ("rating_stability", "s"))
        }
        at_rating = con.execute(
            "select s.metric, s.perturbation_id, s.system_id, s.share from marts.rating_stability s "
            "join marts.ratings r using (run_id, metric, perturbation_id, system_id) "
            "where s.rating_level = r.rating" + "".join(at_paper_outcome.values())
        ).df()
        n_ratings = con.execute(
            "select count(*) from marts.ratings r where true" + at_paper_outcome["ratings"]
        ).fetchone()[0]
    finally:
        con.close()
    assert len(at_rating) == n_ratings
    html = reported["output"].read_text()
    shares = [
        item for item in traced_elements(html)
        if item["data-mart"] == "marts.rating_stability" and item["data-column"] == "share"
    ]  # fmt: skip
    assert len(shares) == n_ratings
    shaky = int((at_rating["share"] < SHAKY_SHARE).sum())
    assert html.count('class="share shaky"') == shaky
    plain = re.sub(r"<[^>]+>", "", html)
    noun = "rating" if n_ratings == 1 else "ratings"
    assert f"{shaky} of {n_ratings} {noun} {'is' if shaky == 1 else 'are'} shaky" in plain


# ----------------------------------------------------------------------------- browser

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium binary (install Debian's chromium: apt-get install chromium, "
    "or set TSRATE_CHROMIUM); .ci/run tries to install it",
)


def _palette_pixels(image: np.ndarray, colour: str, tolerance: int = 12) -> int:
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(image.astype(int) - rgb).max(axis=2) <= tolerance).sum())


@needs_chromium
def test_report_renders_in_chromium_without_console_errors(reported):
    html_text = reported["output"].read_text()
    n_specs = len(page_specs(html_text))
    with Chromium(CHROMIUM) as browser:
        browser.open(reported["output"].as_uri())
        charts = browser.wait_until(
            "window.tsrateCharts && window.tsrateCharts.rendered + "
            "window.tsrateCharts.failed.length === window.tsrateCharts.total && "
            "window.tsrateCharts"
        )
        boxes = browser.evaluate(
            "Array.from(document.querySelectorAll('.vega-chart svg')).map(svg => {"
            " const r = svg.getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })"
        )
        height = browser.evaluate("document.documentElement.scrollHeight")
        page = browser.screenshot({"x": 0, "y": 0, "width": 1300, "height": height})
        (reported["root"] / "report.png").write_bytes(page)  # for a person to look at
        shots = [
            decode_png(browser.screenshot({"x": x, "y": y, "width": w, "height": h}))
            for x, y, w, h in (boxes[0], boxes[-1])
        ]
        stability = browser.evaluate(
            "(() => { const all = Array.from(document.querySelectorAll('#ratings .share'));"
            " const shaky = all.filter(e => e.classList.contains('shaky'));"
            " const visible = all.filter(e => e.getBoundingClientRect().width > 0);"
            " return [all.length, visible.length, shaky.length,"
            " shaky.length ? getComputedStyle(shaky[0]).backgroundColor : ''];"
            " })()"
        )
        flags = browser.evaluate(
            "Array.from(document.querySelectorAll('#ratings em.flag')).map(e => {"
            " const r = e.getBoundingClientRect(); return [r.width, r.height,"
            " getComputedStyle(e).backgroundColor]; })"
        )
        plots = browser.evaluate(
            "Array.from(document.querySelectorAll('#forecasts .vega-chart svg')).map(svg => {"
            " const r = svg.getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height,"
            " svg.querySelectorAll('.mark-line path').length]; })"
        )
        x, y, w, h, _ = plots[0]
        plot = decode_png(browser.screenshot({"x": x, "y": y, "width": w, "height": h}))
        width = browser.evaluate("document.documentElement.scrollWidth")
        errors = browser.errors()
        network = browser.network_requests()
    assert errors == []
    assert network == []  # the libraries are inlined: nothing is fetched
    assert charts["failed"] == [] and charts["rendered"] == charts["total"] == n_specs
    assert len(boxes) == n_specs  # every spec became an SVG
    assert width <= 1300
    assert len(flags) == len(traced_elements(html_text, "data-text-mart"))
    assert flags and all(w > 20 and h > 5 for w, h, _ in flags)  # every flag on screen
    assert all(bg != "rgba(0, 0, 0, 0)" for _, _, bg in flags)  # and highlighted
    n_ratings = html_text.count('data-column="share"')
    assert stability[0] == stability[1] == n_ratings  # every rating's share is on screen
    if stability[2]:
        assert stability[3] == "rgb(255, 225, 179)"  # shaky ones are highlighted
    assert len(plots) == TRACE_WINDOWS_PER_SYSTEM * len(STUDY.systems)
    assert all(w > 300 and h > 200 and lines >= 3 for _, _, w, h, lines in plots)
    assert len(np.unique(plot.reshape(-1, 3), axis=0)) > 20
    assert _palette_pixels(plot, "#222222", tolerance=20) > 30  # the actual series
    assert all(w > 200 and h > 150 for _, _, w, h in boxes)
    for image in shots:
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 20  # not blank
        assert _palette_pixels(image, PALETTE[0]) > 50  # the first series' colour is drawn
        assert _palette_pixels(image, PALETTE[1]) > 50


@needs_chromium
def test_the_verdict_numbers_equal_the_marts(reported):
    """The verdict's best and worst system, their gap and the shaky counts, recomputed
    from the snapshot (pandas), and the verdict is the first section on screen."""
    con = duckdb.connect(str(reported["snapshot"]), read_only=True)
    try:
        summary = con.execute("select * from marts.system_summary").df()
        board = con.execute("select * from marts.leaderboard where scope = 'all'").df()
        judged = con.execute(
            "select r.system_id, s.share from marts.ratings r join marts.rating_stability s "
            "using (run_id, metric, perturbation_id, system_id) where s.rating_level = r.rating"
            + outcome_clause(con, "ratings", "r")
            + outcome_clause(con, "rating_stability", "s")
        ).df()
        # robustness rows (metric x perturbation, two or more rated systems) rating all alike
        (alike,) = con.execute(
            "select count(*) from (select metric, perturbation_id from marts.ratings r "
            "where rating is not null and regexp_matches(metric, '^(wrs|ape|pie)')"
            + outcome_clause(con, "ratings", "r")
            + " group by all having count(*) >= 2 and count(distinct rating) = 1)"
        ).fetchone()
    finally:
        con.close()
    robust = summary[summary["metric"].str.startswith(("wrs", "ape", "pie"))]
    means = robust.groupby("system_id")["avg_rating"].mean().sort_values(kind="stable")
    # systems with the best (worst) mean are named together: a tie
    leaders = [s for s in means.index if math.isclose(means[s], means.iloc[0], abs_tol=1e-9)]
    laggards = [s for s in means.index if math.isclose(means[s], means.iloc[-1], abs_tol=1e-9)]
    leader = judged[judged["system_id"].isin(leaders)]
    expected = {
        "robustness_gap": means.iloc[-1] - means.iloc[0],
        "leader_shaky": float((leader["share"] < SHAKY_SHARE).sum()),
        "leader_ratings": float(len(leader)),
        "shaky": float((judged["share"] < SHAKY_SHARE).sum()),
        "ratings": float(len(judged)),
    }
    if alike and len(leaders) < len(means):  # said beside the gap, only when there are some
        expected["alike_rows"] = float(alike)
    with Chromium(CHROMIUM) as browser:
        browser.open(reported["output"].as_uri())
        shown = browser.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('#verdict .derived'))"
            ".map(e => [e.dataset.derived, parseFloat(e.dataset.value)]))"
        )
        text = browser.evaluate("document.querySelector('#verdict .verdict').innerText")
        first = browser.evaluate("document.querySelector('section').id")
    assert first == "verdict"
    assert shown.keys() == expected.keys()
    for name, value in expected.items():
        assert math.isclose(shown[name], value, rel_tol=1e-9), name
    for names, single, tied in ((leaders, "is the most robust", "tie as the most robust"),
                                (laggards, "the least", "tie as the least")):  # fmt: skip
        if len(names) == 1:
            assert f"{names[0]} {single}" in text
        else:
            assert all(name in text.split(tied)[0] for name in names) and tied in text
    # the lowest mean SMAPE and MASE against their runner-up, by the leaderboard's intervals
    for metric, label in (("smape", "SMAPE"), ("mase", "MASE")):
        rows = summary[summary["metric"] == metric].dropna(subset=["avg_raw_score"])
        top, runner = rows.sort_values(["avg_raw_score", "system_id"])["system_id"][:2]
        bounds = board[board["metric"] == metric].set_index("system_id")
        columns = ["skill_score_lower", "skill_score_upper"]
        if not {top, runner} <= set(bounds.index) or bounds.loc[[top, runner], columns].isna().any(
            axis=None
        ):  # no interval to compare: the verdict must not claim a separation
            assert f"{label} skill scores" not in text, (metric, bounds)
            continue
        (a_low, a_high), (b_low, b_high) = (
            bounds.loc[s, columns].astype(float) for s in (top, runner)
        )
        clause = (
            "clearly ahead of" if a_low > b_high
            else "yet the leaderboard ranks" if b_low > a_high
            else "but not separably from"
        )  # fmt: skip
        lead = "By accuracy," if metric == "smape" else f"By {label},"
        sentence = text[text.index(lead) :].split(". ")[0]
        assert top in sentence.split("lowest")[0] and f"{clause} {runner}" in sentence, sentence


@needs_chromium
def test_the_browser_check_sees_errors_when_there_are_some(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    with Chromium(CHROMIUM) as browser:
        browser.open(page.as_uri())
        errors = browser.errors()
    assert any("undefinedFunction" in error for error in errors)
