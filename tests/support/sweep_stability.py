"""What the rating-stability tests share (tests/unit/test_sweep_stability_resampled.py,
test_sweep_stability_mart.py): the WRS confidence levels and their weights, forty business
days of window dates, and rows of one value per window date. No test here.
"""

from __future__ import annotations

import pandas as pd

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})
DATES = pd.bdate_range("2010-01-04", periods=40)
DAYS = DATES.to_numpy().astype("datetime64[D]")


def rows(system: str, pert: str, group: str, values, start: int = 0) -> list[dict]:
    """One row per value, one window date each (dates start at DATES[start])."""
    return [
        dict(
            system_id=system,
            perturbation_id=pert,
            grp=group,
            window_end_date=DATES[(start + i) % len(DATES)],
            y=float(v),
        )
        for i, v in enumerate(values)
    ]
