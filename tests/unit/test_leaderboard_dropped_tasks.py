"""fev's "drop": a system lacking tasks shrinks every system's ranked tasks, and the rows say
so. Expected counts come from the hand-built task errors (tasks where some system has none).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tsrate.robustness.marts.leaderboard import leaderboard, scoped_tasks
from tsrate.robustness.report.numbers import num
from tsrate.robustness.report.probabilistic import dropped_line

BASELINE = "seasonal_naive"
# (ticker, perturbation) -> errors; "p0" was imported for P0 only, "b" misses one P1 task
ERRORS = {
    ("AAA", "P0"): {BASELINE: 1.0, "a": 0.5, "b": 0.8, "p0": 0.4},
    ("BBB", "P0"): {BASELINE: 2.0, "a": 1.0, "b": 1.5, "p0": 0.9},
    ("AAA", "P1"): {BASELINE: 1.0, "a": 0.6, "b": np.nan, "p0": np.nan},
    ("BBB", "P1"): {BASELINE: 2.0, "a": 1.2, "b": 1.1, "p0": np.nan},
}


def board() -> pd.DataFrame:
    rows = [
        dict(run_id="r", metric="smape", ticker=t, perturbation_id=p, system_id=s, test_error=e)
        for (t, p), errors in ERRORS.items()
        for s, e in errors.items()
        if not np.isnan(e)
    ]
    return leaderboard(scoped_tasks(pd.DataFrame(rows)), BASELINE, n_resamples=0)


def test_the_rows_of_scope_all_say_how_many_tasks_were_dropped_and_who_lacks_them():
    dropped = sum(any(np.isnan(e) for e in errors.values()) for errors in ERRORS.values())
    lacks = {s: sum(np.isnan(e[s]) for e in ERRORS.values()) for s in ("b", "p0")}
    assert (dropped, lacks) == (2, {"b": 1, "p0": 2})
    rows = board()
    everyone = rows[rows["scope"] == "all"].set_index("system_id")
    assert (everyone["n_tasks"] == len(ERRORS) - dropped).all()
    note = (
        f"{dropped} of {len(ERRORS)} tasks dropped for every system: no smape from "
        f"b ({lacks['b']}), p0 ({lacks['p0']}) (fev's missing_strategy 'drop'; compare the "
        "per-perturbation scopes)"
    )
    assert (everyone["reason"] == note).all()


def test_a_scope_where_every_ranked_system_has_every_task_says_nothing():
    rows = board().set_index(["scope", "system_id"])
    assert rows.loc["P0", "reason"].isna().all()
    # p0 has no row under P1 at all: not in that scope, so it drops nothing there
    assert "p0" not in rows.loc["P1"].index
    p1 = rows.loc["P1"]
    assert (p1["reason"] == "1 of 2 tasks dropped for every system: no smape from b (1) "
            "(fev's missing_strategy 'drop')").all()  # fmt: skip


def test_the_report_names_the_systems_that_forced_the_drop():
    rows = board()
    block = rows[(rows["scope"] == "all") & (rows["metric"] == "smape")]
    text = re.sub(r"<[^>]+>", "", dropped_line(block, "smape", num))
    assert "scored on only the 2 tasks all of them have: b lacks 1, p0 lacks 2" in text
    assert "per-perturbation scopes" in text
    p0 = rows[(rows["scope"] == "P0") & (rows["metric"] == "smape")]
    assert dropped_line(p0, "smape", num) == ""
