"""Building the CLI's parser stays light: no suite module, no NumPy, pandas, DuckDB or Prefect.

Every command (and every error the parser or a validation reports) pays the parser's
imports first; a suite module pulls NumPy and more. Each check runs in a fresh interpreter
(a child process), since this test process has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tsrate.config import project_dir
from tsrate.suites import SUITES

PYTHONPATH = os.pathsep.join([str(project_dir() / "src"), str(project_dir())])
HEAVY = ("numpy", "pandas", "duckdb", "prefect", "torch", "flows")


def _modules_after(code: str) -> list[str]:
    """The module names imported by ``code`` in a fresh interpreter (printed as JSON)."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    suites = tuple(f"tsrate.suites.{name}" for name in (*SUITES, "publishing"))
    return [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(suites)]


def test_building_the_parser_imports_no_suite_module_and_no_numpy() -> None:
    modules = _modules_after("from tsrate.cli import build_parser\nbuild_parser()")
    assert "tsrate.cli" in modules  # the probe did run
    assert _heavy(modules) == []


def test_a_parse_error_and_a_core_command_parse_stay_light() -> None:
    code = (
        "from tsrate.cli import build_parser\n"
        "p = build_parser()\n"
        "p.parse_args(['run', '--systems', 'arma'])\n"
        "try:\n    p.parse_args(['run', '--no-such-flag'])\nexcept SystemExit:\n    pass\n"
    )
    assert _heavy(_modules_after(code)) == []


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_a_suite_command_still_parses_with_its_own_options(suite: str) -> None:
    """The suite's actions are added when its command is used: `run` and `report` parse,
    set their function, and only then is that suite's module imported."""
    code = (
        "from tsrate.cli import build_parser\n"
        f"args = build_parser().parse_args(['suite', {suite!r}, 'run'])\n"
        "assert callable(args.func), args\n"
        f"args = build_parser().parse_args(['suite', {suite!r}, 'report', '--output', 'x.html'])\n"
        "assert args.output == 'x.html' and callable(args.func), args\n"
    )
    modules = _modules_after(code)
    assert SUITES[suite].module in modules
    others = [s.module for name, s in SUITES.items() if name != suite]
    assert not [m for m in others if m in modules]


def test_an_unknown_suite_action_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tsrate.cli", "suite", "reasoning", "fly"],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "invalid choice: 'fly'" in result.stderr and "report" in result.stderr
