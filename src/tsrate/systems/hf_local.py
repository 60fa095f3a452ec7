"""Language models from a local Hugging Face checkpoint, through ``transformers``.

The same prompt templates and parser as the endpoint systems
(:mod:`tsrate.systems.llm_prompts`, :mod:`tsrate.systems.llm_replies`): each window
becomes the chat messages of ``prompts/system.txt`` + ``prompts/numeric.txt``,
rendered with the tokenizer's chat template when it has one (else ``system``, a blank
line, ``user``, a newline), and the model generates **greedily** (no sampling, so a rerun
gives the same forecast). The reasoning suite's sampled forecasts (``--forecast-samples``)
use :meth:`HfLocalSystem.sample_all` instead: seeded sampling, reproducible too. Unusable replies become ``raw.forecast_failures`` rows exactly as
for the endpoint systems.

Numeric+image seed rows (modality ``numeric+image``) load a **vision-language** checkpoint
(``AutoProcessor`` + ``AutoModelForImageTextToText``, e.g. Llava, Qwen2-VL, Idefics3,
PaliGemma, Gemma 3) and send each window's line plot with ``prompts/numeric_image.txt``:
exactly the PNG the endpoint's numeric+image mode sends (:func:`tsrate.systems.llm_prompts.window_images`,
P4–P6 applied to the image, then :func:`~tsrate.systems.llm_prompts.png_data_url`), decoded back to
pixels and given to the model's own processor. The chat's image part becomes the processor's
image placeholder (``{"type": "image"}``) in its chat template (else the processor's
``image_token`` before the text). A checkpoint whose ``config.json`` has a
``vision_config`` is loaded this way for text-only chats too (:mod:`tsrate.systems.language`).
The image processors need Pillow (``pip install 'tsrate[images]'``); torchvision is not
needed (transformers then picks the PIL image processor).

A seed row names the system: ``implementation = tsrate.systems.hf_local:<system_id>``.
Settings (environment, else dbt var ``hf_local_systems.<system_id>.<key>``, else default);
``<ID>`` is the system id in upper case:

- ``TSRATE_<ID>_MODEL_PATH`` (``model_path``): a directory holding ``config.json``, the
  weights and the tokenizer (``save_pretrained`` output, or a snapshot folder of the Hugging
  Face cache). Read with ``local_files_only``: nothing is downloaded.

Shared (environment ``TSRATE_HF_<KEY>``, dbt var ``hf_<key>``): ``max_new_tokens`` (256),
``batch_size`` (windows per ``generate`` call; 8), ``device`` (``auto``: cuda when torch
sees a GPU, with bfloat16; else CPU float32; the device and dtype are part of the
fingerprint). ``llm_decimals`` (2) and ``llm_image_size`` (the line plot's side in pixels,
128) as for the endpoints.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tsrate import TsrateError
from tsrate.config import project_vars
from tsrate.inputs.images import IMAGE_SIZE
from tsrate.inputs.sentiment import SentimentSystem
from tsrate.systems._settings import int_setting, setting
from tsrate.systems.base import Availability, ForecastBatch
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.llm_prompts import batch_messages, prompt_digest
from tsrate.systems.llm_replies import FORECAST_PARSER, parse_replies
from tsrate.systems.registered import env_prefix
from tsrate.systems.registry import load_systems_seed

INSTALL_HINT = (
    "pip install 'tsrate[images]' (transformers and Pillow; torch first: pip install torch==2.13.0)"
)


@dataclasses.dataclass(frozen=True)
class HfSettings:
    model_path: str
    max_new_tokens: int = 256
    batch_size: int = 8
    device: str = "auto"
    decimals: int = 2
    image_size: int = IMAGE_SIZE  # numeric+image: the line plot is image_size × image_size


#: The checkpoint this process loaded last (:meth:`HfLocalSystem._checkpoint_key` →
#: processor, tokenizer, model): a later system of the same checkpoint (the next study in
#: one process, a suite after the core, each test of a session) reuses it instead of
#: reading it again (the packaged Gemma: its tokenizer alone is a 33 MB JSON, ~2.5 s). The
#: model is in eval mode and only read (generation), the tokenizer's padding side and pad
#: token are set the same way on every load.
_LOADED: dict[tuple, tuple[Any, Any, Any]] = {}


def load_settings(system_id: str) -> HfSettings:
    """A system's settings: environment, else dbt vars, else defaults (see module doc)."""
    try:
        values = project_vars()
    except TsrateError:
        values = {}
    configured = (values.get("hf_local_systems") or {}).get(system_id) or {}
    if not isinstance(configured, dict):
        raise TsrateError(
            f"dbt var hf_local_systems.{system_id} must be a mapping, got {configured!r}"
        )
    path = os.environ.get(env_prefix(system_id) + "MODEL_PATH") or str(
        configured.get("model_path") or ""
    )
    return HfSettings(
        model_path=path,
        max_new_tokens=int_setting("TSRATE_HF_MAX_NEW_TOKENS", "hf_max_new_tokens", 256),
        batch_size=int_setting("TSRATE_HF_BATCH_SIZE", "hf_batch_size", 8),
        device=str(setting("TSRATE_HF_DEVICE", "hf_device", "auto")),
        decimals=int_setting("TSRATE_LLM_DECIMALS", "llm_decimals", 2, minimum=0),
        image_size=int_setting("TSRATE_LLM_IMAGE_SIZE", "llm_image_size", IMAGE_SIZE, minimum=16),
    )


def checkpoint_digest(path: Path) -> str:
    """``config.json`` and the weight files' names and sizes: a changed checkpoint is a
    changed fingerprint (its partitions are recomputed)."""
    digest = hashlib.sha256((path / "config.json").read_bytes())
    for weights in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        digest.update(f"{weights.name}:{weights.stat().st_size}|".encode())
    return digest.hexdigest()[:12]


def prompt_text(tokenizer: Any, messages: list[dict]) -> str:
    """The messages as the model reads them: its chat template (with the generation prompt),
    else a plain ``system\\n\\nuser\\n`` text."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "\n\n".join(m["content"] for m in messages) + "\n"


def adds_special_tokens(tokenizer: Any, texts: list[str]) -> bool:
    """Whether tokenizing ``texts`` should add the tokenizer's special tokens: not when they
    already start with its BOS. A chat template that writes ``{{ bos_token }}`` (Gemma's,
    Llama 3's) would otherwise get a second one from the tokenizer, and the model would read
    a prompt it was never trained on; a plain prompt (no template) still gets its BOS."""
    bos = getattr(tokenizer, "bos_token", None)
    return not (bos and texts and all(text.startswith(bos) for text in texts))


#: a batch's prompts are at most this much longer than its shortest (share, plus tokens)
PAD_SHARE, PAD_TOKENS = 0.10, 16


def length_groups(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices of prompts with these token ``lengths`` in batches: shortest first, at most
    ``batch_size`` a batch, and a new batch once a prompt is longer than the batch's first
    by more than :data:`PAD_SHARE` of it plus :data:`PAD_TOKENS` (padding is prefill paid
    for nothing: on the understanding sample, prompts of 400-3,750 tokens, batches of 8 in
    plan order pay 41 % more prefill than the prompts hold). Prompts of similar length, e.g.
    one window length's forecasts, still fill whole batches."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    groups: list[list[int]] = []
    for i in order:
        if (
            groups
            and len(groups[-1]) < batch_size
            and lengths[i] <= lengths[groups[-1][0]] * (1 + PAD_SHARE) + PAD_TOKENS
        ):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def continuation_cache(cache: Any, first: Any, first_mask: Any, encoded: Any) -> Any:
    """The keys and values a second greedy ``generate`` over ``encoded`` can start from,
    taken from the cache a first one left (``cache``: every layer a full ``DynamicLayer``, a
    ``DynamicCache()`` made without the model's config, so sliding-window layers keep every
    position too), or None when nothing can be reused.

    ``first``: the first call's output ids (its prompts left-padded as ``first_mask``, then
    the new tokens); ``encoded``: the second call's inputs (e.g. each prompt and the part of
    its reply kept), left-padded. Row ``i`` reuses the positions where its second input
    equals what the first call fed the model (its prompt and new tokens up to the cache's
    length): the longest common prefix, so a prompt the tokenizer splits otherwise once text
    is appended is reused up to that split only. Positions are moved to the second call's
    layout (its padding, its width) and the reused length is the smallest over the rows
    (at most the width less one: ``generate`` feeds at least one token), so the second
    call's masks, positions and sliding windows are exactly those of a call without a
    cache; the rest is computed by the second call. Pad positions hold zeros (masked)."""
    import torch
    from transformers import DynamicCache

    length = cache.get_seq_length()
    ids, mask = encoded["input_ids"], encoded["attention_mask"]
    width = ids.shape[1]
    first_starts = first_mask.shape[1] - first_mask.sum(dim=1)
    starts = width - mask.sum(dim=1)
    reusable = width - 1
    for row in range(ids.shape[0]):
        fed = first[row, int(first_starts[row]) : length]
        wanted = ids[row, int(starts[row]) :]
        n = min(len(fed), len(wanted))
        common = int((fed[:n] == wanted[:n]).long().cumprod(dim=0).sum())
        reusable = min(reusable, int(starts[row]) + common)
    if reusable <= 0:
        return None
    positions = torch.arange(reusable, device=ids.device)
    source = (first_starts[:, None] + positions[None, :] - starts[:, None]).clamp(0, length - 1)
    kept = (positions[None, :] >= starts[:, None])[:, None, :, None]
    moved = DynamicCache()
    for index, layer in enumerate(cache.layers):
        where = source[:, None, :, None].expand(-1, layer.keys.shape[1], -1, layer.keys.shape[3])
        keys = torch.where(kept, layer.keys.gather(2, where), 0.0)
        values = torch.where(kept, layer.values.gather(2, where), 0.0)
        moved.update(keys, values, index)
    return moved


def decode_image_url(url: str) -> Any:
    """A ``data:image/…;base64,…`` URL (an image part of a chat) as an RGB ``PIL.Image``;
    nothing is downloaded, so any other URL is an error."""
    from PIL import Image

    head, comma, data = url.partition(",")
    if not (head.startswith("data:image/") and head.endswith(";base64") and comma):
        raise TsrateError(
            f"a local vision-language model takes images as base64 data URLs "
            f"(data:image/png;base64,...), got {url[:60]!r}"
        )
    return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")


def vision_chat(messages: list[dict]) -> tuple[list[dict], list[Any]]:
    """Chat-completions messages (``text`` / ``image_url`` content parts, as
    :func:`tsrate.systems.llm_prompts.render_messages` writes them) in the form Hugging Face
    processors' chat templates read: every content a list of ``{"type": "text"}`` /
    ``{"type": "image"}`` parts, plus the decoded images in order."""
    converted, images = [], []
    for message in messages:
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else []
        for part in [] if isinstance(content, str) else content:
            if part["type"] == "text":
                parts.append({"type": "text", "text": part["text"]})
            elif part["type"] == "image_url":
                images.append(decode_image_url(part["image_url"]["url"]))
                parts.append({"type": "image"})
            else:
                raise TsrateError(f"unsupported chat content part {part['type']!r}")
        converted.append({"role": message["role"], "content": parts})
    return converted, images


def vision_prompt_text(processor: Any, messages: list[dict]) -> str:
    """Converted messages (:func:`vision_chat`) as the model reads them: the processor's chat
    template with the generation prompt, else the texts joined by blank lines with the
    processor's ``image_token`` in place of each image."""
    if getattr(processor, "chat_template", None):
        return processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    image_token = getattr(processor, "image_token", None)
    pieces = []
    for message in messages:
        for part in message["content"]:
            if part["type"] == "text":
                pieces.append(part["text"])
            elif image_token is None:
                raise TsrateError(
                    "the checkpoint's processor has neither a chat template nor an image_token: "
                    "tsrate cannot tell where the image goes in the prompt"
                )
            else:
                pieces.append(image_token)
    return "\n\n".join(pieces) + "\n"


def has_vision_config(path: Path) -> bool:
    """Whether ``config.json`` describes a vision-language model (a ``vision_config``)."""
    try:
        return "vision_config" in json.loads((path / "config.json").read_text())
    except (OSError, ValueError):
        return False


class HfLocalSystem:
    """A causal or vision-language model from a local checkpoint, forecasting window by
    window (``with_image``: the numeric+image prompt with the window's line plot)."""

    #: appended to the fingerprint in stored partitions' keys: the replies are parsed by
    #: :func:`tsrate.systems.llm_replies.parse_forecast` (not in the response cache's key)
    partition_tag = f";{FORECAST_PARSER}"
    #: batch text prompts grouped by length (:meth:`generate`); False only to measure
    #: what the grouping saves (benchmarks/bench_gemma_suites.py)
    group_by_length = True
    #: told ``"k/n replies of this call (s)"`` after each batch of a call with several batches
    #: (the suites set it: a CPU-bound local model's call can take minutes); None: silent
    progress: Callable[[str], None] | None = None

    def __init__(
        self,
        system_id: str,
        settings: HfSettings,
        with_image: bool = False,
        sentiment: SentimentSystem | None = None,
        context_length: int = 80,
    ):
        self.system_id = system_id
        self.settings = settings
        self.with_image = with_image
        self._sentiment = sentiment
        self.context_length = context_length  # for the default P6 sentiment system
        self._model = None
        self._tokenizer = None
        self._processor = None  # vision-language checkpoints: the AutoProcessor

    @property
    def sentiment(self) -> SentimentSystem:
        """P6's sentiment system (numeric+image only): the project default, built lazily."""
        if self._sentiment is None:
            from tsrate.inputs.sentiment import default_sentiment_system

            self._sentiment = default_sentiment_system(self.context_length)
        return self._sentiment

    @property
    def vision(self) -> bool:
        """Loaded as a vision-language model: numeric+image mode, or a checkpoint with a
        ``vision_config``."""
        return self.with_image or has_vision_config(self.path)

    @property
    def path(self) -> Path:
        return Path(self.settings.model_path).expanduser()

    def checkpoint_id(self) -> str:
        """What names the weights in the fingerprint (a subclass may name them otherwise,
        e.g. by the digest of the file they are converted from)."""
        exists = (self.path / "config.json").is_file()
        return checkpoint_digest(self.path) if exists else "missing"

    def fingerprint(self) -> str:
        s = self.settings
        text = (
            f"hf_local;checkpoint={self.checkpoint_id()};greedy;max_new_tokens={s.max_new_tokens};"
            f"decimals={s.decimals};prompt={prompt_digest(self.with_image)}"
            ";bos=once"  # forecasts stored when a templated BOS was doubled are recomputed
            f";{self.placement()}"
        )
        if self.with_image:
            text += f";image=line_plot{s.image_size};sentiment={self.sentiment.fingerprint()}"
        return text

    def availability(self) -> Availability:
        prefix = env_prefix(self.system_id)
        kind = "vision-language " if self.with_image else ""
        if not self.settings.model_path:
            reason = (
                f"no model directory: set {prefix}MODEL_PATH (or dbt var "
                f"hf_local_systems.{self.system_id}.model_path) to a folder with config.json, "
                "the weights and the tokenizer (save_pretrained output or a Hugging Face "
                "cache snapshot; nothing is downloaded)"
            )
            if self.with_image:
                reason += (
                    " of a vision-language model with its processor (AutoProcessor + "
                    "AutoModelForImageTextToText); or serve the model behind an "
                    "OpenAI-compatible server (e.g. vLLM) and use implementation "
                    "tsrate.systems.llm:<system_id>"
                )
            return Availability(False, reason)
        if not (self.path / "config.json").is_file():
            return Availability(False, f"{self.path} has no config.json ({prefix}MODEL_PATH)")
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401

            if self.vision:
                import PIL  # noqa: F401
        except ImportError as exc:
            return Availability(False, f"{exc.name} is not installed; {INSTALL_HINT}")
        return Availability(True, f"local {kind}checkpoint {self.path} on {self.device} (greedy)")

    @property
    def device(self) -> str:
        if self.settings.device != "auto":
            return self.settings.device
        try:
            import torch
        except ImportError:  # unavailable anyway; the fingerprint still needs a device
            return "cpu"
        return "cuda" if torch.cuda.is_available() else "cpu"

    @property
    def dtype_name(self) -> str:
        """The weights' dtype on :attr:`device`: bfloat16 on a GPU, else float32."""
        return "bfloat16" if self.device.startswith("cuda") else "float32"

    def placement(self) -> str:
        """``device=…;dtype=…``, part of the fingerprint (as Chronos's): greedy replies in
        bfloat16 on a GPU are not those in float32 on a CPU, so neither may stand for the
        other in the stored forecasts or the response cache."""
        return f"device={self.device};dtype={self.dtype_name}"

    def load(self) -> None:
        """Load tokenizer (vision-language: processor) and model once (``local_files_only``)."""
        if self._model is not None:
            return
        import torch
        from transformers import (
            AutoModelForCausalLM,
            AutoModelForImageTextToText,
            AutoProcessor,
            AutoTokenizer,
        )

        dtype = getattr(torch, self.dtype_name)
        key = self._checkpoint_key(dtype)
        if key in _LOADED:
            self._processor, self._tokenizer, self._model = _LOADED[key]
            return
        processor = None
        try:
            if self.vision:
                processor = AutoProcessor.from_pretrained(self.path, local_files_only=True)
                tokenizer = getattr(processor, "tokenizer", None)
                if tokenizer is None or getattr(processor, "image_processor", None) is None:
                    raise ValueError(
                        f"its processor ({type(processor).__name__}) has no tokenizer and image "
                        "processor: not a vision-language checkpoint"
                    )
                model = AutoModelForImageTextToText.from_pretrained(
                    self.path, local_files_only=True, dtype=dtype
                )
            else:
                tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
                model = AutoModelForCausalLM.from_pretrained(
                    self.path, local_files_only=True, dtype=dtype
                )
        except (OSError, ValueError, KeyError) as exc:
            raise TsrateError(f"system {self.system_id!r}: cannot load {self.path}: {exc}") from exc
        self._processor = processor
        tokenizer.padding_side = "left"  # generation continues from the right end
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self._tokenizer = tokenizer
        self._model = model.to(self.device).eval()
        _LOADED.clear()  # one checkpoint kept: a process never holds two models it loaded
        _LOADED[key] = (self._processor, self._tokenizer, self._model)

    def _checkpoint_key(self, dtype: Any) -> tuple:
        """What a loaded checkpoint is: its folder and every file in it (name, size, change
        time: a checkpoint or tokenizer rewritten in place is loaded again), the kind,
        device and dtype."""
        folder = Path(self.path).resolve()
        try:
            stats = [(p.name, p.stat()) for p in folder.iterdir() if p.is_file()]
            files = tuple(sorted((name, st.st_size, st.st_mtime_ns) for name, st in stats))
        except OSError:
            files = None  # from_pretrained names what is missing
        return (str(folder), files, self.vision, self.device, str(dtype))

    def prompts(self, batch: ForecastBatch) -> list[list[dict]]:
        """The chat messages of every window, exactly as the endpoint systems build them
        (numeric+image: with the window's line plot as a PNG data URL image part)."""
        s = self.settings
        return batch_messages(batch, s.decimals, self.with_image, s.image_size, self.sentiment)

    def encode(self, texts: list[str], images: list[list[Any]] | None = None) -> Any:
        """The model inputs of a chunk of prompt texts (vision-language: the processor, with
        each text's images; ``pixel_values`` cast to the model's dtype), on the device."""
        if self._processor is None:
            special = adds_special_tokens(self._tokenizer, texts)
            return self._tokenizer(
                texts, return_tensors="pt", padding=True, add_special_tokens=special
            ).to(self.device)
        tokenizer = getattr(self._processor, "tokenizer", None)  # None: the defaults
        encoded = self._processor(
            text=texts,
            images=images if images and any(images) else None,
            return_tensors="pt",
            padding=True,
            add_special_tokens=adds_special_tokens(tokenizer, texts),
        ).to(self.device)
        if "pixel_values" in encoded:
            encoded["pixel_values"] = encoded["pixel_values"].to(self._model.dtype)
        return encoded

    def generate(
        self,
        texts: list[str],
        images: list[list[Any]] | None = None,
        max_new_tokens: int | None = None,
        stopping: Any = None,
        choices: list[Any] | None = None,
    ) -> list[str]:
        """Greedy continuations of ``texts`` (new tokens only, special tokens dropped);
        ``images``: each text's images, for a vision-language model. ``max_new_tokens``
        (at most the setting) and ``stopping`` (prompt length → a transformers
        ``StoppingCriteriaList``) let a caller stop a reply early (e.g. once it holds the
        forecast's numbers). ``choices``: one
        :class:`~tsrate.systems.choice_decoding.ChoiceTrie` per text, each reply decoded
        over its admissible answers only (then ``max_new_tokens`` is not clipped to the
        setting: the answers bound the reply).

        Text-only prompts are batched by length (:func:`length_groups`; replies returned in
        the order of ``texts``): a batch is padded to its longest prompt, so mixing a short
        prompt with a long one would pay the long one's prefill for both. Greedy replies do
        not depend on the grouping (left padding, masked)."""
        self.load()
        tokenizer = self._tokenizer
        limit = self.token_limit(max_new_tokens, choices is not None)
        chunks = self.batches(texts)
        replies: list[str | None] = [None] * len(texts)
        started, done = time.perf_counter(), 0
        for rows in chunks:
            chunk = [texts[i] for i in rows]
            chunk_images = [images[i] for i in rows] if images else None
            encoded = self.encode(chunk, chunk_images)
            prompt_length = encoded["input_ids"].shape[1]
            extra = {}
            if choices is not None:
                from tsrate.systems.choice_decoding import prefix_function

                extra["prefix_allowed_tokens_fn"] = prefix_function(
                    [choices[i] for i in rows], prompt_length
                )
            output = self.generate_ids(encoded, limit, stopping, **extra)
            new_tokens = output[:, prompt_length:]
            for i, text in zip(
                rows, tokenizer.batch_decode(new_tokens, skip_special_tokens=True), strict=True
            ):
                replies[i] = text
            done += len(rows)
            self.report(done, len(texts), len(chunks), started)
        return [r if r is not None else "" for r in replies]

    def token_limit(self, max_new_tokens: int | None, chosen: bool = False) -> int:
        """New tokens a :meth:`generate` call decodes at most: ``max_new_tokens``, at most the
        setting (``chosen``: replies bounded by their admissible answers, not clipped)."""
        if chosen and max_new_tokens:
            return max_new_tokens
        return min(max_new_tokens or self.settings.max_new_tokens, self.settings.max_new_tokens)

    def batches(self, texts: list[str]) -> list[list[int]]:
        """The indices of ``texts`` :meth:`generate` decodes together: text-only prompts
        grouped by token length (:func:`length_groups`), else in order, ``batch_size`` a
        batch."""
        if self.group_by_length and self._processor is None and len(texts) > 1:
            tokenizer = self._tokenizer
            special = adds_special_tokens(tokenizer, texts)
            lengths = [
                len(ids) for ids in tokenizer(texts, add_special_tokens=special)["input_ids"]
            ]
            return length_groups(lengths, self.settings.batch_size)
        return [
            list(range(start, min(start + self.settings.batch_size, len(texts))))
            for start in range(0, len(texts), self.settings.batch_size)
        ]

    def generate_ids(self, encoded: Any, limit: int, stopping: Any = None, **extra: Any) -> Any:
        """Greedy ``model.generate`` over one encoded batch (:meth:`encode`): the token ids,
        prompt (left-padded) and new tokens. ``extra`` goes to ``generate`` as is (e.g.
        ``cache``: a transformers ``Cache`` holding the keys and values of the batch's first
        positions, which are then not computed again, and which ``generate`` extends)."""
        import torch

        prompt_length = encoded["input_ids"].shape[1]
        with torch.no_grad():
            return self._model.generate(
                **encoded,
                do_sample=False,
                max_new_tokens=limit,
                pad_token_id=self._tokenizer.pad_token_id,
                stopping_criteria=stopping(prompt_length) if stopping else None,
                **extra,
            )

    def report(self, done: int, total: int, batches: int, started: float) -> None:
        """Tell :attr:`progress` ``done`` of ``total`` replies are decoded (calls of several
        batches only)."""
        if self.progress is not None and batches > 1:
            self.progress(
                f"{done}/{total} replies of this call ({time.perf_counter() - started:.0f}s)"
            )

    def chat_text(self, messages: list[dict]) -> str:
        """A text-only chat of the suites as the model reads it (:func:`prompt_text`; a
        subclass may render chats in its own format)."""
        return prompt_text(self._tokenizer, messages)

    def complete_all(
        self, prompts: list[list[dict]], max_new_tokens: int | None = None
    ) -> list[str]:
        """The greedy reply of every chat (any task, not only forecasting), in order. A
        vision-language model also reads the chats' ``image_url`` parts (data URLs).
        ``max_new_tokens``: a cap below the setting (a caller that knows its answers are
        short; the caller's fingerprint must name it)."""
        self.load()
        if self._processor is None:
            return self.generate(
                [self.chat_text(m) for m in prompts], max_new_tokens=max_new_tokens
            )
        chats = [vision_chat(m) for m in prompts]
        texts = [vision_prompt_text(self._processor, messages) for messages, _ in chats]
        return self.generate(texts, [images for _, images in chats], max_new_tokens=max_new_tokens)

    def sample_all(
        self, prompts: list[list[dict]], indices: list[list[int]], temperature: float
    ) -> list[list[str]]:
        """Sampled replies (``do_sample``, ``temperature``, no top-k / top-p cut: the full
        distribution, as an endpoint's temperature sampling) to every chat, one per sample
        index of ``indices[k]``: the chat's samples in one ``generate`` call
        (``num_return_sequences``), seeded by the checkpoint, the chat and its indices
        (:func:`tsrate.suites.reasoning.sampling.sample_seed`), so a rerun draws the same
        replies."""
        import torch

        from tsrate.suites.reasoning.sampling import sample_seed

        self.load()
        tokenizer, model = self._tokenizer, self._model
        out: list[list[str]] = []
        for messages, wanted in zip(prompts, indices, strict=True):
            if self._processor is None:
                text, images = self.chat_text(messages), None
            else:
                converted, chat_images = vision_chat(messages)
                text, images = vision_prompt_text(self._processor, converted), [chat_images]
            torch.manual_seed(sample_seed(self.fingerprint(), text, list(wanted), temperature))
            encoded = self.encode([text], images)
            with torch.no_grad():
                output = model.generate(
                    **encoded,
                    do_sample=True,
                    temperature=temperature,
                    top_k=0,
                    top_p=1.0,
                    num_return_sequences=len(wanted),
                    max_new_tokens=self.settings.max_new_tokens,
                    pad_token_id=tokenizer.pad_token_id,
                )
            new_tokens = output[:, encoded["input_ids"].shape[1] :]
            out.append(tokenizer.batch_decode(new_tokens, skip_special_tokens=True))
        return out

    def predict(self, batch: ForecastBatch) -> np.ndarray | PartialForecasts:
        replies = self.complete_all(self.prompts(batch))
        return parse_replies(replies, batch.horizon, batch.contexts, self.settings.decimals)


def create(study, companies, system_id: str | None = None) -> HfLocalSystem:  # noqa: ANN001
    """Registry entry point: ``tsrate.systems.hf_local:<system_id>``."""
    if not system_id:
        raise TsrateError(
            "a local Hugging Face system's implementation must name it: "
            "tsrate.systems.hf_local:<system_id>"
        )
    seed = load_systems_seed().set_index("system_id")
    with_image = system_id in seed.index and seed.loc[system_id, "modality"] == "numeric+image"
    context_length = study.context_length if study is not None else 80
    return HfLocalSystem(
        system_id, load_settings(system_id), with_image, context_length=context_length
    )
