"""Language models from a local Hugging Face checkpoint, through ``transformers``.

The same prompt templates and parser as the endpoint systems (:mod:`tsrate.systems.llm`):
each window becomes the chat messages of ``prompts/system.txt`` + ``prompts/numeric.txt``,
rendered with the tokenizer's chat template when it has one (else ``system``, a blank
line, ``user``, a newline), and the model generates **greedily** (no sampling, so a rerun
gives the same forecast). Unusable replies become ``raw.forecast_failures`` rows exactly as
for the endpoint systems.

A seed row names the system: ``implementation = tsrate.systems.hf_local:<system_id>``.
Settings (environment, else dbt var ``hf_local_systems.<system_id>.<key>``, else default);
``<ID>`` is the system id in upper case:

- ``TSRATE_<ID>_MODEL_PATH`` (``model_path``): a directory holding ``config.json``, the
  weights and the tokenizer (``save_pretrained`` output, or a snapshot folder of the Hugging
  Face cache). Read with ``local_files_only``: nothing is downloaded.

Shared (environment ``TSRATE_HF_<KEY>``, dbt var ``hf_<key>``): ``max_new_tokens`` (256),
``batch_size`` (windows per ``generate`` call; 8), ``device`` (``auto``: cuda when torch
sees a GPU, with bfloat16; else CPU float32). ``llm_decimals`` (2) as for the endpoints.

Vision-language checkpoints (numeric+image seed rows) are not loaded locally in this
version: serve them behind an OpenAI-compatible server (vLLM) and use
:mod:`tsrate.systems.llm`, whose numeric+image mode sends the line plot.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from tsrate import TsrateError
from tsrate.config import project_vars
from tsrate.systems._settings import int_setting, setting
from tsrate.systems.base import Availability, ForecastBatch
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.llm import parse_replies, prompt_digest, render_messages
from tsrate.systems.registry import load_systems_seed

INSTALL_HINT = "pip install 'tsrate[images]' (transformers; torch first: pip install torch==2.13.0)"


@dataclasses.dataclass(frozen=True)
class HfSettings:
    model_path: str
    max_new_tokens: int = 256
    batch_size: int = 8
    device: str = "auto"
    decimals: int = 2


def env_prefix(system_id: str) -> str:
    return "TSRATE_" + re.sub(r"[^A-Za-z0-9]", "_", system_id).upper() + "_"


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


class HfLocalSystem:
    """A causal language model from a local checkpoint, forecasting window by window."""

    def __init__(self, system_id: str, settings: HfSettings, with_image: bool = False):
        self.system_id = system_id
        self.settings = settings
        self.with_image = with_image
        self._model = None
        self._tokenizer = None

    @property
    def path(self) -> Path:
        return Path(self.settings.model_path).expanduser()

    def fingerprint(self) -> str:
        s = self.settings
        exists = (self.path / "config.json").is_file()
        checkpoint = checkpoint_digest(self.path) if exists else "missing"
        return (
            f"hf_local;checkpoint={checkpoint};greedy;"
            f"max_new_tokens={s.max_new_tokens};decimals={s.decimals};prompt={prompt_digest()}"
        )

    def availability(self) -> Availability:
        prefix = env_prefix(self.system_id)
        if self.with_image:
            return Availability(
                False,
                "vision-language models are not loaded from a local path in this version: "
                "serve the model behind an OpenAI-compatible server (e.g. vLLM) and use "
                "implementation tsrate.systems.llm:<system_id> (its numeric+image mode sends "
                "the line plot)",
            )
        if not self.settings.model_path:
            return Availability(
                False,
                f"no model directory: set {prefix}MODEL_PATH (or dbt var "
                f"hf_local_systems.{self.system_id}.model_path) to a folder with config.json, "
                "the weights and the tokenizer (save_pretrained output or a Hugging Face "
                "cache snapshot; nothing is downloaded)",
            )
        if not (self.path / "config.json").is_file():
            return Availability(False, f"{self.path} has no config.json ({prefix}MODEL_PATH)")
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:
            return Availability(False, f"{exc.name} is not installed; {INSTALL_HINT}")
        return Availability(True, f"local checkpoint {self.path} on {self.device} (greedy)")

    @property
    def device(self) -> str:
        if self.settings.device != "auto":
            return self.settings.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def load(self) -> None:
        """Load tokenizer and model once (``local_files_only``)."""
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
            model = AutoModelForCausalLM.from_pretrained(
                self.path, local_files_only=True, dtype=dtype
            )
        except (OSError, ValueError) as exc:
            raise TsrateError(f"system {self.system_id!r}: cannot load {self.path}: {exc}") from exc
        tokenizer.padding_side = "left"  # generation continues from the right end
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self._tokenizer = tokenizer
        self._model = model.to(self.device).eval()

    def prompts(self, batch: ForecastBatch) -> list[list[dict]]:
        """The chat messages of every window (the same templates as the endpoint systems)."""
        return [render_messages(c, batch.horizon, self.settings.decimals) for c in batch.contexts]

    def generate(self, texts: list[str]) -> list[str]:
        """Greedy continuations of ``texts`` (new tokens only, special tokens dropped)."""
        import torch

        self.load()
        tokenizer, model = self._tokenizer, self._model
        replies: list[str] = []
        for start in range(0, len(texts), self.settings.batch_size):
            chunk = texts[start : start + self.settings.batch_size]
            encoded = tokenizer(chunk, return_tensors="pt", padding=True).to(self.device)
            with torch.no_grad():
                output = model.generate(
                    **encoded,
                    do_sample=False,
                    max_new_tokens=self.settings.max_new_tokens,
                    pad_token_id=tokenizer.pad_token_id,
                )
            new_tokens = output[:, encoded["input_ids"].shape[1] :]
            replies.extend(tokenizer.batch_decode(new_tokens, skip_special_tokens=True))
        return replies

    def complete_all(self, prompts: list[list[dict]]) -> list[str]:
        """The greedy reply of every chat (any task, not only forecasting), in order."""
        self.load()
        return self.generate([prompt_text(self._tokenizer, m) for m in prompts])

    def predict(self, batch: ForecastBatch) -> np.ndarray | PartialForecasts:
        return parse_replies(self.complete_all(self.prompts(batch)), batch.horizon)


def create(study, companies, system_id: str | None = None) -> HfLocalSystem:  # noqa: ANN001
    """Registry entry point: ``tsrate.systems.hf_local:<system_id>``."""
    if not system_id:
        raise TsrateError(
            "a local Hugging Face system's implementation must name it: "
            "tsrate.systems.hf_local:<system_id>"
        )
    seed = load_systems_seed().set_index("system_id")
    with_image = system_id in seed.index and seed.loc[system_id, "modality"] == "numeric+image"
    return HfLocalSystem(system_id, load_settings(system_id), with_image)
