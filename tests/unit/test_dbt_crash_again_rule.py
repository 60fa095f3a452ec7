"""When a failed build is built again (``dbt_runner.again_on_one_thread``): only a
``tsrate-build`` dbt itself crashed in (the child's ``dbt build failed:`` line, exit 2), once,
on one thread; a node's failure, another command or a second attempt is not."""

from __future__ import annotations

from tsrate.platform.dbt_runner import THREADS, DbtError, again_on_one_thread


def crashed(text: str | None) -> DbtError:
    error = DbtError("dbt tsrate-build failed (exit 2)")
    error.crash = text
    return error


def test_a_crash_is_built_again_on_one_thread_with_the_same_env_and_one_line_said():
    said: list[str] = []
    env = {"TSRATE_RUN_ID": "r"}
    again = again_on_one_thread(crashed("boom"), ["tsrate-build"], env, said.append)
    assert again == {"TSRATE_RUN_ID": "r", THREADS: "1"}
    assert env == {"TSRATE_RUN_ID": "r"}  # the caller's dict untouched
    assert len(said) == 1 and "(boom)" in said[0] and "on one thread" in said[0]


def test_no_second_attempt_for_a_failure_another_command_or_one_thread_already():
    said: list[str] = []
    assert again_on_one_thread(crashed(None), ["tsrate-build"], {}, said.append) is None
    assert again_on_one_thread(crashed("x"), ["docs", "generate"], {}, said.append) is None
    assert again_on_one_thread(crashed("x"), [], None, said.append) is None
    assert again_on_one_thread(crashed("x"), ["tsrate-build"], {THREADS: "1"}, said.append) is None
    assert said == []
