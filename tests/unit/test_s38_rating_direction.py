"""The rating rule reads the same way in both directions: with ``higher_is_better`` the levels
fill from the BEST end, mirroring the lower-is-better rule (paper Algorithm 5) exactly:
``rating_hib(s) == L + 1 - rating_lib(-s)`` for every input, in every place that rates."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.ratings import (
    assign_ratings,
    block_bootstrap_ratings,
    rate_matrix,
    ratings_frame,
)
from tsrate.suites.intervals import stability_counts
from tsrate.suites.verdict import goodness


def _by_hand(scores: dict[str, float], levels: int, higher: bool) -> dict[str, int]:
    """Distinct scores best first, cut into ``levels`` contiguous groups, the first groups
    one larger (as numpy's array_split); the best group is level 1 (lower is better) or
    level ``levels`` (higher is better). At least two distinct scores."""
    distinct = sorted(set(scores.values()), reverse=higher)
    size, extra = divmod(len(distinct), levels)
    level_of, start = {}, 0
    for group in range(levels):
        stop = start + size + (1 if group < extra else 0)
        for value in distinct[start:stop]:
            level_of[value] = levels - group if higher else group + 1
        start = stop
    return {s: level_of[v] for s, v in scores.items()}


def _random_groups(seed: int, count: int = 300):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 9))
        pool = rng.choice([0.0, 0.25, 0.5, 0.9, 1.0, 2.0], size=int(rng.integers(1, 4)))
        values = np.where(rng.random(n) < 0.5, rng.choice(pool, size=n), rng.random(n))
        yield int(rng.integers(1, 6)), {f"s{i}": float(v) for i, v in enumerate(values)}


def test_hand_cases_two_systems_three_levels():
    # accuracy (higher is better): the better gets the best level, 3; MAE: the better 1
    assert assign_ratings({"a": 0.9, "b": 0.5}, 3, higher_is_better=True) == {"a": 3, "b": 2}
    assert assign_ratings({"a": 0.1, "b": 0.5}, 3) == {"a": 1, "b": 2}
    # the paper's direction is untouched: lowest score first, array_split's big groups first
    assert assign_ratings(dict(zip("abcd", [4.0, 1.0, 3.0, 2.0], strict=True)), 3) == {
        "a": 3, "b": 1, "c": 2, "d": 1
    }  # fmt: skip
    # mirrored: the highest score first, the big group at the best end
    assert assign_ratings(
        dict(zip("abcd", [4.0, 1.0, 3.0, 2.0], strict=True)), 3, higher_is_better=True
    ) == {"a": 3, "b": 1, "c": 3, "d": 2}


def test_higher_is_better_matches_an_independent_split_from_the_best_end():
    checked = 0
    for levels, scores in _random_groups(1):
        if len(set(scores.values())) < 2:
            continue
        for higher in (False, True):
            got = assign_ratings(scores, levels, higher_is_better=higher)
            assert got == _by_hand(scores, levels, higher), (scores, levels, higher)
            checked += 1
    assert checked > 300


@pytest.mark.parametrize(
    "ideal,maximum", [(None, None), (0.0, None), (1.0, 0.0), (0.0, 2.0), (1.0, None)]
)
def test_mirror_identity_on_random_inputs_lone_and_tied_groups_included(ideal, maximum):
    seen_single = 0
    for levels, scores in _random_groups(2):
        higher = assign_ratings(scores, levels, ideal=ideal, maximum=maximum, higher_is_better=True)
        negated = {s: -v for s, v in scores.items()}
        lower = assign_ratings(
            negated,
            levels,
            ideal=None if ideal is None else -ideal,
            maximum=None if maximum is None else -maximum,
        )
        assert higher == {s: None if r is None else levels + 1 - r for s, r in lower.items()}
        seen_single += len(set(scores.values())) == 1
    assert seen_single > 10


def test_absolute_ratings_of_lone_and_tied_groups_are_unchanged():
    # accuracy ideal 1, worst 0: at the ideal the best level, at the worst the worst
    rule = {"ideal": 1.0, "maximum": 0.0, "higher_is_better": True}
    assert assign_ratings({"a": 1.0, "b": 1.0}, 3, **rule) == {"a": 3, "b": 3}
    assert assign_ratings({"a": 0.0}, 3, **rule) == {"a": 1}
    assert assign_ratings({"a": 0.5}, 4, **rule) == {"a": 3}  # slice 2 of 4 from the ideal
    assert assign_ratings({"a": 0.5}, 3, ideal=1.0, higher_is_better=True) == {"a": None}


def test_rate_matrix_rates_each_row_as_assign_ratings_nan_and_noise_ties_included():
    rng = np.random.default_rng(3)
    for levels, scores in _random_groups(4, 200):
        row = np.array(list(scores.values()))
        row[rng.random(row.size) < 0.2] = np.nan
        row = np.where(rng.random(row.size) < 0.2, row * (1 + 1e-15), row)  # float noise
        for higher in (False, True):
            for ideal, maximum in ((None, None), (1.0, 0.0)):
                got = rate_matrix(
                    row[None, :],
                    levels,
                    ideal=ideal,
                    maximum=None if maximum is None else np.full(row.size, maximum),
                    higher_is_better=higher,
                )[0]
                frame = ratings_frame(
                    pd.DataFrame(
                        {"metric": "m", "perturbation_id": "P", "system_id": list(scores),
                         "raw_score": row}
                    ).dropna(),
                    levels,
                    {"m": higher},
                    ideal={"m": ideal},
                    maximum_column=None,
                ) if maximum is None else None  # fmt: skip
                finite = np.isfinite(row)
                assert (got[~finite] == 0).all()
                if frame is not None:
                    want = frame.set_index("system_id")["rating"].fillna(0)
                    names = [s for s, ok in zip(scores, finite, strict=True) if ok]
                    assert list(got[finite]) == [int(want[s]) for s in names]
                mirrored = rate_matrix(
                    -row[None, :],
                    levels,
                    ideal=None if ideal is None else -ideal,
                    maximum=None if maximum is None else np.full(row.size, -maximum),
                )[0]
                if higher:
                    assert list(got) == [0 if r == 0 else levels + 1 - r for r in mirrored]


def test_bootstrap_point_and_resampled_ratings_fill_from_the_best_end():
    dates = pd.bdate_range("2024-01-01", periods=12)
    values = pd.DataFrame(
        [(s, "P0", d, v) for s, v in (("good", 80.0), ("poor", 40.0)) for d in dates],
        columns=["system_id", "perturbation_id", "window_end_date", "value"],
    )
    out = block_bootstrap_ratings(values, 3, 20, 3, 0, ideal=None, higher_is_better=True)
    rating = out.groupby("system_id")["rating"].first()
    assert rating.to_dict() == {"good": 3, "poor": 2}
    at = out[out["rating_level"] == out["rating"]].set_index("system_id")["share"]
    assert (at == 1.0).all()


def test_suite_stability_re_rates_in_the_published_direction():
    published = {"a": 3, "b": 2}  # accuracy 0.9 and 0.5 on 3 levels
    hits, counted = stability_counts(
        published, [{"a": 0.9, "b": 0.5}] * 4, 3, ideal=1.0, higher_is_better=True
    )
    assert hits == counted == {"a": 4.0, "b": 4.0}


def test_goodness_reads_the_same_for_mirrored_scores_in_either_direction():
    scores = pd.DataFrame(
        {
            "metric": ["accuracy"] * 3 + ["mae"] * 3,
            "perturbation_id": "P",
            "system_id": list("abc") * 2,
            "raw_score": [0.9, 0.5, 0.5, 0.1, 0.5, 0.5],
        }
    )
    rated = ratings_frame(scores, 3, {"accuracy": True, "mae": False})
    good = rated.assign(g=goodness(rated)).pivot(index="system_id", columns="metric", values="g")
    assert good["accuracy"].to_dict() == good["mae"].to_dict() == {"a": 1.0, "b": 0.5, "c": 0.5}
    assert not math.isnan(good.loc["a", "accuracy"])


def test_core_stability_mart_rates_sign_accuracy_as_the_ratings_mart():
    from tests.support.stability_inputs import accuracy_study_stability, stability_settings
    from tests.unit.test_sweep_stability_mart import accuracy_only_inputs

    errors, no_scores, no_effects, sets = accuracy_only_inputs()
    errors["sign_accuracy"] = np.where(errors["system_id"] == "S1", 80.0, 40.0)
    settings = stability_settings()
    out = accuracy_study_stability(errors, no_scores, no_effects, sets, settings)
    levels = settings["rating_levels"]
    sign = out[out["metric"] == "sign_accuracy"].groupby("system_id")["rating"].first()
    published = ratings_frame(
        pd.DataFrame(
            {"metric": "sign_accuracy", "perturbation_id": "P0", "system_id": ["S1", "S2"],
             "raw_score": [80.0, 40.0]}
        ),
        levels,
        {"sign_accuracy": True},
    ).set_index("system_id")["rating"]  # fmt: skip
    assert sign.to_dict() == {s: int(r) for s, r in published.items()}
    assert sign["S1"] == levels
