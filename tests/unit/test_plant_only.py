"""The planted-error runner refuses ids it does not know instead of running nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.planted import plant

SPEC = Path(plant.__file__).parent / "review13.json"


def _main(monkeypatch, tmp_path, *only: str) -> None:
    argv = ["plant.py", str(SPEC), "--repo", str(tmp_path), "--only", *only]
    monkeypatch.setattr(sys, "argv", argv)
    plant.main()


def test_an_unknown_id_is_refused_before_anything_runs(monkeypatch, tmp_path):
    with pytest.raises(SystemExit, match="no entry with id nope"):
        _main(monkeypatch, tmp_path, "nope")


def test_a_comma_joined_list_is_read_as_ids(monkeypatch, tmp_path):
    known = "review13_reading_first_tied_row"
    with pytest.raises(SystemExit, match="no entry with id also-nope in") as refused:
        _main(monkeypatch, tmp_path, f"{known},also-nope")
    assert known not in str(refused.value)  # the known id was split off and found
