"""The dbt child started ahead imports what the core Python models import while it waits."""

from __future__ import annotations

import ast

from tsrate.config import project_dir
from tsrate.platform.dbt_child import MODEL_LIBRARIES


def test_the_libraries_imported_ahead_are_those_of_the_core_python_models():
    imported = set()
    for folder in ("intermediate",):
        for path in (project_dir() / "python_models" / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tsrate"):
                    imported.add(node.module)
    assert imported  # the probe found the models
    assert imported == set(MODEL_LIBRARIES)


def test_each_selection_keeps_its_own_compiled_data_tests():
    """The core's full build keeps the cache file it always had; a suite's build (and any
    other selection) gets its own, so alternating builds in one target do not recompile."""
    from tsrate.platform.dbt_child import TEST_CACHE, data_test_cache_file

    assert data_test_cache_file(None) == data_test_cache_file("") == TEST_CACHE
    names = {data_test_cache_file(s) for s in ("tag:understanding", "tag:reasoning", "+ratings")}
    assert len(names) == 3 and TEST_CACHE not in names
    assert data_test_cache_file("tag:reasoning") == data_test_cache_file("tag:reasoning")


def test_only_a_full_build_without_the_override_may_skip_its_unit_tests():
    """A full build keys its unit tests (skips them when they passed with the same key);
    a partial build and TSRATE_ALWAYS_UNIT_TESTS=1 always run them. The integration test
    (test_partial_parse) checks the skip and the rerun on a changed fixture in real builds."""
    from tsrate.platform.dbt_child import ALWAYS_UNIT_TESTS, unit_tests_keyed

    assert ALWAYS_UNIT_TESTS == "TSRATE_ALWAYS_UNIT_TESTS"  # the name docs/operations.md gives
    assert unit_tests_keyed(None, {}) and unit_tests_keyed("", {ALWAYS_UNIT_TESTS: ""})
    assert not unit_tests_keyed(None, {ALWAYS_UNIT_TESTS: "1"})
    assert not unit_tests_keyed("+window_errors", {})
    assert not unit_tests_keyed("tag:reasoning", {ALWAYS_UNIT_TESTS: "1"})


def test_a_run_leaves_a_full_builds_unit_tests_to_tsrate_build_and_ci():
    """``tsrate run`` asks its full build to leave dbt's unit tests out (dbt Labs' advice:
    they check the SQL on fixed inputs; development and CI run them); a partial build and
    TSRATE_ALWAYS_UNIT_TESTS=1 run them all the same, and a build not asked (tsrate build)
    keys them as before. The real builds: tests/integration/test_run_leaves_unit_tests.py."""
    from tsrate.platform.dbt_child import (
        ALWAYS_UNIT_TESTS,
        RUN_LEAVES_UNIT_TESTS,
        unit_tests_left_to_build,
    )

    asked = {RUN_LEAVES_UNIT_TESTS: "1"}
    assert unit_tests_left_to_build(None, asked)
    assert not unit_tests_left_to_build(None, {})
    assert not unit_tests_left_to_build(None, {RUN_LEAVES_UNIT_TESTS: ""})
    assert not unit_tests_left_to_build("+window_errors", asked)
    assert not unit_tests_left_to_build(None, {**asked, ALWAYS_UNIT_TESTS: "1"})


def test_the_pipeline_asks_its_build_to_leave_the_unit_tests():
    """The run's build (flows/pipeline.py) passes unit_tests=False; tsrate build's does not."""
    import inspect

    from flows import pipeline
    from tsrate.commands import pipeline as commands

    assert "unit_tests=False" in inspect.getsource(pipeline)
    assert "unit_tests" not in inspect.getsource(commands)
