"""A suite's verdict compares systems on the same scores only.

A system's mean goodness is over its own rated scores; when systems are rated on different
scores (the reasoning suite rates the forecasters on the forecasting scores only and the
random answerer on the choice tasks only), those means rank nothing. The verdict compares
every system on the scores they all share; with none shared by all, the largest group of
systems sharing a score, on the scores it shares (naming the others); with no score rated
for two systems, it names no best or worst. Expected values are
computed by hand below (3 levels, lower is better: goodness 1, 0.5, 0 for ratings 1, 2, 3).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.support.verdict_text import unmarked
from tsrate.suites.verdict import comparable, verdict_html


def ratings(rows: list[tuple[str, str, str, int]]) -> pd.DataFrame:
    """(metric, task, system, rating) rows, 3 levels, lower is better."""
    frame = pd.DataFrame(rows, columns=["metric", "task", "system_id", "rating"])
    return frame.assign(
        suite_run_id="run-1", rating_levels=3, higher_is_better=False, raw_score=0.1, rank=1
    )


def derived(html: str) -> dict[str, float]:
    return {
        name: float(value)
        for name, value in re.findall(r'data-derived="(\w+)" data-value="([^"]+)"', html)
    }


def test_systems_are_compared_on_the_scores_they_all_share():
    frame = ratings(
        [
            ("acc", "t1", "a", 1), ("acc", "t2", "a", 2), ("acc", "t3", "a", 3),
            ("acc", "t1", "b", 2), ("acc", "t2", "b", 2), ("acc", "t3", "b", 1),
            ("acc", "t1", "c", 3), ("acc", "t2", "c", 1),
        ]
    )  # fmt: skip
    # over its own scores b leads (0.5 + 0.5 + 1) / 3 = 0.67 against a's 0.5 and c's 0.5;
    # on t1 and t2, which all three have: a (1 + 0.5) / 2 = 0.75, b 0.5, c (0 + 1) / 2 = 0.5
    html = verdict_html(frame, "the tasks", "x")
    assert "<b>a</b> does best" in unmarked(html)
    assert "<b>b</b> and <b>c</b> tie for worst" in unmarked(html)
    values = derived(html)
    assert values["best_goodness"] == 75.0 and values["worst_goodness"] == 50.0
    assert values["gap"] == 25.0
    assert (
        "Compared on the 2 scores every system is rated on, of 3 in all "
        "(rated scores: a 3, b 3, c 2)." in unmarked(html)
    )
    compared, _ = comparable(frame)
    assert sorted(compared["task"].unique()) == ["t1", "t2"] and len(compared) == 6


def test_a_score_is_every_key_column_not_the_metric_alone():
    """The same metric on two tasks is two scores: a system rated on one task only does not
    share the other."""
    frame = ratings([("acc", "t1", "a", 1), ("acc", "t2", "a", 3), ("acc", "t1", "b", 2)])
    compared, note = comparable(frame)
    assert compared["task"].tolist() == ["t1", "t1"] and "of 2 in all" in unmarked(note)


def test_with_no_shared_score_the_largest_group_sharing_scores_is_compared():
    """The reasoning suite's shape: language models on every task, forecasters on the
    forecasting score only, a random answerer on the choice tasks only. Four systems share
    the forecasting score, three a choice task: the four are compared on it, and the random
    answerer's ratings (perfect on its own tasks) neither crown nor sink it."""
    frame = ratings(
        [
            ("mae", "forecast", "llm_a", 2), ("accuracy", "choice1", "llm_a", 1),
            ("accuracy", "choice2", "llm_a", 1),
            ("mae", "forecast", "llm_b", 3), ("accuracy", "choice1", "llm_b", 3),
            ("accuracy", "choice2", "llm_b", 3),
            ("mae", "forecast", "naive", 1), ("mae", "forecast", "arima", 2),
            ("accuracy", "choice1", "random", 1), ("accuracy", "choice2", "random", 1),
        ]
    )  # fmt: skip
    html = verdict_html(frame, "the tasks", "x")
    # on the forecast score: naive 1, arima 0.5, llm_a 0.5, llm_b 0
    assert "Of 4 systems rated" in unmarked(html)
    assert "<b>naive</b> does best" in unmarked(html) and "<b>llm_b</b> worst" in unmarked(html)
    assert derived(html)["gap"] == 100.0
    assert (
        "Compared on the 1 of the 3 scores that these 4 systems share; not compared: "
        "<b>random</b>, rated on other scores (rated scores: arima 1, llm_a 3, llm_b 3, "
        "naive 1, random 2)." in unmarked(html)
    )


def test_the_default_reasoning_shape_compares_the_forecasters_on_their_scores():
    """No language model: five forecasters on three forecasting scores, the random answerer
    on the choice tasks. The forecasters are compared on their three scores."""
    rows = [
        ("mae", f"forecast{k}", name, rating)
        for name, per in {"arima": (1, 1, 2), "naive": (2, 2, 2), "median": (3, 3, 3)}.items()
        for k, rating in enumerate(per)
    ]
    rows += [("accuracy", "choice1", "random", 1), ("accuracy", "choice2", "random", 1)]
    html = verdict_html(ratings(rows), "the tasks", "x")
    # arima (1 + 1 + 0.5) / 3 = 0.833, naive 0.5, median 0
    assert "<b>arima</b> does best" in unmarked(html) and "<b>median</b> worst" in unmarked(html)
    assert derived(html)["best_goodness"] == pytest.approx(250 / 3)
    assert "these 3 systems share; not compared: <b>random</b>" in unmarked(html)


def test_ties_between_groups_go_to_the_group_sharing_more_scores():
    frame = ratings(
        [
            ("m", "x", "a", 1), ("m", "x", "b", 3),  # a and b share one score
            ("m", "y", "c", 3), ("m", "z", "c", 3), ("m", "y", "d", 1), ("m", "z", "d", 1),
        ]
    )  # fmt: skip
    compared, note = comparable(frame)
    assert sorted(compared["system_id"].unique()) == ["c", "d"]  # two scores beat one
    assert "the 2 of the 3 scores that these 2 systems share" in unmarked(note)


def test_unrated_scores_do_not_count_as_rated():
    """A null rating (too few systems, an undefined score) is no rated score: b's null t2
    leaves t1 as the one score both are rated on."""
    frame = ratings([("acc", "t1", "a", 3), ("acc", "t2", "a", 1), ("acc", "t1", "b", 1)])
    frame = pd.concat(
        [frame, ratings([("acc", "t2", "b", 1)]).assign(rating=None)], ignore_index=True
    )
    html = verdict_html(frame, "the tasks", "x")
    assert "<b>b</b> does best" in unmarked(html) and "<b>a</b> worst" in unmarked(html)
    assert "Compared on the 1 scores every system is rated on, of 2 in all" in unmarked(html)


def test_the_same_scores_for_every_system_change_nothing():
    frame = ratings(
        [("acc", "t1", "a", 1), ("acc", "t2", "a", 3), ("acc", "t1", "b", 2), ("acc", "t2", "b", 2)]
    )
    compared, note = comparable(frame)
    assert note == "" and len(compared) == 4
    assert "Compared on" not in verdict_html(frame, "the tasks", "x")


def test_with_no_score_rated_for_two_systems_no_best_is_named():
    frame = ratings([("acc", "t1", "a", 1), ("acc", "t2", "b", 3), ("acc", "t3", "c", 2)])
    compared, _ = comparable(frame)
    assert compared.empty
    html = verdict_html(frame, "the tasks", "x")
    assert (
        "does best" not in unmarked(html)
        and "tie for best" not in unmarked(html)
        and " worst (" not in unmarked(html)
    )
    assert "Only " not in unmarked(html)
    assert "No score is rated for two systems (rated scores: a 1, b 1, c 1)" in unmarked(html)
    assert "no best or worst is named" in unmarked(html)
    assert derived(html) == {}
