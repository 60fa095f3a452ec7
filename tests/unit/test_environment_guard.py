"""A test that leaves TSRATE_VERBOSE or TSRATE_ALWAYS_UNIT_TESTS set must not change a later
test's build: `tsrate --verbose` sets TSRATE_VERBOSE=1 in its own process (for dbt's child),
and a test that ran the CLI in process left it in its pytest-xdist worker, where it reached a
later test's `tsrate run` subprocess. tests/conftest.py puts both back after every test.

The two tests run in this order on one worker (``--dist loadfile``): the first leaves the
variables set as the CLI and a careless test would, the second finds them as they were."""

from __future__ import annotations

import os

from tsrate import cli
from tsrate.commands import reading_parsers

#: the variables tests/conftest.py guards (BUILD_PATH_VARIABLES)
BUILD_PATH_VARIABLES = ("TSRATE_ALWAYS_UNIT_TESTS", "TSRATE_VERBOSE")
BEFORE: dict[str, str | None] = {}


def test_a_verbose_cli_call_in_process_sets_the_variable(monkeypatch):
    BEFORE.update({name: os.environ.get(name) for name in BUILD_PATH_VARIABLES})
    monkeypatch.setattr(reading_parsers, "cmd_runs", lambda args: 0)
    assert cli.main(["--verbose", "runs"]) == 0
    assert os.environ["TSRATE_VERBOSE"] == "1"  # left set: no monkeypatch recorded it
    os.environ["TSRATE_ALWAYS_UNIT_TESTS"] = "1"  # as a careless test would


def test_the_next_test_finds_the_variables_as_they_were():
    assert BEFORE, "runs after the test above (file order, one worker)"
    assert {name: os.environ.get(name) for name in BUILD_PATH_VARIABLES} == BEFORE
