"""The interpretability suite's raw tables (tsrate.suites.interpretability.storage), written
to a temporary DuckDB warehouse from hand-made datasets and training results and read back
cell by cell: the true edges (a repeated edge's weights summed), the variant row, the run
row (means, device, loss history), the per-series scores in train-then-test order, the
predictions at their time steps, the long attention rows (alpha's lag 1 = most recent,
DA-RNN's encoder attention at source -1, TCDF's picks as 0/1), the suite run's plan and
units, and a non-finite result refused with nothing stored.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; the survivors are in
tests/planted/sweep9_suites.json): a response filed under the wrong run, series, step or
lag changes a checked row here.
"""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest

from tsrate.platform.raw_schema import create_raw_tables
from tsrate.suites.interpretability import storage
from tsrate.suites.interpretability.datasets import Dataset
from tsrate.suites.interpretability.models import Attention
from tsrate.suites.interpretability.training import TrainResult


@pytest.fixture
def con(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    create_raw_tables(con)
    yield con
    con.close()


def _result(attention: Attention, n_series: int = 2, test_start: int = 40) -> TrainResult:
    """Three test steps; per-series MSEs whose mean and median differ for three series."""
    steps = 3
    targets = np.arange(steps * n_series, dtype=float).reshape(steps, n_series)
    return TrainResult(
        train_mse=np.array([1.0, 2.0, 6.0][:n_series]),
        test_mse=np.array([2.0, 3.0, 10.0][:n_series]),
        loss_history=[0.5, 0.25],
        test_targets=targets,
        test_predictions=targets + 0.5,
        test_start=test_start,
        attention=attention,
        seconds=1.5,
    )


def test_a_variant_and_its_true_edges(con) -> None:
    edges = ((0, 1, 2, 0.25), (0, 1, 2, 0.5), (1, 0, 3, 1.0), (0, 1, 5, 0.25))
    dataset = Dataset(4, np.zeros((7, 2)), edges, {"seed": 3, "length": 100})
    storage.store_variant(con, "vk", "d4", dataset)
    row = con.execute(
        "select variant_key, variant_id, dataset_id, n_series, length, params "
        "from raw.interp_variants"
    ).fetchone()
    assert row[:5] == ("vk", "d4", 4, 2, 100)
    assert row[5] == '{"length": 100, "seed": 3}'  # keys sorted
    truth = con.execute("select * from raw.interp_truth order by 2, 3, 4").fetchall()
    assert truth == [("vk", 0, 1, 2, 0.75), ("vk", 0, 1, 5, 0.25), ("vk", 1, 0, 3, 1.0)]
    # stored once: a second call changes nothing
    storage.store_variant(con, "vk", "other", Dataset(4, np.zeros((7, 2)), edges[:1], {}))
    assert con.execute("select variant_id from raw.interp_variants").fetchall() == [("d4",)]
    assert con.execute("select count(*) from raw.interp_truth").fetchone() == (3,)
    assert storage.stored_variants(con) == {"vk"}
    # no length parameter: the series' own length; no edges: no truth rows
    storage.store_variant(con, "v1", "d1", Dataset(1, np.zeros((9, 3)), (), {}))
    assert con.execute(
        "select length, n_series from raw.interp_variants where variant_key = 'v1'"
    ).fetchone() == (9, 3)
    assert con.execute(
        "select count(*) from raw.interp_truth where variant_key = 'v1'"
    ).fetchone() == (0,)


def test_attention_rows_per_kind() -> None:
    beta = np.array([[0.1, 0.9], [0.6, 0.4]])
    alpha = np.arange(2 * 2 * 3, dtype=float).reshape(2, 2, 3)
    picks = np.array([[True, False], [False, True]])
    frame = storage.attention_frame("rk", _result(Attention(beta, alpha, "series", picks)))
    assert list(frame.columns) == [
        "run_key",
        "attention",
        "target_index",
        "source_index",
        "lag",
        "value",
    ]
    assert (frame["run_key"] == "rk").all()
    b = frame[frame["attention"] == "beta"]
    assert list(zip(b["target_index"], b["source_index"], b["value"], strict=True)) == [
        (0, 0, 0.1),
        (0, 1, 0.9),
        (1, 0, 0.6),
        (1, 1, 0.4),
    ]
    assert b["lag"].isna().all()
    a = frame[frame["attention"] == "alpha"]
    expected = [(t, s, k + 1, alpha[t, s, k]) for t in range(2) for s in range(2) for k in range(3)]
    got = list(zip(a["target_index"], a["source_index"], a["lag"], a["value"], strict=True))
    assert got == expected
    p = frame[frame["attention"] == "tcdf_picks"]
    assert list(p["value"]) == [1.0, 0.0, 0.0, 1.0] and p["lag"].isna().all()
    assert list(zip(p["target_index"], p["source_index"], strict=True)) == [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
    ]
    # DA-RNN: attention over encoder states, source -1; no alpha, no picks: beta only
    enc = storage.attention_frame("rk", _result(Attention(beta, alpha[:, :1, :], "encoder")))
    a = enc[enc["attention"] == "alpha"]
    assert set(a["source_index"]) == {-1} and list(a["lag"]) == [1, 2, 3, 1, 2, 3]
    assert set(enc["attention"]) == {"beta", "alpha"}
    assert set(storage.attention_frame("rk", _result(Attention(beta, None)))["attention"]) == {
        "beta"
    }


def test_a_run_is_stored_whole(con) -> None:
    beta = np.array([[0.5, 0.5], [0.25, 0.75]])
    result = _result(Attention(beta, None, picks=np.array([[1, 0], [0, 1]])), n_series=3)
    settings = {"hidden": 4, "device": "cuda"}
    storage.store_run(con, "rk", "vk", "tcdf", 7, "small", settings, result)
    row = con.execute("select * exclude (finished_at) from raw.interp_runs").fetchone()
    assert row == (
        "rk",
        "vk",
        "tcdf",
        7,
        "small",
        json.dumps(settings, sort_keys=True),
        "cuda",
        3,
        3.0,  # mean of the train MSEs 1, 2, 6 (median 2)
        5.0,  # mean of the test MSEs 2, 3, 10 (median 3)
        [0.5, 0.25],
        1.5,
    )
    scores = con.execute(
        "select run_key, series_index, split, mse from raw.interp_scores order by split, 2"
    ).fetchall()
    assert scores == [
        ("rk", 0, "test", 2.0),
        ("rk", 1, "test", 3.0),
        ("rk", 2, "test", 10.0),
        ("rk", 0, "train", 1.0),
        ("rk", 1, "train", 2.0),
        ("rk", 2, "train", 6.0),
    ]
    predictions = con.execute(
        "select run_key, series_index, time_index, actual, prediction "
        "from raw.interp_predictions order by 2, 3"
    ).fetchall()
    # targets[step, series] = 3 * step + series, at time test_start + step
    assert predictions == [
        ("rk", s, 40 + k, 3.0 * k + s, 3.0 * k + s + 0.5) for s in range(3) for k in range(3)
    ]
    attention = con.execute(
        "select attention, count(*), sum(value) from raw.interp_attention group by 1 order by 1"
    ).fetchall()
    assert attention == [("beta", 4, 2.0), ("tcdf_picks", 4, 2.0)]
    assert storage.stored_runs(con) == {"rk"}
    # no device in the settings: cpu
    storage.store_run(con, "rk2", "vk", "tcdf", 8, "small", {"hidden": 4}, result)
    assert con.execute("select device from raw.interp_runs where run_key = 'rk2'").fetchone() == (
        "cpu",
    )


@pytest.mark.parametrize("where", ["train_mse", "test_mse", "test_predictions"])
def test_a_non_finite_result_is_refused_and_nothing_is_stored(con, where) -> None:
    result = _result(Attention(np.eye(2), None))
    bad = getattr(result, where).copy()
    bad.flat[-1] = np.nan if where != "test_mse" else np.inf
    setattr(result, where, bad)
    with pytest.raises(ValueError, match="tcdf seed 3 produced non-finite predictions"):
        storage.store_run(con, "rk", "vk", "tcdf", 3, "small", {}, result)
    for table in ("interp_runs", "interp_scores", "interp_predictions", "interp_attention"):
        assert con.execute(f"select count(*) from raw.{table}").fetchone() == (0,)


def test_the_plan_and_the_units_of_a_suite_run(con) -> None:
    plan = pd.DataFrame(
        {
            "parameter_value": [None, 0.5],
            "variant_key": ["a", "b"],
            "study": ["main", "sensitivity_f"],
            "parameter": [None, "f"],
        }
    )
    storage.start_suite_run(con, "interp-1", "small", {"length": 5}, plan, 12)
    assert con.execute(
        "select suite, suite_run_id, status, config, details from raw.suite_runs"
    ).fetchone() == (
        "interpretability",
        "interp-1",
        "running",
        json.dumps({"length": 5}),
        json.dumps({"config_name": "small", "n_units": 12}, sort_keys=True),
    )
    rows = con.execute("select * from raw.interp_suite_run_variants order by 2").fetchall()
    assert rows == [
        ("interp-1", "a", "main", None, None),
        ("interp-1", "b", "sensitivity_f", "f", 0.5),
    ]
    storage.link_unit(con, "interp-1", "rk", reused=True)
    storage.link_unit(con, "interp-1", "rk", reused=False)  # linked once: the first stays
    storage.link_unit(con, "interp-1", "rk2", reused=False)
    assert con.execute("select * from raw.interp_suite_run_units order by 2").fetchall() == [
        ("interp-1", "rk", True),
        ("interp-1", "rk2", False),
    ]
