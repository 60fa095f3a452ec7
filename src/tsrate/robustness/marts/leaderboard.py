"""fev's leaderboard conventions applied to tsrate's per-task errors.

A task is one ticker under one perturbation (scope ``all``: every ticker × perturbation of the
run), or one ticker under a given perturbation (scope = that perturbation). A task's error
(``test_error``) is the mean over the task's windows of the per-window metric (MASE, SMAPE,
WQL or CRPS), every system scored on the same windows. As ``fev.leaderboard`` (fev 0.10):

- relative error = the system's task error / the baseline's (``seasonal_naive``), clipped
  to [0.01, 100];
- skill score = 1 - the geometric mean of the clipped relative errors over tasks;
- win rate = for each other system, the share of tasks with a lower clipped relative error
  (a tie counts one half; relative errors within floating noise of each other, 1e-12
  relative, tie: :func:`tsrate.methods.noise.snap_ties`), averaged over the other systems;
- a task where any rated system has no error is dropped for all (fev's ``missing_strategy=
  "drop"``) and counted in ``num_failures`` of the systems that failed it, and the ranked rows'
  ``reason`` says how many tasks were dropped and which systems lack them, since everyone's
  scores move (:func:`dropped_note`); a system with no error on any task is left out with
  the reason.

Beside fev: a task where the baseline's error is exactly 0 has no relative error (x / 0); fev
refuses the whole table then ("results for baseline_model are missing"). tsrate drops the
task for every system, fails nobody for it, and says so: ``n_tasks_zero_baseline`` counts
such tasks and the reason names them.

Also beside fev: average rank over the kept tasks (1 = best; ranked on the clipped relative
errors, so systems clipped at the same bound tie and share the mean rank, as
``scipy.stats.rankdata(method="average")``), and 95 %
block-bootstrap intervals for skill score and win rate, resampling tickers (all of a
ticker's tasks together, since they share its prices) with a fixed seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.methods.noise import snap_row_ties

MIN_RELATIVE_ERROR = 0.01
MAX_RELATIVE_ERROR = 100.0
BASELINE = "seasonal_naive"

LEADERBOARD_COLUMNS = [
    "run_id",
    "scope",
    "metric",
    "system_id",
    "skill_score",
    "skill_score_lower",
    "skill_score_upper",
    "win_rate",
    "win_rate_lower",
    "win_rate_upper",
    "average_rank",
    "n_tasks",
    "num_failures",
    "n_tasks_zero_baseline",
    "baseline_system_id",
    "reason",
]


def win_rates(errors: np.ndarray) -> np.ndarray:
    """(tasks × systems) errors → each system's win rate against the others (fev's rule)."""
    a, b = errors[:, :, None], errors[:, None, :]
    wins = (a < b).mean(axis=0) + 0.5 * (a == b).mean(axis=0)
    np.fill_diagonal(wins, np.nan)
    return np.nanmean(wins, axis=1)


def skill_scores(errors: np.ndarray) -> np.ndarray:
    """(tasks × systems) clipped relative errors → 1 - geometric mean over tasks.

    The geometric mean as ``scipy.stats.gmean`` computes it (the exponent of the mean log;
    tested equal): importing ``scipy.stats`` cost every dbt build with Python models ~0.5 s."""
    return 1.0 - np.exp(np.log(errors).mean(axis=0))


def _intervals(
    relative: np.ndarray, blocks: np.ndarray, n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """2.5 % and 97.5 % quantiles of skill score and win rate over block-bootstrap resamples:
    each resample draws len(blocks) blocks with replacement and takes all of a drawn block's
    tasks. Vectorised: a resample is the count of times each task is drawn, and both
    statistics are count-weighted means over tasks (of log relative errors; of pairwise wins)."""
    rng = np.random.default_rng(seed)
    unique, block_of_task = np.unique(blocks, return_inverse=True)
    drawn = rng.integers(0, len(unique), size=(n_resamples, len(unique)))
    block_counts = np.stack([np.bincount(row, minlength=len(unique)) for row in drawn])
    task_counts = block_counts[:, block_of_task].astype(float)  # resamples x tasks
    weights = task_counts / task_counts.sum(axis=1, keepdims=True)
    skills = 1.0 - np.exp(weights @ np.log(relative))
    a, b = relative[:, :, None], relative[:, None, :]
    pairwise = (a < b) + 0.5 * (a == b)  # tasks x systems x systems
    n_systems = relative.shape[1]
    wins = (weights @ pairwise.reshape(len(relative), -1)).reshape(-1, n_systems, n_systems)
    wins[:, np.arange(n_systems), np.arange(n_systems)] = np.nan
    win_rate = np.nanmean(wins, axis=2) if n_systems > 1 else np.full((n_resamples, 1), np.nan)
    skill_low, skill_high = np.quantile(skills, [0.025, 0.975], axis=0)
    win_low, win_high = np.quantile(win_rate, [0.025, 0.975], axis=0)
    return skill_low, skill_high, win_low, win_high


def dropped_note(pivot: pd.DataFrame, metric: str, scope: str) -> str | None:
    """Why every system's scores moved when some systems lack tasks (fev's "drop"): the
    tasks dropped for all of the scope's tasks and each system that has no ``metric`` for
    some (its count). None when no ranked system lacks a task. ``pivot``: tasks × systems,
    the systems with no error on any task already left out. Scope ``all`` points to the
    per-perturbation scopes, where a system that lacks whole perturbations drops nothing."""
    missing = pivot.isna()
    dropped = int(missing.any(axis=1).sum())
    if not dropped:
        return None
    lacking = ", ".join(
        f"{system} ({int(count)})" for system, count in missing.sum().items() if count
    )
    where = "; compare the per-perturbation scopes" if scope == "all" else ""
    return (
        f"{dropped} of {len(pivot)} tasks dropped for every system: no {metric} from "
        f"{lacking} (fev's missing_strategy 'drop'{where})"
    )


def scoped_tasks(tasks: pd.DataFrame) -> pd.DataFrame:
    """``leaderboard_tasks`` rows (run_id, metric, ticker, perturbation_id, system_id,
    test_error) → the same rows once for scope ``all`` and once for their perturbation's
    scope, with ``task_id`` and ``block_id`` (the ticker: the bootstrap's block)."""
    tasks = tasks.assign(
        task_id=tasks["ticker"].astype(str) + " " + tasks["perturbation_id"].astype(str),
        block_id=tasks["ticker"].astype(str),
    )
    return pd.concat(
        [tasks.assign(scope="all"), tasks.assign(scope=tasks["perturbation_id"].astype(str))],
        ignore_index=True,
    )


def leaderboard(
    task_errors: pd.DataFrame,
    baseline: str = BASELINE,
    n_resamples: int = 200,
    seed: int = 123,
) -> pd.DataFrame:
    """Rows of the ``leaderboard`` mart from ``task_errors`` (run_id, scope, metric, task_id,
    block_id, system_id, test_error; see :func:`scoped_tasks`): one row per (run, scope,
    metric, system)."""
    rows = []
    for (run_id, scope, metric), group in task_errors.groupby(
        ["run_id", "scope", "metric"], sort=True, observed=True
    ):
        pivot = group.set_index(["task_id", "block_id", "system_id"])["test_error"].unstack(
            "system_id"
        )
        base = {"run_id": run_id, "scope": scope, "metric": metric, "baseline_system_id": baseline}
        if baseline not in pivot.columns:
            for system_id in pivot.columns:
                rows.append(
                    base
                    | {
                        "system_id": system_id,
                        "reason": f"the baseline {baseline} is not in the run: no relative errors",
                    }
                )
            continue
        # a baseline error of exactly 0 gives no relative error: the task is dropped for all
        zero_baseline = int((pivot[baseline] == 0).sum())
        base = base | {"n_tasks_zero_baseline": zero_baseline}
        zero_note = (
            f"{zero_baseline} task(s) left out: {baseline}'s {metric} is 0 there "
            "(no relative error)"
            if zero_baseline
            else None
        )
        empty = [s for s in pivot.columns if pivot[s].isna().all()]
        for system_id in empty:
            rows.append(
                base
                | {
                    "system_id": system_id,
                    "num_failures": len(pivot),
                    "reason": f"no {metric} for any task (the system gives no quantile forecasts)"
                    if metric in ("wql", "crps")
                    else f"no {metric} for any task",
                }
            )
        pivot = pivot.drop(columns=empty)
        if baseline not in pivot.columns:
            for system_id in pivot.columns:
                rows.append(
                    base | {"system_id": system_id, "reason": f"no {metric} for {baseline}"}
                )
            continue
        # a zero baseline error makes the baseline's own ratio 0 / 0 = NaN: dropped below
        relative = pivot.divide(pivot[baseline], axis=0)
        relative = relative.clip(lower=MIN_RELATIVE_ERROR, upper=MAX_RELATIVE_ERROR)
        # a system's failures are the tasks it has no error for: a task the baseline failed
        # is dropped for all (no relative error) but is not the others' failure
        failures = pivot.isna().sum()
        drop_note = dropped_note(pivot, metric, str(scope))
        relative = relative.dropna()
        systems = list(relative.columns)
        if relative.empty:
            for system_id in systems:
                rows.append(
                    base
                    | {
                        "system_id": system_id,
                        "num_failures": int(failures[system_id]),
                        "reason": f"no task left to rank; {zero_note}"
                        if zero_note
                        else "no task where every system has an error",
                    }
                )
            continue
        # relative errors within floating noise of each other are one value (a tie counts
        # one half): one model's forecasts under two ids must not win by their last bits
        values = snap_row_ties(relative.to_numpy())
        skill = skill_scores(values)
        win = win_rates(values) if len(systems) > 1 else np.full(1, np.nan)
        ranks = pd.DataFrame(values).rank(axis=1, method="average").mean(axis=0).to_numpy()
        blocks = relative.index.get_level_values("block_id").to_numpy()
        if n_resamples and len(np.unique(blocks)) > 1:
            skill_low, skill_high, win_low, win_high = _intervals(values, blocks, n_resamples, seed)
        else:
            skill_low = skill_high = win_low = win_high = np.full(len(systems), np.nan)
        for index, system_id in enumerate(systems):
            rows.append(
                base
                | {
                    "system_id": system_id,
                    "skill_score": skill[index],
                    "skill_score_lower": skill_low[index],
                    "skill_score_upper": skill_high[index],
                    "win_rate": win[index],
                    "win_rate_lower": win_low[index],
                    "win_rate_upper": win_high[index],
                    "average_rank": ranks[index],
                    "n_tasks": len(relative),
                    "num_failures": int(failures[system_id]),
                    "reason": None if len(systems) > 1 else "a lone system has no win rate",
                }
            )
        # the ranked systems' rows say which tasks some systems lack, then which tasks a zero
        # baseline left out, after their own reason
        for note in filter(None, (drop_note, zero_note)):
            for row in rows[-len(systems) :]:
                row["reason"] = "; ".join(filter(None, [row["reason"], note]))
    frame = pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)
    for column in ["n_tasks", "num_failures", "n_tasks_zero_baseline"]:
        frame[column] = frame[column].astype("Int64")
    return frame
