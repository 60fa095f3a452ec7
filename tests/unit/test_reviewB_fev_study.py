"""The fev export names the study of the run whose errors it writes, whatever was published
after it.

A suite publication (``tsrate suite ... run``) swaps in a new snapshot that still holds the
core marts (``leaderboard_tasks`` of the last core build) but adds a ``published_runs`` row
without a study (a suite run is no row of ``raw.runs``). The export read the study of the
newest publication, so after a suite run every fev summary lost its task definition: no
horizon, no context length, no cutoff, and a ``dataset_path`` hashed from nothing. The
expected values here are worked out from the study written into the snapshot by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd

from tests.support.fev import fev_dataset_path
from tsrate.robustness.fev_export import export_fev

CORE_STUDY = {"horizon": 5, "start": "2022-06-01", "context_length": 40}
OTHER_STUDY = {"horizon": 9, "start": "2021-01-04", "context_length": 12}
TASKS = pd.DataFrame(
    {
        "run_id": "core-run",
        "metric": ["mase", "mase"],
        "task_id": ["AAPL P0", "AAPL P1"],
        "ticker": "AAPL",
        "perturbation_id": ["P0", "P1"],
        "system_id": ["naive", "naive"],
        "test_error": [0.9, 1.3],
        "n_windows": [10, 10],
        "inference_time_s": [0.1, 0.2],
    }
)


def _snapshot(path: Path, publications: list[tuple[str, str, dict | None]]) -> None:
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    con.register("tasks", TASKS)
    con.execute("create table marts.leaderboard_tasks as select * from tasks")
    con.execute(
        "create table published_runs (run_id varchar, published_at timestamp, study json, "
        "row_counts json, parquet_path varchar)"
    )
    for run_id, when, study in publications:
        con.execute(
            "insert into published_runs values (?, ?, ?, '{}', null)",
            [run_id, when, None if study is None else json.dumps(study)],
        )
    con.close()


def test_a_suite_publication_after_the_core_run_keeps_the_core_runs_study(tmp_path) -> None:
    snapshot = tmp_path / "snapshot.duckdb"
    _snapshot(
        snapshot,
        [
            ("core-run", "2026-01-02 10:00", CORE_STUDY),
            ("understanding-20260103", "2026-01-03 10:00", None),  # a suite's publication
        ],
    )
    export_fev(snapshot, tmp_path / "fev")
    mase = pd.read_csv(tmp_path / "fev" / "mase.csv", keep_default_na=False)
    assert mase["horizon"].tolist() == [5, 5]
    assert mase["min_context_length"].tolist() == [40, 40]
    assert mase["max_context_length"].tolist() == [40, 40]
    assert mase["initial_cutoff"].tolist() == ["2022-06-01"] * 2
    assert set(mase["dataset_path"]) == {fev_dataset_path(CORE_STUDY)}


def test_the_study_is_the_one_of_the_run_the_errors_describe(tmp_path) -> None:
    # another core run published later (its marts since replaced by a rebuild of core-run
    # and a suite publication): its study is not the one of these errors
    snapshot = tmp_path / "snapshot.duckdb"
    _snapshot(
        snapshot,
        [
            ("core-run", "2026-01-02 10:00", CORE_STUDY),
            ("other-run", "2026-01-03 10:00", OTHER_STUDY),
            ("reasoning-20260104", "2026-01-04 10:00", None),
        ],
    )
    export_fev(snapshot, tmp_path / "fev")
    mase = pd.read_csv(tmp_path / "fev" / "mase.csv", keep_default_na=False)
    assert mase["horizon"].tolist() == [5, 5]
    assert set(mase["dataset_path"]) == {fev_dataset_path(CORE_STUDY)}
