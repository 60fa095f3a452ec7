"""The understanding report split by section (report_figures, report_tables,
report_prompting beside report.py) writes the same HTML, byte for byte, as the single module
it came from, on a real (small) suite warehouse that asks every question zero-shot and with
a chain-of-thought instruction, so that every section is drawn, the prompting comparison
included.

The module before the split is read from the repository's history (``BEFORE``, the commit
the split started from) and loaded under a name of its own. It guards the split only: when
the report's output changes on purpose, delete this test (or point ``BEFORE`` at that
change's commit). Every public name of the old module is still importable from the old path.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tsrate.platform import dbt_runner as dbt
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BEFORE = "2b9584f"  # the last commit with src/tsrate/suites/understanding/report.py whole
PATH = "src/tsrate/suites/understanding/report.py"
SMALL = dict(train=0, validation=0, test=20, position_per_cell=2, max_length=60,
             formats=["csv"], promptings=["zero_shot", "cot"],
             datasets=["trend", "seasonality", "anomalies", "volatility"])  # fmt: skip


def module_before(tmp_path: Path):
    shown = subprocess.run(
        ["git", "show", f"{BEFORE}:{PATH}"], cwd=ROOT, capture_output=True, text=True
    )
    assert shown.returncode == 0, f"the history lacks {BEFORE} (a shallow clone?): {shown.stderr}"
    source = tmp_path / "report_before_split.py"
    source.write_text(shown.stdout)
    spec = importlib.util.spec_from_file_location("report_before_split", source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_split_report_is_the_same_html_as_before(tmp_path, dbt_target):
    from tsrate.suites.understanding import report
    from tsrate.suites.understanding.suite import open_systems, resolve_config, run_suite

    before = module_before(tmp_path)
    # its own functions and constants, and the module a test patches through it
    own = {
        n
        for n, v in vars(before).items()
        if not n.startswith("_")
        and (getattr(v, "__module__", None) == before.__name__ or n.isupper())
    }
    assert {"write_report", "chance_table", "MIN_CHART_PROMPTS"} <= own
    assert (own | {"intervals"}) - set(vars(report)) == set()  # all still import from report

    warehouse = tmp_path / "tsrate.duckdb"
    config = resolve_config("small", SMALL)
    suite_run_id, _ = run_suite(
        warehouse, config, open_systems([], references=True), progress=lambda _: None
    )
    run = {SUITES["understanding"].run_env: suite_run_id}
    dbt.run_dbt(["tsrate-build", "--select", "tag:understanding"], None, warehouse,
                lambda _: None, dbt_target, env_vars=run)  # fmt: skip
    old = before.write_report(warehouse, tmp_path / "before.html").read_bytes()
    new = report.write_report(warehouse, tmp_path / "after.html").read_bytes()
    assert b"<h2>Zero-shot against chain of thought</h2>" in new  # every section drawn
    assert b"<h2>Against chance</h2>" in new
    assert new == old
