"""Read a report's traced elements and look their numbers up in the snapshot's marts
(tests/integration/test_report_marts.py, test_report_sections.py): every element carrying
data-mart with its text, and the SQL conditions of a data-where at the paper's outcome.
No test here.
"""

from __future__ import annotations

from html.parser import HTMLParser

from tsrate.robustness.report.render import (
    PAPER_OUTCOME,
)


class Traced(HTMLParser):
    """Every element carrying data-mart (or data-text-mart: a flag whose text is a mart's
    text column), with its text (spans and flags) — in the HTML and its SVG."""

    def __init__(self, key: str = "data-mart") -> None:
        super().__init__()
        self.key = key
        self.found: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.key in attrs:
            item = {"tag": tag, **attrs, "text": ""}
            self.found.append(item)
            self._open = item if tag in ("span", "em") else None

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data

    def handle_endtag(self, tag):
        if tag in ("span", "em"):
            self._open = None


def traced_elements(html: str, key: str = "data-mart") -> list[dict]:
    parser = Traced(key)
    parser.feed(html)
    return parser.found


def outcome_clause(con, mart: str, alias: str) -> str:
    """`` and (alias.outcome is null or ... = 'max_abs_residual')`` when ``mart`` has one."""
    has = con.execute(
        "select count(*) from duckdb_columns() where schema_name = 'marts' and table_name = ? "
        "and column_name = 'outcome'",
        [mart],
    ).fetchone()[0]
    return f" and ({alias}.outcome is null or {alias}.outcome = '{PAPER_OUTCOME}')" if has else ""


def where_clause(con, mart: str, where: dict) -> tuple[str, list]:
    """SQL conditions and parameters for a data-where (at the paper's outcome unless named)."""
    clauses, params = [], []
    for column, value in where.items():
        if value is None:
            clauses.append(f'"{column}" is null')
        elif isinstance(value, list):
            clauses.append(f'"{column}" in ({", ".join("?" for _ in value)})')
            params.extend(value)
        else:
            clauses.append(f'"{column}" = ?')
            params.append(value)
    outcome = con.execute(
        "select count(*) from duckdb_columns() where schema_name = 'marts' and table_name = ? "
        "and column_name = 'outcome'",
        [mart.split(".")[1]],
    ).fetchone()[0]
    if outcome and "outcome" not in where:  # the report reads the paper's outcome
        clauses.append("(outcome is null or outcome = ?)")
        params.append(PAPER_OUTCOME)
    return " and ".join(clauses), params
