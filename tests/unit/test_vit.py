"""The ViT-num-spec system: training on real sample prices, caching, determinism, inference."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.inputs.sentiment import LinePlotSentiment, LinePlotSettings
from tsrate.inputs.windows import contexts as window_contexts
from tsrate.systems.base import ForecastBatch

torch = pytest.importorskip("torch")
vit = pytest.importorskip("tsrate.systems.vit_num_spec")

TINY = vit.TrainingSettings(
    system_id="vit_num_spec_covid",
    train_start=dt.date(2020, 3, 2),
    train_end=dt.date(2021, 6, 30),
    tickers=("AAPL", "JPM"),
    context_length=40,
    horizon=10,
    size="tiny",
    max_windows=160,
    max_epochs=2,
    batch_size=32,
)
SENTIMENT = LinePlotSettings(context_length=40, training_walks=200, validation_walks=60, epochs=1)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Models this tiny train faster on one thread, above all on a busy 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def prices():
    return vit.training_prices(TINY)


def make_system(cache, prices, settings=TINY):
    sentiment = LinePlotSentiment(SENTIMENT, cache_dir=cache)
    return vit.VitNumSpecSystem(settings, prices=prices, sentiment=sentiment, cache_dir=cache)


@pytest.fixture(scope="module")
def trained(cache, prices):
    system = make_system(cache, prices)
    system.prepare()
    return system


def test_tiny_config_trains_and_stores_checkpoint_with_metadata(trained):
    assert trained.trained_now
    path = trained.checkpoint_path
    assert path.exists() and trained.key in path.name
    meta = trained.metadata
    assert meta["key"] == trained.key
    assert meta["tickers"] == ["AAPL", "JPM"]
    assert meta["training_windows"] + meta["validation_windows"] + meta["purged_windows"] == 160
    assert meta["purged_windows"] >= 1  # two tickers, d 20: a window of each reaches validation
    assert "2020-" in meta["first_window_end"] and meta["last_window_end"] <= "2021-06-30"
    assert np.isfinite(meta["validation_loss"]) and 1 <= meta["best_epoch"] <= 2
    assert trained.key in trained.fingerprint()


def test_forecasts_have_the_batch_shape_and_are_finite(trained, prices):
    closes = prices.loc[prices["ticker"] == "AAPL", "close"].to_numpy()
    ends = np.arange(60, 90)
    batch = ForecastBatch(
        ticker="AAPL",
        perturbation_id="P0",
        window_end_dates=np.arange(len(ends)),
        contexts=window_contexts(closes, ends, 40),
        horizon=10,
        clean_futures=np.zeros((len(ends), 10)),
        study_range=(0.0, 1.0),
    )
    forecasts = trained.predict(batch)
    assert forecasts.shape == (30, 10) and np.isfinite(forecasts).all()
    # standardised-change head: forecasts stay on the price scale, near the last value
    last = batch.contexts[:, -1]
    assert (np.abs(forecasts[:, 0] - last) < 0.5 * last).all()
    for perturbation in ("P4", "P5", "P6"):
        perturbed = trained.predict(dataclasses.replace(batch, perturbation_id=perturbation))
        assert perturbed.shape == (30, 10) and np.isfinite(perturbed).all()
        assert not np.array_equal(perturbed, forecasts)  # the image perturbation reached the model
    with pytest.raises(TsrateError, match="horizon 10"):
        trained.predict(dataclasses.replace(batch, horizon=5))


def test_model_images_apply_the_image_perturbation(trained):
    contexts = np.linspace(10, 20, 40)[None, :].repeat(2, axis=0)
    clean = trained.model_images(contexts, "P0")
    p4 = trained.model_images(contexts, "P4")
    assert (clean != p4).any(axis=3).sum() == 2 and p4[:, 64, 64].sum() == 0


def test_reruns_reuse_the_cached_weights(trained, cache, prices):
    again = make_system(cache, prices)
    again.prepare()
    assert not again.trained_now and again.key == trained.key
    contexts = 100 + np.random.default_rng(3).standard_normal((4, 40)).cumsum(axis=1)
    np.testing.assert_array_equal(again.forecast(contexts), trained.forecast(contexts))
    other = make_system(cache, prices, dataclasses.replace(TINY, seed=7))
    assert other.key != trained.key  # another seed is another model
    shifted = prices.assign(close=prices["close"] * 1.01)
    assert make_system(cache, shifted).key != trained.key  # so are other prices


def test_training_is_deterministic_with_the_seed(trained, prices):
    cached = torch.load(trained.checkpoint_path, weights_only=True)
    retrained, _ = vit.train(TINY, prices)
    for name, tensor in retrained.items():
        assert torch.equal(tensor, cached[name]), name


def test_targets_are_standardised_changes_from_the_last_value():
    contexts = np.array([[1.0, 2.0, 3.0, np.nan]])
    futures = np.array([[5.0, 1.0]])
    targets, last, std = vit.standardised_targets(contexts, futures)
    assert last[0] == 3.0  # the missing last value is filled with the nearest observed one
    np.testing.assert_allclose(last[:, None] + std[:, None] * targets, futures)


def test_too_short_training_data_is_a_clear_error(prices):
    short = dataclasses.replace(
        TINY, train_start=dt.date(2021, 5, 3), train_end=dt.date(2021, 6, 30)
    )
    with pytest.raises(TsrateError, match="too little training data.*2021-05-03"):
        vit.training_windows(vit.training_prices(short), short)
    with pytest.raises(TsrateError, match="vit_size"):
        dataclasses.replace(TINY, size="huge")


def test_variants_and_vars(monkeypatch):
    settings = vit.settings_from_vars(
        "vit_num_spec_precovid",
        ("AAPL",),
        80,
        20,
        {"vit_size": "tiny", "vit_precovid_start": "2006-01-04"},
    )
    assert settings.train_start == dt.date(2006, 1, 4) and settings.train_end == dt.date(
        2014, 12, 31
    )
    assert "AAPL" not in settings.tickers and len(settings.tickers) == 19  # sample − study
    assert settings.size == "tiny"
    covid = vit.settings_from_vars(
        "vit_num_spec_covid", ("AAPL",), 80, 20, {"vit_training_tickers": "msft, ko"}
    )
    assert covid.tickers == ("MSFT", "KO") and covid.train_start == dt.date(2020, 3, 2)
    with pytest.raises(TsrateError, match="unknown ViT-num-spec variant"):
        vit.settings_from_vars("vit_x", ("AAPL",), 80, 20, {})


def test_registry_builds_both_variants_and_reports_missing_tickers(monkeypatch, tmp_path):
    from tsrate.config import Study, load_companies
    from tsrate.systems.registry import resolve_systems

    monkeypatch.setenv("TSRATE_MODEL_DIR", str(tmp_path))
    monkeypatch.setenv("TSRATE_MULTIMODAL_VARS", '{"vit_size": "tiny"}')
    study = Study.from_mapping(
        dict(
            study_tickers=["AAPL"],
            study_start="2022-01-03",
            study_end="2022-12-28",
            systems=["vit_num_spec_precovid", "vit_num_spec_covid"],
            perturbations=["P0", "P4"],
        )
    )
    systems = resolve_systems(study, load_companies())
    assert set(systems) == {"vit_num_spec_precovid", "vit_num_spec_covid"}
    precovid, accepted = systems["vit_num_spec_precovid"]
    assert accepted == ("P0", "P1", "P2", "P4", "P5", "P6")
    assert precovid.settings.size == "tiny" and precovid.settings.train_end.year == 2014
    assert "trains on first run" in precovid.availability().reason
    monkeypatch.setenv("TSRATE_MULTIMODAL_VARS", '{"vit_training_tickers": ["NOPE"]}')
    with pytest.raises(TsrateError, match="NOPE"):
        resolve_systems(study, load_companies())
