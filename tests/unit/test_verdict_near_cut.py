"""How firm a suite's verdict says its ratings are, with the shares' Monte Carlo error.

A rating is shaky when under 60 % of the resamples give its level. The share itself is a
Monte Carlo estimate (200 bootstrap draws: standard error ``share_mc_se`` up to about
0.035; an exact bootstrap: 0), so a rating whose share lies within two standard errors of
0.6 could fall on the other side of the cut with another bootstrap seed: the verdict counts
those as near the cut. Columns that say how a score was rated (its stability mart's
``n_seeds``, ``share_mc_se``, resample counts) are not part of which score it is: a model
rated over fewer training seeds is still rated on the same score. Expected values are
worked out by hand in each test.
"""

from __future__ import annotations

import re

import pandas as pd

from tsrate.suites.verdict import comparable, summary_table_html, system_scores, verdict_html


def ratings(rows: list[tuple]) -> pd.DataFrame:
    """(metric, system, rating, share_at_rating, share_mc_se) rows; 3 levels, higher is
    better (goodness 0, 0.5, 1 for ratings 1, 2, 3)."""
    frame = pd.DataFrame(
        rows, columns=["metric", "system_id", "rating", "share_at_rating", "share_mc_se"]
    )
    return frame.assign(
        suite_run_id="run-1", rating_levels=3, higher_is_better=True, raw_score=0.5, rank=1
    )


def derived(html: str) -> dict[str, float]:
    return {
        name: float(value)
        for name, value in re.findall(r'data-derived="(\w+)" data-value="([^"]+)"', html)
    }


# |share - 0.6| against 2 x se, by hand:
#   a/m1: |0.55 - 0.6| = 0.05 <= 0.06 (se 0.03)  near, shaky
#   a/m2: |0.64 - 0.6| = 0.04 <= 0.05 (se 0.025) near, firm
#   a/m3: |0.50 - 0.6| = 0.10 >  0.06 (se 0.03)  not near, shaky
#   b/m1: |0.55 - 0.6| = 0.05 >  0.03 (se 0.015) not near (within 4 se: a wider rule would count it)
#   b/m2: |0.59 - 0.6| = 0.01, se 0 (an exact share)       not near, shaky
#   b/m3: share missing (withheld)                          not near, not shaky
NEAR = [
    ("m1", "a", 3, 0.55, 0.03),
    ("m2", "a", 3, 0.64, 0.025),
    ("m3", "a", 2, 0.50, 0.03),
    ("m1", "b", 1, 0.55, 0.015),
    ("m2", "b", 2, 0.59, 0.0),
    ("m3", "b", 1, None, None),
]


def test_ratings_within_two_mc_standard_errors_of_the_cut_are_counted_per_system():
    scores = system_scores(ratings(NEAR)).set_index("system_id")
    assert scores.loc["a", "n_near_cut"] == 2 and scores.loc["b", "n_near_cut"] == 0
    assert scores.loc["a", "n_shaky"] == 2 and scores.loc["b", "n_shaky"] == 2


def test_the_verdict_says_how_many_ratings_lie_near_the_cut():
    html = verdict_html(ratings(NEAR), "the tasks", "x")
    values = derived(html)
    assert values["near_cut"] == 2 and values["shaky"] == 4
    assert (
        "of the 6 lie within two Monte Carlo standard errors (share_mc_se) of the 60% cut: "
        "another bootstrap seed could put them on its other side." in html
    )


def test_one_rating_near_the_cut_is_said_in_the_singular():
    html = verdict_html(ratings([NEAR[0], NEAR[3]]), "the tasks", "x")  # m1 of a and b
    assert derived(html)["near_cut"] == 1
    assert "of the 2 lies within two" in html and "could put it on its other side" in html


def test_no_sentence_without_a_rating_near_the_cut_or_without_mc_errors():
    # 0.9 and 0.3: far from 0.6; 0.5 +- 2 x 0.01: near 0.5, not the cut; 0.6 exact
    far = [("m1", "a", 3, 0.9, 0.02), ("m1", "b", 1, 0.3, 0.03),
           ("m2", "a", 2, 0.5, 0.01), ("m2", "b", 1, 0.6, 0.0)]  # fmt: skip
    for frame in (ratings(far), ratings(NEAR).drop(columns="share_mc_se")):
        html = verdict_html(frame, "the tasks", "x")
        assert "near_cut" not in derived(html) and "Monte Carlo" not in html
        assert "shaky" in derived(html)  # the shaky count itself is still said


def test_the_summary_table_shows_the_ratings_near_the_cut_beside_the_shaky_ones():
    html = summary_table_html(ratings(NEAR))
    assert "<td>2 ⚠ (2 near the cut)</td>" in html
    assert "<td>2 ⚠</td>" in html  # b: shaky, none near


def test_a_model_rated_over_fewer_training_seeds_is_rated_on_the_same_score():
    """interp_rating_stability's n_seeds (and the other stability counts) describe how a
    score was rated: two models on the same two metrics, one with a seed fewer on one,
    are compared on both metrics."""
    frame = ratings(
        [("m1", "a", 3, 0.9, 0.0), ("m1", "b", 1, 0.9, 0.0),
         ("m2", "a", 1, 0.9, 0.0), ("m2", "b", 3, 0.9, 0.0)]
    ).assign(n_seeds=[5, 4, 5, 5], n_resamples=[126, 35, 126, 126], n_resamples_undefined=0)  # fmt: skip
    compared, left_out = comparable(frame)
    assert left_out == "" and len(compared) == 4
    html = verdict_html(frame, "the tasks", "x")
    assert "do not separate them" in html  # a and b: (1 + 0) / 2 each


def test_the_verdict_counts_the_ratings_near_the_cut_of_every_system():
    # a: 0.62 (|0.02| <= 0.04) near; b: 0.57 (|0.03| <= 0.06) near; both on m1 and m2
    frame = ratings(
        [("m1", "a", 3, 0.62, 0.02), ("m2", "a", 3, 0.95, 0.01),
         ("m1", "b", 1, 0.57, 0.03), ("m2", "b", 2, 0.99, 0.005)]
    )  # fmt: skip
    html = verdict_html(frame, "the tasks", "x")
    assert derived(html)["near_cut"] == 2 and "of the 4 lie within two" in html


def test_ratings_without_a_resampled_share_are_said_to_be_of_unknown_firmness():
    """NEAR's b/m3 has no share (withheld): counted in neither the shaky nor the near-cut
    count, and said apart."""
    scores = system_scores(ratings(NEAR)).set_index("system_id")
    assert scores.loc["a", "n_unknown"] == 0 and scores.loc["b", "n_unknown"] == 1
    html = verdict_html(ratings(NEAR), "the tasks", "x")
    assert derived(html)["unknown_share"] == 1
    assert "1</span> of the 6 has no resampled share: how firm it is is unknown." in html
    two = ratings(NEAR).assign(share_at_rating=[0.9, 0.9, 0.9, 0.9, None, None])
    html = verdict_html(two, "the tasks", "x")
    assert "2</span> of the 6 have no resampled share: how firm they are is unknown." in html
    full = ratings(NEAR[:5] + [("m3", "b", 1, 0.9, 0.01)])
    assert "unknown_share" not in derived(verdict_html(full, "the tasks", "x"))
