"""What the mutation sweep of the inputs, the offline systems and the suites' rating kit found
uncaught, each pinned against an independent computation (hand-worked numbers with their
derivation, or numpy / colorsys / statsmodels written from the definition).

Spec: tests/planted/sweep_inputs_systems.json.
"""

from __future__ import annotations

import colorsys
import hashlib
import re
import sys
import warnings
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.perturbations import (
    input_series,
    perturb_images,
    perturb_series,
    perturbed_positions,
    saturate,
    sentiment_intensity,
)
from tsrate.inputs.windows import contexts, futures, window_end_positions
from tsrate.suites import intervals
from tsrate.suites.rating import (
    group_rng,
    metric_rule,
    rate_scores,
    rating_table,
    stability_records,
    suite_spec,
)
from tsrate.suites.verdict import goodness, summary_table_html, system_scores, verdict_html
from tsrate.systems.arima import ArimaSystem
from tsrate.systems.base import QUANTILE_LEVELS, ForecastBatch
from tsrate.systems.biased import BiasedSystem
from tsrate.systems.naive import NaiveSystem
from tsrate.systems.seasonal_naive import SeasonalNaiveSystem
from tsrate.systems.uniform_random import UniformRandomSystem

# -- windows ---------------------------------------------------------------------------------


def test_a_series_exactly_one_window_long_holds_one_window():
    # 5 values, context 3, horizon 2: the only window ends at position 2 (values 0, 1, 2 in,
    # 3, 4 to forecast)
    ends = window_end_positions(5, 3, 2)
    assert ends.tolist() == [2]
    values = np.arange(5.0)
    assert contexts(values, ends, 3).tolist() == [[0, 1, 2]]
    assert futures(values, ends, 2).tolist() == [[3, 4]]
    with pytest.raises(TsrateError, match="too short"):
        window_end_positions(4, 3, 2)


# -- numeric perturbations P1-P3 ------------------------------------------------------------


def test_perturbations_start_at_the_first_value_by_default_and_every_one_perturbs_all():
    values = np.arange(1.0, 11.0)  # 1 .. 10
    # default phase 0: positions 0, 3, 6, 9
    assert np.flatnonzero(perturbed_positions(10, 3)).tolist() == [0, 3, 6, 9]
    out, mask = perturb_series(values, "P2", every=3)
    assert np.flatnonzero(mask).tolist() == [0, 3, 6, 9]
    np.testing.assert_array_equal(out, [0.5, 2, 3, 2, 5, 6, 3.5, 8, 9, 5])
    out, mask = input_series(values, "P1", every=3)
    np.testing.assert_array_equal(out, [0, 2, 3, 0, 5, 6, 0, 8, 9, 0])
    # every = 1 is a valid spacing: every value is perturbed
    out, mask = perturb_series(values, "P1", every=1)
    assert mask.all() and not out.any()
    assert perturbed_positions(4, 1).tolist() == [True] * 4


@pytest.mark.parametrize("every", [0, -1])
def test_a_spacing_below_one_is_refused_by_name(every):
    with pytest.raises(TsrateError, match="spacing must be at least 1"):
        perturb_series(np.ones(5), "P1", every=every)


# -- image perturbations P4-P6 --------------------------------------------------------------


def test_sentiment_labels_are_refused_when_any_one_is_invalid():
    with pytest.raises(TsrateError, match="-1, 0 or 1"):
        sentiment_intensity(np.array([0, 1, 2]))
    # (label + 1) / 2 * 255: 0, 127.5 -> 128 (half to even), 255
    assert sentiment_intensity(np.array([-1, 0, 1])).tolist() == [0, 128, 255]


#: (pixel, its P5 image) worked by hand: V = max, m = min, S = (V - m) / V, S' = min(10 S, 1),
#: each channel c -> round(V * (1 - S' * (1 - (c - m) / (V - m))))
SATURATED = [
    # S = 0.95 -> S' = 1: the min channel goes to 0, b: 200 * 20 / 190 = 21.05
    ((10, 200, 30), (0, 200, 21)),
    # S = 5/255 -> S' = 50/255: g: 255 - 50 * 0.2 = 245, b: 255 - 50 = 205
    ((255, 254, 250), (255, 245, 205)),
    # a spread of one level: S = 1/101 -> S' = 10/101: 101 - 10 = 91
    ((101, 100, 100), (101, 91, 91)),
    # S = 0.15 -> S' = 1: g: 200 * 10 / 30 = 66.7
    ((200, 180, 170), (200, 67, 0)),
    # S = 0.02 -> S' = 0.2: g: 100 * (1 - 0.2 * 0.5) = 90, b: 100 * 0.8 = 80
    ((100, 99, 98), (100, 90, 80)),
    ((0, 0, 0), (0, 0, 0)),  # black stays black
    ((128, 128, 128), (128, 128, 128)),  # grey stays grey
]


def test_p5_pixels_exactly_as_worked_by_hand_and_by_colorsys():
    pixels = np.array([[[p for p, _ in SATURATED]]], dtype=np.uint8)  # 1 x 1 x 7 x 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 on black or grey: a NaN cast to uint8 is undefined
        out = saturate(pixels)
        via_p5 = perturb_images(pixels, "P5")
    assert out[0, 0].tolist() == [list(e) for _, e in SATURATED]
    np.testing.assert_array_equal(via_p5, out)
    for before, after in zip(pixels[0, 0], out[0, 0], strict=True):
        h, s, v = colorsys.rgb_to_hsv(*(before / 255))
        expected = np.round(np.array(colorsys.hsv_to_rgb(h, min(10 * s, 1.0), v)) * 255)
        np.testing.assert_array_equal(after, expected)


def test_image_perturbations_take_a_single_image_and_refuse_other_shapes():
    image = np.full((5, 7, 3), 200, dtype=np.uint8)  # one image, H = 5, W = 7
    out = perturb_images(image, "P4")
    assert out[2, 3].tolist() == [0, 0, 0]  # centre (5 // 2, 7 // 2)
    assert (out != image).any(axis=-1).sum() == 1
    stripe = perturb_images(np.full((12, 4, 3), 200, dtype=np.uint8), "P6", np.array([1]))
    # the bottom SENTIMENT_STRIPE_HEIGHT = 8 rows of 12 are the stripe (255), the top 4 kept
    assert (stripe[4:] == 255).all() and (stripe[:4] == 200).all()
    for bad in (
        np.zeros((4, 3), dtype=np.uint8),  # no H x W x 3
        np.zeros((2, 5, 7, 4), dtype=np.uint8),  # RGBA
        np.zeros((2, 5, 7, 3), dtype=np.float32),  # not uint8
    ):
        with pytest.raises(TsrateError, match="uint8 arrays shaped"):
            perturb_images(bad, "P4")


# -- offline systems ------------------------------------------------------------------------


def make_batch(rows, horizon: int, ticker: str = "AAPL", perturbation: str = "P0"):
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    n = len(rows)
    futures_ = 100.0 + np.arange(n * horizon, dtype=float).reshape(n, horizon)
    return ForecastBatch(ticker, perturbation, np.arange(n), rows, horizon, futures_, (50.0, 150.0))


def test_built_in_systems_are_available_offline():
    for system in (NaiveSystem(), SeasonalNaiveSystem(), BiasedSystem({"AAPL": 0.0})):
        assert system.availability().available
    assert UniformRandomSystem().availability().available


def test_naive_takes_the_last_observed_value_behind_a_run_of_missing_ones():
    rows = [
        [1.0, 2.0, np.nan, np.nan],  # last observed: 2 (two missing at the end)
        [1.0, 2.0, 3.0, np.nan],  # 3
        [7.0, np.nan, np.nan, np.nan],  # 7 (three missing)
        [np.nan] * 4,  # nothing observed: missing
    ]
    point = NaiveSystem().predict(make_batch(rows, horizon=2))
    np.testing.assert_array_equal(point, [[2, 2], [3, 3], [7, 7], [np.nan, np.nan]])


def test_seasonal_naive_forward_fills_from_the_first_value_and_reaches_back_to_it():
    """x = [5, nan, 7, 8, 9, 10] (6 values), season 5, horizon 5: step h repeats x[h]; x[1] is
    missing and takes the last observed value before it, x[0] = 5."""
    point = SeasonalNaiveSystem().predict(
        make_batch([[5.0, np.nan, 7.0, 8.0, 9.0, 10.0]], horizon=5)
    )
    np.testing.assert_array_equal(point[0], [5.0, 7.0, 8.0, 9.0, 10.0])
    # a context exactly one season long: step h repeats x[h - 1]; steps 6, 7 again x[0], x[1]
    point = SeasonalNaiveSystem().predict(make_batch([[1.0, 2.0, 3.0, 4.0, 5.0]], horizon=7))
    np.testing.assert_array_equal(point[0], [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0])


def test_seasonal_naive_falls_back_to_the_very_last_observed_value():
    """x = [nan, nan, 3, 4, 5, 6]: step 1's source x[1] has nothing observed before it, so it
    takes the context's last observed value 6 (not the one before it, 5); steps 2-5: x[2..5]."""
    point = SeasonalNaiveSystem().predict(
        make_batch([[np.nan, np.nan, 3.0, 4.0, 5.0, 6.0]], horizon=5)
    )
    np.testing.assert_array_equal(point[0], [6.0, 3.0, 4.0, 5.0, 6.0])


def test_biased_fingerprint_names_every_offset_and_its_quantiles_are_one_per_level():
    system = BiasedSystem({"MSFT": 200, "AAPL": 0.5})
    assert system.fingerprint() == "offsets=AAPL:0.5,MSFT:200"
    batch = make_batch(np.ones((2, 4)), horizon=3)  # futures 100 .. 105
    out = system.predict_quantiles(batch)
    assert out.quantiles.shape == (2, 3, len(QUANTILE_LEVELS))
    expected = batch.clean_futures + 0.5
    np.testing.assert_array_equal(out.point, expected)
    for level in range(len(QUANTILE_LEVELS)):
        np.testing.assert_array_equal(out.quantiles[:, :, level], expected)


def test_random_draws_are_seeded_by_the_study_seed_ticker_and_perturbation():
    """The documented rule: numpy's default_rng seeded with (seed, the first 8 bytes of
    sha256("ticker|perturbation") read little-endian), uniform over the study range; the
    default seed is the study's default, 42."""
    assert UniformRandomSystem().seed == Study.__dataclass_fields__["seed"].default == 42
    batch = make_batch(np.ones((3, 4)), horizon=5, ticker="MSFT", perturbation="P2")
    key = int.from_bytes(hashlib.sha256(b"MSFT|P2").digest()[:8], "little")
    expected = np.random.default_rng([42, key]).uniform(50.0, 150.0, size=(3, 5))
    np.testing.assert_array_equal(UniformRandomSystem().predict(batch), expected)


# -- the suites' intervals and tests --------------------------------------------------------


def test_wilson_interval_of_no_trials_is_undefined():
    low, high = intervals.wilson_interval(np.array([0, 0, 3]), np.array([0, 4, 4]))
    assert np.isnan(low[0]) and np.isnan(high[0])
    for i, (k, n) in enumerate([(0, 4), (3, 4)], start=1):
        ref = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert (low[i], high[i]) == pytest.approx(ref, abs=1e-12)


def test_bootstrap_interval_defaults_are_200_resamples_of_the_seed_0_generator():
    """The documented procedure written out with numpy: 200 resamples of the items drawn with
    replacement from default_rng(0), the mean of each, the 2.5 % and 97.5 % quantiles."""
    data = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    draws = np.random.default_rng(0).integers(0, len(data), size=(200, len(data)))
    expected = np.quantile(data[draws].mean(axis=1), [0.025, 0.975])
    assert intervals.bootstrap_interval(data) == pytest.approx(tuple(expected), abs=1e-12)
    # with a statistic: the same draws, the statistic of each resample
    median = np.quantile(np.median(data[draws], axis=1), [0.025, 0.975])
    assert intervals.bootstrap_interval(data, np.median) == pytest.approx(tuple(median))
    # one item: every resample is that item; none: undefined
    assert intervals.bootstrap_interval([7.0]) == (7.0, 7.0)
    assert all(np.isnan(intervals.bootstrap_interval([])))


def test_two_proportion_p_with_a_group_of_one_and_with_an_empty_group():
    for k1, n1, k2, n2 in [(1, 1, 2, 7), (3, 9, 0, 1)]:
        _, p = proportions_ztest([k1, k2], [n1, n2])
        assert intervals.two_proportion_p(k1, n1, k2, n2) == pytest.approx(p, rel=1e-10)
    assert np.isnan(intervals.two_proportion_p(0, 0, 3, 5))
    assert np.isnan(intervals.two_proportion_p(3, 5, 0, 0))


def test_holm_of_one_p_value_and_adjusted_values_capped_at_one():
    assert intervals.holm([0.03]).tolist() == [0.03]
    one = intervals.holm([np.nan, 0.2])
    assert np.isnan(one[0]) and one[1] == 0.2
    p = [0.6, 0.7, 0.02]  # 3 x 0.02 = 0.06; 2 x 0.6 = 1.2 -> 1; 0.7 -> 1
    assert intervals.holm(p) == pytest.approx(multipletests(p, method="holm")[1])
    assert intervals.holm(p).tolist() == pytest.approx([1.0, 1.0, 0.06])


def test_stability_shares_rate_lower_is_better_unless_told():
    """A lone system at the ideal 0 of a lower-is-better metric is level 1 of 3 (the best);
    higher-is-better mirrors it to level 3. Two resamples put it at the ideal, one has no
    finite score and does not count."""
    resampled = [{"a": 0.0}, {"a": float("nan")}, {"a": 0.0}]
    assert intervals.stability_shares({"a": 1}, resampled, 3, ideal=0.0) == {"a": 1.0}
    told = intervals.stability_shares({"a": 3}, resampled, 3, ideal=0.0, higher_is_better=True)
    assert told == {"a": 1.0}


def test_stability_shares_count_neither_unrated_systems_nor_unrated_resamples():
    """Published: a = 1, b = 3 and u unrated (None). Resample 1 rates a, b, u = 1, 2, 3 (three
    distinct scores on 3 levels): a at its level, b not. Resample 2 holds a alone at 2, away from
    the ideal 0 with no worst value: unrated, so it does not count for a."""
    published = {"a": 1, "b": 3, "u": None}
    resampled = [{"a": 1.0, "b": 2.0, "u": 5.0}, {"a": 2.0}]
    shares = intervals.stability_shares(published, resampled, 3, ideal=0.0)
    assert shares["a"] == 1.0 and shares["b"] == 0.0 and np.isnan(shares["u"])


# -- the suites' verdict --------------------------------------------------------------------


def test_goodness_at_every_level_count_in_both_directions():
    """(rating - 1) / (levels - 1) when higher is better, (levels - rating) / (levels - 1)
    when lower is better; one level: every rating is the best (1); a null rating: NaN."""
    cases = [  # rating, levels, higher_is_better, goodness
        (1, 1, False, 1.0),
        (1, 1, True, 1.0),
        (1, 2, False, 1.0),
        (2, 2, False, 0.0),
        (1, 2, True, 0.0),
        (2, 2, True, 1.0),
        (2, 5, False, 0.75),
        (2, 5, True, 0.25),
        (None, 3, False, np.nan),
    ]
    ratings = pd.DataFrame(
        {
            "system_id": "s",
            "rating": pd.array([c[0] for c in cases], dtype="Int64"),
            "rating_levels": [c[1] for c in cases],
            "higher_is_better": [c[2] for c in cases],
        }
    )
    np.testing.assert_array_equal(goodness(ratings).to_numpy(), [c[3] for c in cases])


def suite_ratings(rows, shares=True):
    """(system, rating, levels, higher_is_better[, share_at_rating]) rows as a ratings frame."""
    names = ["system_id", "rating", "rating_levels", "higher_is_better", "share_at_rating"]
    frame = pd.DataFrame(rows, columns=names[: len(rows[0])])
    frame["rating"] = frame["rating"].astype("Int64")
    return frame


def test_system_scores_without_shares_count_nothing_shaky_and_keep_their_columns():
    # b and a tie at goodness 1 (rating 1 of 3, lower is better): a first by name; c at 0
    ratings = suite_ratings([("b", 1, 3, False), ("c", 3, 3, False), ("a", 1, 3, False)])
    scores = system_scores(ratings)
    assert list(scores.columns) == [
        "system_id", "mean_goodness", "n_ratings", "n_shaky", "n_near_cut", "n_unknown"
    ]  # fmt: skip
    assert scores["system_id"].tolist() == ["a", "b", "c"]
    assert scores["mean_goodness"].tolist() == [1.0, 1.0, 0.0]
    assert scores["n_shaky"].tolist() == [0, 0, 0]
    assert scores["n_near_cut"].tolist() == [0, 0, 0]
    assert scores["n_unknown"].tolist() == [0, 0, 0]  # no share column: nothing to say


def test_verdict_of_a_lone_system_with_some_shares_unknown():
    """solo: rating 1 of 3 (goodness 1, share 0.5: shaky) and 3 of 3 (goodness 0, share
    unknown: not shaky), lower is better: mean goodness 50 %, 1 of its 2 ratings shaky."""
    ratings = suite_ratings([("solo", 1, 3, False, 0.5), ("solo", 3, 3, False, np.nan)])
    html = verdict_html(ratings, "the tasks", "x")
    assert "Only <b>solo</b> is rated on the tasks" in html and "nothing to compare" in html
    assert 'data-derived="best_goodness" data-value="50.0">50 %' in html
    assert 'data-derived="leader_shaky" data-value="1.0"' in html
    assert 'data-derived="leader_ratings" data-value="2.0"' in html
    assert "of solo's" in html and "ratings is shaky (under 60%" in html
    assert "How firm: unknown" not in html  # some shares are known
    assert 'data-derived="unknown_share" data-value="1.0"' in html  # the other is said apart


def test_verdict_without_anything_rated():
    for empty in (None, pd.DataFrame(), pd.DataFrame({"system_id": ["a"], "raw_score": [1.0]})):
        assert "No rated scores in these marts yet." in verdict_html(empty, "the tasks", "x")
    nulls = suite_ratings([("a", None, 3, False), ("b", None, 3, False)])
    html = verdict_html(nulls, "the tasks", "x")
    assert html.startswith('<section id="verdict">') and html.endswith("</section>")
    assert "No system has a rating yet (every rating is null)." in html
    assert summary_table_html(None) == "" and summary_table_html(pd.DataFrame()) == ""
    assert summary_table_html(nulls) == ""


def test_summary_table_rows_rank_goodness_counts_and_shaky_marks():
    """a: ratings 1 and 1 of 3, lower is better (goodness 1, 1: 100 %), shares 0.9 and 0.5
    (one shaky); b: 3 and 2 of 3 (0, 0.5: 25 %), shares 0.9, 0.9 (none shaky)."""
    ratings = suite_ratings(
        [
            ("b", 3, 3, False, 0.9),
            ("a", 1, 3, False, 0.9),
            ("b", 2, 3, False, 0.9),
            ("a", 1, 3, False, 0.5),
        ]
    )
    html = summary_table_html(ratings)
    assert html.startswith('<section id="overview"><h2>Summary</h2>')
    assert html.endswith("</table></div></section>")
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)[1:]]
    assert rows == [
        ["1", "<code>a</code>", "100 %", "2", "1 ⚠"],
        ["2", "<code>b</code>", "25 %", "2", "0"],
    ]
    # without shares nothing is shaky
    plain = summary_table_html(ratings.drop(columns="share_at_rating"))
    assert [
        re.findall(r"<td>(.*?)</td>", r)[-1] for r in re.findall(r"<tr>(.*?)</tr>", plain)[1:]
    ] == [
        "0",
        "0",
    ]


# -- the suites' rating kit -----------------------------------------------------------------

SPECS = pd.DataFrame(
    {"suite": "reasoning", "metric": ["mae"], "higher_is_better": [False], "ideal": [np.nan]}
)


def test_rate_scores_sorts_groups_by_key_keeps_a_null_key_and_a_fresh_index():
    """Groups t2 (listed first) and t1 and a group whose task is null, each of two systems:
    the lower mae is rating 1 of 2, the higher 2 (two distinct scores split in two)."""
    scores = pd.DataFrame(
        {
            "task": ["t2", "t2", "t1", "t1", None, None],
            "metric": "mae",
            "system_id": ["a", "b", "a", "b", "a", "b"],
            "raw_score": [5.0, 1.0, 1.0, 5.0, 2.0, 3.0],
        }
    )
    rated = rate_scores(scores, "reasoning", ["task"], "system_id", 2, SPECS)
    assert rated["task"].tolist()[:4] == ["t1", "t1", "t2", "t2"]
    assert len(rated) == 6 and rated["task"].isna().sum() == 2  # the null-key group is rated
    assert rated["system_id"].tolist()[:4] == ["a", "b", "b", "a"]  # by key, then rank
    assert rated["rating"].tolist()[:4] == [1, 2, 1, 2]
    assert rated.index.tolist() == list(range(6))
    # no scores at all: the same columns, nothing else
    empty = rate_scores(scores.iloc[:0], "reasoning", ["task"], "system_id", 2, SPECS)
    assert empty.empty and list(empty.columns) == list(rated.columns)


def test_rating_table_appends_held_back_rows_with_the_same_columns():
    scores = pd.DataFrame(
        {
            "task": "t",
            "metric": "mae",
            "system_id": ["a", "b", "c"],
            "raw_score": [1.0, 2.0, 3.0],
            "unrated_reason": [None, None, "too uniform"],
        }
    )
    rated = rate_scores(scores.iloc[:2], "reasoning", ["task"], "system_id", 2, SPECS)
    table = rating_table(scores, "reasoning", ["task"], "system_id", 2, SPECS)
    assert list(table.columns) == list(rated.columns)
    assert table.index.tolist() == [0, 1, 2]
    assert table["system_id"].tolist() == ["a", "b", "c"]
    assert table["rating"].tolist()[:2] == [1, 2] and pd.isna(table["rating"].iloc[2])
    assert table["rating_reason"].iloc[2] == "too uniform"


def test_metric_rule_of_an_unlisted_metric_is_lower_is_better_without_ideal_or_worst():
    assert metric_rule(suite_spec("reasoning", SPECS), "speed") == (None, False, None)


def test_group_rng_is_seeded_by_the_seed_and_four_bytes_of_the_keys_hash():
    key = int.from_bytes(hashlib.sha256(b"run-1|accuracy|t3").digest()[:4], "little")
    expected = np.random.default_rng([7, key]).random(5)
    np.testing.assert_array_equal(group_rng(7, "run-1", "accuracy", "t3").random(5), expected)


def test_stability_records_read_a_missing_reason_as_none():
    published = pd.DataFrame(
        {
            "system_id": ["a", "b"],
            "raw_score": [1.0, 2.0],
            "rating": [1, 2],
            "rating_reason": [np.nan, "held"],
        }
    )
    draws = [{"a": 1.0, "b": 2.0}, {"a": 2.0, "b": 1.0}]
    records = stability_records(
        {"task": "t"}, published, "system_id", draws, 2, (None, False, None), {"n": 2}
    )
    assert [r["rating_reason"] for r in records] == [None, "held"]
    # each system is at its published rating in one of the two resamples
    assert [r["share_at_rating"] for r in records] == [0.5, 0.5]


def test_interval_ends_snap_to_zero_on_the_scale_of_the_whole_group():
    """b's published score 2e6 sets the group's scale: an end within 1e-12 x 2e6 = 2e-6 of 0
    is 0. Both systems' resamples are 1e-8 (the scale of each resample: nothing snaps
    there): a's interval [1e-8, 1e-8] is widened to its published 0 -> [0, 1e-8], and
    1e-8 < 2e-6 snaps to 0; b's is widened to its published 2e6 -> [1e-8, 2e6] -> [0, 2e6]."""
    published = pd.DataFrame(
        {"system_id": ["a", "b"], "raw_score": [0.0, 2e6], "rating": [1, 2], "rating_reason": None}
    )
    draws = [{"a": 1e-8, "b": 1e-8}] * 3
    records = stability_records(
        {"task": "t"}, published, "system_id", draws, 2, (0.0, False, None), {"n": 3}
    )
    assert (records[0]["ci_low"], records[0]["ci_high"]) == (0.0, 0.0)
    assert (records[1]["ci_low"], records[1]["ci_high"]) == (0.0, 2e6)


# -- ARIMA's fallback rules, on a scripted stand-in for statsmodels' fit ----------------------


class ScriptedFit:
    """What ArimaSystem reads of a statsmodels fit: params, llf, roots and the forecast."""

    def __init__(self, params, forecast, variance):
        self.params, self.llf = np.asarray(params, dtype=float), -10.0
        self.arroots, self.maroots = np.array([5.0]), np.array([-4.0])  # far from the unit circle
        self.forecast = np.asarray(forecast, dtype=float)
        self.variance = np.asarray(variance, dtype=float)

    def get_forecast(self, horizon):
        mean, variance = self.forecast[:horizon], self.variance[:horizon]
        return type("Predicted", (), {"predicted_mean": mean, "var_pred_mean": variance})


def scripted_sarimax(params, forecast, variance=(4.0, 4.0, 4.0)):
    class Model:
        def __init__(self, endog, order, concentrate_scale):
            pass

        def fit(self, disp=False, start_params=None):
            return ScriptedFit(params, forecast, variance)

    return Model


def test_arima_passes_on_no_start_with_any_non_finite_estimate(monkeypatch):
    import statsmodels.tsa.statespace.sarimax as sarimax

    context = np.linspace(100.0, 110.0, 20)
    monkeypatch.setattr(sarimax, "SARIMAX", scripted_sarimax([0.5, np.nan], [111.0] * 3))
    _, start = ArimaSystem().fit_window(context, None)
    assert start is None
    monkeypatch.setattr(sarimax, "SARIMAX", scripted_sarimax([0.5, 0.2], [111.0] * 3))
    _, start = ArimaSystem().fit_window(context, None)
    np.testing.assert_array_equal(start, [0.5, 0.2])


def test_arima_forecast_with_one_non_finite_step_falls_back_to_the_last_observed_value(
    monkeypatch,
):
    import statsmodels.tsa.statespace.sarimax as sarimax

    monkeypatch.setattr(sarimax, "SARIMAX", scripted_sarimax([0.5, 0.2], [111.0, np.nan, 113.0]))
    context = np.array([100.0, 104.0, 107.0, np.nan])  # last observed: 107
    system = ArimaSystem()
    out = system.predict_quantiles(make_batch([context], horizon=3))
    assert system.fallbacks == 1
    np.testing.assert_array_equal(out.point, [[107.0, 107.0, 107.0]])
    assert np.isnan(out.quantiles).all()


def test_arima_quantiles_are_the_gaussian_ones_and_none_with_an_unknown_spread(monkeypatch):
    """The fit sees the context in its own unit (divided by its mean, 105): forecast 1.01,
    1.02, 1.03 with variances 4e-4 there is 106.05, 107.1, 108.15 with standard error 2.1,
    so quantile q at step h is 105 (1 + h / 100 + 0.02 z_q); one step of unknown variance:
    the forecast stands, the window has no quantiles."""
    import statsmodels.tsa.statespace.sarimax as sarimax

    forecast, variance = [1.01, 1.02, 1.03], [4e-4] * 3
    context = np.linspace(100.0, 110.0, 20)
    monkeypatch.setattr(sarimax, "SARIMAX", scripted_sarimax([0.5, 0.2], forecast, variance))
    out = ArimaSystem().predict_quantiles(make_batch([context], horizon=3))
    z = np.array([NormalDist().inv_cdf(q) for q in QUANTILE_LEVELS])
    expected = 105.0 * (np.array(forecast)[:, None] + 0.02 * z[None, :])
    np.testing.assert_allclose(out.quantiles[0], expected, rtol=0, atol=1e-9)
    monkeypatch.setattr(
        sarimax, "SARIMAX", scripted_sarimax([0.5, 0.2], forecast, [4e-4, np.nan, 4e-4])
    )
    system = ArimaSystem()
    out = system.predict_quantiles(make_batch([context], horizon=3))
    np.testing.assert_allclose(out.point, [[106.05, 107.1, 108.15]], rtol=1e-12)
    assert np.isnan(out.quantiles).all() and system.fallbacks == 0


def test_arima_is_unavailable_only_without_statsmodels(monkeypatch):
    assert ArimaSystem().availability().available
    monkeypatch.setitem(sys.modules, "statsmodels", None)  # import statsmodels now fails
    missing = ArimaSystem().availability()
    assert not missing.available and "statsmodels is not installed" in missing.reason
