"""What a BI analyst reads in the published snapshot (tsrate.platform.publish), on real
temporary DuckDB files: ``published_runs`` names the study of each publication (its id and
its name, as ``tsrate studies`` lists them; null for a suite publication and in rows carried
from older snapshots; docs/bi.md's query over two studies' snapshots names each row's
study, and its comparison of scores puts each study's numbers on its rows), a run
published again after its Parquet folder was removed gets a
folder name no earlier publication recorded, and no comment written (tables and columns,
snapshot, Parquet metadata, manifest) ends with whitespace."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.parquet as pq

from tests.support.publish_warehouse import tiny_warehouse
from tests.support.warehouses import ingest
from tsrate.config import Study, project_dir
from tsrate.platform.publish import export_parquet, publish
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts
from tsrate.robustness.studies import list_studies

STUDY = Study.from_mapping(
    dict(
        study_tickers=["JPM", "AAPL"],
        study_start="2022-11-01",
        study_end="2022-12-28",
        context_length=20,
        horizon=5,
        systems=["naive"],
        perturbations=["P0"],
    )
)
OTHER_STUDY = Study.from_mapping(
    dict(
        study_tickers=["AAPL"],
        study_start="2022-10-03",
        study_end="2022-12-28",
        context_length=20,
        horizon=5,
        systems=["naive"],
        perturbations=["P0"],
    )
)
COMPANIES = pd.DataFrame(
    {
        "ticker": ["AAPL", "JPM"],
        "company_name": ["Apple Inc.", "JPMorgan"],
        "industry": ["Technology", "Banking"],
        "biased_offset": [0, 500],
    }
)


def published_rows(snapshot: Path, columns: str) -> list[tuple]:
    with duckdb.connect(str(snapshot), read_only=True) as con:
        return con.execute(f"select {columns} from published_runs order by published_at").fetchall()


def studied_warehouse(path: Path, study: Study = STUDY) -> str:
    """A real forecasted run of ``study`` (its study registered as a run registers it),
    plus two tiny marts to publish (``ratings`` with the columns docs/bi.md's query of two
    studies reads); the run's id."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ingest(path, list(study.tickers))
    with connect(path) as con:
        summary = run_forecasts(con, study, COMPANIES, workers=1, progress=lambda m: None)
        finish_run(con, summary.run_id, "forecasted")
        con.execute("create schema if not exists marts")
        con.execute("create schema if not exists seeds")
        con.execute("create table marts.scores as select range as item from range(3)")
        con.execute(
            "create table marts.ratings as select 'naive' as system_id, 'smape' as metric, "
            "'P0' as perturbation_id, 1 as rating, true as is_default_outcome"
        )
        con.execute("create table seeds.systems as select 'naive' as system_id")
    return summary.run_id


def test_published_runs_names_the_study_as_tsrate_studies_lists_it(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    run_id = studied_warehouse(warehouse)
    result = publish(warehouse, run_id, parquet=False)
    with connect(warehouse, read_only=True) as con:
        listed = list_studies(con)  # what `tsrate studies` prints
    assert len(listed) == 1
    expected = (run_id, listed[0]["study_id"], listed[0]["study_name"])
    assert listed[0]["study_name"] == f"study-{listed[0]['study_id'][:8]}"
    assert published_rows(result.path, "run_id, study_id, study_name") == [expected]
    with duckdb.connect(str(result.path), read_only=True) as con:
        rated = con.execute(  # the id the marts carry (ratings.study_id) is the same hash
            "select study_id from published_runs where study ->> 'tickers' is not null"
        ).fetchall()
        comments = dict(
            con.execute(
                "select column_name, comment from duckdb_columns() "
                "where table_name = 'published_runs' and column_name like 'study_%'"
            ).fetchall()
        )
    assert rated == [(listed[0]["study_id"],)]
    assert set(comments) == {"study_id", "study_name"} and all(comments.values())


def test_the_documented_query_of_two_studies_names_each_rows_study(tmp_path):
    """docs/bi.md "Two studies side by side": a warehouse per study (the second under
    ``warehouse/energy``), each published beside itself; the documented SQL, run as written
    from the project folder (here tmp_path), names each row's study as `tsrate studies`
    lists it in that warehouse."""
    names = {}
    for warehouse, study in (
        (tmp_path / "warehouse" / "tsrate.duckdb", STUDY),
        (tmp_path / "warehouse" / "energy" / "tsrate.duckdb", OTHER_STUDY),
    ):
        run_id = studied_warehouse(warehouse, study)
        publish(warehouse, run_id, parquet=False)
        with connect(warehouse, read_only=True) as con:
            names[warehouse.parent.name] = [s["study_name"] for s in list_studies(con)]
    assert names["warehouse"] != names["energy"] and all(len(n) == 1 for n in names.values())
    text = (project_dir() / "docs" / "bi.md").read_text()
    block = re.search(r"not run: attaches two snapshots[^\n]*\n```sql\n(.*?)```", text, re.S)
    sql = block.group(1).replace("'warehouse/", f"'{tmp_path}/warehouse/")
    with duckdb.connect() as con:
        for statement in [part for part in sql.split(";") if part.strip()]:
            rows = con.execute(statement).fetchall()
    assert sorted(row[0] for row in rows) == sorted(names["warehouse"] + names["energy"])


def test_the_documented_comparison_of_scores_reads_each_studys_numbers(tmp_path):
    """docs/bi.md "Compare scores across studies, not ratings": after the two studies'
    snapshots are attached (the block above it), its SQL puts each study's clean (P0)
    score and its leaderboard skill score (scope all) on the system's row of that study."""
    named = {}  # study name (as `tsrate studies` lists it) -> (its smape, its skill score)
    for folder, smape, skill in (("", 0.05, 0.1), ("energy", 0.025, 0.3)):
        warehouse = tmp_path / "warehouse" / folder / "tsrate.duckdb"
        run_id = studied_warehouse(warehouse, STUDY if not folder else OTHER_STUDY)
        with connect(warehouse) as con:
            con.execute(
                "create table marts.accuracy_scores as select ? as run_id, 'naive' as "
                "system_id, unnest(['P0', 'P1']) as perturbation_id, 'smape' as metric, "
                "unnest([?, 9.0]) as mean",
                [run_id, smape],
            )
            con.execute(
                "create table marts.leaderboard as select ? as run_id, unnest(['all', 'P0']) "
                "as scope, 'smape' as metric, 'naive' as system_id, unnest([?, -1.0]) as "
                "skill_score, 0.5 as win_rate",
                [run_id, skill],
            )
        publish(warehouse, run_id, parquet=False)
        with connect(warehouse, read_only=True) as con:
            (study,) = list_studies(con)
        named[study["study_name"]] = (smape, skill)
    text = (project_dir() / "docs" / "bi.md").read_text()
    blocks = [
        re.search(rf"not run: {marker}[^\n]*\n```sql\n(.*?)```", text, re.S).group(1)
        for marker in ("attaches two snapshots", "reads the two snapshots attached above")
    ]
    sql = "".join(blocks).replace("'warehouse/", f"'{tmp_path}/warehouse/")
    with duckdb.connect() as con:
        for statement in [part for part in sql.split(";") if part.strip()]:
            rows = con.execute(statement).fetchall()
    assert len(rows) == 2 and len(named) == 2
    assert {row[2]: row[:2] + row[3:] for row in rows} == {
        name: ("naive", "smape", smape, skill, 0.5) for name, (smape, skill) in named.items()
    }


def test_a_suite_publication_and_an_older_snapshots_rows_have_no_study_name(tmp_path):
    """A suite run is not in raw.runs; a snapshot published before the columns existed is
    carried over by name, its rows null in them."""
    warehouse = tmp_path / "tsrate.duckdb"
    run_id = studied_warehouse(warehouse)
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    snapshot.parent.mkdir()
    with duckdb.connect(str(snapshot)) as old:  # the columns of the previous release
        old.execute(
            "create table published_runs (run_id varchar, published_at timestamp, "
            "study json, row_counts json, parquet_path varchar, systems varchar[])"
        )
        old.execute("insert into published_runs values ('old', '2020-01-01', '{}', '{}', "
                    "null, null)")  # fmt: skip
    publish(warehouse, "suite-run-1", target=snapshot, parquet=False)
    publish(warehouse, run_id, target=snapshot, parquet=False)
    rows = published_rows(snapshot, "run_id, study_id, study_name")
    assert [r[0] for r in rows] == ["old", "suite-run-1", run_id]
    assert rows[0][1:] == (None, None) and rows[1][1:] == (None, None)
    assert rows[2][1] is not None and rows[2][2].startswith("study-")


def test_a_run_published_again_after_its_folder_was_removed_gets_a_new_folder(tmp_path):
    """run-a's folder is pruned after two later publications; `tsrate build --study` then
    publishes run-a again: the new folder must not take the name an earlier publication
    recorded (two rows would share one parquet_path)."""
    warehouse = tmp_path / "tsrate.duckdb"
    versions = tmp_path / "published" / "parquet-runs"
    for run_id in ("run-a", "run-b", "run-c"):
        tiny_warehouse(warehouse, run_id)
        publish(warehouse, run_id)
    assert not (versions / "run-a").exists()  # pruned: only run-b and run-c are kept
    result = publish(warehouse, "run-a")
    assert (tmp_path / "published" / "parquet").resolve().name == "run-a.2"
    paths = [row[0] for row in published_rows(result.path, "parquet_path")]
    assert paths == [
        "parquet-runs/run-a", "parquet-runs/run-b", "parquet-runs/run-c", "parquet-runs/run-a.2"
    ]  # fmt: skip
    assert len(set(paths)) == len(paths)
    shutil.rmtree(versions / "run-a.2")  # removed by hand: the next one is .3, not .2 again
    tiny_warehouse(warehouse, "run-a")
    publish(warehouse, "run-a")
    assert published_rows(result.path, "parquet_path")[-1] == ("parquet-runs/run-a.3",)


def commented_warehouse(path: Path) -> None:
    """A mart and a view whose comments end with a newline, as YAML block scalars do."""
    tiny_warehouse(path, "run-1")
    with duckdb.connect(str(path)) as con:
        con.execute("comment on table marts.scores is 'One row per item.\n'")
        con.execute("comment on column marts.scores.item is 'The item number.  \n'")
        con.execute("comment on column marts.scores.run_id is 'The run.\t\n\n'")
        con.execute("create view marts.firsts as select * from marts.scores where item = 0")
        con.execute("comment on view marts.firsts is 'The first items.\n'")


def trailing(texts) -> list[str]:
    return [t for t in texts if t is not None and t != t.rstrip()]


def snapshot_comments(snapshot: Path) -> list[str]:
    with duckdb.connect(str(snapshot), read_only=True) as con:
        rows = con.execute(
            "select comment from duckdb_tables() union all select comment from duckdb_columns()"
        ).fetchall()
    return [row[0] for row in rows]


def parquet_comments(folder: Path) -> list[str]:
    manifest = json.loads((folder / "manifest.json").read_text())
    texts = []
    for relative, entry in manifest.items():
        texts.append(entry["description"])
        texts += [column["description"] for column in entry["columns"].values()]
        metadata = pq.read_schema(folder / relative).metadata
        texts.append(metadata[b"description"].decode())
        texts += json.loads(metadata[b"column_descriptions"]).values()
    return texts


def test_no_comment_written_ends_with_whitespace(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    commented_warehouse(warehouse)
    result = publish(warehouse, "run-1")
    comments = snapshot_comments(result.path)
    assert "One row per item." in comments and "The first items." in comments
    assert "The item number." in comments and "The run." in comments
    assert trailing(comments) == []
    texts = parquet_comments(result.parquet_path)
    assert "One row per item." in texts and "The item number." in texts
    assert trailing(texts) == []


def test_an_export_of_an_older_snapshot_strips_its_comments_too(tmp_path):
    """A snapshot published before the comments were stripped still has the newlines:
    `tsrate export` writes them without."""
    snapshot = tmp_path / "old.duckdb"
    with duckdb.connect(str(snapshot)) as con:
        con.execute("create schema marts")
        con.execute("create table marts.scores as select 1 as item")
        con.execute("comment on table marts.scores is 'One row per item.\n'")
        con.execute("comment on column marts.scores.item is 'The item number.\n'")
        con.execute("create table published_runs as select 'r' as run_id")
    export_parquet(snapshot, tmp_path / "export")
    texts = parquet_comments(tmp_path / "export")
    assert "One row per item." in texts and "The item number." in texts
    assert trailing(texts) == []
