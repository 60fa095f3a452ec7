"""Greedy decoding of an answer from a closed set (yes/no, a choice letter, a class label):
every step restricted to the tokens that continue one of the admissible answers.

The admissible answers of a prompt are written out as token sequences (each answer in the
spellings its parser reads as that answer, with and without a leading space) and kept in a
:class:`ChoiceTrie`. At each step only the next tokens of the sequences the reply so far
begins are allowed, plus the end of sequence once the reply is a whole answer; once no
answer continues the reply, only the end of sequence. That is greedy decoding with every
other logit masked out (constrained decoding; tested against that independent
computation), so the reply is always one admissible answer, the one the model ranks
highest token by token. Combined with :func:`tsrate.systems.numeric_decoding.restricted_head`
over the union of the answers' tokens, a step reads a few rows of the output head instead of
the whole vocabulary.

A system decoding this way answers a closed question in its asked form by construction;
whether its answers beat chance is what the suites' reports judge. The rule is named in the
fingerprint of whoever uses it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def spellings(answer: str) -> list[str]:
    """``answer`` as written, lower case, capitalised and upper case, each also after a
    space (a reply that follows ``Answer:``), without repeats, in that order."""
    forms: list[str] = []
    for form in (answer, answer.lower(), answer[:1].upper() + answer[1:], answer.upper()):
        for text in (form, " " + form):
            if text not in forms:
                forms.append(text)
    return forms


def admissible(answers: Iterable[str], reads_as: Callable[[str], str | None]) -> list[str]:
    """The spellings (:func:`spellings`) of every answer that ``reads_as`` (the parser: a
    reply → the answer it reads, None when unparseable) reads as that same answer."""
    out: list[str] = []
    for answer in answers:
        expected = reads_as(answer)
        if expected is None:
            continue
        out += [s for s in spellings(answer) if s not in out and reads_as(s) == expected]
    return out


class ChoiceTrie:
    """Token sequences of the admissible answers; :meth:`allowed` gives the next tokens."""

    def __init__(self, sequences: Sequence[Sequence[int]], eos_ids: Sequence[int]):
        self.sequences = [tuple(int(t) for t in s) for s in sequences if len(s)]
        if not self.sequences:
            raise ValueError("a closed question needs at least one admissible answer")
        self.eos_ids = sorted({int(e) for e in eos_ids})
        self._next: dict[tuple[int, ...], set[int]] = {}
        self._whole: set[tuple[int, ...]] = set(self.sequences)
        for seq in self.sequences:
            for k in range(len(seq)):
                self._next.setdefault(seq[:k], set()).add(seq[k])

    @classmethod
    def of(cls, tokenizer: Any, texts: Sequence[str], eos_ids: Sequence[int]) -> ChoiceTrie:
        """The trie of ``texts`` as ``tokenizer`` writes each (no special tokens)."""
        return cls([tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts], eos_ids)

    def allowed(self, prefix: Sequence[int]) -> list[int]:
        """The tokens that may follow ``prefix`` (the reply's tokens so far)."""
        prefix = tuple(int(t) for t in prefix)
        nxt = set(self._next.get(prefix, ()))
        if prefix in self._whole or not nxt:
            nxt.update(self.eos_ids)
        return sorted(nxt)

    def tokens(self) -> list[int]:
        """Every token an answer may hold, with the end-of-sequence ids."""
        return sorted({t for s in self.sequences for t in s} | set(self.eos_ids))

    def max_tokens(self) -> int:
        """New tokens enough for the longest answer and its end of sequence."""
        return 1 + max(len(s) for s in self.sequences)


#: per loaded tokenizer (weakly held: a new tokenizer at a reused address starts afresh)
_CANDIDATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def candidate_tokens(tokenizer: Any, characters: str) -> list[int]:
    """Ids of the tokens whose text is made of ``characters`` only (a pass over the whole
    vocabulary: computed once per loaded tokenizer and character set)."""
    from tsrate.systems.numeric_decoding import token_surface

    known = _CANDIDATES.setdefault(tokenizer, {})
    if characters not in known:
        vocabulary = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        chars = set(characters)
        known[characters] = [
            i
            for i, token in enumerate(vocabulary)
            if token is not None and (surface := token_surface(token)) and set(surface) <= chars
        ]
    return known[characters]


class PatternAnswer:
    """An answer written in a regular form (a number; a number on a date): at each step the
    tokens after which the reply can still become a whole match of ``pattern`` (the
    ``regex`` module's partial matching), the end of sequence once it is one. Only tokens
    made of ``characters`` are candidates (a small head); at most ``limit`` tokens before
    the end of sequence (a reply cut there may not match whole: the parser judges it).
    Same interface as :class:`ChoiceTrie`."""

    def __init__(
        self,
        tokenizer: Any,
        pattern: str,
        characters: str,
        eos_ids: Sequence[int],
        limit: int,
    ):
        import regex

        self.tokenizer = tokenizer
        self.pattern = regex.compile(pattern)
        self.eos_ids = sorted({int(e) for e in eos_ids})
        self.limit = int(limit)
        self.candidates = [
            i for i in candidate_tokens(tokenizer, characters) if i not in self.eos_ids
        ]

    def _text(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def allowed(self, prefix: Sequence[int]) -> list[int]:
        prefix = [int(t) for t in prefix]
        if any(t in self.eos_ids for t in prefix) or len(prefix) >= self.limit:
            return list(self.eos_ids)  # finished, or at the cap: the reply ends
        text = self._text(prefix)
        out = [
            i
            for i in self.candidates
            if self.pattern.fullmatch(self._text([*prefix, i]), partial=True)
        ]
        if self.pattern.fullmatch(text) or not out:
            out += self.eos_ids
        return sorted(out)

    def tokens(self) -> list[int]:
        return sorted({*self.candidates, *self.eos_ids})

    def max_tokens(self) -> int:
        return self.limit + 1  # the end of sequence after the cap


def prefix_function(tries: Sequence[ChoiceTrie | PatternAnswer], prompt_length: int) -> Any:
    """``generate``'s ``prefix_allowed_tokens_fn`` for a chunk whose row ``i`` answers from
    ``tries[i]``. ``prompt_length``: the padded prompt length, after which a row's tokens
    are its reply."""

    def allowed(batch_id: int, input_ids: Any) -> list[int]:
        return tries[batch_id].allowed(input_ids[prompt_length:].tolist())

    return allowed


def reasoning_before_answer(reply: str) -> str:
    """A chain-of-thought reply up to its first line that starts with ``Answer:`` (case and
    leading blanks as the suites' parser reads them), trailing blanks dropped: the
    reasoning, after which the answer line is decoded over the admissible answers."""
    import re

    match = re.search(r"^[ \t]*answer[ \t]*:", reply, re.IGNORECASE | re.MULTILINE)
    return (reply[: match.start()] if match else reply).rstrip()
