"""The MOMENT bridge in this process: how an unconfigured MOMENT is reported, and the
validation of the worker's output file. (The worker process itself:
tests/integration/test_moment_bridge.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.systems import moment_model
from tsrate.systems.moment_model import MomentBridgeError, read_forecasts
from tsrate.systems.registry import load_systems_seed, resolve_systems

D = 5


def test_unconfigured_moment_says_how_to_create_the_environment(monkeypatch):
    monkeypatch.delenv("TSRATE_MOMENT_PYTHON", raising=False)
    seed = load_systems_seed().set_index("system_id")
    assert seed.loc["moment", "implementation"] == "tsrate.systems.moment_model"
    availability = moment_model.create(None, None).availability()
    reason = availability.reason
    assert not availability.available
    for hint in ("TSRATE_MOMENT_PYTHON", "pip install torch==2.13.0 momentfm", "-m venv"):
        assert hint in reason
    with pytest.raises(TsrateError, match="'moment' is unavailable: no MOMENT environment"):
        resolve_systems(Study.from_vars({"systems": ["moment"]}), None)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "wrote no output file"),
        (b"not an npy file", "not a readable .npy array"),
        (np.ones((2, D + 1)), "shape \\(2, 6\\), expected \\(2, 5\\)"),
        (np.ones((2, D), dtype=np.int64), "holds int64 values"),
        (np.array([[1.0] * D, [1.0, np.nan, 1.0, 1.0, 1.0]]), "1 non-finite value.*window 1"),
    ],
)
def test_malformed_worker_output_is_a_clear_error(tmp_path, content, problem):
    path = tmp_path / "forecasts.npy"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        np.save(path, content)
    with pytest.raises(MomentBridgeError, match=problem):
        read_forecasts(path, 2, D)


def test_good_output_is_read_back(tmp_path):
    path = tmp_path / "forecasts.npy"
    np.save(path, np.arange(10, dtype=np.float32).reshape(2, D))
    np.testing.assert_array_equal(read_forecasts(path, 2, D), np.arange(10).reshape(2, D))
