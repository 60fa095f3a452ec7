"""The understanding report's 'Against chance' section: each system's pooled share of right
answers against und_random's on the same questions, checked against statsmodels."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from tsrate.suites.understanding.report import chance_table, chance_table_html


def cell(system, task, feature, n, correct, prompting="zero_shot", unparsed=0):
    return {
        "suite_run_id": "und-1",
        "prompting": prompting,
        "system_id": system,
        "task": task,
        "feature": feature,
        "format": "csv",
        "n_prompts": n,
        "n_unparsed": unparsed,
        "accuracy": correct / n,
    }


def scores():
    return pd.DataFrame(
        [
            # gemma: 70 of 100 right on detection, pooled over two features
            cell("gemma3_270m", "detection", "trend", 60, 45),
            cell("gemma3_270m", "detection", "volatility", 40, 25, unparsed=5),
            cell("und_random", "detection", "trend", 60, 30),
            cell("und_random", "detection", "volatility", 40, 20),
            # matching: 9 of 40 against 12 of 40
            cell("gemma3_270m", "matching_intra", "trend", 40, 9),
            cell("und_random", "matching_intra", "trend", 40, 12),
            # chain of thought: 2 of 40 against 14 of 40
            cell("gemma3_270m", "matching_intra", "trend", 40, 2, prompting="cot"),
            cell("und_random", "matching_intra", "trend", 40, 14, prompting="cot"),
        ]
    )


def test_pooled_shares_intervals_and_p_values_match_statsmodels():
    table = chance_table(scores()).set_index(["prompting", "task"])
    assert set(table["system_id"]) == {"gemma3_270m"}  # und_random is the yardstick
    for key, k, k0, n in [
        (("zero_shot", "detection"), 70, 50, 100),
        (("zero_shot", "matching_intra"), 9, 12, 40),
        (("cot", "matching_intra"), 2, 14, 40),
    ]:
        row = table.loc[key]
        assert row["n_prompts"] == n and row["accuracy"] == pytest.approx(k / n)
        assert row["chance_accuracy"] == pytest.approx(k0 / n)
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
        _, p = proportions_ztest([k, k0], [n, n])
        assert row["p_value"] == pytest.approx(p)
    assert table.loc[("zero_shot", "detection"), "verdict"] == "above chance"
    assert table.loc[("zero_shot", "matching_intra"), "verdict"] == (
        "not distinguishable from chance"
    )
    assert table.loc[("cot", "matching_intra"), "verdict"] == "below chance"


def test_the_section_names_each_verdict_and_is_absent_without_the_chance_reference():
    text = chance_table_html(scores())
    assert "<h2>Against chance</h2>" in text
    assert "gemma3_270m · cot" in text and "<b>below chance</b>" in text
    without = scores()[lambda f: f["system_id"] != "und_random"]
    assert chance_table_html(without) == ""
