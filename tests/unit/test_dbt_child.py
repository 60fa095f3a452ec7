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
