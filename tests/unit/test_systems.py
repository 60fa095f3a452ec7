"""Baseline systems on real windows, and validation of model output."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.forecast_batch import closes, series_batch
from tsrate.config import Study
from tsrate.systems.arima import ArimaSystem
from tsrate.systems.base import ForecastOutputError, check_forecasts
from tsrate.systems.biased import BiasedSystem
from tsrate.systems.naive import NaiveSystem
from tsrate.systems.registry import resolve_systems, system_infos
from tsrate.systems.uniform_random import UniformRandomSystem


@pytest.fixture(scope="module")
def aapl():
    return closes("AAPL", "2022-06-01")


def batch(values, perturbation="P0", n=30, d=5, windows=6):
    return series_batch(values, perturbation, n, d, windows)


def test_naive_repeats_last_observed_value(aapl):
    b = batch(aapl, "P3", n=30)
    b.contexts[0, -1] = np.nan  # last value missing: falls back to the one before
    out = NaiveSystem().predict(b)
    assert out.shape == (6, 5)
    for row, context in enumerate(b.contexts):
        assert np.all(out[row] == context[~np.isnan(context)][-1])
    assert np.all(out[0] == b.contexts[0, -2])


def test_arima_copes_with_missing_values(aapl):
    b = batch(aapl, "P3")
    assert np.isnan(b.contexts).sum() == 6
    system = ArimaSystem((1, 1, 1))
    out = check_forecasts("arima", b, system.predict(b))
    assert system.fallbacks == 0
    # forecasts stay in a plausible band around the last observed price
    assert np.all(np.abs(out - aapl.mean()) < aapl.std() * 5)


def test_arima_reacts_to_drop_to_zero(aapl):
    clean, dropped = (
        ArimaSystem().predict(batch(aapl, "P0")),
        ArimaSystem().predict(batch(aapl, "P1")),
    )
    assert np.abs(clean - dropped).max() > 1e-6


def test_biased_is_actual_plus_offset(aapl):
    b = batch(aapl)
    out = BiasedSystem({"AAPL": 200.0}).predict(b)
    np.testing.assert_allclose(out - b.clean_futures, 200.0)


def test_random_in_range_seeded_and_independent_per_perturbation(aapl):
    low, high = aapl.min(), aapl.max()
    one = UniformRandomSystem(7).predict(batch(aapl, "P0"))
    assert one.min() >= low and one.max() <= high
    np.testing.assert_array_equal(one, UniformRandomSystem(7).predict(batch(aapl, "P0")))
    assert not np.array_equal(one, UniformRandomSystem(7).predict(batch(aapl, "P1")))
    assert not np.array_equal(one, UniformRandomSystem(8).predict(batch(aapl, "P0")))


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (np.ones((6, 4)), "shape"),
        ([["a"] * 5] * 6, "not numeric"),
        (np.full((6, 5), np.inf), "non-finite"),
    ],
)
def test_unparseable_model_output_is_named(aapl, output, message):
    with pytest.raises(ForecastOutputError, match=message) as info:
        check_forecasts("mymodel", batch(aapl), output)
    assert "mymodel" in str(info.value) and "AAPL" in str(info.value)


def study(**kw):
    base = dict(study_tickers=["AAPL"], study_start="2022-01-01", study_end="2022-12-28")
    base.update(kw)
    return Study.from_mapping(base)


def test_unknown_and_unimplemented_systems_are_errors():
    companies = __import__("tsrate.config", fromlist=["load_companies"]).load_companies()
    with pytest.raises(Exception, match="unknown system 'nope'"):
        resolve_systems(study(systems=["nope"]), companies)
    from tsrate.systems.registry import load_systems_seed

    seed = load_systems_seed()
    unimplemented = seed.loc[seed["implementation"] == "", "system_id"].tolist()
    if unimplemented:  # rows of the paper this version cannot run yet
        with pytest.raises(Exception, match=f"'{unimplemented[0]}' cannot run here"):
            resolve_systems(study(systems=[unimplemented[0]]), companies)


def test_every_paper_system_is_listed_with_a_reason():
    infos = {i.system_id: i for i in system_infos(study())}
    for system_id in [
        "arima",
        "random",
        "biased",
        "chronos",
        "moment",
        "gemini_numeric",
        "gemini_numeric_image",
        "phi3_numeric",
        "phi3_numeric_image",
        "vit_num_spec_precovid",
        "vit_num_spec_covid",
        "naive",
    ]:
        assert system_id in infos
        assert infos[system_id].availability.reason
    assert infos["arima"].availability.available
    assert not infos["chronos"].availability.available
