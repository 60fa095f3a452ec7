"""The core report with ten systems in headless Chromium at 1,280 px: charts render from the
inlined Vega libraries (no console error, no request), and the page does not overflow.

Built from hand-made mart frames (no dbt build), so it runs in seconds; the end-to-end
report on a real snapshot is tests/integration/test_report_marts.py, test_report_sections.py
and test_report_docs.py.
"""

from __future__ import annotations

import pytest

from tests.integration.browser import Chromium, find_chromium
from tests.support.report_page import open_report, page_checks
from tests.support.ten_systems import SYSTEMS, ten_systems
from tsrate.html.charts import check_specs, page_specs
from tsrate.html.page import write_page
from tsrate.robustness.report.render import build_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary")


def test_ten_systems_fit_1280_px_and_every_chart_renders_offline(tmp_path):
    report = build_report(ten_systems(), generated_at="now")
    path = write_page(tmp_path / "report.html", report.html)
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        charts = open_report(browser, path)
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
        page_width, errors, network = page_checks(browser)
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
