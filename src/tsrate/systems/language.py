"""Language models as answerers of any chat prompt, for the suites beyond forecasting.

The understanding and reasoning suites ask language models questions (is there a trend?
which caption fits?) rather than for forecasts. They reach the same two back ends as the
robustness systems, configured the same way:

- ``endpoint:<ID>``: an OpenAI-compatible chat-completions server
  (:class:`tsrate.systems.llm.LlmSystem`; ``TSRATE_<ID>_BASE_URL``, ``TSRATE_<ID>_MODEL``,
  ``TSRATE_<ID>_API_KEY_ENV`` or dbt var ``llm_systems.<ID>``), with its concurrency,
  retries, timeouts and response cache;
- ``hf_local:<ID>``: a local Hugging Face checkpoint (:class:`tsrate.systems.hf_local.HfLocalSystem`;
  ``TSRATE_<ID>_MODEL_PATH`` or dbt var ``hf_local_systems.<ID>.model_path``), greedy: a
  causal LM, or a vision-language model when its ``config.json`` has a ``vision_config``
  (chats may then carry images as base64 data URLs). ``hf_local:gemma3_270m`` is the
  packaged Gemma 3 270M (:mod:`tsrate.systems.gemma`), with nothing to configure.

:func:`open_language_model` turns such a spec into a :class:`LanguageModel`; every model
says whether it can run here (:meth:`availability`) and answers a list of chats in order
(:meth:`complete_all`), or several sampled replies per chat (:meth:`sample_all`, the
reasoning suite's LLMTime sampling). Parsing the replies is the suite's job: a reply it cannot parse is
kept with its raw text, never guessed.
"""

from __future__ import annotations

from typing import Protocol

from tsrate import TsrateError
from tsrate.systems.base import Availability

BACKENDS = ("endpoint", "hf_local")


class LanguageModel(Protocol):
    system_id: str

    def fingerprint(self) -> str:
        """Everything that changes the replies (endpoint and model, or checkpoint digest)."""

    def availability(self) -> Availability: ...

    def complete_all(self, prompts: list[list[dict]]) -> list[str]:
        """The reply text of every chat (a list of ``{"role", "content"}`` messages)."""

    def sample_all(
        self, prompts: list[list[dict]], indices: list[list[int]], temperature: float
    ) -> list[list[str]]:
        """Sampled replies at ``temperature``: for chat k one reply per sample index of
        ``indices[k]`` (each cached / seeded by its index, so a rerun gives the same)."""


def parse_spec(spec: str) -> tuple[str, str]:
    """``"endpoint:gpt4o"`` → ``("endpoint", "gpt4o")``; clear errors for anything else."""
    backend, sep, system_id = spec.partition(":")
    if not sep or not system_id.strip():
        raise TsrateError(
            f"language model {spec!r}: write BACKEND:SYSTEM_ID with BACKEND one of "
            f"{', '.join(BACKENDS)} (e.g. endpoint:my_llm, hf_local:tiny_gpt)"
        )
    if backend not in BACKENDS:
        raise TsrateError(
            f"language model {spec!r}: unknown backend {backend!r}; choose from {', '.join(BACKENDS)}"
        )
    return backend, system_id.strip()


def open_language_model(spec: str) -> LanguageModel:
    """The language model named by ``spec`` (``endpoint:<ID>`` or ``hf_local:<ID>``), with
    its settings read from the environment / dbt vars. It is not contacted or loaded yet."""
    backend, system_id = parse_spec(spec)
    if backend == "endpoint":
        from tsrate.systems.llm import LlmSystem, load_settings

        return LlmSystem(system_id, load_settings(system_id))
    from tsrate.systems.hf_local import HfLocalSystem
    from tsrate.systems.hf_local import load_settings as hf_settings

    if system_id == "gemma3_270m":  # the packaged model: no path to configure
        from tsrate.systems.gemma import GemmaSystem

        return GemmaSystem(system_id)
    return HfLocalSystem(system_id, hf_settings(system_id))
