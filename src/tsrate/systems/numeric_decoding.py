"""Greedy decoding of a numeric forecast, fast: the output head cut to the answer's tokens.

A numeric forecast's reply is digits, separators, a sign, a decimal point, newlines and an
end-of-sequence token. Decoding a small language model on a CPU is memory-bound, and with a
large vocabulary most of the bytes read per token are the output head (Gemma 3: 262,144
rows × 640 float32, 671 MB per token). :func:`restricted_head` keeps only the rows of the
allowed tokens (:func:`numeric_token_ids`) in a small ``Linear`` and writes their logits
back at their own vocabulary indices, every other logit a very large negative number, so
``generate``'s greedy argmax returns real token ids and nothing else in the generation loop
changes. The result is **exactly** greedy decoding over the full head with every other
token masked out (constrained decoding; tested against that independent computation), so
it is a change of the decoding rule, named in the fingerprint, not an approximation.

:func:`numeric_token_cap` bounds the new tokens a window needs and :class:`ForecastComplete`
stops a reply once it holds the horizon's numbers, so a model that would go on writing
numbers is not decoded for nothing. Given the windows' contexts it counts the numbers as the
parser will (:func:`~tsrate.systems.llm_replies.parse_forecast`): a leading echo of the context's
last values is not part of the forecast, so a reply that restates them is decoded on until
the horizon's numbers follow (within the token cap), not stopped at the echo and then
failed by the parser for having no forecast after it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from tsrate.systems.llm_replies import ReplyParseError, parse_forecast

#: the characters a numeric forecast's reply may hold (besides the end-of-sequence tokens)
NUMERIC_CHARACTERS = frozenset("0123456789.,-+ \n")
_BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def token_surface(token: str) -> str:
    """A vocabulary entry as text, cheaply: SentencePiece's ``▁`` is a space, ``<0xNN>`` a byte."""
    byte = _BYTE_TOKEN.match(token)
    if byte:
        return chr(int(byte.group(1), 16))
    return token.replace("▁", " ").replace("Ġ", " ").replace("Ċ", "\n")


def numeric_token_ids(tokenizer: Any, eos_ids: list[int] | tuple[int, ...] = ()) -> list[int]:
    """Sorted ids of the tokens that decode to non-empty text made only of
    :data:`NUMERIC_CHARACTERS`, plus the tokenizer's end-of-sequence id and ``eos_ids``.
    A cheap pass over the vocabulary's strings picks the candidates; each is then checked by
    the tokenizer's own ``decode``."""
    vocabulary = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    candidates = [
        index
        for index, token in enumerate(vocabulary)
        if token is not None and set(token_surface(token)) <= NUMERIC_CHARACTERS
    ]
    allowed = {
        index
        for index in candidates
        if (text := tokenizer.decode([index])) and set(text) <= NUMERIC_CHARACTERS
    }
    ends = [tokenizer.eos_token_id, *eos_ids]
    allowed.update(int(e) for e in ends if e is not None)
    return sorted(allowed)


def _make_head(head: Any, allowed: list[int]) -> Any:
    import torch

    class _Head(torch.nn.Module):
        """The rows ``allowed`` of ``head`` as a small Linear; logits at their own indices."""

        def __init__(self) -> None:
            super().__init__()
            index = torch.as_tensor(allowed, dtype=torch.long, device=head.weight.device)
            self.register_buffer("allowed", index, persistent=False)
            self.vocab_size = head.weight.shape[0]
            self.small = torch.nn.Linear(
                head.weight.shape[1],
                len(allowed),
                bias=head.bias is not None,
                device=head.weight.device,
                dtype=head.weight.dtype,
            )
            with torch.no_grad():
                self.small.weight.copy_(head.weight[index])
                if head.bias is not None:
                    self.small.bias.copy_(head.bias[index])

        def forward(self, hidden: Any) -> Any:
            logits = self.small(hidden)
            full = logits.new_full(
                (*logits.shape[:-1], self.vocab_size), torch.finfo(logits.dtype).min
            )
            return full.index_copy_(-1, self.allowed, logits)

    return _Head()


@contextlib.contextmanager
def restricted_head(model: Any, allowed: list[int]) -> Iterator[Any]:
    """``model``'s output head replaced by the rows ``allowed`` while the block runs (then
    the original head, tied weights and all, is put back). Yields the small head."""
    original = model.get_output_embeddings()
    small = _make_head(original, allowed)
    model.set_output_embeddings(small)
    try:
        yield small
    finally:
        model.set_output_embeddings(original)


def numeric_token_cap(contexts: np.ndarray, horizon: int, decimals: int) -> int:
    """New tokens enough for ``horizon`` numbers written like the context (one token per
    character, as Gemma and most LLM tokenizers split digits): a sign, the integer digits
    of ten times the largest |value| (room to grow), the point and ``decimals`` digits, and
    two separator tokens per number; plus 8 for a closing newline and end of sequence."""
    finite = np.abs(np.asarray(contexts, dtype=float))
    finite = finite[np.isfinite(finite)]
    largest = float(finite.max()) if finite.size else 1.0
    width = 1 + len(f"{largest * 10:.{decimals}f}")
    return horizon * (width + 2) + 8


class ForecastComplete:
    """A stopping criterion: a row is done once its reply, cut after its last separator
    (so a number still being written is not counted), parses to ``horizon`` numbers, read
    as the parser reads them: after any echo of the row's context (``contexts[row]``, the
    values the prompt printed at ``decimals`` places; without ``contexts`` no echo is
    looked for)."""

    def __init__(
        self,
        tokenizer: Any,
        prompt_length: int,
        horizon: int,
        contexts: np.ndarray | None = None,
        decimals: int = 2,
    ):
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length
        self.horizon = horizon
        self.contexts = contexts
        self.decimals = decimals

    def done(self, reply: str, row: int | None = None) -> bool:
        cut = max(reply.rfind(c) for c in ", \n;")
        if cut < 0:
            return False
        context = None if self.contexts is None or row is None else self.contexts[row]
        try:
            parse_forecast(reply[:cut], self.horizon, context, self.decimals)
        except ReplyParseError:
            return False
        return True

    def __call__(self, input_ids: Any, scores: Any = None, **kwargs: Any) -> Any:
        import torch

        replies = self.tokenizer.batch_decode(
            input_ids[:, self.prompt_length :], skip_special_tokens=True
        )
        done = [self.done(reply, row) for row, reply in enumerate(replies)]
        return torch.tensor(done, device=input_ids.device)


#: the most tokens of free text (full head) a reply may open with before its numbers
LEAD_IN_TOKENS = 24
_NUMBER_START = frozenset("0123456789+-.")


def lead_in(reply: str) -> tuple[str, bool]:
    """The free-text opening of a reply (full-head decoding) and whether it is complete.

    A reply that starts with a number (after whitespace) has no lead-in; else its lead-in is
    its first non-empty line with the newline ("The next 20 closing prices are:\n"); a
    reply with neither yet is incomplete (the whole text so far)."""
    stripped = reply.lstrip()
    if stripped and stripped[0] in _NUMBER_START:
        return "", True
    line_end = reply.find("\n", len(reply) - len(stripped))
    if stripped and line_end >= 0:
        return reply[: line_end + 1], True
    return reply, False


class LeadInComplete(ForecastComplete):
    """A stopping criterion: a row is done once its lead-in is (:func:`lead_in`)."""

    def done(self, reply: str, row: int | None = None) -> bool:
        return lead_in(reply)[1]


def _criteria(kind: type, tokenizer: Any, horizon: int, **options: Any) -> Any:
    def build(prompt_length: int) -> Any:
        from transformers import StoppingCriteria, StoppingCriteriaList

        class _Stop(StoppingCriteria):
            def __init__(self) -> None:
                self.inner = kind(tokenizer, prompt_length, horizon, **options)

            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                return self.inner(input_ids, scores)

        return StoppingCriteriaList([_Stop()])

    return build


def stopping_for(
    tokenizer: Any, horizon: int, contexts: np.ndarray | None = None, decimals: int = 2
) -> Any:
    """``prompt length → StoppingCriteriaList([ForecastComplete])`` (``HfLocalSystem.generate``;
    ``contexts``: one per row of the generated batch, in its order)."""
    return _criteria(ForecastComplete, tokenizer, horizon, contexts=contexts, decimals=decimals)


def lead_in_stopping(tokenizer: Any) -> Any:
    """``prompt length → StoppingCriteriaList([LeadInComplete])``."""
    return _criteria(LeadInComplete, tokenizer, 0)
