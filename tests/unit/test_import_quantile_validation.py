"""Imported predictions with quantile columns (q0.1 … q0.9): stored in raw.forecast_quantiles
beside the point forecasts, and every malformed quantile set rejected with one line that
names the problem, leaving the raw tables exactly as before.

Uses tests/unit/conftest.py's ``warehouse`` (AAPL, JPM prices) and ``good`` (the import
study's full grid, clean actuals + 1) fixtures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.support.import_study import (
    RAW_TABLES,
    STUDY,
    STUDY_FLAGS,
    in_process_tsrate,
    rejected,
    seed_with,
    snapshot,
    write_csv,
)
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import ImportValidationError, import_forecasts

LEVELS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
FILE_COLUMNS = ["q0.1", "q0.2", "q0.3", "q0.4", "q0.5", "q0.6", "q0.7", "q0.8", "q0.9"]
STORED_COLUMNS = ["q10", "q20", "q30", "q40", "q50", "q60", "q70", "q80", "q90"]
#: quantile k of a row = its forecast + OFFSETS[k] (increasing, so they do not cross)
OFFSETS = np.array([-2.0, -1.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.5, 3.0])
EXTERNAL_ROW = dict(
    system_id="external_q",
    display_name="External with quantiles",
    paper_symbol="",
    modality="numeric",
    family="foundation",
    purpose="time-series",
    architecture="none",
    is_foundation_model="false",
    accepted_perturbations="P0 P1 P2 P3",
    implementation="",
    description="Predictions imported from a file, with quantiles.",
)


@pytest.fixture(scope="module")
def seed():
    return seed_with(EXTERNAL_ROW)


@pytest.fixture(scope="module")
def with_quantiles(good):
    frame = good.copy()
    forecast = frame["forecast"].to_numpy(dtype=float)
    for column, offset in zip(FILE_COLUMNS, OFFSETS, strict=True):
        frame[column] = forecast + offset
    return frame


def do_import(warehouse, path, seed, **kwargs):
    with connect(warehouse) as con:
        return import_forecasts(
            con, path, "external_q", STUDY, systems_seed=seed, workers=1, baselines=False, **kwargs
        )


def assert_rejected(warehouse, path, seed, *fragments):
    attempt = lambda: do_import(warehouse, path, seed)  # noqa: E731
    message = rejected(warehouse, attempt, *fragments, error=ImportValidationError)
    assert "\n" not in message and "nothing was stored" in message, message
    return message


def stored_quantiles(warehouse, run_id) -> pd.DataFrame:
    with connect(warehouse) as con:
        return con.execute(
            "select q.system_id, q.partition_key, q.ticker, "
            "strftime(q.window_end_date, '%Y-%m-%d') as window_end_date, q.perturbation_id, "
            "q.horizon_step, " + ", ".join(f"q.{c}" for c in STORED_COLUMNS) + " "
            "from raw.forecast_quantiles q join raw.run_partitions p using (partition_key) "
            "where p.run_id = ? order by all",
            [run_id],
        ).df()


# -- good files -------------------------------------------------------------------------------


def test_quantile_columns_are_stored_beside_the_point_forecasts(
    warehouse, seed, with_quantiles, tmp_path
):
    summary = do_import(warehouse, write_csv(tmp_path, with_quantiles), seed)
    assert summary.forecast_rows == len(with_quantiles)
    stored = stored_quantiles(warehouse, summary.run_id)
    assert set(stored["system_id"]) == {"external_q"}
    key = ["ticker", "window_end_date", "perturbation_id", "horizon_step"]
    merged = with_quantiles.merge(stored, on=key, how="outer", validate="one_to_one")
    assert len(merged) == len(with_quantiles) == len(stored)
    for file_column, stored_column in zip(FILE_COLUMNS, STORED_COLUMNS, strict=True):
        np.testing.assert_array_equal(merged[stored_column], merged[file_column])
    # same partitions as the point forecasts (stored in the same transaction)
    with connect(warehouse) as con:
        points = con.execute(
            "select distinct partition_key from raw.forecasts f "
            "join raw.run_partitions p using (partition_key) where p.run_id = ? "
            "and f.system_id = 'external_q'",
            [summary.run_id],
        ).df()
    assert set(points["partition_key"]) == set(stored["partition_key"])


def test_same_points_with_and_without_quantiles_are_different_partitions(
    warehouse, seed, good, with_quantiles, tmp_path
):
    with_q = do_import(warehouse, write_csv(tmp_path, with_quantiles, "a.csv"), seed)
    again = do_import(warehouse, write_csv(tmp_path, with_quantiles, "b.csv"), seed)
    assert again.reused == again.partitions  # identical quantiles: reused
    without = do_import(warehouse, write_csv(tmp_path, good, "c.csv"), seed)
    assert without.computed == without.partitions  # quantiles dropped: not the same partitions
    assert stored_quantiles(warehouse, without.run_id).empty
    assert len(stored_quantiles(warehouse, with_q.run_id)) == len(with_quantiles)


def test_parquet_quantile_columns(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.copy()
    frame["forecast"] = frame["forecast"] + 0.125  # new points, so a new partition
    frame[FILE_COLUMNS] = frame[FILE_COLUMNS] + 0.125
    path = tmp_path / "predictions.parquet"
    frame.to_parquet(path, index=False)
    summary = do_import(warehouse, path, seed)
    stored = stored_quantiles(warehouse, summary.run_id)
    assert len(stored) == len(frame)
    np.testing.assert_allclose(
        np.sort(stored["q90"].to_numpy()), np.sort(frame["q0.9"].to_numpy()), rtol=0, atol=0
    )


def test_crossing_within_the_tolerance_is_stored_as_given(
    warehouse, seed, with_quantiles, tmp_path
):
    frame = with_quantiles.copy()
    frame["forecast"] = frame["forecast"] + 0.25
    frame[FILE_COLUMNS] = frame[FILE_COLUMNS] + 0.25
    frame.loc[0, "q0.5"] = frame.loc[0, "q0.4"]
    frame.loc[0, "q0.4"] = frame.loc[0, "q0.5"] * (1 + 1e-12)  # above q0.5 by float noise
    summary = do_import(warehouse, write_csv(tmp_path, frame), seed)
    stored = stored_quantiles(warehouse, summary.run_id)
    row = stored[
        (stored["ticker"] == frame.loc[0, "ticker"])
        & (stored["window_end_date"] == frame.loc[0, "window_end_date"])
        & (stored["perturbation_id"] == frame.loc[0, "perturbation_id"])
        & (stored["horizon_step"] == frame.loc[0, "horizon_step"])
    ]
    assert row["q40"].iloc[0] > row["q50"].iloc[0]  # not re-sorted


# -- rejections: each a one-line error, nothing stored ----------------------------------------


def test_non_numeric_quantile(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.astype({"q0.3": object})
    frame.loc[3, "q0.3"] = "abc"
    assert_rejected(
        warehouse, write_csv(tmp_path, frame), seed, "line 5", "quantile is not a number",
        "q0.3 = 'abc'",
    )  # fmt: skip


def test_missing_quantile_value(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.copy()
    frame.loc[[0, 7], "q0.8"] = np.nan
    assert_rejected(
        warehouse, write_csv(tmp_path, frame), seed, "lines 2, 9",
        "quantile is missing or not finite", "give all nine quantiles on every row",
    )  # fmt: skip


def test_quantile_too_large(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.copy()
    frame.loc[1, "q0.9"] = 1e12
    assert_rejected(warehouse, write_csv(tmp_path, frame), seed, "line 3", "quantile outside")


def test_partial_set_of_levels(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.drop(columns=["q0.1", "q0.9"])
    assert_rejected(
        warehouse, write_csv(tmp_path, frame), seed, "partial set of quantile columns",
        "without ['q0.1', 'q0.9']", "give all nine",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("rename", "named"),
    [
        ({"q0.5": "q0.55"}, "['q0.55']"),
        ({"q0.5": "q50"}, "['q50']"),
        ({"q0.5": "quantile_0.5"}, "['quantile_0.5']"),
    ],
)
def test_levels_off_the_grid(warehouse, seed, with_quantiles, tmp_path, rename, named):
    frame = with_quantiles.rename(columns=rename)
    message = assert_rejected(
        warehouse, write_csv(tmp_path, frame), seed, named, "not at the expected levels",
        "q0.1, q0.2",
    )  # fmt: skip
    assert "partial set" in message  # q0.5 itself is then missing


def test_extra_level_beside_the_full_grid(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.assign(**{"q0.05": with_quantiles["q0.1"] - 1})
    message = assert_rejected(
        warehouse, write_csv(tmp_path, frame), seed, "['q0.05']", "not at the expected levels"
    )
    assert "partial" not in message


def test_crossing_quantiles(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.copy()
    frame.loc[4, "q0.2"] = frame.loc[4, "q0.3"] + 0.01
    assert_rejected(
        warehouse, write_csv(tmp_path, frame), seed, "line 6", "quantiles cross",
        "q0.2 = ", "> q0.3 = ", "at most the next level's",
    )  # fmt: skip


def test_parquet_quantile_column_of_booleans(warehouse, seed, with_quantiles, tmp_path):
    frame = with_quantiles.copy()
    frame["q0.7"] = True
    path = tmp_path / "predictions.parquet"
    frame.to_parquet(path, index=False)
    assert_rejected(warehouse, path, seed, "column 'q0.7' is boolean")


def test_export_manifest_names_the_quantile_columns():
    from tsrate.robustness.blackbox import export, validation

    assert list(validation.QUANTILE_COLUMNS) == FILE_COLUMNS
    assert export.QUANTILE_COLUMNS is validation.QUANTILE_COLUMNS


def test_cli_import_predictions_with_a_manifest(
    warehouse, with_quantiles, tmp_path, capsys, monkeypatch
):
    """Through `tsrate export-inputs` and `tsrate import-predictions --manifest` (the CLI's
    main in this process): crossing quantiles are one `tsrate: error:` line and store
    nothing; the good file stores them."""
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    exported = tsrate("export-inputs", str(tmp_path / "export"), *STUDY_FLAGS)
    assert exported.returncode == 0, exported.stderr
    frame = with_quantiles.copy()
    frame[["forecast", *FILE_COLUMNS]] += 0.5  # points no other test imported
    crossed = frame.copy()
    crossed.loc[2, "q0.7"] = crossed.loc[2, "q0.8"] + 1.0
    args = ["--system", "cli_q", "--manifest", str(tmp_path / "export"), "--no-baselines",
            "--no-build", "--metadata", "family=foundation"]  # fmt: skip
    before = snapshot(warehouse)
    bad = tsrate("import-predictions", str(write_csv(tmp_path, crossed, "bad.csv")), *args)
    assert bad.returncode == 2, bad.stderr
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tsrate: error:"), bad.stderr
    assert "line 4" in lines[0] and "quantiles cross" in lines[0], bad.stderr
    after = snapshot(warehouse)
    for table in RAW_TABLES:
        pd.testing.assert_frame_equal(before[table], after[table], obj=f"raw.{table}")

    good = tsrate("import-predictions", str(write_csv(tmp_path, frame, "good.csv")), *args)
    assert good.returncode == 0, good.stderr
    with connect(warehouse) as con:
        stored = con.execute(
            "select count(*), sum(q70) from raw.forecast_quantiles where system_id = 'cli_q'"
        ).fetchone()
    assert stored[0] == len(frame)
    np.testing.assert_allclose(stored[1], frame["q0.7"].sum(), rtol=1e-12)
