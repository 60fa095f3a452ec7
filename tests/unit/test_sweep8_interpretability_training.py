"""The interpretability suite's training run (tsrate.suites.interpretability.training), where
round 6's loop-by-loop comparison (tests/unit/test_sweep6_interpretability_training.py) left
it free: the shared defaults a bare ``TrainSettings()`` trains with, and the torch thread
count while training (one thread by default, the caller's count with ``threads`` 0).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep8_interpretability.json). Tiny runs (a few dozen steps).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from tsrate.suites.interpretability import training as tr


def series(length=40, n=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(length, n)).cumsum(0) + 5.0


def test_shared_defaults():
    """A bare TrainSettings: the paper's window 10 and 2,000 test steps, 8 hidden units and
    3 epochs (ours: a quick default), batch 128 (the papers' batch for IMV-LSTM, DA-RNN and
    seq2graph), Adam lr 0.01 (TCDF's), every training window, the CPU, one torch thread
    (the field's comment: tiny models run faster on one), PIVM significance 0.8."""
    assert dataclasses.asdict(tr.TrainSettings()) == {
        "window": 10,
        "test_length": 2000,
        "hidden": 8,
        "epochs": 3,
        "batch_size": 128,
        "learning_rate": 0.01,
        "max_train_windows": None,
        "device": "cpu",
        "threads": 1,
        "tcdf_significance": 0.8,
    }


@pytest.fixture
def thread_probe(monkeypatch):
    """Records torch's thread count at every forward pass of the model being trained."""
    seen: list[int] = []
    real_build = tr.build_model

    def build(*args, **kwargs):
        model = real_build(*args, **kwargs)
        model.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
        return model

    monkeypatch.setattr(tr, "build_model", build)
    return seen


@pytest.mark.parametrize(("threads", "expected"), [(None, 1), (2, 2), (0, 3)])
def test_training_runs_on_the_requested_threads(thread_probe, threads, expected):
    """Default: one thread; ``threads`` 2: two; 0: torch's count as the caller left it
    (here 3), not changed. The caller's count is restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        extra = {} if threads is None else {"threads": threads}
        settings = tr.TrainSettings(
            window=4, test_length=3, hidden=2, epochs=1, batch_size=0, **extra
        )
        tr.train_model("tcdf", series(length=12), settings, seed=0)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
    assert thread_probe and set(thread_probe) == {expected}
