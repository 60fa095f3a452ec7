"""The project's table and view materializations and their column comments
(macros/materializations/table.sql, view.sql, column_comments.sql) against the small errors
a mutation sweep plants in their Jinja (round 11; ``mutate.py`` leaves Jinja alone, so the
same kinds were planted by hand: tests/planted/sweep11_materializations.json).

What test_lean_tables.py and test_lean_views.py left open is when a model's comments are
folded into its main statement (``tsrate_folds_column_comments``: an enforced contract,
column docs persisted, documented columns) and when dbt's persist_docs writes them, which
differ in what they do with documentation that does not fit the relation. One real
``dbt run`` of a tiny project (tests/integration/tiny_dbt.py, the project's macros as they
are) builds, as a table and as a view each:

* a contracted model with persist_docs off: no relation comment, no column comment;
* a model without a description (docs persisted): no relation comment (not an empty one);
* a model that documents a column it does not have (no contract): it builds, and its own
  columns carry their comments (persist_docs skips the extra one; a folded comment on it
  would fail the model);
* a contracted model with a quoted column name holding a space: its comment lands on it.
"""

from __future__ import annotations

import pytest

from tests.integration.tiny_dbt import Project

pytestmark = pytest.mark.slow

KINDS = {"t": "table", "v": "view"}

SCHEMA = """\
version: 2
models:
"""
for suffix in KINDS:
    SCHEMA += f"""\
  - name: silent_{suffix}
    description: Not to be written.
    config:
      contract:
        enforced: true
      persist_docs:
        relation: false
        columns: false
    columns:
      - name: ticker
        data_type: varchar
        description: Not to be written either.
  - name: bare_{suffix}
    columns:
      - name: ticker
        description: The stock.
  - name: extra_{suffix}
    description: Documents a column it lacks.
    columns:
      - name: ticker
        description: The stock.
      - name: volume
        description: Not a column of this model.
  - name: spaced_{suffix}
    description: A quoted column.
    config:
      contract:
        enforced: true
    columns:
      - name: ticker
        data_type: varchar
        description: The stock.
      - name: close price
        quote: true
        data_type: double
        description: The close, quoted.
"""

SQL = {
    "silent": "select 'AAPL' as ticker",
    "bare": "select 'AAPL' as ticker",
    "extra": "select 'AAPL' as ticker",
    "spaced": "select 'AAPL' as ticker, 1.5::double as \"close price\"",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Project:
    project = Project(tmp_path_factory.mktemp("sweep11") / "lean")
    (project.folder / "models" / "prices.yml").write_text(SCHEMA)
    for suffix, kind in KINDS.items():
        for name, sql in SQL.items():
            project.model(f"{name}_{suffix}", f"{{{{ config(materialized='{kind}') }}}}\n{sql}\n")
    project.ok()
    return project


def _relation_comment(project: Project, name: str) -> str | None:
    rows = project.query(
        f"select comment from duckdb_tables() where table_name = '{name}' "
        f"union all select comment from duckdb_views() where view_name = '{name}'"
    )
    assert len(rows) == 1, name
    return rows[0][0]


@pytest.mark.parametrize("suffix", sorted(KINDS))
def test_the_relations_are_of_their_kind(built, suffix):
    kind = {"t": "BASE TABLE", "v": "VIEW"}[suffix]
    for name in SQL:
        assert built.kind(f"{name}_{suffix}") == kind


@pytest.mark.parametrize("suffix", sorted(KINDS))
def test_persist_docs_off_writes_no_comment_even_under_a_contract(built, suffix):
    assert _relation_comment(built, f"silent_{suffix}") is None
    assert built.columns(f"silent_{suffix}") == [("ticker", None)]


@pytest.mark.parametrize("suffix", sorted(KINDS))
def test_a_model_without_a_description_gets_no_relation_comment(built, suffix):
    assert _relation_comment(built, f"bare_{suffix}") is None
    assert built.columns(f"bare_{suffix}") == [("ticker", "The stock.")]


@pytest.mark.parametrize("suffix", sorted(KINDS))
def test_a_documented_column_the_model_lacks_is_skipped(built, suffix):
    assert _relation_comment(built, f"extra_{suffix}") == "Documents a column it lacks."
    assert built.columns(f"extra_{suffix}") == [("ticker", "The stock.")]


@pytest.mark.parametrize("suffix", sorted(KINDS))
def test_a_quoted_column_of_a_contract_gets_its_comment(built, suffix):
    assert _relation_comment(built, f"spaced_{suffix}") == "A quoted column."
    assert built.columns(f"spaced_{suffix}") == [
        ("ticker", "The stock."),
        ("close price", "The close, quoted."),
    ]
