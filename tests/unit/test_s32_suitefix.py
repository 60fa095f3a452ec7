"""Newcomer-trial fixes of the three suites: empty plans, hints and refusals."""

from __future__ import annotations

import dataclasses

import pytest

from tsrate import TsrateError
from tsrate.suites.understanding.suite import SMALL, run_suite


@pytest.mark.parametrize(
    ("datasets", "tasks", "need"),
    [
        (("correlation",), ("matching_cross",), "matching_cross needs 4 or more"),
        (("trend",), ("search",), "search needs a position set"),
    ],
)
def test_empty_understanding_plan_is_refused_before_storing(tmp_path, datasets, tasks, need):
    config = dataclasses.replace(
        SMALL, datasets=datasets, tasks=tasks, train=2, validation=1, test=2
    )
    warehouse = tmp_path / "tsrate.duckdb"
    with pytest.raises(TsrateError) as err:
        run_suite(warehouse, config, [], progress=lambda _: None)
    message = str(err.value)
    assert "\n" not in message
    assert "gives no prompts" in message and need in message
    assert not warehouse.exists()
