"""fev-style leaderboard rows (skill score, win rate, average rank, failures, bootstrap
intervals) per run, scope, metric and system. Thin wrapper over
tsrate.robustness.marts.leaderboard.leaderboard; tunables in int_leaderboard_scored.yml."""

from tsrate.robustness.marts.leaderboard import leaderboard, scoped_tasks


def model(dbt, session):
    baseline = dbt.config.get("leaderboard_baseline")
    resamples = dbt.config.get("leaderboard_bootstrap_resamples")
    seed = dbt.config.get("leaderboard_bootstrap_seed")
    if not baseline or resamples is None or seed is None:
        raise ValueError(
            "int_leaderboard_scored: set config leaderboard_baseline, "
            "leaderboard_bootstrap_resamples and leaderboard_bootstrap_seed"
        )
    tasks = scoped_tasks(dbt.ref("leaderboard_tasks").df())
    return leaderboard(tasks, str(baseline), int(resamples), int(seed))
