"""Language models as forecasters, through any OpenAI-compatible chat-completions endpoint.

One module serves several seed rows (``implementation = tsrate.systems.llm:<system_id>``):
the paper's Gemini and Phi-3 numeric-only systems, or any model a user adds. Each window
becomes one prompt; the reply's numbers are the forecast.

The prompt is built by :mod:`tsrate.systems.llm_prompts` (LLMTime-style plain text; the
numeric+image mode adds the window's line plot) and the reply read by
:mod:`tsrate.systems.llm_replies` (:func:`~tsrate.systems.llm_replies.parse_forecast`: a
reply that holds no forecast fails its window, nothing is padded); this module holds the
endpoint: settings, the response cache and the client.

Calls: ``temperature`` 0 by default, ``max_tokens``, a per-request ``timeout``, and
``retries`` with exponential backoff (``backoff_s`` × 2^attempt) on connection errors,
timeouts, HTTP 408/409/429 and 5xx; other HTTP errors (401, 404, 400 …) fail at once with
the server's message. Windows of a batch are sent ``concurrency`` at a time.
:meth:`LlmSystem.sample` (the reasoning suite's sampled LLMTime forecasts) asks several
replies to one chat at a given temperature with the ``n`` parameter, each cached under its
own sample index.

Settings, per system (environment variable, else the dbt var ``llm_systems.<system_id>.<key>``,
else the built-in profile below); ``<ID>`` is the system id in upper case:

- ``TSRATE_<ID>_BASE_URL`` (``base_url``): the endpoint, ending in ``/v1`` (vLLM
  ``http://localhost:8000/v1``, Ollama ``http://localhost:11434/v1``, llama.cpp server
  ``http://localhost:8080/v1``, Gemini ``https://generativelanguage.googleapis.com/v1beta/openai/``).
- ``TSRATE_<ID>_MODEL`` (``model``): the model name the server knows.
- ``TSRATE_<ID>_API_KEY_ENV`` (``api_key_env``): the *name* of the environment variable
  holding the key (the key itself is never stored in configuration). Empty: no key.

Shared by all LLM systems (environment ``TSRATE_LLM_<KEY>``, dbt var ``llm_<key>``):
``temperature`` (0), ``max_tokens`` (512), ``timeout_s`` (60), ``retries`` (3),
``backoff_s`` (1.0), ``concurrency`` (4), ``decimals`` (2), ``cache_dir``
(``<warehouse dir>/cache/llm``; ``off``: no cache; see :class:`ResponseCache`).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import threading
import time
from pathlib import Path

import numpy as np

from tsrate import TsrateError
from tsrate.config import project_dir, project_vars, warehouse_path
from tsrate.inputs.images import IMAGE_SIZE
from tsrate.inputs.sentiment import SentimentSystem
from tsrate.platform.files import write_text_atomic
from tsrate.systems._settings import float_setting, int_setting, setting
from tsrate.systems.base import Availability, ForecastBatch
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.llm_prompts import batch_messages, prompt_digest
from tsrate.systems.llm_replies import FORECAST_PARSER, parse_replies
from tsrate.systems.registered import env_prefix
from tsrate.systems.registered import profile as registered_profile
from tsrate.systems.registry import load_systems_seed

INSTALL_HINT = "pip install 'tsrate[llm]' (the openai client)"

#: Built-in profiles of the paper's LLM rows; every key can be overridden (see module doc).
PROFILES: dict[str, dict[str, str]] = {
    "gemini_numeric": {
        "base_url": "https://generativelanguage.googleapis.com/v1beta/openai/",
        "model": "gemini-1.5-flash",
        "api_key_env": "GEMINI_API_KEY",
    },
    "phi3_numeric": {
        "base_url": "",
        "model": "microsoft/Phi-3-vision-128k-instruct",
        "api_key_env": "",
    },
}
PROFILES["gemini_numeric_image"] = dict(PROFILES["gemini_numeric"])
PROFILES["phi3_numeric_image"] = dict(PROFILES["phi3_numeric"])
REPLY_HEAD = 200


class LlmEndpointError(TsrateError):
    """The endpoint could not be reached or refused the request (after retries)."""


def unanswered_hint(last: Exception | None, base_url: str) -> str:
    """What to check when every attempt failed: the server (no connection), else its load."""
    import openai

    if isinstance(last, openai.APIConnectionError):
        return (
            f"is a server answering at {base_url}? start it, or fix the base URL "
            f"(`curl {base_url}/models` lists its models)"
        )
    return (
        "the endpoint is busy or failing: try again later, or set TSRATE_LLM_RETRIES and "
        "TSRATE_LLM_CONCURRENCY (fewer requests at once)"
    )


# -- settings --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LlmSettings:
    base_url: str
    model: str
    api_key_env: str
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0
    concurrency: int = 4
    decimals: int = 2
    cache_dir: str = ""  # "" : no response cache
    with_image: bool = False  # numeric+image: the prompt carries the window's line plot
    image_size: int = IMAGE_SIZE  # the line plot is image_size × image_size pixels


def load_settings(system_id: str, with_image: bool = False) -> LlmSettings:
    """A system's settings: environment, else dbt vars, else :data:`PROFILES` or the id's
    registration (:mod:`tsrate.systems.registered`; see module doc)."""
    try:
        values = project_vars()
    except TsrateError:
        values = {}
    configured = (values.get("llm_systems") or {}).get(system_id) or {}
    if not isinstance(configured, dict):
        raise TsrateError(f"dbt var llm_systems.{system_id} must be a mapping, got {configured!r}")
    profile = PROFILES.get(system_id) or registered_profile(system_id) or {}
    prefix = env_prefix(system_id)

    def own(key: str) -> str:
        env = os.environ.get(prefix + key.upper())
        if env not in (None, ""):
            return env
        if configured.get(key) not in (None, ""):
            return str(configured[key])
        return profile.get(key, "")

    return LlmSettings(
        base_url=own("base_url"),
        model=own("model"),
        api_key_env=own("api_key_env"),
        temperature=float_setting("TSRATE_LLM_TEMPERATURE", "llm_temperature", 0.0),
        max_tokens=int_setting("TSRATE_LLM_MAX_TOKENS", "llm_max_tokens", 512),
        timeout_s=float_setting("TSRATE_LLM_TIMEOUT_S", "llm_timeout_s", 60.0, minimum=0.001),
        retries=int_setting("TSRATE_LLM_RETRIES", "llm_retries", 3, minimum=0),
        backoff_s=float_setting("TSRATE_LLM_BACKOFF_S", "llm_backoff_s", 1.0),
        concurrency=int_setting("TSRATE_LLM_CONCURRENCY", "llm_concurrency", 4),
        decimals=int_setting("TSRATE_LLM_DECIMALS", "llm_decimals", 2, minimum=0),
        cache_dir=cache_dir_setting(),
        with_image=with_image,
        image_size=int_setting("TSRATE_LLM_IMAGE_SIZE", "llm_image_size", IMAGE_SIZE, minimum=16),
    )


def cache_dir_setting() -> str:
    """``TSRATE_LLM_CACHE_DIR`` / var ``llm_cache_dir``; default ``<warehouse dir>/cache/llm``;
    ``off`` disables the cache."""
    raw = str(setting("TSRATE_LLM_CACHE_DIR", "llm_cache_dir", "") or "")
    if raw.lower() == "off":
        return ""
    if not raw:
        return str(warehouse_path().parent / "cache" / "llm")
    path = Path(raw)
    return str(path if path.is_absolute() else project_dir() / path)


# -- response cache ----------------------------------------------------------------------------


class ResponseCache:
    """Replies on disk, one JSON file per request, named by the SHA-256 of everything that
    determines the reply (endpoint, model, messages, temperature, max_tokens).

    A re-run of the same prompts (``--force``, another study sharing windows, a run killed
    half way) reads the stored reply instead of calling the endpoint. Files are written
    atomically (temporary file, then rename), so concurrent threads or processes never see
    half a reply. Unparseable replies are cached too (the same request gives the same answer
    at temperature 0); delete the folder, or set ``TSRATE_LLM_CACHE_DIR=off``, to ask again.
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @staticmethod
    def key(request: dict) -> str:
        canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        try:
            with open(self.path(key), encoding="utf-8") as handle:
                return json.load(handle)["reply"]
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, KeyError, TypeError):
            return None  # an unreadable entry is asked again and overwritten

    def put(self, key: str, reply: str, model: str) -> None:
        entry = {"model": model, "reply": reply, "stored_at": time.time()}
        write_text_atomic(self.path(key), json.dumps(entry))


# -- the system ------------------------------------------------------------------------------


class LlmSystem:
    """One language model behind an OpenAI-compatible endpoint, forecasting window by window."""

    #: appended to the fingerprint in stored partitions' keys (not in the response cache's)
    partition_tag = f";{FORECAST_PARSER}"

    def __init__(
        self,
        system_id: str,
        settings: LlmSettings,
        sentiment: SentimentSystem | None = None,
        context_length: int = 80,
    ):
        self.system_id = system_id
        self.settings = settings
        self._sentiment = sentiment
        self.context_length = context_length  # for the default P6 sentiment system
        self._client = None
        self.attempts = 0  # requests sent, retries included
        self.cache_hits = 0
        self._lock = threading.Lock()
        self.cache = ResponseCache(settings.cache_dir) if settings.cache_dir else None

    def fingerprint(self) -> str:
        s = self.settings
        text = (
            f"llm;url={s.base_url};model={s.model};temperature={s.temperature};"
            f"max_tokens={s.max_tokens};decimals={s.decimals};"
            f"prompt={prompt_digest(s.with_image)}"
        )
        if s.with_image:
            text += f";image=line_plot{s.image_size};sentiment={self.sentiment.fingerprint()}"
        return text

    @property
    def sentiment(self) -> SentimentSystem:
        """P6's sentiment system (numeric+image only): the project default, built lazily."""
        if self._sentiment is None:
            from tsrate.inputs.sentiment import default_sentiment_system

            self._sentiment = default_sentiment_system(self.context_length)
        return self._sentiment

    def availability(self) -> Availability:
        s = self.settings
        prefix = env_prefix(self.system_id)
        if not s.base_url:
            return Availability(
                False,
                f"no endpoint configured: set {prefix}BASE_URL to an OpenAI-compatible server "
                "ending in /v1 (e.g. vLLM http://localhost:8000/v1, Ollama "
                f"http://localhost:11434/v1) and {prefix}MODEL to the model it serves "
                f"(default {s.model or 'none'}); if it needs a key, put the key in an "
                f"environment variable and name that variable in {prefix}API_KEY_ENV "
                f"(or set dbt var llm_systems.{self.system_id}.base_url / model / api_key_env)",
            )
        if not s.model:
            return Availability(False, f"no model name: set {prefix}MODEL")
        if s.api_key_env and not os.environ.get(s.api_key_env):
            return Availability(
                False,
                f"the endpoint {s.base_url} needs an API key: set {s.api_key_env} "
                f"(or name another variable in {prefix}API_KEY_ENV, or point "
                f"{prefix}BASE_URL at a server of your own)",
            )
        try:
            import openai  # noqa: F401
        except ImportError:
            return Availability(False, f"the openai client is not installed; {INSTALL_HINT}")
        return Availability(
            True, f"model {s.model} at {s.base_url} (configured; not contacted until a run)"
        )

    @property
    def client(self):  # noqa: ANN201 - openai.OpenAI, imported lazily
        if self._client is None:
            import openai

            key = os.environ.get(self.settings.api_key_env, "") if self.settings.api_key_env else ""
            self._client = openai.OpenAI(
                base_url=self.settings.base_url,
                api_key=key or "no-key",
                timeout=self.settings.timeout_s,
                max_retries=0,  # retries and backoff are ours (configurable)
            )
        return self._client

    def complete(self, messages: list[dict]) -> str:
        """One chat completion's text: from the response cache when it holds this exact
        request, else from the endpoint (with retries; raises :class:`LlmEndpointError`)."""
        s = self.settings
        if self.cache is None:
            return self._request(messages)
        key = ResponseCache.key(
            {
                "base_url": s.base_url,
                "model": s.model,
                "messages": messages,
                "temperature": s.temperature,
                "max_tokens": s.max_tokens,
            }
        )
        cached = self.cache.get(key)
        if cached is not None:
            with self._lock:
                self.cache_hits += 1
            return cached
        reply = self._request(messages)
        self.cache.put(key, reply, s.model)
        return reply

    def sample(self, messages: list[dict], indices: list[int], temperature: float) -> list[str]:
        """Sampled replies to one chat, one per sample index, at ``temperature``: each read
        from the response cache under its own key (the request plus ``sample_index``), the
        missing ones asked with the OpenAI ``n`` parameter (one request for all of them); a
        server that returns fewer choices than asked (it ignores ``n``) is asked again for
        the rest, one request per round. Raises :class:`LlmEndpointError`."""
        s = self.settings
        keys = {
            i: ResponseCache.key(
                {
                    "base_url": s.base_url,
                    "model": s.model,
                    "messages": messages,
                    "temperature": temperature,
                    "max_tokens": s.max_tokens,
                    "sample_index": i,
                }
            )
            for i in indices
        }
        replies: dict[int, str] = {}
        if self.cache is not None:
            for i in indices:
                cached = self.cache.get(keys[i])
                if cached is not None:
                    replies[i] = cached
                    with self._lock:
                        self.cache_hits += 1
        missing = [i for i in indices if i not in replies]
        while missing:
            texts = self._request(messages, temperature=temperature, n=len(missing))
            for i, text in zip(missing, texts, strict=False):
                replies[i] = text
                if self.cache is not None:
                    self.cache.put(keys[i], text, s.model)
            missing = missing[len(texts) :]
        return [replies[i] for i in indices]

    def sample_all(
        self, prompts: list[list[dict]], indices: list[list[int]], temperature: float
    ) -> list[list[str]]:
        """:meth:`sample` for every chat (``indices[k]``: the sample indices of chat k), the
        chats sent ``concurrency`` at a time."""
        _ = self.client
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            return list(pool.map(lambda m, i: self.sample(m, i, temperature), prompts, indices))

    def _request(
        self, messages: list[dict], temperature: float | None = None, n: int | None = None
    ):
        """The reply text (``n`` given: the list of the choices' texts, at least one)."""
        import openai

        s = self.settings
        extra = {} if n is None or n == 1 else {"n": n}
        where = f"system {self.system_id!r}: {s.base_url} (model {s.model})"
        last: Exception | None = None
        for attempt in range(s.retries + 1):
            if attempt:
                time.sleep(s.backoff_s * 2 ** (attempt - 1))
            with self._lock:
                self.attempts += 1
            try:
                response = self.client.chat.completions.create(
                    model=s.model,
                    messages=messages,
                    temperature=s.temperature if temperature is None else temperature,
                    max_tokens=s.max_tokens,
                    **extra,
                )
            except (openai.APIConnectionError, openai.RateLimitError) as exc:
                last = exc
                continue
            except openai.APIStatusError as exc:
                if exc.status_code in (408, 409) or exc.status_code >= 500:
                    last = exc
                    continue
                raise LlmEndpointError(
                    f"{where}: HTTP {exc.status_code}: {str(exc)[:REPLY_HEAD]}"
                ) from exc
            if not response.choices:
                raise LlmEndpointError(f"{where}: the response holds no choices")
            if n is not None:
                return [c.message.content or "" for c in response.choices]
            return response.choices[0].message.content or ""
        error = LlmEndpointError(
            f"{where}: no answer after {s.retries + 1} attempt(s): {type(last).__name__}: "
            f"{str(last)[:REPLY_HEAD]}"
        )
        error.hint = unanswered_hint(last, s.base_url)
        raise error from last

    def predict(self, batch: ForecastBatch) -> np.ndarray | PartialForecasts:
        """Forecasts of every window; when some replies cannot be parsed, a
        :class:`PartialForecasts` whose failures keep each raw reply and the reason."""
        replies = self.complete_all(self.prompts(batch))
        return parse_replies(replies, batch.horizon, batch.contexts, self.settings.decimals)

    def complete_all(self, prompts: list[list[dict]]) -> list[str]:
        """The reply text of every chat (any task, not only forecasting), in order, sent
        ``concurrency`` at a time through the response cache; raises
        :class:`LlmEndpointError` when the endpoint cannot answer."""
        _ = self.client  # one client (connection pool) shared by the threads
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            return list(pool.map(self.complete, prompts))

    def prompts(self, batch: ForecastBatch) -> list[list[dict]]:
        """The chat messages of every window of a batch, exactly as sent."""
        s = self.settings
        return batch_messages(batch, s.decimals, s.with_image, s.image_size, self.sentiment)


def create(study, companies, system_id: str | None = None) -> LlmSystem:  # noqa: ANN001
    """Registry entry point: the seed's implementation is ``tsrate.systems.llm:<system_id>``;
    a seed row of modality ``numeric+image`` gets the numeric+image prompt with the line plot."""
    if not system_id:
        raise TsrateError(
            "an LLM system's implementation must name it: tsrate.systems.llm:<system_id>"
        )
    seed = load_systems_seed().set_index("system_id")
    with_image = system_id in seed.index and seed.loc[system_id, "modality"] == "numeric+image"
    context_length = study.context_length if study is not None else 80
    return LlmSystem(system_id, load_settings(system_id, with_image), context_length=context_length)
