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

import pytest

from tests.support.import_study import (
    EXTERNAL_ROW,
    STUDY,
    STUDY_FLAGS,
    in_process_tsrate,
    rejected,
    seed_with,
    write_csv,
)
from tsrate import TsrateError
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts


@pytest.fixture(scope="module")
def seed():
    return seed_with(EXTERNAL_ROW)


def attempt(warehouse, path, seed, system_id, **kwargs):
    def run():
        with connect(warehouse) as con:
            return import_forecasts(
                con, path, system_id, STUDY, systems_seed=seed, workers=1, **kwargs
            )

    return run


def refused(warehouse, seed, path, system_id, baselines, *fragments) -> None:
    """Importing ``path`` under ``system_id`` is refused in one line naming every fragment
    and the hint ``--system <id>_imported``, and nothing is stored."""
    message = rejected(
        warehouse,
        attempt(warehouse, path, seed, system_id, baselines=baselines),
        *fragments,
        f"--system {system_id}_imported",
        error=TsrateError,
    )
    assert "\n" not in message


@pytest.mark.parametrize("baselines", [True, False])
def test_the_studys_own_baseline_is_refused_with_and_without_baselines(
    warehouse, seed, good, tmp_path, baselines
):
    path = write_csv(tmp_path, good)
    refused(
        warehouse,
        seed,
        path,
        "naive",
        baselines,
        "system 'naive' is one of the study's own systems ['naive']",
        "with or without --no-baselines",
    )


@pytest.mark.parametrize("baselines", [True, False])
def test_a_seed_system_tsrate_runs_is_refused_outside_the_study_too(
    warehouse, seed, good, tmp_path, baselines
):
    assert "arima" not in STUDY.systems
    path = write_csv(tmp_path, good)
    refused(
        warehouse,
        seed,
        path,
        "arima",
        baselines,
        "system 'arima' is a system tsrate forecasts itself",
        "implementation tsrate.systems.arima",
    )


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
    tsrate = in_process_tsrate(warehouse, capsys, monkeypatch)
    path = write_csv(tmp_path, good, "cli.csv")
    for system_id in ("naive", "chronos"):
        result = tsrate(
            "import", str(path), "--system", system_id, *STUDY_FLAGS, "--no-baselines", "--no-build"
        )
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tsrate: error:"), result.stderr
        assert f"--system {system_id}_imported" in lines[0]
