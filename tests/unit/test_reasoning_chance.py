"""The reasoning report's 'Against chance' verdict: the Wilson interval leaving out the
chance level is the score test of p = chance at 5 % (statsmodels, computed independently)."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from tsrate.suites.reasoning.report import chance_section, chance_verdict


@pytest.mark.parametrize(
    "k, n, chance",
    [(20, 24, 0.25), (6, 24, 0.25), (1, 24, 0.25), (0, 24, 0.25), (9, 10, 0.5), (14, 40, 0.25)],
)
def test_the_verdict_is_the_score_test_at_five_percent(k, n, chance):
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    _, p = proportions_ztest(k, n, value=chance, prop_var=chance)  # the score test
    verdict = chance_verdict(low, high, chance)
    if p < 0.05:
        assert verdict == ("above chance" if k / n > chance else "below chance")
    else:
        assert verdict == "not distinguishable from chance"


def test_the_section_lists_every_system_and_task():
    low, high = proportion_confint(20, 24, alpha=0.05, method="wilson")
    tasks = pd.DataFrame(
        [
            {"task": "etiological", "system_id": "gemma3_270m", "n_items": 24, "n_series": 24, "accuracy": 20 / 24,
             "accuracy_ci_low": low, "accuracy_ci_high": high, "chance_level": 0.25,
             "n_unanswered": 0, "n_unparseable": 3},
            {"task": "etiological", "system_id": "random", "n_items": 24, "n_series": 24, "accuracy": 0.25,
             "accuracy_ci_low": 0.12, "accuracy_ci_high": 0.45, "chance_level": 0.25,
             "n_unanswered": 0, "n_unparseable": 0},
        ]
    )  # fmt: skip
    text = chance_section(tasks)
    assert "<h2>Against chance</h2>" in text
    assert "<td>gemma3_270m</td><td>24</td><td>0.83" in text and "<b>above chance</b>" in text
    assert "not distinguishable from chance" in text and "<td>3</td>" in text
    assert chance_section(tasks.iloc[:0]) == ""


def test_the_section_shows_the_series_the_interval_counts():
    """Six questions about each of 4 series: the interval is that of the 4 series (3 right,
    answered alike in all 6 questions), so the table gives the 4 series as its units and
    the 24 questions apart."""
    low, high = proportion_confint(3, 4, alpha=0.05, method="wilson")
    tasks = pd.DataFrame(
        [{"task": "qa_single", "system_id": "a", "n_items": 24, "n_series": 4,
          "accuracy": 18 / 24, "accuracy_ci_low": low, "accuracy_ci_high": high,
          "chance_level": 0.25, "n_unanswered": 1, "n_unparseable": 2}]
    )  # fmt: skip
    text = chance_section(tasks)
    assert "<th>series (units)</th>" in text and "<th>questions</th>" in text
    assert f"<td>a</td><td>4</td><td>0.75 [{low:.2f}, {high:.2f}]</td>" in text
    assert "<td>0.25</td><td>24</td><td>3</td>" in text
    older = chance_section(tasks.drop(columns=["n_series"]))  # a snapshot before n_series
    assert "<td>a</td><td>n/a</td>" in older
