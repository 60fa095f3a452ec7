"""Open a report in headless Chromium at 1,280 px and read back what a reader sees, and
recompute a suite report's verdict from the marts by hand (without tsrate.suites.verdict).

Shared by the suite reports' browser tests; the page conventions are those of
tsrate.html (``window.tsrateCharts`` counts rendered and failed Vega-Lite charts, the
verdict's numbers are ``<span class="derived" data-derived=... data-value=...>``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.integration.browser import Chromium
from tests.support.warehouses import read
from tsrate.html.charts import check_specs, page_specs

#: a rating is shaky below this share of resamples at its level (the reports' threshold,
#: written here again so that a change there fails the tests)
SHAKY = 0.6


def seen_in_browser(chromium: str, path: Path, width: int = 1280) -> dict:
    """Open ``path`` and return: charts (window.tsrateCharts), the first section's id, the
    verdict's derived numbers and text, the page's and the summary table's right edge, the
    summary's system names, chart texts cut with an ellipsis, console errors and requests."""
    with Chromium(chromium, width=width, height=900) as browser:
        browser.open(Path(path).as_uri())
        charts = browser.wait_until(
            "window.tsrateCharts && window.tsrateCharts.rendered + "
            "window.tsrateCharts.failed.length === window.tsrateCharts.total && "
            "window.tsrateCharts"
        )
        seen = {
            "charts": charts,
            "first": browser.evaluate("document.querySelector('h1 ~ section, section').id"),
            "derived": browser.evaluate(
                "Object.fromEntries(Array.from(document.querySelectorAll('#verdict .derived'))"
                ".map(e => [e.dataset.derived, parseFloat(e.dataset.value)]))"
            ),
            "verdict": browser.evaluate("document.querySelector('#verdict .verdict').innerText"),
            "page_width": browser.evaluate("document.documentElement.scrollWidth"),
            "overview_right": browser.evaluate(
                "document.querySelector('#overview table').getBoundingClientRect().right"
            ),
            "names": browser.evaluate(
                "Array.from(document.querySelectorAll('#overview code')).map(e => e.innerText)"
            ),
            "svg_texts": browser.evaluate(
                "document.querySelectorAll('.vega-chart svg text').length"
            ),
            "cut": browser.evaluate(  # Vega ends a truncated title or label with an ellipsis
                "Array.from(document.querySelectorAll('.vega-chart svg text'))"
                ".filter(t => t.textContent.includes('\u2026')).map(t => t.textContent)"
            ),
            "errors": browser.errors(),
            "network": browser.network_requests(),
        }
    return seen


def verdict_by_hand(judged: pd.DataFrame, system: str = "system_id") -> dict:
    """The verdict's numbers from rating rows (rating, rating_levels, higher_is_better,
    share_at_rating): goodness 0 at the worst level and 1 at the best, mean per system over
    its non-null ratings; best first, ties by name."""
    frame = judged[judged["rating"].notna()].copy()
    levels = frame["rating_levels"].astype(float)
    up = (frame["rating"].astype(float) - 1) / (levels - 1).where(levels > 1)
    frame["goodness"] = np.where(
        levels > 1, np.where(frame["higher_is_better"].astype(bool), up, 1 - up), 1.0
    )
    share = pd.to_numeric(frame["share_at_rating"], errors="coerce")
    frame["shaky"] = share.lt(SHAKY) & share.notna()
    # near the cut: within two Monte Carlo standard errors of it (an exact share never is)
    errors = frame["share_mc_se"] if "share_mc_se" in frame else [None] * len(frame)
    near_cut = sum(
        1
        for p, se in zip(share, errors, strict=True)
        if p == p and se is not None and se == se and se > 0 and abs(p - SHAKY) <= 2 * se
    )
    per = frame.groupby(system).agg(g=("goodness", "mean"), shaky=("shaky", "sum"),
                                    n=("goodness", "size"))  # fmt: skip
    per = per.reset_index().sort_values(["g", system], ascending=[False, True])
    best, worst = per.iloc[0], per.iloc[-1]
    leaders = per[np.isclose(per["g"], best.g, rtol=0, atol=1e-9)]  # a tie: all named
    laggards = per[np.isclose(per["g"], worst.g, rtol=0, atol=1e-9)]
    return {
        "systems": sorted(per[system]),
        "best": list(leaders[system]),
        "worst": list(laggards[system]),
        "best_goodness": 100 * best.g,
        "worst_goodness": 100 * worst.g,
        "gap": 100 * (best.g - worst.g),
        "leader_shaky": float(leaders["shaky"].sum()),
        "leader_ratings": float(leaders["n"].sum()),
        "shaky": float(frame["shaky"].sum()),
        "near_cut": float(near_cut),
        "unknown_share": float(share.isna().sum()),
    }


def interp_verdict_by_hand(warehouse: Path) -> dict:
    """:func:`verdict_by_hand` of an interpretability suite's warehouse, from
    marts.interp_ratings and marts.interp_rating_stability."""
    judged = read(
        warehouse,
        "select r.model_id, r.rating, r.rating_levels, r.higher_is_better, s.share_at_rating, "
        "s.share_mc_se "
        "from marts.interp_ratings r join marts.interp_rating_stability s "
        "using (suite_run_id, metric, variant_id, model_id)",
    )
    return verdict_by_hand(judged, system="model_id")


def named(systems: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: how a verdict names tied systems."""
    return systems[0] if len(systems) == 1 else ", ".join(systems[:-1]) + " and " + systems[-1]


def assert_reads_well(seen: dict, expected: dict, n_charts: int) -> None:
    """Every check of a suite report in the browser against ``verdict_by_hand``'s numbers."""
    assert seen["errors"] == [] and seen["network"] == []
    charts = seen["charts"]
    assert charts["failed"] == [] and charts["rendered"] == charts["total"] == n_charts >= 1
    assert seen["first"] == "verdict"
    names = ["best_goodness", "gap", "leader_shaky", "leader_ratings", "shaky"]
    if expected["best"] != expected["worst"]:
        names.append("worst_goodness")
    for name in names:
        assert seen["derived"][name] == pytest.approx(expected[name]), (name, seen["derived"])
    for said_if_any in ("near_cut", "unknown_share"):  # said only when there are some
        if expected[said_if_any]:
            assert seen["derived"][said_if_any] == expected[said_if_any], seen["derived"]
        else:
            assert said_if_any not in seen["derived"], seen["derived"]
    verdict = seen["verdict"]
    best, worst = expected["best"], expected["worst"]
    if len(best) == len(expected["systems"]):  # every system ties
        assert "do not separate them" in verdict, verdict
    else:
        top = f"{best[0]} does best" if len(best) == 1 else f"{named(best)} tie for best"
        bottom = f"{worst[0]} worst" if len(worst) == 1 else f"{named(worst)} tie for worst"
        assert top in verdict and bottom in verdict, verdict
    assert seen["page_width"] <= 1280 and seen["overview_right"] <= 1280
    assert sorted(seen["names"]) == expected["systems"]  # untruncated, every system
    assert seen["svg_texts"] > 10 and seen["cut"] == []


def assert_page_reads_well(chromium: str, path: Path, expected: dict) -> None:
    """The report at ``path`` read in the browser: :func:`assert_reads_well` against
    ``expected`` with every chart of the page counted, and every chart's spec checked."""
    n_charts = len(page_specs(path.read_text()))
    assert_reads_well(seen_in_browser(chromium, path), expected, n_charts=n_charts)
    assert check_specs(path.read_text()) == n_charts
