"""The core's block bootstrap over window dates: circular (every date drawn once per
resample on average, the ends included), not used with fewer than two blocks of dates, and
its shares counted over the resamples that rated the system (the suites' rule).

Expectations come from the definitions: a loop written out from Politis & Romano's circular
block bootstrap, the mean multiplicity 1 of every date, and the suites' own
``stability_shares`` on the same resamples.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from tests.support.stability_inputs import (
    accuracy_study_stability,
    empty_effects,
    stability_settings,
)
from tsrate.methods.ratings import (
    block_bootstrap_ratings,
    bootstrap_summary,
    date_multiplicities,
    moving_block_indices,
    too_few_dates,
)
from tsrate.suites.intervals import stability_shares

# --------------------------------------------------------------------------- circular


def test_every_date_is_drawn_once_per_resample_on_average_the_ends_included() -> None:
    """153 dates, blocks of 20, 20,000 resamples: each date's mean multiplicity is 1 (the
    moving-block bootstrap drew the first and last date about 0.06 times)."""
    mult = date_multiplicities(153, 20, 20_000, seed=7)
    assert mult.sum(axis=1).tolist() == [153.0] * 20_000
    mean = mult.mean(axis=0)
    np.testing.assert_allclose(mean, 1.0, atol=0.04)
    assert mean[0] > 0.95 and mean[-1] > 0.95


@pytest.mark.parametrize("n,block", [(153, 20), (40, 20), (7, 3), (5, 5), (6, 1)])
def test_indices_are_the_circular_block_bootstrap_written_out(n: int, block: int) -> None:
    """For one generator state: ceil(n / block) starts uniform on 0..n-1 per resample,
    positions (start + j) % n, concatenated and cut to n."""
    got = moving_block_indices(n, block, 50, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    n_blocks = -(-n // block)
    starts = rng.integers(0, n, size=(50, n_blocks))
    want = []
    for row in starts:
        positions = [(int(start) + j) % n for start in row for j in range(block)]
        want.append(positions[:n])
    assert got.tolist() == want


def test_a_system_bad_only_early_keeps_its_point_as_the_bootstrap_centre() -> None:
    """A system bad in its first 15 of 153 windows only: the resampled mean centres on the
    point (the moving-block bootstrap centred it near 1.05 for a point of 1.10)."""
    n = 153
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 0.05, n)
    x[:15] += 1.0
    weights = date_multiplicities(n, 20, 2000, seed=42)
    resampled = (weights @ x) / weights.sum(axis=1)
    assert abs(resampled.mean() - x.mean()) < 0.01
    assert 0.3 < (resampled > x.mean()).mean() < 0.7


# --------------------------------------------------------------------------- too few dates


def two_systems(n_dates: int) -> pd.DataFrame:
    dates = pd.bdate_range("2024-01-01", periods=n_dates)
    rng = np.random.default_rng(1)
    frames = [
        pd.DataFrame(
            {
                "system_id": system,
                "perturbation_id": "P0",
                "window_end_date": dates,
                "value": rng.normal(centre, 0.01, n_dates),
            }
        )
        for system, centre in (("a", 1.0), ("b", 2.0))
    ]
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("n_dates", [1, 9, 20, 39])
def test_fewer_dates_than_two_blocks_publish_the_point_only(n_dates: int) -> None:
    """Scores 1 apart on every date would be separable in every resample; with fewer than
    40 dates for blocks of 20 nothing is resampled: point and rating, the rest null."""
    out = block_bootstrap_ratings(two_systems(n_dates), 3, 50, 20, 0, "mean", ideal=None)
    noun = "window date" if n_dates == 1 else "window dates"
    reason = f"{n_dates} {noun}: too few for blocks of 20 (the bootstrap needs at least 40)"
    assert too_few_dates(n_dates, 20) == reason
    assert out["ci_low"].isna().all() and out["ci_high"].isna().all()
    assert out["share"].isna().all()
    assert out["separable"].isna().all()
    assert (out["separation_reason"] == reason).all()
    assert (out["n_resamples"] == 0).all() and (out["n_valid"] == 0).all()
    first = out.drop_duplicates("system_id").set_index("system_id")
    data = two_systems(n_dates).groupby("system_id")["value"].mean()
    np.testing.assert_allclose(first["raw_score"], data.to_numpy(), rtol=1e-12)
    assert first["rating"].tolist() == [1, 2]  # two distinct scores, L = 3


def test_exactly_two_blocks_of_dates_are_resampled() -> None:
    out = block_bootstrap_ratings(two_systems(40), 3, 50, 20, 0, "mean", ideal=None)
    assert too_few_dates(40, 20) is None
    assert out["ci_low"].notna().all() and out["share"].notna().all()
    assert (out["n_resamples"] == 50).all() and (out["n_valid"] == 50).all()
    assert out["separable"].eq(True).all()


def mart_inputs(n_dates: int):
    """Two systems x two tickers of accuracy errors, S2 worse than S1 by 1 on every row."""
    dates = pd.bdate_range("2024-01-01", periods=n_dates)
    rng = np.random.default_rng(0)
    rows = []
    for system, ticker, date in itertools.product(("S1", "S2"), ("AAA", "BBB"), dates):
        shift = 1.0 if system == "S2" else 0.0
        industry = "Tech" if ticker == "AAA" else "Bank"
        rows.append(("r1", system, "P0", ticker, industry, date, rng.random() + shift))
    columns = ["run_id", "system_id", "perturbation_id", "ticker", "industry"]
    errors = pd.DataFrame(rows, columns=[*columns, "window_end_date", "smape"])
    errors = errors.assign(mase=errors["smape"], sign_accuracy=50.0, max_abs_residual=0.5)
    sets = pd.DataFrame(
        {"run_id": "r1", "system_id": ["S1", "S2"], "perturbation_set": "P0", "has_effects": False}
    )
    published = {"S1": 0.6, "S2": 1.8}
    scores = pd.DataFrame(
        [
            dict(run_id="r1", metric="wrs_industry", outcome="max_abs_residual", system_id=s)
            | dict(perturbation_id="P0", raw_score=v, max_score=2.4)
            for s, v in published.items()
        ]
    )
    return errors, scores, empty_effects(), sets


def test_the_mart_withholds_the_bootstrap_of_a_run_with_too_few_dates() -> None:
    """rating_stability of 9 dates with blocks of 20: never separable = true; the configured
    block length is published; the reason is the separation_reason, for the accuracy
    metrics and WRS alike."""
    settings = stability_settings(bootstrap_block_length=20, bootstrap_resamples=30)
    out = accuracy_study_stability(*mart_inputs(9), settings)
    assert set(out["metric"]) == {"smape", "mase", "sign_accuracy", "wrs_industry"}
    assert out["block_length"].eq(20).all()
    assert out["separable"].isna().all()
    assert out[["ci_low", "ci_high", "share"]].isna().all().all()
    reason = "9 window dates: too few for blocks of 20 (the bootstrap needs at least 40)"
    assert out["separation_reason"].eq(reason).all()
    smape = out.loc[out["metric"] == "smape"].drop_duplicates("system_id")
    assert smape["rating"].tolist() == [1, 2]  # two distinct scores, L = 3
    # 40 dates: resampled, and S2's shift of 1 separates it
    out = accuracy_study_stability(*mart_inputs(40), settings)
    smape = out.loc[out["metric"] == "smape"]
    assert smape["separable"].eq(True).all() and smape["share"].notna().all()


# --------------------------------------------------------------------------- shares


def test_shares_count_only_the_resamples_that_rated_the_system() -> None:
    """APE-like scores (ideal 0, no worst value): a resample where b is undefined leaves a
    alone away from 0, so unrated there. a's shares still sum to 1 and equal the suites'
    share at its published rating over the same resamples."""
    rng = np.random.default_rng(5)
    systems = ["a", "b", "c"]
    point = np.array([0.5, 1.0, 1.5])
    boot = point + rng.normal(0.0, 0.4, (60, 3))
    boot[rng.random((60, 3)) < 0.35] = np.nan
    boot[:6, 1:] = np.nan  # a alone: unrated (no scale)
    groups = pd.DataFrame({"system_id": systems, "perturbation_id": "P1"})
    out = bootstrap_summary(groups, point, boot, 3, 0.9, ideal=0.0)
    sums = out.groupby("system_id")["share"].sum()
    np.testing.assert_allclose(sums.to_numpy(), 1.0, rtol=1e-12)
    published = dict(zip(systems, out.drop_duplicates("system_id")["rating"], strict=True))
    resampled = [dict(zip(systems, row, strict=True)) for row in boot]
    suite = stability_shares(published, resampled, 3, ideal=0.0)
    at = out.loc[out["rating"] == out["rating_level"]].set_index("system_id")["share"]
    for system in systems:
        assert at[system] == pytest.approx(suite[system], abs=1e-12)


def test_a_system_no_resample_rated_has_no_share() -> None:
    groups = pd.DataFrame({"system_id": ["a", "b"], "perturbation_id": "P1"})
    boot = np.array([[0.4, np.nan], [0.6, np.nan]])
    out = bootstrap_summary(groups, np.array([0.5, 1.0]), boot, 3, 0.9, ideal=0.0)
    assert out["share"].isna().all()
    assert out["n_valid"].tolist() == [2, 2, 2, 0, 0, 0]
