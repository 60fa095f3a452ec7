"""What a rating is cited with: ``marts.run_provenance.analysis_settings`` lists every dbt var
a core or suite model reads to compute a published number (read from the models' own text,
so a var added later without being recorded fails here), and the report's provenance
section shows the study id, the run and the settings from hand-built rows (a changed value
shown as it is, the confidence levels with their weights, an older snapshot without the
column said to be so)."""

from __future__ import annotations

import json
import re

import pandas as pd

from tsrate.config import project_dir, project_vars
from tsrate.robustness.report.probabilistic import provenance_section

#: vars that choose which run or suite run the marts describe, not how it is analysed: the
#: run is run_provenance.run_id, the scope its analysis_settings' run_scope
SELECTION_VARS = {
    "run_id",
    "study_id",
    "run_scope",
    "interp_suite_run_id",
    "und_suite_run_id",
    "rsn_suite_run_id",
}
VAR_CALL = re.compile(r"""\bvar\(\s*['"]([a-z_0-9]+)['"]""")


def recorded_vars() -> list[str]:
    text = (project_dir() / "models" / "marts" / "run_provenance.sql").read_text()
    block = re.search(r"set analysis_vars = \[(.*?)\]", text, re.S)
    assert block, "run_provenance.sql lists its analysis vars in analysis_vars"
    return re.findall(r"'([a-z_0-9]+)'", block.group(1))


def vars_read_by_models() -> dict[str, str]:
    """var -> the first model file that reads it (SQL models and Python models' YAML)."""
    root = project_dir()
    found: dict[str, str] = {}
    files = [*sorted((root / "models").rglob("*.sql")), *sorted((root / "models").rglob("*.yml"))]
    files += sorted((root / "python_models").rglob("*.yml"))
    files += sorted((root / "python_models").rglob("*.py"))
    for path in files:
        if path.name == "run_provenance.sql":
            continue
        for name in VAR_CALL.findall(path.read_text()):
            found.setdefault(name, str(path.relative_to(root)))
    return found


def test_every_var_a_model_reads_is_recorded_in_the_analysis_settings():
    recorded = set(recorded_vars())
    read = vars_read_by_models()
    assert {"causal_seed", "bootstrap_seed", "rating_levels"} <= set(read)  # the scan sees them
    missing = {name: path for name, path in read.items() if name not in recorded | SELECTION_VARS}
    assert not missing, f"read by a model, not recorded in run_provenance: {missing}"


def test_every_recorded_var_is_a_var_of_the_project():
    names = recorded_vars()
    assert len(names) == len(set(names))
    unknown = [name for name in names if name not in project_vars()]
    assert not unknown, unknown


SETTINGS = {
    "rating_levels": 3,
    "causal_seed": 7,
    "baseline_families": ["baseline", "statistical"],
    "confidence_levels": [
        {"confidence": 0.95, "weight": 1.0},
        {"confidence": 0.75, "weight": 0.8},
    ],
    "run_scope": "study",
}


def provenance(**row) -> pd.DataFrame:
    base = dict(
        run_id="run-1", system_id="a", tsrate_version="1.2", git_revision="0123456789abcdef",
        git_reason=None, dbt_version="1.9", duckdb_version="1.2", study_id="e2ce903ba5bbe603",
        study_hash="150ae740aad364f2", analysis_settings=json.dumps(SETTINGS), price_rows=10,
        price_rows_fingerprint="ffff", partitions=1, partitions_fingerprint="aaaa",
        training_data="none: no training", training_cutoff=pd.NaT, training_data_reason=None,
    )  # fmt: skip
    return pd.DataFrame([{**base, **row}, {**base, **row, "system_id": "b"}])


def bare(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_report_says_what_to_cite_and_every_analysis_setting():
    text = bare(provenance_section(provenance()))
    assert "To cite these ratings: study e2ce903ba5bbe603 (the id tsrate studies shows)" in text
    assert "run run-1," in text
    assert "150ae740aad364f2" not in text  # the study hash is not the id to cite
    assert "causal_seed 7;" in text and "rating_levels 3;" in text
    assert "baseline_families baseline, statistical;" in text
    assert "confidence_levels 95 % (weight 1.0), 75 % (weight 0.8);" in text
    assert "run_scope study." in text
    assert "reproduces every rating exactly and float means to about 1e-12" in text
    # another value is shown as it is, not a default
    other = dict(SETTINGS, causal_seed=11)
    text = bare(provenance_section(provenance(analysis_settings=json.dumps(other))))
    assert "causal_seed 11;" in text and "causal_seed 7" not in text


def test_a_snapshot_without_the_settings_says_they_were_not_recorded():
    older = provenance().drop(columns=["analysis_settings", "study_id"])
    text = bare(provenance_section(older))
    assert "Analysis settings: not recorded in this snapshot" in text
    assert "To cite these ratings: run run-1," in text
