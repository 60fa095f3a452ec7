"""Chronos on a tiny randomly initialised checkpoint made here (skipped without chronos-forecasting).

The checkpoint (tests/support/tiny_models.py) is a real T5 with a ``chronos_config`` block in
its config.json, saved to disk, so the real ``BaseChronosPipeline.from_pretrained`` loading
path and tokenizer run.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.tiny_models import CHRONOS_CONFIG, PREDICTION_LENGTH, make_checkpoint
from tsrate import TsrateError
from tsrate.config import Study
from tsrate.systems import chronos_model
from tsrate.systems.base import ForecastBatch, check_forecasts
from tsrate.systems.chronos_model import ChronosSystem, resolve_checkpoint
from tsrate.systems.registry import load_systems_seed, resolve_systems

pytest.importorskip("torch")
pytest.importorskip("chronos", reason="chronos-forecasting is not installed (extra `chronos`)")

N, D = 24, 6


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return make_checkpoint(tmp_path_factory.mktemp("tiny-chronos"))


def make_batch(contexts: np.ndarray) -> ForecastBatch:
    n_windows = len(contexts)
    return ForecastBatch(
        "AAPL",
        "P0",
        np.arange(n_windows),
        contexts,
        D,
        np.zeros((n_windows, D)),
        (0.0, 1.0),
    )


def contexts(n_windows: int = 5) -> np.ndarray:
    rng = np.random.default_rng(1)
    return 100 + np.cumsum(rng.normal(size=(n_windows, N)), axis=1)


def test_checkpoint_is_read_from_the_config(checkpoint):
    config = json.loads((checkpoint / "config.json").read_text())
    assert config["chronos_config"]["prediction_length"] == PREDICTION_LENGTH
    assert resolve_checkpoint(str(checkpoint)) == checkpoint


def test_forecast_is_the_seeded_median_of_the_samples(checkpoint):
    import torch
    from chronos import ChronosPipeline

    system = ChronosSystem(str(checkpoint), num_samples=7, seed=3, batch_size=2, device="cpu")
    assert system.availability().available, system.availability().reason
    batch = make_batch(contexts())
    out = check_forecasts("chronos", batch, system.predict(batch))
    # independently: the same pipeline, same seed, batches of 2, median over 7 samples
    pipeline = ChronosPipeline.from_pretrained(str(checkpoint), local_files_only=True)
    torch.manual_seed(3)
    expected = []
    for start in range(0, 5, 2):
        samples = pipeline.predict(
            torch.tensor(batch.contexts[start : start + 2], dtype=torch.float32),
            prediction_length=D,
            num_samples=7,
        )
        assert samples.shape == (len(batch.contexts[start : start + 2]), 7, D)
        expected.append(np.median(samples.numpy(), axis=1))
    np.testing.assert_allclose(out, np.concatenate(expected), rtol=1e-5)
    # seeded: the same again; another seed gives other samples
    np.testing.assert_array_equal(out, system.predict(batch))
    other = ChronosSystem(str(checkpoint), num_samples=7, seed=4, batch_size=2, device="cpu")
    assert not np.allclose(other.predict(batch), out)


def test_missing_values_pass_as_nan(checkpoint):
    """P3: NaN reaches the Chronos tokenizer, which masks it (no filling here)."""
    from chronos import ChronosPipeline

    values = contexts(2)
    values[0, 10] = np.nan
    system = ChronosSystem(str(checkpoint), num_samples=4, seed=1, device="cpu")
    out = check_forecasts("chronos", make_batch(values), system.predict(make_batch(values)))
    assert np.isfinite(out).all()
    tokenizer = ChronosPipeline.from_pretrained(str(checkpoint)).tokenizer
    import torch

    ids, mask, _ = tokenizer.context_input_transform(torch.tensor(values, dtype=torch.float32))
    assert not bool(mask[0, 10]) and int(ids[0, 10]) == CHRONOS_CONFIG["pad_token_id"]
    # a filled value would change the forecast of that window only
    filled = values.copy()
    filled[0, 10] = values[0, 9]
    out_filled = ChronosSystem(str(checkpoint), num_samples=4, seed=1, device="cpu").predict(
        make_batch(filled)
    )
    assert not np.allclose(out_filled[0], out[0])


def test_hugging_face_cache_is_used_offline(checkpoint, tmp_path, monkeypatch):
    """A model id resolves through an HF cache laid out as `hf download` leaves it."""
    cache = tmp_path / "hub"
    repo = cache / "models--tsrate--tiny-chronos"
    commit = "0" * 40
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for file in checkpoint.iterdir():
        (snapshot / file.name).write_bytes(file.read_bytes())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(cache))
    assert resolve_checkpoint("tsrate/tiny-chronos") == snapshot
    system = ChronosSystem("tsrate/tiny-chronos", num_samples=3, device="cpu")
    assert system.availability().available
    assert check_forecasts(
        "chronos", make_batch(contexts(2)), system.predict(make_batch(contexts(2)))
    ).shape == (2, D)


def test_missing_weights_say_how_to_provide_them(tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "empty"))
    availability = ChronosSystem("amazon/chronos-t5-small", device="cpu").availability()
    assert not availability.available
    assert "not in the Hugging Face cache" in availability.reason
    assert "hf download amazon/chronos-t5-small" in availability.reason
    assert "huggingface-cli download amazon/chronos-t5-small" in availability.reason
    assert "TSRATE_CHRONOS_MODEL" in availability.reason

    missing = ChronosSystem(str(tmp_path / "nowhere"), device="cpu").availability()
    assert not missing.available and "does not exist" in missing.reason

    not_chronos = tmp_path / "plain"
    not_chronos.mkdir()
    (not_chronos / "config.json").write_text('{"model_type": "t5"}')
    reason = ChronosSystem(str(not_chronos), device="cpu").availability().reason
    assert "not a Chronos checkpoint" in reason


def test_no_weights_file_is_unavailable(checkpoint, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text((checkpoint / "config.json").read_text())
    reason = ChronosSystem(str(bare), device="cpu").availability().reason
    assert "no weights" in reason


def test_registry_reports_and_refuses_the_unavailable_system(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_CHRONOS_MODEL", str(tmp_path / "nowhere"))
    study = Study.from_vars({"systems": ["chronos"]})
    seed = load_systems_seed().set_index("system_id")
    assert seed.loc["chronos", "implementation"] == "tsrate.systems.chronos_model"
    availability = chronos_model.create(study, None).availability()
    assert not availability.available and "TSRATE_CHRONOS_MODEL" in availability.reason
    with pytest.raises(TsrateError, match="'chronos' is unavailable: .*does not exist"):
        resolve_systems(study, None)


def test_settings_come_from_the_environment(checkpoint, monkeypatch):
    monkeypatch.setenv("TSRATE_CHRONOS_MODEL", str(checkpoint))
    monkeypatch.setenv("TSRATE_CHRONOS_NUM_SAMPLES", "9")
    monkeypatch.setenv("TSRATE_CHRONOS_BATCH_SIZE", "3")
    study = Study.from_vars({"systems": ["chronos"], "random_seed": 7})
    system = chronos_model.create(study, None)
    assert (system.model_name, system.num_samples, system.batch_size, system.seed) == (
        str(checkpoint),
        9,
        3,
        7,
    )
    assert "samples=9" in system.fingerprint() and "checkpoint=missing" not in system.fingerprint()
    monkeypatch.setenv("TSRATE_CHRONOS_NUM_SAMPLES", "many")
    with pytest.raises(TsrateError, match="'many' is not a whole number"):
        chronos_model.create(study, None)
