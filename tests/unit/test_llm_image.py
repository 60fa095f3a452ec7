"""Numeric+image LLM systems against the local chat-completions server: the request carries
the window's line plot as a valid PNG of the configured size, and P4–P6 perturb that image
exactly as tsrate.inputs.perturbations does for ViT-num-spec."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from tests.support.chat_server import ChatServer, settings
from tests.support.forecast_batch import D, N, make_batch
from tests.support.png import decode_png
from tsrate.config import Study
from tsrate.inputs.images import IMAGE_SIZE, line_plot_images
from tsrate.inputs.perturbations import SENTIMENT_STRIPE_HEIGHT, perturb_images
from tsrate.inputs.sentiment import LinePlotSentiment, LinePlotSettings
from tsrate.systems import llm_prompts
from tsrate.systems.llm import LlmSystem
from tsrate.systems.registry import resolve_systems

pytest.importorskip("openai", reason="the openai client is not installed (extra `llm`)")

ANSWER = "1, 2, 3, 4"


def sent_images(server: ChatServer) -> dict[str, np.ndarray]:
    """User text → the image its request carried."""
    out = {}
    for payload in server.payloads:
        text_part, image_part = payload["messages"][-1]["content"]
        assert text_part["type"] == "text" and image_part["type"] == "image_url"
        url = image_part["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        out[text_part["text"]] = decode_png(base64.b64decode(url.split(",", 1)[1]))
    return out


def image_batch(perturbation_id: str):
    import dataclasses

    return dataclasses.replace(make_batch(), perturbation_id=perturbation_id)


def test_request_carries_the_line_plot_and_p4_p5_perturb_it():
    with ChatServer(lambda payload: (200, ANSWER)) as server:
        system = LlmSystem("phi3_numeric_image", settings(server.base_url, with_image=True))
        batch = make_batch()
        np.testing.assert_array_equal(system.predict(image_batch("P0")), [[1, 2, 3, 4]] * 3)
        clean = sent_images(server)
        server.payloads.clear()
        system.predict(image_batch("P4"))
        p4 = sent_images(server)
        server.payloads.clear()
        system.predict(image_batch("P5"))
        p5 = sent_images(server)
    expected = line_plot_images(batch.contexts)
    assert len(clean) == 3
    for row, context in enumerate(batch.contexts):
        text = llm_prompts.render_messages(context, D, 2, "x")[1]["content"][0]["text"]
        assert "line plot" in text and llm_prompts.format_values(context, 2) in text
        assert clean[text].shape == (IMAGE_SIZE, IMAGE_SIZE, 3)
        np.testing.assert_array_equal(clean[text], expected[row])
        np.testing.assert_array_equal(p4[text], perturb_images(expected[row : row + 1], "P4")[0])
        changed = np.argwhere((p4[text] != clean[text]).any(axis=-1))
        assert changed.tolist() == [[IMAGE_SIZE // 2, IMAGE_SIZE // 2]]  # only the centre pixel
        np.testing.assert_array_equal(p5[text], perturb_images(expected[row : row + 1], "P5")[0])
        assert (p5[text] != clean[text]).any()


def test_p6_draws_the_sentiment_stripe_and_the_size_is_configurable(tmp_path):
    sentiment = LinePlotSentiment(
        LinePlotSettings(context_length=N, training_walks=64, validation_walks=32, epochs=1),
        cache_dir=tmp_path,
    )
    with ChatServer(lambda payload: (200, ANSWER)) as server:
        system = LlmSystem(
            "gemini_numeric_image",
            settings(server.base_url, with_image=True, image_size=64),
            sentiment=sentiment,
        )
        batch = image_batch("P6")
        system.predict(batch)
        images = sent_images(server)
    labels = sentiment.predict(batch.contexts).labels
    for row, context in enumerate(batch.contexts):
        text = llm_prompts.render_messages(context, D, 2, "x")[1]["content"][0]["text"]
        image = images[text]
        assert image.shape == (64, 64, 3)
        stripe = image[-SENTIMENT_STRIPE_HEIGHT:]
        assert (stripe == round((labels[row] + 1) / 2 * 255)).all()
        plain = line_plot_images(batch.contexts[row : row + 1], 64, 64)[0]
        np.testing.assert_array_equal(
            image[:-SENTIMENT_STRIPE_HEIGHT], plain[:-SENTIMENT_STRIPE_HEIGHT]
        )


def test_image_seed_rows_resolve_to_the_image_mode(monkeypatch, tmp_path):
    monkeypatch.setenv("TSRATE_LLM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TSRATE_PHI3_NUMERIC_IMAGE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TSRATE_PHI3_NUMERIC_BASE_URL", "http://127.0.0.1:9/v1")
    study = Study.from_vars({"systems": ["phi3_numeric", "phi3_numeric_image"]})
    systems = resolve_systems(study, None)
    image_system, accepted = systems["phi3_numeric_image"]
    assert accepted == ("P0", "P1", "P2", "P3", "P4", "P5", "P6")
    assert image_system.settings.with_image and not systems["phi3_numeric"][0].settings.with_image
    assert image_system.settings.model == "microsoft/Phi-3-vision-128k-instruct"
    numeric_print = systems["phi3_numeric"][0].fingerprint()
    assert "image=line_plot128" in image_system.fingerprint()
    assert numeric_print.split(";prompt=")[1] != image_system.fingerprint().split(";prompt=")[1]
    # without an image the message content stays a plain string (numeric systems unchanged)
    assert isinstance(llm_prompts.render_messages(np.ones(N), D, 2)[1]["content"], str)


def test_show_prompt_renders_the_template_files(capsys):
    from tsrate.cli import main

    assert main(["systems", "--show-prompt", "phi3_numeric_image"]) == 0
    shown = capsys.readouterr().out
    assert llm_prompts.SYSTEM_PROMPT in shown
    first_line = llm_prompts.USER_PROMPT_IMAGE.split("{values}")[0].format(n=80, decimals=2)
    assert first_line in shown
    assert "[image part: data:image/png, 128x128 line plot" in shown
    assert main(["systems", "--show-prompt", "gemini_numeric"]) == 0
    assert "image part" not in capsys.readouterr().out
    assert main(["systems", "--show-prompt", "naive"]) != 0
    assert "'naive' is not a language model" in capsys.readouterr().err


def test_prompt_templates_are_package_files():
    from importlib import resources

    folder = resources.files("tsrate.systems") / "prompts"
    for name, text in [
        ("system", llm_prompts.SYSTEM_PROMPT),
        ("numeric", llm_prompts.USER_PROMPT),
        ("numeric_image", llm_prompts.USER_PROMPT_IMAGE),
    ]:
        assert (folder / f"{name}.txt").read_text().rstrip("\n") == text
    for template in (llm_prompts.USER_PROMPT, llm_prompts.USER_PROMPT_IMAGE):
        for placeholder in ("{n}", "{decimals}", "{values}", "{horizon}"):
            assert placeholder in template
