"""The interpretability suite's report in headless Chromium at 1,280 px, from a real
(small) suite warehouse: IMV-LSTM (Tensor) and TCDF trained on dataset 4 with two seeds and
tiny settings (no sensitivity studies), dbt builds the marts (tag interpretability), and
the report is written from them.

Checked: the page opens with the verdict, whose numbers equal a recomputation from
marts.interp_ratings and marts.interp_rating_stability by hand; every Vega-Lite chart
renders from the inlined libraries with no console error and no network request; nothing
overflows 1,280 px sideways; no title or label is cut.
"""

from __future__ import annotations

import pytest

from tests.integration.browser import find_chromium
from tests.integration.builds import interpretability_built
from tests.integration.report_in_browser import assert_page_reads_well, interp_verdict_by_hand

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary"),
]


def test_interpretability_report_reads_well_in_a_browser(tmp_path, dbt_target):
    from tsrate.suites.interpretability.report import write_report

    warehouse = tmp_path / "tsrate.duckdb"
    interpretability_built(warehouse, ["imv_tensor", "tcdf"], dbt_target)
    path = write_report(warehouse, tmp_path / "interpretability.html")
    expected = interp_verdict_by_hand(warehouse)
    assert expected["systems"] == ["imv_tensor", "tcdf"]
    assert_page_reads_well(CHROMIUM, path, expected)
