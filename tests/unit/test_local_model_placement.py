"""A local model's forecasts are keyed by the device and dtype they were made in.

``hf_local`` and Gemma load their weights in bfloat16 on a GPU and in float32 on a CPU, and
greedy replies differ between the two. Their fingerprints left the device and dtype out
(Chronos's name them), so forecasts made on a GPU and on a CPU shared one stored partition
key and one response-cache key: a run on the other machine reused them as its own. The
fingerprint now ends ``device=…;dtype=…``, the dtype being the one :meth:`load` uses.
Real tiny checkpoints (tests/support/tiny_models.py), loaded by the real code.
"""

from __future__ import annotations

import pytest

from tests.support.study_inputs import one_ticker_series, one_ticker_study
from tests.support.tiny_models import NUMBERS, CountingConverter, save_bigram_model
from tsrate.robustness.forecast.plan import plan_partitions
from tsrate.systems import gemma
from tsrate.systems.hf_local import HfLocalSystem, HfSettings
from tsrate.systems.llm import ResponseCache

pytest.importorskip("torch")
pytest.importorskip("transformers")


def _key(system) -> str:  # noqa: ANN001 - any system with a fingerprint
    study = one_ticker_study("local_lm")
    series = {"AAA": one_ticker_series()}
    (partition,) = plan_partitions(study, series, {"local_lm": (system, {"P0"})})
    return partition.input_key


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return save_bigram_model(tmp_path_factory.mktemp("hf-placement"), NUMBERS)


def test_the_fingerprint_names_the_device_and_the_dtype_the_model_is_loaded_in(checkpoint):
    system = HfLocalSystem("local_lm", HfSettings(str(checkpoint), device="cpu"))
    assert system.fingerprint().endswith(";device=cpu;dtype=float32")
    system.load()
    assert str(system._model.dtype) == "torch.float32"
    assert system._model.device.type == "cpu"


def test_forecasts_on_a_gpu_and_on_a_cpu_are_different_partitions(checkpoint):
    cpu = HfLocalSystem("local_lm", HfSettings(str(checkpoint), device="cpu"))
    gpu = HfLocalSystem("local_lm", HfSettings(str(checkpoint), device="cuda"))
    assert gpu.fingerprint().endswith(";device=cuda;dtype=bfloat16")
    assert cpu.fingerprint() != gpu.fingerprint()
    assert _key(cpu) != _key(gpu)
    # the rest of the fingerprint is the same: only the placement tells them apart
    assert cpu.fingerprint().rsplit(";device=", 1)[0] == gpu.fingerprint().rsplit(";device=", 1)[0]


def test_auto_names_the_device_torch_sees(checkpoint):
    import torch

    system = HfLocalSystem("local_lm", HfSettings(str(checkpoint), device="auto"))
    expected = (
        "device=cuda;dtype=bfloat16" if torch.cuda.is_available() else "device=cpu;dtype=float32"
    )
    assert system.fingerprint().endswith(expected)
    system.load()
    assert str(system._model.dtype) == f"torch.{system.dtype_name}"


def test_gemma_replies_from_a_gpu_and_a_cpu_are_cached_and_stored_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_CACHE", str(tmp_path / "cache"))
    sha = "cd" * 32

    def system(device: str) -> gemma.GemmaSystem:
        settings = HfSettings("", device=device)
        return gemma.GemmaSystem(settings=settings, convert=CountingConverter(), gguf_sha256=sha)

    cpu, gpu = system("cpu"), system("cuda:0")
    assert cpu.fingerprint().endswith(";device=cpu;dtype=float32")
    assert gpu.fingerprint().endswith(";device=cuda:0;dtype=bfloat16")
    assert _key(cpu) != _key(gpu)
    # the response cache keys Gemma's replies by the fingerprint: a GPU reply is not a CPU one
    request = {"messages": [{"role": "user", "content": "1, 2"}], "horizon": 2, "cap": 9}
    keys = {ResponseCache.key({"system": s.fingerprint(), **request}) for s in (cpu, gpu)}
    assert len(keys) == 2
    # and the CPU one is the dtype the converted checkpoint is really loaded in
    cpu.load()
    assert str(cpu._model.dtype) == "torch.float32"
