"""A tsrate report page opened in a test's headless browser (tests/integration/browser.py's
``Chromium``, started by the test): the page loaded and every Vega-Lite chart settled.

The page counts its charts in ``window.tsrateCharts`` (rendered, failed, total)."""

from __future__ import annotations

from pathlib import Path

#: the charts' tally once every chart of the page rendered or failed (falsy before)
CHARTS_SETTLED = (
    "window.tsrateCharts && window.tsrateCharts.rendered + "
    "window.tsrateCharts.failed.length === window.tsrateCharts.total && "
    "window.tsrateCharts"
)


def open_report(browser, path: Path) -> dict:
    """Open ``path`` in ``browser`` and wait until its charts settled; their tally."""
    browser.open(Path(path).as_uri())
    return browser.wait_until(CHARTS_SETTLED)


def page_checks(browser) -> tuple[int, list[str], list[str]]:
    """What every report page is checked for: its width (no wider than the window), its
    console errors and the requests it made off the machine (none of either)."""
    page_width = browser.evaluate("document.documentElement.scrollWidth")
    return page_width, browser.errors(), browser.network_requests()
