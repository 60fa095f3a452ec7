"""The core report with ten systems in headless Chromium at 1,280 px: charts render from the
inlined Vega libraries (no console error, no request), and the page does not overflow.

Built from hand-made mart frames (no dbt build), so it runs in seconds; the end-to-end
report on a real snapshot is tests/integration/test_report.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.integration.browser import Chromium, find_chromium
from tsrate.html.charts import check_specs, page_specs
from tsrate.html.page import write_page
from tsrate.robustness.report.render import ReportData, build_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary")
RUN = "r10"
METRICS = ["wrs_industry", "wrs_company", "ape_industry", "ape_company", "pie_industry",
           "pie_company", "smape", "mase", "sign_accuracy"]  # fmt: skip
#: long ids on purpose: labels must not be truncated nor push the page wide
SYSTEMS = [f"system_with_a_long_name_{i:02d}" for i in range(10)]


def ten_systems() -> ReportData:
    rng = np.random.default_rng(3)
    rows = []
    for perturbation in ("P0", "P1", "P2", "P3"):
        for metric in METRICS:
            if perturbation == "P0" and metric.startswith(("ape", "pie")):
                continue
            scores = rng.uniform(1, 10, len(SYSTEMS))
            ranks = pd.Series(scores).rank(method="min").astype(int).to_numpy()
            for system, score, rank in zip(SYSTEMS, scores, ranks, strict=True):
                rows.append(dict(run_id=RUN, metric=metric, perturbation_id=perturbation,
                                 system_id=system, raw_score=float(score), rank=int(rank),
                                 rating=int(min(3, 1 + (rank - 1) * 3 // 10)), rating_levels=3,
                                 higher_is_better=metric == "sign_accuracy",
                                 metric_family="accuracy" if metric in METRICS[6:]
                                 else "robustness"))  # fmt: skip
    ratings = pd.DataFrame(rows)
    stability = ratings[["metric", "perturbation_id", "system_id", "rating"]].assign(
        share=rng.uniform(0.3, 1.0, len(ratings)),
        ci_low=ratings["raw_score"] * 0.9,
        ci_high=ratings["raw_score"] * 1.1,
        n_valid=200,
        n_resamples=200,
        confidence=0.95,
    )
    summary = (
        ratings.groupby(["run_id", "system_id", "metric"])
        .agg(avg_raw_score=("raw_score", "mean"), avg_rating=("rating", "mean"),
             rating_levels=("rating_levels", "max"), higher_is_better=("higher_is_better", "all"))
        .reset_index()
    )  # fmt: skip
    per_perturbation = (
        ratings.groupby(["run_id", "perturbation_id", "metric"])
        .agg(avg_raw_score=("raw_score", "mean"), higher_is_better=("higher_is_better", "all"))
        .reset_index()
    )
    systems = pd.DataFrame(
        [dict(system_id=s, display_name=f"System {i}", implementation="m", base_model=None,
              modality="numeric", description="runs") for i, s in enumerate(SYSTEMS)]
    )  # fmt: skip
    return ReportData(
        run_id=RUN,
        published_at="2026-01-01 00:00:00",
        study=dict(tickers=["AAA"], start="2022-01-03", end="2022-12-30", systems=SYSTEMS,
                   perturbations=["P0", "P1", "P2", "P3"], context_length=80, horizon=20),
        ratings=ratings,
        system_summary=summary,
        perturbation_summary=per_perturbation,
        confounder_comparison=pd.DataFrame(),
        group_comparisons=pd.DataFrame(),
        modality_pairs=pd.DataFrame(),
        systems=systems,
        perturbations=pd.DataFrame(),
        companies=pd.DataFrame([dict(ticker="AAA", company_name="A Corp", industry="Tech")]),
        windows=pd.DataFrame([dict(ticker="AAA", n_windows=10, first_window="x", last_window="y")]),
        stability=stability,
    )  # fmt: skip


def test_ten_systems_fit_1280_px_and_every_chart_renders_offline(tmp_path):
    report = build_report(ten_systems(), generated_at="now")
    path = write_page(tmp_path / "report.html", report.html)
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        browser.open(path.as_uri())
        charts = browser.wait_until(
            "window.tsrateCharts && window.tsrateCharts.rendered + "
            "window.tsrateCharts.failed.length === window.tsrateCharts.total && "
            "window.tsrateCharts"
        )
        page_width = browser.evaluate("document.documentElement.scrollWidth")
        summary = browser.evaluate(
            "(() => { const t = document.querySelector('#overview table');"
            " const r = t.getBoundingClientRect();"
            " return [r.right, t.querySelectorAll('tbody tr').length,"
            " Array.from(t.querySelectorAll('code')).map(e => e.innerText)]; })()"
        )
        labels = browser.evaluate(  # the legend labels Vega drew, as text
            "Array.from(document.querySelectorAll('#radars .vega-chart svg'))[0]"
            ".querySelectorAll('.role-legend-label text').length"
        )
        legend_text = browser.evaluate(
            "Array.from(document.querySelectorAll('#radars .vega-chart svg'))[0]"
            ".querySelector('.role-legend').textContent"
        )
        errors = browser.errors()
        network = browser.network_requests()
    assert errors == [] and network == []
    assert charts["failed"] == [] and charts["rendered"] == len(page_specs(report.html)) > 5
    assert check_specs(report.html) == len(page_specs(report.html))
    assert page_width <= 1280  # nothing overflows the page sideways
    right, n_rows, names = summary
    assert right <= 1280 and n_rows == 10 and sorted(names) == SYSTEMS  # untruncated ids
    assert labels == 10
    assert all(name in legend_text for name in SYSTEMS)  # legend labels untruncated


def test_the_browser_check_sees_a_request_when_a_page_makes_one(tmp_path):
    """The no-network assertion can fail: a page that fetches is caught."""
    page = tmp_path / "fetches.html"
    page.write_text('<html><body><img src="http://192.0.2.1/x.png"></body></html>')
    with Chromium(CHROMIUM) as browser:
        browser.open(page.as_uri())
        network = browser.network_requests()
    assert network == ["http://192.0.2.1/x.png"]
