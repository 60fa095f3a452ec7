"""The snapshot check every suite report runs lives in the shared suites module
(tsrate.suites.publishing): the reasoning report reads no other suite's report module, and
the check itself names the first missing mart or column of a real DuckDB file in one line."""

from __future__ import annotations

import ast
from pathlib import Path

import duckdb
import pytest

from tsrate import TsrateError
from tsrate.suites.publishing import check_snapshot

ROOT = Path(__file__).resolve().parents[2]


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


@pytest.mark.parametrize("suite", ["reasoning", "understanding", "interpretability"])
def test_no_suite_report_imports_another_suites_report(suite):
    others = {"reasoning", "understanding", "interpretability"} - {suite}
    imported = _imported_modules(ROOT / "src" / "tsrate" / "suites" / suite / "report.py")
    borrowed = {m for m in imported for other in others if m.startswith(f"tsrate.suites.{other}")}
    assert borrowed == set()


def _snapshot(path: Path) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.a (x integer, y integer)")
    return path


def test_a_snapshot_with_every_required_column_passes(tmp_path):
    check_snapshot(_snapshot(tmp_path / "s.duckdb"), {"a": ("x", "y")}, "tsrate suite x build")


def test_a_missing_column_is_one_line_naming_it_and_the_rebuild(tmp_path):
    snapshot = _snapshot(tmp_path / "s.duckdb")
    with pytest.raises(TsrateError) as caught:
        check_snapshot(snapshot, {"a": ("x", "z")}, "tsrate suite x build")
    assert str(caught.value) == (
        f"{snapshot}: marts.a has no column z (published by an older tsrate): "
        "rebuild it with `tsrate suite x build`"
    )


def test_a_missing_mart_is_one_line_naming_it_and_the_rebuild(tmp_path):
    snapshot = _snapshot(tmp_path / "s.duckdb")
    with pytest.raises(TsrateError) as caught:
        check_snapshot(snapshot, {"a": ("x",), "b": ("x",)}, "tsrate suite x build")
    assert str(caught.value) == (
        f"{snapshot}: marts.b is not in this snapshot (published by an older tsrate "
        "or before the suite was built): rebuild it with `tsrate suite x build`"
    )
    assert "\n" not in str(caught.value)
