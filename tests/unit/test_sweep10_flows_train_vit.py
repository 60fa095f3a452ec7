"""The ViT-num-spec training flow (``flows/train_vit.py``) run in this process as a plain
function: the study it trains for, reuse by default, the writer lock's default and the
seconds its lines report.

Written for round 10 of the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep10_flows.json). What is pinned: the study in ``overrides`` is the one
trained for (its context length and horizon in the checkpoint's settings); a second run
reuses the checkpoint unless ``force``; the registration fails at once on a busy
warehouse by default (training comes first, so a reused checkpoint keeps it quick); each
variant's line reports its own seconds.

Real parts: a tiny ViT trained once here (one epoch on a few windows of the bundled
sample), a temporary DuckDB file; ``TSRATE_MODEL_DIR`` keeps the weights in one folder.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time

import duckdb
import pytest

from tests.support.locks import another_writer
from tsrate.platform.locking import WarehouseBusy, lock_path

pytest.importorskip("torch")

from flows.train_vit import model_dir, train_vit_flow  # noqa: E402

TINY = {"vit_size": "tiny", "vit_training_tickers": ["KO", "XOM"],
        "vit_max_training_windows": 40, "vit_max_epochs": 1}  # fmt: skip
#: not the default study's context length (80) and horizon (20)
OVERRIDES = {"study_tickers": "AAPL", "context_length": 40, "horizon": 10}
VARIANT = "vit_num_spec_covid"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One variant trained for OVERRIDES into a warehouse; (warehouse, path, environment)."""
    folder = tmp_path_factory.mktemp("vit")
    environment = {
        "TSRATE_MULTIMODAL_VARS": json.dumps(TINY),
        "TSRATE_VIT_DEVICE": "cpu",
        "TSRATE_MODEL_DIR": str(folder / "models"),
        "TSRATE_WAREHOUSE": str(folder / "not-this" / "tsrate.duckdb"),
    }
    warehouse = folder / "wh" / "tsrate.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environment.items():
            patch.setenv(name, value)
        (path,) = train_vit_flow.fn(system=VARIANT, overrides=OVERRIDES, warehouse=str(warehouse))
    return warehouse, path, environment


@pytest.fixture
def environment(trained, monkeypatch):
    for name, value in trained[2].items():
        monkeypatch.setenv(name, value)
    return trained


def _registered(warehouse) -> list[tuple]:  # noqa: ANN001
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(
            "select checkpoint_path, settings_json from raw.model_checkpoints"
        ).fetchall()
    finally:
        con.close()


def test_the_model_folder_is_tsrate_model_dir_else_models_beside_the_warehouse(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("TSRATE_MODEL_DIR", raising=False)
    assert model_dir(tmp_path / "wh" / "tsrate.duckdb") == tmp_path / "wh" / "models"
    monkeypatch.setenv("TSRATE_MODEL_DIR", "")
    assert model_dir(str(tmp_path / "tsrate.duckdb")) == tmp_path / "models"
    monkeypatch.setenv("TSRATE_MODEL_DIR", str(tmp_path / "weights"))
    assert model_dir(tmp_path / "wh" / "tsrate.duckdb") == tmp_path / "weights"


def test_the_checkpoint_is_trained_for_the_study_in_overrides(environment):
    warehouse, path, env = environment
    ((registered, settings),) = _registered(warehouse)
    assert registered == path and path.startswith(env["TSRATE_MODEL_DIR"])
    settings = json.loads(settings)
    assert (settings["context_length"], settings["horizon"]) == (40, 10)
    assert not (lock_path(env["TSRATE_WAREHOUSE"])).parent.exists()  # the one given only


def test_a_second_run_reuses_the_checkpoint_and_reports_its_own_seconds(environment, caplog):
    warehouse, path, _ = environment
    stamp = os.stat(path).st_mtime_ns
    caplog.set_level(logging.INFO, logger="tsrate.run")
    started = time.perf_counter()
    assert train_vit_flow.fn(system=VARIANT, overrides=OVERRIDES, warehouse=str(warehouse)) == [
        path
    ]
    elapsed = time.perf_counter() - started
    assert os.stat(path).st_mtime_ns == stamp  # not trained again: force defaults to False
    (seconds,) = re.findall(rf"reused {VARIANT} in ([\d.]+)s: ", caplog.text)
    assert 0 <= float(seconds) <= elapsed + 0.05
    assert f"registered 1 checkpoint(s) in raw.model_checkpoints of {warehouse}" in caplog.text


def test_a_busy_warehouse_fails_the_registration_at_once_by_default(environment):
    warehouse, _, _ = environment
    with another_writer(warehouse), pytest.raises(WarehouseBusy) as failed:
        train_vit_flow.fn(system=VARIANT, overrides=OVERRIDES, warehouse=str(warehouse))
    assert "after waiting" not in str(failed.value)
