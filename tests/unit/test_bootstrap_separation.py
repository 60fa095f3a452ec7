"""Separability by the paired block bootstrap (tsrate.methods.separation.bootstrap_separation,
reached through block_bootstrap_ratings / bootstrap_summary as rating_stability computes it).

The reference below is computed independently: a plain loop over the resamples of
``date_multiplicities`` (the resampled dates the rule says every system shares), numpy means
per system, ``np.quantile`` of the differences."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.ratings import block_bootstrap_ratings, date_multiplicities
from tsrate.methods.separation import bootstrap_separation

N_DATES, BLOCK, RESAMPLES, SEED, CONFIDENCE = 30, 3, 120, 11, 0.9


def _frame(sign: float = 1.0) -> pd.DataFrame:
    """a, b, c share a large common noise (the dates' difficulty): b sits a constant 0.05
    above a (separable ONLY because the bootstrap is paired), c about 0.06 above a with its
    own noise (not separable from a or b), d far above everyone (separable)."""
    rng = np.random.default_rng(3)
    common = rng.normal(0.0, 1.0, N_DATES)
    own = rng.normal(0.0, 0.3, N_DATES)
    tiny = rng.normal(0.0, 0.001, N_DATES)
    series = {"a": common, "b": common + 0.05 + tiny, "c": common + 0.06 + own, "d": common + 5}
    dates = pd.date_range("2022-01-03", periods=N_DATES, freq="D")
    rows = [
        (system, "P1", date, sign * value)
        for system, values in series.items()
        for date, value in zip(dates, values, strict=True)
    ]
    return pd.DataFrame(rows, columns=["system_id", "perturbation_id", "window_end_date", "value"])


def _reference(frame: pd.DataFrame, metric: str) -> dict[str, tuple[bool, str | None]]:
    systems = sorted(frame["system_id"].unique())
    values = {
        s: frame.loc[frame["system_id"] == s].sort_values("window_end_date")["value"].to_numpy()
        for s in systems
    }
    mult = date_multiplicities(N_DATES, BLOCK, RESAMPLES, SEED)
    boot = {s: np.array([np.sum(w * values[s]) / np.sum(w) for w in mult]) for s in systems}
    point = {s: values[s].mean() for s in systems}
    out = {}
    for i in systems:
        close = []
        for j in systems:
            if j == i:
                continue
            lo, hi = np.quantile(boot[i] - boot[j], [0.05, 0.95])
            d = point[i] - point[j]
            lo, hi = min(lo, d), max(hi, d)
            if lo <= 0 <= hi:
                close.append((abs(d), j, d, lo, hi))
        if not close:
            out[i] = (True, None)
            continue
        _, j, d, lo, hi = min(close)
        out[i] = (
            False,
            f"not separable from {j}: the {metric} difference {d:.3g} has a 90 % bootstrap "
            f"interval [{lo:.3g}, {hi:.3g}] that includes 0",
        )
    return out


def _published(frame: pd.DataFrame, metric: str, higher: bool = False) -> dict:
    out = block_bootstrap_ratings(
        frame,
        3,
        RESAMPLES,
        BLOCK,
        SEED,
        confidence=CONFIDENCE,
        metric=metric,
        higher_is_better=higher,
    )
    first = out.loc[out["rating_level"] == 1]
    return {  # a missing reason reads None (the frame may hold it as NaN)
        s: (sep, why if isinstance(why, str) else None)
        for s, sep, why in zip(
            first["system_id"], first["separable"], first["separation_reason"], strict=True
        )
    }


def test_paired_bootstrap_separation_matches_an_independent_loop():
    frame = _frame()
    got = _published(frame, "smape")
    want = _reference(frame, "smape")
    assert got == want
    # the frame has both kinds: c drags a and b down, d stands apart
    assert [got[s][0] for s in "abcd"] == [False, False, False, True]


def test_a_constant_gap_under_common_noise_is_separable_only_because_it_is_paired():
    frame = _frame().loc[lambda f: f["system_id"].isin(["a", "b"])]
    got = _published(frame, "mase")
    assert got == _reference(frame, "mase")
    assert got["a"] == (True, None) and got["b"] == (True, None)


def test_a_higher_is_better_metric_separates_like_the_same_scores_negated():
    lower = _published(_frame(), "sign_accuracy")
    higher = _published(_frame(sign=-1.0), "sign_accuracy", higher=True)
    assert {s: v[0] for s, v in lower.items()} == {s: v[0] for s, v in higher.items()}
    assert [lower[s][0] for s in "abcd"] == [False, False, False, True]


def _groups(systems):
    return pd.DataFrame({"system_id": list(systems), "perturbation_id": "P1"})


@pytest.mark.parametrize(("shift", "separable"), [(0.0, False), (-0.01, True)])
def test_an_interval_ending_exactly_at_zero_includes_zero(shift, separable):
    """21 resamples, 90 %: the interval is [d_(1), d_(19)] of the sorted differences exactly
    (linear quantiles at whole positions); d_(19) = 0 + shift."""
    diff = np.concatenate([-2.0 + 0.1 * np.arange(19), [0.0, 1.0]]) + shift
    boot = np.column_stack([diff, np.zeros(21)])
    flags, reasons = bootstrap_separation(_groups("xy"), [-0.5, 0.0], boot, 0.9, "m")
    assert flags == [separable, separable]
    if not separable:
        assert reasons[0] == (
            "not separable from y: the m difference -0.5 has a 90 % bootstrap interval "
            "[-1.9, 0] that includes 0"
        )


def test_tied_systems_are_not_separable_and_others_stay_separable():
    rng = np.random.default_rng(5)
    base = rng.normal(1.0, 0.2, 50)
    boot = np.column_stack([base, base, base + 3.0])
    flags, reasons = bootstrap_separation(_groups("pqr"), [1.0, 1.0, 4.0], boot, 0.9, "wrs_company")
    assert flags == [False, False, True]
    assert reasons[0] == "not separable from q: tied with q in every resample"
    assert reasons[1] == "not separable from p: tied with p in every resample"
    assert reasons[2] is None


def test_a_tie_in_the_point_and_most_resamples_but_not_all_keeps_the_interval_reason():
    """p and q tie on the original data and in 48 of 50 resamples; the other two differ
    (+-1, each in the 1 % tails of a 90 % interval): the interval is [0, 0] and includes 0,
    but the systems are not tied in EVERY resample, so the reason gives the interval."""
    base = np.linspace(1.0, 2.0, 50)
    other = base.copy()
    other[0] += 1.0
    other[-1] -= 1.0
    boot = np.column_stack([base, other])
    flags, reasons = bootstrap_separation(_groups("pq"), [1.5, 1.5], boot, 0.9, "m")
    assert flags == [False, False]
    assert reasons[0] == (
        "not separable from q: the m difference 0 has a 90 % bootstrap interval [0, 0] "
        "that includes 0"
    )


def test_the_reason_names_the_closest_inseparable_system_then_the_first_name():
    rng = np.random.default_rng(9)
    noise = rng.normal(0.0, 1.0, (200, 4))  # independent: every pair overlaps
    points = np.array([0.0, 0.3, -0.1, 0.1])
    flags, reasons = bootstrap_separation(_groups("ozyx"), points, noise + points, 0.9, "m")
    assert flags == [False] * 4
    # o's closest are y (-0.1) and x (0.1), equally close: x comes first by name
    assert reasons[0].startswith("not separable from x: the m difference -0.1 ")
    # z (0.3) is closest to x (0.1)
    assert reasons[1].startswith("not separable from x: the m difference 0.2 ")


def test_a_system_without_a_valid_resample_is_unknown():
    boot = np.column_stack([np.full(30, np.nan), np.linspace(0, 1, 30), np.linspace(5, 6, 30)])
    flags, reasons = bootstrap_separation(_groups("uvw"), [1.0, 0.5, 5.5], boot, 0.9, "m")
    assert flags == [None, True, True] and reasons == [None, None, None]
