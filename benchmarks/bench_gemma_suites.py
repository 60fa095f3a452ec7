"""Gemma 3 270M (``hf_local:gemma3_270m``) answering understanding-suite prompts: seconds per
prompt, wall and this process's CPU time, zero-shot (capped at the suite's
``ZERO_SHOT_NEW_TOKENS``) and chain of thought (``TSRATE_HF_MAX_NEW_TOKENS``).

The prompts are the first of the default ``--sample`` of the small configuration, one at a
time (batch 1). CPU time of a process on ``--threads 1`` is close to what the same work
takes on one quiet core, so on a shared machine it is the figure to compare; wall time
says what the load made of it. Prints the load average before and after.

    TSRATE_HF_MAX_NEW_TOKENS=128 .venv/bin/python benchmarks/bench_gemma_suites.py \
        --zero-shot 3 --cot 2 --threads 1
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zero-shot", type=int, default=3, help="zero-shot prompts to time")
    parser.add_argument("--cot", type=int, default=2, help="chain-of-thought prompts to time")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
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
    os.environ.setdefault("TSRATE_HF_BATCH_SIZE", "1")
    config = resolve_config("small", {"promptings": ["zero_shot", "cot"]})
    chosen = sample_prompts(plan_prompts(config, generate_all(config)), DEFAULT_SAMPLE, 2404)
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    answerer = LanguageModelAnswerer("hf_local:gemma3_270m")
    wall, cpu = time.perf_counter(), time.process_time()
    answerer.model.load()
    print(
        f"warm load: {time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU"
    )
    tokenizer = answerer.model._tokenizer
    lengths = [len(tokenizer(p.text)["input_ids"]) for p in chosen if p.prompting == "zero_shot"]
    print(
        f"default sample ({DEFAULT_SAMPLE} questions): zero-shot prompts of "
        f"{sum(lengths) / len(lengths):.0f} tokens on average, {max(lengths)} at most"
    )
    print("prompting | task | prompt tokens | new tokens | wall s | CPU s | parsed")
    for prompting, count in (("zero_shot", args.zero_shot), ("cot", args.cot)):
        for prompt in [p for p in chosen if p.prompting == prompting][:count]:
            wall, cpu = time.perf_counter(), time.process_time()
            reply = answerer.answer_all([prompt])[0]
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            parsed = parse_reply(prompt.task, reply, prompt.options, prompt.prompting).ok
            print(
                f"{prompting} | {prompt.task} | {len(tokenizer(prompt.text)['input_ids'])} | "
                f"{len(tokenizer(reply)['input_ids'])} | {wall:.1f} | {cpu:.1f} | {parsed}"
            )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
