"""The suites' rating-stability kit re-rates, in every resample, only the systems that took
part in the published rating.

A system a suite holds back from its ranking (``unrated_reason``: e.g. a forecaster of
fewer items) has no published rating, yet ``stability_counts`` re-rated it beside the
others in every resample where its value was finite: it moved their resampled ratings and
so their ``share_at_rating``. The expected shares below are counted by hand from
hand-made resamples (Algorithm 5 on 3 levels, lower is better, no ideal: two distinct
scores rate 1 and 2, three rate 1, 2, 3, a lone score is unrated)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tsrate.suites import intervals
from tsrate.suites import rating as kit

NAN = float("nan")
RULE = (None, False, None)  # no ideal, lower is better, no known worst value
# per resample: a and b re-rated without h, and (in brackets) with h as the old kit did
DRAWS = [
    {"a": 1.0, "b": 2.0, "h": 1.5},  # a 1, b 2: both hit   [a 1, h 2, b 3: b misses]
    {"a": 1.0, "b": 2.0, "h": 0.5},  # a 1, b 2: both hit   [h 1, a 2, b 3: both miss]
    {"a": 3.0, "b": 2.0, "h": 2.5},  # b 1, a 2: both miss  [b 1, h 2, a 3: both miss]
    {"a": 1.0, "b": NAN, "h": 0.1},  # a alone: unrated, not counted; b undefined
    #                                  [h 1, a 2: a counted, misses]
]


def _published() -> pd.DataFrame:
    """a and b rated by the suite's own rating table; h held back with its reason."""
    specs = pd.DataFrame(
        {"suite": "reasoning", "metric": ["mae"], "higher_is_better": [False], "ideal": [NAN]}
    )
    scores = pd.DataFrame(
        {
            "suite_run_id": "r",
            "metric": "mae",
            "system_id": ["a", "b", "h"],
            "raw_score": [1.0, 2.0, 0.4],
            "unrated_reason": [None, None, "held back: scored on 2 of the 4 items"],
        }
    )
    return kit.rating_table(scores, "reasoning", ["suite_run_id", "metric"], "system_id", 3, specs)


def test_the_published_group_rates_a_and_b_and_holds_h_back():
    published = _published().set_index("system_id")
    assert published.loc["a", "rating"] == 1 and published.loc["b", "rating"] == 2
    assert pd.isna(published.loc["h", "rating"])
    assert published.loc["h", "rating_reason"].startswith("held back")


def test_a_held_back_system_moves_none_of_the_others_shares():
    records = kit.stability_records(
        {"suite_run_id": "r", "metric": "mae"},
        _published(),
        "system_id",
        DRAWS[:3],  # the fourth would leave b undefined in 1 of 4: withheld (over 5 %)
        3,
        RULE,
        {"n_resamples": 3},
    )
    got = {r["system_id"]: r for r in records}
    # a: at rating 1 in resamples 1 and 2 of 3 (the old kit: in 1 only)
    assert math.isclose(got["a"]["share_at_rating"], 2 / 3)
    assert math.isclose(got["a"]["share_mc_se"], math.sqrt(2 / 3 * 1 / 3 / 3))
    # b: at rating 2 in resamples 1 and 2 of 3 (the old kit: in none)
    assert math.isclose(got["b"]["share_at_rating"], 2 / 3)
    assert got["b"]["n_resamples_undefined"] == 0
    # h keeps its row and its interval, without a share
    assert math.isnan(got["h"]["share_at_rating"]) and math.isnan(got["h"]["share_mc_se"])
    assert got["h"]["n_resamples_undefined"] == 0
    assert got["h"]["ci_low"] <= 0.4 <= got["h"]["ci_high"]


def test_the_counts_leave_out_every_system_without_a_published_rating():
    published = {"a": 1, "b": 2, "h": None}
    hits, counted = intervals.stability_counts(published, DRAWS, 3)
    # a: counted in resamples 1-3 (alone in 4: unrated), at rating 1 in 1 and 2;
    # b: counted in 1-3 (undefined in 4), at rating 2 in 1 and 2 (old kit: a 1 of 4, b 0 of 3)
    assert hits == {"a": 2.0, "b": 2.0, "h": 0.0}
    assert counted == {"a": 3.0, "b": 3.0, "h": 0.0}
    # weighted (an exact bootstrap's distinct draws): each resample counts its weight
    weights = [0.1, 0.2, 0.3, 0.4]
    hits, counted = intervals.stability_counts(published, DRAWS, 3, weights=weights)
    assert np.allclose([hits["a"], hits["b"]], [0.3, 0.3])
    assert np.allclose([counted["a"], counted["b"]], [0.6, 0.6])


def test_a_group_its_rule_rated_nobody_keeps_no_share():
    # a lone system away from the ideal 0 with no known worst value: the rule rates nobody,
    # in the published group and in every resample, with or without the kit's change
    lone = {"s": None}
    draws = [{"s": 2.0}, {"s": 3.0}, {"s": NAN}]
    hits, counted = intervals.stability_counts(lone, draws, 3, ideal=0.0)
    assert hits == {"s": 0.0} and counted == {"s": 0.0}
    # two systems tied away from the ideal: unrated together; their resamples, which
    # differ, still give them no share (no published rating to be at)
    tied = {"s": None, "t": None}
    draws = [{"s": 2.0, "t": 3.0}, {"s": 3.0, "t": 2.0}]
    shares = intervals.stability_shares(tied, draws, 3, ideal=0.0)
    assert all(math.isnan(v) for v in shares.values())
    # and so through the records the suites publish
    rows = pd.DataFrame(
        {
            "system_id": ["s", "t"],
            "raw_score": [2.0, 2.0],
            "rating": pd.array([None, None], "Int64"),
        }
    )
    records = kit.stability_records({}, rows, "system_id", draws, 3, (0.0, False, None), {})
    assert all(math.isnan(r["share_at_rating"]) for r in records)
