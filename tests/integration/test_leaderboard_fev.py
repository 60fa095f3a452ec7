"""The leaderboard mart and `tsrate export --format fev`: fev 0.10's own leaderboard() on the
export gives the mart's skill scores and win rates.

fev runs in its own virtual environment (.ci/run installs fev 0.10 there and exports its
interpreter as TSRATE_FEV_PYTHON); without it the fev comparison skips locally and fails
under CI=true.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from tests.support.warehouses import read
from tsrate.platform.publish import publish
from tsrate.robustness.fev_export import export_fev

FEV_LEADERBOARD = """
import json, sys, fev
out = {}
for path in sys.argv[1:]:
    board = fev.leaderboard(path, baseline_model="seasonal_naive")
    out[path] = {
        name: [float(row.skill_score), float(row.win_rate), int(row.num_failures)]
        for name, row in board.iterrows()
    }
print(json.dumps({"version": fev.__version__, "boards": out}))
"""


@pytest.fixture(scope="module")
def fev_export(quantile_run, tmp_path_factory):
    """The session's quantile study (conftest.py) published and exported for fev here."""
    root = tmp_path_factory.mktemp("leaderboard")
    publish(quantile_run.warehouse, quantile_run.run_id, target=root / "published.duckdb",
            parquet=False)  # fmt: skip
    written = export_fev(root / "published.duckdb", root / "fev")
    return root, written


def test_leaderboard_follows_fevs_rules_by_hand(quantile_run):
    warehouse, _, study = quantile_run
    n_tasks = len(study.tickers) * len(study.perturbations)  # a ticker under a perturbation
    tasks = read(warehouse, "select * from marts.leaderboard_tasks where metric = 'mase'")
    pivot = tasks.pivot(index="task_id", columns="system_id", values="test_error")
    relative = pivot.divide(pivot["seasonal_naive"], axis=0).clip(0.01, 100)
    board = read(
        warehouse, "select * from marts.leaderboard where scope = 'all' and metric = 'mase'"
    ).set_index("system_id")
    assert len(relative) == n_tasks
    for system in relative.columns:
        expected_skill = 1 - np.exp(np.log(relative[system]).mean())
        assert board.loc[system, "skill_score"] == pytest.approx(expected_skill)
        others = [s for s in relative.columns if s != system]
        wins = [
            ((relative[system] < relative[o]) + 0.5 * (relative[system] == relative[o])).mean()
            for o in others
        ]
        assert board.loc[system, "win_rate"] == pytest.approx(np.mean(wins))
        assert board.loc[system, "n_tasks"] == n_tasks
        low, high = board.loc[system, ["skill_score_lower", "skill_score_upper"]]
        assert low <= board.loc[system, "skill_score"] + 1e-12 <= high + 2e-12
    assert board.loc["seasonal_naive", "skill_score"] == pytest.approx(0.0)
    ranks = relative.rank(axis=1).mean()
    np.testing.assert_allclose(board.loc[ranks.index, "average_rank"], ranks)


def test_a_system_without_quantiles_is_left_out_of_wql_with_a_reason(quantile_run):
    warehouse, _, study = quantile_run
    board = read(warehouse, "select * from marts.leaderboard where metric = 'wql'")
    biased = board[board["system_id"] == "biased"]
    assert len(biased) == 1 + len(study.perturbations)  # scope all, then each perturbation
    assert biased["skill_score"].isna().all()
    assert biased["reason"].str.contains("no quantile forecasts").all()
    assert board[board["system_id"] != "biased"]["skill_score"].notna().all()


def test_fev_leaderboard_on_the_export_gives_the_marts_scores(quantile_run, fev_export):
    warehouse = quantile_run.warehouse
    _, written = fev_export
    assert sorted(p.name for p in written) == ["crps.csv", "mase.csv", "smape.csv", "wql.csv"]
    python = os.environ.get("TSRATE_FEV_PYTHON")
    if not python:
        reason = (
            "TSRATE_FEV_PYTHON is not set: .ci/run installs fev 0.10 in its own venv and sets it"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    done = subprocess.run(
        [python, "-c", FEV_LEADERBOARD, *map(str, written)],
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["version"].startswith("0.10"), seen["version"]
    board = read(warehouse, "select * from marts.leaderboard where scope = 'all'")
    for path in written:
        metric = path.stem
        fev_board = seen["boards"][str(path)]
        ours = board[(board["metric"] == metric) & board["skill_score"].notna()]
        assert set(fev_board) == set(ours["system_id"]), metric
        for row in ours.itertuples():
            skill, win_rate, failures = fev_board[row.system_id]
            assert skill == pytest.approx(row.skill_score, abs=1e-12), (metric, row.system_id)
            assert win_rate == pytest.approx(row.win_rate, abs=1e-12), (metric, row.system_id)
            assert failures == row.num_failures


def test_the_report_sections_show_the_marts_numbers(quantile_run):
    from tsrate.robustness.report.probabilistic import leaderboard_section, probabilistic_section
    from tsrate.robustness.report.render import num

    warehouse = quantile_run.warehouse
    board = read(warehouse, "select * from marts.leaderboard")
    html = leaderboard_section(board, num)
    seasonal = board[(board["scope"] == "all") & (board["metric"] == "mase")]
    seasonal = seasonal.set_index("system_id").loc["random"]
    assert f'data-value="{float(seasonal["skill_score"])!r}"' in html
    assert 'data-mart="marts.leaderboard"' in html and "no quantile forecasts" in html
    scores = read(warehouse, "select * from marts.probabilistic_scores")
    html = probabilistic_section(scores, num)
    assert 'data-mart="marts.probabilistic_scores"' in html
    assert html.count("<tr>") == 1 + scores.groupby(["system_id", "perturbation_id"]).ngroups


def test_the_export_and_the_report_carry_provenance(quantile_run, fev_export):
    import pandas as pd

    from tsrate.robustness.report.probabilistic import provenance_section

    warehouse = quantile_run.warehouse
    root, _ = fev_export
    provenance = read(warehouse, "select * from marts.run_provenance")
    exported = pd.read_csv(root / "fev" / "mase.csv")
    fingerprint = provenance["price_rows_fingerprint"].iloc[0]
    assert (exported["tsrate_price_rows_fingerprint"] == fingerprint).all()
    # no system of this study trains on anything: no window can leak (marts.window_leakage)
    leakage = read(warehouse, "select * from marts.window_leakage")
    assert len(leakage) and not leakage["in_training_data"].astype(bool).any()
    assert (exported["trained_on_this_dataset"].astype(str) == "False").all()
    # what each system was trained on travels with its records: 'none:' without a cutoff
    assert exported["tsrate_training_data"].str.startswith("none:").all()
    assert "tsrate_training_cutoff" in exported and exported["tsrate_training_cutoff"].isna().all()
    html = provenance_section(provenance)
    assert fingerprint[:16] in html and "Trained on" in html
