"""The docs are SQL and column names analysts copy: every documented query binds against the
declared dbt contracts, and every backticked `schema.table.column` / `table.column` of the
prose names a model and column the dbt YAML declares. The queries also run as written on
real builds: tests/integration/test_ratings_marts.py (core pages) and the suite tests."""

from __future__ import annotations

import re

import duckdb
import pytest

from tests.support.doc_queries import (
    SUITE_OF_PAGE,
    Relation,
    all_documented_queries,
    declared_relations,
    doc_pages,
    documented_queries,
    failures,
    warehouse_of,
)
from tsrate.config import project_dir
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.robustness.studies import ensure_studies

#: Backticked identifiers: the whole span is a dotted name of two or three parts.
DOTTED = re.compile(r"`([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)(?:\.([a-z_][a-z0-9_]*))?`")
SCHEMAS = {"raw", "staging", "intermediate", "marts", "seeds"}
#: `name.ext` spans that are file names, not table.column.
FILE_ENDINGS = {"md", "py", "sql", "yml", "yaml", "json", "html", "png", "csv", "toml", "txt"}
FILE_ENDINGS |= {"duckdb", "parquet", "jsonl", "log", "lock", "cfg", "ini", "svg", "js"}


def raw_warehouse() -> duckdb.DuckDBPyConnection:
    """An empty warehouse in memory with the raw tables as tsrate writes them (its DDL, and
    the study columns every run adds: `raw.runs.study_id`)."""
    con = duckdb.connect()
    create_raw_tables(con)
    ensure_studies(con)
    return con


def contract_warehouse() -> duckdb.DuckDBPyConnection:
    """The raw warehouse, and every model and seed of the dbt YAML as an empty table with
    its declared columns and types."""
    con = raw_warehouse()
    for (schema, name), relation in declared_relations().items():
        if schema == "raw" or not relation.declares_columns:
            continue
        con.execute(f"create schema if not exists {schema}")
        columns = ", ".join(
            f'"{column}" {data_type or "varchar"}' for column, data_type in relation.columns.items()
        )
        con.execute(f"create or replace table {schema}.{name} ({columns})")
    return con


def relations_with_raw() -> dict:
    """declared_relations, with the raw tables as tsrate's DDL creates them (the sources'
    YAML names some raw tables without their columns; the raw schema has more tables)."""
    found = {key: value for key, value in declared_relations().items() if key[0] != "raw"}
    con = raw_warehouse()
    try:
        rows = con.execute(
            "select table_name, column_name, data_type from information_schema.columns"
            " where table_schema = 'raw' order by table_name, ordinal_position"
        ).fetchall()
    finally:
        con.close()
    for table, column, data_type in rows:
        relation = found.setdefault(("raw", table), Relation("raw", table, {}, True))
        relation.columns[column] = data_type
    return found


def test_every_documented_query_binds_against_the_declared_contracts():
    """A misspelt table, column or function in a documented query fails here in seconds,
    naming the page and line, before a build would: the queries run on empty tables with
    the declared columns and types."""
    queries, _ = all_documented_queries()
    assert len(queries) >= 30, len(queries)
    con = contract_warehouse()
    try:
        problems = failures(con, queries)
    finally:
        con.close()
    assert not problems, "documented SQL that does not bind:\n" + "\n".join(problems)


def test_queries_are_found_in_every_form_and_only_marked_ones_are_left_out(tmp_path):
    """The finder sees sql blocks (per statement, with its line), `tsrate query "..."` in
    shell blocks, Python strings and inline spans; a `not run` marker leaves out exactly the
    query below it or right after it, and a page with no marker leaves out nothing."""
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "Intro `select 1 as inline`, and\n"  # 1
        "<!-- not run: a template --> `select * from {{ x }}`\n"  # 2
        "```sql\n"  # 3
        "-- a comment; with a semicolon\n"  # 4
        "select 2;\n"  # 5
        "select\n"  # 6
        "  3;\n"  # 7
        "```\n"  # 8
        "<!-- not run: placeholders -->\n"  # 9
        "```sql\n"  # 10
        "select <column> from <table>;\n"  # 11
        "```\n"  # 12
        "```bash\n"  # 13
        'tsrate query --live "select 4"\n'  # 14
        "```\n"  # 15
        "```python\n"  # 16
        'con.sql("""\n'  # 17
        "    select 5\n"  # 18
        '""")\n'  # 19
        "```\n"  # 20
    )
    (tmp_path / "README.md").write_text("none here\n")
    queries, skipped = documented_queries(page, tmp_path)
    assert [(q.line, q.sql, q.live, q.kind) for q in queries] == [
        (1, "select 1 as inline", False, "inline"),
        (5, "select 2", False, "sql"),
        (6, "select\n  3", False, "sql"),
        (14, "select 4", True, "shell"),
        (18, "select 5", False, "python"),
    ]
    assert [(s.line, s.why) for s in skipped] == [(2, "a template"), (11, "placeholders")]


def test_every_page_with_queries_is_run_on_the_warehouse_it_assumes():
    """Each page's queries run on one build: the core pages on the core marts, a suite page
    on its suite's. A new suite page with SQL must be added to SUITE_OF_PAGE (and its suite
    test), or its queries would run on a warehouse without its marts."""
    queries, skipped = all_documented_queries()
    pages = {query.page for query in queries}
    suites = {page for page in pages if page.startswith("docs/suites/")}
    assert suites <= set(SUITE_OF_PAGE), suites - set(SUITE_OF_PAGE)
    assert {warehouse_of(page) for page in pages} >= {"core", "reasoning", "interpretability"}
    for marked in skipped:
        assert marked.why, f"{marked.page}:{marked.line}: a not-run marker must say why"


LIVE_LAYERS = re.compile(r"\b(from|join)\s+(raw|staging|intermediate)\.", flags=re.I)


def test_queries_of_the_published_snapshot_read_only_its_schemas():
    """`tsrate query "..."` and the Python example read the published snapshot (marts,
    seeds, published_runs): a query of raw, staging or intermediate there fails with
    "schema ... does not exist", so it must say --live."""
    queries, _ = all_documented_queries()
    wrong = [
        f"{query.where}: {query.sql[:80]}"
        for query in queries
        if query.kind in ("shell", "python") and not query.live and LIVE_LAYERS.search(query.sql)
    ]
    assert not wrong, wrong
    assert any(query.kind == "shell" and query.live for query in queries)


def _references(text: str):
    for number, line in enumerate(text.splitlines(), start=1):
        for match in DOTTED.finditer(line):
            yield number, match.group(1), match.group(2), match.group(3)


def reference_problems(pages, root=None) -> list[str]:
    relations = relations_with_raw()
    by_name: dict[str, list] = {}
    for (_schema, name), relation in relations.items():
        by_name.setdefault(name, []).append(relation)
    problems = []
    root = root or project_dir()
    for page in pages:
        where = page.relative_to(root).as_posix()
        for line, first, second, third in _references(page.read_text()):
            if second in FILE_ENDINGS and third is None:
                continue
            span = ".".join(part for part in (first, second, third) if part)
            if first in SCHEMAS:
                relation = relations.get((first, second))
                if relation is None:
                    problems.append(f"{where}:{line}: `{span}`: no {first} model {second!r}")
                elif third and relation.declares_columns and third not in relation.columns:
                    problems.append(f"{where}:{line}: `{span}`: {second} declares no {third!r}")
            elif first in by_name and third is None:
                if not any(
                    second in relation.columns or not relation.declares_columns
                    for relation in by_name[first]
                ):
                    problems.append(f"{where}:{line}: `{span}`: {first} declares no {second!r}")
    return problems


def test_every_backticked_column_reference_is_declared_in_the_dbt_yaml():
    """`marts.ratings.rating_share` or `robustness_scores.separates_systems` in prose must
    name a model (or seed, or raw table) and a column its YAML declares."""
    problems = reference_problems(doc_pages())
    assert not problems, "doc references to undeclared models or columns:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("`marts.ratings.separable`", []),
        ("`marts.ratings.separabel`", ["declares no 'separabel'"]),
        ("`marts.ratngs`", ["no marts model 'ratngs'"]),
        ("`robustness_scores.separates_systems`", []),
        ("`robustness_scores.separates_system`", ["declares no 'separates_system'"]),
        ("`platform.dbt_child` and `ratings.md`", []),
    ],
)
def test_the_reference_check_catches_typos(tmp_path, text, expected):
    fake = tmp_path / "docs" / "x.md"
    fake.parent.mkdir()
    fake.write_text(text + "\n")
    problems = reference_problems([fake], tmp_path)
    assert len(problems) == len(expected), problems
    for problem, words in zip(problems, expected, strict=True):
        assert words in problem and "docs/x.md:1" in problem
