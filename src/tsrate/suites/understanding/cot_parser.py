"""A language model that reads the final answer out of a chain-of-thought reply, as the
paper does ("we utilize an LLM to parse the responses due to their increased complexity and
length"), behind the strict rule, never instead of it.

Order of parsing a chain-of-thought reply (``prompting`` = ``cot``):

1. the reply's last ``Answer:`` line, read by the task's strict parser
   (:func:`.scoring.parse_cot_answer`) -- ``parsed_by`` = ``regex``;
2. only when that fails and ``--cot-parser BACKEND:ID`` is given: the parser model is shown
   the question (the prompt after the series block, without the chain-of-thought
   instruction: it never sees the series, so it cannot answer by itself) and the reply, with
   the template ``prompts/cot_parser.txt``, and asked for the reply's final answer only; its
   extraction is read by the same strict parser (:func:`.scoring.parse_answer`) --
   ``parsed_by`` = ``llm``, its text kept in ``raw.und_responses.parser_text`` and the parser
   (id and fingerprint) in ``parser``;
   When the reply gives no final answer the parser model writes the sentinel
   :data:`NO_ANSWER` (no class of any task and no number: the word ``none`` would be the
   volatility class ``none``); the reply then stays unparseable and is not counted as parsed
   by the parser model;
3. otherwise the reply is unparseable (the reason names both failures) and counts wrong.

A reply whose ``Answer:`` line abstains ("None of these": ``Parsed.abstained``) is never
sent to the parser model: it chose no option, and there is no other answer to extract.

Zero-shot replies are parsed by the strict parser alone (``parsed_by`` = ``regex``). A
reply is parsed once, when it is stored: a rerun reuses the stored parse.
"""

from __future__ import annotations

import re

from tsrate import TsrateError
from tsrate.suites.understanding.scoring import Parsed, parse_answer
from tsrate.suites.understanding.tasks import COT_TEMPLATE, Prompt, load_template
from tsrate.systems.base import Availability

PARSER_TEMPLATE = "cot_parser"
#: what the parser model writes when the reply gives no final answer (``prompts/cot_parser.txt``)
NO_ANSWER = "NO_ANSWER"


def _is_no_answer(extraction: str | None) -> bool:
    """Whether the parser model wrote :data:`NO_ANSWER` (any case, quotes or a full stop
    around it allowed)."""
    return extraction is not None and extraction.strip().strip(" .'\"`*").upper() == NO_ANSWER


def question_of(prompt: Prompt) -> str:
    """The prompt after its series block (question, options, answer form), without the
    chain-of-thought instruction."""
    text = prompt.text
    cot = load_template(COT_TEMPLATE).render().strip()
    if text.rstrip().endswith(cot):
        text = text.rstrip()[: -len(cot)]
    parts = re.split(r"```\n.*?```\n", text, maxsplit=1, flags=re.DOTALL)
    return parts[-1].strip()


def extraction_chat(prompt: Prompt, reply: str) -> list[dict]:
    """The parser model's chat for one reply (template ``prompts/cot_parser.txt``)."""
    text = load_template(PARSER_TEMPLATE).render(question=question_of(prompt), reply=reply.strip())
    return [{"role": "user", "content": text}]


class CotParser:
    """A language model (``endpoint:ID`` / ``hf_local:ID``) that extracts final answers."""

    def __init__(self, spec: str):
        from tsrate.systems.language import open_language_model

        self.spec = spec
        self.model = open_language_model(spec)
        self.system_id = self.model.system_id

    def availability(self) -> Availability:
        return self.model.availability()

    def label(self) -> str:
        """``<system_id>@<fingerprint>``: what ``raw.und_responses.parser`` records."""
        return f"{self.system_id}@{self.model.fingerprint()}"

    def rescue(
        self, prompts: list[Prompt], replies: list[str | None], parsed: list[Parsed]
    ) -> tuple[list[Parsed], list[str | None], list[str | None]]:
        """Ask the parser model about every chain-of-thought reply whose ``Answer:`` line did
        not parse; returns (parsed, parsed_by, parser_text), one per reply."""
        parsed = list(parsed)
        parsed_by: list[str | None] = ["regex" if a.ok else None for a in parsed]
        texts: list[str | None] = [None] * len(parsed)
        asked = [
            i
            for i, (p, r, a) in enumerate(zip(prompts, replies, parsed, strict=True))
            # an abstention ("Answer: None of these") is an answer: nothing to extract
            if p.prompting == "cot"
            and not a.ok
            and not a.abstained
            and r is not None
            and str(r).strip()
        ]
        if not asked:
            return parsed, parsed_by, texts
        extractions = self.model.complete_all(
            [extraction_chat(prompts[i], str(replies[i])) for i in asked]
        )
        if len(extractions) != len(asked):
            raise TsrateError(
                f"cot parser {self.system_id} returned {len(extractions)} replies for {len(asked)}"
            )
        for i, extraction in zip(asked, extractions, strict=True):
            texts[i] = None if extraction is None else str(extraction)
            if _is_no_answer(texts[i]):
                parsed[i] = Parsed(
                    False, error=f"{parsed[i].error}; the parser model found no final answer"
                )
                continue
            second = parse_answer(prompts[i].task, texts[i], prompts[i].options, prompts[i].format)
            if second.ok:
                parsed[i], parsed_by[i] = second, "llm"
            else:
                parsed[i] = Parsed(
                    False, error=f"{parsed[i].error}; the parser model's extraction: {second.error}"
                )
        return parsed, parsed_by, texts
