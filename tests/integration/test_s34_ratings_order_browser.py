"""The Ratings section's reading order in headless Chromium at 1,280 px: with ten systems
(long names) and two alternative outcomes, the default outcome's robustness table and the
accuracy table are shown open and first, the alternatives' tables are collapsed (not
rendered until opened), and the page stays within 1,280 px with every table open.

Built from the hand-made marts of tests/support/ten_systems.py (no dbt build): seconds.
"""

from __future__ import annotations

import pytest

from tests.integration.browser import Chromium, find_chromium
from tests.support.report_page import open_report, page_checks
from tests.support.ten_systems import ten_systems
from tests.unit.test_s34_ratings_reading_order import with_alternatives
from tsrate.html.page import write_page
from tsrate.robustness.report.render import build_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary")

#: per <details> of the Ratings section: open?, the summary's first words, whether its
#: table is visible, the toggle's drawn height and the right edge of the table's box
TOGGLES = (
    "Array.from(document.querySelectorAll('#ratings details')).map(d => [d.open,"
    " d.querySelector('summary').innerText.slice(0, 40),"
    " d.querySelector('table').checkVisibility(), d.getBoundingClientRect().height,"
    " d.querySelector('.table-scroll').getBoundingClientRect().right])"
)


def test_the_default_outcome_and_accuracy_show_first_and_the_alternatives_fold(tmp_path):
    report = build_report(with_alternatives(ten_systems()), generated_at="now")
    path = write_page(tmp_path / "report.html", report.html)
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        open_report(browser, path)
        before = browser.evaluate(TOGGLES)
        width_before, errors, network = page_checks(browser)
        browser.evaluate(
            "document.querySelectorAll('#ratings details').forEach(d => d.open = true)"
        )
        after = browser.evaluate(TOGGLES)
        width_after = browser.evaluate("document.documentElement.scrollWidth")
    assert errors == [] and network == []
    assert [is_open for is_open, *_ in before] == [True, True, False, False]
    assert before[0][1].startswith("Robustness — the paper") and before[1][1].startswith("Accuracy")
    assert all(seen and tall > 100 and right <= 1280 for _, _, seen, tall, right in before[:2])
    assert all(not seen and tall < 60 for _, _, seen, tall, _ in before[2:])  # a summary line
    assert all(seen and tall > 100 and right <= 1280 for _, _, seen, tall, right in after)
    assert width_before <= 1280 and width_after <= 1280
