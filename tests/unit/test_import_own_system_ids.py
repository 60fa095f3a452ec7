"""An import never fills a system id whose forecasts tsrate makes itself.

``tsrate import FILE --system naive --no-baselines`` was accepted: the run held only the
imported rows, under the baseline's id. The marts rate a study's newest run per system, so
the imported predictions silently became "naive" in the study's marts, until the next
``tsrate run`` made them naive's own forecasts again (and a seed system outside the study,
such as arima, took imported rows even with the baselines). docs/systems.md said the model is
a seed row with an *empty* implementation or a registration. Now an id of the study's
systems, or of a seed row with an implementation, is refused with or without
``--no-baselines``, in one line with a hint, and nothing is stored. Real warehouse, the
real seed, the real import and the CLI's ``main`` in this process.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.support.import_study import EXTERNAL_ROW, STUDY, rejected, write_csv
from tsrate import TsrateError
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts
from tsrate.systems.registry import load_systems_seed


@pytest.fixture(scope="module")
def seed():
    seed = load_systems_seed()
    return pd.concat([seed, pd.DataFrame([EXTERNAL_ROW])], ignore_index=True)


def attempt(warehouse, path, seed, system_id, **kwargs):
    def run():
        with connect(warehouse) as con:
            return import_forecasts(
                con, path, system_id, STUDY, systems_seed=seed, workers=1, **kwargs
            )

    return run


@pytest.mark.parametrize("baselines", [True, False])
def test_the_studys_own_baseline_is_refused_with_and_without_baselines(
    warehouse, seed, good, tmp_path, baselines
):
    path = write_csv(tmp_path, good)
    message = rejected(
        warehouse,
        attempt(warehouse, path, seed, "naive", baselines=baselines),
        "system 'naive' is one of the study's own systems ['naive']",
        "with or without --no-baselines",
        "--system naive_imported",
        error=TsrateError,
    )
    assert "\n" not in message


@pytest.mark.parametrize("baselines", [True, False])
def test_a_seed_system_tsrate_runs_is_refused_outside_the_study_too(
    warehouse, seed, good, tmp_path, baselines
):
    assert "arima" not in STUDY.systems
    path = write_csv(tmp_path, good)
    message = rejected(
        warehouse,
        attempt(warehouse, path, seed, "arima", baselines=baselines),
        "system 'arima' is a system tsrate forecasts itself",
        "implementation tsrate.systems.arima",
        "--system arima_imported",
        error=TsrateError,
    )
    assert "\n" not in message


def test_registering_metadata_under_the_studys_system_is_refused_without_baselines(
    warehouse, seed, good, tmp_path
):
    own = dataclasses.replace(STUDY, systems=("naive", "mine"))
    path = write_csv(tmp_path, good)

    def run():
        with connect(warehouse) as con:
            return import_forecasts(
                con, path, "mine", own, systems_seed=seed, workers=1, baselines=False,
                metadata={"display_name": "Mine"},
            )  # fmt: skip

    rejected(warehouse, run, "system 'mine' is one of the study's own systems", error=TsrateError)


def test_a_seed_row_without_implementation_still_imports_alone(warehouse, seed, good, tmp_path):
    path = write_csv(tmp_path, good)
    summary = attempt(warehouse, path, seed, "external_demo", baselines=False)()
    assert summary.baselines is None and summary.forecast_rows == len(good)


def test_the_cli_refusal_is_one_line(warehouse, good, tmp_path, capsys, monkeypatch):
    from tsrate.cli import main
    from tsrate.config import project_dir

    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.chdir(project_dir())
    flags = ["--tickers", "AAPL,JPM", "--start", "2022-09-01", "--end", "2022-12-28",
             "--context-length", "30", "--horizon", "5", "--systems", "naive"]  # fmt: skip
    path = write_csv(tmp_path, good, "cli.csv")

    def tsrate(*args):
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as stop:
            code = stop.code
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    for system_id in ("naive", "chronos"):
        result = tsrate(
            "import", str(path), "--system", system_id, *flags, "--no-baselines", "--no-build"
        )
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tsrate: error:"), result.stderr
        assert f"--system {system_id}_imported" in lines[0]
