"""`tsrate run` checks its systems again once it holds the warehouse.

The check before the writer lock cannot read the registered language models while another
process writes the warehouse, so it lets a well-formed id it does not know through (a cron
run waiting with --lock-timeout for `tsrate register-llm`'s model must not be refused as
unknown). Under the lock the run checks those ids again, before anything is ingested: an
unknown id gets the same did-you-mean as before the lock, an imported system the same
import hint, and nothing is written."""

from __future__ import annotations

import duckdb
import pytest

from flows.pipeline import _recheck_systems, pipeline_flow
from tsrate.config import Study
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import register_system, system_metadata
from tsrate.robustness.study import StudyCheckError
from tsrate.systems import registered
from tsrate.systems.registered import check_registration


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "tsrate.duckdb"
    with connect(path) as con:
        registered.register(
            con,
            check_registration(
                system_id="my_llm", base_url="http://localhost:8000/v1", model="m",
                seed_ids=("naive",),
            ),
        )  # fmt: skip
        register_system(con, system_metadata("mymodel", {}, ["P0"], "preds.csv"), "preds.csv")
    return path


def test_a_registered_model_passes_and_the_seed_alone_needs_no_warehouse(warehouse, tmp_path):
    _recheck_systems(("naive", "my_llm"), str(warehouse))
    _recheck_systems(("naive", "arima"), str(tmp_path / "absent" / "tsrate.duckdb"))


def test_an_unknown_id_is_refused_with_a_did_you_mean(warehouse):
    with pytest.raises(StudyCheckError) as caught:
        _recheck_systems(("naive", "my_lmm"), str(warehouse))
    assert caught.value.problems == [
        "unknown system 'my_lmm' (did you mean 'my_llm'?); "
        "see `tsrate systems` (--systems, seeds/systems.csv)"
    ]


def test_an_imported_system_gets_the_import_hint(warehouse):
    with pytest.raises(StudyCheckError) as caught:
        _recheck_systems(("naive", "mymodel"), str(warehouse))
    (line,) = caught.value.problems
    assert "registered by `tsrate import`" in line and "tsrate import FILE --system mymodel" in line


def test_the_run_refuses_before_it_ingests_anything(warehouse):
    study = Study.from_vars({"systems": ["naive", "my_lmm"]})
    with pytest.raises(StudyCheckError, match="did you mean 'my_llm'"):
        pipeline_flow.fn(study=study, warehouse=str(warehouse), rate=False, source="skfolio")
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tables = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
        assert not tables & {"prices", "runs", "forecasts"}  # nothing ingested or started
