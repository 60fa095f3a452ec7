"""Registering an imported system with its metadata (``--metadata``) instead of a seed row:
validation of every key, the files and key=value pairs it comes from, and the registration
row in ``raw.imported_systems``, on a real small warehouse. A rejected import stores nothing:
no run, no forecasts, no registration.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.import_study import RAW_TABLES, STUDY, seed_with, snapshot, write_csv
from tsrate import TsrateError
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import (
    ImportValidationError,
    import_forecasts,
    read_metadata,
    registered_systems,
    system_metadata,
)

METADATA = {
    "display_name": "My model (imported)",
    "modality": "numeric",
    "family": "foundation",
    "purpose": "general-purpose",
    "architecture": "decoder-only",
    "is_foundation_model": "true",
    "accepted_perturbations": "P0 P1 P2 P3",
    "description": "Forecasts of my model, made elsewhere.",
}


def registrations(warehouse) -> pd.DataFrame:
    with connect(warehouse) as con:
        exists = con.execute(
            "select count(*) from information_schema.tables where table_name = 'imported_systems'"
        ).fetchone()[0]
        if not exists:
            return pd.DataFrame()
        return con.execute("select * from raw.imported_systems order by registered_at").df()


def import_with(warehouse, path, metadata, system_id="my_model", **kwargs):
    with connect(warehouse) as con:
        return import_forecasts(con, path, system_id, STUDY, workers=1, metadata=metadata, **kwargs)


def assert_nothing_stored(warehouse, before, registered_before, call):
    with pytest.raises(TsrateError) as caught:
        call()
    after = snapshot(warehouse)
    for table in RAW_TABLES:
        pd.testing.assert_frame_equal(before[table], after[table], obj=f"raw.{table}")
    pd.testing.assert_frame_equal(registrations(warehouse), registered_before)
    return str(caught.value)


# -- system_metadata ----------------------------------------------------------------------------


def test_defaults_fill_what_the_metadata_leaves_out():
    row = system_metadata("my_model", {}, ["P1", "P0"], "preds.csv")
    assert row == {
        "system_id": "my_model",
        "display_name": "my_model",
        "paper_symbol": None,
        "modality": "numeric",
        "family": "imported",
        "purpose": None,
        "architecture": None,
        "is_foundation_model": None,
        "accepted_perturbations": "P0 P1",
        "description": "Predictions imported from preds.csv.",
        "base_model": None,
        "training_corpus": None,
        "training_cutoff": None,
    }
    full = system_metadata(
        "my_vlm",
        {**METADATA, "modality": "numeric+image", "accepted_perturbations": ["p0", "P4"]},
        ["P0"],
    )
    assert full["is_foundation_model"] is True and full["accepted_perturbations"] == "P0 P4"
    assert full["display_name"] == "My model (imported)"


def test_every_metadata_problem_is_named_at_once():
    with pytest.raises(TsrateError) as caught:
        system_metadata(
            "my_model",
            {
                "system_id": "x",
                "colour": "red",
                "modality": "text",
                "purpose": "fun",
                "architecture": "mixture",
                "is_foundation_model": "maybe",
                "display_name": {"nested": 1},
                "accepted_perturbations": "P0 P9",
            },
            ["P0", "P2"],
        )
    message = str(caught.value)
    for fragment in (
        "metadata of system 'my_model' rejected, nothing was stored",
        "unknown key(s) ['colour', 'system_id'] (the system id is --system)",
        "modality 'text' is not one of numeric, numeric+image",
        "purpose 'fun' is not one of time-series, general-purpose",
        "architecture 'mixture' is not one of",
        "is_foundation_model 'maybe' is not true or false",
        "display_name must be a single value",
        "unknown perturbation id(s) ['P9']",
        "the file has perturbation(s) ['P2'] that accepted_perturbations (P0 P9) leaves out",
    ):
        assert fragment in message, message


def test_image_perturbations_need_the_image_modality():
    with pytest.raises(TsrateError, match=r"\['P5'\] perturb the image input, but modality"):
        system_metadata("my_model", {"accepted_perturbations": "P0 P5"})
    with pytest.raises(TsrateError, match="an imported system has none"):
        system_metadata("my_model", {"implementation": "tsrate.systems.naive"})


# -- read_metadata --------------------------------------------------------------------------------


def test_metadata_from_yaml_json_and_pairs(tmp_path):
    (tmp_path / "meta.yaml").write_text(
        "display_name: My model\nmodality: numeric\nis_foundation_model: true\n"
        "accepted_perturbations: [P0, P1]\n"
    )
    (tmp_path / "meta.json").write_text(json.dumps({"family": "foundation"}))
    merged = read_metadata(
        [str(tmp_path / "meta.yaml"), str(tmp_path / "meta.json"), "display_name= Mine "]
    )
    assert merged == {
        "display_name": "Mine",
        "modality": "numeric",
        "is_foundation_model": True,
        "accepted_perturbations": ["P0", "P1"],
        "family": "foundation",
    }
    with pytest.raises(TsrateError, match="not a file and not a key=value pair"):
        read_metadata([str(tmp_path / "absent.yaml")])
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(TsrateError, match="must hold a mapping"):
        read_metadata([str(tmp_path / "list.yaml")])
    (tmp_path / "meta.toml").write_text("a = 1\n")
    with pytest.raises(TsrateError, match="use .yaml, .yml or .json"):
        read_metadata([str(tmp_path / "meta.toml")])
    (tmp_path / "broken.json").write_text("{oops")
    with pytest.raises(TsrateError, match="is not valid JSON: Expecting property name"):
        read_metadata([str(tmp_path / "broken.json")])


# -- importing with metadata -------------------------------------------------------------------


def test_rejected_metadata_or_file_stores_nothing(warehouse, good, tmp_path):
    path = write_csv(tmp_path, good)
    before, registered_before = snapshot(warehouse), registrations(warehouse)
    message = assert_nothing_stored(
        warehouse,
        before,
        registered_before,
        lambda: import_with(warehouse, path, {"modality": "audio"}),
    )
    assert "modality 'audio'" in message
    # the metadata is fine, the file is not: no registration either
    broken = write_csv(tmp_path, good.iloc[1:], "short.csv")
    message = assert_nothing_stored(
        warehouse, before, registered_before, lambda: import_with(warehouse, broken, METADATA)
    )
    assert "incomplete grid" in message
    # perturbations in the file that the metadata does not accept
    narrow = {**METADATA, "accepted_perturbations": "P0 P1"}
    message = assert_nothing_stored(
        warehouse, before, registered_before, lambda: import_with(warehouse, path, narrow)
    )
    assert "perturbation(s) ['P2', 'P3'] are not accepted by system 'my_model'" in message
    # a seed row keeps its seed metadata; an unusable id is refused
    message = assert_nothing_stored(
        warehouse, before, registered_before,
        lambda: import_with(
            warehouse, path, METADATA, system_id="external_demo", systems_seed=seed_with()
        ),
    )  # fmt: skip
    assert "is a row of seeds/systems.csv" in message and "import without --metadata" in message
    # one tsrate forecasts itself: the refusal names the fix, another id (not "without
    # --metadata", which is refused next)
    message = assert_nothing_stored(
        warehouse, before, registered_before,
        lambda: import_with(warehouse, path, METADATA, system_id="chronos"),
    )  # fmt: skip
    assert "--system chronos_imported" in message and "without --metadata" not in message
    message = assert_nothing_stored(
        warehouse, before, registered_before,
        lambda: import_with(warehouse, path, METADATA, system_id="My Model"),
    )  # fmt: skip
    assert "system id 'My Model'" in message
    # unknown without metadata: the error says how to register it
    message = assert_nothing_stored(
        warehouse, before, registered_before, lambda: import_with(warehouse, path, None)
    )
    assert "unknown system 'my_model'" in message and "--metadata" in message


def test_metadata_registers_the_system_once(warehouse, good, tmp_path):
    path = write_csv(tmp_path, good)
    first = import_with(warehouse, path, METADATA)
    stored = registrations(warehouse)
    assert len(stored) == 1
    row = stored.iloc[0]
    assert row["display_name"] == "My model (imported)" and row["source"] == str(path)
    assert row["is_foundation_model"] and row["accepted_perturbations"] == "P0 P1 P2 P3"
    with connect(warehouse) as con:
        systems = con.execute("select systems from raw.runs where run_id = ?", [first.run_id])
        assert systems.fetchone()[0] == ["naive", "my_model"]
        assert first.forecast_rows > 0
        # the same metadata again: no second registration; the partitions are reused
        again = import_forecasts(con, path, "my_model", STUDY, workers=1, metadata=METADATA)
        assert again.reused == again.partitions and again.forecast_rows == 0
        assert len(registrations_of(con)) == 1
        # registered: later imports need no metadata
        later = import_forecasts(con, path, "my_model", STUDY, workers=1)
        assert later.partitions == first.partitions
        # changed metadata: a new registration, the latest wins
        import_forecasts(
            con, path, "my_model", STUDY, workers=1,
            metadata={**METADATA, "display_name": "My model v2"},
        )  # fmt: skip
        assert len(registrations_of(con)) == 2
        latest = registered_systems(con).set_index("system_id")
        assert latest.loc["my_model", "display_name"] == "My model v2"


def registrations_of(con) -> pd.DataFrame:
    return con.execute("select * from raw.imported_systems").df()


def test_a_registered_system_is_refused_an_unaccepted_perturbation(warehouse, good, tmp_path):
    narrow = {**METADATA, "accepted_perturbations": "P0"}
    import_with(warehouse, write_csv(tmp_path, good[good["perturbation_id"] == "P0"]), narrow,
                system_id="p0_only")  # fmt: skip
    with pytest.raises(ImportValidationError, match="not accepted by system 'p0_only'"):
        import_with(warehouse, write_csv(tmp_path, good, "all.csv"), None, system_id="p0_only")


def test_a_failure_after_validation_registers_nothing(warehouse, good, tmp_path):
    """The file and metadata are fine, but a study system does not exist: the import fails
    in the baselines step, after validation, and must leave no registration (nor a run)."""
    import dataclasses

    path = write_csv(tmp_path, good)
    before, registered_before = snapshot(warehouse), registrations(warehouse)
    study = dataclasses.replace(STUDY, systems=("naive", "no_such_system"))

    def failing_import():
        with connect(warehouse) as con:
            import_forecasts(con, path, "fresh_model", study, workers=1, metadata=METADATA)

    message = assert_nothing_stored(warehouse, before, registered_before, failing_import)
    assert "unknown system 'no_such_system'" in message


def test_overlong_ids_and_metadata_text_are_refused(warehouse, good, tmp_path):
    path = write_csv(tmp_path, good)
    before, registered_before = snapshot(warehouse), registrations(warehouse)
    message = assert_nothing_stored(
        warehouse, before, registered_before,
        lambda: import_with(warehouse, path, METADATA, system_id="a" * 5000),
    )  # fmt: skip
    assert "(5000 characters): use 1 to 64" in message and len(message) < 400
    assert_nothing_stored(
        warehouse, before, registered_before,
        lambda: import_with(warehouse, path, METADATA, system_id="b" * 65),
    )  # fmt: skip
    message = assert_nothing_stored(
        warehouse, before, registered_before,
        lambda: import_with(warehouse, path, {**METADATA, "display_name": "x" * 201}),
    )  # fmt: skip
    assert "display_name is 201 characters long (at most 200)" in message
    message = assert_nothing_stored(
        warehouse, before, registered_before,
        lambda: import_with(warehouse, path, {**METADATA, "display_name": "bad\x00name"}),
    )  # fmt: skip
    assert "holds control characters" in message
