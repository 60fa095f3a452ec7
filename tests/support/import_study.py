"""The study the import tests share (unit and integration): two tickers, four months, one
baseline, so a full prediction grid is small; the grid itself, and what the tests compare the
raw tables with. The warehouse and grid fixtures on it are in tests/unit/conftest.py. No test
here."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.support.warehouses import ingest
from tsrate.config import Study
from tsrate.platform.warehouse import connect
from tsrate.systems.registry import load_systems_seed

STUDY = Study.from_mapping(
    dict(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-09-01",
        study_end="2022-12-28",
        context_length=30,
        horizon=5,
        systems=["naive"],
    )
)

#: :data:`STUDY` as the CLI's study flags.
STUDY_FLAGS = ["--tickers", "AAPL,JPM", "--start", "2022-09-01", "--end", "2022-12-28",
               "--context-length", "30", "--horizon", "5", "--systems", "naive"]  # fmt: skip

#: The raw tables an import can write: a rejected import leaves them exactly as they were.
RAW_TABLES = [
    "prices",
    "runs",
    "windows",
    "perturbed_inputs",
    "forecast_partitions",
    "run_partitions",
    "forecasts",
    "forecast_quantiles",
]
#: A systems seed row for an imported system (the seed plus this row: a user adding a model).
EXTERNAL_ROW = dict(
    system_id="external_demo",
    display_name="External demo",
    paper_symbol="",
    modality="numeric",
    family="baseline",
    purpose="time-series",
    architecture="none",
    is_foundation_model="false",
    accepted_perturbations="P0 P1 P2 P3",
    implementation="",
    description="Predictions imported from a file.",
)


def seed_with(row: dict = EXTERNAL_ROW) -> pd.DataFrame:
    """The systems seed as the project ships it, plus ``row`` (a user adding a model)."""
    return pd.concat([load_systems_seed(), pd.DataFrame([row])], ignore_index=True)


def prediction_grid(series) -> pd.DataFrame:
    """The import study's full grid from its series (``load_series(con, STUDY)``): clean
    actuals + 1.0, one row per ticker, window end, perturbation and horizon step."""
    frames = [
        pd.DataFrame(
            {
                "ticker": ticker,
                "window_end_date": pd.to_datetime(s.window_end_dates).strftime("%Y-%m-%d"),
                "perturbation_id": perturbation_id,
                "horizon_step": step,
                "forecast": s.clean[s.end_positions + step] + 1.0,
            }
        )
        for ticker, s in series.items()
        for perturbation_id in STUDY.perturbations
        for step in range(1, STUDY.horizon + 1)
    ]
    return pd.concat(frames, ignore_index=True)


def snapshot(warehouse) -> dict[str, pd.DataFrame]:
    """Every row of :data:`RAW_TABLES`, in a fixed order."""
    with connect(warehouse) as con:
        return {t: con.execute(f"select * from raw.{t} order by all").df() for t in RAW_TABLES}


def write_csv(tmp_path, frame: pd.DataFrame, name="predictions.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def imported(warehouse, frame, tmp_path, name, system_id, study=STUDY, metadata=None):
    """Import ``frame`` (written as ``tmp_path``/``name``) as ``system_id`` into ``study``,
    without baselines, its metadata ``metadata`` (default: ``system_id`` as its display
    name): the import's summary and the lines it said."""
    from tsrate.robustness.blackbox.predictions import import_forecasts

    said: list[str] = []
    with connect(warehouse) as con:
        summary = import_forecasts(
            con,
            write_csv(tmp_path, frame, name),
            system_id,
            study,
            baselines=False,
            progress=said.append,
            metadata=metadata or {"display_name": system_id},
        )
    return summary, said


def rejected(warehouse, attempt, *fragments, error=Exception) -> str:
    """Run ``attempt()`` (an import); it must raise ``error`` naming every fragment and leave
    every raw table as it was. Returns the message."""
    before = snapshot(warehouse)
    with pytest.raises(error) as caught:
        attempt()
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, message
    after = snapshot(warehouse)
    for table in RAW_TABLES:
        pd.testing.assert_frame_equal(before[table], after[table], obj=f"raw.{table}")
    return message


def in_process_tsrate(warehouse, capsys, monkeypatch):  # noqa: ANN001 - pytest's fixtures
    """A ``tsrate(*args)`` that runs the CLI's ``main`` in this process on ``warehouse``, from
    the project folder, and returns its exit code and what it printed as a finished process
    would (``returncode``, ``stdout``, ``stderr``)."""
    from tsrate.cli import main
    from tsrate.config import project_dir

    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.chdir(project_dir())

    def tsrate(*args):
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as stop:
            code = stop.code
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return tsrate


def imported_partition_counts(warehouse, good: pd.DataFrame, tmp_path, column: str) -> list:
    """Import the P0 rows of ``good`` as the external system and return ``column`` of
    raw.forecast_partitions for each partition of that import's run."""
    from tsrate.robustness.blackbox.predictions import import_forecasts
    from tsrate.systems.registry import load_systems_seed

    seed = pd.concat([load_systems_seed(), pd.DataFrame([EXTERNAL_ROW])], ignore_index=True)
    file = write_csv(tmp_path, good[good["perturbation_id"] == "P0"], "p0.csv")
    with connect(warehouse) as con:
        run = import_forecasts(
            con, file, "external_demo", STUDY, baselines=False, systems_seed=seed
        ).run_id
        return con.execute(
            f"select p.{column} from raw.forecast_partitions p join raw.run_partitions r "
            "using (partition_key) where r.run_id = ?",
            [run],
        ).fetchall()


#: the imported system's metadata file, as a user writes it
METADATA = """\
display_name: External (imported)
modality: numeric
family: foundation
purpose: general-purpose
architecture: decoder-only
is_foundation_model: true
accepted_perturbations: [P0, P1, P2, P3]
description: Forecasts made elsewhere.
"""

#: :data:`STUDY_FLAGS` for P0 alone (the import study's flags)
STUDY_P0_FLAGS = [*STUDY_FLAGS, "--perturbations", "P0"]


def external_p0_import(warehouse, tmp_path) -> list[str]:
    """The external system's P0 predictions of :data:`STUDY` (its full grid: clean actuals +
    1.0) in ``tmp_path``/external.csv, its :data:`METADATA` in external.yaml beside; returns
    `tsrate import`'s arguments for them, ``--metadata`` included."""
    from tsrate.robustness.forecast.plan import load_series

    with connect(warehouse) as con:
        grid = prediction_grid(load_series(con, STUDY))
    path = tmp_path / "external.csv"
    grid[grid["perturbation_id"] == "P0"].to_csv(path, index=False)
    (tmp_path / "external.yaml").write_text(METADATA)
    return ["import", str(path), "--system", "external", *STUDY_P0_FLAGS,
            "--metadata", str(tmp_path / "external.yaml")]  # fmt: skip


def import_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dbt_target: Path) -> Path:
    """``tmp_path``/tsrate.duckdb holding the bundled prices of :data:`STUDY`'s tickers, as
    ``TSRATE_WAREHOUSE``, its dbt builds in the session's target (``dbt_target``)."""
    path = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    monkeypatch.setenv("DBT_TARGET_PATH", str(dbt_target))
    ingest(path, list(STUDY.tickers))
    return path
