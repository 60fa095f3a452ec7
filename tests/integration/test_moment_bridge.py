"""The MOMENT bridge through its real worker process: the worker script run with the test
interpreter (its `last-observed` protocol-check backend, the same files, arguments and
exit-status handling a real run uses), its failures, the availability probe, and, opt-in,
the real momentfm backend. (Reading the worker's output file: tests/unit/test_moment.py.)
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tsrate.systems import moment_model
from tsrate.systems.base import ForecastBatch, check_forecasts
from tsrate.systems.moment_model import MomentBridgeError, MomentSystem

D = 5


def make_batch() -> ForecastBatch:
    contexts = np.array(
        [
            [10.0, 11.0, 12.0, 13.0],
            [20.0, 21.0, 22.0, np.nan],  # P3: the last value is missing
        ]
    )
    return ForecastBatch(
        "MSFT",
        "P3",
        np.array(["2022-06-01", "2022-06-02"], dtype="datetime64[D]"),
        contexts,
        D,
        np.zeros((2, D)),
        (0.0, 1.0),
    )


def test_missing_interpreter_or_momentfm_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("TSRATE_MOMENT_PYTHON", str(tmp_path / "no-such-python"))
    reason = moment_model.create(None, None).availability().reason
    assert "does not exist" in reason and "no-such-python" in reason
    # this interpreter runs the worker's probe but has no momentfm
    monkeypatch.setenv("TSRATE_MOMENT_PYTHON", sys.executable)
    availability = moment_model.create(None, None).availability()
    assert not availability.available and "lacks momentfm" in availability.reason


def test_bridge_round_trip_through_the_worker_process():
    system = MomentSystem(sys.executable, backend="last-observed")
    assert system.availability().available
    batch = make_batch()
    out = check_forecasts("moment", batch, system.predict(batch))
    np.testing.assert_array_equal(out, [[13.0] * D, [22.0] * D])
    assert "backend=last-observed" in system.fingerprint()
    assert "backend=momentfm" in MomentSystem(sys.executable).fingerprint()


def test_worker_failure_names_the_partition_and_quotes_stderr():
    system = MomentSystem(sys.executable)  # the momentfm backend, which is not installed here
    with pytest.raises(MomentBridgeError) as caught:
        system.predict(make_batch())
    message = str(caught.value)
    assert "system 'moment', ticker MSFT, perturbation P3" in message
    assert "exited with status 1" in message and "momentfm" in message


TINY_MOMENT = """
import sys, torch
from momentfm import MOMENTPipeline
config = {
    "task_name": "reconstruction", "model_name": "MOMENT", "transformer_type": "encoder_only",
    "d_model": 16, "seq_len": 512, "patch_len": 8, "patch_stride_len": 8,
    "transformer_backbone": "google/flan-t5-small",
    "t5_config": {"d_model": 16, "d_kv": 8, "d_ff": 32, "num_layers": 1, "num_heads": 2,
                  "vocab_size": 32, "feed_forward_proj": "gated-gelu", "is_encoder_decoder": True},
}
torch.manual_seed(0)
MOMENTPipeline(config, model_kwargs={"task_name": "reconstruction"}).save_pretrained(
    sys.argv[1], config=config
)
"""


def test_real_momentfm_on_a_tiny_checkpoint(tmp_path):
    """Opt-in: set TSRATE_MOMENT_TEST_PYTHON to an environment's python that has momentfm.

    Builds a tiny randomly initialised MOMENT checkpoint with that interpreter and runs the
    worker's real momentfm backend on it through the bridge.
    """
    import os
    import subprocess

    python = os.environ.get("TSRATE_MOMENT_TEST_PYTHON")
    if not python:
        pytest.skip("TSRATE_MOMENT_TEST_PYTHON is not set (a python with momentfm; see README)")
    checkpoint = tmp_path / "tiny-moment"
    subprocess.run([python, "-c", TINY_MOMENT, str(checkpoint)], check=True, capture_output=True)
    system = MomentSystem(python, model=str(checkpoint), batch_size=1, device="cpu")
    assert system.availability().available, system.availability().reason
    rng = np.random.default_rng(0)
    contexts = 100 + np.cumsum(rng.normal(size=(2, 80)), axis=1)
    contexts[1, 40] = np.nan
    batch = ForecastBatch("MSFT", "P3", np.arange(2), contexts, 20, np.zeros((2, 20)), (0.0, 1.0))
    out = check_forecasts("moment", batch, system.predict(batch))
    np.testing.assert_array_equal(out, system.predict(batch))  # deterministic
    assert np.abs(out - contexts[:, -1:]).max() > 0  # not the protocol check's copy
