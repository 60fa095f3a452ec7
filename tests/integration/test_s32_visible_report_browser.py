"""The probabilistic section's crossing column and sentence in headless Chromium: ten
systems with long names under four perturbations, one crossing its quantiles at some
steps. The column and the sentence are shown, the counts traceable, the page no wider than
the window, and no console error or request.

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
from tsrate.robustness.report.probabilistic import PROBABILISTIC_METRICS
from tsrate.robustness.report.render import build_report

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary"),
]
PERTURBATIONS = ("P0", "P1", "P2", "P3")
#: System 3 crosses 4 steps under P1 and 8 under P2, of 120 each: 12 of 480 = 2.5 %
CROSSED = {"P1": 4, "P2": 8}


def crossing_scores() -> pd.DataFrame:
    rows = [
        dict(run_id=RUN, system_id=s, perturbation_id=p, metric=m, mean=0.5, reason=None,
             n_quantile_steps=120,
             n_crossed_steps=CROSSED.get(p, 0) if s == SYSTEMS[3] else 0)
        for s in SYSTEMS for p in PERTURBATIONS for m in PROBABILISTIC_METRICS
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_s32_visible_the_crossing_column_and_sentence_render_in_a_browser(tmp_path):
    data = dataclasses.replace(ten_systems(), probabilistic_scores=crossing_scores())
    path = write_page(tmp_path / "report.html", build_report(data, generated_at="now").html)
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        open_report(browser, path)
        seen = browser.evaluate(
            "(() => { const s = document.getElementById('probabilistic');"
            " const heads = Array.from(s.querySelectorAll('th')).map(h => h.innerText);"
            " const note = Array.from(s.querySelectorAll('p'))"
            "   .find(p => p.innerText.startsWith('Crossed quantiles'));"
            " const r = note.getBoundingClientRect();"
            " return {heads, text: note.innerText, height: r.height, right: r.right,"
            " nums: Array.from(note.querySelectorAll('.num')).map(n => [n.dataset.column,"
            " JSON.parse(n.dataset.where).system_id, n.dataset.agg, parseFloat(n.dataset.value),"
            " n.innerText])}; })()"
        )
        page_width, errors, network = page_checks(browser)
    assert errors == [] and network == []
    assert seen["heads"][-2:] == ["Crossed quantiles", "Note"]
    assert seen["text"].startswith(
        "Crossed quantiles: at some forecast steps the stored q10 … q90 are not in "
        f"non-decreasing order, in {SYSTEMS[3]} 12 of 480 steps (2.5 %) (over all"
    )
    assert seen["nums"] == [["n_crossed_steps", SYSTEMS[3], "sum", 12, "12"],
                            ["n_quantile_steps", SYSTEMS[3], "sum", 480, "480"]]  # fmt: skip
    assert seen["height"] > 0 and seen["right"] <= 1280 and page_width <= 1280
