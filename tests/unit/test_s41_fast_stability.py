"""The faster bootstrap of rating_stability (and the published effects on threads) give the
numbers of the plain computation.

wrs_resampled tests its pairs in slices (PAIR_SLICE), decides most of them by the
smallest and largest critical value of a chunk's dofs, and groups its rows through the
categories of categorical keys; rating_stability runs the outcomes on threads. Each path is
checked against the published test on physically replicated rows (groups of unequal sizes,
so the dofs of a chunk differ and the bounds do not decide every pair) or against the
same call on the plain path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import tsrate.methods.causal.effects as causal_effects
import tsrate.methods.stability as stability
import tsrate.robustness.marts.stability as marts_stability
from tests.support.effect_study import DRAWS, SEED, effect_inputs
from tests.unit.test_s40_outcome_stability import stability as run_stability
from tests.unit.test_s40_outcome_stability import study
from tests.unit.test_stability import LEVELS, reference_wrs, replicate
from tsrate.methods.causal.effects import study_effects, with_draws
from tsrate.methods.ratings import date_multiplicities
from tsrate.methods.stability import wrs_resampled
from tsrate.methods.wrs import weighted_rejection_pairs

TICKERS = [f"T{i:02d}" for i in range(10)]


def gappy_errors(seed: int = 4) -> pd.DataFrame:
    """Two systems x two perturbations x 10 companies in 2 industries on 30 dates, about
    a third of the rows dropped (groups of unequal sizes: dofs that differ by pair and by
    resample), company means spread so that many pairs sit near the critical values."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2005-01-03", periods=30)
    frames = []
    for system, shift in (("calm", 0.0), ("jumpy", 0.35)):
        for pert in ("P0", "P1"):
            for j, ticker in enumerate(TICKERS):
                keep = rng.random(dates.size) > 0.35
                keep[:3] = True
                values = rng.gamma(2.0, 1.0, dates.size) + shift * (j % 4) + 0.15 * j
                frames.append(
                    pd.DataFrame(
                        {
                            "system_id": system,
                            "perturbation_id": pert,
                            "ticker": ticker,
                            "industry": "Tech" if j < 5 else "Bank",
                            "window_end_date": dates[keep],
                            "max_abs_residual": values[keep],
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


def dates_of(errors: pd.DataFrame) -> np.ndarray:
    return np.unique(errors["window_end_date"].to_numpy().astype("datetime64[D]"))


@pytest.mark.parametrize("group,within", [("industry", None), ("ticker", "industry")])
def test_unequal_groups_match_the_published_test_on_replicated_rows(group, within):
    errors = gappy_errors()
    dates = dates_of(errors)
    mult = date_multiplicities(dates.size, 4, 40, seed=9)
    keys, point, boot = wrs_resampled(errors, group, LEVELS, within, dates, mult)
    index = pd.MultiIndex.from_frame(keys)
    np.testing.assert_allclose(point, reference_wrs(errors, group, within).reindex(index))
    for r in range(mult.shape[0]):
        got = reference_wrs(replicate(errors, dates, mult[r]), group, within).reindex(index)
        np.testing.assert_allclose(boot[r], got.to_numpy(), err_msg=f"resample {r}")
    assert np.ptp(boot, axis=0).max() > 0


@pytest.mark.parametrize("size", [1, 2, 7])
def test_pairs_in_small_slices_give_the_same_scores(monkeypatch, size):
    errors = gappy_errors(seed=6)
    dates = dates_of(errors)
    mult = date_multiplicities(dates.size, 3, 20, seed=2)
    whole = wrs_resampled(errors, "ticker", LEVELS, "industry", dates, mult)
    monkeypatch.setattr(stability, "PAIR_SLICE", size)
    sliced = wrs_resampled(errors, "ticker", LEVELS, "industry", dates, mult)
    pd.testing.assert_frame_equal(sliced[0], whole[0])
    np.testing.assert_array_equal(sliced[1], whole[1])
    np.testing.assert_array_equal(sliced[2], whole[2])


def test_categorical_keys_in_any_category_order_group_as_their_texts(monkeypatch):
    """Categories listed out of order, with unused ones, give the groups (and scores) of the
    same values as plain text; so does the grouping of the texts themselves (used when the
    key combinations would overflow one integer)."""
    errors = gappy_errors(seed=8)
    dates = dates_of(errors)
    mult = date_multiplicities(dates.size, 3, 12, seed=5)
    plain = wrs_resampled(errors, "ticker", LEVELS, "industry", dates, mult)
    coded = errors.copy()
    for column, extra in (("ticker", "ZZ"), ("industry", "Aaa"), ("system_id", "0")):
        values = sorted(coded[column].unique(), reverse=True)
        coded[column] = pd.Categorical(coded[column], categories=[extra, *values])
    got = wrs_resampled(coded, "ticker", LEVELS, "industry", dates, mult)
    pd.testing.assert_frame_equal(got[0], plain[0])
    np.testing.assert_array_equal(got[2], plain[2])
    monkeypatch.setattr(stability, "COMBINED_KEYS", 1.0)
    texts = wrs_resampled(coded, "ticker", LEVELS, "industry", dates, mult)
    pd.testing.assert_frame_equal(texts[0], plain[0])
    np.testing.assert_array_equal(texts[2], plain[2])


def test_the_outcomes_on_threads_give_the_numbers_of_one_thread(monkeypatch):
    inputs = study()
    monkeypatch.setattr(marts_stability, "WORKERS", 1)
    alone = run_stability(*inputs)
    monkeypatch.setattr(marts_stability, "WORKERS", 3)
    threaded = run_stability(*inputs)
    pd.testing.assert_frame_equal(threaded, alone)
    assert set(alone["outcome"].dropna()) == {"max_abs_residual", "other", "gappy"}


def test_a_pair_at_the_largest_dof_just_above_its_critical_value_is_rejected():
    """Groups of 3, 3 and 20 windows: the pairs with the big group have the chunk's largest
    dof (21), the other pair dof 4. The small group's mean is set so that its |t| against
    the big group lies between the critical values at dof 21 and dof 20 (95 %): rejected at
    dof 21 only, so the bounds must include the largest dof of the chunk."""
    dates = pd.bdate_range("2010-01-04", periods=20)
    big = 5.0 + np.linspace(-1.0, 1.0, 20)
    pooled = (2 * 1.0 + 19 * big.var(ddof=1)) / 21
    target = (stats.t.ppf(0.975, 21) + stats.t.ppf(0.975, 20)) / 2
    shift = target * np.sqrt(pooled * (1 / 3 + 1 / 20))
    rows = [("big", d, v) for d, v in zip(dates, big, strict=True)]
    rows += [("near", d, 5.0 + shift + e) for d, e in zip(dates[:3], (-1.0, 0.0, 1.0), strict=True)]
    rows += [("far", d, 20.0 + e) for d, e in zip(dates[3:6], (-1.0, 0.0, 1.0), strict=True)]
    errors = pd.DataFrame(rows, columns=["industry", "window_end_date", "max_abs_residual"])
    errors.insert(0, "system_id", "s")
    errors.insert(1, "perturbation_id", "P0")
    errors["ticker"] = errors["industry"]
    dates = dates_of(errors)
    _, point, _ = wrs_resampled(errors, "industry", LEVELS, None, dates, np.ones((1, dates.size)))
    expected = reference_wrs(errors, "industry", None).to_numpy()
    np.testing.assert_allclose(point, expected)
    pairs = weighted_rejection_pairs(errors, "industry", LEVELS)
    near = pairs.loc[(pairs["group_a"] == "big") & (pairs["group_b"] == "near")]
    assert bool(near.loc[near["confidence"] == 0.95, "rejected"].iloc[0])


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_the_published_effects_on_threads_are_those_of_one_call(monkeypatch, workers):
    """study_effects splits a perturbation set's grids (systems x outcomes) into runs on
    threads: every row and every per-draw row is that of one call, in the same order."""
    errors, sets, distributions, _ = effect_inputs()
    errors["other"] = errors["max_abs_residual"] ** 1.5 + 0.1 * np.arange(len(errors)) % 3

    def published():
        draw_rows = []
        effects = study_effects(
            errors,
            sets,
            distributions,
            SEED,
            draws=DRAWS,
            outcomes=["max_abs_residual", "other"],
            draw_rows=draw_rows,
        )
        return with_draws(effects, draw_rows)

    monkeypatch.setattr(causal_effects, "EFFECT_WORKERS", 1)
    alone = published()
    monkeypatch.setattr(causal_effects, "EFFECT_WORKERS", workers)
    pd.testing.assert_frame_equal(published(), alone)
    assert alone["system_id"].nunique() == 2 and alone["outcome"].nunique() == 2
