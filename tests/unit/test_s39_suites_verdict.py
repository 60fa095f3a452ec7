"""The suites' verdict: its counts leave out the repeat it drops, its sentences agree in
number, and the understanding verdict reads the intervals of the rated scores.

Ratings come from the suite's own rating kit (seeds/suite_rating_specs.csv); the expected
counts are counted by hand from the frames below."""

from __future__ import annotations

import re

import pandas as pd

from tests.support.und_report_page import und_report_page
from tests.support.verdict_text import unmarked
from tsrate.suites import rating as kit
from tsrate.suites.verdict import verdict_html

SYSTEMS = ["a", "b", "c", "d"]
MAE = [1.0, 2.0, 3.0, 4.0]  # crps = mae: a point forecaster's CRPS is its MAE
MSE = [16.0, 1.0, 4.0, 9.0]


def forecasts() -> list[dict]:
    return [
        dict(suite_run_id="r", metric=metric, task="forecast_x", system_id=s, raw_score=v)
        for metric, values in (("crps", MAE), ("mae", MAE), ("mse", MSE))
        for s, v in zip(SYSTEMS, values, strict=True)
    ]


def rated(rows: list[dict]) -> pd.DataFrame:
    return kit.rating_table(pd.DataFrame(rows), "reasoning", ["suite_run_id", "metric", "task"],
                            "system_id", 3)  # fmt: skip


def test_the_group_sentence_does_not_count_the_dropped_repeat():
    # a, b, c, d share crps, mae, mse (3 scores, mae a repeat of crps); z is rated on 4
    # accuracy tasks only: 7 scores in all, 6 once mae is dropped; the 4 share 2
    answers = [
        dict(suite_run_id="r", metric="accuracy", task=t, system_id="z", raw_score=0.5)
        for t in ("t1", "t2", "t3", "t4")
    ]
    html = verdict_html(rated(forecasts() + answers), "the tasks", "x")
    assert (
        "Compared on the 2 of the 6 scores that these 4 systems share; not compared: "
        "<b>z</b>, rated on other scores (not counting <code>mae</code>, a repeat; rated "
        "scores: a 2, b 2, c 2, d 2, z 4)." in unmarked(html)
    )
    assert "<code>mae</code> left out: it equals <code>crps</code>" in unmarked(html)


def test_the_shared_sentence_does_not_count_the_dropped_repeat():
    # a, b, c also answer one accuracy task: every system shares crps, mae, mse; 4 in all
    answers = [
        dict(suite_run_id="r", metric="accuracy", task="t1", system_id=s, raw_score=v)
        for s, v in (("a", 0.2), ("b", 0.5), ("c", 0.9))
    ]
    html = verdict_html(rated(forecasts() + answers), "the tasks", "x")
    assert (
        "Compared on the 2 scores every system is rated on, of 3 in all (not counting "
        "<code>mae</code>, a repeat; rated scores: a 3, b 3, c 3, d 2)." in unmarked(html)
    )


def test_without_a_repeat_the_counts_are_unchanged():
    rows = [r for r in forecasts() if r["metric"] != "crps"]
    answers = [
        dict(suite_run_id="r", metric="accuracy", task="t1", system_id=s, raw_score=v)
        for s, v in (("a", 0.2), ("b", 0.5), ("c", 0.9))
    ]
    html = verdict_html(rated(rows + answers), "the tasks", "x")
    assert (
        "Compared on the 2 scores every system is rated on, of 3 in all (rated scores: "
        "a 3, b 3, c 3, d 2)." in unmarked(html)
    )


def shaky_verdict(shares: dict[tuple[str, str], float]) -> str:
    rows = [r for r in forecasts() if r["metric"] != "crps"]
    ratings = rated(rows)
    share = [shares.get((m, s), 0.9) for m, s in zip(ratings["metric"], ratings["system_id"],
                                                     strict=True)]  # fmt: skip
    return verdict_html(ratings.assign(share_at_rating=share), "the forecasts", "x")


def test_one_shaky_rating_is_shaky_two_are():
    # mae: a best (rating 1); mse: b best. a: (1 + 0) / 2, b: (0.5 + 1) / 2 -> b leads
    one = re.sub(r"<[^>]+>", "", shaky_verdict({("mae", "b"): 0.3}))
    assert "How firm: 1 of b's 2 ratings is shaky (under 60%" in one
    assert "1 of all 8." in one
    two = re.sub(r"<[^>]+>", "", shaky_verdict({("mae", "b"): 0.3, ("mse", "b"): 0.5}))
    assert "How firm: 2 of b's 2 ratings are shaky (under 60%" in two


def test_a_lone_rating_is_one_rating():
    # a lone system at the ideal 0 of mae: rated (the best level), one rating
    lone = [dict(suite_run_id="r", metric="mae", task="forecast_x", system_id="a", raw_score=0)]
    ratings = rated(lone).assign(share_at_rating=0.3)
    text = re.sub(r"<[^>]+>", "", verdict_html(ratings, "the forecasts", "x"))
    assert "How firm: 1 of a's 1 rating is shaky" in text


def und_verdict(tmp_path, half_width: float | None) -> str:
    """The understanding report's verdict over 3 systems on two features' detection F1,
    each rated score's interval raw +- ``half_width`` (None: a snapshot without them)."""
    f1 = {"trend": {"x": 0.9, "y": 0.6, "z": 0.3}, "seasonality": {"x": 0.8, "y": 0.5,
                                                                   "z": 0.2}}  # fmt: skip
    _, page = und_report_page(tmp_path, f1, half_width)
    return re.search(r'<section id="verdict">.*?</section>', page, re.S).group(0)


def test_the_understanding_verdict_says_when_best_and_worst_do_not_separate(tmp_path):
    # x best (0.9, 0.8), z worst (0.3, 0.2): 0.6 apart on each feature
    wide = und_verdict(tmp_path, 0.5)  # intervals 1.0 wide: x's and z's overlap on both
    assert "<b>x</b> does best" in wide and "<b>z</b> worst" in wide
    assert "compared scores their 95 % intervals overlap: the ratings do not separate" in wide
    assert 'data-derived="overlapping" data-value="2.0"' in wide
    narrow = und_verdict(tmp_path, 0.1)  # 0.2 wide: apart on both features
    assert "do not separate" not in narrow and "overlapping" not in narrow
    assert "<b>x</b> does best" in narrow
    old = und_verdict(tmp_path, None)  # a snapshot without intervals: nothing to say
    assert "do not separate" not in old and "<b>x</b> does best" in old
