"""The reading's three warnings in headless Chromium: a system that fell back to its last
value, one whose forecasts copied its own input and one rated from forecasts on other prices
each get their paragraph (``#fallbacks``, ``#copies``, ``#sources``) inside the reading's
section, after its source line, with the counts worked out here by hand, traceable numbers, and no console error or request.

Built from the hand-made marts of ``tests/support/ten_systems.py`` (no dbt build): seconds.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from tests.integration.browser import Chromium, find_chromium
from tests.support.report_page import open_report, page_checks
from tests.support.ten_systems import RUN, SYSTEMS, ten_systems
from tsrate.html.page import write_page
from tsrate.robustness.report.render import ReportData, build_report

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary"),
]
REASON = (
    "forecast in run r9 on other prices: 3 of 240 ticker-days changed since "
    "(first 2022-03-01); rerun it with tsrate run --systems " + SYSTEMS[2]
)


def flagged() -> ReportData:
    rows = [(s, p, 40, 0, 0) for s in SYSTEMS[2:] for p in ("P0", "P1")]
    rows += [(SYSTEMS[0], "P0", 40, 3, 0), (SYSTEMS[0], "P1", 40, 2, 0),
             (SYSTEMS[0], "P2", 40, None, None),  # a cell stored before either was counted
             (SYSTEMS[1], "P0", 40, 0, 10), (SYSTEMS[1], "P1", 40, 0, 6)]  # fmt: skip
    failures = pd.DataFrame(rows, columns=["system_id", "perturbation_id", "n_windows",
                                           "n_fallback_windows", "n_copied_windows"])  # fmt: skip
    failures = failures.assign(
        run_id=RUN,
        n_fallback_windows=failures["n_fallback_windows"].astype("Int64"),
        n_copied_windows=failures["n_copied_windows"].astype("Int64"),
    )
    provenance = pd.DataFrame(
        [dict(system_id=s, tsrate_version="0.1", git_revision="abc", git_reason=None,
              dbt_version="1.9", duckdb_version="1.2", price_rows=100,
              price_rows_fingerprint="f" * 64, partitions=4, partitions_fingerprint="e" * 64,
              training_data=None, training_data_reason="not trained",
              source_inputs_reason=REASON if s == SYSTEMS[2] else None) for s in SYSTEMS]
    )  # fmt: skip
    return dataclasses.replace(ten_systems(), forecast_failures=failures,
                               run_provenance=provenance)  # fmt: skip


def test_flagged_systems_get_their_paragraphs_after_the_reading(tmp_path):
    path = write_page(tmp_path / "report.html", build_report(flagged(), generated_at="now").html)
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        open_report(browser, path)
        seen = browser.evaluate(
            "['fallbacks', 'copies', 'sources'].map(id => { const p = document.getElementById(id);"
            " if (!p) return null; const r = p.getBoundingClientRect();"
            " return {tag: p.tagName, text: p.innerText, height: r.height, right: r.right,"
            " before: p.previousElementSibling.id || p.previousElementSibling.className,"
            " parent: p.parentElement.id,"
            " nums: Array.from(p.querySelectorAll('.num')).map(n => [n.dataset.mart,"
            " n.dataset.column, JSON.parse(n.dataset.where).system_id, n.dataset.agg,"
            " parseFloat(n.dataset.value), n.innerText])}; })"
        )
        page_width, errors, network = page_checks(browser)
    assert errors == [] and network == []
    fallbacks, copies, sources = seen
    # System 0: 3 + 2 of 40 + 40 + 40 windows (P2's 40 uncounted) = 5 of 120, 4.2 % -> 4 %
    assert fallbacks["text"] == (
        "System 0 fell back to the last value on 5 of 120 windows (4 %; unknown on 40 windows "
        "stored before fallbacks were recorded): those windows are scored as its forecasts."
    )
    mart = "marts.forecast_failures_summary"
    assert fallbacks["nums"] == [[mart, "n_fallback_windows", SYSTEMS[0], "sum", 5, "5"],
                                 [mart, "n_windows", SYSTEMS[0], "sum", 120, "120"]]  # fmt: skip
    # System 1: 10 + 6 of 40 + 40 = 16 of 80, 20 %; System 0's uncounted P2 copies nothing
    assert copies["text"] == (
        "System 1's forecast repeated a stretch of its own input on 16 of 80 windows (20 %): "
        "those copies are scored as its forecasts."
    )
    assert copies["nums"] == [[mart, "n_copied_windows", SYSTEMS[1], "sum", 16, "16"],
                              [mart, "n_windows", SYSTEMS[1], "sum", 80, "80"]]  # fmt: skip
    assert sources["text"] == (
        f"Not forecast on this run's prices: System 2: {REASON}. Source: marts.run_provenance."
    )
    assert [p["tag"] for p in seen] == ["P"] * 3
    assert [p["before"] for p in seen] == ["source", "fallbacks", "copies"]
    assert [p["parent"] for p in seen] == ["reading"] * 3
    assert all(p["height"] > 0 and p["right"] <= 1280 for p in seen) and page_width <= 1280
