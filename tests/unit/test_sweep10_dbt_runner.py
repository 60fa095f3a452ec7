"""The dbt runner's plumbing, pinned where no process is needed (round 10's sweep).

``tsrate.platform.dbt_runner`` decides what the dbt child is given (its command line, its
environment, its working folder, its target and log folders) and how what it says comes
back: the build's summary lines always, dbt's own lines only when verbose, every line to
the log file, the "released" marker of a build that hands the warehouse back before its data
tests, and on a non-zero exit a :class:`DbtError` carrying the last summary lines (or, with
none, the last lines) and where the full log is. A build that released early is pending
until :func:`finish_build` reads its verdict (or ``kill`` throws it away).

The expectations are the documented contract, restated by hand (the exact tail of 20
summary or 40 plain lines, the folders each path is relative to). Where the runner reads a
started child, the child is a stand-in for ``subprocess.Popen`` with the attributes the
runner reads (``stdout`` lines, ``wait``, ``poll``, ``kill``); a stand-in whose output stops
at a gate checks what the runner does while the child is still running. Real children are
in ``tests/integration/test_sweep10_dbt_runner.py``.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from pathlib import Path

import pytest

from tsrate.config import project_dir
from tsrate.platform import dbt_runner as runner
from tsrate.platform.dbt_child import PROFILE_WAREHOUSE, RELEASED, SUMMARY

MARKER = f"{SUMMARY} {RELEASED}"


class Child:
    """A stand-in for a started dbt child: ``lines`` on stdout, then exit ``code``. With
    ``gate``, the output stops after ``gate_after`` lines until the gate is opened (or
    ``safety`` seconds passed: a runner that waits for the end still ends, and fails)."""

    def __init__(self, lines, code=0, gate=None, gate_after=0, safety=30.0):
        self.lines, self.code, self.gate = list(lines), code, gate
        self.gate_after, self.safety = gate_after, safety
        self.killed = self.waited = 0
        self.ended = gate is None
        self.stdout = self._stream()
        self.stdin = io.StringIO()

    def _stream(self):
        for number, line in enumerate(self.lines):
            if self.gate is not None and number == self.gate_after:
                self.gate.wait(self.safety)
            yield line + "\n"
        self.ended = True

    def wait(self):
        self.waited += 1
        return self.code

    def poll(self):
        return self.code if self.ended or self.killed else None

    def kill(self):
        self.killed += 1


@pytest.fixture(autouse=True)
def _clean_registries(monkeypatch):
    monkeypatch.delenv("TSRATE_TEST_PAUSE_AT", raising=False)
    monkeypatch.setattr(runner, "_PENDING", {})
    monkeypatch.setattr(runner, "_PREPARED", {})


def test_verbose_is_on_only_for_a_set_value(monkeypatch):
    monkeypatch.delenv("TSRATE_VERBOSE", raising=False)
    assert runner.verbose_default() is False
    for off in ("", "0", "false"):
        monkeypatch.setenv("TSRATE_VERBOSE", off)
        assert runner.verbose_default() is False, off
    for on in ("1", "yes", "true"):
        monkeypatch.setenv("TSRATE_VERBOSE", on)
        assert runner.verbose_default() is True, on


def test_the_log_folder_is_beside_the_warehouse_given_else_the_configured_one(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "env" / "tsrate.duckdb"))
    assert runner.log_folder(tmp_path / "given" / "w.duckdb") == tmp_path / "given" / "logs"
    assert runner.log_folder() == tmp_path / "env" / "logs"


def test_the_target_folder_is_the_argument_else_the_env_else_the_projects(tmp_path, monkeypatch):
    project = project_dir()
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "from-env"))
    assert runner.target_folder(tmp_path / "given") == tmp_path / "given"
    assert runner.target_folder("relative") == project / "relative"  # dbt reads it so
    assert runner.target_folder() == tmp_path / "from-env"
    monkeypatch.delenv("DBT_TARGET_PATH")
    assert runner.target_folder() == project / "target"


def test_the_childs_command_environment_and_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "env" / "other.duckdb"))
    monkeypatch.setenv("DBT_LOG_LEVEL_FILE", "debug")  # a caller's setting is kept
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "ignored"))
    warehouse = tmp_path / "deep" / "er" / "tsrate.duckdb"  # its folders do not exist yet
    target = tmp_path / "target"
    command, env, cwd = runner._command(
        ["build", "--select", "x"], {"a": 1}, warehouse, target, {"TSRATE_RUN_ID": "r1"}
    )
    project = project_dir()
    assert command == [
        sys.executable, "-m", "tsrate.platform.dbt_child", "build", "--select", "x",
        "--project-dir", str(project), "--no-use-colors", "--no-use-colors-file",
        "--log-path", str(target / "logs"), "--vars", json.dumps({"a": 1}),
    ]  # fmt: skip
    assert cwd == warehouse.parent and cwd.is_dir()
    assert env["TSRATE_WAREHOUSE"] == str(warehouse)  # absolute, for tsrate's own code
    assert env[PROFILE_WAREHOUSE] == "tsrate.duckdb"  # the name alone, for dbt's profile
    assert env["TSRATE_PROJECT_DIR"] == env["DBT_PROFILES_DIR"] == str(project)
    assert env["DBT_TARGET_PATH"] == str(target)
    assert env["TSRATE_RUN_ID"] == "r1"
    assert env["DBT_LOG_LEVEL_FILE"] == "debug"
    assert env["TSRATE_DBT_PARENT_PID"].isdigit()

    # the same warehouse again (its folder exists now); no target, no vars, no env vars:
    # dbt's default log path and the env's target folder
    command, env, cwd = runner._command(["parse"], None, warehouse, None, None)
    assert command == [
        sys.executable, "-m", "tsrate.platform.dbt_child", "parse",
        "--project-dir", str(project), "--no-use-colors", "--no-use-colors-file",
    ]  # fmt: skip
    assert env["DBT_TARGET_PATH"] == str(tmp_path / "ignored")
    assert "TSRATE_RUN_ID" not in env or env["TSRATE_RUN_ID"] != "r1"
    assert runner._command(["parse"], {}, warehouse, None, {})[0] == command  # empty vars


def test_the_configured_warehouse_is_used_when_none_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "env" / "w.duckdb"))
    _, env, cwd = runner._command(["parse"], None, None, None, None)
    assert cwd == tmp_path / "env" and env[PROFILE_WAREHOUSE] == "w.duckdb"


def test_the_build_arguments_and_the_prepared_childs_key(tmp_path):
    tags = runner.core_exclusions()
    assert tags and all(t.startswith("tag:") for t in tags)
    assert runner._build_args(None) == ["tsrate-build", "--exclude", *tags]
    assert runner._build_args("+ratings") == [
        "tsrate-build", "--exclude", *tags, "--select", "+ratings"
    ]  # fmt: skip
    warehouse = tmp_path / "w.duckdb"
    assert runner._key(warehouse, None, None) == (str(warehouse), None, None)
    assert runner._key(warehouse, "x", tmp_path / "t") == (str(warehouse), "x", str(tmp_path / "t"))


def test_every_line_reaches_the_log_and_the_caller_gets_summaries_and_verbose_lines(tmp_path):
    lines = ["dbt line one  ", "", f"{SUMMARY}  built 3 models ", "   ", "dbt line two"]
    log_file = tmp_path / "new" / "folders" / "dbt.log"  # created on demand
    said: list[str] = []
    got = runner._follow(Child(lines), ["build"], said.append, log_file, True, 0.0)
    stripped = [line.rstrip() for line in lines]
    assert got == stripped
    assert log_file.read_text() == "".join(line + "\n" for line in stripped)
    assert said == ["dbt line one", "built 3 models", "dbt line two"]  # no blank lines

    said.clear()
    log_file.write_text("old")  # an existing file in an existing folder is overwritten
    runner._follow(Child(lines), ["build"], said.append, log_file, False, 0.0)
    assert said == ["built 3 models"]  # quiet: the summary only
    assert log_file.read_text().startswith("dbt line one\n")

    said.clear()
    assert runner._follow(Child(lines), ["build"], said.append, None, False, 0.0) == stripped


def test_without_a_callback_the_lines_go_to_the_runners_log(caplog):
    with caplog.at_level("INFO", logger="tsrate.platform.dbt_runner"):
        runner._follow(Child([f"{SUMMARY} done", "plain"]), ["x"], None, None, False, 0.0)
    assert [r.getMessage() for r in caplog.records] == ["done"]


def test_released_is_set_by_the_exact_marker_line_only():
    released = threading.Event()
    lines = ["dbt", f"{SUMMARY} built 1 models", f"{MARKER} (more)", f"{SUMMARY}  {RELEASED}"]
    runner._follow(Child(lines), ["x"], lambda _: None, None, False, 0.0, released)
    assert not released.is_set()
    runner._follow(Child(["a", MARKER, "b"]), ["x"], lambda _: None, None, False, 0.0, released)
    assert released.is_set()
    # no event given: the marker is an ordinary summary line
    said: list[str] = []
    runner._follow(Child([MARKER]), ["x"], said.append, None, False, 0.0)
    assert said == [RELEASED]


def test_a_failed_child_raises_with_the_last_20_summary_lines_and_the_log(tmp_path):
    summaries = [f"{SUMMARY} s{n}" for n in range(25)]
    lines = [f"dbt {n}" for n in range(50)] + summaries
    log_file = tmp_path / "dbt.log"
    with pytest.raises(runner.DbtError) as raised:
        runner._follow(Child(lines, code=2), ["tsrate-build", "--select", "x"], lambda _: None,
                       log_file, False, 0.0)  # fmt: skip
    message = str(raised.value)
    assert message.startswith("dbt tsrate-build --select x failed (exit 2) after ")
    body = message.split(":\n", 1)[1].split("\n")
    assert body == [f"s{n}" for n in range(5, 25)] + [f"full dbt log: {log_file}"]


def test_a_failed_child_without_summaries_raises_with_its_last_40_lines():
    lines = [f"dbt {n}" for n in range(50)]
    with pytest.raises(runner.DbtError) as raised:
        runner._follow(Child(lines, code=1), ["run"], lambda _: None, None, False, 0.0)
    message = str(raised.value)
    assert message.startswith("dbt run failed (exit 1) after ")
    assert message.split(":\n", 1)[1].split("\n") == [f"dbt {n}" for n in range(10, 50)]
    assert "full dbt log" not in message


def test_exit_zero_returns_and_any_other_exit_raises():
    assert runner._follow(Child(["a"], code=0), ["x"], lambda _: None, None, False, 0.0) == ["a"]
    for code in (1, -9, 3):
        with pytest.raises(runner.DbtError, match=rf"\(exit {code}\)"):
            runner._follow(Child(["a"], code=code), ["x"], lambda _: None, None, False, 0.0)


def test_discarding_stops_the_named_prepared_child_or_all(tmp_path):
    running, exited, other = Child([]), Child([]), Child([])
    running.ended, exited.ended, other.ended = False, True, False
    exited.stdin = None  # a stream that is not there is skipped
    keys = [runner._key(tmp_path / n, None, None) for n in ("a", "b", "c")]
    for key, child in zip(keys, (running, exited, other), strict=True):
        runner._PREPARED[key] = (child, 0.0)
    runner.discard_prepared(keys[0])
    assert list(runner._PREPARED) == keys[1:]
    assert running.killed == 1 and running.waited == 1
    assert running.stdin.closed
    runner.discard_prepared(keys[0])  # gone already: nothing to do
    runner.discard_prepared()
    assert runner._PREPARED == {}
    assert exited.killed == 0 and exited.waited == 1  # an exited child is only reaped
    assert other.killed == 1 and other.stdin.closed


class ClosableStream(io.StringIO):
    pass


def test_discarding_closes_the_childs_pipes(tmp_path):
    child = Child([])
    child.stdout, child.stdin = ClosableStream(), None
    runner._PREPARED[runner._key(tmp_path, None, None)] = (child, 0.0)
    runner.discard_prepared()
    assert child.stdout.closed


def _pending(key, child, outcome, alive=False):
    gate = threading.Event()
    thread = threading.Thread(target=gate.wait, daemon=True)
    thread.start()
    if not alive:
        gate.set()
        thread.join()
    runner._PENDING[key] = (child, thread, outcome)
    return gate


def test_finish_build_raises_the_pending_builds_error_and_forgets_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "env.duckdb"))
    warehouse = tmp_path / "w.duckdb"
    error = runner.DbtError("FAIL not_null_x: 2 failing rows")
    _pending(str(warehouse), Child([]), {"error": error})
    assert runner.pending_build(warehouse) and not runner.pending_build()
    with pytest.raises(runner.DbtError) as raised:
        runner.finish_build(warehouse)
    assert raised.value is error
    assert not runner.pending_build(warehouse)
    runner.finish_build(warehouse)  # nothing pending: nothing to do

    _pending(str(warehouse), Child([]), {"lines": ["ok"]})
    runner.finish_build(warehouse)  # passed: no error
    assert not runner.pending_build(warehouse)

    # the configured warehouse when none is given
    _pending(str((tmp_path / "env.duckdb").resolve()), Child([]), {"error": error})
    assert runner.pending_build()
    with pytest.raises(runner.DbtError):
        runner.finish_build()


def test_finish_build_waits_for_a_running_child_without_killing_it(tmp_path):
    child = Child([])
    child.ended = False  # its data tests still run
    gate = _pending(str(tmp_path / "w.duckdb"), child, {"lines": []}, alive=True)
    opener = threading.Timer(0.3, gate.set)
    opener.start()
    runner.finish_build(tmp_path / "w.duckdb")
    opener.join()
    assert child.killed == 0


def test_kill_stops_a_running_child_and_drops_its_verdict(tmp_path):
    child = Child([])
    child.ended = False
    _pending(str(tmp_path / "w.duckdb"), child, {"error": runner.DbtError("late")})
    runner.finish_build(tmp_path / "w.duckdb", kill=True)
    assert child.killed == 1

    done = Child([])  # already exited: nothing to kill, and no verdict raised
    _pending(str(tmp_path / "v.duckdb"), done, {"error": runner.DbtError("late")})
    runner.finish_build(tmp_path / "v.duckdb", kill=True)
    assert done.killed == 0


def test_discard_pending_stops_every_pending_build_without_raising(tmp_path):
    children = [Child([]), Child([])]
    for number, child in enumerate(children):
        child.ended = False
        _pending(str(tmp_path / f"{number}.duckdb"), child, {"error": runner.DbtError("x")})
    runner.discard_pending()
    assert runner._PENDING == {} and [c.killed for c in children] == [1, 1]


def test_a_build_that_releases_the_warehouse_returns_while_its_data_tests_run(tmp_path):
    gate = threading.Event()
    lines = [f"{SUMMARY} built 2 models", MARKER, f"{SUMMARY} FAIL t: 1 failing rows"]
    child = Child(lines, code=1, gate=gate, gate_after=2)
    said: list[str] = []
    key = str(tmp_path / "w.duckdb")
    try:
        got = runner._follow_until_released(child, ["tsrate-build"], said.append, None, False, key)
        assert got == [] and not gate.is_set()  # returned before the child went on
        assert runner.pending_build(tmp_path / "w.duckdb")
        thread = runner._PENDING[key][1]
        assert thread.daemon  # a verdict never read does not hold the interpreter's exit
        assert said == ["built 2 models", RELEASED]
    finally:
        gate.set()
    with pytest.raises(runner.DbtError, match="FAIL t: 1 failing rows"):
        runner.finish_build(tmp_path / "w.duckdb")


def test_a_build_that_ends_before_releasing_raises_or_returns_its_lines(tmp_path):
    key = str(tmp_path / "w.duckdb")
    failed = Child([f"{SUMMARY} ERROR model m: boom"], code=1)
    with pytest.raises(runner.DbtError, match="ERROR model m: boom"):
        runner._follow_until_released(failed, ["tsrate-build"], lambda _: None, None, False, key)
    assert not runner.pending_build(tmp_path / "w.duckdb")
    plain = Child(["a", "b"], code=0)  # a plain build that never says it released
    got = runner._follow_until_released(plain, ["build"], lambda _: None, None, False, key)
    assert got == ["a", "b"] and not runner.pending_build(tmp_path / "w.duckdb")


def test_the_path_of_a_relative_warehouse_env_is_the_projects(monkeypatch):
    monkeypatch.setenv("TSRATE_WAREHOUSE", "warehouse/x.duckdb")
    assert runner.log_folder() == (project_dir() / "warehouse" / "logs").resolve()
    assert isinstance(runner.log_folder(), Path)
