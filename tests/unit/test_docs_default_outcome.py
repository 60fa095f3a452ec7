"""The robustness marts hold one row per outcome (the paper's R^max, a relative R^max, WQL,
coverage error): a documented query of ratings.md that does not show the outcome must keep
one of them, or every cell comes back once per outcome with different numbers. The queries
run as written on the declared contracts, filled with one cell per mart in four outcomes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.support.doc_queries import declared_relations, documented_queries
from tests.unit.test_docs_truth import contract_warehouse
from tsrate.config import project_dir

OUTCOMES = ["max_abs_residual", "relative_max_abs_residual", "wql", "coverage_error_80"]
DEFAULT = "max_abs_residual"
#: The marts with an `outcome` column; ratings and robustness_scores also say which is default.
MARTS = [
    "robustness_scores",
    "ratings",
    "perturbation_effects",
    "wrs_pairs",
    "rating_leave_one_out",
]
#: Values that meet the documented queries' filters (one cell of each mart).
VALUES = {
    "system_id": "naive",
    "perturbation_id": "P1",
    "analysis": "industry",
    "metric": "ape_company",
    "measure": "ape",
    "distribution_id": "company:AAPL",
    "group_a": "AAPL",
    "group_b": "MSFT",
    "changed_by_removing": "arima (2->3)",
    "run_id": "run-1",
    "study_id": "default",
}
#: The queries that read a mart with an outcome (ratings.md, by their first words).
FIXED = ["select * from marts.wrs_pairs", "ape_oracle", "pie_percent desc", "rating_leave_one_out"]


def _value(column: str, data_type: str | None, outcome: str | None):
    if column == "outcome":
        return outcome
    if column == "is_default_outcome":
        return outcome in (DEFAULT, None)
    if column == "metric" and outcome is None:
        return "smape"  # an accuracy metric: no outcome
    if column in VALUES:
        return VALUES[column]
    kind = (data_type or "varchar").lower()
    if kind.startswith("bool"):
        return True
    if any(word in kind for word in ("int", "double", "float", "decimal", "numeric", "real")):
        return 1
    if "[]" in kind:
        return None
    if kind in ("date", "timestamp"):
        return "2022-06-01"
    return "x"


def _fill(con) -> None:
    relations = declared_relations()
    for mart in MARTS:
        columns = relations[("marts", mart)].columns
        accuracy = [None] if mart in ("ratings", "rating_leave_one_out") else []
        for outcome in OUTCOMES + accuracy:
            row = [_value(column, kind, outcome) for column, kind in columns.items()]
            marks = ", ".join("?" for _ in row)
            con.execute(f"insert into marts.{mart} values ({marks})", row)


def test_ratings_queries_return_one_row_per_cell_not_one_per_outcome():
    root = project_dir()
    queries, _ = documented_queries(Path(root / "docs" / "ratings.md"), root)
    con = contract_warehouse()
    try:
        _fill(con)
        checked, repeated = [], []
        for query in queries:
            frame: pd.DataFrame = con.execute(query.sql).df()
            shows = "outcome" in frame.columns and not query.sql.lower().startswith("select *")
            if not any(mart in query.sql for mart in MARTS) or shows:
                continue  # a query that selects the outcome (the at_max count) groups by it
            cells = frame.drop(columns=["outcome", "is_default_outcome"], errors="ignore")
            if any(mark in query.sql for mark in FIXED):
                checked.append(query.where)
                assert len(frame), f"{query.where}: no rows on the filled cell\n{query.sql}"
            if "rating_leave_one_out" in query.sql:
                kept = set(frame["metric"])
                assert kept == {"smape", "ape_company"}, f"{query.where}: keeps {kept}"
            if cells.duplicated().any():
                repeated.append(f"{query.where}: {len(frame)} rows for one cell\n{query.sql}")
    finally:
        con.close()
    assert len(checked) == len(FIXED), checked
    assert not repeated, "queries that repeat a cell per outcome:\n" + "\n".join(repeated)
