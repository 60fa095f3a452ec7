"""Model adapters, prompt encodings and reply parsers, checked against hand-worked numbers.

Written for the planted errors of ``tests/planted/round4_systems.json`` that the older tests
let through. Every expected value here is worked out by hand (or with numpy / PyWavelets
from the stated convention), never read from the code under test.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pandas as pd
import pytest

from tsrate.inputs import images
from tsrate.suites.reasoning import dataset, encoding
from tsrate.systems import choice_decoding, llm_replies

# -- LLM forecasts: the reply parser --------------------------------------------------------


def test_llm_parser_keeps_the_sign_of_every_value():
    """A reply of negative and positive values: each value keeps its sign (a returns
    series, or prices of a shifted series, can be negative)."""
    values = llm_replies.parse_forecast("-1.5, 2.25, -3, +4", 4)
    np.testing.assert_array_equal(values, [-1.5, 2.25, -3.0, 4.0])


# -- closed-answer decoding -----------------------------------------------------------------


def test_admissible_spellings_read_as_their_own_answer_only():
    """A spelling is admissible only when the parser reads it as the answer it spells:
    here the parser reads any case of "up"/"down" but reads upper-case "DOWN" as "up"
    (a made-up parser), so " DOWN"/"DOWN" must be left out."""

    def reads_as(text: str) -> str | None:
        word = text.strip()
        if word == "DOWN":
            return "up"
        return word.lower() if word.lower() in ("up", "down") else None

    out = choice_decoding.admissible(["up", "down"], reads_as)
    assert "DOWN" not in out and " DOWN" not in out
    assert {"up", " up", "Up", " Up", "UP", " UP", "down", " down", "Down", " Down"} <= set(out)


def test_reasoning_is_cut_at_an_answer_line_of_any_case():
    """The suites' parser reads ``ANSWER:`` and ``answer:`` alike, so the reasoning ends
    before such a line whatever its case."""
    reply = "The values rise steadily.\n  ANSWER: yes\n"
    assert choice_decoding.reasoning_before_answer(reply) == "The values rise steadily."
    assert choice_decoding.reasoning_before_answer("So.\nAnswer: no") == "So."


# -- the reasoning suite's LLMTime encoding -------------------------------------------------


def test_llmtime_scaler_hand_worked():
    """LLMTime (Gruver et al.; llmtime/serialize.py): offset = min − β(max − min), scale =
    the α-quantile of x − offset (linear interpolation). x = 1..5, α 0.95, β 0.3: offset
    1 − 0.3·4 = −0.2, x − offset = 1.2 … 5.2, its 0.95-quantile at position 0.95·4 = 3.8:
    4.2 + 0.8·1 = 5.0. Basic (GPT-4): scale = the α-quantile of |x|: x = (−10, 1, 2),
    α 0.3: |x| sorted 1, 2, 10, position 0.6: 1 + 0.6·1 = 1.6."""
    scaler = encoding.fit_scaler(np.array([1.0, 2, 3, 4, 5]), 0.95, 0.3)
    assert scaler.offset == pytest.approx(-0.2)
    assert scaler.scale == pytest.approx(5.0)
    basic = encoding.fit_scaler(np.array([-10.0, 1, 2]), 0.3, 0.3, basic=True)
    assert basic.offset == 0.0 and basic.scale == pytest.approx(1.6)


def test_llmtime_writes_digits_truncated_and_reads_them_back():
    """Precision 3: 1.0527 is written 1052 (truncated, as the reference's digit-by-digit
    ``astype(int)``), −0.5 is written −500; the reply ``1052, -500, 7`` (GPT-4 separators)
    reads back as 1.052, −0.5, 0.007 on the scaled axis."""
    gpt4 = encoding.LLMTIME["llmtime_gpt4"]
    unit = encoding.Scaler()
    assert encoding.encode_llmtime(np.array([1.0527, -0.5]), gpt4, unit) == "1052, -500, "
    decoded = encoding.decode("1052, -500, 7", "llmtime_gpt4", unit, 3)
    np.testing.assert_allclose(decoded, [1.052, -0.5, 0.007])
    gpt = encoding.decode(" 1 0 5 2 , - 5 0 0 ,", "llmtime_gpt", encoding.Scaler(1.0, 2.0), 2)
    np.testing.assert_allclose(gpt, [1.052 * 2 + 1, -0.5 * 2 + 1])


# -- images ---------------------------------------------------------------------------------


def test_standardisation_uses_the_population_std():
    """(1, 2, 3, 4): mean 2.5, population variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25."""
    z, mean, std = images.standardise(np.array([[1.0, 2.0, 3.0, 4.0]]))
    assert mean[0] == pytest.approx(2.5)
    assert std[0] == pytest.approx(math.sqrt(1.25))
    np.testing.assert_allclose(z[0], (np.array([1, 2, 3, 4]) - 2.5) / math.sqrt(1.25))


def test_spectrogram_scales_span_periods_of_two_to_n_samples():
    """A complex Morlet ``cmorB-C`` at scale s oscillates at C / s cycles per sample (its
    Fourier transform peaks at C at scale 1), so a period of p samples is the scale p·C.
    C as PyWavelets reads it from the wavelet's name; the first row is a period of 2
    samples, the last of n (80 here), geometrically spaced."""
    pywt = pytest.importorskip("pywt")
    centre = pywt.ContinuousWavelet(images.WAVELET_NAME).center_frequency
    periods = images.spectrogram_scales(80) / centre
    assert periods[0] == pytest.approx(2.0, rel=1e-6)
    assert periods[-1] == pytest.approx(80.0, rel=1e-6)
    np.testing.assert_allclose(np.diff(np.log(periods)), np.log(40) / (len(periods) - 1))


# -- ViT-num-spec ---------------------------------------------------------------------------


def _settings(n=3, d=2):
    from tsrate.systems.vit_training import TrainingSettings

    return TrainingSettings(
        system_id="vit_num_spec_covid",
        train_start=dt.date(2020, 1, 1),
        train_end=dt.date(2020, 12, 31),
        tickers=("AAA",),
        context_length=n,
        horizon=d,
        size="tiny",
    )


def test_training_windows_take_the_d_values_after_the_context():
    """Closes 0, 1, …, 14 (the value is its position): n 3, d 2. The first window's context
    is 0, 1, 2 and its future 3, 4; the last window's future ends on the last close 14, so
    its context is 10, 11, 12 (11 windows, ends at positions 2 … 12)."""
    pytest.importorskip("torch")
    from tsrate.systems.vit_training import training_windows

    days = pd.bdate_range("2020-01-01", periods=15)
    prices = pd.DataFrame({"ticker": "AAA", "price_date": days, "close": np.arange(15.0)})
    windows = training_windows(prices, _settings())
    assert len(windows.contexts) == 11
    np.testing.assert_array_equal(windows.contexts[0], [0, 1, 2])
    np.testing.assert_array_equal(windows.futures[0], [3, 4])
    np.testing.assert_array_equal(windows.contexts[-1], [10, 11, 12])
    np.testing.assert_array_equal(windows.futures[-1], [13, 14])
    assert windows.end_dates[0] == np.datetime64(days[2].date(), "D")


def test_vit_forecasts_are_last_plus_sigma_times_the_network_output():
    """A network that always outputs (1, −2): the forecasts are x_t + σ·(1, −2). Context
    2, 4, 6, 8: x_t = 8, σ = √5 (population)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("pywt")
    from tsrate.systems.vit_num_spec import VitNumSpecSystem

    class Constant(torch.nn.Module):
        def forward(self, images):  # noqa: ANN001, ANN202
            return torch.tensor([[1.0, -2.0]]).repeat(images.shape[0], 1)

    system = VitNumSpecSystem(_settings(n=4, d=2), prices=pd.DataFrame(), device="cpu")
    system._network = Constant()
    out = system.forecast(np.array([[2.0, 4.0, 6.0, 8.0]]), "P0")
    np.testing.assert_allclose(out[0], [8 + math.sqrt(5), 8 - 2 * math.sqrt(5)], rtol=1e-6)


# -- the reasoning suite's dataset import -----------------------------------------------------


def _series_row(uuid: str, description: str, values: list[float]) -> dict:
    return {
        "uuid": uuid,
        "description": description,
        "description_short": description[:10],
        "description_tiny": description[:5],
        "characteristics": "rises",
        "metadata": {"units": "x"},
        "series": values,
    }


def test_imported_items_answer_with_their_own_description_and_split_history_and_future(
    tmp_path,
):
    """Five series rows with distinct descriptions: each etiological item's option at its
    answer index is its own description (for every seed tried), and each forecast item's
    history and future, joined, are the whole series, split at round(0.8 · 10) = 8."""
    rows = [
        _series_row(f"u{k}", f"scenario number {k}", [float(k * 100 + i) for i in range(10)])
        for k in range(5)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    seen_positions = set()
    for seed in range(6):
        items = dataset.import_items(path, seed=seed)
        etiological = [i for i in items if i.task == "etiological"]
        assert len(etiological) == 5
        for item in etiological:
            own = next(r for r in rows if tuple(r["series"]) == item.series)
            assert item.options[item.answer_index] == own["description"]
            seen_positions.add(item.answer_index)
        for item in (i for i in items if i.task == "forecast"):
            own = next(r for r in rows if tuple(r["series"][:8]) == item.series)
            assert item.future == tuple(own["series"][8:])
    assert len(seen_positions) > 1  # the answer's position varies
