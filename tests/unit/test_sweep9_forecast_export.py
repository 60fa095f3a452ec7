"""What leaves the warehouse about a run: the fev evaluation summaries
(tsrate.robustness.fev_export) and the run's provenance rows
(tsrate.robustness.marts.provenance), checked cell by cell against tables and digests
worked out by hand from the modules' documented definitions (fev 0.10's columns, sha256 of
the stated texts, the study period's bounds inclusive).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_forecast.json): a wrong column, a system dropped or kept wrongly, a
default that turns "unknown" into a number, a price row outside the study, or another
run's partitions change a checked value. The snapshot read by ``export_fev`` is a small
DuckDB file written here with the tables a published snapshot holds. ``run_provenance``
and ``git_revision`` run git, so they are tests/integration/test_sweep9_forecast.py's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.support.fev import fev_dataset_path
from tsrate import TsrateError, __version__
from tsrate.robustness.fev_export import (
    export_fev,
    fev_summaries,
    study_fingerprint,
    trained_on_this_dataset,
)
from tsrate.robustness.marts.provenance import (
    UNKNOWN_TRAINING,
    fingerprint_rows,
    training_by_system,
)

ROOT = Path(__file__).resolve().parents[2]

# --- fev_export.py --------------------------------------------------------------------------

TASKS = pd.DataFrame(
    {  # metrics out of order; "ghost" has no MASE at all, "naive" one missing task error
        "run_id": "r1",
        "metric": ["mase", "mase", "mase", "mase", "crps", "crps", "mase", "mase"],
        "task_id": ["AAPL P0", "AAPL P1", "AAPL P0", "AAPL P1", "AAPL P0", "AAPL P1"]
        + ["AAPL P0", "AAPL P1"],
        "ticker": "AAPL",
        "perturbation_id": ["P0", "P1"] * 4,
        "system_id": ["naive", "naive", "arima", "arima", "arima", "arima", "ghost", "ghost"],
        "test_error": [0.9, np.nan, 1.1, 1.2, 3.5, 4.5, np.nan, np.nan],
        "n_windows": [10, 10, 10, 9, 10, 9, 10, 10],
        "inference_time_s": [0.1, 0.2, 1.5, 1.6, 1.5, 1.6, 0.0, 0.0],
    }
)
STUDY = {"horizon": 5, "start": "2022-06-01", "context_length": 40}
LEVELS_JSON = "[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]"


def _constant_columns(metric: str, fingerprint: str) -> dict:
    """fev 0.10's task definition, as the module's docstring states it, for this study."""
    return {
        "dataset_path": f"tsrate/{fingerprint}",
        "horizon": 5,
        "initial_cutoff": "2022-06-01",
        "min_context_length": 40,
        "max_context_length": 40,
        "seasonality": 1,
        "eval_metric": metric.upper(),
        "extra_metrics": "[]",
        "quantile_levels": LEVELS_JSON,
        "id_column": "ticker",
        "timestamp_column": "price_date",
        "target": "close",
        "generate_univariate_targets_from": None,
        "known_dynamic_columns": "[]",
        "past_dynamic_columns": "[]",
        "static_columns": "[]",
        "training_time_s": None,
        "fev_version": "0.10.0",
        "tsrate_version": __version__,
        "tsrate_metric": metric,
    }


def test_the_study_fingerprint_is_the_first_16_hex_digits_of_its_data_keys_sha256() -> None:
    study = {"tickers": ["AAPL"], "start": "2022-01-03", "end": "2022-12-28",
             "context_length": 80, "horizon": 20, "stride": 1, "perturbations": ["P0", "P1"],
             "perturbation_phase": 0, "systems": ["naive"], "seed": 42, "arima_order": [1, 1, 1]}  # fmt: skip
    by_hand = (
        '{"context_length":80,"end":"2022-12-28","horizon":20,"perturbation_phase":0,'
        '"perturbations":["P0","P1"],"start":"2022-01-03","stride":1,"tickers":["AAPL"]}'
    )
    expected = hashlib.sha256(by_hand.encode()).hexdigest()[:16]
    assert study_fingerprint(json.dumps(study)) == expected
    # other systems, seeds or settings on the same data: the same dataset for fev
    other = {**study, "systems": ["naive", "arima", "mine"], "seed": 7, "arima_order": [2, 1, 0]}
    assert study_fingerprint(json.dumps(other)) == expected
    for key, value in (("tickers", ["MSFT"]), ("horizon", 10), ("perturbations", ["P0"]),
                       ("start", "2022-02-01"), ("stride", 5), ("perturbation_phase", 1)):  # fmt: skip
        assert study_fingerprint(json.dumps({**study, key: value})) != expected, key
    assert study_fingerprint(None) == hashlib.sha256(b"").hexdigest()[:16]
    assert study_fingerprint(None) == "e3b0c44298fc1c14"  # sha256 of nothing


def test_fev_summaries_one_frame_per_metric_with_every_system_that_has_an_error() -> None:
    out = fev_summaries(TASKS, STUDY, "abc", {"arima": False})
    assert list(out) == ["crps", "mase"]  # sorted by metric
    mase = out["mase"]
    # ghost has no MASE anywhere: left out; naive keeps its failed task as an empty error
    assert mase["model_name"].tolist() == ["naive", "naive", "arima", "arima"]
    assert mase["dataset_config"].tolist() == ["AAPL P0", "AAPL P1", "AAPL P0", "AAPL P1"]
    np.testing.assert_array_equal(mase["test_error"], [0.9, np.nan, 1.1, 1.2])
    # the task's windows, one value per task as fev reads it: the most any system has
    assert mase["num_forecasts"].tolist() == [10, 10, 10, 10]
    assert mase["inference_time_s"].tolist() == [0.1, 0.2, 1.5, 1.6]
    assert mase["tsrate_run_id"].tolist() == ["r1"] * 4
    assert mase["trained_on_this_dataset"].tolist() == [None, None, False, False]
    for metric, frame in out.items():
        for column, value in _constant_columns(metric, "abc").items():
            assert frame[column].tolist() == [value] * len(frame), (metric, column)
    assert out["crps"]["model_name"].tolist() == ["arima", "arima"]


def test_fev_summaries_without_a_study_leave_the_task_shape_unknown() -> None:
    out = fev_summaries(TASKS[TASKS["metric"] == "crps"], {}, "abc")
    frame = out["crps"]
    for column in ("horizon", "initial_cutoff", "min_context_length", "max_context_length"):
        assert frame[column].isna().all(), column
    assert frame["trained_on_this_dataset"].isna().all()


def test_trained_on_this_dataset_is_unknown_when_no_window_is_known() -> None:
    flags = pd.DataFrame(
        {"system_id": ["a", "a", "b", "b"], "in_training_data": [None, None, False, True]}
    )
    assert trained_on_this_dataset(flags) == {"a": None, "b": True}


def _snapshot(path: Path, *, provenance: bool = True, leakage: bool = True) -> None:
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    con.register("tasks", TASKS)
    con.execute("create table marts.leaderboard_tasks as select * from tasks")
    con.execute(
        "create table published_runs (run_id varchar, published_at timestamp, study json, "
        "row_counts json, parquet_path varchar)"
    )
    # two publications: the export describes the latest one's study
    con.execute(
        "insert into published_runs values "
        "('r0', '2026-01-01 10:00', '{\"horizon\": 9}', '{}', null), "
        "('r1', '2026-01-02 10:00', ?, '{}', null)",
        [json.dumps(STUDY)],
    )
    if provenance:
        con.execute(
            "create table marts.run_provenance as select * from (values "
            "('arima', 'rev1', 'pf1', 'kf1', 'none: fitted on the context', null::timestamp, 'x'),"
            "('naive', 'rev1', 'pf1', 'kf2', 'none: no training', null::timestamp, 'y')) "
            "t(system_id, git_revision, price_rows_fingerprint, partitions_fingerprint, "
            "training_data, training_cutoff, other)"
        )
    if leakage:
        con.execute(
            "create table marts.window_leakage as select * from (values "
            "('arima', false), ('arima', false), ('naive', null)) t(system_id, in_training_data)"
        )
    con.close()


def test_export_fev_writes_one_csv_per_metric_with_fevs_columns_and_the_provenance(
    tmp_path,
) -> None:
    snapshot = tmp_path / "snapshot.duckdb"
    _snapshot(snapshot)
    destination = tmp_path / "out" / "fev"  # made, parents too
    # another reader holds the snapshot open read-only (the export only reads it)
    reader = duckdb.connect(str(snapshot), read_only=True)
    try:
        written = export_fev(snapshot, destination)
    finally:
        reader.close()
    assert written == [destination / "crps.csv", destination / "mase.csv"]
    assert sorted(p.name for p in destination.iterdir()) == ["crps.csv", "mase.csv"]
    mase = pd.read_csv(destination / "mase.csv", keep_default_na=False)
    assert list(mase.columns) == [
        "dataset_path", "dataset_config", "horizon", "initial_cutoff", "min_context_length",
        "max_context_length", "seasonality", "eval_metric", "extra_metrics",
        "quantile_levels", "id_column", "timestamp_column", "target",
        "generate_univariate_targets_from", "known_dynamic_columns", "past_dynamic_columns",
        "static_columns", "model_name", "test_error", "training_time_s", "inference_time_s",
        "trained_on_this_dataset", "num_forecasts", "fev_version", "tsrate_run_id",
        "tsrate_version", "tsrate_metric", "tsrate_git_revision",
        "tsrate_price_rows_fingerprint", "tsrate_partitions_fingerprint",
        "tsrate_training_data", "tsrate_training_cutoff",
    ]  # fmt: skip
    assert set(mase["dataset_path"]) == {fev_dataset_path(STUDY)}
    assert mase["horizon"].tolist() == [5] * 4  # the latest publication's study
    assert mase["model_name"].tolist() == ["naive", "naive", "arima", "arima"]
    assert mase["test_error"].astype(str).tolist() == ["0.9", "", "1.1", "1.2"]
    assert mase["trained_on_this_dataset"].tolist() == ["", "", "False", "False"]
    assert mase["tsrate_partitions_fingerprint"].tolist() == ["kf2", "kf2", "kf1", "kf1"]
    # a second export over an existing folder replaces the files, leaving no partial one
    assert export_fev(snapshot, destination) == written
    assert sorted(p.name for p in destination.iterdir()) == ["crps.csv", "mase.csv"]


def test_export_fev_without_provenance_or_leakage_marts(tmp_path) -> None:
    snapshot = tmp_path / "snapshot.duckdb"
    _snapshot(snapshot, provenance=False, leakage=False)
    export_fev(snapshot, tmp_path)
    crps = pd.read_csv(tmp_path / "crps.csv", keep_default_na=False)
    assert not [c for c in crps.columns if c.startswith("tsrate_git")]
    assert crps["trained_on_this_dataset"].tolist() == ["", ""]


def test_export_fev_names_a_missing_snapshot_or_mart(tmp_path) -> None:
    with pytest.raises(TsrateError, match="no published snapshot"):
        export_fev(tmp_path / "none.duckdb", tmp_path / "out")
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(TsrateError, match="has no leaderboard_tasks mart"):
        export_fev(empty, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- marts/provenance.py --------------------------------------------------------------------


def test_the_price_fingerprint_is_the_sha256_of_the_sorted_rows_to_10_decimals() -> None:
    prices = pd.DataFrame(
        {
            "ticker": ["MSFT", "AAPL", "AAPL"],
            "price_date": pd.to_datetime(["2022-01-03", "2022-01-04", "2022-01-03"]),
            "close": [3.0, 2.123456789012, 1.5],
        }
    )
    text = "AAPL|2022-01-03|1.5\nAAPL|2022-01-04|2.123456789\nMSFT|2022-01-03|3.0\n"
    assert fingerprint_rows(prices) == hashlib.sha256(text.encode()).hexdigest()


def test_training_by_system_says_why_whenever_the_corpus_or_the_cutoff_is_missing() -> None:
    cutoff = pd.Timestamp("2024-01-31")
    systems = pd.DataFrame(
        [
            ("full", "web text", cutoff, None),
            ("no_cutoff", "web text", None, None),
            ("no_corpus", None, cutoff, None),
            ("blank_corpus", "   ", cutoff, None),
            ("explained", None, None, "fitted on the context"),
            ("blank_reason", "web text", None, " "),
        ],
        columns=["system_id", "training_corpus", "training_cutoff", "training_reason"],
    )
    assert training_by_system(systems) == {
        "full": ("web text", cutoff, None),
        "no_cutoff": ("web text", None, UNKNOWN_TRAINING),
        "no_corpus": (None, cutoff, UNKNOWN_TRAINING),
        "blank_corpus": (None, cutoff, UNKNOWN_TRAINING),
        "explained": (None, None, "fitted on the context"),
        "blank_reason": ("web text", None, UNKNOWN_TRAINING),
    }
    assert training_by_system(systems.iloc[:0]) == {}
    assert training_by_system(pd.DataFrame()) == {}
