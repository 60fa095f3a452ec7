"""A system rated on fewer perturbations, seen in headless Chromium at 1,280 px: its mark
("P0 only") in the overview and Table 2 is drawn muted (the page's ``.partial`` rule: grey,
smaller, not bold in a header), every radar legend shows it after the system's name, and
the averaged radars' captions give the tooltip's sentence once. Every chart renders, the
page stays within 1,280 px and makes no request off the machine.

Built from the hand-made marts of tests/support/report_text.py (no dbt build): seconds.
"""

from __future__ import annotations

import pytest

from tests.integration.browser import Chromium, find_chromium
from tests.support.report_page import open_report, page_checks
from tests.support.report_text import report_data
from tests.unit.test_overview_partial_marks import run_keeping
from tsrate.html.page import write_page
from tsrate.robustness.report.render import build_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary")

#: each .partial mark: its text, computed colour, size and weight, and the cell's weight
MARKS = (
    "Array.from(document.querySelectorAll('.partial')).map(m => {"
    " const s = getComputedStyle(m), cell = getComputedStyle(m.parentElement);"
    " return [m.innerText, s.color, s.fontSize, s.fontWeight, cell.color, cell.fontSize]; })"
)
#: the radars' legend entries (Vega draws them as SVG text in role-legend groups)
LEGENDS = (
    "Array.from(document.querySelectorAll('#radars .role-legend text')).map(t => t.textContent)"
)
CAPTIONS = "Array.from(document.querySelectorAll('#radars figcaption')).map(c => c.innerText)"


def page_of(keep: tuple[str, ...]) -> str:
    rows = run_keeping(keep)
    rows = rows.assign(rank=rows.groupby(["metric", "perturbation_id"])["rating"].rank())
    return build_report(report_data(rows), generated_at="now").html


def test_the_partial_mark_is_muted_and_in_every_radar_legend(tmp_path):
    path = write_page(tmp_path / "report.html", page_of(("P0",)))
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        tally = open_report(browser, path)
        marks = browser.evaluate(MARKS)
        legends = browser.evaluate(LEGENDS)
        captions = browser.evaluate(CAPTIONS)
        width, errors, network = page_checks(browser)
    assert errors == [] and network == [] and width <= 1280
    assert tally["failed"] == [] and tally["rendered"] == tally["total"] > 0
    assert len(marks) == 2  # the overview's System cell and Table 2's column header
    for text, colour, size, weight, cell_colour, cell_size in marks:
        assert text == "P0 only"
        assert colour == "rgb(119, 119, 119)" != cell_colour  # muted beside its cell
        assert float(size.rstrip("px")) < float(cell_size.rstrip("px"))
        assert weight == "400"  # normal even in a bold header
    radars = sum(1 for c in captions if "Source:" in c)
    assert radars >= 4 and legends.count("mid (P0 only)") == radars
    assert "mid" not in legends and {"zeta", "alpha"} <= set(legends)
    averaged = [c for c in captions if "average over perturbations" in c]
    assert len(averaged) == 2
    assert all(c.count("mid") == 1 and "mid was rated on P0 only" in c for c in averaged)


def test_a_fully_rated_page_has_no_mark_and_plain_legends(tmp_path):
    path = write_page(tmp_path / "report.html", page_of(("P0", "P1", "P2", "P3")))
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        open_report(browser, path)
        marks = browser.evaluate(MARKS)
        legends = browser.evaluate(LEGENDS)
        _, errors, _ = page_checks(browser)
    assert errors == [] and marks == []
    assert legends and set(legends) == {"zeta", "alpha", "mid"}
