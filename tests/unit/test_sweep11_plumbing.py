"""The suites' shared run options (tsrate.suites.commandline) and the flows' entrypoint
loader (tsrate.platform.entrypoints) against the small errors a mutation sweep plants in
them (round 11; survivors: tests/planted/sweep11_plumbing.json).

* ``tsrate suite <name> run`` for each of the three suites, through the real parser of
  ``tsrate``: ``--lock-timeout`` is 0.0 seconds by default (fail at once, as every writing
  command: docs/operations.md) and takes a number; ``--no-build`` is off unless given;
  understanding and interpretability are ``--small`` unless ``--paper`` (not both);
* ``str_list`` splits on commas and spaces and drops empty parts;
* ``load_entrypoint``: a flow whose package is not importable is loaded from the folder
  of ``dbt_project.yml`` (``TSRATE_PROJECT_DIR`` here: a tiny project of the test's own),
  while a missing module that the flow itself imports is raised as it is (no fallback, the
  import path left alone).
"""

from __future__ import annotations

import sys

import pytest

from tsrate import cli
from tsrate.platform.entrypoints import load_entrypoint
from tsrate.suites.commandline import str_list

SUITES = ["interpretability", "reasoning", "understanding"]
SIZED = ["interpretability", "understanding"]


def _run_args(suite: str, *extra: str):
    return cli.build_parser().parse_args(["suite", suite, "run", *extra])


@pytest.mark.parametrize("suite", SUITES)
def test_a_suite_run_fails_at_once_on_a_held_lock_unless_given_a_timeout(suite: str) -> None:
    args = _run_args(suite)
    assert args.lock_timeout == 0.0 and isinstance(args.lock_timeout, float)
    assert args.no_build is False
    args = _run_args(suite, "--lock-timeout", "2.5", "--no-build")
    assert args.lock_timeout == 2.5 and args.no_build is True
    assert callable(args.func)


@pytest.mark.parametrize("suite", SIZED)
def test_a_sized_suite_runs_small_unless_asked_for_the_paper(suite: str, capsys) -> None:
    assert _run_args(suite).config == "small"
    assert _run_args(suite, "--small").config == "small"
    assert _run_args(suite, "--paper").config == "paper"
    with pytest.raises(SystemExit) as stopped:
        _run_args(suite, "--small", "--paper")
    assert stopped.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_str_list_splits_on_commas_and_spaces() -> None:
    assert str_list("a,b c, ,d,,") == ["a", "b", "c", "d"]
    assert str_list(" ") == []


@pytest.fixture
def tiny_project(tmp_path, monkeypatch):
    """A project folder (dbt_project.yml beside a package ``r11flows`` that is on no import
    path), named by TSRATE_PROJECT_DIR; sys.path and sys.modules restored afterwards."""
    (tmp_path / "dbt_project.yml").write_text("name: tiny\n")
    package = tmp_path / "r11flows"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "hello.py").write_text("GREETING = 'hello from the project folder'\n")
    (package / "needs.py").write_text("import r11_no_such_dependency  # noqa\n")
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path))
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    for name in [n for n in sys.modules if n.startswith("r11flows")]:
        monkeypatch.delitem(sys.modules, name)
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("r11flows")]:
        del sys.modules[name]


def test_a_flow_outside_the_import_path_is_loaded_from_the_project_folder(tiny_project) -> None:
    with pytest.raises(ModuleNotFoundError):
        __import__("r11flows")  # not importable as the path stands
    assert load_entrypoint("r11flows/hello.py:GREETING") == "hello from the project folder"
    assert sys.modules["r11flows.hello"].__file__ == str(tiny_project / "r11flows" / "hello.py")


def test_a_missing_dependency_of_a_flow_is_raised_as_it_is(tiny_project) -> None:
    sys.path.insert(0, str(tiny_project))  # the package is importable; its import is not
    before = list(sys.path)
    with pytest.raises(ModuleNotFoundError) as missing:
        load_entrypoint("r11flows/needs.py:anything")
    assert missing.value.name == "r11_no_such_dependency"
    assert sys.path == before
