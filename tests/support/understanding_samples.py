"""Hand-made samples of the understanding suite's trend dataset, for tests that build the
prompts of a series they chose themselves (day 1 is 2020-01-01)."""

from __future__ import annotations

import datetime as dt

import numpy as np

from tsrate.suites.understanding import generators as g


def trend_sample(
    values, seed: int = 123, sub_feature: str = "none", description: str = "q"
) -> g.Sample:
    """A test-split trend sample of ``values`` whose qualitative and quantitative
    descriptions are both ``description``."""
    return g.Sample(
        dataset="trend",
        split="test",
        index=0,
        seed=seed,
        start_date=dt.date(2020, 1, 1),
        values=np.asarray(values, dtype=float),
        sub_feature=sub_feature,
        labels={},
        qualitative=description,
        quantitative=description,
    )
