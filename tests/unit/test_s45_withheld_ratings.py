"""block_bootstrap_ratings with too few window dates for two blocks: the bootstrap is
withheld and no resample is drawn or summarised at all (a 0 x dates multiplicity matrix),
not one resample of the original dates summarised and then thrown away. The resamples
summarised are read off the real call of bootstrap_summary (a profile hook records the rows
of the resampled scores it is given; nothing is replaced); the frame is the one the former
path gave (one row of ones summarised, then withheld), rebuilt here from the public parts."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from tsrate.methods import ratings
from tsrate.methods.block_bootstrap import too_few_dates, withhold_bootstrap


def small_values() -> pd.DataFrame:
    """3 window dates, 2 perturbations, 3 systems, two tickers per date, one NaN value."""
    rng = np.random.default_rng(7)
    rows = [
        (system, pert, date, float(rng.normal(loc=i, scale=1.0)))
        for i, system in enumerate(["a", "b", "c"])
        for pert in ["P0", "P1"]
        for date in pd.to_datetime(["2024-01-05", "2024-01-12", "2024-01-19"])
        for _ticker in range(2)
    ]
    out = pd.DataFrame(rows, columns=["system_id", "perturbation_id", "window_end_date", "value"])
    out.loc[3, "value"] = np.nan
    return out


def summarised(call) -> tuple[list[int], pd.DataFrame]:
    """(the resample counts bootstrap_summary was given, the frame) of ``call()``."""
    seen: list[int] = []

    def hook(frame, event, _arg):
        if event == "call" and frame.f_code is ratings.bootstrap_summary.__code__:
            seen.append(int(np.shape(frame.f_locals["boot"])[0]))

    sys.setprofile(hook)
    try:
        out = call()
    finally:
        sys.setprofile(None)
    return seen, out


def former_withheld_frame(values, levels, statistic, rule) -> pd.DataFrame:
    """What the former path published: the point scores summarised as one resample of the
    original dates, then withheld."""
    finite = values.dropna(subset=["value"])
    point = finite.groupby(["perturbation_id", "system_id"])["value"].agg(statistic)
    groups = point.index.to_frame(index=False)[["perturbation_id", "system_id"]]
    scores = point.to_numpy()
    once = ratings.bootstrap_summary(groups, scores, scores[None, :], levels, 0.95, **rule)
    return withhold_bootstrap(once, too_few_dates(3, 2))


@pytest.mark.parametrize(
    ("statistic", "rule"),
    [
        ("mean", {}),
        ("std", {"ideal": None}),
        ("mean", {"higher_is_better": True, "metric": "accuracy"}),
    ],
)
def test_a_withheld_bootstrap_summarises_no_resample_and_publishes_the_same_frame(statistic, rule):
    values = small_values()
    seen, out = summarised(
        lambda: ratings.block_bootstrap_ratings(values, 3, 50, 2, 0, statistic, **rule)
    )
    assert seen == [0]  # the former path summarised 1 (the original dates once)
    assert_frame_equal(out, former_withheld_frame(values, 3, statistic, rule))
    reason = "3 window dates: too few for blocks of 2 (the bootstrap needs at least 4)"
    assert out["separation_reason"].eq(reason).all()
    assert out["n_resamples"].eq(0).all() and out["n_valid"].eq(0).all()
    assert out[["ci_low", "ci_high", "share"]].isna().all().all()
    assert out["rating"].gt(0).any() and np.isfinite(out["raw_score"]).all()


def test_the_same_hook_sees_every_resample_of_a_resampled_run():
    """The control: blocks of 1 over 3 dates are resampled, all 50 summarised."""
    seen, out = summarised(lambda: ratings.block_bootstrap_ratings(small_values(), 3, 50, 1, 0))
    assert seen == [50] and out["n_resamples"].eq(50).all()
