"""``tsrate query "install httpfs"`` names INSTALL (DuckDB files it under LOAD)."""

from __future__ import annotations

import pytest

from tsrate import TsrateError
from tsrate.platform.query import read_statement


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("install httpfs", "INSTALL"),
        ("  FORCE INSTALL httpfs", "INSTALL"),
        ("load httpfs", "LOAD"),
        ("create table t (x int)", "CREATE"),
    ],
)
def test_a_refused_statement_is_named_as_written(sql, kind):
    with pytest.raises(TsrateError, match=f"^{kind} statements are refused; "):
        read_statement(sql)
