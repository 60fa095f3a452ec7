"""A system registered with `--metadata` (no seed row) is rated by the real project's dbt
build and appears in every mart, labelled with its metadata.

Unlike tests/integration/test_imports.py this builds the project as it is: the imported
system reaches the marts through raw.imported_systems and stg_systems, not a seed edit.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
import yaml

from tests.integration.imported_system import METADATA_YAML, prediction_file, tsrate_cli
from tests.support.import_study import STUDY
from tests.support.warehouses import ingest, read
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts

pytestmark = pytest.mark.slow

STUDY_FLAGS = ["--tickers", "AAPL,JPM", "--start", "2022-09-01", "--end", "2022-12-28",
               "--context-length", "30", "--horizon", "5", "--systems", "naive"]  # fmt: skip
#: Mart prefixes of the interpretability, understanding and reasoning suites.
OTHER_SUITES = ("interp_", "und_", "rsn_")


def test_cli_registers_with_a_metadata_file_and_pairs(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    predictions, _ = prediction_file(warehouse, tmp_path)
    metadata = tmp_path / "external_llm.yaml"
    metadata.write_text(METADATA_YAML)

    # bad metadata: a clear message, exit 2, nothing stored
    bad = tsrate_cli(warehouse, "import", str(predictions), "--system", "external_llm",
                     *STUDY_FLAGS, "--metadata", str(metadata), "modality=audio", "colour=red")  # fmt: skip
    assert bad.returncode == 2, bad.stderr
    assert "modality 'audio'" in bad.stderr and "unknown key(s) ['colour']" in bad.stderr
    assert "Traceback" not in bad.stderr
    with connect(warehouse, read_only=True) as con:
        assert con.execute("select count(*) from raw.runs").fetchone()[0] == 0

    # the YAML file, with one key overridden on the command line
    done = tsrate_cli(warehouse, "import", str(predictions), "--system", "external_llm",
                      *STUDY_FLAGS, "--no-build", "--metadata", str(metadata),
                      "display_name=External LLM")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "registered system 'external_llm' (External LLM)" in done.stdout
    stored = read(warehouse, "select * from raw.imported_systems")
    assert stored[["display_name", "family", "is_foundation_model"]].values.tolist() == [
        ["External LLM", "foundation", True]
    ]
    assert read(warehouse, "select systems from raw.runs")["systems"].item().tolist() == [
        "naive",
        "external_llm",
    ]


def test_registered_system_is_rated_in_every_mart(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    predictions, n_windows = prediction_file(warehouse, tmp_path)
    metadata = yaml.safe_load(METADATA_YAML) | {"display_name": "External LLM"}
    with connect(warehouse) as con:
        run_id = import_forecasts(
            con, predictions, "external_llm", STUDY, workers=1, metadata=metadata
        ).run_id

    dbt.build(run_id=run_id, warehouse=warehouse, target_path=dbt_target, on_line=lambda _: None)

    systems = read(warehouse, "select * from staging.stg_systems where system_id = 'external_llm'")
    assert systems[["display_name", "origin", "modality"]].values.tolist() == [
        ["External LLM", "imported", "numeric"]
    ]
    errors = read(warehouse, "select * from marts.window_errors where system_id = 'external_llm'")
    assert len(errors) == n_windows * len(STUDY.perturbations)
    np.testing.assert_allclose(errors["max_abs_residual"], 1.0, rtol=0, atol=1e-9)
    ratings = read(warehouse, "select * from marts.ratings")
    assert set(ratings["system_id"]) == {"naive", "external_llm"}
    assert set(ratings.loc[ratings["system_id"] == "external_llm", "display_name"]) == {
        "External LLM"
    }
    # the metadata labels the groups: foundation, general-purpose, decoder-only
    groups = read(
        warehouse,
        "select distinct comparison, group_name from marts.group_comparisons "
        "where list_contains(string_split(system_ids, ' '), 'external_llm')",
    )
    assert set(map(tuple, groups.values.tolist())) == {
        ("foundation", "foundation"),
        ("modality", "uni-modal"),
        ("purpose", "general-purpose"),
        ("architecture", "decoder-only"),
    }
    sets = read(warehouse, "select * from intermediate.int_perturbation_sets_derived "
                           "where system_id = 'external_llm'")  # fmt: skip
    assert sets[["perturbation_set", "n_treatments", "is_in_systems_seed"]].values.tolist() == [
        ["P0 P1 P2 P3", 3, True]
    ]

    # every mart that names systems names this one
    with duckdb.connect(str(warehouse), read_only=True) as con:
        marts = con.execute(
            "select table_name, list(column_name) from information_schema.columns "
            "where table_schema = 'marts' group by table_name order by table_name"
        ).fetchall()
        missing = []
        for table, columns in marts:
            if table.startswith(OTHER_SUITES):
                continue  # the other suites rate language models on their own items
            if table == "paper_comparison":
                continue  # only the paper's systems (or an import named by a paper symbol)
            if "system_id" in columns:
                where = "system_id = 'external_llm'"
            elif "system_ids" in columns:
                where = "list_contains(string_split(system_ids, ' '), 'external_llm')"
            else:
                continue
            found = con.execute(f"select count(*) from marts.{table} where {where}").fetchone()[0]
            if not found:
                missing.append(table)
    assert not missing, f"marts without the imported system: {missing}"

    # readers of the published snapshot (BI tools, the report) see the registration too
    from tsrate.platform.publish import publish
    from tsrate.robustness.report.render import load_report_data, study_section

    snapshot = tmp_path / "published" / "tsrate.duckdb"
    publish(warehouse, run_id, target=snapshot, parquet=False)
    data = load_report_data(snapshot)
    registered = data.systems.set_index("system_id").loc["external_llm"]
    assert (registered["display_name"], registered["origin"]) == ("External LLM", "imported")
    assert "External LLM" in study_section(data)
