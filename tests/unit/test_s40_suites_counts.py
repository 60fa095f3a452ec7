"""The suites' summary table counts what the verdict counts, and the verdict's counts are
marked as derived numbers.

A point forecaster's CRPS is its MAE: the verdict drops the repeat and its sentence says
"rated scores: a 2, ..." leaving it out, so the summary table's "Rated scores" column (and
the own-scores mean beside it) must leave it out too. Ratings come from the suite's rating
kit (seeds/suite_rating_specs.csv); the expected counts and means are computed here from
the rating rows by hand, not by the verdict's code."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tests.support.und_report_page import und_report_page
from tests.support.verdict_text import unmarked
from tsrate.suites import rating as kit
from tsrate.suites.verdict import summary_table_html, verdict_html

SYSTEMS = ["a", "b", "c", "d"]
MAE = [1.0, 2.0, 3.0, 4.0]  # crps = mae: a repeat for every forecaster
MSE = [16.0, 1.0, 4.0, 9.0]


def forecasts() -> list[dict]:
    return [
        dict(suite_run_id="r", metric=metric, task="forecast_x", system_id=s, raw_score=v)
        for metric, values in (("crps", MAE), ("mae", MAE), ("mse", MSE))
        for s, v in zip(SYSTEMS, values, strict=True)
    ]


def answers(tasks: tuple[str, ...], systems: tuple[str, ...] = ("z",)) -> list[dict]:
    return [
        dict(suite_run_id="r", metric="accuracy", task=t, system_id=s, raw_score=0.2 + 0.1 * i)
        for t in tasks
        for i, s in enumerate(systems)
    ]


def rated(rows: list[dict]) -> pd.DataFrame:
    return kit.rating_table(pd.DataFrame(rows), "reasoning", ["suite_run_id", "metric", "task"],
                            "system_id", 3)  # fmt: skip


def cells(html: str) -> dict[str, list[str]]:
    rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", html)[1:]]
    return {re.sub("</?code>", "", r[1]): r for r in rows}


def by_hand(ratings: pd.DataFrame, leave_out: set[str]) -> dict[str, tuple[int, float]]:
    """Per system: rated scores less the metrics ``leave_out``, and their mean goodness."""
    rows = ratings[ratings["rating"].notna() & ~ratings["metric"].isin(leave_out)]
    levels = rows["rating_levels"].astype(float)
    up = (rows["rating"].astype(float) - 1) / (levels - 1)
    good = np.where(rows["higher_is_better"].astype(bool), up, 1 - up)
    per = pd.Series(good, index=rows.index).groupby(rows["system_id"])
    return {s: (int(per.size()[s]), float(per.mean()[s])) for s in per.size().index}


def derived(html: str) -> dict[str, float]:
    return {
        name: float(value)
        for name, value in re.findall(r'data-derived="(\w+)" data-value="([^"]+)"', html)
    }


def test_the_table_counts_rated_scores_as_the_verdict_sentence_does():
    # a..d share crps, mae, mse (mae repeats crps); z answers 4 tasks: compared a..d only
    ratings = rated(forecasts() + answers(("t1", "t2", "t3", "t4")))
    html = verdict_html(ratings, "the tasks", "x")
    said = dict(
        re.findall(r"(\w) (\d+)", re.search(r"rated scores: ([^)]*)\)", unmarked(html)).group(1))
    )
    once = by_hand(ratings, {"mae"})
    assert said == {s: str(n) for s, (n, _) in once.items()}
    assert by_hand(ratings, set())["a"][0] == 3  # counting the repeat would say 3
    table = cells(summary_table_html(ratings))
    for name, (n, mean) in once.items():
        row = table[name]
        assert row[5] == str(n), (name, row)  # Rated scores
        assert row[4] == f"{100 * mean:.0f} %", (name, row)  # own-scores mean, once
    # the own-scores mean moves with the repeat for some system: the test can tell
    twice = by_hand(ratings, set())
    assert any(f"{100 * twice[s][1]:.0f}" != f"{100 * once[s][1]:.0f}" for s in SYSTEMS)


def test_the_verdict_marks_its_counts_as_derived_numbers():
    # group branch: 2 of the 6 scores (7 less the repeat), 8 compared ratings
    ratings = rated(forecasts() + answers(("t1", "t2", "t3", "t4")))
    values = derived(verdict_html(ratings, "the tasks", "x"))
    once = by_hand(ratings, {"mae"})
    compared = ratings[ratings["system_id"].isin(SYSTEMS) & (ratings["metric"] != "mae")]
    every = ratings[ratings["metric"] != "mae"][["metric", "task"]].drop_duplicates()
    assert values["compared_scores"] == len(compared[["metric", "task"]].drop_duplicates()) == 2
    assert values["scores_in_all"] == len(every) == 6
    assert values["rated_scores"] == len(compared) == sum(once[s][0] for s in SYSTEMS)
    # shared branch: a, b, c also answer t1; every system shares crps, mae, mse
    ratings = rated(forecasts() + answers(("t1",), ("a", "b", "c")))
    values = derived(verdict_html(ratings, "the tasks", "x"))
    assert values["compared_scores"] == 2 and values["scores_in_all"] == 3
    assert values["rated_scores"] == 8
    # every system on the same scores: no sentence, the count still marked
    values = derived(verdict_html(rated(forecasts()), "the forecasts", "x"))
    assert "compared_scores" not in values and values["rated_scores"] == 8


def und_ratings_table(tmp_path) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """The understanding report's ratings table (one dict per row) over 3 systems and three
    features' detection F1, y's seasonality score undefined (NaN): not rated."""
    f1 = {"trend": {"x": 0.9, "y": 0.6, "z": 0.3}, "seasonality": {"x": 0.8, "y": np.nan,
          "z": 0.2}, "shift": {"x": 0.7, "y": 0.4, "z": 0.5}}  # fmt: skip
    ratings, page = und_report_page(tmp_path, f1)
    part = page[page.index("<h2>Ratings (mean rating") :]
    block = re.search(r"<table.*?</table>", part, re.S).group(0)
    header = re.findall(r"<th>(.*?)</th>", block)
    rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", block)[1:]]
    return ratings, [dict(zip(header, r, strict=True)) for r in rows]


def test_the_understanding_ratings_table_counts_rated_and_not_rated_features_apart(tmp_path):
    ratings, rows = und_ratings_table(tmp_path)
    reason = ratings["rating_reason"].astype("string").fillna("")
    assert (reason.str.startswith("not rated:") == ratings["raw_score"].isna()).all()
    for row in rows:
        mine = ratings[ratings["system_id"] == row["System"]]
        rated = int(mine["rating"].notna().sum())
        assert row["N rated"] == str(rated), row
        assert row["N not rated"] == str(len(mine) - rated), row
        mean = mine["rating"].dropna().astype(float).mean()
        assert row["Mean rating"] == f"{mean:.3g}", row
    assert {r["System"]: r["N rated"] for r in rows} == {"x": "3", "y": "2", "z": "3"}
    assert "N features" not in {k for r in rows for k in r}
