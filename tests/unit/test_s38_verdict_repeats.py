"""A suite's verdict counts each score once and says when its best and worst do not
separate.

For a point forecaster CRPS equals MAE exactly (documented: "one reply: its absolute
error"), so the reasoning verdict compared the forecasters on "crps, mae, mse", one score
counted twice; and it called naive best and median worst "100 points apart" while their
95 % intervals overlapped on every score. The ratings below come from the suite's own
rating table (seeds/suite_rating_specs.csv); the expected means are computed by hand from
the ratings it gives, whatever they are."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tests.support.verdict_text import unmarked
from tsrate.suites import rating as kit
from tsrate.suites.reasoning import report as rsn
from tsrate.suites.verdict import summary_table_html, verdict_html

TASK = "forecast_without_context"
SYSTEMS = ["a", "b", "c", "d"]
MAE = [1.0, 2.0, 3.0, 4.0]
MSE = [16.0, 1.0, 4.0, 9.0]  # another order: b best, a worst


def rated(crps: list[float], tasks: tuple[str, ...] = (TASK,)) -> pd.DataFrame:
    """rsn_ratings-like rows from the suite's rating table: crps, mae, mse per task."""
    rows = [
        dict(suite_run_id="r", metric=metric, task=task, system_id=s, raw_score=v)
        for task in tasks
        for metric, values in (("crps", crps), ("mae", MAE), ("mse", MSE))
        for s, v in zip(SYSTEMS, values, strict=True)
    ]
    return kit.rating_table(pd.DataFrame(rows), "reasoning", ["suite_run_id", "metric", "task"],
                            "system_id", 3)  # fmt: skip


def mean_goodness(ratings: pd.DataFrame, metrics: list[str]) -> pd.Series:
    """By hand: goodness 1 at the best level, 0 at the worst (lower is better here)."""
    rows = ratings[ratings["metric"].isin(metrics)]
    assert not rows["higher_is_better"].any()
    levels = rows["rating_levels"].astype(float)
    good = (levels - rows["rating"].astype(float)) / (levels - 1)
    return good.groupby(rows["system_id"]).mean()


def derived(html: str) -> dict[str, float]:
    return {
        name: float(value)
        for name, value in re.findall(r'data-derived="(\w+)" data-value="([^"]+)"', html)
    }


def test_a_metric_equal_to_another_for_every_system_counts_once():
    # b's crps differs from its mae by 4e-13 relative: floating noise, still the same score
    crps = [1.0, 2.0 * (1 + 4e-13), 3.0, 4.0]
    ratings = rated(crps)
    html = verdict_html(ratings, "the forecasts", "x")
    once = mean_goodness(ratings, ["crps", "mse"])
    twice = mean_goodness(ratings, ["crps", "mae", "mse"])
    assert not np.isclose(once.min(), twice.min())  # the repeat moves the worst's mean
    values = derived(html)
    assert values["best_goodness"] == 100 * once.max()
    assert values["worst_goodness"] == 100 * once.min()
    assert (
        "(8 rated scores; <code>mae</code> left out: it equals <code>crps</code> for every "
        "system compared)" in unmarked(html)
    )
    # the summary table ranks by the same means and says the same
    table = summary_table_html(ratings)
    shown = dict(re.findall(r"<code>(\w)</code></td><td>(\d+) %", table))
    assert shown == {s: f"{100 * once[s]:.0f}" for s in SYSTEMS}
    assert "Each score counted once; <code>mae</code> left out" in table


def test_a_metric_apart_beyond_floating_noise_or_another_task_is_not_a_repeat():
    # 1e-9 relative at one system: a different score, counted
    apart = rated([1.0, 2.0 * (1 + 1e-9), 3.0, 4.0])
    html = verdict_html(apart, "the forecasts", "x")
    assert "left out" not in unmarked(html) and "(12 rated scores)" in unmarked(html)
    assert (
        derived(html)["best_goodness"] == 100 * mean_goodness(apart, ["crps", "mae", "mse"]).max()
    )
    # the same metric on two tasks with equal scores: two tasks, not one score twice
    two_tasks = rated([1.5, 2.5, 3.5, 0.5], tasks=(TASK, "forecast_with_context"))
    html = verdict_html(two_tasks, "the forecasts", "x")
    assert "left out" not in unmarked(html) and "(24 rated scores)" in unmarked(html)


def test_two_tasks_agreeing_at_their_bounds_for_two_systems_are_both_counted():
    # two systems, accuracies 1 and 0 on two different tasks: a coincidence, not one score
    rows = [
        dict(suite_run_id="r", metric=metric, task="t", system_id=s, raw_score=v)
        for metric, values in (("accuracy", [1.0, 0.0]), ("series_gap", [1.0, 0.0]))
        for s, v in zip(["x", "y"], values, strict=True)
    ]
    ratings = kit.rating_table(pd.DataFrame(rows), "reasoning", ["suite_run_id", "metric",
                               "task"], "system_id", 3)  # fmt: skip
    html = verdict_html(ratings, "the tasks", "x")
    assert "left out" not in unmarked(html) and "(4 rated scores)" in unmarked(html)


def report(ratings: pd.DataFrame, half_width: dict[str, float]) -> str:
    """The reasoning report's verdict with each score's interval raw +- half_width[metric]."""
    stability = ratings[["suite_run_id", "metric", "task", "system_id"]].assign(
        share_at_rating=0.9,
        share_mc_se=0.01,
        ci_low=ratings["raw_score"] - ratings["metric"].map(half_width),
        ci_high=ratings["raw_score"] + ratings["metric"].map(half_width),
    )
    tasks = pd.DataFrame(columns=["suite_run_id", "task", "system_id", "accuracy"])
    page = rsn.render_report(
        {"tasks": tasks, "forecasts": pd.DataFrame(), "context": pd.DataFrame(),
         "ratings": ratings, "stability": stability}
    )  # fmt: skip
    return re.search(r'<section id="verdict">.*?</section>', page, re.S).group(0)


def test_the_verdict_says_best_and_worst_do_not_separate_when_their_intervals_overlap():
    ratings = rated([1.0, 2.0, 3.0, 4.0])  # crps = mae: compared on crps and mse
    once = mean_goodness(ratings, ["crps", "mse"])
    best, worst = once.idxmax(), once.idxmin()
    assert (once == once.max()).sum() == 1 and (once == once.min()).sum() == 1
    # every interval overlaps every other: no separation, however far the mean goodness
    verdict = report(ratings, {"crps": 100.0, "mae": 100.0, "mse": 100.0})
    assert "points apart, yet on each of the" in unmarked(verdict)
    assert "compared scores their 95 % intervals overlap: the ratings do not separate" in unmarked(
        verdict
    )
    assert derived(verdict)["overlapping"] == 2.0
    # narrow on mse (the best's and worst's mse differ by far more than 2e-3): they separate
    raw = ratings.set_index(["metric", "system_id"])["raw_score"]
    assert abs(raw["mse", best] - raw["mse", worst]) > 2e-3
    verdict = report(ratings, {"crps": 100.0, "mae": 100.0, "mse": 1e-3})
    assert "do not separate" not in unmarked(verdict) and "overlapping" not in derived(verdict)
    assert f"<b>{best}</b> does best" in unmarked(verdict) and f"<b>{worst}</b> worst" in unmarked(
        verdict
    )
