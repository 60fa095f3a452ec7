"""The rating tables as a reader sees them in headless Chromium: the sign accuracy rows say in
their own first cell that higher is better and which rating is best, and a reason every
system of a row shares shows once in the row's visible text (each cell marked †), not once
per cell.

Built from the hand-made marts of tests/unit/test_report_rating_rows.py (no dbt build)."""

from __future__ import annotations

import pytest

from tests.integration.browser import Chromium, find_chromium
from tests.support.report_page import open_report, page_checks
from tests.unit.test_report_rating_rows import _with_reasons
from tsrate.html.page import write_page
from tsrate.methods.ratings import REASON_TIED_IDEAL
from tsrate.robustness.report.render import build_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary")

#: the visible text of each row of the Ratings section's open tables: [first cell, row]
ROWS = (
    "Array.from(document.querySelectorAll('#ratings details[open] tr'))"
    ".filter(r => r.querySelector('td')).map(r => [r.cells[0].innerText, r.innerText])"
)


def test_the_rows_say_their_direction_and_a_shared_reason_once(tmp_path):
    report = build_report(_with_reasons(), generated_at="now")
    path = write_page(tmp_path / "report.html", report.html)
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        open_report(browser, path)
        rows = browser.evaluate(ROWS)
        _, errors, network = page_checks(browser)
    assert errors == [] and network == []
    sign = [first for first, _ in rows if first.startswith("Sign accuracy")]
    assert len(sign) == 3
    assert all("higher is better; 3 is best" in " ".join(first.split()) for first in sign)
    tied = [text for first, text in rows if first.startswith("WRS company") and "\tP1" in text]
    assert len(tied) == 1
    assert tied[0].count(REASON_TIED_IDEAL) == 1 and tied[0].count("†") == 3
