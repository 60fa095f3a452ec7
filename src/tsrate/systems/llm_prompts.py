"""The prompts language-model forecasters receive, and how a prompt is shown.

Encoding (LLMTime-style, plain text): the context values, oldest first, each rounded to
``decimals`` places (default 2: cents), separated by ``", "``; a missing value (P3) is
written ``NaN`` and the prompt says so. No rescaling: the model sees prices as they are.
The prompt asks for exactly d values in the same format (:data:`SYSTEM_PROMPT`,
:data:`USER_PROMPT`; their hash is part of the fingerprint). The numeric+image mode adds
the window's line plot as a PNG image part (:func:`window_images`, :func:`png_data_url`).

The endpoint systems (:mod:`tsrate.systems.llm`) and the local ones (:mod:`tsrate.systems.hf_local`,
:mod:`tsrate.systems.gemma`) build their chats here; :func:`sample_batch` and
:func:`describe_messages` serve ``tsrate systems --show-prompt``.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np

from tsrate import TsrateError
from tsrate.inputs.images import line_plot_images, write_png
from tsrate.inputs.perturbations import perturb_images
from tsrate.inputs.sentiment import SentimentSystem
from tsrate.systems.base import ForecastBatch


def load_prompt(name: str) -> str:
    """A prompt template of ``src/tsrate/systems/prompts/<name>.txt`` (package data), without
    its final newline. Placeholders: ``{n}``, ``{decimals}``, ``{values}``, ``{horizon}``."""
    path = resources.files("tsrate.systems") / "prompts" / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8").removesuffix("\n")
    except FileNotFoundError as exc:
        raise TsrateError(f"prompt template {name!r} not found at {path}") from exc


#: The prompts: one system prompt, one user template per mode (numeric; numeric+image).
SYSTEM_PROMPT = load_prompt("system")
USER_PROMPT = load_prompt("numeric")
USER_PROMPT_IMAGE = load_prompt("numeric_image")

# -- building the chats -----------------------------------------------------------------------


def format_values(values: np.ndarray, decimals: int) -> str:
    """``101.23, 101.5, NaN, …``: each value rounded to ``decimals`` places; NaN stays NaN."""
    return ", ".join("NaN" if not np.isfinite(v) else f"{v:.{decimals}f}" for v in values)


def render_messages(
    context: np.ndarray, horizon: int, decimals: int, image_url: str | None = None
) -> list[dict]:
    """The chat messages of one window. With ``image_url`` (a ``data:image/png;base64,…``
    URL of the window's line plot) the user message is the numeric+image template followed
    by the image, as chat-completions content parts (``text``, ``image_url``)."""
    template = USER_PROMPT if image_url is None else USER_PROMPT_IMAGE
    user = template.format(
        n=len(context),
        decimals=decimals,
        values=format_values(np.asarray(context, dtype=float), decimals),
        horizon=horizon,
    )
    content: str | list[dict] = user
    if image_url is not None:
        content = [
            {"type": "text", "text": user},
            {"type": "image_url", "image_url": {"url": image_url}},
        ]
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]


def prompt_digest(with_image: bool = False) -> str:
    """Hash of the templates a mode uses (part of the fingerprint: editing a prompt file
    recomputes the partitions)."""
    templates = [SYSTEM_PROMPT, USER_PROMPT_IMAGE if with_image else USER_PROMPT]
    return hashlib.sha256("\x00".join(templates).encode()).hexdigest()[:12]


def png_data_url(image: np.ndarray) -> str:
    """One (H × W × 3) uint8 image as a ``data:image/png;base64,…`` URL (via
    :func:`tsrate.inputs.images.write_png`)."""
    with tempfile.TemporaryDirectory(prefix="tsrate-png-") as folder:
        data = write_png(Path(folder) / "plot.png", image).read_bytes()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def window_images(
    contexts: np.ndarray,
    perturbation_id: str,
    size: int,
    sentiment: SentimentSystem | None = None,
) -> np.ndarray:
    """The line plots (windows × size × size × 3) a numeric+image LLM receives: drawn from
    the (numerically perturbed) contexts, then P4–P6 applied to the image exactly as for
    ViT-num-spec (:func:`tsrate.inputs.perturbations.perturb_images`; P6's stripe from
    ``sentiment`` reading the context)."""
    images = line_plot_images(contexts, size, size)
    labels = None
    if perturbation_id == "P6":
        if sentiment is None:
            raise TsrateError("P6 needs a sentiment system to draw its stripe")
        labels = sentiment.predict(contexts).labels
    return perturb_images(images, perturbation_id, labels)


def batch_messages(
    batch: ForecastBatch,
    decimals: int,
    with_image: bool,
    image_size: int,
    sentiment: SentimentSystem | None = None,
) -> list[list[dict]]:
    """The chat messages of every window of a batch, exactly as a language model receives
    them (numeric+image: each window's line plot, :func:`window_images`, as a PNG data URL
    image part); the endpoint and the local systems build their prompts here."""
    if not with_image:
        return [render_messages(c, batch.horizon, decimals) for c in batch.contexts]
    images = window_images(
        np.asarray(batch.contexts, dtype=float),
        batch.perturbation_id,
        image_size,
        sentiment if batch.perturbation_id == "P6" else None,
    )
    return [
        render_messages(c, batch.horizon, decimals, png_data_url(image))
        for c, image in zip(batch.contexts, images, strict=True)
    ]


# -- showing the prompt (`tsrate systems --show-prompt`) ------------------------------------


def sample_batch(context_length: int, horizon: int, perturbation_id: str = "P0") -> ForecastBatch:
    """One made-up window (a smooth wave around 100) to render a system's prompt with."""
    steps = np.arange(context_length, dtype=float)
    context = np.round(100.0 + 0.05 * steps + 2.0 * np.sin(steps / 6.0), 2)
    return ForecastBatch(
        ticker="SAMPLE",
        perturbation_id=perturbation_id,
        window_end_dates=np.array(["2022-12-01"], dtype="datetime64[D]"),
        contexts=context[None, :],
        horizon=horizon,
        clean_futures=np.zeros((1, horizon)),
        study_range=(0.0, 1.0),
    )


def describe_messages(messages: list[dict]) -> str:
    """Chat messages as readable text; an image part is summarised (size, bytes), not dumped."""
    lines = []
    for message in messages:
        lines.append(f"--- {message['role']} ---")
        content = message["content"]
        if isinstance(content, str):
            lines.append(content)
            continue
        for part in content:
            if part["type"] == "text":
                lines.append(part["text"])
            else:
                url = part["image_url"]["url"]
                data = base64.b64decode(url.split(",", 1)[1])
                width, height = struct.unpack(">II", data[16:24])
                lines.append(
                    f"[image part: {url.split(';', 1)[0]}, {width}x{height} line plot of the "
                    f"values above, {len(data)} bytes as a base64 data URL]"
                )
    return "\n".join(lines)
