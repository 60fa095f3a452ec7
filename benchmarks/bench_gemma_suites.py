"""Gemma 3 270M (``hf_local:gemma3_270m``) answering the understanding suite's default
``--sample``: per task type, prompts, prompt tokens, new tokens, wall and CPU seconds,
new tokens/s, prompts/s and how many replies parse.

Each task type's prompts of one prompting style are answered in one ``answer_all`` call
(batches of ``TSRATE_HF_BATCH_SIZE``, default 8), as the suite asks them. ``--path new``
is the shipped path: Gemma's chat turns, a stop at the end of turn, closed answers
(yes/no, labels, letters) decoded greedily over their admissible answers through a cut
output head, chain of thought as free reasoning then the answer line, prompts batched by
length. ``--path old`` is the path before those changes: plain-text prompts (no chat
template), no end-of-turn stop, every answer free over the full head (zero-shot capped at
32 new tokens), batches in plan order. Also prints the prefill tokens the batches pay
(each padded to its longest prompt) in plan order, sorted by length, and in
``length_groups`` (the shipped batching), from the tokenizer alone. Prints the load average before and after every part.

    .venv/bin/python benchmarks/bench_gemma_suites.py --path new --prompting zero_shot
    .venv/bin/python benchmarks/bench_gemma_suites.py --path old --prompting zero_shot --tasks detection
"""

from __future__ import annotations

import argparse
import os
import time


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def padded(lengths: list[int], batch: int) -> int:
    """Prefill tokens of batches of ``batch`` prompts in plan order, each padded to its
    longest."""
    return sum(
        max(lengths[i : i + batch]) * len(lengths[i : i + batch])
        for i in range(0, len(lengths), batch)
    )


def grouped(lengths: list[int], batch: int) -> tuple[int, int]:
    """Prefill tokens and batches of :func:`tsrate.systems.hf_local.length_groups`."""
    from tsrate.systems.hf_local import length_groups

    groups = length_groups(lengths, batch)
    return sum(max(lengths[i] for i in g) * len(g) for g in groups), len(groups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", choices=("new", "old"), default="new")
    parser.add_argument("--prompting", choices=("zero_shot", "cot", "both"), default="both")
    parser.add_argument("--tasks", default="", help="comma-separated task types (default all)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    args = parser.parse_args()

    import torch

    from tsrate.suites.understanding.cli import DEFAULT_SAMPLE
    from tsrate.suites.understanding.scoring import parse_reply
    from tsrate.suites.understanding.suite import (
        LanguageModelAnswerer,
        generate_all,
        plan_prompts,
        resolve_config,
        sample_prompts,
    )

    torch.set_num_threads(args.threads)
    config = resolve_config("small", {"promptings": ["zero_shot", "cot"]})
    chosen = sample_prompts(plan_prompts(config, generate_all(config)), DEFAULT_SAMPLE, 2404)
    print(f"load average before: {load()}")
    answerer = LanguageModelAnswerer("hf_local:gemma3_270m")
    model = answerer.model
    wall, cpu = time.perf_counter(), time.process_time()
    model.load()
    print(
        f"warm load: {time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU"
    )
    tokenizer = model._tokenizer
    if args.path == "old":
        model._turns = False  # chats as plain text (prompt_text's fallback)
        model._model.generation_config.eos_token_id = tokenizer.eos_token_id
        answerer.closed = False
        model.group_by_length = False
    size = model.settings.batch_size
    print(f"path {args.path}; batch size {size}; {args.threads} threads")
    print(f"fingerprint: {answerer.fingerprint()}")

    def tokens(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    for prompting in ("zero_shot", "cot"):
        rows = [p for p in chosen if p.prompting == prompting]
        lengths = [tokens(model.chat_text(p.chat())) for p in rows]
        print(
            f"{prompting}: {len(rows)} prompts, {sum(lengths) / len(lengths):.0f} tokens on "
            f"average, {max(lengths)} at most; prefill tokens at batch {size}: plan order "
            f"{padded(lengths, size)}, sorted by length {padded(sorted(lengths), size)}, "
            f"length_groups {grouped(lengths, size)[0]} in {grouped(lengths, size)[1]} "
            f"batches (unpadded {sum(lengths)})"
        )
    wanted = set(filter(None, args.tasks.split(",")))
    promptings = ("zero_shot", "cot") if args.prompting == "both" else (args.prompting,)
    print("prompting | task | prompts | prompt tokens | new tokens | wall s | CPU s | "
          "new tokens/s | prompts/s | parsed | load")  # fmt: skip
    total_wall, total_prompts = 0.0, 0
    for prompting in promptings:
        tasks = sorted({p.task for p in chosen if p.prompting == prompting})
        for task in [t for t in tasks if not wanted or t in wanted]:
            rows = [p for p in chosen if p.prompting == prompting and p.task == task]
            before = load()
            wall, cpu = time.perf_counter(), time.process_time()
            replies = answerer.answer_all(rows)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            total_wall += wall
            total_prompts += len(rows)
            parsed = sum(
                parse_reply(p.task, r, p.options, p.prompting).ok
                for p, r in zip(rows, replies, strict=True)
            )
            new = sum(tokens(r) + 1 for r in replies)
            prompt_tokens = sum(tokens(model.chat_text(p.chat())) for p in rows)
            print(
                f"{prompting} | {task} | {len(rows)} | {prompt_tokens} | {new} | {wall:.1f} | "
                f"{cpu:.1f} | {new / wall:.1f} | {len(rows) / wall:.3f} | {parsed}/{len(rows)} | "
                f"{before}->{load()}"
            )
            for p, r in list(zip(rows, replies, strict=True))[:2]:
                print(f"    {p.task} reply: {r[-160:]!r}")
    print(f"total: {total_prompts} prompts in {total_wall:.1f} s wall")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
