"""Unit tests for tsrate.methods.ratings: Algorithms 4-5 against the paper's Tables 5-6, bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.rating_properties import rating_problems
from tsrate.methods.ratings import (
    BOOTSTRAP_COLUMNS,
    NOISE,
    RATING_COLUMNS,
    absolute_rating,
    assign_ratings,
    block_bootstrap_ratings,
    moving_block_indices,
    partial_order,
    rate_matrix,
    ratings_frame,
    separability,
    snap_to_zero,
)

# Rows transcribed from the paper: {system: (raw score, complete-order rating)}.
# Systems: a ARIMA, b Biased, r Random, c Chronos, m MOMENT, g / gni Gemini (numeric /
# numeric+image), p / pni Phi-3, v1 / v2 ViT-num-spec. L = 3.
#
# Left out because the printed row is inconsistent with any contiguous split of its own scores:
# * WRSI P6: S_b (6.9, the single highest score) is rated 2 while S_v1/S_pni (5.9) are 2 too.
# * WRSC P0: S_r appears twice (4.6 and 6.9), and S_v1 (5.9) is rated 3 while S_c (5.6) is 2.
# * Sign accuracy P4 and P6: the "sorted" partial order is not sorted (S_r 49.71 before S_gni
#   49.46; S_v1 43.97 after S_gni 48.78) and the ratings follow the unsorted listing.
# * APEC P2: S_c and S_v2 are both printed as 3.94 yet S_g (4.33) is rated 2: consistent only
#   if the two 3.94 differ before rounding (then there are 11 distinct scores), so the row
#   cannot be checked from the printed values.
PAPER_ROWS: dict[str, dict[str, tuple[float, int]]] = {
    "WRSI P0": {
        "g": (4.6, 1), "m": (4.6, 1), "v2": (4.6, 1), "r": (4.6, 1), "c": (5.9, 2), "a": (5.9, 2),
        "pni": (5.9, 2), "v1": (5.9, 2), "gni": (6.9, 3), "p": (6.9, 3), "b": (6.9, 3),
    },
    "WRSI P1": {
        "a": (2.6, 1), "m": (4.6, 1), "g": (4.6, 1), "gni": (4.6, 1), "r": (4.6, 1),
        "pni": (5.9, 2), "v1": (5.9, 2), "p": (6.9, 3), "c": (6.9, 3), "v2": (6.9, 3),
        "b": (6.9, 3),
    },
    "WRSI P2": {
        "a": (4.6, 1), "g": (4.6, 1), "gni": (4.6, 1), "pni": (4.6, 1), "m": (4.6, 1),
        "r": (4.6, 1), "v1": (5.9, 2), "c": (6.9, 3), "p": (6.9, 3), "v2": (6.9, 3),
        "b": (6.9, 3),
    },
    "WRSI P3": {
        "g": (4.6, 1), "gni": (4.6, 1), "m": (4.6, 1), "r": (4.6, 1), "c": (4.6, 1),
        "a": (5.9, 2), "pni": (6.9, 3), "p": (6.9, 3), "b": (6.9, 3),
    },
    "WRSI P4": {
        "v2": (4.6, 1), "gni": (4.6, 1), "r": (4.6, 1), "v1": (5.9, 2), "pni": (5.9, 2),
        "b": (6.9, 3),
    },
    "WRSI P5": {
        "v2": (4.6, 1), "gni": (4.6, 1), "r": (5.2, 1), "v1": (5.9, 2), "pni": (5.9, 2),
        "b": (6.9, 3),
    },
    "WRSC P1": {
        "a": (0.6, 1), "c": (4.6, 1), "v1": (4.6, 1), "v2": (4.6, 1), "p": (5.9, 2),
        "pni": (5.9, 2), "gni": (5.9, 2), "r": (5.9, 2), "g": (6.9, 3), "m": (6.9, 3),
        "b": (6.9, 3),
    },
    "WRSC P2": {
        "a": (2.6, 1), "c": (4.6, 1), "pni": (4.6, 1), "v1": (4.6, 1), "r": (4.6, 1),
        "v2": (5.2, 2), "p": (5.2, 2), "g": (5.9, 2), "gni": (5.9, 2), "m": (6.9, 3),
        "b": (6.9, 3),
    },
    "WRSC P3": {
        "g": (4.6, 1), "gni": (4.6, 1), "pni": (4.6, 1), "p": (4.6, 1), "c": (4.6, 1),
        "m": (6.9, 2), "a": (6.9, 2), "r": (6.9, 2), "b": (6.9, 2),
    },
    "WRSC P4": {
        "v2": (4.6, 1), "v1": (5.9, 2), "pni": (6.9, 3), "gni": (6.9, 3), "r": (6.9, 3),
        "b": (6.9, 3),
    },
    "WRSC P5": {
        "v2": (4.6, 1), "pni": (4.6, 1), "v1": (5.2, 1), "r": (5.9, 2), "gni": (6.9, 3),
        "b": (6.9, 3),
    },
    "WRSC P6": {
        "r": (4.6, 1), "pni": (4.6, 1), "v2": (5.9, 2), "v1": (6.9, 3), "gni": (6.9, 3),
        "b": (6.9, 3),
    },
    "PIEI P1": {
        "gni": (437.28, 1), "v1": (539.98, 1), "v2": (609.44, 1), "g": (1012.79, 1),
        "a": (1223.59, 2), "p": (1586.51, 2), "pni": (2003.93, 2), "r": (4109.55, 2),
        "c": (4111.33, 3), "m": (4176.43, 3), "b": (5237.52, 3),
    },
    "PIEI P2": {
        "v2": (539.12, 1), "a": (1531.37, 1), "gni": (2086.5, 1), "pni": (2211.66, 1),
        "m": (2536.07, 2), "p": (3071.64, 2), "g": (3140.33, 2), "c": (3909.98, 2),
        "v1": (4405.36, 3), "r": (4681.26, 3), "b": (9593.46, 3),
    },
    "PIEI P3": {
        "g": (349.16, 1), "gni": (493.42, 1), "c": (1036.66, 1), "pni": (1247.39, 2),
        "a": (2251.9, 2), "p": (3043.22, 2), "r": (4509.75, 3), "b": (5225.69, 3),
        "m": (5715.21, 3),
    },
    "PIEI P5": {
        "gni": (2391.58, 1), "v1": (2571.56, 1), "v2": (4128.95, 2), "r": (5004.2, 2),
        "b": (7883.56, 3), "pni": (13472.24, 3),
    },
    "PIEC P1": {
        "gni": (632.31, 1), "a": (647.15, 1), "v2": (761.01, 1), "g": (882.66, 1),
        "m": (910.47, 2), "p": (914.62, 2), "pni": (993.88, 2), "r": (1460.55, 2),
        "c": (1630.63, 3), "b": (1855.99, 3), "v1": (1923.8, 3),
    },
    "PIEC P3": {
        "pni": (429.43, 1), "g": (476.25, 1), "m": (807.34, 1), "c": (880.64, 2),
        "gni": (938.41, 2), "a": (1801.04, 2), "r": (2051.79, 3), "b": (2201.23, 3),
        "p": (3572.98, 3),
    },
    "APEI P1": {
        "gni": (5.02, 1), "v1": (5.42, 1), "c": (8.84, 1), "m": (10.86, 1), "g": (14.52, 2),
        "v2": (19.25, 2), "p": (24.44, 2), "pni": (25.11, 2), "r": (42.84, 3), "b": (51.0, 3),
        "a": (87.51, 3),
    },
    "APEC P1": {
        "b": (0.0, 1), "v1": (5.47, 1), "gni": (6.46, 1), "g": (6.86, 1), "c": (8.2, 2),
        "r": (11.38, 2), "m": (11.78, 2), "v2": (17.26, 2), "p": (17.99, 3), "pni": (25.97, 3),
        "a": (39.23, 3),
    },
    "APEC P3": {
        "b": (0.0, 1), "a": (2.5, 1), "c": (4.78, 1), "g": (5.48, 2), "r": (6.13, 2),
        "p": (6.17, 2), "pni": (6.25, 3), "m": (8.36, 3), "gni": (9.3, 3),
    },
    "SMAPE P0": {
        "v1": (0.039, 1), "a": (0.040, 1), "v2": (0.041, 1), "c": (0.043, 1), "g": (0.049, 2),
        "pni": (0.079, 2), "p": (0.095, 2), "gni": (0.095, 2), "m": (0.097, 3),
        "r": (0.829, 3), "b": (1.276, 3),
    },
    "SMAPE P1": {
        "v1": (0.064, 1), "c": (0.065, 1), "gni": (0.067, 1), "g": (0.072, 2), "a": (0.084, 2),
        "m": (0.100, 2), "p": (0.100, 2), "pni": (0.100, 2), "v2": (0.127, 3),
        "r": (0.830, 3), "b": (1.276, 3),
    },
    "SMAPE P4": {
        "v1": (0.039, 1), "v2": (0.041, 1), "gni": (0.047, 2), "pni": (0.080, 2),
        "r": (0.830, 3), "b": (1.276, 3),
    },
    "MASE P0": {
        "v1": (3.68, 1), "a": (3.79, 1), "v2": (3.89, 1), "c": (4.18, 1), "g": (4.64, 2),
        "pni": (7.19, 2), "p": (8.91, 2), "m": (9.03, 2), "gni": (10.37, 3), "r": (86.45, 3),
        "b": (947.56, 3),
    },
    "MASE P2": {
        "v1": (4.24, 1), "g": (4.74, 1), "c": (4.99, 1), "gni": (5.59, 1), "v2": (6.16, 2),
        "a": (8.24, 2), "pni": (8.49, 2), "m": (9.15, 2), "p": (9.32, 3), "r": (86.87, 3),
        "b": (947.56, 3),
    },
    "SIGN P0": {  # higher is better: rating 1 = lowest sign accuracy = worst
        "m": (40.70, 1), "p": (45.09, 1), "pni": (47.67, 1), "r": (49.88, 1),
        "gni": (50.41, 2), "v2": (51.28, 2), "v1": (51.32, 2), "g": (52.08, 2),
        "c": (53.75, 3), "a": (60.08, 3), "b": (62.60, 3),
    },
    "SIGN P1": {
        "m": (41.19, 1), "v2": (41.54, 1), "p": (44.33, 1), "pni": (46.77, 1),
        "v1": (48.77, 2), "r": (49.62, 2), "g": (50.53, 2), "c": (52.09, 2),
        "gni": (53.93, 3), "a": (57.08, 3), "b": (62.60, 3),
    },
}  # fmt: skip


@pytest.mark.parametrize("row", sorted(PAPER_ROWS))
def test_paper_complete_orders(row: str) -> None:
    scores = {system: score for system, (score, _) in PAPER_ROWS[row].items()}
    expected = {system: rating for system, (_, rating) in PAPER_ROWS[row].items()}
    assert assign_ratings(scores, 3) == expected


def test_distinct_split_differs_from_splitting_all_scores() -> None:
    """WRSC P4 and SMAPE P1 show that the paper splits the DISTINCT scores: splitting all
    six WRSC P4 scores [4.6, 5.9, 6.9 x4] into 2/2/2 would rate S_v1 (5.9) 1, the paper says 2."""

    def split_all(scores: dict[str, float], levels: int) -> dict[str, int]:
        groups = np.array_split(np.sort(np.array(list(scores.values()))), levels)
        return {s: next(i + 1 for i, g in enumerate(groups) if v in g) for s, v in scores.items()}

    for row in ("WRSC P4", "SMAPE P1"):
        scores = {s: v for s, (v, _) in PAPER_ROWS[row].items()}
        expected = {s: r for s, (_, r) in PAPER_ROWS[row].items()}
        assert assign_ratings(scores) == expected
        assert split_all(scores, 3) != expected


def test_rating_rules() -> None:
    assert assign_ratings({"a": 1.0, "b": 1.0, "c": 2.0, "d": 3.0}) == {
        "a": 1, "b": 1, "c": 2, "d": 3,
    }  # fmt: skip
    # fewer distinct scores than levels: top levels stay empty
    assert assign_ratings({"a": 5.0, "b": 7.0, "c": 5.0}, 3) == {"a": 1, "b": 2, "c": 1}
    # one distinct score is the single-system case: off the ideal with no known worst value
    # there is no scale -> not rated (issue 25 item 4), never "1 = best"
    assert assign_ratings({"a": 5.0, "b": 5.0}, 3) == {"a": None, "b": None}
    assert assign_ratings({"a": 0.0, "b": 0.0}, 3) == {"a": 1, "b": 1}
    assert rate_matrix(np.array([[7.2, 7.2, 7.2], [0.0, 0.0, np.nan]]), 3).tolist() == [
        [0, 0, 0],
        [1, 1, 0],
    ]
    # single system: 1 if its score is the ideal 0, else (no known worst value) not rated
    assert assign_ratings({"only": 0.0}, 5) == {"only": 1}
    assert assign_ratings({"only": 0.3}, 5) == {"only": None}
    assert assign_ratings({"only": -2.0}) == {"only": None}
    assert assign_ratings({"only": 7.2}, 3, maximum=7.2) == {"only": 3}
    assert assign_ratings({}) == {}
    assert assign_ratings({"a": 3.0, "b": 1.0, "c": 2.0}, 1) == {"a": 1, "b": 1, "c": 1}
    # 7 distinct into 3: array_split sizes 3/2/2
    scores = {f"s{i}": float(i) for i in range(7)}
    assert list(assign_ratings(scores).values()) == [1, 1, 1, 2, 2, 3, 3]
    with pytest.raises(ValueError, match="'bad'"):
        assign_ratings({"ok": 1.0, "bad": float("nan")})
    with pytest.raises(ValueError, match="levels"):
        assign_ratings({"a": 1.0}, 0)
    with pytest.raises(ValueError, match="'x'"):
        assign_ratings({"x": float("inf"), "y": 1.0})


def test_partial_order() -> None:
    order = partial_order({"c": 2.0, "a": 1.0, "d": 2.0, "b": 0.5, "e": 7.0})
    assert order == [("b", 0.5, 1), ("a", 1.0, 2), ("c", 2.0, 3), ("d", 2.0, 3), ("e", 7.0, 5)]
    with pytest.raises(ValueError):
        partial_order({"a": float("nan")})


def test_ratings_frame() -> None:
    rows = []
    for metric in ("wrs_industry", "sign_accuracy"):
        for system, (score, _) in PAPER_ROWS[
            "SIGN P0" if metric == "sign_accuracy" else "WRSI P0"
        ].items():
            rows.append((metric, "P0", system, score))
    rows.append(("wrs_industry", "P1", "solo", 0.0))
    scores = pd.DataFrame(rows, columns=["metric", "perturbation_id", "system_id", "raw_score"])
    out = ratings_frame(
        scores.sample(frac=1.0, random_state=0), 3, {"wrs_industry": False, "sign_accuracy": True}
    )
    assert list(out.columns) == RATING_COLUMNS
    assert len(out) == len(scores)
    assert out.loc[out.system_id != "solo", "rating_reason"].isna().all()
    sign = out[out.metric == "sign_accuracy"].set_index("system_id")
    assert sign["higher_is_better"].all()
    assert sign.loc["m", "rating"] == 1 and sign.loc["b", "rating"] == 3
    assert sign.loc["m", "rank"] == 1 and sign.loc["b", "rank"] == 11
    wrs = out[(out.metric == "wrs_industry") & (out.perturbation_id == "P0")].set_index("system_id")
    assert (~wrs["higher_is_better"]).all()
    assert wrs.loc["c", "rank"] == 5 and wrs.loc["v1", "rank"] == 5  # ties share the min rank
    # A lone system: rated by its absolute value only where the metric has an ideal (0 here
    # -> best); without an ideal (the default) its rating is null with a reason.
    solo = out[out.system_id == "solo"]
    assert pd.isna(solo["rating"].item()) and "no ideal" in solo["rating_reason"].item()
    with_ideal = ratings_frame(
        scores, 3, {"wrs_industry": False, "sign_accuracy": True}, ideal={"wrs_industry": 0.0}
    )
    assert with_ideal[with_ideal.system_id == "solo"]["rating"].item() == 1
    assert (out["rating_levels"] == 3).all()
    with pytest.raises(ValueError, match="higher_is_better"):
        ratings_frame(scores, 3, {"wrs_industry": False})
    bad = scores.copy()
    bad.loc[0, "raw_score"] = np.nan
    with pytest.raises(ValueError, match="wrs_industry"):
        ratings_frame(bad, 3, {"wrs_industry": False, "sign_accuracy": True})


def test_rate_matrix_matches_assign_ratings() -> None:
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 9))
        levels = int(rng.integers(1, 6))
        x = rng.integers(0, 5, size=n).astype(float)
        if rng.random() < 0.3:
            x[rng.integers(0, n)] = np.nan
        got = rate_matrix(x[None, :], levels)[0]
        expected = assign_ratings({i: x[i] for i in range(n) if np.isfinite(x[i])}, levels)
        assert [int(v) for v in got] == [expected.get(i) or 0 for i in range(n)]


def test_moving_block_indices() -> None:
    rng = np.random.default_rng(1)
    idx = moving_block_indices(10, 3, 200, rng)
    assert idx.shape == (200, 10)
    assert idx.min() >= 0 and idx.max() <= 9
    # inside each block of 3, positions are consecutive on the circle of 10 dates
    blocks = idx[:, :9].reshape(200, 3, 3)
    assert (np.diff(blocks, axis=2) % 10 == 1).all()
    # circular: starts anywhere on 0..9, so some blocks wrap from date 9 to date 0
    assert ((blocks[:, :, 1] == 0) | (blocks[:, :, 2] == 0)).any()
    with pytest.raises(ValueError):
        moving_block_indices(10, 11, 5, rng)


def bootstrap_values(n_dates: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2020-01-01", periods=n_dates)
    frames = []
    for i, system in enumerate(["A", "B", "C", "D"]):
        for pert in ("P0", "P1"):
            for ticker in ("X", "Y"):
                smooth = np.sin(np.arange(n_dates) / 25.0)
                value = 1.0 + i * 0.5 + 0.3 * smooth + 0.2 * rng.standard_normal(n_dates)
                frames.append(
                    pd.DataFrame(
                        {
                            "system_id": system,
                            "perturbation_id": pert,
                            "ticker": ticker,
                            "window_end_date": dates,
                            "value": value,
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


def test_block_bootstrap_ratings() -> None:
    values = bootstrap_values()
    out = block_bootstrap_ratings(values, 3, 300, 20, seed=42)
    assert list(out.columns) == BOOTSTRAP_COLUMNS
    assert len(out) == 4 * 2 * 3
    again = block_bootstrap_ratings(values.sample(frac=1.0, random_state=1), 3, 300, 20, seed=42)
    pd.testing.assert_frame_equal(out, again)
    other = block_bootstrap_ratings(values, 3, 300, 20, seed=43)
    assert not np.allclose(out["ci_low"], other["ci_low"])
    per_group = out.drop_duplicates(["system_id", "perturbation_id"]).set_index(
        ["system_id", "perturbation_id"]
    )
    means = values.groupby(["system_id", "perturbation_id"])["value"].mean()
    np.testing.assert_allclose(per_group["raw_score"], means.loc[per_group.index], rtol=1e-12)
    assert (per_group["ci_low"] <= per_group["raw_score"]).all()
    assert (per_group["raw_score"] <= per_group["ci_high"]).all()
    assert (per_group["ci_high"] - per_group["ci_low"] < 0.5).all()
    shares = out.groupby(["system_id", "perturbation_id"])["share"].sum()
    np.testing.assert_allclose(shares, 1.0)
    # well separated systems: the point rating wins almost every resample
    point = out[out["rating_level"] == out["rating"]]
    assert (point["share"] > 0.9).all()
    assert per_group.loc[("A", "P0"), "rating"] == 1 and per_group.loc[("D", "P0"), "rating"] == 3
    assert (out["n_valid"] == 300).all()


def test_block_bootstrap_accepts_categorical_keys() -> None:
    """Millions of rows arrive with categorical keys and datetime64 dates: same result as
    plain strings, whatever the order of the categories."""
    values = bootstrap_values(n_dates=80)
    out = block_bootstrap_ratings(values, 3, 100, 10, seed=7)
    cat = values.astype({"system_id": "category", "perturbation_id": "category"})
    cat["system_id"] = cat["system_id"].cat.reorder_categories(["D", "B", "C", "A"])
    got = block_bootstrap_ratings(cat, 3, 100, 10, seed=7)
    pd.testing.assert_frame_equal(got, out)


def test_block_bootstrap_std_and_validation() -> None:
    values = bootstrap_values(n_dates=120)
    values["value"] += 1000.0  # large offset must not cost precision
    out = block_bootstrap_ratings(values, 2, 50, 10, seed=0, statistic="std")
    per_group = out.drop_duplicates(["system_id", "perturbation_id"]).set_index(
        ["system_id", "perturbation_id"]
    )
    stds = values.groupby(["system_id", "perturbation_id"])["value"].std()
    np.testing.assert_allclose(per_group["raw_score"], stds.loc[per_group.index], rtol=1e-9)
    with pytest.raises(ValueError, match="statistic"):
        block_bootstrap_ratings(values, 3, 10, 5, seed=0, statistic="median")
    with pytest.raises(ValueError, match="block_length"):
        block_bootstrap_ratings(values, 3, 10, 0, seed=0)
    # 120 dates are fewer than two blocks of 500: the point only, the reason as why
    withheld = block_bootstrap_ratings(values, 3, 10, 500, seed=0)
    assert withheld["share"].isna().all() and withheld["separable"].isna().all()
    assert withheld["separation_reason"].str.startswith("120 window dates: too few").all()


# --------------------------------------------------------------------------------------
# Ratings never mislead: property test over random inputs, the tie/lone rules, noise
# --------------------------------------------------------------------------------------


def _random_scores(rng: np.random.Generator) -> pd.DataFrame:
    """A random long score table: 1-7 systems per group, ties, NaN, tiny values, both
    directions, metrics with and without an ideal."""
    rows = []
    for metric in ("wrs_company", "ape_industry", "mae", "sign_accuracy"):
        for pert in ("P0", "P1", "P2"):
            n = int(rng.integers(1, 8))
            pool = rng.choice([0.0, 1e-15, -3e-14, 0.5, 1.0, 2.0, 7.2, 3.3], size=n)
            values = np.where(rng.random(n) < 0.5, pool, rng.normal(2.0, 3.0, n))
            if rng.random() < 0.2:
                values[:] = values[0]  # all tied
            # only WRS has a known worst value (as robustness_scores.max_score)
            worst = 7.2 if metric.startswith("wrs") else np.nan
            for i, v in enumerate(values):
                rows.append((metric, pert, f"s{i}", float(v), worst))
    return pd.DataFrame(
        rows, columns=["metric", "perturbation_id", "system_id", "raw_score", "max_score"]
    )


DIRECTIONS = {"wrs_company": False, "ape_industry": False, "mae": False, "sign_accuracy": True}
IDEALS = {"wrs_company": 0.0, "ape_industry": 0.0}


def test_property_better_raw_score_never_gets_a_worse_rating() -> None:
    rng = np.random.default_rng(7)
    for trial in range(80):
        scores = _random_scores(rng)
        levels = int(rng.integers(1, 6))
        out = ratings_frame(scores, levels, DIRECTIONS, ideal=IDEALS, maximum_column="max_score")
        assert rating_problems(out, ["metric", "perturbation_id"]) == [], trial
        # Independently: for every pair of systems in a group, score_i < score_j implies
        # rating_i <= rating_j (rating 1 = lowest score, in both directions of reading).
        for _, block in out.dropna(subset=["rating"]).groupby(["metric", "perturbation_id"]):
            x = block["raw_score"].to_numpy()
            r = block["rating"].astype(int).to_numpy()
            assert not ((x[:, None] < x[None, :]) & (r[:, None] > r[None, :])).any()
            assert not ((x[:, None] == x[None, :]) & (r[:, None] != r[None, :])).any()


def test_property_checker_catches_an_inverted_rating() -> None:
    frame = pd.DataFrame(
        {
            "metric": "m",
            "perturbation_id": "P1",
            "system_id": ["a", "b", "c"],
            "raw_score": [1.0, 2.0, 3.0],
            "rating": [1, 3, 2],
            "rating_levels": 3,
        }
    )
    assert any("worse rating" in p for p in rating_problems(frame, ["metric"]))
    frame["rating"] = [1, 2, 3]
    frame.loc[0, "raw_score"] = 1e-14
    assert any("floating noise" in p for p in rating_problems(frame, ["metric"]))


def test_lone_and_tied_groups_are_rated_by_their_absolute_value_only_with_an_ideal() -> None:
    rows = [
        ("wrs_company", "P0", "a", 7.2, 7.2),  # lone, at the WRS maximum -> worst
        ("wrs_company", "P1", "a", 2.4, 7.2),  # lone, a third of the maximum -> level 1 of 3
        ("wrs_company", "P2", "a", 3.6, 7.2),  # half of the maximum -> level 2 of 3
        ("ape_company", "P1", "a", 0.0, np.nan),  # at the ideal -> best
        ("ape_company", "P2", "a", 0.4, np.nan),  # away from the ideal, no max -> worst
        ("ape_company", "P2", "b", 0.4, np.nan),
        ("mae", "P1", "a", 0.1, np.nan),  # the lowest MAE of the run, alone: no ideal -> null
        ("mae", "P2", "a", 5.0, np.nan),
        ("mae", "P2", "b", 5.0, np.nan),  # all tied, no ideal -> null
    ]
    scores = pd.DataFrame(
        rows, columns=["metric", "perturbation_id", "system_id", "raw_score", "max_score"]
    )
    out = ratings_frame(
        scores,
        3,
        {"wrs_company": False, "ape_company": False, "mae": False},
        ideal={"wrs_company": 0.0, "ape_company": 0.0, "mae": None},
        maximum_column="max_score",
    ).set_index(["metric", "perturbation_id", "system_id"])
    got = out["rating"]
    assert got[("wrs_company", "P0", "a")] == 3
    assert got[("wrs_company", "P1", "a")] == 1
    assert got[("wrs_company", "P2", "a")] == 2
    assert got[("ape_company", "P1", "a")] == 1
    # APE has an ideal but no known worst value: tied off the ideal -> not rated, and why
    assert pd.isna(got[("ape_company", "P2", "a")]) and pd.isna(got[("ape_company", "P2", "b")])
    assert "no known worst value" in out.loc[("ape_company", "P2", "a"), "rating_reason"]
    for key in [("mae", "P1", "a"), ("mae", "P2", "a"), ("mae", "P2", "b")]:
        assert pd.isna(got[key])
    assert "only one system" in out.loc[("mae", "P1", "a"), "rating_reason"]
    assert "all systems tied" in out.loc[("mae", "P2", "a"), "rating_reason"]
    assert "ideal" in out.loc[("wrs_company", "P0", "a"), "rating_reason"]


def test_absolute_rating_slices_of_the_known_range() -> None:
    # hand-worked: L = 3 over [0, 7.2] -> slices (0, 2.4], (2.4, 4.8], (4.8, 7.2]
    assert [absolute_rating(v, 3, 0.0, 7.2) for v in (0.0, 0.1, 2.4, 2.5, 4.8, 4.9, 7.2)] == [
        1,
        1,
        1,
        2,
        2,
        3,
        3,
    ]
    assert absolute_rating(0.0, 5, 0.0) == 1 and absolute_rating(1e-3, 5, 0.0) is None
    assert absolute_rating(5e-13, 3, 0.0) == 1  # within noise of the ideal


def test_near_zero_scores_are_stored_as_zero() -> None:
    # rule: |x| <= 1e-12 x max(1, largest |x| of the group) -> 0
    x = snap_to_zero([1.84e-14, -2e-13, 3.0, np.nan])
    assert x[0] == 0.0 and x[1] == 0.0 and x[2] == 3.0 and np.isnan(x[3])
    big = snap_to_zero([1e-9, 5e3])  # scale 5e3 -> bound 5e-9
    assert big[0] == 0.0
    assert snap_to_zero([2e-12, 1.0])[0] == 2e-12  # above the bound: kept
    assert NOISE == 1e-12
    scores = pd.DataFrame(
        {
            "metric": "ape",
            "perturbation_id": "P1",
            "system_id": ["a", "b"],
            "raw_score": [1.84e-14, 0.7],
        }
    )
    out = ratings_frame(scores, 3, {"ape": False}, ideal={"ape": 0.0})
    assert out.set_index("system_id").loc["a", "raw_score"] == 0.0


def test_separability_against_hand_worked_spreads() -> None:
    # a=1.0 +- 0.3, b=1.2 +- 0.1 (|diff| 0.2 < 0.3 -> neither separable), c=3.0 +- 0.1 separable
    flags, reasons = separability(["a", "b", "c"], [1.0, 1.2, 3.0], [0.3, 0.1, 0.1])
    assert flags == [False, False, True]
    assert "b" in reasons[0] and "a" in reasons[1] and reasons[2] is None
    flags, _ = separability(["a", "b"], [1.0, 1.2], [np.nan, np.nan])
    assert flags == [None, None]
    scores = pd.DataFrame(
        {
            "metric": "ape",
            "perturbation_id": "P1",
            "system_id": ["a", "b", "c"],
            "raw_score": [1.0, 1.2, 3.0],
            "spread": [0.3, 0.1, 0.1],
        }
    )
    out = ratings_frame(scores, 3, {"ape": False}, ideal={"ape": 0.0}, spread_column="spread")
    assert out.set_index("system_id")["separable"].tolist() == [False, False, True]


def test_absolute_rating_of_a_higher_is_better_metric_mirrors() -> None:
    # sign accuracy: ideal 100, worst 0; rating L = best. 100 -> 3, 10 -> 1, 50 -> 2.
    assert absolute_rating(100.0, 3, 100.0, 0.0, higher_is_better=True) == 3
    assert absolute_rating(10.0, 3, 100.0, 0.0, higher_is_better=True) == 1
    assert absolute_rating(50.0, 3, 100.0, 0.0, higher_is_better=True) == 2


def test_rate_matrix_follows_the_lone_and_tied_rules_of_assign_ratings() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(1, 6))
        x = rng.choice([0.0, 2.4, 3.6, 7.2, np.nan, 1.0], size=n)
        if rng.random() < 0.4:
            x[np.isfinite(x)] = x[np.isfinite(x)][:1].repeat(np.isfinite(x).sum())
        worst = np.full(n, 7.2)
        levels = int(rng.integers(1, 5))
        finite = {i: x[i] for i in range(n) if np.isfinite(x[i])}
        for ideal in (0.0, None):
            for higher in (False, True):
                got = rate_matrix(
                    x[None, :], levels, ideal=ideal, maximum=worst, higher_is_better=higher
                )[0]
                expected = assign_ratings(
                    finite, levels, ideal=ideal, maximum=7.2, higher_is_better=higher
                )
                for i in range(n):
                    want = expected.get(i)
                    assert got[i] == (0 if want is None else want), (x, ideal, higher)


def test_no_known_worst_value_gives_no_rating_and_a_reason() -> None:
    # MAE-like metric (ideal 0, no worst value): a lone system or an all-tied group off the
    # ideal has no scale -> null rating with the no-scale reason; at the ideal it is still 1.
    assert absolute_rating(0.4, 3, 0.0) is None
    assert absolute_rating(0.4, 3, 0.0, higher_is_better=True) is None
    assert assign_ratings({"ctx": 0.4}, 3, ideal=0.0) == {"ctx": None}
    assert assign_ratings({"a": 0.4, "b": 0.4}, 3, ideal=0.0) == {"a": None, "b": None}
    scores = pd.DataFrame(
        {
            "metric": ["mae", "mae", "mae"],
            "perturbation_id": ["P0", "P1", "P1"],
            "system_id": ["ctx", "a", "b"],
            "raw_score": [0.4, 0.0, 0.0],
        }
    )
    out = ratings_frame(scores, 3, {"mae": False}, ideal={"mae": 0.0}).set_index(
        ["perturbation_id", "system_id"]
    )
    assert pd.isna(out.loc[("P0", "ctx"), "rating"])
    assert "no known worst value" in out.loc[("P0", "ctx"), "rating_reason"]
    assert out.loc[("P1", "a"), "rating"] == 1  # tied at the ideal: still rated best
    matrix = rate_matrix(np.array([[0.4, np.nan], [0.4, 0.4]]), 3, ideal=0.0)
    assert matrix.tolist() == [[0, 0], [0, 0]]


def test_rating_property_flags_a_rated_lone_system_without_a_scale() -> None:
    frame = pd.DataFrame(
        {
            "metric": ["mae"],
            "system_id": ["context_rule"],
            "raw_score": [0.4],
            "rating": pd.array([3], dtype="Int64"),
            "rating_levels": [3],
            "rating_reason": ["only one system rated"],
        }
    )
    assert any("no known worst value" in p for p in rating_problems(frame, ["metric"]))
    frame["rating"] = pd.array([None], dtype="Int64")
    assert rating_problems(frame, ["metric"]) == []
