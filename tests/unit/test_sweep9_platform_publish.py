"""Publishing the marts (tsrate.platform.publish) on real temporary DuckDB files and folders,
at the paths the older tests left free: a suite's unbuilt marts left out of the snapshot
(and only the marts schema's), a snapshot in a folder whose parents do not exist yet, a
reader beside the publisher opening the staging file read-only in this process, a failing
data-test hook without Parquet keeping the caller's own error, and a leftover of a killed
publish that the filesystem will not delete not stopping the next publish.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_platform.json).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from tests.support.publish_warehouse import tiny_warehouse
from tsrate.platform.publish import export_parquet, publish


def refuse_to_delete(monkeypatch, suffix: str) -> None:
    """The filesystem refuses to delete files whose names end in ``suffix`` (as root, file
    modes cannot make a file undeletable; shutil.rmtree and Path.unlink go through os.unlink)."""
    real_unlink = os.unlink

    def refusing_unlink(path, *args, **kwargs):
        if os.fspath(path).endswith(suffix):
            raise PermissionError(1, "Operation not permitted", os.fspath(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refusing_unlink)


def tables(snapshot: Path) -> set[str]:
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        rows = con.execute("select schema_name, table_name from duckdb_tables()").fetchall()
    finally:
        con.close()
    return {f"{schema}.{name}" for schema, name in rows}


def test_the_marts_of_a_suite_that_never_succeeded_are_left_out(tmp_path):
    """und_* marts without a succeeded understanding run are empty leftovers: not published;
    a seed of the same name is not a mart and stays; rsn_* marts of a succeeded reasoning run
    stay."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a")
    con = duckdb.connect(str(warehouse))
    try:
        con.execute("create table raw.suite_runs (suite varchar, status varchar)")
        con.execute("insert into raw.suite_runs values ('understanding', 'failed')")
        con.execute("insert into raw.suite_runs values ('reasoning', 'succeeded')")
        con.execute("create table marts.und_scores as select 1 as x")
        con.execute("create table seeds.und_scores as select 2 as x")
        con.execute("create table marts.rsn_scores as select 3 as x")
    finally:
        con.close()
    result = publish(warehouse, "run-a", parquet=False)
    assert tables(result.path) == {
        "marts.scores",
        "marts.rsn_scores",
        "seeds.systems",
        "seeds.und_scores",
        "main.published_runs",
    }
    assert result.row_counts == {
        "marts.rsn_scores": 1,
        "marts.scores": 3,
        "seeds.systems": 1,
        "seeds.und_scores": 1,
    }


def test_a_snapshot_path_whose_folders_do_not_exist_yet(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a")
    target = tmp_path / "shared" / "bi" / "tsrate.duckdb"
    result = publish(warehouse, "run-a", target=target)
    assert result.path == target and target.is_file()
    assert (target.parent / "parquet" / "marts" / "scores.parquet").is_file()


def test_a_reader_beside_the_publisher_opens_the_new_file_read_only(tmp_path):
    """``beside`` may read the staging file read-only (the run's report does, in a thread of
    this process): the publisher's own connection is read-only by then too, so DuckDB lets
    both share the file; what the reader sees is the whole new snapshot."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a", rows=4)
    seen: list = []

    def beside(staging: Path):
        con = duckdb.connect(str(staging), read_only=True)
        try:
            seen.append(con.execute("select count(*) from marts.scores").fetchone()[0])
            seen.append(con.execute("select run_id from published_runs").fetchall())
        finally:
            con.close()
        return lambda: seen.append("waited")

    result = publish(warehouse, "run-a", beside=beside)
    assert seen == [4, [("run-a",)], "waited"]
    assert tables(result.path) >= {"marts.scores", "seeds.systems"}


def test_failing_data_tests_without_parquet_raise_their_own_error(tmp_path):
    """before_swap raising (the build's data tests failed) with no Parquet written: the
    caller sees that error, the previous snapshot stays and no leftover remains."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a")
    snapshot = publish(warehouse, "run-a", parquet=False).path
    before = snapshot.read_bytes()
    tiny_warehouse(warehouse, "run-b", rows=5)

    def tests_failed():
        raise RuntimeError("data tests failed")

    with pytest.raises(RuntimeError, match="data tests failed"):
        publish(warehouse, "run-b", parquet=False, before_swap=tests_failed)
    assert snapshot.read_bytes() == before
    assert not list(snapshot.parent.glob(".*.partial"))


def test_a_leftover_the_filesystem_will_not_delete_does_not_stop_the_publish(tmp_path, monkeypatch):
    """Leftovers of killed publishes are removed as far as possible; one file that cannot
    be deleted (here: the filesystem refuses it) must not fail the publish."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a")
    published = tmp_path / "published"
    stuck = published / "parquet-runs" / ".killed.partial" / "marts" / "stuck.parquet"
    stuck.parent.mkdir(parents=True)
    stuck.write_text("half written")
    refuse_to_delete(monkeypatch, "stuck.parquet")
    result = publish(warehouse, "run-a")
    assert tables(result.path) >= {"marts.scores", "seeds.systems"}
    assert (published / "parquet").resolve().name == "run-a"
    assert stuck.exists()  # the refusal happened: the file is still there


def test_an_old_run_folder_that_cannot_be_pruned_does_not_fail_the_publish(tmp_path, monkeypatch):
    """Run folders older than the previous one are pruned after the swap, as far as
    possible: the publish has succeeded by then and must say so."""
    warehouse = tmp_path / "tsrate.duckdb"
    published = tmp_path / "published"
    for run_id in ("run-a", "run-b"):
        tiny_warehouse(warehouse, run_id)
        publish(warehouse, run_id)
    stuck = published / "parquet-runs" / "run-a" / "stuck.bin"
    stuck.write_text("held by a reader")
    refuse_to_delete(monkeypatch, "stuck.bin")
    tiny_warehouse(warehouse, "run-c")
    result = publish(warehouse, "run-c")
    assert (published / "parquet").resolve().name == "run-c"
    assert result.row_counts["marts.scores"] == 3
    assert stuck.exists()  # the refusal happened
    assert not (published / "parquet-runs" / "run-a" / "marts").exists()  # the rest went


def test_publishing_while_a_reader_in_this_process_holds_the_snapshot(tmp_path):
    """A read-only reader of the published snapshot in this process (a report, a query)
    does not stop the next publish: the publisher reads the snapshot read-only too."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a")
    snapshot = publish(warehouse, "run-a").path
    tiny_warehouse(warehouse, "run-b")
    publish(warehouse, "run-b")
    reader = duckdb.connect(str(snapshot), read_only=True)
    try:
        tiny_warehouse(warehouse, "run-c")
        publish(warehouse, "run-c")
        kept = sorted(p.name for p in (snapshot.parent / "parquet-runs").iterdir())
        assert kept == ["run-b", "run-c"]
    finally:
        reader.close()


def test_the_manifest_is_indented_by_two_with_sorted_keys(tmp_path):
    """manifest.json is meant for people and diffs between runs: two-space indents, keys
    sorted, so two runs' manifests differ only where the tables do."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a", rows=2)
    result = publish(warehouse, "run-a")
    text = (result.parquet_path / "manifest.json").read_text()
    lines = text.splitlines()
    assert lines[0] == "{"
    assert lines[1] == '  "marts/scores.parquet": {'
    assert lines[2] == '    "columns": {'
    assert lines[3] == '      "item": {'
    assert lines[4] == '        "description": "The item number.",'
    assert lines[5] == '        "type": "BIGINT"'
    keys = [line.strip().split('"')[1] for line in lines if line.startswith('  "')]
    assert keys == ["marts/scores.parquet", "published_runs.parquet", "seeds/systems.parquet"]


def test_a_table_name_with_a_slash_is_written_in_a_subfolder(tmp_path):
    """Every published table lands as a file, whatever DuckDB allowed as its name: a mart
    named 'odd/name' is written to marts/odd/name.parquet (two folders below the export)."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a")
    con = duckdb.connect(str(warehouse))
    try:
        con.execute('create table marts."odd/name" as select 7 as x')
    finally:
        con.close()
    result = publish(warehouse, "run-a")
    written = result.parquet_path / "marts" / "odd" / "name.parquet"
    check = duckdb.connect()
    try:
        assert check.execute(f"select x from read_parquet('{written}')").fetchall() == [(7,)]
    finally:
        check.close()


def test_export_into_folders_that_do_not_exist_yet(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a", rows=2)
    snapshot = publish(warehouse, "run-a", parquet=False).path
    destination = tmp_path / "exports" / "bi" / "tsrate"
    written = export_parquet(snapshot, destination)
    assert destination / "marts" / "scores.parquet" in written
    assert (
        json.loads((destination / "manifest.json").read_text())["marts/scores.parquet"]["rows"] == 2
    )


def test_export_while_a_reader_in_this_process_holds_the_snapshot(tmp_path):
    """The export reads the snapshot read-only, so a reader of it in this process (a query,
    a report) does not stop it."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a", rows=2)
    snapshot = publish(warehouse, "run-a", parquet=False).path
    reader = duckdb.connect(str(snapshot), read_only=True)
    try:
        written = export_parquet(snapshot, tmp_path / "bi")
    finally:
        reader.close()
    assert tmp_path / "bi" / "marts" / "scores.parquet" in written


def test_a_failed_export_raises_its_own_error_even_when_cleaning_up_fails(tmp_path, monkeypatch):
    """A table whose file name is too long for the filesystem stops the export; the
    half-written folder is removed as far as possible, and the error the caller sees is the
    export's (DuckDB's), not the cleanup's."""
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a", rows=2)
    con = duckdb.connect(str(warehouse))
    try:
        con.execute(f'create table marts."{"z" * 300}" as select 1 as x')
    finally:
        con.close()
    snapshot = publish(warehouse, "run-a", parquet=False).path
    refuse_to_delete(monkeypatch, "scores.parquet")  # written before the long name
    with pytest.raises(duckdb.Error):
        export_parquet(snapshot, tmp_path / "bi")
    assert not (tmp_path / "bi").exists()


def test_an_earlier_export_that_cannot_be_removed_whole_does_not_fail_the_export(
    tmp_path, monkeypatch
):
    warehouse = tmp_path / "tsrate.duckdb"
    tiny_warehouse(warehouse, "run-a", rows=2)
    snapshot = publish(warehouse, "run-a", parquet=False).path
    destination = tmp_path / "bi"
    export_parquet(snapshot, destination)
    (destination / "stuck.bin").write_text("held open by a BI tool")
    refuse_to_delete(monkeypatch, "stuck.bin")
    tiny_warehouse(warehouse, "run-b", rows=5)
    publish(warehouse, "run-b", parquet=False)
    export_parquet(snapshot, destination)
    manifest = json.loads((destination / "manifest.json").read_text())
    assert manifest["marts/scores.parquet"]["rows"] == 5
    assert not (destination / "stuck.bin").exists()  # left behind in the old folder only


def test_a_run_published_again_gets_a_folder_of_its_own_and_readers_keep_theirs(tmp_path):
    """`tsrate build` publishes a run that `tsrate run` published already: the second
    publication rewrote the run's Parquet folder in place, under the readers in it (the
    link pointed at the folder being deleted)."""
    warehouse = tmp_path / "tsrate.duckdb"
    published = tmp_path / "published"
    tiny_warehouse(warehouse, "run-a", rows=3)
    publish(warehouse, "run-a")
    first = published / "parquet-runs" / "run-a" / "marts" / "scores.parquet"
    reader = first.open("rb")  # a BI tool in the middle of a refresh
    try:
        tiny_warehouse(warehouse, "run-a", rows=5)  # rebuilt marts of the same run
        result = publish(warehouse, "run-a")
        assert (published / "parquet").resolve().name == "run-a.2"
        assert result.row_counts["marts.scores"] == 5
        assert first.exists() and len(reader.read()) == first.stat().st_size  # untouched
    finally:
        reader.close()
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        rows = con.execute(
            "select run_id, parquet_path from published_runs order by published_at"
        ).fetchall()
    finally:
        con.close()
    assert rows == [("run-a", "parquet-runs/run-a"), ("run-a", "parquet-runs/run-a.2")]
    tiny_warehouse(warehouse, "run-b")
    publish(warehouse, "run-b")  # the previous publication stays, older ones go
    kept = sorted(p.name for p in (published / "parquet-runs").iterdir())
    assert kept == ["run-a.2", "run-b"]
