"""The suites' rating stability re-rates each resample by the rule that published the
ratings, floating-noise ties included.

The published suite ratings (``rating_table`` -> ``ratings_frame``) take scores within
floating noise of each other as one score (``tsrate.methods.noise.snap_ties``), so two
systems 5e-17 apart share a rating. ``stability_counts`` re-rated every resample without
that snapping: the two split (1 and 2), a third system moved from 2 to 3, and resamples
identical to the published scores gave shares of 0 instead of 1."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tsrate.suites import intervals
from tsrate.suites import rating as kit

# the noise example of tsrate.methods.noise.snap_ties: one model's SMAPE under two ids
A, B = 0.051301985237853356, 0.051301985237853405


def _published(scores: dict[str, float], higher_is_better: bool, ideal: float | None):
    """The suite's published ratings of one group (the real rating table and spec rule)."""
    specs = pd.DataFrame(
        {
            "suite": "reasoning",
            "metric": ["m"],
            "higher_is_better": [higher_is_better],
            "ideal": [np.nan if ideal is None else ideal],
        }
    )
    frame = pd.DataFrame(
        {
            "suite_run_id": "r",
            "metric": "m",
            "system_id": list(scores),
            "raw_score": list(scores.values()),
        }
    )
    return kit.rating_table(frame, "reasoning", ["suite_run_id", "metric"], "system_id", 3, specs)


def test_the_noise_example_keeps_every_published_rating_in_identical_resamples():
    scores = {"a": A, "b": B, "c": 0.2}
    table = _published(scores, False, 0.0).set_index("system_id")
    published = {s: int(table.loc[s, "rating"]) for s in scores}
    assert published["a"] == published["b"] != published["c"]  # a and b are one score
    hits, counted = intervals.stability_counts(published, [dict(scores)] * 10, 3, ideal=0.0)
    assert counted == {"a": 10.0, "b": 10.0, "c": 10.0}
    assert hits == {"a": 10.0, "b": 10.0, "c": 10.0}
    # and so in the records the suites publish
    records = kit.stability_records(
        {"suite_run_id": "r", "metric": "m"},
        table.reset_index(),
        "system_id",
        [dict(scores)] * 10,
        3,
        (0.0, False, None),
        {"n_resamples": 10},
    )
    assert {r["system_id"]: r["share_at_rating"] for r in records} == dict.fromkeys(scores, 1.0)


def test_resamples_equal_to_the_published_scores_give_everyone_share_one():
    rng = np.random.default_rng(38)
    split_before = 0
    for case in range(300):
        n = int(rng.integers(2, 7))
        base = rng.choice([0.0, 1e-3, 0.05, 1.0, 250.0]) + rng.random(n) * rng.choice([1e-9, 1.0])
        # a few systems within a few ulps (float noise) of another system's score
        for i in range(1, n):
            if rng.random() < 0.4:
                base[i] = base[int(rng.integers(0, i))]
                for _ in range(int(rng.integers(1, 4))):
                    base[i] = np.nextafter(base[i], np.inf if rng.random() < 0.5 else -np.inf)
        scores = {f"s{i}": float(v) for i, v in enumerate(base)}
        higher = bool(rng.random() < 0.5)
        ideal = None if rng.random() < 0.3 else (1.0 if higher else 0.0)
        table = _published(scores, higher, ideal).set_index("system_id")
        published = {
            s: None if pd.isna(table.loc[s, "rating"]) else int(table.loc[s, "rating"])
            for s in scores
        }
        distinct = len(set(scores.values()))
        split_before += distinct > len(set(table["raw_score"]))
        shares = intervals.stability_shares(
            published, [dict(scores)] * 5, 3, ideal=ideal, higher_is_better=higher
        )
        for system, rating in published.items():
            if rating is None:
                assert math.isnan(shares[system]), (case, scores)
            else:
                assert shares[system] == 1.0, (case, scores, published, shares)
    assert split_before > 30  # the cases hold noise ties the published rating joined
