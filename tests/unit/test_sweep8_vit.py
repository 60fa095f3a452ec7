"""The ViT-num-spec network's training mode and the forecasting system around it
(tsrate.systems.vit_model after line 45, tsrate.systems.vit_num_spec) against values worked
out independently of the code: the network has no dropout (train-mode outputs equal
eval-mode ones, as the module doc says), the device and batch size come from the argument,
then the environment, then the documented defaults (256 on a CPU, 4096 on a GPU), forecasts
are x_t + σ · ŷ for every window in order whatever the batch size (σ the population sd,
computed here with numpy), only P6 asks the sentiment system, cached weights are loaded
without unpickling code (``weights_only``), ``force`` retrains and a cached checkpoint is
reused, availability says no when a package, the GPU asked for or the training tickers
are missing, and show-input names the two window ends nearest a date that is none.

Written for the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep8_vit.json). Networks are tiny or stubs, on the CPU; no training runs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import types

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pywt")
from tsrate import TsrateError  # noqa: E402
from tsrate.inputs.images import vit_num_spec_images  # noqa: E402
from tsrate.systems import vit_model as vm  # noqa: E402
from tsrate.systems import vit_num_spec as vns  # noqa: E402

N, D = 8, 2


def settings(**changes) -> vns.TrainingSettings:
    base = dict(
        system_id="vit_num_spec_covid",
        train_start=dt.date(2020, 1, 1),
        train_end=dt.date(2020, 12, 31),
        tickers=("AAA",),
        context_length=N,
        horizon=D,
        size="tiny",
    )
    return vns.TrainingSettings(**{**base, **changes})


PRICES = pd.DataFrame(
    {"ticker": "AAA", "price_date": pd.bdate_range("2020-01-01", periods=20), "close": 1.0}
)


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv("TSRATE_VIT_DEVICE", raising=False)
    monkeypatch.delenv("TSRATE_VIT_BATCH_SIZE", raising=False)


def system(tmp_path, **kwargs) -> vns.VitNumSpecSystem:
    return vns.VitNumSpecSystem(settings(), prices=PRICES, cache_dir=tmp_path, **kwargs)


# -------------------------------------------------------------------------- the network


def test_the_network_has_no_dropout_in_training_mode():
    torch.manual_seed(0)
    network = vm.build_network(vm.SIZES["tiny"], horizon=3)
    images = torch.randn(2, 3, 128, 128)
    with torch.no_grad():
        training = network.train()(images)
        evaluating = network.eval()(images)
    torch.testing.assert_close(training, evaluating)
    assert float(training.abs().sum()) > 0


# -------------------------------------------------------------------------- device and batch


def test_device_comes_from_the_argument_then_the_environment(tmp_path, monkeypatch):
    assert system(tmp_path, device="cuda:3").device == "cuda:3"
    monkeypatch.setenv("TSRATE_VIT_DEVICE", "cuda:5")
    assert system(tmp_path).device == "cuda:5"
    assert system(tmp_path, device="cpu").device == "cpu"


def test_batch_size_comes_from_the_argument_then_the_environment_then_the_device(
    tmp_path, monkeypatch
):
    assert system(tmp_path, device="cpu").batch_size == 256
    assert system(tmp_path, device="cuda:0").batch_size == 4096
    assert system(tmp_path, device="cpu", batch_size=7).batch_size == 7
    assert system(tmp_path, device="cpu", batch_size=1).batch_size == 1  # the smallest
    with pytest.raises(TsrateError, match="at least 1"):
        system(tmp_path, batch_size=-2)
    monkeypatch.setenv("TSRATE_VIT_BATCH_SIZE", "5")
    assert system(tmp_path, device="cpu").batch_size == 5
    assert system(tmp_path, device="cpu", batch_size=9).batch_size == 9
    monkeypatch.setenv("TSRATE_VIT_BATCH_SIZE", "0")
    with pytest.raises(TsrateError, match="at least 1, got 0"):
        system(tmp_path)
    monkeypatch.setenv("TSRATE_VIT_BATCH_SIZE", "many")  # one line naming it, not a ValueError
    with pytest.raises(TsrateError, match="TSRATE_VIT_BATCH_SIZE='many' is not a whole number"):
        system(tmp_path)


# -------------------------------------------------------------------------- forecasts


class PixelMean(torch.nn.Module):
    """Outputs (mean pixel, −2 · mean pixel) of each image, and records its batch sizes."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def forward(self, images):  # noqa: ANN001, ANN201
        self.batches.append(len(images))
        mean = images.mean(dim=(1, 2, 3))
        return torch.stack([mean, -2 * mean], dim=1)


@pytest.mark.parametrize(("batch", "sizes"), [(2, [2, 2, 1]), (256, [5])])
def test_forecasts_are_last_plus_sigma_times_the_output_for_every_window(tmp_path, batch, sizes):
    contexts = 50 + np.random.default_rng(4).standard_normal((5, N)).cumsum(axis=1)
    s = system(tmp_path, device="cpu", batch_size=batch)
    s._network = PixelMean()
    out = s.forecast(contexts, "P0")
    assert s._network.batches == sizes
    images = vit_num_spec_images(contexts).astype(float) / 127.5 - 1.0
    for k, context in enumerate(contexts):
        sigma = np.sqrt(np.mean((context - context.mean()) ** 2))
        mean = images[k].mean()
        np.testing.assert_allclose(
            out[k], [context[-1] + sigma * mean, context[-1] - 2 * sigma * mean], rtol=1e-6
        )


class Sentiment:
    sentiment_system_id = "stub"

    def __init__(self):
        self.calls = []

    def fingerprint(self) -> str:
        return "stub"

    def predict(self, contexts):  # noqa: ANN001, ANN201
        from tsrate.inputs.sentiment import SentimentOutput

        self.calls.append(len(contexts))
        labels = np.ones(len(contexts), dtype=int)
        return SentimentOutput(labels, np.tile([0.0, 0.0, 1.0], (len(contexts), 1)))


def test_only_p6_asks_the_sentiment_system(tmp_path):
    sentiment = Sentiment()
    s = system(tmp_path, sentiment=sentiment)
    contexts = np.linspace(1, 2, 3 * N).reshape(3, N)
    for perturbation in ("P0", "P4", "P5"):
        s.model_images(contexts, perturbation)
    assert sentiment.calls == []
    s.model_images(contexts, "P6")
    assert sentiment.calls == [3]


def test_a_batch_of_the_wrong_context_length_is_refused(tmp_path):
    from tsrate.systems.base import ForecastBatch

    s = system(tmp_path, device="cpu")
    s._network = PixelMean()
    contexts = np.linspace(1, 2, 3 * (N + 1)).reshape(3, N + 1)
    batch = ForecastBatch(
        ticker="AAA",
        perturbation_id="P0",
        window_end_dates=np.arange(3),
        contexts=contexts,
        horizon=D,
        clean_futures=np.zeros((3, D)),
        study_range=(0.0, 1.0),
    )
    with pytest.raises(TsrateError, match=f"contexts of {N} values, got {N + 1}"):
        s.predict(batch)
    square = np.linspace(1, 2, N * N).reshape(N, N)  # as many windows as values: accepted
    assert s.predict(
        ForecastBatch("AAA", "P0", np.arange(N), square, D, np.zeros((N, D)), (0.0, 1.0))
    ).shape == (N, D)


# -------------------------------------------------------------------------- weights


def tiny_state(seed: int = 0):
    torch.manual_seed(seed)
    return vm.build_network(vm.SIZES["tiny"], D).state_dict()


def test_prepare_trains_once_reuses_and_force_retrains(tmp_path, monkeypatch):
    calls = []

    def fake_train(settings_, prices, device, progress):  # noqa: ANN001, ANN202
        calls.append(device)
        return tiny_state(len(calls)), {"validation_loss": 0.5}

    monkeypatch.setattr(vns, "train", fake_train)
    first = system(tmp_path, device="cpu")
    assert not first.trained_now
    first.prepare()
    assert calls == ["cpu"] and first.trained_now and first.checkpoint_path.exists()
    assert first.metadata["key"] == first.key
    first.prepare()  # prepared: nothing to do
    assert calls == ["cpu"]
    again = system(tmp_path, device="cpu")
    again.prepare()  # the checkpoint is there: loaded, not trained
    assert calls == ["cpu"] and not again.trained_now
    assert again.metadata["validation_loss"] == 0.5
    for name, tensor in tiny_state(1).items():
        assert torch.equal(again._network.state_dict()[name], tensor)
    again.prepare(force=True)  # retrains although prepared and cached
    assert calls == ["cpu", "cpu"] and again.trained_now
    fresh = system(tmp_path, device="cpu")
    fresh.prepare(force=True)  # retrains although cached
    assert len(calls) == 3


def test_cached_weights_are_loaded_without_running_pickled_code(tmp_path, monkeypatch):
    flag = tmp_path / "code_ran"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(flag),))

    s = system(tmp_path, device="cpu")
    s.checkpoint_path.parent.mkdir(parents=True)
    torch.save({"weights": Payload()}, s.checkpoint_path)
    monkeypatch.setattr(vns, "train", lambda *a: pytest.fail("trained instead of loading"))
    with pytest.raises(Exception):  # noqa: B017 - torch's refusal (an UnpicklingError)
        s.prepare()
    assert not flag.exists()


# -------------------------------------------------------------------------- availability


def test_availability_says_no_for_a_missing_package(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "pywt" else real(name)
    )
    state = system(tmp_path).availability()
    assert not state.available and "pywt not installed" in state.reason


def test_availability_says_no_for_a_gpu_that_is_not_there(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    state = system(tmp_path, device="cuda:0").availability()
    assert not state.available and "no CUDA GPU" in state.reason
    ok = system(tmp_path, device="cpu").availability()
    assert ok.available and "tiny ViT on cpu" in ok.reason and "trains on first run" in ok.reason


def test_availability_says_no_when_the_training_prices_cannot_be_read(tmp_path):
    s = vns.VitNumSpecSystem(settings(tickers=("NOPE",)), cache_dir=tmp_path, device="cpu")
    state = s.availability()
    assert not state.available and "NOPE" in state.reason


# -------------------------------------------------------------------------- show-input


@dataclasses.dataclass(frozen=True)
class FakeStudy:
    tickers: tuple[str, ...] = ("MRK",)
    context_length: int = N
    horizon: int = D
    stride: int = 1


def test_show_input_names_the_two_nearest_window_ends(monkeypatch):
    """Window ends 2022-01-03, 01-05, 01-10, 01-20; asked for 01-08 (no window ends then):
    the nearest are 01-10 (2 days) and 01-05 (3 days), named in date order; asked for
    01-10, the image of that window (the third) comes back."""
    ends = np.array(["2022-01-03", "2022-01-05", "2022-01-10", "2022-01-20"], "datetime64[D]")
    seed = pd.DataFrame(
        {
            "system_id": ["vit_num_spec_covid"],
            "implementation": ["tsrate.systems.vit_num_spec:vit_num_spec_covid"],
            "accepted_perturbations": ["P0 P4"],
        }
    )

    class Shown:
        def model_images(self, contexts, perturbation_id):  # noqa: ANN001, ANN202
            return contexts[:, :1] * 10  # the window's first value, to tell windows apart

    monkeypatch.setattr("tsrate.systems.registry.load_systems_seed", lambda: seed)
    monkeypatch.setattr("tsrate.systems.registry.create_system", lambda *a: Shown())
    monkeypatch.setattr(
        "tsrate.robustness.forecast.plan.load_series", lambda con, study: {"MRK": None}
    )
    batch = types.SimpleNamespace(
        window_end_dates=ends, contexts=np.arange(4.0)[:, None] + np.zeros((4, N))
    )
    monkeypatch.setattr("tsrate.robustness.forecast.plan.make_batch", lambda *a: batch)
    with pytest.raises(TsrateError, match=r"nearest: 2022-01-05, 2022-01-10$"):
        vns.show_input(None, FakeStudy(), None, "vit_num_spec_covid", "mrk", "2022-01-08", "P0")
    shown = vns.show_input(None, FakeStudy(), None, "vit_num_spec_covid", "MRK", "2022-01-10", "P0")
    assert shown.tolist() == [20.0]
