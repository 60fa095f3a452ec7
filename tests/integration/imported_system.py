"""The system the integration tests import black-box and register with metadata
(``--metadata``, no seed row): its metadata file, its prediction file on the import study
(tests/support/import_study.py: clean actuals + 1), and the CLI that imports it, run as a
user runs it. Shared by test_import_metadata and test_study_accumulation; no test here."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.import_study import STUDY, prediction_grid
from tsrate.config import project_dir
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.plan import load_series

METADATA_YAML = """\
display_name: External LLM (imported)
modality: numeric
family: foundation
purpose: general-purpose
architecture: decoder-only
is_foundation_model: true
accepted_perturbations: [P0, P1, P2, P3]
description: Forecasts made elsewhere; the clean actuals plus 1.
"""


def tsrate_cli(warehouse, *args):
    return subprocess.run(
        [sys.executable, "-m", "tsrate.cli", *args],
        env=dict(os.environ, TSRATE_WAREHOUSE=str(warehouse)),
        cwd=project_dir(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def prediction_file(warehouse, folder):
    """The import study's full grid as ``external_llm.csv`` in ``folder``, and its number of
    windows (per perturbation)."""
    with connect(warehouse) as con:
        series = load_series(con, STUDY)
    path = folder / "external_llm.csv"
    prediction_grid(series).to_csv(path, index=False)
    return path, sum(len(s.end_positions) for s in series.values())
