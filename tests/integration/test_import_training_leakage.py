"""An import that states its model's training cutoff (``--metadata training_cutoff=...``) is
judged for leakage like a seeded system with one, by the real project's dbt build.

Three systems imported into the import study (tests/support/import_study.py, windows from
October to December 2022): ``cut_model`` states a corpus and a cutoff months before every
window, ``mid_model`` a cutoff alone, on one of the study's origins, and ``plain_model``
nothing. window_leakage calls a window 'after cutoff' (not in the training data) exactly
when its first target day (the trading day after its origin) is after the cutoff: every
window of cut_model, the windows of mid_model whose origin is on or after the cutoff (the
cutoff is a trading day, so an earlier origin's first target day is on or before it), none
of plain_model's. ``none_model`` states the systems seed's ``none:`` form (no training):
its windows are judged as the seed's baseline naive's are ('no training'). stg_systems and run_provenance carry what each stated, a reason naming
what is not recorded. The values' checks and storage: tests/unit/test_import_training_data.py.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from tests.integration.imported_system import prediction_file
from tests.support.import_study import STUDY
from tests.support.warehouses import ingest, read
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import import_forecasts, read_metadata

pytestmark = pytest.mark.slow

CORPUS = "public price series up to mid 2022"
#: the systems seed's 'none:' form, as an import states it
NO_TRAINING = "none: fitted on each window's own context only"


def test_a_stated_cutoff_before_a_window_rules_its_leakage_out(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    predictions, _ = prediction_file(warehouse, tmp_path)
    origins = sorted(pd.to_datetime(pd.read_csv(predictions)["window_end_date"]).dt.date.unique())
    mid = origins[len(origins) // 2]
    stated = {
        "cut_model": ["training_cutoff=2022-06-30", f"training_corpus={CORPUS}"],
        "mid_model": [f"training_cutoff={mid.isoformat()}"],
        "none_model": [f"training_corpus={NO_TRAINING}"],
        "plain_model": [],
    }
    with connect(warehouse) as con:
        for system_id, items in stated.items():
            metadata = read_metadata([f"display_name={system_id}", *items])
            run_id = import_forecasts(
                con, predictions, system_id, STUDY, workers=1, metadata=metadata,
                baselines=system_id == "cut_model",
            ).run_id  # fmt: skip

    dbt.build(
        run_id=run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda _: None,
        select="+window_leakage +run_provenance",
    )

    systems = read(
        warehouse,
        "select system_id, training_corpus, training_cutoff, training_reason "
        "from staging.stg_systems where origin = 'imported' order by system_id",
    )
    assert systems["system_id"].tolist() == ["cut_model", "mid_model", "none_model", "plain_model"]
    assert systems["training_corpus"].tolist()[0] == CORPUS
    assert systems["training_corpus"].tolist()[2] == NO_TRAINING
    assert systems["training_corpus"].isna().tolist() == [False, True, False, True]
    assert [None if pd.isna(d) else d.date() for d in systems["training_cutoff"]] == [
        dt.date(2022, 6, 30), mid, None, None,
    ]  # fmt: skip
    assert systems["training_reason"].tolist()[1:] == [
        "imported predictions: their training corpus is not recorded",
        "imported predictions: their training cutoff is not recorded",
        "imported predictions: their training data is not recorded",
    ]
    assert pd.isna(systems["training_reason"].iloc[0])
    provenance = read(
        warehouse,
        "select distinct system_id, training_data, training_cutoff from marts.run_provenance "
        "where system_id = 'cut_model'",
    )
    assert provenance.values.tolist() == [["cut_model", CORPUS, pd.Timestamp("2022-06-30")]]

    leakage = read(
        warehouse,
        "select system_id, window_end_date, in_training_data, leakage_basis "
        "from marts.window_leakage where system_id like '%_model'",
    )
    leakage["origin"] = leakage["window_end_date"].dt.date
    for system_id in stated:
        got = leakage[leakage["system_id"] == system_id]
        assert sorted(set(got["origin"])) == origins, system_id
    cut = leakage[leakage["system_id"] == "cut_model"]
    assert set(cut["leakage_basis"]) == {"after cutoff"}
    assert not cut["in_training_data"].astype(bool).any()
    plain = leakage[leakage["system_id"] == "plain_model"]
    assert set(plain["leakage_basis"]) == {"unknown"} and plain["in_training_data"].isna().all()
    judged = leakage[leakage["system_id"] == "mid_model"]
    expected = judged["origin"].map(lambda origin: "after cutoff" if origin >= mid else "unknown")
    assert judged["leakage_basis"].tolist() == expected.tolist()
    assert {"after cutoff", "unknown"} == set(expected)

    # an import stating the seed's 'none:' form is judged as the seed's baselines are: no
    # window in its training data, on the same basis as naive's (the seed row of that form)
    columns = ["origin", "ticker", "in_training_data", "leakage_basis", "leakage_reason"]
    judged = read(
        warehouse,
        "select system_id, ticker, window_end_date, in_training_data, leakage_basis, "
        "leakage_reason from marts.window_leakage where system_id in ('none_model', 'naive')",
    )
    judged["origin"] = judged["window_end_date"].dt.date
    mine = judged[judged["system_id"] == "none_model"][columns].sort_values(["origin", "ticker"])
    naive = judged[judged["system_id"] == "naive"][columns].sort_values(["origin", "ticker"])
    assert len(mine) and set(mine["origin"]) == set(origins)
    assert set(mine["leakage_basis"]) == {"no training"}
    assert (mine["in_training_data"] == False).all()  # noqa: E712 - not null either
    pd.testing.assert_frame_equal(mine.reset_index(drop=True), naive.reset_index(drop=True))
