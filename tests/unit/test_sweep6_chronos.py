"""Chronos' adapter (tsrate.systems.chronos_model) without Chronos weights: what it reads
from a checkpoint directory, the digest that goes into the fingerprint (recomputed here
from its documented definition: the config, then each weight file's name, size, first and
last 64 KiB), the offline promise (every loader is called with ``local_files_only=True``),
the defaults of the settings table, the dtype per device, and how ``forecast_quantiles``
seeds, batches and assembles a scripted pipeline's quantiles.

tests/unit/test_chronos.py runs the real pipeline on a tiny checkpoint; this file pins the
arithmetic and choices around it. Written for the mutation sweep (tests/planted/mutate.py;
its survivors are tests/planted/sweep6_foundation_models.json).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.systems import chronos_model
from tsrate.systems.base import QUANTILE_LEVELS
from tsrate.systems.chronos_model import (
    DEFAULT_MODEL,
    ChronosSystem,
    ChronosUnavailable,
    _looks_like_path,
    checkpoint_digest,
    how_to_provide,
    resolve_checkpoint,
)

torch = pytest.importorskip("torch")
chronos = pytest.importorskip("chronos", reason="chronos-forecasting is not installed")


def checkpoint_dir(tmp_path: Path, config: dict | str, *weights: str, name="ckpt") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    text = config if isinstance(config, str) else json.dumps(config)
    (directory / "config.json").write_text(text)
    for weight in weights:
        (directory / weight).write_bytes(b"w")
    return directory


CHRONOS = {"chronos_config": {"prediction_length": 4}}


# -- names and checkpoint directories ------------------------------------------------------------


@pytest.mark.parametrize(
    "model, path",
    [
        ("amazon/chronos-t5-small", False),
        ("chronos", False),
        ("./chronos", True),
        ("/models/chronos", True),
        ("~/chronos", True),
        ("models\\chronos", True),
        ("models/amazon/chronos", True),
    ],
)
def test_what_looks_like_a_path(model, path):
    assert _looks_like_path(model) is path


def test_how_to_provide_names_the_repo_or_the_default():
    assert "hf download amazon/chronos-bolt-tiny" in how_to_provide("amazon/chronos-bolt-tiny")
    assert f"hf download {DEFAULT_MODEL}" in how_to_provide("/models/chronos")


@pytest.mark.parametrize(
    "config, weight",
    [
        (CHRONOS, "model.safetensors"),
        (CHRONOS, "pytorch_model.bin"),
        (CHRONOS, "model.safetensors.index.json"),
        ({"chronos_pipeline_class": "ChronosBoltPipeline"}, "model.safetensors"),
        ({**CHRONOS, "chronos_pipeline_class": "ChronosPipeline"}, "model.safetensors"),
    ],
)
def test_a_checkpoint_with_a_chronos_config_and_one_weight_file_resolves(tmp_path, config, weight):
    directory = checkpoint_dir(tmp_path, config, weight)
    assert resolve_checkpoint(str(directory)) == directory


@pytest.mark.parametrize(
    "config, weights, message",
    [
        ({"model_type": "t5"}, ["model.safetensors"], "not a Chronos checkpoint"),
        (
            {"chronos_pipeline_class": "ChronosMoonPipeline"},
            ["model.safetensors"],
            "pipeline ChronosMoonPipeline is not supported",
        ),
        (CHRONOS, ["weights.gguf"], "has a config.json but no weights"),
        ("{not json", ["model.safetensors"], "is not valid JSON"),
    ],
)
def test_a_checkpoint_that_is_not_usable_is_refused(tmp_path, config, weights, message):
    directory = checkpoint_dir(tmp_path, config, *weights)
    with pytest.raises(ChronosUnavailable, match=message):
        resolve_checkpoint(str(directory))


def test_a_directory_without_config_or_a_missing_path_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ChronosUnavailable, match="holds no config.json"):
        resolve_checkpoint(str(tmp_path / "empty"))
    with pytest.raises(ChronosUnavailable, match="does not exist; on a machine with internet"):
        resolve_checkpoint(str(tmp_path / "nowhere"))


def test_a_model_id_is_looked_up_in_the_cache_only(tmp_path, monkeypatch):
    import huggingface_hub

    directory = checkpoint_dir(tmp_path, CHRONOS, "model.safetensors")
    calls = []

    def snapshot_download(repo, **kwargs):
        calls.append((repo, kwargs))
        return str(directory)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    assert resolve_checkpoint("org/tiny-chronos") == directory
    assert calls == [("org/tiny-chronos", {"local_files_only": True})]

    def not_cached(repo, **kwargs):
        raise FileNotFoundError(repo)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", not_cached)
    with pytest.raises(ChronosUnavailable, match=r"not in the Hugging Face cache \(FileNotFound"):
        resolve_checkpoint("org/tiny-chronos")


# -- the digest ---------------------------------------------------------------------------------


def digest_by_hand(directory: Path) -> str:
    """sha256 of config.json, then per weight file present (in the order model.safetensors,
    pytorch_model.bin, model.safetensors.index.json): "name:size", its first 65,536 bytes,
    its bytes from max(0, size - 65,536) to the end; the first 12 hex digits."""
    digest = hashlib.sha256((directory / "config.json").read_bytes())
    for name in ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json"):
        file = directory / name
        if file.exists():
            data = file.read_bytes()
            digest.update(f"{name}:{len(data)}".encode())
            digest.update(data[:65536])
            digest.update(data[max(0, len(data) - 65536) :])
    return digest.hexdigest()[:12]


def test_the_digest_reads_the_config_and_each_weight_files_size_head_and_tail(tmp_path):
    directory = checkpoint_dir(tmp_path, CHRONOS)
    rng = np.random.default_rng(0)
    big = rng.integers(0, 256, 3 * 65536 + 17, dtype=np.uint8).tobytes()
    small = rng.integers(0, 256, 1000, dtype=np.uint8).tobytes()
    (directory / "model.safetensors").write_bytes(big)
    (directory / "pytorch_model.bin").write_bytes(small)
    digest = checkpoint_digest(directory)
    assert len(digest) == 12 and digest == digest_by_hand(directory)
    # a byte in the middle of a big file is not read; one in its head or tail is
    for position, changes in [(65536 + 100, False), (65535, True), (len(big) - 65536, True)]:
        changed = bytearray(big)
        changed[position] ^= 0xFF
        (directory / "model.safetensors").write_bytes(bytes(changed))
        assert (checkpoint_digest(directory) != digest) is changes
        assert checkpoint_digest(directory) == digest_by_hand(directory)


def test_the_digest_of_a_file_shorter_than_the_tail(tmp_path):
    directory = checkpoint_dir(tmp_path, CHRONOS)
    (directory / "model.safetensors.index.json").write_bytes(b"0123456789" * 7000)
    assert checkpoint_digest(directory) == digest_by_hand(directory)


# -- defaults and settings ----------------------------------------------------------------------


def test_the_defaults_of_the_settings_table():
    system = ChronosSystem(device="cpu")
    assert (system.model_name, system.num_samples, system.batch_size) == (DEFAULT_MODEL, 20, 32)
    assert system.seed == Study.from_vars({}).seed == 42  # the study's default random_seed
    assert system.dtype_name == "float32"
    cuda = ChronosSystem(device="cuda")
    assert (cuda.batch_size, cuda.dtype_name) == (256, "bfloat16")
    assert ChronosSystem(device="cuda:0", batch_size=5).batch_size == 5


def test_counts_must_be_positive():
    with pytest.raises(TsrateError, match="num_samples must be at least 1"):
        ChronosSystem(num_samples=0)
    with pytest.raises(TsrateError, match="batch size must be at least 1"):
        ChronosSystem(batch_size=0)
    assert ChronosSystem(num_samples=1, batch_size=1).num_samples == 1
    assert ChronosSystem(batch_size=1).batch_size == 1


def test_create_without_project_vars_takes_the_table_defaults(monkeypatch):
    from tsrate.systems import _settings

    def no_project():
        raise TsrateError("no dbt project here")

    monkeypatch.setattr(_settings, "project_vars", no_project)
    for name in ("MODEL", "NUM_SAMPLES", "BATCH_SIZE", "DEVICE"):
        monkeypatch.delenv(f"TSRATE_CHRONOS_{name}", raising=False)
    system = chronos_model.create(Study.from_vars({"random_seed": 5}), None)
    assert (system.model_name, system.num_samples, system._batch_size, system._device) == (
        DEFAULT_MODEL,
        20,
        None,
        None,
    )
    assert system.seed == 5


def test_fingerprint_names_every_setting_and_the_digest(tmp_path):
    directory = checkpoint_dir(tmp_path, CHRONOS, "model.safetensors")
    system = ChronosSystem(str(directory), num_samples=3, seed=9, batch_size=4, device="cpu")
    fingerprint = system.fingerprint()
    assert fingerprint.endswith(
        f";model={directory};checkpoint={digest_by_hand(directory)};"
        "samples=3;seed=9;batch=4;device=cpu;point=median"
    )
    missing = ChronosSystem(str(tmp_path / "nowhere"), device="cpu").fingerprint()
    assert ";checkpoint=missing;" in missing


def test_availability(tmp_path, monkeypatch):
    import importlib.util

    directory = checkpoint_dir(tmp_path, CHRONOS, "model.safetensors")
    ok = ChronosSystem(str(directory), num_samples=5, device="cpu").availability()
    assert ok.available
    assert ok.reason == f"{directory} from {directory} on cpu (float32), median of 5 samples"
    auto = ChronosSystem(str(directory)).availability()
    assert auto.available and "cuda (bfloat16) when torch sees a GPU" in auto.reason
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cuda = ChronosSystem(str(directory), device="cuda").availability()
    assert not cuda.available and "torch sees no CUDA GPU" in cuda.reason
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    cuda = ChronosSystem(str(directory), device="cuda").availability()
    assert cuda.available and "on cuda (bfloat16)" in cuda.reason
    missing = ChronosSystem(str(tmp_path / "nowhere"), device="cpu").availability()
    assert not missing.available and "does not exist" in missing.reason
    real = importlib.util.find_spec
    for module, message in [("torch", "torch is not installed"), ("chronos", "chronos-forec")]:
        monkeypatch.setattr(
            importlib.util,
            "find_spec",
            lambda spec, *args, module=module: None if spec == module else real(spec, *args),
        )
        reason = ChronosSystem(str(directory), device="cpu").availability()
        assert not reason.available and reason.reason.startswith(message)


# -- loading and forecasting ----------------------------------------------------------------------


class ScriptedPipeline(chronos.ChronosPipeline):
    """A sampling pipeline (an instance of ChronosPipeline) whose quantile ``level`` at step
    ``h`` of a row is ``row's last value + 10 * level + h + u``, with ``u`` one torch.rand
    draw per call (so the seed shows); every call is recorded."""

    def __init__(self):  # no model: nothing of the parent's is used
        self.calls = []

    def predict_quantiles(self, inputs, prediction_length=None, quantile_levels=(), **kwargs):
        self.calls.append((inputs.clone(), prediction_length, list(quantile_levels), kwargs))
        u = float(torch.rand(1))
        last = inputs[:, -1].double()
        levels = torch.tensor(quantile_levels, dtype=torch.float64)
        steps = torch.arange(prediction_length, dtype=torch.float64)
        quantiles = last[:, None, None] + 10 * levels[None, None, :] + steps[None, :, None] + u
        return quantiles.to(torch.float32), None


class ScriptedBolt(chronos.BaseChronosPipeline):
    """A quantile pipeline (not a ChronosPipeline): takes no num_samples."""

    __init__ = ScriptedPipeline.__init__
    predict_quantiles = ScriptedPipeline.predict_quantiles


def expected(contexts: np.ndarray, horizon: int, batch: int, seed: int) -> np.ndarray:
    torch.manual_seed(seed)
    out = np.empty((len(contexts), horizon, len(QUANTILE_LEVELS)))
    for start in range(0, len(contexts), batch):
        u = float(torch.rand(1))
        for i in range(start, min(start + batch, len(contexts))):
            last = np.float32(contexts[i, -1])
            for h in range(horizon):
                for j, level in enumerate(QUANTILE_LEVELS):
                    out[i, h, j] = np.float32(last + 10 * level + h + u)
    return out


@pytest.mark.parametrize("pipeline_class", [ScriptedPipeline, ScriptedBolt])
def test_forecast_quantiles_seed_batch_and_assemble(pipeline_class):
    contexts = 100 + np.cumsum(np.random.default_rng(2).normal(size=(7, 12)), axis=1)
    system = ChronosSystem("unused", num_samples=6, seed=11, batch_size=3, device="cpu")
    system._pipeline = pipeline = pipeline_class()
    torch.manual_seed(999)  # whatever ran before: the system seeds itself
    out = system.forecast_quantiles(contexts, 5)
    np.testing.assert_allclose(out, expected(contexts, 5, 3, 11), rtol=1e-6)
    assert [len(call[0]) for call in pipeline.calls] == [3, 3, 1]
    np.testing.assert_allclose(
        torch.cat([call[0] for call in pipeline.calls]).numpy(), contexts, rtol=1e-6
    )
    assert all(call[0].dtype == torch.float32 for call in pipeline.calls)
    assert {call[1] for call in pipeline.calls} == {5}
    assert all(call[2] == list(QUANTILE_LEVELS) for call in pipeline.calls)
    sampled = pipeline_class is ScriptedPipeline
    assert all(call[3] == ({"num_samples": 6} if sampled else {}) for call in pipeline.calls)
    # the point forecast is the 0.5 column; the same again
    np.testing.assert_array_equal(system.forecast(contexts, 5), out[:, :, 4])
    np.testing.assert_array_equal(system.forecast_quantiles(contexts, 5), out)


def test_predict_quantiles_point_is_the_median():
    from tsrate.systems.base import ForecastBatch

    contexts = np.arange(20.0).reshape(2, 10)
    system = ChronosSystem("unused", seed=1, batch_size=8, device="cpu")
    system._pipeline = ScriptedPipeline()
    batch = ForecastBatch("AAPL", "P0", np.arange(2), contexts, 3, np.zeros((2, 3)), (0.0, 1.0))
    result = system.predict_quantiles(batch)
    np.testing.assert_allclose(result.quantiles, expected(contexts, 3, 8, 1), rtol=1e-6)
    np.testing.assert_array_equal(result.point, result.quantiles[:, :, 4])
    np.testing.assert_array_equal(system.predict(batch), result.point)


@pytest.mark.parametrize("device, dtype", [("cpu", "float32"), ("cuda:0", "bfloat16")])
def test_the_pipeline_loads_offline_in_the_dtype_of_its_device(
    tmp_path, monkeypatch, device, dtype
):
    directory = checkpoint_dir(tmp_path, CHRONOS, "model.safetensors")
    loads = []

    class Inner:
        def eval(self):
            loads.append("eval")

    class Loaded:
        inner_model = Inner()

    def from_pretrained(path, **kwargs):
        loads.append((path, kwargs))
        return Loaded()

    monkeypatch.setattr(chronos.BaseChronosPipeline, "from_pretrained", from_pretrained)
    system = ChronosSystem(str(directory), device=device)
    system.warm_up()
    pipeline = system.pipeline
    assert isinstance(pipeline, Loaded)
    assert loads == [
        (
            str(directory),
            {"device_map": device, "dtype": getattr(torch, dtype), "local_files_only": True},
        ),
        "eval",
    ]
