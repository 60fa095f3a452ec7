"""The flows orchestrated by Prefect (a temporary Prefect API of the test session's own):
the forecast flow's choice of executor, and each flow file run alone as its docstring
says (``python flows/<name>.py [ARGUMENT]``; run here with runpy as ``__main__``, so the
flow is orchestrated as a script's would be).

Written for round 10 of the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep10_flows.json). What is pinned: an orchestrated forecast on Prefect's
own task runner computes in the local pool (no partition files: those are the Dask
path's); ``flows/ingest.py PATH`` ingests that file, without one the bundled sample;
``flows/build.py RUN_ID`` builds that run, without one the latest; ``flows/train_vit.py
SYSTEM`` trains that variant, without one both; ``flows/understanding.py`` and
``flows/interpretability.py`` take the configuration named, ``small`` without one. The
runs that would train or build for long are stopped at their first check: a study that
overlaps the training tickers, a dbt target that is not a folder, a busy warehouse.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.support.locks import another_writer
from tests.support.warehouses import rows as _rows
from tsrate import TsrateError
from tsrate.platform.locking import WarehouseBusy

pytestmark = pytest.mark.slow

STUDY = {"study_tickers": "AAPL", "study_start": "2022-09-01", "study_end": "2022-11-30",
         "context_length": 30, "horizon": 5, "systems": "naive", "perturbations": "P0"}  # fmt: skip


def _script(monkeypatch, name: str, *arguments: str) -> None:
    """``python flows/<name>.py ARGUMENTS``, in this process."""
    script = str(Path(__file__).resolve().parents[2] / "flows" / f"{name}.py")
    monkeypatch.setattr(sys, "argv", [script, *arguments])
    runpy.run_path(script, run_name="__main__")


@pytest.fixture
def warehouse(tmp_path, monkeypatch, prefect_harness):
    path = tmp_path / "wh" / "tsrate.duckdb"
    path.parent.mkdir()
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    return path


def test_an_orchestrated_forecast_on_prefects_runner_uses_the_local_pool(warehouse):
    from flows.forecast import forecast_flow
    from tests.support.warehouses import ingest
    from tsrate.robustness.forecast.distributed import partition_folder

    ingest(warehouse, ["AAPL"])
    summary = forecast_flow(overrides=STUDY, workers=1, warehouse=str(warehouse))
    assert summary.computed == 1
    assert not partition_folder(warehouse).exists()  # no partition file: not the Dask path


def test_the_ingest_script_reads_the_file_named_else_the_sample(warehouse, monkeypatch):
    dates = pd.bdate_range("2022-01-03", periods=30)
    csv = warehouse.parent / "prices.csv"
    pd.DataFrame(
        {"date": dates.strftime("%Y-%m-%d"), "ticker": "ZZZZ", "close": range(100, 130)}
    ).to_csv(csv, index=False)
    _script(monkeypatch, "ingest", str(csv))
    assert _rows(warehouse, "select ticker, source, count(*) from raw.prices group by all") == [
        ("ZZZZ", str(csv), 30)
    ]
    _script(monkeypatch, "ingest")
    assert _rows(warehouse, "select count(distinct ticker) from raw.prices where source = "
                 "'skfolio'") == [(20,)]  # fmt: skip


def test_the_build_script_builds_the_run_named_else_the_latest(warehouse, monkeypatch):
    """dbt's target is a file, so each build fails as soon as dbt starts; its log, named
    after the run built, is already written."""
    target = warehouse.parent / "target"
    target.write_text("not a folder")
    monkeypatch.setenv("DBT_TARGET_PATH", str(target))
    logs = warehouse.parent / "logs"
    for arguments, name in ((["run-7"], "run-7"), ([], "latest")):
        with pytest.raises(Exception, match="failed"):
            _script(monkeypatch, "build", *arguments)
        assert [p.name.startswith(f"dbt-build-{name}-") for p in logs.glob("dbt-build-*")] == [
            True
        ], sorted(logs.iterdir())
        for log in logs.glob("dbt-build-*"):
            log.unlink()


def test_the_train_script_trains_the_variant_named_else_both(warehouse, monkeypatch):
    """The default study holds AAPL; training on AAPL is refused before any training, so
    each run stops at its first variant's check (an unknown variant before that)."""
    monkeypatch.setenv("TSRATE_MULTIMODAL_VARS", json.dumps({"vit_training_tickers": ["AAPL"]}))
    with pytest.raises(TsrateError, match="unknown ViT-num-spec system 'vit_bogus'"):
        _script(monkeypatch, "train_vit", "vit_bogus")
    with pytest.raises(TsrateError, match=r"include study companies \['AAPL'\]"):
        _script(monkeypatch, "train_vit")


@pytest.mark.parametrize("suite", ["understanding", "interpretability"])
def test_a_suite_script_takes_the_configuration_named_else_small(warehouse, monkeypatch, suite):
    with pytest.raises(TsrateError, match="unknown configuration 'huge': small or paper"):
        _script(monkeypatch, suite, "huge")
    with another_writer(warehouse):  # a known configuration gets this far
        for arguments in ([], ["paper"]):
            with pytest.raises(WarehouseBusy):
                _script(monkeypatch, suite, *arguments)
