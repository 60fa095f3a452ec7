"""docs/bi.md's table of the keys a dashboard joins marts on, against the dbt YAML: every
mart it names under a key declares that key, every label it names is a column of the
relation it points at, and the outcome row names exactly the marts with several outcomes
per score (so a dashboard that sums any other mart does not count a score twice). The
example queries below the table bind against the contracts in test_docs_truth.py and run
on a real build in the integration tests."""

from __future__ import annotations

import re

from tests.support.doc_queries import declared_relations
from tsrate.config import project_dir

TICKED = re.compile(r"`([^`]+)`")


def join_table() -> dict[str, tuple[str, str]]:
    """key -> (its "in" cell, its "labels" cell)."""
    text = (project_dir() / "docs" / "bi.md").read_text()
    start = text.index("### Joining marts in a dashboard")
    rows = {}
    for line in text[start:].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[2])
        elif rows and not line.startswith("|"):
            break
    return rows


def core_marts() -> dict[str, set[str]]:
    return {
        name: set(relation.columns)
        for (schema, name), relation in declared_relations().items()
        if schema == "marts" and not name.startswith(("und_", "rsn_", "interp_"))
    }


def test_the_table_has_the_keys_of_a_dashboard():
    assert list(join_table()) == ["system_id", "perturbation_id", "ticker", "metric", "outcome"]


def test_every_mart_named_under_a_key_declares_it():
    marts = core_marts()
    for key, (inside, _) in join_table().items():
        named = [name for name in TICKED.findall(inside) if name in marts]
        assert named or key in ("system_id", "perturbation_id"), key
        for name in named:
            assert key in marts[name], f"marts.{name} declares no {key}"


def test_every_label_is_a_column_of_the_relation_it_points_at():
    relations = declared_relations()
    for key, (_, labels) in join_table().items():
        source = re.match(r"`(marts|seeds)\.([a-z_]+)` \(([^)]*)\)", labels)
        if source is None:
            continue
        columns = relations[(source.group(1), source.group(2))].columns
        for label in TICKED.findall(source.group(3)):
            assert label in columns, f"{key}: {source.group(2)} declares no {label!r}"
        assert key in columns or key == "system_id" and "system_id" in columns


def test_the_outcome_row_names_every_mart_with_an_outcome_column():
    marts = core_marts()
    inside, labels = join_table()["outcome"]
    with_outcome = {name for name, columns in marts.items() if "outcome" in columns}
    assert set(TICKED.findall(inside)) == with_outcome
    default_flag = {name for name in with_outcome if "is_default_outcome" in marts[name]}
    flagged = re.search(r"filter `is_default_outcome` \(([^;)]*)[;)]", labels).group(1)
    assert set(TICKED.findall(flagged)) == default_flag
    assert "partial_orders" in labels and "outcome" not in marts["partial_orders"]
    assert "`rating_stability` to `ratings` on `outcome`" in labels
