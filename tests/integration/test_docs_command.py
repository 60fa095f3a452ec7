"""``tsrate docs`` says its steps as tsrate does, keeps dbt's log in a file, reuses dbt's
saved parse, and fails on one line with a hint.

Real dbt children on the tiny project of the dbt runner tests (tests/integration/
runner_fixture.py): a plain ``dbt run`` builds the warehouse into the project's target folder
(where ``tsrate run``'s build keeps its parse), then ``dbt_runner.docs`` and ``tsrate docs``
write the site elsewhere:

- the lines said are tsrate's ``docs: ...`` summary (the parse and how dbt did it, the
  compile, the catalog, the site written with what it documents), none of dbt's own
  (those are in ``<warehouse folder>/logs/dbt-docs-*.log``, and said with ``verbose``;
  dbt's own ``dbt.log`` in that folder too, none in the site's);
- the first call into a new folder starts from the build's parse, a second call re-parses
  nothing, a changed model is re-parsed (and documented as changed), and a call without any
  saved parse parses everything;
- dbt's failure (a model that cannot be parsed; the warehouse held by another process) is
  one ``tsrate: error:`` line naming the problem, with the log file as its hint.
"""

from __future__ import annotations

import json
import re
import shutil

import duckdb
import pytest

from tests.integration.runner_fixture import tiny_project
from tsrate import cli
from tsrate.platform import dbt_runner as dbt

pytestmark = pytest.mark.slow


@pytest.fixture
def built(tmp_path, monkeypatch):
    """The tiny project built by ``dbt run`` into its own target folder; env
    ``TSRATE_WAREHOUSE`` names the warehouse (as ``tsrate docs`` reads it)."""
    for project, warehouse, _ in tiny_project(tmp_path, monkeypatch):
        monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
        monkeypatch.delenv("DBT_TARGET_PATH", raising=False)
        dbt.run_dbt(["run"], None, warehouse, lambda _: None)
        assert (project / "target" / dbt.PARTIAL_PARSE_FILE).is_file()
        yield project, warehouse


def docs(site, verbose=False) -> list[str]:  # noqa: ANN001 - a Path
    said: list[str] = []
    assert dbt.docs(None, said.append, site, verbose=verbose) == site.resolve()
    return said


def parse_line(said: list[str]) -> str:
    parsed = [line for line in said if line.startswith("docs: parsed in ")]
    assert len(parsed) == 1, said
    return parsed[0]


def test_docs_say_tsrates_steps_and_keep_dbts_log_in_a_file(built, tmp_path):
    _, warehouse = built
    site = tmp_path / "site"
    said = docs(site)
    assert said[0] == "docs: parsing the project..."
    assert re.fullmatch(r"docs: parsed in [\d.]+s \(.+\): 3 models, .*", parse_line(said))
    compiled = [line for line in said if line.startswith("docs: compiled ")]
    assert len(compiled) == 1 and compiled[0].endswith("reading the catalog from the warehouse")
    assert any(re.fullmatch(r"docs: catalog read in [\d.]+s", line) for line in said), said
    assert re.fullmatch(
        rf"docs: wrote {re.escape(str(site / 'static_index.html'))} "
        r"\(3 models, 3 data tests\) in [\d.]+s",
        said[-1],
    )
    assert all(line.startswith("docs: ") for line in said), said  # none of dbt's own lines
    assert (site / "static_index.html").stat().st_size > 10_000
    catalog = json.loads((site / "catalog.json").read_text())
    assert set(catalog["nodes"]) == {f"model.tiny.{m}" for m in ("numbers", "doubled", "run_info")}
    # every test is documented by its source SQL; only the models are compiled
    nodes = json.loads((site / "manifest.json").read_text())["nodes"]
    tests = [node for node in nodes.values() if node["resource_type"] == "test"]
    assert len(tests) == 3 and all(
        node["raw_code"] and not node.get("compiled_code") for node in tests
    )
    assert "ref(" not in nodes["model.tiny.doubled"]["compiled_code"]

    logs = list((warehouse.parent / "logs").glob("dbt-docs-*.log"))
    assert len(logs) == 1
    assert "Running with dbt=" in logs[0].read_text()  # dbt's whole log, kept
    # dbt's own dbt.log goes beside it, not into the site's folder
    assert "Running with dbt=" in (warehouse.parent / "logs" / "dbt.log").read_text()
    assert not (site / "logs").exists(), sorted(p.name for p in site.iterdir())

    verbose = docs(site, verbose=True)
    assert any("Running with dbt=" in line for line in verbose), verbose
    assert verbose[-1].startswith(f"docs: wrote {site / 'static_index.html'} (3 models")


def test_docs_reuse_the_builds_parse_then_their_own_and_reparse_a_changed_model(built, tmp_path):
    project, _ = built
    site = tmp_path / "site"
    # the build's parse, although this folder has none: only run_info, which reads the run
    # id while parsed (the build had none, the docs name 'latest'), is parsed again
    first = parse_line(docs(site))
    assert "(partial parse: 1 files changed, 0 added, 0 deleted)" in first, first
    assert "(partial parse: nothing changed)" in parse_line(docs(site))

    (project / "models" / "doubled.sql").write_text(
        "select n * 2 as m, n as doubled_from from {{ ref('numbers') }}\n"
    )
    assert "(partial parse: 1 files changed, 0 added, 0 deleted)" in parse_line(docs(site))
    manifest = json.loads((site / "manifest.json").read_text())
    assert "doubled_from" in manifest["nodes"]["model.tiny.doubled"]["compiled_code"]
    assert "(partial parse: nothing changed)" in parse_line(docs(site))

    # no saved parse anywhere: dbt parses the whole project, and says why
    (project / "target" / dbt.PARTIAL_PARSE_FILE).unlink()
    fresh = tmp_path / "fresh"
    assert "(full parse: saved manifest not found)" in parse_line(docs(fresh))


def test_a_site_with_a_newer_parse_than_the_builds_keeps_its_own(built, tmp_path):
    project, _ = built
    site = tmp_path / "site"
    docs(site)
    build_parse = project / "target" / dbt.PARTIAL_PARSE_FILE
    own = site / dbt.PARTIAL_PARSE_FILE
    assert not dbt.reuse_build_parse(site)  # its own is newer now
    shutil.copy(own, tmp_path / "own.msgpack")
    build_parse.touch()  # a later build's parse
    assert dbt.reuse_build_parse(site)
    assert own.read_bytes() == build_parse.read_bytes()
    assert not dbt.reuse_build_parse(site)


def error_line(argv: list[str], capsys) -> str:  # noqa: ANN001 - pytest's capsys
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def test_a_model_dbt_cannot_parse_fails_on_one_line_naming_it(built, tmp_path, capsys):
    project, warehouse = built
    (project / "models" / "broken.sql").write_text("select * from {{ ref('no_such_model') }}\n")
    line = error_line(["docs", "--output", str(tmp_path / "site")], capsys)
    assert line.startswith("tsrate: error: dbt could not generate the docs after "), line
    assert "no_such_model" in line and "broken" in line, line
    logs = list((warehouse.parent / "logs").glob("dbt-docs-*.log"))
    assert len(logs) == 1 and line.endswith(
        f"(hint: dbt's full log is {logs[0]}; `tsrate docs --verbose` shows it as it runs)"
    )


def test_a_warehouse_held_by_another_process_fails_on_one_line(built, tmp_path, capsys):
    _, warehouse = built
    with duckdb.connect(str(warehouse)):  # DuckDB's own lock, not tsrate's writer lock
        line = error_line(["docs", "--output", str(tmp_path / "site")], capsys)
    assert line.startswith("tsrate: error: dbt could not generate the docs after "), line
    assert "lock" in line.lower() and "(hint: dbt's full log is " in line, line
