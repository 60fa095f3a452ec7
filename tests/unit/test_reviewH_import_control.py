"""Review H: an imported prediction file without the control P0.

APE and PIE compare each perturbation with the system's own forecasts on the control P0
(int_perturbation_sets_derived: a set without P0 has no perturbation effects), so a file
without P0 rows gets WRS and accuracy scores but no APE or PIE row at all: the import
says so, as it says when a file has no quantile columns, instead of the model silently
missing from the APE/PIE tables. A file with P0 rows says nothing of the kind.

Uses tests/unit/conftest.py's ``warehouse`` (AAPL, JPM prices) and ``good`` (the import
study's full grid) fixtures; without baselines, so no system is run."""

from __future__ import annotations

import pytest

from tests.support.import_study import EXTERNAL_ROW, STUDY, seed_with, write_csv
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts


@pytest.fixture(scope="module")
def seed():
    return seed_with(EXTERNAL_ROW)


def said_by_import(warehouse, seed, frame, tmp_path, name):
    said = []
    with connect(warehouse) as con:
        import_forecasts(
            con,
            write_csv(tmp_path, frame, name),
            "external_demo",
            STUDY,
            baselines=False,
            systems_seed=seed,
            progress=said.append,
        )
    return said[-1]


def test_a_file_without_p0_is_told_it_gets_no_ape_or_pie(warehouse, seed, good, tmp_path):
    treated = good[good["perturbation_id"].isin(["P1", "P2"])]
    line = said_by_import(warehouse, seed, treated, tmp_path, "treated.csv")
    assert "no P0 rows" in line
    assert "APE and PIE" in line and "external_demo" in line
    assert "WRS and accuracy only" in line


def test_a_file_with_p0_says_nothing_of_the_control(warehouse, seed, good, tmp_path):
    both = good[good["perturbation_id"].isin(["P0", "P1"])]
    line = said_by_import(warehouse, seed, both, tmp_path, "both.csv")
    assert line.startswith("run ") and "imported external_demo" in line
    assert "P0" not in line.split("rows, ", 1)[1]
