"""The build's own data-test runner judges a test as dbt's would.

``tsrate-build`` runs the compiled data tests itself, in one DuckDB connection, instead of
through dbt's test materialization; every number in the warehouse is trusted because
these tests pass. The expectations here are dbt's documented rules, restated by hand:

- the test SQL is wrapped as dbt's ``default__get_test_sql`` wraps it: ``fail_calc`` over
  the test's rows (after its ``limit``), compared with ``warn_if`` and ``error_if``;
- the status is dbt's ``TestRunner`` rule: ``fail`` when the severity is ``error`` and the
  ``error_if`` condition holds, else ``warn`` when the ``warn_if`` condition holds, else
  ``pass``; a test whose SQL does not run is an ``error``; only fails and errors fail the
  build (a warning is printed and counted apart).

The test nodes are plain stand-ins carrying the attributes of dbt's test nodes that the
runner reads; the warehouse is a real DuckDB file.
"""

from __future__ import annotations

import json
import os
import types
from pathlib import Path

import duckdb
import pytest

from tsrate.platform import dbt_child


def node(name, sql, *, severity="ERROR", warn_if="!= 0", error_if="!= 0", fail_calc="count(*)",
         limit=None):  # fmt: skip
    config = types.SimpleNamespace(
        severity=severity, warn_if=warn_if, error_if=error_if, fail_calc=fail_calc, limit=limit
    )
    return types.SimpleNamespace(
        name=name,
        unique_id=f"test.project.{name}",
        compiled_code=sql,
        config=config,
        original_file_path=f"models/{name}.yml",
    )


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table t as select range as n from range(7)")  # n = 0..6
    con.close()
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path))
    monkeypatch.delenv("DBT_TARGET_PATH", raising=False)
    return path


def results(tmp_path):
    path = tmp_path / "target" / dbt_child.DATA_TEST_RESULTS
    return {r["unique_id"].rsplit(".", 1)[1]: r for r in json.loads(path.read_text())["results"]}


def test_the_wrapper_counts_the_rows_after_the_limit_and_compares_both_thresholds(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        five = "select n from t where n >= 2"  # 5 rows
        row = con.execute(dbt_child._test_sql(node("a", five))).fetchone()
        assert row == (5, True, True)
        row = con.execute(dbt_child._test_sql(node("b", five, warn_if="> 4", error_if="> 5")))
        assert row.fetchone() == (5, True, False)
        row = con.execute(dbt_child._test_sql(node("c", five, limit=3))).fetchone()
        assert row == (3, True, True)
        summed = node("d", five, fail_calc="sum(n)", warn_if=">= 20", error_if="> 20")
        assert con.execute(dbt_child._test_sql(summed)).fetchone() == (20, True, False)
        none = con.execute(dbt_child._test_sql(node("e", "select n from t where n > 9")))
        assert none.fetchone() == (0, False, False)
    finally:
        con.close()


def test_each_status_follows_dbts_rule_and_only_fails_and_errors_count(warehouse, tmp_path, capsys):
    nodes = [
        node("passes", "select n from t where n > 9"),
        node("fails", "select n from t where n < 2"),  # 2 rows, severity error
        node("warns_by_severity", "select n from t where n < 3", severity="warn"),
        node("warns_below_error_if", "select n from t", warn_if="> 5", error_if="> 7"),
        node("passes_below_warn_if", "select n from t", warn_if="> 7", error_if="> 7"),
        node("errors", "select no_such_column from t"),
        node("warn_severity_quiet", "select n from t where n > 9", severity="Warn"),
    ]
    errored = dbt_child.run_data_tests(nodes, str(warehouse))
    assert errored == 2  # "fails" and "errors"; warnings never fail the build
    got = results(tmp_path)
    assert {k: v["status"] for k, v in got.items()} == {
        "passes": "pass",
        "fails": "fail",
        "warns_by_severity": "warn",
        "warns_below_error_if": "warn",
        "passes_below_warn_if": "pass",
        "errors": "error",
        "warn_severity_quiet": "pass",
    }
    assert got["fails"]["failures"] == 2 and got["warns_by_severity"]["failures"] == 3
    assert got["warns_below_error_if"]["failures"] == 7 and got["errors"]["failures"] is None
    assert got["passes"]["failures"] == 0
    out = capsys.readouterr().out
    assert "FAIL fails: 2 failing rows (models/fails.yml)" in out
    assert "WARN warns_by_severity: 3 failing rows" in out
    assert "ERROR errors:" in out
    assert "PASS=3 WARN=2 FAIL=2" in out  # a failure and an error both count as FAIL


def test_no_failure_means_zero_errored(warehouse):
    assert (
        dbt_child.run_data_tests([node("ok", "select n from t where n < 0")], str(warehouse)) == 0
    )
    assert dbt_child.run_data_tests([], str(warehouse)) == 0


def test_a_partial_selection_keeps_only_tests_whose_parents_are_all_selected():
    assert dbt_child._selection(None, []) == []
    assert dbt_child._selection("+ratings", []) == [
        "--select", "+ratings", "--indirect-selection", "cautious"
    ]  # fmt: skip
    assert dbt_child._selection("", ["a", "b"]) == ["--exclude", "a", "b"]
    assert dbt_child._selection("x", ["a"]) == [
        "--select", "x", "--indirect-selection", "cautious", "--exclude", "a"
    ]  # fmt: skip


def item(kind, name, status, *, language=None, seconds=None, message=None):
    return types.SimpleNamespace(
        node=types.SimpleNamespace(
            resource_type=types.SimpleNamespace(value=kind), name=name, language=language
        ),
        status=types.SimpleNamespace(value=status),
        message=message,
        execution_time=seconds,
    )


def test_the_build_summary_counts_failures_and_the_python_models_own_time(capsys):
    result = types.SimpleNamespace(
        results=[
            item("model", "a", "success", language="python", seconds=1.25),
            item("model", "b", "success", language="sql", seconds=4.0),
            item("model", "c", "error", language="python", seconds=0.5, message="boom\nmore"),
            item("seed", "s", "success"),
            item("unit_test", "u", "fail", message=None),
            item("model", "d", "runtime error", language="sql", seconds=2.0, message="x"),
            item("model", "e", "skipped", language="python", seconds=None),
        ]
    )
    failed, python = dbt_child._summarise_build(result)
    assert failed == 3 and python == pytest.approx(1.75)
    out = capsys.readouterr().out.splitlines()
    assert f"{dbt_child.SUMMARY} ERROR model c: boom" in out
    assert f"{dbt_child.SUMMARY} FAIL unit_test u: " in out
    assert f"{dbt_child.SUMMARY} RUNTIME ERROR model d: x" in out
    assert out[-1] == (
        f"{dbt_child.SUMMARY} built 5 models, 1 seeds, 1 unit_tests "
        "(3 failed; Python models' own time 1.8s)"
    )
    failed, python = dbt_child._summarise_build(
        types.SimpleNamespace(results=[item("unit_test", "u", "pass")]), "beside, ran"
    )
    assert (failed, python) == (0, 0.0)
    assert (
        capsys.readouterr().out.strip()
        == f"{dbt_child.SUMMARY} beside, ran 1 unit_tests (0 failed)"
    )


def test_the_target_folder_is_dbts_relative_to_the_project(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path))
    monkeypatch.delenv("DBT_TARGET_PATH", raising=False)
    assert dbt_child._target_path() == tmp_path / "target"
    monkeypatch.setenv("DBT_TARGET_PATH", "elsewhere")
    assert dbt_child._target_path() == tmp_path / "elsewhere"
    monkeypatch.delenv("TSRATE_PROJECT_DIR")
    assert str(dbt_child._target_path()) == "elsewhere"  # the working folder's


# -- the compiled tests' cache: reused only while nothing they depend on changed ---------------


def manifest(**changes):
    """A stand-in for the parts of dbt's Manifest the cache key reads."""

    def test_node(uid, sql):
        return types.SimpleNamespace(
            unique_id=uid,
            raw_code=sql,
            test_metadata=types.SimpleNamespace(to_dict=lambda: {"name": "not_null"}),
            config=types.SimpleNamespace(to_dict=lambda: {"severity": "ERROR"}),
            depends_on=types.SimpleNamespace(nodes=["model.p.m"]),
            relation_name=None,
            compiled_code=None,
        )

    nodes = {
        "test.p.a": test_node("test.p.a", changes.get("sql_a", "{{ test_not_null() }}")),
        "test.p.b": test_node("test.p.b", "select 1"),
        "model.p.m": types.SimpleNamespace(relation_name=changes.get("relation", '"w"."m"')),
    }
    macros = {"macro.p.x": types.SimpleNamespace(macro_sql=changes.get("macro", "select 2"))}
    state = types.SimpleNamespace(
        vars_hash=types.SimpleNamespace(checksum=changes.get("vars", "v1")),
        project_hashes={"p": changes.get("project", "h1")},
    )
    sources = {"source.p.raw.prices": types.SimpleNamespace(relation_name='"w"."raw"."prices"')}
    return types.SimpleNamespace(nodes=nodes, macros=macros, sources=sources, state_check=state)


WANTED = ["test.p.a", "test.p.b"]


@pytest.mark.parametrize(
    "change",
    [{"sql_a": "{{ test_unique() }}"}, {"relation": '"w"."m2"'}, {"macro": "select 3"},
     {"vars": "v2"}, {"project": "h2"}],
)  # fmt: skip
def test_the_cache_key_moves_with_each_input_of_the_compiled_sql(change):
    assert dbt_child._cache_key(manifest(), WANTED) == dbt_child._cache_key(manifest(), WANTED)
    assert dbt_child._cache_key(manifest(**change), WANTED) != dbt_child._cache_key(
        manifest(), WANTED
    )
    assert dbt_child._cache_key(manifest(), WANTED[:1]) != dbt_child._cache_key(manifest(), WANTED)


def test_cached_tests_are_reused_only_with_the_same_key_and_every_wanted_test(tmp_path, capsys):
    cache = tmp_path / "cache.json"
    assert dbt_child._cached_tests(manifest(), WANTED, cache) is None  # no file
    cache.write_text("not json")
    assert dbt_child._cached_tests(manifest(), WANTED, cache) is None
    key = dbt_child._cache_key(manifest(), WANTED)
    cache.write_text(json.dumps({"key": key, "sql": {"test.p.a": "select 1 as a"}}))
    assert dbt_child._cached_tests(manifest(), WANTED, cache) is None  # b missing
    sql = {"test.p.a": "select 1 as a", "test.p.b": "select 2 as b", "test.p.c": "x"}
    cache.write_text(json.dumps({"key": key, "sql": sql}))
    fresh = manifest()
    nodes = dbt_child._cached_tests(fresh, WANTED, cache)
    assert [n.unique_id for n in nodes] == WANTED
    assert [n.compiled_code for n in nodes] == ["select 1 as a", "select 2 as b"]
    assert "2 reused" in capsys.readouterr().out
    assert dbt_child._cached_tests(manifest(vars="v2"), WANTED, cache) is None  # stale key


def test_the_results_file_goes_to_a_nested_target_folder_created_on_demand(
    warehouse, tmp_path, monkeypatch
):
    monkeypatch.setenv("DBT_TARGET_PATH", "deep/er/target")
    dbt_child.run_data_tests([node("ok", "select n from t where n < 0")], str(warehouse))
    written = json.loads((tmp_path / "deep/er/target" / dbt_child.DATA_TEST_RESULTS).read_text())
    assert written == {
        "results": [{"unique_id": "test.project.ok", "status": "pass", "failures": 0}]
    }


def test_a_cache_holding_exactly_the_wanted_tests_is_reused(tmp_path):
    cache = tmp_path / "cache.json"
    key = dbt_child._cache_key(manifest(), WANTED)
    cache.write_text(
        json.dumps({"key": key, "sql": {"test.p.a": "select 1", "test.p.b": "select 2"}})
    )
    nodes = dbt_child._cached_tests(manifest(), WANTED, cache)
    assert nodes is not None and [n.compiled_code for n in nodes] == ["select 1", "select 2"]


def test_the_cache_key_does_not_depend_on_the_order_of_a_configs_keys():
    one, other = manifest(), manifest()
    other.nodes["test.p.a"].config = types.SimpleNamespace(
        to_dict=lambda: {"where": None, "severity": "ERROR"}
    )
    one.nodes["test.p.a"].config = types.SimpleNamespace(
        to_dict=lambda: {"severity": "ERROR", "where": None}
    )
    assert dbt_child._cache_key(one, WANTED) == dbt_child._cache_key(other, WANTED)


class Runner:
    """Stands in for dbt's programmatic runner: records each call's arguments and the
    warehouse the profile would open at that moment, answers with a fixed result."""

    def __init__(self, result):
        self.result, self.calls = result, []

    def invoke(self, args):
        import os

        self.calls.append((list(args), os.environ.get(dbt_child.PROFILE_WAREHOUSE)))
        return self.result


def compiled(*nodes, success=True):
    return types.SimpleNamespace(
        success=success,
        exception="boom" if not success else None,
        result=types.SimpleNamespace(results=[types.SimpleNamespace(node=n) for n in nodes]),
    )


def test_compiling_keeps_the_wanted_tests_and_caches_them_under_todays_key(tmp_path, capsys):
    fresh = manifest()
    a, b = fresh.nodes["test.p.a"], fresh.nodes["test.p.b"]
    a.compiled_code, b.compiled_code = "select 1", "select 2"
    other = types.SimpleNamespace(unique_id="test.p.other", compiled_code="select 3")
    runner, cache = Runner(compiled(a, other, b)), tmp_path / "c.json"
    nodes = dbt_child._compile_tests(runner, fresh, WANTED, [], ["--quiet"], cache)
    assert [n.unique_id for n in nodes] == WANTED
    assert runner.calls[0][0] == [
        "compile", "--no-write-json", "--select", "resource_type:test", "--quiet"
    ]  # fmt: skip
    stored = json.loads(cache.read_text())
    assert stored == {
        "key": dbt_child._cache_key(fresh, WANTED),
        "sql": {"test.p.a": "select 1", "test.p.b": "select 2"},
    }
    assert "compiled 2 data tests" in capsys.readouterr().out
    selection = ["--select", "tag:x", "--indirect-selection", "cautious"]
    dbt_child._compile_tests(runner, fresh, WANTED, selection, [], cache)
    assert runner.calls[1][0] == ["compile", "--no-write-json", *selection]


def test_a_failed_compile_says_why_unless_asked_to_be_quiet(tmp_path, capsys):
    runner = Runner(compiled(success=False))
    assert dbt_child._compile_tests(runner, manifest(), WANTED, [], [], tmp_path / "c") is None
    assert "compiling the data tests failed: boom" in capsys.readouterr().out
    quiet = dbt_child._compile_tests(runner, manifest(), WANTED, [], [], tmp_path / "c", True)
    assert quiet is None and capsys.readouterr().out == ""
    assert not (tmp_path / "c").exists()


def test_compiling_ahead_points_the_profile_at_an_empty_file_of_the_same_name(
    tmp_path, monkeypatch, capsys
):
    live = tmp_path / "live" / "warehouse.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(live))
    monkeypatch.setenv(dbt_child.PROFILE_WAREHOUSE, "warehouse.duckdb")
    fresh = manifest()
    fresh.nodes["test.p.a"].compiled_code = fresh.nodes["test.p.b"].compiled_code = "select 1"
    runner = Runner(compiled(fresh.nodes["test.p.a"], fresh.nodes["test.p.b"]))
    tests = dbt_child._compile_tests_ahead(runner, fresh, WANTED, [], [], tmp_path / "c")
    assert tests is not None and len(tests) == 2
    seen = Path(runner.calls[0][1])
    assert seen.name == "warehouse.duckdb" and seen.parent != live.parent
    assert not seen.exists()  # the throwaway folder is gone
    assert os.environ[dbt_child.PROFILE_WAREHOUSE] == "warehouse.duckdb"  # restored
    assert "2 data tests compiled ahead" in capsys.readouterr().out
    # a failure is quiet (the tests are compiled after the build instead); no variable
    # set before means none after
    monkeypatch.delenv(dbt_child.PROFILE_WAREHOUSE)
    failing = Runner(compiled(success=False))
    assert dbt_child._compile_tests_ahead(failing, fresh, WANTED, [], [], tmp_path / "d") is None
    assert capsys.readouterr().out == ""
    assert dbt_child.PROFILE_WAREHOUSE not in os.environ


# -- the unit tests' pass: skipped only with the key they passed with -------------------------


def unit_manifest(created_at="2026-01-01", fixture=1, order=("a", "b")):
    unit = {"created_at": created_at, "given": [{"rows": [{"x": fixture}]}], "expect": [1]}
    unit = {k: unit[k] for k in (reversed(list(unit)) if order[0] == "b" else list(unit))}
    config = {k: {"a": 1, "b": 2}[k] for k in order}  # same items, another order
    model = types.SimpleNamespace(
        columns={"x": types.SimpleNamespace(data_type="integer")},
        depends_on=types.SimpleNamespace(nodes=[]),
        raw_code="select 1 as x",
        config=types.SimpleNamespace(to_dict=lambda: config),
    )
    state = types.SimpleNamespace(vars_hash=types.SimpleNamespace(checksum="v"))
    return types.SimpleNamespace(
        unit_tests={"unit_test.p.m.u": types.SimpleNamespace(to_dict=lambda: unit)},
        nodes={"model.p.m": model},
        sources={},
        macros={},
        state_check=state,
    )


def test_the_unit_test_key_ignores_parse_times_and_key_order_but_not_a_fixture(warehouse):
    key = dbt_child._unit_test_key(unit_manifest(), str(warehouse))
    assert dbt_child._unit_test_key(unit_manifest(created_at="2027"), str(warehouse)) == key
    assert dbt_child._unit_test_key(unit_manifest(order=("b", "a")), str(warehouse)) == key
    assert dbt_child._unit_test_key(unit_manifest(fixture=2), str(warehouse)) != key
    con = duckdb.connect(str(warehouse))
    con.execute("alter table t alter n type double")  # dbt types fixtures by the catalog
    con.close()
    assert dbt_child._unit_test_key(unit_manifest(), str(warehouse)) != key


def test_the_unit_tests_pass_is_trusted_only_with_todays_key(warehouse, tmp_path):
    passed = tmp_path / "target" / dbt_child.UNIT_TEST_PASS
    assert not dbt_child._unit_tests_passed(unit_manifest(), str(warehouse))  # none recorded
    passed.parent.mkdir()
    key = dbt_child._unit_test_key(unit_manifest(), str(warehouse))
    passed.write_text(json.dumps({"key": key}))
    assert dbt_child._unit_tests_passed(unit_manifest(), str(warehouse))
    assert not dbt_child._unit_tests_passed(unit_manifest(fixture=3), str(warehouse))
    passed.write_text("{damaged")
    assert not dbt_child._unit_tests_passed(unit_manifest(), str(warehouse))
