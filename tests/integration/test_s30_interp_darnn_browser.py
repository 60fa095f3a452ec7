"""DA-RNN's not-applicable beta diagonal end to end: a real (small) suite warehouse with
IMV-LSTM (Tensor) and DA-RNN trained on dataset 4 (two series, two seeds, tiny settings),
dbt builds the marts, and the report is read in headless Chromium at 1,280 px.

Checked: interp_attention_summary flags DA-RNN's two diagonal cells applicable = false with
mean and std null (IMV-LSTM's diagonal stays a measured attention); the report's DA-RNN
panel draws them as crosses on blank cells with the caption saying why; every chart, the
layered DA-RNN panel included, renders with no console error and nothing cut or overflowing.
"""

from __future__ import annotations

import pytest

from tests.integration.browser import find_chromium
from tests.integration.builds import interpretability_built
from tests.integration.report_in_browser import assert_page_reads_well, interp_verdict_by_hand
from tests.support.warehouses import read
from tsrate.html.charts import page_specs, spec_rows

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary"),
]


def test_darnn_diagonal_is_not_applicable_in_the_mart_and_the_browser(tmp_path, dbt_target):
    from tsrate.suites.interpretability.report import NOT_APPLICABLE_MARK, write_report

    warehouse = tmp_path / "tsrate.duckdb"
    interpretability_built(warehouse, ["imv_tensor", "darnn"], dbt_target)
    cells = read(
        warehouse,
        "select model_id, target_index, source_index, mean_value, std_value, applicable "
        "from marts.interp_attention_summary where attention = 'beta' order by all",
    )
    diagonal = cells[cells["target_index"] == cells["source_index"]]
    darnn = diagonal[diagonal["model_id"] == "darnn"]
    assert len(darnn) == 2 and not darnn["applicable"].any()
    assert darnn["mean_value"].isna().all() and darnn["std_value"].isna().all()
    imv = diagonal[diagonal["model_id"] == "imv_tensor"]
    assert len(imv) == 2 and imv["applicable"].all() and imv["mean_value"].notna().all()
    off = cells[(cells["model_id"] == "darnn") & (cells["target_index"] != cells["source_index"])]
    # with two series DA-RNN's only candidate for each target is the other series
    assert off["applicable"].all() and (off["mean_value"] == 1.0).all()

    path = write_report(warehouse, tmp_path / "interpretability.html")
    page = path.read_text()
    specs = page_specs(page)
    (panel,) = [s for s in specs.values() if s["title"]["text"] == "darnn: mean beta"]
    rows = list(spec_rows(panel))
    assert sorted((r["row"], r["col"]) for r in rows if r["not_applicable"]) == [(0, 0), (1, 1)]
    assert panel["layer"][1]["mark"]["text"] == NOT_APPLICABLE_MARK
    assert "structural zero" in page
    assert_page_reads_well(CHROMIUM, path, interp_verdict_by_hand(warehouse))
