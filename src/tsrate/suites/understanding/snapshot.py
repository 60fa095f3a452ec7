"""Reading the understanding suite's marts from a published snapshot, older ones included
(:class:`SnapshotReader`, used by :func:`.report.write_report`)."""

from __future__ import annotations

import html

import duckdb
import pandas as pd

#: the default prompting style: a snapshot published before the ``prompting`` column
#: existed holds zero-shot answers only
DEFAULT_PROMPTING = "zero_shot"
REBUILD = "tsrate suite understanding build"


class SnapshotReader:
    """Reads the suite's marts from an open snapshot for the report, old ones included.

    A mart published before its ``prompting`` column existed is read with ``prompting`` =
    :data:`DEFAULT_PROMPTING` (every answer of such a run was zero-shot). A section whose
    mart is absent while the suite's scores are there, or whose query still fails (a column
    the section needs is missing), gets a one-line :meth:`note` naming the mart and the
    rebuild command instead of its content; without und_scores (no suite run built yet)
    every section is simply empty."""

    def __init__(self, con) -> None:
        self.con = con
        self.columns: dict[str, set[str]] = {}
        for table, column in con.execute(
            "select table_name, column_name from duckdb_columns() "
            "where schema_name = 'marts' and starts_with(table_name, 'und_')"
        ).fetchall():
            self.columns.setdefault(table, set()).add(column)
        self.notes: dict[str, str] = {}

    def has(self, table: str, column: str) -> bool:
        return column in self.columns.get(table, set())

    def relation(self, table: str) -> str:
        """``marts.<table>``, with the default prompting where the mart lacks the column."""
        if self.has(table, "prompting"):
            return f"marts.{table}"
        return f"(select *, '{DEFAULT_PROMPTING}' as prompting from marts.{table})"

    def read(self, name: str, sql: str, *tables: str) -> pd.DataFrame:
        """``sql`` with ``{<table>}`` placeholders for :meth:`relation`; empty when a mart is
        missing or the query fails (then :meth:`note` says why)."""
        missing = [t for t in tables if t not in self.columns]
        if missing:
            if "und_scores" in self.columns:
                self.notes[name] = (
                    f"marts.{missing[0]} is not in this snapshot (published before it "
                    f"existed): rebuild it with <code>{REBUILD}</code>."
                )
            return pd.DataFrame()
        try:
            return self.con.execute(sql.format(**{t: self.relation(t) for t in tables})).df()
        except duckdb.Error as error:
            reason = str(error).strip().splitlines()[0]
            self.notes[name] = (
                f"{', '.join('marts.' + t for t in tables)} in this snapshot cannot be read "
                f"for this section ({html.escape(reason)}); it was published by an older "
                f"tsrate: rebuild it with <code>{REBUILD}</code>."
            )
            return pd.DataFrame()

    def note(self, name: str, section: str) -> str:
        """``section``, or the note of a section that could not be read."""
        if name in self.notes:
            return f"<p><b>Not shown:</b> {self.notes[name]}</p>"
        return section
