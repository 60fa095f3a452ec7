"""The labelled reasoning plots are new prompts: replies cached for the unlabelled plots
are not reused for them; the robustness suite's bare plots are byte for byte as before;
the docs say what the plot now shows.

The pinned values were computed at the commit before the labels (7b299153): the digest
of a set of bare line plots, of ``rendering_fingerprint()``, and the templates' digest."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import numpy as np

from tests.support.plot_ocr import read_labels
from tests.support.png import decode_png
from tsrate.inputs import images as im
from tsrate.suites.reasoning.answerers import prompt_hash
from tsrate.suites.reasoning.items import Item
from tsrate.suites.reasoning.tasks import TEMPLATES, choice_messages, templates_digest
from tsrate.systems.llm_prompts import png_data_url

ROOT = Path(__file__).resolve().parents[2]
BARE_PLOTS_DIGEST = "ca8cd0135e0c18ccd3660c68fa67e7e2e8722d9eb6593575211a19b1798679bf"
FINGERPRINT_DIGEST = "a33aea1ece797edd823dddfa0c231932301a0302329e59293665be38f85c5fb2"
OLD_TEMPLATES_DIGEST = "b5015e56761f"
OLD_PLOT_ONE = (
    "The time series is shown in the attached line plot (oldest value on the left, "
    "no axis labels).\n\n"
)

SERIES = tuple(float(480 + 20 * np.sin(t / 3) + 2 * t) for t in range(40))
ITEM = Item(
    task="qa_single",
    category="counterfactual_scale",
    series=SERIES,
    question="If admissions were 10% higher, about how many would there be on the last day?",
    options=("about 547 admissions", "about 497 admissions", "about 600 admissions", "about 450"),
    answer_index=0,
    context="Daily hospital admissions.",
    params={"option_values": [547.0, 497.0, 600.0, 450.0]},
)


def test_the_bare_line_plots_are_unchanged_byte_for_byte():
    rng = np.random.default_rng(7)
    contexts = rng.normal(size=(5, 90)).cumsum(axis=1)
    contexts[1, 10:20] = np.nan
    contexts[2] = 3.0
    digest = hashlib.sha256()
    digest.update(im.line_plot_images(contexts).tobytes())
    digest.update(im.line_plot_images(contexts, 64, 96).tobytes())
    digest.update(im.line_plot_images(contexts, 128, 128, y_limits=(-5.0, 5.0)).tobytes())
    assert digest.hexdigest() == BARE_PLOTS_DIGEST
    assert hashlib.sha256(im.rendering_fingerprint()).hexdigest() == FINGERPRINT_DIGEST


def plot_parts(messages: list[dict]) -> tuple[str, list[str]]:
    parts = messages[-1]["content"]
    text = next(p["text"] for p in parts if p["type"] == "text")
    return text, [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]


def test_a_plot_prompt_is_a_new_prompt_with_labelled_images():
    messages = choice_messages(ITEM, "with_series", "plot")
    text, (url,) = plot_parts(messages)
    # what the same prompt held before: the old block, the bare 128-pixel plot
    old_url = png_data_url(im.line_plot_images(np.asarray(SERIES)[None], 128, 128)[0])
    assert url != old_url
    old_text = text.replace(TEMPLATES["plot_one"], OLD_PLOT_ONE)
    assert old_text != text
    old_messages = [messages[0], {"role": "user", "content": [
        {"type": "text", "text": old_text},
        {"type": "image_url", "image_url": {"url": old_url}},
    ]}]  # fmt: skip
    fingerprint = f"m;choice=plot;forecast=llmtime_gpt4;templates={templates_digest()}"
    old_fingerprint = f"m;choice=plot;forecast=llmtime_gpt4;templates={OLD_TEMPLATES_DIGEST}"
    new_hash = prompt_hash("m", fingerprint, ITEM, "with_series", messages)
    assert new_hash != prompt_hash("m", old_fingerprint, ITEM, "with_series", old_messages)
    # either change alone re-asks too: the images are in the hash, and so are the templates
    assert new_hash != prompt_hash("m", fingerprint, ITEM, "with_series", old_messages)
    assert templates_digest() != OLD_TEMPLATES_DIGEST
    assert "no axis labels" not in text and "numbers on the vertical axis" in text


def test_the_options_can_be_read_against_the_plot():
    """The image's labels are raw values around the series, the options' units: 547 lies
    between two labels, at a row the model can see."""
    _, (url,) = plot_parts(choice_messages(ITEM, "with_series", "plot"))
    image = decode_png(base64.b64decode(url.split(",", 1)[1]))
    values = sorted(float(label.text) for label in read_labels(image))
    assert len(values) >= 3
    assert min(SERIES) <= values[0] and values[-1] <= max(SERIES)
    assert values[0] < 547.0 < values[-1]


def test_the_docs_say_the_plot_has_value_labels():
    text = " ".join((ROOT / "docs/suites/reasoning.md").read_text(encoding="utf-8").split())
    assert "so does `plot`, which has no axis labels" not in text
    assert (
        "`plain` shows the stored raw-unit texts (beside raw values); so does `plot`, whose "
        "vertical axis is labelled in raw units, so the options can be read against the plot"
    ) in text
    assert "with value labels on the vertical axis" in text
