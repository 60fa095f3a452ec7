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
import types

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
