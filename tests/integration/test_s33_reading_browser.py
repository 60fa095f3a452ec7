"""The reading's warnings sit inside the reading's section: a real study where ARIMA falls
back to the last value on some windows (tests/support/fallback_study.py), forecast, built
with dbt, published and reported, then opened in headless Chromium.

The fallback paragraph (``#fallbacks``) must be a child of ``<section id="reading">``, after
the reading's paragraph and its source line, with the count of windows whose fit fails
worked out here by statsmodels alone from the stored inputs; every other warning paragraph
present (``#copies``, ``#sources``) must be inside the section too, and nothing of the
reading may follow the section's end.
"""

from __future__ import annotations

import math
import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.integration.browser import Chromium, find_chromium
from tests.integration.builds import forecast_and_build
from tests.support.fallback_study import cold_fit_fails, stored_contexts, study
from tests.support.warehouses import ingest
from tsrate.config import project_dir
from tsrate.platform.publish import publish
from tsrate.robustness.report.render import write_report

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary"),
]
#: what the report reads (as tests/integration/report_study.py builds it) and the failures mart
MARTS = (
    "+group_comparisons +modality_pairs +confounder_comparison +perturbation_summary "
    "+rating_stability +forecast_traces window_errors +window_inputs systems perturbations "
    "companies +paper_comparison +leaderboard +forecast_failures_summary +run_provenance"
)
SEEN = """(() => {
  const reading = document.getElementById('reading');
  const warning = id => { const p = document.getElementById(id); if (!p) return null;
    const r = p.getBoundingClientRect();
    const section = p.closest('section');
    return {parent: p.parentElement.id, section: section ? section.id : null, text: p.innerText,
            height: r.height, right: r.right}; };
  return {
    children: Array.from(reading.children).map(e => e.tagName + '.' + (e.id || e.className)),
    after: reading.nextElementSibling ? reading.nextElementSibling.id : null,
    fallbacks: warning('fallbacks'), copies: warning('copies'), sources: warning('sources'),
    loose: Array.from(document.querySelectorAll('p.reading'))
      .filter(p => !p.closest('#reading')).length,
    width: document.documentElement.scrollWidth,
  };
})()"""


@pytest.fixture(scope="module")
def reported(tmp_path_factory, dbt_target):
    root = tmp_path_factory.mktemp("s33_reading")
    warehouse = root / "tsrate.duckdb"
    fallback_study = study(("AAPL", "JPM"))
    ingest(warehouse, list(fallback_study.tickers))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_id = forecast_and_build(warehouse, fallback_study, dbt_target, select=MARTS)
    snapshot = publish(warehouse, run_id).path
    output = write_report(snapshot, root / "report.html").path
    return warehouse, output


def test_the_fallback_warning_is_inside_the_reading_section(reported):
    warehouse, output = reported
    contexts = stored_contexts(warehouse)
    fails = sum(cold_fit_fails(c) for c in contexts["context"])
    windows = len(contexts)  # ARIMA forecasts every stored window of both perturbations
    assert 0 < fails < windows
    systems = pd.read_csv(project_dir() / "seeds" / "systems.csv").set_index("system_id")
    name = systems.loc["arima", "display_name"]
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        browser.open(output.as_uri())
        browser.wait_until(
            "window.tsrateCharts && window.tsrateCharts.rendered + "
            "window.tsrateCharts.failed.length === window.tsrateCharts.total"
        )
        seen = browser.evaluate(SEEN)
        errors, network = browser.errors(), browser.network_requests()
    assert errors == [] and network == []

    share = math.floor(100 * fails / windows + 1e-9)  # the report rounds a share down
    assert seen["fallbacks"]["text"] == (
        f"{name} fell back to the last value on {fails} of {windows} windows ({share} %): "
        "those windows are scored as its forecasts."
    )
    # the heading, the reading, its source line, then each warning present, in this order,
    # and last the note on a near-zero sign accuracy where a system has one (naive's)
    present = [i for i in ("fallbacks", "copies", "sources") if seen[i] is not None]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (flat,) = con.execute(
            "select count(*) from marts.system_summary "
            "where metric = 'sign_accuracy' and avg_raw_score < 5"
        ).fetchone()
    assert seen["children"] == [
        "H2.",
        "P.reading",
        "P.source",
        *[f"P.{i}" for i in present],
        *(["P.note flat-sign-note"] if flat else []),
    ], seen["children"]
    for paragraph in present:
        assert seen[paragraph]["parent"] == seen[paragraph]["section"] == "reading", paragraph
        assert seen[paragraph]["height"] > 0 and seen[paragraph]["right"] <= 1280, paragraph
    assert seen["loose"] == 0  # no reading paragraph outside the section
    assert seen["after"] == "study"  # the next section follows the reading's end
    assert seen["width"] <= 1280
