"""Commands stay light: building the CLI's parser imports no suite module, no NumPy, pandas,
DuckDB or Prefect; a refused study, query or preset is reported before Prefect, dbt or
pandas is imported.

Every command (and every error the parser or a validation reports) pays the parser's
imports first; a suite module pulls NumPy and more. Each check runs in a fresh interpreter
(a child process), since this test process has imported everything already."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tsrate.config import project_dir
from tsrate.suites import SUITES

#: The paper preset's companies (tests/unit/test_presets.py checks the preset holds them).
PAPER_TICKERS = ["META", "GOOG", "PFE", "MRK", "WFC", "C"]
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


PROBE = """
import sys
from tsrate.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("prefect", "dbt", "torch", "flows.pipeline", "skfolio") if m in sys.modules)
print("exit", code, "heavy", heavy)
"""


def _run_cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "TSRATE_WAREHOUSE": str(tmp_path / "absent" / "tsrate.duckdb"),
        "PYTHONPATH": PYTHONPATH,
    }
    env.pop("TSRATE_PROJECT_DIR", None)
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=project_dir(),
        timeout=120,
    )


def test_tsrate_run_fails_before_prefect_is_imported(tmp_path):
    done = _run_cli(["run", "--systems", "arma"], tmp_path)
    assert done.stdout.strip() == "exit 2 heavy []", done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "tsrate: error: the study has 1 problem; nothing was run: unknown system 'arma' "
        "(did you mean 'arima'?); see `tsrate systems` (--systems, seeds/systems.csv)",
    ]
    assert not (tmp_path / "absent").exists()  # the check writes nothing


def test_the_default_check_imports_neither_pandas_nor_the_estimators(tmp_path):
    probe = (
        "import sys\n"
        "from tsrate.robustness.study import check_study\n"
        "check_study({'study_tickers': 'AAPL,MSFT'}, 'skfolio', None, sys.argv[1])\n"
        "print(sorted(m for m in ('pandas', 'sklearn', 'tsrate.methods.causal.estimators') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    env.pop("TSRATE_PROJECT_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "absent.duckdb")],
        capture_output=True,
        text=True,
        env=env,
        cwd=project_dir(),
        timeout=120,
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_refused_statement_is_reported_before_pandas_is_imported(tmp_path):
    """The statement is checked first: a refusal costs no pandas import (0.3 s). In a fresh
    interpreter, since this test process has pandas loaded already."""
    code = (
        "import sys\n"
        "from tsrate import TsrateError\n"
        "from tsrate.platform.query import query\n"
        "try:\n"
        f"    query('drop table marts.scores', warehouse={str(tmp_path / 'w.duckdb')!r})\n"
        "except TsrateError as exc:\n"
        "    print('refused:', exc)\n"
        "print('pandas loaded:', 'pandas' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "refused: DROP statements are refused" in out
    assert "pandas loaded: False" in out


def _env(warehouse: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["TSRATE_WAREHOUSE"] = str(warehouse)
    env["PYTHONPATH"] = str(project_dir() / "src")
    env.pop("TSRATE_DEBUG", None)
    return env


def test_offline_refusal_is_one_line_fast_and_imports_nothing_heavy(tmp_path):
    code = (
        "import sys, json\n"
        "from tsrate.cli import main\n"
        "status = main(['run', '--preset', 'paper'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'prefect', 'dbt', 'torch', 'statsmodels'})\n"
        "print(json.dumps({'status': status, 'heavy': heavy}))\n"
    )
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_env(tmp_path / "absent.duckdb"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Fast = the refusal's own work (interpreter start included: about 0.25 s of CPU on a
    # quiet 2-core box) under 2 s of CPU. Wall time follows the machine's load (other jobs
    # beside the suite made the old 2 s wall limit flaky), so it only bounds waiting (a
    # network attempt, a timeout) at 5 s, about 15x the quiet 0.3 s.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 2.0, cpu
    assert elapsed < 5.0, elapsed
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"status": 2, "heavy": []}
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("tsrate: error: preset 'paper' needs daily closes of ")
    for ticker in PAPER_TICKERS:
        assert ticker in line
    assert "2023-03-28..2024-04-22 (at least 100 trading days each), not found in the " in line
    assert "--file PRICES.csv" in line and "--source yahoo" in line
    assert not (tmp_path / "absent.duckdb").exists()  # nothing written
