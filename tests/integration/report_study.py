"""The report end to end's study (tests/integration/test_report_marts.py,
test_report_sections.py, test_report_docs.py): a tiny real study, built, published and
reported, once per test process (a dbt child: integration tests only).

The study runs the naive, random and biased systems on four companies. So that every
section of the report has something to show, it works on a copy of the project whose
systems seed relabels them (random: a multi-modal general-purpose decoder-only foundation
model; biased: a time-series encoder-only foundation model; naive and random: the numeric
and numeric+image variants of one base model 'demo'). The systems themselves run unchanged;
the dbt build (with its data and unit tests of group_comparisons and modality_pairs) and the
report are the real ones.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.integration.builds import forecast_and_build
from tests.support.dbt_project import copy_project, seed_parse
from tests.support.warehouses import ingest, small_study
from tsrate import cli
from tsrate.platform.publish import publish

STUDY = small_study(
    systems=["naive", "random", "biased"], study_start="2022-09-01", context_length=30, horizon=5
)
#: what the report reads, and everything those marts need
REPORT_MARTS = (
    "+group_comparisons +modality_pairs +confounder_comparison +perturbation_summary "
    "+rating_stability +forecast_traces window_errors +window_inputs systems perturbations "
    "companies +paper_comparison +leaderboard"  # the verdict reads the leaderboard too
)
RELABEL = {
    # system_id: (modality, family, purpose, architecture, is_foundation_model, base_model)
    "naive": ("numeric", "baseline", "time-series", "statistical", "false", "demo"),
    "random": ("numeric+image", "foundation", "general-purpose", "decoder-only", "true", "demo"),
    "biased": ("numeric", "foundation", "time-series", "encoder-only", "true", ""),
}


def relabel_seed(path: Path) -> None:
    seed = pd.read_csv(path, dtype=str, keep_default_na=False)
    columns = ["modality", "family", "purpose", "architecture", "is_foundation_model", "base_model"]
    for system_id, values in RELABEL.items():
        seed.loc[seed["system_id"] == system_id, columns] = values
    seed.to_csv(path, index=False)


#: the built report of each test process (by its base temporary folder)
_BUILT: dict[Path, dict] = {}


def built_report(tmp_path_factory, session_parse) -> dict:
    """The study forecasted, built with dbt, published and reported from the snapshot alone:
    its root, project, warehouse, snapshot, output and run_id. Built once per test process
    and shared by the report's test modules (``tmp_path_factory``, ``session_parse``: their
    session fixtures)."""
    base = tmp_path_factory.getbasetemp()
    if base not in _BUILT:
        _BUILT[base] = _build(tmp_path_factory, session_parse)
    return _BUILT[base]


def _build(tmp_path_factory, session_parse) -> dict:
    root = tmp_path_factory.mktemp("report")
    project = copy_project(root / "project")
    relabel_seed(project / "seeds" / "systems.csv")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSRATE_PROJECT_DIR", str(project))
        warehouse = root / "warehouse" / "tsrate.duckdb"
        warehouse.parent.mkdir()
        ingest(warehouse, list(STUDY.tickers))
        # the session's parse: only the relabelled seed is parsed again
        target = seed_parse(session_parse, root / "target")
        run_id = forecast_and_build(warehouse, STUDY, target, select=REPORT_MARTS)
        snapshot = publish(warehouse, run_id).path
        output = root / "out" / "report.html"
        # the report reads the snapshot only: it must work with the live file gone
        hidden = warehouse.with_name("hidden.duckdb")
        warehouse.rename(hidden)
        try:
            code = cli.main(["report", "--snapshot", str(snapshot), "--output", str(output)])
        finally:
            hidden.rename(warehouse)
    assert code == 0
    return dict(
        root=root,
        project=project,
        warehouse=warehouse,
        snapshot=snapshot,
        output=output,
        run_id=run_id,
    )
