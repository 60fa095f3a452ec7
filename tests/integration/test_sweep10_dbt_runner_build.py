"""tsrate's build sequence (``dbt_child.tsrate_build``) step by step, on a tiny project (round 10).

``tsrate-build`` is what every warehouse build runs: dbt parses once, builds the seeds and
models (and the unit tests when they must run), closes its read-write handle and says so,
then runs the compiled data tests itself in one read-only connection. Its exit status is
the build's verdict (0 passed, 1 a model, unit test or data test failed, 2 dbt could not
do a step, 3 a child started ahead was told not to build), and its summary lines are what
the user reads. These tests call ``tsrate_build`` in this process (dbt's programmatic
runner, as the child calls it) on a project of three models, one unit test and three data
tests, with its own DuckDB file and target folder, and check against the module's
documented sequence:

- a first full build runs the unit tests after the models, compiles the data tests, says
  it released the warehouse before the data tests run, writes dbt's artifacts and the unit
  tests' pass; the next build reuses both; a changed fixture runs the unit tests again
  beside the data tests, and a wrong one fails the build and forgets the pass;
- a partial build and ``TSRATE_ALWAYS_UNIT_TESTS=1`` run the unit tests with the models
  and record no pass; a failing model stops the build before the data tests;
- a child started ahead compiles the data tests before the go and builds with the env
  vars it is sent, or builds nothing when the go is empty;
- a selection holding a test that stores its failures takes dbt's plain build;
- each step dbt cannot do (parse, the tests' selection, their compile, the build itself,
  the unit tests, the artifacts) ends the build with status 2 and says which.

Where dbt itself must fail to run (an exception, not a failing node), its runner is wrapped
to return what dbt returns then (no result, the exception).
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import duckdb
import pytest

from tests.integration.runner_project import PROFILES, PROJECT, schema_yml  # the same tiny project
from tsrate.platform import dbt_child
from tsrate.platform.dbt_child import (
    BUILD_RESULTS,
    DATA_TEST_RESULTS,
    RELEASED,
    SUMMARY,
    UNIT_TEST_PASS,
)

pytestmark = pytest.mark.slow

RUN_INFO = """\
{% if env_var('TINY_BREAK', '') %}select no_such_column from {{ ref('numbers') }}
{% else %}select '{{ env_var("TSRATE_RUN_ID", "unset") }}' as run_id{% endif %}
"""


#: fails when a row of doubled is over TINY_LIMIT (default: none is)
NO_BIG = "select m from {{ ref('doubled') }} where m > {{ env_var('TINY_LIMIT', '100') }}\n"
#: reads run_info: fails when the run id is TINY_BAD_RUN
RUN_KNOWN = (
    "select run_id from {{ ref('run_info') }} where run_id = '{{ env_var('TINY_BAD_RUN', '-') }}'\n"
)
#: a test whose compile (not its parse) fails when TINY_COMPILE_FAIL is set
COMPILE_FAIL = """\
{% if execute and env_var('TINY_COMPILE_FAIL', '') %}{{ exceptions.raise_compiler_error('planted compile error') }}{% endif %}
select m from {{ ref('doubled') }} where m is null
"""


class Tiny:
    """The tiny project, its warehouse and target folder; :meth:`build` runs tsrate_build."""

    def __init__(self, root: Path, capsys):
        self.root, self.capsys = root, capsys
        self.project = root / "project"
        (self.project / "models").mkdir(parents=True)
        (self.project / "tests").mkdir()
        (self.project / "dbt_project.yml").write_text(PROJECT)
        (self.project / "profiles.yml").write_text(PROFILES)
        self.write("models/numbers.sql", "select 1 as n union all select 2 as n\n")
        self.write("models/doubled.sql", "select n * 2 as m from {{ ref('numbers') }}\n")
        self.write("models/run_info.sql", RUN_INFO)
        self.fixture(3, 6)
        self.write("tests/no_big.sql", NO_BIG)
        self.write("tests/run_known.sql", RUN_KNOWN)
        self.write("tests/compiles.sql", COMPILE_FAIL)
        self.warehouse = root / "wh" / "tsrate.duckdb"
        self.warehouse.parent.mkdir()
        self.target = root / "target"

    def write(self, name: str, text: str) -> None:
        (self.project / name).write_text(text)

    def fixture(self, given: int, expected: int) -> None:
        self.write("models/schema.yml", schema_yml(given, expected))

    def build(self, *args: str, stdin: str | None = None) -> tuple[int, list[str]]:
        """tsrate_build's exit status and its summary lines (without the prefix)."""
        self.capsys.readouterr()
        if stdin is not None:
            sys.stdin = io.StringIO(stdin)
        argv = [*args, "--project-dir", str(self.project), "--log-path", str(self.root / "logs")]
        argv += ["--no-use-colors", "--no-use-colors-file"]
        code = dbt_child.tsrate_build(argv)
        # the child exits here (os._exit), which releases whatever dbt still holds (its
        # read-only connection of the unit tests run beside the data tests)
        dbt_child._close_dbt_connection()
        out = self.capsys.readouterr().out.splitlines()
        return code, [line[len(SUMMARY) :].strip() for line in out if line.startswith(SUMMARY)]

    def query(self, sql: str) -> list[tuple]:
        with duckdb.connect(str(self.warehouse), read_only=True) as con:
            return con.execute(sql).fetchall()

    def results(self, name: str = BUILD_RESULTS) -> dict[str, str]:
        data = json.loads((self.target / name).read_text())["results"]
        return {r["unique_id"].split(".")[-1]: r["status"] for r in data}


@pytest.fixture
def tiny(tmp_path, monkeypatch, capsys):
    saved = dict(os.environ)
    project = Tiny(tmp_path, capsys)
    for name in list(os.environ):
        if name.startswith(("TINY_", "TSRATE_", "DBT_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(project.warehouse.parent)  # as the runner starts the child
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(project.warehouse))
    monkeypatch.setenv("TSRATE_DBT_WAREHOUSE", project.warehouse.name)
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(project.project))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(project.project))
    monkeypatch.setenv("DBT_TARGET_PATH", str(project.target))
    monkeypatch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    monkeypatch.setattr(sys, "stdin", sys.stdin)
    yield project
    dbt_child._close_dbt_connection()
    os.environ.clear()  # tsrate_build sets the go's env vars itself
    os.environ.update(saved)


def index(said: list[str], start: str) -> int:
    found = [n for n, line in enumerate(said) if line.startswith(start)]
    assert found, f"no line starting {start!r} in {said}"
    return found[0]


def test_a_full_build_in_order_then_reused_then_unit_tests_beside_then_failing(tiny):
    code, said = tiny.build()
    assert code == 0, said
    assert said[0].startswith("parsed the project in ")
    assert said[1] == "built 3 models (0 failed; Python models' own time 0.0s)"
    assert said[2] == "after the models, ran 1 unit_tests (0 failed)"
    assert said[3].startswith("models, seeds and unit tests in ")
    assert said[4] == "compiled 4 data tests" and said[5].startswith("4 data tests ready")
    assert said[6] == RELEASED
    assert said[7].startswith("data tests: 4 run in one connection") and said[7].endswith(
        "PASS=4 WARN=0 FAIL=0"
    )
    assert len(said) == 8
    results = tiny.results()
    assert results == {"numbers": "success", "doubled": "success", "run_info": "success",
                       "doubled_doubles": "pass"}  # fmt: skip
    assert (tiny.target / "run_results.json").read_text() == (
        tiny.target / BUILD_RESULTS
    ).read_text()
    assert "model.tiny.doubled" in json.loads((tiny.target / "manifest.json").read_text())["nodes"]
    assert set(tiny.results(DATA_TEST_RESULTS).values()) == {"pass"}
    assert (tiny.target / UNIT_TEST_PASS).exists()
    assert tiny.query("select m from main.doubled order by m") == [(2,), (4,)]

    code, said = tiny.build()  # nothing changed: the tests' SQL and the unit tests' pass reused
    assert code == 0, said
    assert said[1] == "data tests unchanged since their last compile: 4 reused"
    assert said[2].startswith("4 data tests ready in ")
    assert said[3] == "built 3 models (0 failed; Python models' own time 0.0s)"
    assert said[4].startswith("the unit tests were not re-run: they passed here")
    assert said[5].startswith("models, seeds and unit tests in ")
    assert said[6] == RELEASED and said[7].endswith("PASS=4 WARN=0 FAIL=0")
    assert "doubled_doubles" not in tiny.results()

    tiny.fixture(4, 8)  # a changed fixture: the unit tests run again, beside the data tests
    code, said = tiny.build()
    assert code == 0, said
    assert said[index(said, "built ") + 1].startswith("models and seeds in ")
    assert index(said, RELEASED) < index(said, "beside the data tests, ran 1 unit_tests (0 failed)")
    assert tiny.results()["doubled_doubles"] == "pass"
    key = json.loads((tiny.target / UNIT_TEST_PASS).read_text())["key"]
    assert key == dbt_child._unit_test_key(_manifest(tiny), str(tiny.warehouse))

    tiny.fixture(4, 9)  # a wrong expectation fails the build and forgets the pass
    code, said = tiny.build()
    assert code == 1, said
    assert any(line.startswith("FAIL unit_test doubled_doubles") for line in said), said
    assert "beside the data tests, ran 1 unit_tests (1 failed)" in said
    assert tiny.results()["doubled_doubles"] == "fail"
    assert not (tiny.target / UNIT_TEST_PASS).exists()
    assert any(s.endswith("PASS=4 WARN=0 FAIL=0") for s in said)  # the data tests passed

    code, said = tiny.build()  # still wrong, and no pass left to forget
    assert code == 1 and "beside the data tests, ran 1 unit_tests (1 failed)" in said, said


def _manifest(tiny):
    from dbt.cli.main import dbtRunner

    parsed = dbtRunner().invoke(["parse", "--no-write-json", "--project-dir", str(tiny.project),
                                 "--log-path", str(tiny.root / "logs")])  # fmt: skip
    assert parsed.success
    return parsed.result


def test_a_failing_data_test_fails_the_build_after_the_models(tiny, monkeypatch):
    monkeypatch.setenv("TINY_LIMIT", "3")
    code, said = tiny.build()
    assert code == 1, said
    assert index(said, RELEASED) < index(said, "FAIL no_big: 1 failing rows")
    assert said[-1].endswith("PASS=3 WARN=0 FAIL=1")
    assert (tiny.target / UNIT_TEST_PASS).exists()  # the unit tests passed all the same


def test_a_data_test_reads_the_models_this_build_made(tiny, monkeypatch):
    """The data tests run after the models: a test of run_info sees this build's run."""
    monkeypatch.setenv("TINY_BAD_RUN", "run-2")
    monkeypatch.setenv("TSRATE_RUN_ID", "run-1")
    assert tiny.build()[0] == 0
    monkeypatch.setenv("TSRATE_RUN_ID", "run-2")
    code, said = tiny.build()
    assert code == 1 and "FAIL run_known: 1 failing rows (tests/run_known.sql)" in said, said


def test_a_failing_model_stops_the_build_before_the_data_tests(tiny, monkeypatch):
    def stopped(said: list[str]) -> None:
        assert any(line.startswith("ERROR model run_info") for line in said), said
        assert said[index(said, "built 3 models (1 failed") + 1].startswith(
            "models, seeds and unit tests in "
        )
        assert said[-1].startswith("models, seeds and unit tests in ")  # nothing after it:
        # no data tests, and no unit tests run (or their pass looked up) after a failure
        assert RELEASED not in said
        assert tiny.results()["run_info"] == "error"  # the artifacts say so
        assert not (tiny.target / UNIT_TEST_PASS).exists()

    monkeypatch.setenv("TINY_BREAK", "1")
    code, said = tiny.build()  # a first build: no pass recorded yet
    assert code == 1, said
    stopped(said)
    monkeypatch.delenv("TINY_BREAK")
    assert tiny.build()[0] == 0
    assert (tiny.target / UNIT_TEST_PASS).exists()
    monkeypatch.setenv("TINY_BREAK", "1")
    code, said = tiny.build()  # the unit tests' pass is forgotten
    assert code == 1, said
    stopped(said)


def test_a_partial_build_and_the_override_run_the_unit_tests_with_the_models(tiny, monkeypatch):
    code, said = tiny.build("--select", "+doubled")
    assert code == 0, said
    assert "built 2 models, 1 unit_tests (0 failed; Python models' own time 0.0s)" in said
    assert said[index(said, "built ") + 1].startswith("models, seeds and unit tests in ")
    # only the tests of selected models (run_known reads run_info, not built here)
    assert said[-1].startswith("data tests: 3 run")
    assert not (tiny.target / UNIT_TEST_PASS).exists()

    monkeypatch.setenv("TSRATE_ALWAYS_UNIT_TESTS", "1")
    code, said = tiny.build()
    assert code == 0, said
    assert "built 3 models, 1 unit_tests (0 failed; Python models' own time 0.0s)" in said
    assert not any("unit tests were not re-run" in line for line in said)
    assert not (tiny.target / UNIT_TEST_PASS).exists()


def test_a_child_started_ahead_compiles_first_and_builds_with_the_go(tiny, monkeypatch):
    monkeypatch.setenv(dbt_child.WAIT_FOR_GO, "1")
    code, said = tiny.build(stdin=json.dumps({"TSRATE_RUN_ID": "run-ahead"}) + "\n")
    assert code == 0, said
    ahead = index(said, "4 data tests compiled ahead")
    assert ahead < index(said, "build started (dbt was started and parsed ahead)")
    assert tiny.query("select run_id from main.run_info") == [("run-ahead",)]
    assert any(line.endswith("PASS=4 WARN=0 FAIL=0") for line in said)
    # compiled ahead: the unit tests (never passed here) ran beside the data tests
    assert any(line.startswith("beside the data tests, ran 1 unit_tests") for line in said)

    code, said = tiny.build(stdin="\n")  # an empty go: nothing is built
    assert code == 3 and not any(line.startswith("built") for line in said), said
    code, said = tiny.build(stdin="")  # stdin closed
    assert code == 3, said


def test_a_test_that_stores_its_failures_takes_dbts_plain_build(tiny, monkeypatch):
    # store_failures: false stores nothing (dbt leaves store_failures_as 'ephemeral'):
    # tsrate's own build runs it
    tiny.write("tests/kept.sql", "{{ config(store_failures=false) }}\n" + NO_BIG)
    code, said = tiny.build()
    assert code == 0 and RELEASED in said and said[-1].startswith("data tests: 5 run"), said
    (tiny.project / "tests" / "kept.sql").unlink()
    tiny.write("tests/stored.sql", "{{ config(store_failures=true) }}\n" + NO_BIG)
    tiny.write("models/py_numbers.py", "def model(dbt, session):\n    return dbt.ref('numbers')\n")
    code, said = tiny.build()
    assert code == 0, said
    assert said[1] == "tests ['stored'] store failures: plain dbt build"
    assert said[2].startswith("built 4 models, 5 tests, 1 unit_tests (0 failed; Python models")
    assert RELEASED not in said

    monkeypatch.setenv("TINY_LIMIT", "3")
    code, said = tiny.build()
    assert code == 1, said
    schema = tiny.query("select schema_name from duckdb_tables() where table_name = 'stored'")
    assert tiny.query(f"select m from {schema[0][0]}.stored") == [(4,)]


def test_each_step_dbt_cannot_do_ends_the_build_with_status_2(tiny, monkeypatch):
    monkeypatch.setenv("TINY_COMPILE_FAIL", "1")
    code, said = tiny.build()
    assert code == 2 and any("compiling the data tests failed" in s for s in said), said
    assert tiny.query("select count(*) from main.doubled") == [(2,)]  # the models were built
    monkeypatch.delenv("TINY_COMPILE_FAIL")

    code, said = tiny.build("--select", "nosuchmethod:x")
    assert code == 2 and said[-1].startswith("selecting the data tests failed"), said

    tiny.write("models/broken.yml", "version: 2\nmodels: [\n")
    code, said = tiny.build()
    assert code == 2 and said == [said[0]] and said[0].startswith("dbt parse failed"), said


def _failing(monkeypatch, command: str, also_unit: bool = False):
    """dbt's runner, except that ``command`` raises inside dbt (no result, as dbt returns)."""
    import dbt.cli.main as dbt_main

    real = dbt_main.dbtRunner

    class Runner(real):
        def invoke(self, args, **kwargs):
            unit = "test_type:unit" in args
            if args[0] == command and (unit == also_unit):
                return dbt_main.dbtRunnerResult(success=False, exception=RuntimeError("planted"))
            return super().invoke(args, **kwargs)

    monkeypatch.setattr(dbt_main, "dbtRunner", Runner)


def test_dbt_failing_to_build_or_to_run_the_unit_tests_ends_with_status_2(tiny, monkeypatch):
    with monkeypatch.context() as patch:
        _failing(patch, "build")
        code, said = tiny.build()
    assert code == 2 and said[-1] == "dbt build failed: planted", said

    with monkeypatch.context() as patch:  # after the models (first build)
        _failing(patch, "test", also_unit=True)
        code, said = tiny.build()
    assert code == 2 and said[-1] == "dbt unit tests failed to run (after the models, ran): planted"

    tiny.fixture(4, 8)  # beside the data tests (their SQL cached now, the fixture changed)
    assert tiny.build()[0] == 0
    tiny.fixture(5, 10)
    with monkeypatch.context() as patch:
        _failing(patch, "test", also_unit=True)
        code, said = tiny.build()
    assert code == 2, said
    assert "dbt unit tests failed to run (beside the data tests, ran): planted" in said


def test_artifacts_that_cannot_be_written_end_the_build_with_status_2(tiny):
    assert tiny.build()[0] == 0
    (tiny.target / BUILD_RESULTS).unlink()
    (tiny.target / BUILD_RESULTS).mkdir()  # the copy cannot be written
    code, said = tiny.build()
    assert code == 2 and any(s.startswith("writing dbt's artifacts failed") for s in said), said


def _not_successful(monkeypatch, command: str, unit: bool = False):
    """dbt's runner, except that ``command`` is reported not successful although no node
    failed (as dbt reports a skipped or partly successful node: its ``interpret_results``)."""
    import dbt.cli.main as dbt_main

    real = dbt_main.dbtRunner

    class Runner(real):
        def invoke(self, args, **kwargs):
            result = super().invoke(args, **kwargs)
            if args[0] == command and (("test_type:unit" in args) == unit):
                return dbt_main.dbtRunnerResult(success=False, result=result.result)
            return result

    monkeypatch.setattr(dbt_main, "dbtRunner", Runner)


def test_dbt_saying_not_successful_fails_the_build_though_no_node_failed(tiny, monkeypatch):
    with monkeypatch.context() as patch:  # the models
        _not_successful(patch, "build")
        code, said = tiny.build()
    assert code == 1 and "built 3 models (0 failed; Python models' own time 0.0s)" in said, said
    assert RELEASED not in said

    with monkeypatch.context() as patch:  # the unit tests after the models (first build)
        _not_successful(patch, "test", unit=True)
        code, said = tiny.build()
    assert code == 1 and "after the models, ran 1 unit_tests (0 failed)" in said, said
    assert not (tiny.target / UNIT_TEST_PASS).exists()

    assert tiny.build()[0] == 0
    tiny.fixture(4, 8)
    with monkeypatch.context() as patch:  # the unit tests beside the data tests
        _not_successful(patch, "test", unit=True)
        code, said = tiny.build()
    assert code == 1 and "beside the data tests, ran 1 unit_tests (0 failed)" in said, said
    assert not (tiny.target / UNIT_TEST_PASS).exists()

    tiny.write("tests/stored.sql", "{{ config(store_failures=true) }}\n" + NO_BIG)
    with monkeypatch.context() as patch:  # dbt's plain build
        _not_successful(patch, "build")
        code, said = tiny.build()
    assert code == 1 and any(line.startswith("built ") and "(0 failed" in line for line in said)
