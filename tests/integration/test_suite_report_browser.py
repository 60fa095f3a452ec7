"""The reasoning suite's report with ten systems in headless Chromium at 1,280 px:
it opens with the verdict, whose numbers match a recomputation from the mart frames by hand
(goodness = how far each rating is from the worst level, mean per system); its 'Against
chance' table calls each accuracy above, below or not distinguishable from chance as the
score test of p = chance at 5 % does (statsmodels, independently of the mart's Wilson
interval); every Vega-Lite chart renders from the inlined libraries with no console error
and no request; nothing overflows sideways; system names are not truncated.

Built from hand-made mart frames (no suite run, no dbt), so it runs in seconds; the suites'
integration tests build the real marts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from tests.integration.browser import Chromium, find_chromium
from tests.integration.report_in_browser import named, verdict_by_hand
from tsrate.html.charts import check_specs, page_specs
from tsrate.html.page import write_page
from tsrate.suites.reasoning.report import render_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary")
RUN = "rsn-10"
SYSTEMS = [f"language_model_with_a_long_name_{i:02d}" for i in range(10)]
TASKS = ["which_change", "qa_perturbed", "etiological"]


def wilson(k: int, n: int) -> tuple[float, float]:
    """rsn_task_accuracy's accuracy_ci_low / _high: the Wilson 95 % interval."""
    return proportion_confint(k, n, alpha=0.05, method="wilson")


def ten_systems() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(5)
    n = 40
    # correct answers out of 40 at chance 0.25: from clearly below (3) to clearly above (36)
    correct = {(t, s): int(rng.integers(3, 37)) for t in TASKS for s in SYSTEMS}
    tasks = pd.DataFrame(
        [dict(suite_run_id=RUN, task=t, system_id=s, system_kind="language_model", n_items=n,
              n_unanswered=int(i % 3), n_unparseable=int(i % 2),
              accuracy=correct[t, s] / n,
              accuracy_ci_low=wilson(correct[t, s], n)[0],
              accuracy_ci_high=wilson(correct[t, s], n)[1],
              chance_level=0.25, above_chance=correct[t, s] / n - 0.25,
              accuracy_without_series=float(rng.uniform(0.2, 0.6)),
              n_items_without_series=n, n_unparseable_without_series=0)
         for t in TASKS for i, s in enumerate(SYSTEMS)]
    )  # fmt: skip
    forecasts = pd.DataFrame(
        [dict(suite_run_id=RUN, system_id=s, condition=c, mae=float(rng.uniform(0.5, 2)),
              baseline_mae=1.0, n_items=30, n_unanswered=0, n_unparseable=int(i == 3))
         for i, s in enumerate(SYSTEMS) for c in ("without_context", "with_context")]
    )  # fmt: skip
    rows = []
    for metric, higher in (("accuracy", True), ("mae", False)):
        for task in TASKS:
            scores = rng.uniform(0, 1, len(SYSTEMS))
            order = pd.Series(scores).rank(ascending=not higher, method="min").astype(int)
            for system, score, rank in zip(SYSTEMS, scores, order, strict=True):
                rows.append(dict(suite_run_id=RUN, metric=metric, task=task, system_id=system,
                                 raw_score=float(score), rank=int(rank),
                                 rating=int(1 + (score > 0.33) + (score > 0.66)),
                                 rating_levels=3, higher_is_better=higher))  # fmt: skip
    ratings = pd.DataFrame(rows)
    stability = ratings[["suite_run_id", "metric", "task", "system_id"]].assign(
        share_at_rating=rng.uniform(0.3, 1.0, len(ratings)),
        ci_low=ratings["raw_score"] - 0.1,
        ci_high=ratings["raw_score"] + 0.1,
    )
    return dict(tasks=tasks, forecasts=forecasts, context=pd.DataFrame(), ratings=ratings,
                stability=stability)  # fmt: skip


def by_hand(data: dict[str, pd.DataFrame]) -> dict[str, float]:
    """The verdict's numbers from the frames, without tsrate.suites.verdict."""
    frame = data["ratings"].merge(data["stability"], on=["suite_run_id", "metric", "task",
                                                         "system_id"])  # fmt: skip
    return verdict_by_hand(frame)


def against_chance_by_hand(tasks: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Each (task, system)'s verdict from the score test of p = chance at 5 %."""
    out = {}
    for row in tasks.itertuples(index=False):
        k = round(row.accuracy * row.n_items)
        _, p = proportions_ztest(k, row.n_items, value=row.chance_level,
                                 prop_var=row.chance_level)  # fmt: skip
        if p >= 0.05:
            out[row.task, row.system_id] = "not distinguishable from chance"
        else:
            out[row.task, row.system_id] = (
                "above chance" if row.accuracy > row.chance_level else "below chance"
            )
    return out


def test_reasoning_report_opens_with_a_true_verdict_and_fits_1280_px(tmp_path):
    data = ten_systems()
    page = render_report(data)
    path = write_page(tmp_path / "reasoning.html", page)
    with Chromium(CHROMIUM, width=1280, height=900) as browser:
        browser.open(path.as_uri())
        charts = browser.wait_until(
            "window.tsrateCharts && window.tsrateCharts.rendered + "
            "window.tsrateCharts.failed.length === window.tsrateCharts.total && "
            "window.tsrateCharts"
        )
        first = browser.evaluate("document.querySelector('h1 ~ section, section').id")
        derived = browser.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('#verdict .derived'))"
            ".map(e => [e.dataset.derived, parseFloat(e.dataset.value)]))"
        )
        verdict = browser.evaluate("document.querySelector('#verdict .verdict').innerText")
        page_width = browser.evaluate("document.documentElement.scrollWidth")
        names = browser.evaluate(
            "Array.from(document.querySelectorAll('#overview code')).map(e => e.innerText)"
        )
        overview_right = browser.evaluate(
            "document.querySelector('#overview table').getBoundingClientRect().right"
        )
        cut = browser.evaluate(  # Vega ends a truncated title or label with an ellipsis
            "Array.from(document.querySelectorAll('.vega-chart svg text'))"
            ".filter(t => t.textContent.includes('\u2026')).map(t => t.textContent)"
        )
        n_texts = browser.evaluate("document.querySelectorAll('.vega-chart svg text').length")
        chance_rows = browser.evaluate(  # the table right after the 'Against chance' heading
            "(() => { const h = Array.from(document.querySelectorAll('h2'))"
            ".find(e => e.innerText.trim() === 'Against chance');"
            " let t = h.nextElementSibling; while (t.tagName !== 'TABLE') t = t.nextElementSibling;"
            " return Array.from(t.querySelectorAll('tr')).slice(1)"
            ".map(r => Array.from(r.cells).map(c => c.innerText)); })()"
        )
        errors = browser.errors()
        network = browser.network_requests()
    expected = by_hand(data)
    assert first == "verdict"
    for name in ("best_goodness", "worst_goodness", "gap", "leader_shaky", "leader_ratings",
                 "shaky"):  # fmt: skip
        assert derived[name] == pytest.approx(expected[name]), name
    best, worst = expected["best"], expected["worst"]
    # three of the ten share the best mean goodness: named together, not the first by name
    assert len(best) == 3 and f"{named(best)} tie for best" in verdict, verdict
    assert len(worst) == 1 and f"{worst[0]} worst" in verdict
    assert errors == [] and network == []
    assert charts["failed"] == [] and charts["rendered"] == len(page_specs(page)) >= 4
    assert check_specs(page) == len(page_specs(page))
    assert page_width <= 1280 and overview_right <= 1280
    assert sorted(names) == SYSTEMS  # untruncated, every system in the summary
    assert n_texts > 50 and cut == []  # titles, axis and legend labels drawn whole
    chance = against_chance_by_hand(data["tasks"])
    shown = {(r[0], r[1]): r[-1] for r in chance_rows}
    assert shown == chance
    assert set(chance.values()) == {"above chance", "below chance",
                                    "not distinguishable from chance"}  # fmt: skip
    for row in data["tasks"].itertuples(index=False):  # accuracy [low, high] as the mart has it
        cells = next(r for r in chance_rows if (r[0], r[1]) == (row.task, row.system_id))
        assert cells[3] == (f"{row.accuracy:.2f} [{row.accuracy_ci_low:.2f}, "
                            f"{row.accuracy_ci_high:.2f}]")  # fmt: skip
