"""P3's missing values reach Chronos as NaN: the system's forecast of a window with a gap is
the pipeline's own seeded median of that very window (its tokenizer masks the NaN), not of
the window with the gap filled by 0 or anything else. On the tiny real checkpoint of
tests/support/tiny_models.py (skipped without chronos-forecasting)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.tiny_models import make_checkpoint
from tsrate.systems.base import ForecastBatch
from tsrate.systems.chronos_model import ChronosSystem

pytest.importorskip("torch")
pytest.importorskip("chronos", reason="chronos-forecasting is not installed (extra `chronos`)")

N, D = 24, 6


def make_batch(contexts: np.ndarray) -> ForecastBatch:
    n = len(contexts)
    return ForecastBatch("AAPL", "P0", np.arange(n), contexts, D, np.zeros((n, D)), (0.0, 1.0))


def pipeline_median(checkpoint, values: np.ndarray, seed: int, samples: int) -> np.ndarray:
    import torch
    from chronos import ChronosPipeline

    pipeline = ChronosPipeline.from_pretrained(str(checkpoint), local_files_only=True)
    torch.manual_seed(seed)
    drawn = pipeline.predict(
        torch.tensor(values, dtype=torch.float32), prediction_length=D, num_samples=samples
    )
    return np.median(drawn.numpy(), axis=1)


def test_a_gap_reaches_the_pipeline_as_nan(tmp_path):
    checkpoint = make_checkpoint(tmp_path / "tiny-chronos")
    rng = np.random.default_rng(4)
    values = 100 + np.cumsum(rng.normal(size=(3, N)), axis=1)
    values[0, 10] = np.nan
    values[2, [3, 17]] = np.nan
    system = ChronosSystem(str(checkpoint), num_samples=5, seed=2, device="cpu")
    out = system.predict(make_batch(values))
    np.testing.assert_allclose(out, pipeline_median(checkpoint, values, 2, 5), rtol=1e-5)
    # the test can tell: the same windows with their gaps at 0 forecast otherwise
    zeros = pipeline_median(checkpoint, np.nan_to_num(values), 2, 5)
    assert not np.allclose(out[[0, 2]], zeros[[0, 2]], rtol=1e-5)
