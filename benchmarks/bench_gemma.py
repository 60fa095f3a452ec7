"""Gemma 3 270M (``gemma3_270m``): load time and new tokens per second on real forecast prompts.

Prompts are the default study's windows (first ticker, P0, the first ``--windows``), rendered
exactly as the system renders them. Parts, each printing the load average before and after:

- load: warm load of the cached converted checkpoint (the cold de-quantize happens once, on
  the first load ever; delete ``~/.cache/tsrate/gemma3_270m`` to measure it again);
- ``full``: the generic hf_local greedy generate over the full 262,144-row head;
- ``numeric``: the system's forecast path (head cut to the numeric tokens, the per-window
  token cap, stop once the horizon's numbers are written);

for each ``--batch-sizes``. Prints new tokens, seconds, tokens/s and prompts/s.
``--chat plain`` renders the prompts as plain text without the end-of-turn stop (the path
before Gemma's chat turns), to compare with the shipped ``--chat gemma``.

    .venv/bin/python benchmarks/bench_gemma.py --windows 4 --batch-sizes 1,4 --threads 2
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from tsrate.config import Study
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.forecast.plan import load_series, make_batch
from tsrate.robustness.sources import load_skfolio_sp500
from tsrate.systems.gemma import GemmaSystem
from tsrate.systems.hf_local import prompt_text
from tsrate.systems.llm_replies import parse_replies


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def first_batch(windows: int):  # noqa: ANN201
    study = Study.from_vars()
    with tempfile.TemporaryDirectory() as folder, connect(Path(folder) / "t.duckdb") as con:
        store_prices(con, load_skfolio_sp500(list(study.tickers[:1])), "skfolio")
        series = load_series(con, dataclasses.replace(study, tickers=study.tickers[:1]))
    batch = make_batch(study, series[study.tickers[0]], "P0")
    return dataclasses.replace(
        batch,
        window_end_dates=batch.window_end_dates[:windows],
        contexts=batch.contexts[:windows],
        clean_futures=batch.clean_futures[:windows],
    )


def count_tokens(system: GemmaSystem, replies: list[str]) -> int:
    return sum(
        len(system._tokenizer(r, add_special_tokens=False)["input_ids"]) + 1 for r in replies
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=4)
    parser.add_argument("--batch-sizes", default="1,4")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="full,numeric")
    parser.add_argument("--chat", choices=("gemma", "plain"), default="gemma")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    batch = first_batch(args.windows)
    system = GemmaSystem()
    print(f"load before: {load()}")
    started = time.perf_counter()
    system.load()
    print(f"load: {time.perf_counter() - started:.1f} s (load avg {load()})")
    if args.chat == "plain":
        system._tokenizer.chat_template = None
        system._model.generation_config.eos_token_id = system._tokenizer.eos_token_id
    os.environ["TSRATE_LLM_CACHE_DIR"] = "off"  # measure the model, never the reply cache
    print(f"chat: {args.chat}")
    texts = [prompt_text(system._tokenizer, m) for m in system.prompts(batch)]
    lengths = [len(system._tokenizer(t)["input_ids"]) for t in texts]
    print(f"prompts: {len(texts)}, tokens {min(lengths)}-{max(lengths)}, horizon {batch.horizon}")
    for mode in args.modes.split(","):
        for size in [int(b) for b in args.batch_sizes.split(",")]:
            system.settings = dataclasses.replace(system.settings, batch_size=size)
            before = load()
            started = time.perf_counter()
            if mode == "full":
                replies = system.generate(texts)
            else:
                replies = system.forecast_replies(batch)
            seconds = time.perf_counter() - started
            tokens = count_tokens(system, replies)
            # parsed as the system parses them: a leading echo of the context is skipped
            parsed = parse_replies(replies, batch.horizon, batch.contexts, system.settings.decimals)
            failed = len(getattr(parsed, "failures", ()))
            print(
                f"{mode:8s} batch {size}: {tokens} new tokens in {seconds:.1f} s = "
                f"{tokens / seconds:.1f} tokens/s, {len(texts) / seconds:.2f} prompts/s, "
                f"{failed} unparsed (load {before} -> {load()})"
            )
            print("   first reply:", repr(replies[0][:120]))
            if mode == "numeric" and not failed:
                print("   MAE vs clean future:", float(np.abs(parsed - batch.clean_futures).mean()))


if __name__ == "__main__":
    main()
