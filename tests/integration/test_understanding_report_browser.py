"""The understanding suite's report in headless Chromium at 1,280 px, from a real (small)
suite warehouse: the offline references (und_analyst, und_random) answer four feature
datasets in csv (20 test series each, so every drawn cell holds the report's minimum of 20
prompts), dbt builds the marts (tag understanding), and the report is written from them.

Checked: the page opens with the verdict, whose numbers equal a recomputation from
marts.und_ratings and marts.und_rating_stability by hand; every Vega-Lite chart renders
from the inlined libraries with no console error and no network request; nothing overflows
1,280 px sideways; no title or label is cut.
"""

from __future__ import annotations

import pytest

from tests.integration.browser import find_chromium
from tests.integration.report_in_browser import assert_page_reads_well, verdict_by_hand
from tests.support.warehouses import read
from tsrate.platform import dbt_runner as dbt
from tsrate.suites import SUITES

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary"),
]
#: the suite's build as `tsrate suite understanding run` runs it (tsrate.suites.publishing)
SELECT = ["tsrate-build", "--select", "tag:understanding"]
#: the smallest configuration whose report draws its charts: 4 feature datasets x 20 test
#: series in one format, no training split (the references need none), no position sets
SMALL = dict(train=0, validation=0, test=20, position_per_cell=0, max_length=60,
             formats=["csv"], datasets=["trend", "seasonality", "anomalies", "volatility"])  # fmt: skip


def test_understanding_report_reads_well_in_a_browser(tmp_path, dbt_target):
    from tsrate.suites.understanding.report import write_report
    from tsrate.suites.understanding.suite import open_systems, resolve_config, run_suite

    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config("small", SMALL)
    suite_run_id, _ = run_suite(
        warehouse, config, open_systems([], references=True), progress=lambda _: None
    )
    run = {SUITES["understanding"].run_env: suite_run_id}  # as the suite's run passes it
    dbt.run_dbt(SELECT, None, warehouse, lambda _: None, dbt_target, env_vars=run)
    path = write_report(warehouse, tmp_path / "understanding.html")
    judged = read(
        warehouse,
        "select r.system_id, r.rating, r.rating_levels, r.higher_is_better, s.share_at_rating, "
        "s.share_mc_se "
        "from marts.und_ratings r join marts.und_rating_stability s "
        "using (suite_run_id, prompting, metric, feature, system_id)",
    )
    expected = verdict_by_hand(judged)
    assert expected["systems"] == ["und_analyst", "und_random"]
    assert_page_reads_well(CHROMIUM, path, expected)
