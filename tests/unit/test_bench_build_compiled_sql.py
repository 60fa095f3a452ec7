"""The compiled-SQL build benchmark's reading of dbt's artifacts (benchmarks/
bench_build_compiled_sql.py): SQL models only, in dbt's build order, with their comments."""

from __future__ import annotations

import json

import duckdb

from benchmarks.bench_build_compiled_sql import run_once, sql_models, statements


def node(name: str, language: str = "sql", materialized: str = "table", **extra) -> dict:
    return {
        "resource_type": "model",
        "language": language,
        "config": {"materialized": materialized},
        "relation_name": f'"tsrate"."main"."{name}"',
        "compiled_code": "select 1 as x",
        **extra,
    }


def test_sql_models_in_build_order_with_dbt_time(tmp_path):
    nodes = {
        "model.a": node("a", materialized="view"),
        "model.py": node("py", language="python"),
        "model.b": node("b", columns={"x": {"description": "it's x"}}),
        "seed.s": {"resource_type": "seed", "language": "sql", "config": {}},
    }
    (tmp_path / "manifest.json").write_text(json.dumps({"nodes": nodes}))
    results = [{"unique_id": uid, "execution_time": t}
               for uid, t in (("seed.s", 0.1), ("model.b", 0.3), ("model.py", 2.0),
                              ("model.a", 0.2), ("test.t", 0.05))]  # fmt: skip
    (tmp_path / "build_run_results.json").write_text(json.dumps({"results": results}))
    models = sql_models(tmp_path)
    assert [m["relation_name"] for m in models] == ['"tsrate"."main"."b"', '"tsrate"."main"."a"']
    assert [m["dbt_seconds"] for m in models] == [0.3, 0.2]
    assert statements(models[0]) == [
        'create or replace table "tsrate"."main"."b" as select 1 as x',
        'comment on column "tsrate"."main"."b"."x" is \'it\'\'s x\'',
    ]
    assert statements(models[1]) == ['create or replace view "tsrate"."main"."a" as select 1 as x']
    warehouse = tmp_path / "tsrate.duckdb"
    wall, cpu = run_once(warehouse, models)
    assert wall > 0 and cpu >= 0
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select x from a").fetchone() == (1,)
        assert con.execute(
            "select comment from duckdb_columns() where table_name = 'b'"
        ).fetchone() == ("it's x",)
