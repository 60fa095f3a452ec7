"""The suites' summary table says which mean the verdict compares.

A system's mean goodness over its own rated scores ranks nothing when systems are rated on
different scores (the reasoning suite's random answerer is rated on the choice tasks only,
the forecasters on the forecasting scores only), and the verdict compares them on shared
scores (:func:`tsrate.suites.verdict.comparable`). The table then ranks by the mean over
the compared scores (blank for a system left out), keeps the own-scores mean beside it and
names the compared scores. Expected values are computed here from the rows themselves
(goodness = (levels - rating) / (levels - 1), lower is better), not by the verdict's code.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tsrate.suites.verdict import summary_table_html, verdict_html


def ratings(rows: list[tuple[str, str, str, int]], levels: int = 3) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["metric", "task", "system_id", "rating"])
    return frame.assign(
        suite_run_id="run-1", rating_levels=levels, higher_is_better=False, raw_score=0.1, rank=1
    )


def cells(html: str) -> list[list[str]]:
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)[1:]]


def by_hand(rows, levels, systems, scores=None) -> dict[str, float]:
    """Mean goodness per system over ``scores`` ((metric, task) pairs; None: its own)."""
    out = {}
    for name in systems:
        mine = [
            (levels - r) / (levels - 1)
            for m, t, s, r in rows
            if s == name and (scores is None or (m, t) in scores)
        ]
        out[name] = float(np.mean(mine))
    return out


REASONING_SHAPE = [
    ("mae", "forecast", "llm_a", 2), ("accuracy", "choice1", "llm_a", 1),
    ("accuracy", "choice2", "llm_a", 1), ("mae", "forecast", "llm_b", 3),
    ("accuracy", "choice1", "llm_b", 2), ("accuracy", "choice2", "llm_b", 1),
    ("mae", "forecast", "naive", 1), ("mae", "forecast", "arima", 2),
    ("accuracy", "choice1", "random", 1), ("accuracy", "choice2", "random", 1),
]  # fmt: skip


def test_the_table_ranks_by_the_verdicts_compared_scores_and_names_them():
    frame = ratings(REASONING_SHAPE)
    html = summary_table_html(frame)
    # the verdict compares the four systems on the forecast score; random is left out
    compared = by_hand(REASONING_SHAPE, 3, ["llm_a", "llm_b", "naive", "arima"],
                       {("mae", "forecast")})  # fmt: skip
    own = by_hand(REASONING_SHAPE, 3, ["llm_a", "llm_b", "naive", "arima", "random"])
    table = cells(html)
    ranked = sorted(compared, key=lambda s: (-compared[s], s))
    assert [row[1] for row in table] == [f"<code>{s}</code>" for s in [*ranked, "random"]]
    for row in table:
        name = re.sub("</?code>", "", row[1])
        assert row[4] == f"{100 * own[name]:.0f} %"
        if name == "random":
            assert row[0] == "–" and row[2] == "" and row[3] == ""
        else:
            # equal means share a rank (1 + the systems strictly ahead), as the verdict ties them
            ahead = sum(compared[other] > compared[name] + 1e-9 for other in compared)
            assert row[0] == str(ahead + 1)
            assert row[2] == f"{100 * compared[name]:.0f} %" and row[3] == "1"
    # the own-scores mean would put random (100 %) first and llm_a (83 %) above naive: the
    # compared column is what the verdict ranks by
    assert own["random"] == 1.0 and table[0][1] == "<code>naive</code>"
    assert "<b>naive</b> does best" in verdict_html(frame, "the tasks", "x")
    assert "compares 4 systems on the same 1 scores (<code>mae · forecast</code>)" in html
    assert "not compared: <b>random</b>, rated on other scores" in html


def test_systems_sharing_some_scores_are_compared_on_those_only():
    rows = [
        ("acc", "t1", "a", 1), ("acc", "t2", "a", 2), ("acc", "t3", "a", 5),
        ("acc", "t1", "b", 4), ("acc", "t2", "b", 2), ("acc", "t3", "b", 1),
        ("acc", "t1", "c", 5), ("acc", "t2", "c", 1),
    ]  # fmt: skip
    html = summary_table_html(ratings(rows, levels=5))
    shared = {("acc", "t1"), ("acc", "t2")}
    compared = by_hand(rows, 5, "abc", shared)
    own = by_hand(rows, 5, "abc")
    table = cells(html)
    for row in table:
        name = re.sub("</?code>", "", row[1])
        assert row[2] == f"{100 * compared[name]:.0f} %" and row[3] == "2"
        assert row[4] == f"{100 * own[name]:.0f} %"
        assert row[5] == str(sum(1 for _, _, s, _ in rows if s == name))
    means = [compared[re.sub("</?code>", "", r[1])] for r in table]
    # b and c tie at 50 %: they share rank 2
    assert means == sorted(means, reverse=True) and [r[0] for r in table] == ["1", "2", "2"]
    # the suite run (one value) names no score; the two compared tasks are named
    assert "on the same 2 scores (<code>t1</code>, <code>t2</code>)" in html
    assert "not compared" not in html


def test_the_same_scores_for_every_system_keep_one_mean():
    rows = [("acc", "t1", "a", 1), ("acc", "t2", "a", 3), ("acc", "t1", "b", 2),
            ("acc", "t2", "b", 2), ("acc", "t1", "c", 3), ("acc", "t2", "c", 3)]  # fmt: skip
    html = summary_table_html(ratings(rows))
    own = by_hand(rows, 3, "abc")
    assert "compared scores" not in html and '<p class="note">' not in html
    assert [r[2] for r in cells(html)] == [f"{100 * own[s]:.0f} %" for s in "abc"]


def test_with_no_score_shared_no_system_is_ranked():
    rows = [("acc", "t1", "a", 1), ("acc", "t2", "b", 3)]
    table = cells(summary_table_html(ratings(rows)))
    assert [r[0] for r in table] == ["–", "–"] and [r[2] for r in table] == ["", ""]
    assert [r[4] for r in table] == ["100 %", "0 %"]
    assert "ranks nothing" in summary_table_html(ratings(rows))


def test_many_compared_scores_are_named_up_to_twelve():
    rows = [("acc", f"t{k:02d}", s, 1 + (k + i) % 3) for k in range(15) for i, s in
            enumerate("ab")] + [("acc", "x", "c", 1)]  # fmt: skip
    html = summary_table_html(ratings(rows))
    assert "the same 15 scores (" in html and "<code>t11</code>, and 3 more)" in html
    assert "<code>t12</code>" not in html
