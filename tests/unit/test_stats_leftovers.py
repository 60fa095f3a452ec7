"""Statistics leftovers: the rating-stability bootstrap against the published rating rule.

Expected values are worked by hand from the rules in ``tsrate.methods.ratings`` (Algorithm
5 and the absolute rating of a lone or tied group), never read back from the code."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.methods.ratings import bootstrap_summary, ratings_frame


def _point_ratings(out: pd.DataFrame) -> dict[str, int]:
    first = out.drop_duplicates("system_id")
    return dict(zip(first["system_id"], first["rating"].astype(int), strict=True))


def test_bootstrap_rates_a_tied_group_against_its_largest_max_score() -> None:
    # a and b tie at WRS 1.2; their max_score differ (2.4 and 4.8). The published rating
    # (ratings_frame) takes one worst value for the group, the largest: 1.2 / 4.8 = 0.25 of
    # [0, 4.8] -> the first of 3 equal slices -> rating 1 for both. Against a's own 2.4,
    # 1.2 is half-way -> slice 2: the bootstrap's point rating disagreed with the mart's.
    groups = pd.DataFrame({"system_id": ["a", "b"], "perturbation_id": ["P1", "P1"]})
    point = np.array([1.2, 1.2])
    boot = np.array([[1.2, 1.2]] * 4)
    out = bootstrap_summary(groups, point, boot, 3, 0.9, ideal=0.0, maximum=np.array([2.4, 4.8]))
    assert _point_ratings(out) == {"a": 1, "b": 1}
    # every resample is the tied group again: all of its share on level 1
    shares = out.pivot(index="system_id", columns="rating_level", values="share")
    assert shares.loc["a"].tolist() == [1.0, 0.0, 0.0]
    assert shares.loc["b"].tolist() == [1.0, 0.0, 0.0]
    published = ratings_frame(
        pd.DataFrame(
            {
                "metric": "wrs_company",
                "perturbation_id": "P1",
                "system_id": ["a", "b"],
                "raw_score": point,
                "max_score": [2.4, 4.8],
            }
        ),
        3,
        {"wrs_company": False},
        ideal={"wrs_company": 0.0},
        maximum_column="max_score",
    )
    assert dict(zip(published["system_id"], published["rating"], strict=True)) == {"a": 1, "b": 1}


def test_bootstrap_point_rating_snaps_noise_of_zero_as_the_published_rating() -> None:
    # Scores -2e-11, 2e-11 and 30 (one perturbation): the published rule stores
    # |x| <= 1e-12 x max(1, 30) = 3e-11 as 0, so the distinct scores are 0 and 30, split
    # into 3 levels as numpy.array_split ([0], [30], []): ratings 1, 1, 2. Unsnapped, the
    # two noise values are 4e-11 apart (more than the 3e-11 of a tie): 1, 2, 3.
    groups = pd.DataFrame({"system_id": ["a", "b", "c"], "perturbation_id": "P1"})
    point = np.array([-2e-11, 2e-11, 30.0])
    boot = np.array([[0.0, 0.0, 30.0]] * 3)
    out = bootstrap_summary(groups, point, boot, 3, 0.9, ideal=0.0)
    assert _point_ratings(out) == {"a": 1, "b": 1, "c": 2}
    # the raw score published beside the rating stays the one given
    assert out.drop_duplicates("system_id")["raw_score"].tolist() == [-2e-11, 2e-11, 30.0]
