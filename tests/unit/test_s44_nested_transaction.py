"""`transaction` inside another of the same connection joins it (DuckDB has no nested
transactions): the outer one commits or rolls back both; a transaction ended (either way)
leaves the next one a transaction of its own."""

from __future__ import annotations

import duckdb
import pytest

from tsrate.platform.warehouse import transaction


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("create table t (x int)")
    yield con
    con.close()


def count(con) -> int:  # noqa: ANN001
    return con.execute("select count(*) from t").fetchone()[0]


def test_an_inner_transaction_is_undone_with_the_outer_one(con):
    with pytest.raises(RuntimeError), transaction(con):
        with transaction(con):
            con.execute("insert into t values (1)")
        con.execute("insert into t values (2)")
        raise RuntimeError("stop")
    assert count(con) == 0


def test_a_failure_inside_the_inner_one_undoes_the_outer_ones_rows(con):
    with pytest.raises(RuntimeError), transaction(con):
        con.execute("insert into t values (1)")
        with transaction(con):
            raise RuntimeError("stop")
    assert count(con) == 0


def test_both_commit_once_and_the_next_transaction_is_its_own(con):
    with transaction(con):
        with transaction(con):
            con.execute("insert into t values (1)")
        con.execute("insert into t values (2)")
    assert count(con) == 2
    with pytest.raises(RuntimeError), transaction(con):  # its own: rolls back alone
        con.execute("insert into t values (3)")
        raise RuntimeError("stop")
    assert count(con) == 2
    with transaction(con):
        con.execute("insert into t values (4)")
    assert count(con) == 3
