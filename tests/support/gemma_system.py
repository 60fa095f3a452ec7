"""A Gemma system for the tests whose model and tokenizer are given (nothing downloaded or
converted: a conversion fails the test). No test here."""

from __future__ import annotations

from pathlib import Path

from tsrate.systems import gemma
from tsrate.systems.hf_local import HfSettings

SHA = "ab" * 32


def settings(**kw) -> HfSettings:
    values = {"model_path": "", "max_new_tokens": 256, "batch_size": 1, "device": "cpu"}
    return HfSettings(**{**values, **kw})


def refuse(folder: Path) -> None:  # noqa: ARG001
    raise AssertionError("must not convert")


def loaded(model, tokenizer, **kw) -> gemma.GemmaSystem:  # noqa: ANN001
    """A system whose model and tokenizer are already there (``load`` returns at once)."""
    system = gemma.GemmaSystem(settings=settings(**kw), convert=refuse, gguf_sha256=SHA)
    system._model, system._tokenizer = model, tokenizer
    return system
