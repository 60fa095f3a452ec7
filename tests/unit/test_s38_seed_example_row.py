"""The example seed row that the unknown-system error and docs/systems.md give has every
column of seeds/systems.csv, so pasting it into the seed works."""

import csv
import datetime as dt
import io
import re
from pathlib import Path

import pytest

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.robustness.blackbox.registry import check_known_system
from tsrate.systems.registry import load_systems_seed

ROOT = Path(__file__).resolve().parents[2]
STUDY = Study(tickers=("AAPL",), start=dt.date(2022, 1, 3), end=dt.date(2022, 6, 30))
SEED_COLUMNS = next(csv.reader(open(ROOT / "seeds" / "systems.csv", encoding="utf-8")))


def _fields(row: str) -> list[str]:
    return next(csv.reader(io.StringIO(row)))


def test_the_unknown_system_error_gives_a_row_with_every_seed_column():
    with pytest.raises(TsrateError) as caught:
        check_known_system("my_model", load_systems_seed(), STUDY)
    (row,) = re.findall(r"`(my_model,[^`]*)`", str(caught.value))
    fields = _fields(row)
    assert len(fields) == len(SEED_COLUMNS), (fields, SEED_COLUMNS)
    assert fields[SEED_COLUMNS.index("implementation")] == ""
    assert fields[SEED_COLUMNS.index("accepted_perturbations")] == "P0 P1 P2 P3"


def test_the_docs_example_row_has_every_seed_column():
    text = (ROOT / "docs" / "systems.md").read_text(encoding="utf-8")
    (row,) = re.findall(r"`(my_model,My model,[^`]*)`", text)
    assert len(_fields(row)) == len(SEED_COLUMNS)
