"""`tsrate systems` reports availability without importing torch or transformers (issue 29:
the listing must take < 2 s; importing torch alone takes seconds on the reference machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

PROBE = """
import contextlib, io, json, sys
from tsrate.cli import main
sys.argv = ["tsrate", "systems"]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main()
    except SystemExit as exc:
        code = exc.code
heavy = sorted(m for m in ("torch", "transformers", "chronos", "skfolio", "sklearn")
               if m in sys.modules)
print(json.dumps({"code": code, "heavy": heavy, "lines": out.getvalue().splitlines()}))
"""


def test_listing_systems_imports_no_model_library():
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["code"] in (0, None)
    assert report["heavy"] == [], f"`tsrate systems` imported {report['heavy']}"
    # the first line of each system's entry (a long reason goes on, indented, below it)
    listed = {line.split()[0] for line in report["lines"] if line and not line[0].isspace()}
    seed = (SRC.parent / "seeds" / "systems.csv").read_text().splitlines()[1:]
    assert listed == {row.split(",")[0] for row in seed if row}


def test_sample_tickers_match_skfolio_loader():
    from skfolio.datasets import load_sp500_dataset

    from tsrate.systems.vit_num_spec import sample_tickers

    assert sample_tickers() == sorted(str(c) for c in load_sp500_dataset().columns)
