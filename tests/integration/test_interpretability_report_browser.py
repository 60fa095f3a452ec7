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
from tests.integration.report_in_browser import assert_reads_well, seen_in_browser, verdict_by_hand
from tests.support.warehouses import read
from tsrate.html.charts import check_specs, page_specs
from tsrate.platform import dbt_runner as dbt
from tsrate.suites import SUITES

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary"),
]
#: the suite's build as `tsrate suite interpretability run` runs it (tsrate.suites.publishing)
SELECT = ["tsrate-build", "--select", "tag:interpretability"]
#: as tests/integration/test_interpretability.py's tiny run, without the sensitivity studies
TINY = {
    "length": 260,
    "burn_in": 20,
    "settings": {"test_length": 40, "hidden": 3, "epochs": 2, "batch_size": 64},
}


def test_interpretability_report_reads_well_in_a_browser(tmp_path, dbt_target):
    from tsrate.suites.interpretability.report import write_report
    from tsrate.suites.interpretability.suite import (
        plan_units,
        plan_variants,
        resolve_config,
        run_units,
    )

    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config("small", overrides=TINY)
    variants = plan_variants(config, [4], sensitivity=False)
    units = plan_units(config, variants, ["imv_tensor", "tcdf"])
    suite_run_id, trained, _ = run_units(warehouse, config, variants, units, lambda _: None)
    assert trained == len(units) == 4  # 2 models x 2 seeds
    run = {SUITES["interpretability"].run_env: suite_run_id}  # as the suite's run passes it
    dbt.run_dbt(SELECT, None, warehouse, lambda _: None, dbt_target, env_vars=run)
    path = write_report(warehouse, tmp_path / "interpretability.html")
    judged = read(
        warehouse,
        "select r.model_id, r.rating, r.rating_levels, r.higher_is_better, s.share_at_rating, "
        "s.share_mc_se "
        "from marts.interp_ratings r join marts.interp_rating_stability s "
        "using (suite_run_id, metric, variant_id, model_id)",
    )
    expected = verdict_by_hand(judged, system="model_id")
    assert expected["systems"] == ["imv_tensor", "tcdf"]
    seen = seen_in_browser(CHROMIUM, path)
    assert_reads_well(seen, expected, n_charts=len(page_specs(path.read_text())))
    assert check_specs(path.read_text()) == len(page_specs(path.read_text()))
