"""The reasoning suite's rating stability resamples series, not items.

Several questions of an imported file can ask about one series (its ``uuid``); they are one
sampled unit. Checked against independent computations: a file whose every series has k
copies of its questions gives the shares and intervals of the k = 1 file (an item bootstrap
would narrow them); the cluster bootstrap drawn here by hand (series numbered in the items'
order, each drawn series bringing all its items) gives the table's interval; generated
items are one per scenario and task, so there the resamples are the item resamples.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.reasoning import marts
from tsrate.suites.reasoning.scenarios import GeneratorConfig, generate_items

#: right (1) or wrong (0) per series, for three systems: different enough that ratings move
ANSWERS = {
    "good": [1, 1, 1, 0, 1, 1, 0, 1, 1, 1],
    "fair": [1, 0, 1, 0, 1, 1, 0, 0, 1, 0],
    "poor": [0, 0, 1, 0, 0, 1, 0, 0, 1, 0],
}


def copies_values(k: int) -> pd.DataFrame:
    """accuracy values of qa_single items, k copies of each series' question (item ids
    sort series by series, so series are numbered alike for every k)."""
    rows = []
    for system, answers in ANSWERS.items():
        for j, value in enumerate(answers):
            for copy in range(k):
                rows.append(
                    {
                        "suite_run_id": "r",
                        "metric": "accuracy",
                        "task": "qa_single",
                        "item_id": f"q{j:02d}-{copy}",
                        "series_id": f"uuid:s{j}",
                        "system_id": system,
                        "value": float(value),
                    }
                )
    return pd.DataFrame(rows)


def ratings_of(values: pd.DataFrame) -> pd.DataFrame:
    scores = (
        values.groupby(["suite_run_id", "metric", "task", "system_id"])["value"]
        .mean()
        .rename("raw_score")
        .reset_index()
    )
    return marts.rating_table(scores, levels=3)


def stability(values: pd.DataFrame, resamples: int = 200) -> pd.DataFrame:
    out = marts.rating_stability_table(values, ratings_of(values), 3, resamples, seed=7)
    return out.set_index("system_id").sort_index()


def test_k_copies_of_every_series_questions_leave_the_stability_as_it_was():
    one = stability(copies_values(1))
    for k in (2, 3):
        copied = stability(copies_values(k))
        assert (copied["n_items"] == 10 * k).all() and (copied["n_series"] == 10).all()
        for column in ("raw_score", "rating", "share_at_rating", "ci_low", "ci_high"):
            np.testing.assert_allclose(
                copied[column].to_numpy(float), one[column].to_numpy(float), rtol=0, atol=1e-12
            )
    # the intervals are real ones (not degenerate), so equality says something
    assert ((one["ci_high"] - one["ci_low"]) > 0.2).all()


def test_the_interval_is_the_cluster_bootstrap_drawn_by_hand():
    values = copies_values(3)
    # a system answers one copy of series 0 and series 5 otherwise: series mix within
    odd = (values["system_id"] == "fair") & values["item_id"].isin(["q00-2", "q05-1"])
    values.loc[odd, "value"] = 1.0 - values.loc[odd, "value"]
    out = stability(values, resamples=100)
    wide = values.pivot_table(index="item_id", columns="system_id", values="value")
    series = [int(i[1:3]) for i in wide.index]  # q07-1 -> series 7 (numbered in item order)
    members = [np.flatnonzero(np.array(series) == s) for s in range(10)]
    digest = hashlib.sha256(b"reasoning|accuracy|qa_single").digest()[:4]
    rng = np.random.default_rng([7, int.from_bytes(digest, "little")])
    means = []
    for _ in range(100):
        rows = np.concatenate([members[s] for s in rng.integers(0, 10, 10)])
        means.append(wide.to_numpy()[rows].mean(axis=0))
    means = np.array(means)
    for k, system in enumerate(wide.columns):
        low, high = np.quantile(means[:, k], [0.025, 0.975])
        score = out.loc[system, "raw_score"]
        low, high = min(low, score), max(high, score)
        assert out.loc[system, "ci_low"] == pytest.approx(low, abs=1e-12)
        assert out.loc[system, "ci_high"] == pytest.approx(high, abs=1e-12)


def test_item_values_carry_each_items_series():
    responses = pd.DataFrame(
        {
            "suite_run_id": "r",
            "task": "qa_single",
            "item_id": ["a", "a", "b", "b", "c", "c"],
            "series_id": ["uuid:s1", "uuid:s1", "uuid:s1", "uuid:s1", "uuid:s2", "uuid:s2"],
            "system_id": "x",
            "condition": ["with_series", "without_series"] * 3,
            "is_correct": [True, False, True, True, False, False],
            "is_answered": True,
            "parse_ok": True,
        }
    )
    values = marts.item_values(responses, pd.DataFrame())
    got = values.drop_duplicates("item_id").set_index("item_id")["series_id"].to_dict()
    assert got == {"a": "uuid:s1", "b": "uuid:s1", "c": "uuid:s2"}
    # an older frame without series ids: each item its own series
    old = marts.item_values(responses.drop(columns="series_id"), pd.DataFrame())
    assert (old["series_id"] == old["item_id"]).all()


def test_generated_items_are_one_per_scenario_and_task():
    """stg_rsn_items names a generated item's series by its scenario: with one item per
    scenario in every task, the design effect is 1 and the resamples are the items'."""
    items = generate_items(GeneratorConfig(seed=5, scenarios=12, forecasts=6, length=60))
    tasks = {item.task for item in items}
    assert tasks == {"etiological", "qa_single", "qa_two", "qa_perturbed", "forecast"}
    for task in tasks:
        scenarios = [json.dumps(i.params["scenario"]) for i in items if i.task == task]
        assert len(scenarios) == len(set(scenarios)), task
