"""Reasoning suite: what each condition puts in the prompt, reply parsing into responses,
and the pure functions behind the Python models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsrate.suites.reasoning.answerers import Request, parse_reply
from tsrate.suites.reasoning.encoding import decode, encode_text
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.marts import forecast_errors, normalised_errors, rating_table
from tsrate.suites.reasoning.tasks import choice_messages, forecast_messages

SERIES = tuple(float(100 + 3 * t + (t % 7)) for t in range(30))
QUESTION = Item(
    task="qa_two",
    category="difference",
    series=SERIES,
    series_b=tuple(v * 2 for v in SERIES),
    question="How does the second compare?",
    options=("lower", "same", "higher", "zero"),
    answer_index=2,
    context="Grocery sales, affected by a promotion",
)
FORECAST = Item(
    task="forecast",
    category="retail",
    series=SERIES[:24],
    future=SERIES[24:],
    context="From day 25 on, a promotion doubles the values.",
)


def user_text(messages) -> str:
    content = messages[-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_with_and_without_series_differ_only_by_the_series():
    with_series = user_text(choice_messages(QUESTION, "with_series", "plain"))
    without = user_text(choice_messages(QUESTION, "without_series", "plain"))
    for text in (with_series, without):
        assert text.startswith("Context: Grocery sales, affected by a promotion\n\n")
        assert "A. lower\nB. same\nC. higher\nD. zero" in text
        assert text.endswith("Answer with the letter of one option (A, B, C, D) only.")
    assert "100.00, 104.00" in with_series and "Second series:\n200.00, 208.00" in with_series
    assert "100.00" not in without and "series of" not in without


def test_two_series_share_one_llmtime_scale():
    text = user_text(choice_messages(QUESTION, "with_series", "llmtime_llama"))
    lines = text.splitlines()
    first = lines[lines.index("First series:") + 1]
    second = lines[lines.index("Second series:") + 1]
    _, scaler = encode_text("llmtime_llama", np.concatenate([QUESTION.series, QUESTION.series_b]))
    np.testing.assert_allclose(
        decode(first, "llmtime_llama", scaler, 30), SERIES, atol=scaler.scale * 1e-3
    )
    np.testing.assert_allclose(
        decode(second, "llmtime_llama", scaler, 30), QUESTION.series_b, atol=scaler.scale * 1e-3
    )


def test_plot_encoding_sends_line_plots():
    messages = choice_messages(QUESTION, "with_series", "plot")
    parts = messages[-1]["content"]
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == 2
    assert all(p["image_url"]["url"].startswith("data:image/png;base64,") for p in images)
    assert "two attached line plots" in parts[0]["text"]


def test_forecast_prompts_and_replies():
    without, scaler = forecast_messages(FORECAST, "without_context", "llmtime_gpt")
    with_context, _ = forecast_messages(FORECAST, "with_context", "llmtime_gpt")
    assert "promotion" not in user_text(without)
    assert user_text(with_context).startswith("Context: From day 25 on, a promotion doubles")
    assert "write the next 6 values" in user_text(without)
    request = Request("m", FORECAST, "without_context", "llmtime_gpt", without, scaler, "h1")
    reply, _ = encode_text("llmtime_gpt", np.asarray(FORECAST.future), scaler)
    parsed = parse_reply(request, reply + " 9 9 9 ,")  # extra values are dropped
    np.testing.assert_allclose(parsed.forecast, FORECAST.future, atol=scaler.scale * 1e-3)
    broken = parse_reply(request, "The series will go up.")
    assert not broken.parse_ok and broken.raw_text == "The series will go up."
    assert broken.forecast is None and "not an encoded number" in broken.parse_error
    choice = Request("m", QUESTION, "with_series", "plain", [], None, "h2")
    assert parse_reply(choice, "C").choice == 2
    assert parse_reply(choice, "maybe").parse_error.startswith("no option letter")


def test_forecast_errors_are_normalised_by_the_history():
    history, future = np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, 7.0])
    forecast = np.array([4.0, 4.0])
    scale = history.std()
    mae, mse = normalised_errors(history, future, forecast)
    assert mae == pytest.approx(np.mean(np.abs(forecast - future)) / scale)
    assert mse == pytest.approx(np.mean(((forecast - future) / scale) ** 2))
    assert normalised_errors(np.ones(3), np.array([2.0]), np.array([1.0])) == (1.0, 1.0)
    rows = pd.DataFrame(
        {
            "suite_run_id": "r",
            "prompt_hash": ["a", "b"],
            "item_id": "i",
            "system_id": "s",
            "condition": "without_context",
            "category": "c",
            "task": "forecast",
            "is_answered": True,
            "parse_ok": [True, False],
            "series": [history, history],
            "future": [future, future],
            "forecast": [forecast, None],
        }
    )
    out = forecast_errors(rows)
    assert out["prompt_hash"].tolist() == ["a", "b"]  # every forecast counts
    assert out["usable"].tolist() == [True, False]
    assert out["baseline_mae"][0] == pytest.approx(np.mean(np.abs(2.5 - future)) / scale)
    # the unparseable one: the worse of the parsed forecast's error and the baseline's
    assert out["mae"][1] == pytest.approx(max(out["mae"][0], out["baseline_mae"][0]))


def test_ratings_read_each_metric_in_its_direction():
    scores = pd.DataFrame(
        {
            "suite_run_id": "r",
            "metric": ["accuracy"] * 3 + ["mae"] * 3,
            "task": ["etiological"] * 3 + ["forecast_with_context"] * 3,
            "system_id": ["a", "b", "c"] * 2,
            "raw_score": [0.25, 0.5, 0.75, 1.0, 2.0, 3.0],
        }
    )
    rated = rating_table(scores, 3).set_index(["metric", "system_id"])
    assert (
        rated.loc[("accuracy", "c"), "rating"] == 3
        and rated.loc[("accuracy", "c"), "higher_is_better"]
    )
    assert (
        rated.loc[("mae", "a"), "rating"] == 1 and not rated.loc[("mae", "a"), "higher_is_better"]
    )
    with pytest.raises(ValueError, match="no rating direction"):
        rating_table(scores.assign(metric="speed"), 3)
