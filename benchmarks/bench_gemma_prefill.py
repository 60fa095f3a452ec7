"""Gemma 3 270M forecasts: the prompt prefilled once (shipped) against twice (the path before).

``GemmaSystem.constrained_replies`` decodes a forecast in two greedy phases, the model's own
lead-in over the full head and the numbers over the numeric head. Before, the second phase
re-tokenized each prompt with its lead-in and prefilled it again (``before`` below: that
path verbatim, two calls of ``generate``); now it starts from the first phase's keys and
values (``after``: the shipped method). Both run on the same real prompts of the default
study (its first ``--tickers`` tickers, ``--perturbations``, ``--windows`` windows spread
evenly over each series), at the default batch size (``TSRATE_HF_BATCH_SIZE``, 8), each
``--repeats`` times, alternated (before/after, then after/before, ...). Prints wall and
process CPU seconds per reply per run (CPU time is the steadier figure on a shared box) and
their medians, the load average around each run, and whether the two
paths' replies are identical (greedy: they should be, up to float rounding; every
differing reply is printed).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_gemma_prefill.py --windows 8 --repeats 3
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from tsrate.config import Study
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.forecast.plan import load_series, make_batch
from tsrate.robustness.sources import load_skfolio_sp500
from tsrate.systems import numeric_decoding
from tsrate.systems.gemma import GemmaSystem
from tsrate.systems.hf_local import prompt_text


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def study_batches(tickers: int, perturbations: list[str], windows: int) -> list:  # noqa: ANN401
    """``windows`` forecast batches' worth of windows per ticker and perturbation of the
    default study, spread evenly over each series."""
    study = Study.from_vars()
    chosen = list(study.tickers[:tickers])
    with tempfile.TemporaryDirectory() as folder, connect(Path(folder) / "t.duckdb") as con:
        store_prices(con, load_skfolio_sp500(chosen), "skfolio")
        series = load_series(con, dataclasses.replace(study, tickers=chosen))
    out = []
    for ticker in chosen:
        for perturbation in perturbations:
            batch = make_batch(study, series[ticker], perturbation)
            pick = np.linspace(0, len(batch.contexts) - 1, windows).round().astype(int)
            out.append(
                dataclasses.replace(
                    batch,
                    window_end_dates=batch.window_end_dates[pick],
                    contexts=batch.contexts[pick],
                    clean_futures=batch.clean_futures[pick],
                )
            )
    return out


def before(system: GemmaSystem, texts: list[str], horizon: int, cap: int) -> list[str]:
    """The two-prefill path, as ``constrained_replies`` was before the cache was reused."""
    tokenizer = system._tokenizer
    openings = system.generate(
        texts,
        max_new_tokens=numeric_decoding.LEAD_IN_TOKENS,
        stopping=numeric_decoding.lead_in_stopping(tokenizer),
    )
    leads = [numeric_decoding.lead_in(opening)[0] for opening in openings]
    with numeric_decoding.restricted_head(system._model, system.numeric_ids()):
        numbers = system.generate(
            [text + lead for text, lead in zip(texts, leads, strict=True)],
            max_new_tokens=cap,
            stopping=numeric_decoding.stopping_for(tokenizer, horizon),
        )
    return [lead + rest for lead, rest in zip(leads, numbers, strict=True)]


def after(system: GemmaSystem, texts: list[str], horizon: int, cap: int) -> list[str]:
    return system.constrained_replies(texts, horizon, cap)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickers", type=int, default=1)
    parser.add_argument("--perturbations", default="P0")
    parser.add_argument("--windows", type=int, default=8, help="per ticker and perturbation")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--paths", default="before,after", help="e.g. after: the new one only")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    os.environ["TSRATE_LLM_CACHE_DIR"] = "off"  # measure the model, never the reply cache
    batches = study_batches(args.tickers, args.perturbations.split(","), args.windows)
    system = GemmaSystem()
    system.load()
    work = []  # (texts, horizon, cap) per batch of windows
    for batch in batches:
        texts = [prompt_text(system._tokenizer, m) for m in system.prompts(batch)]
        cap = numeric_decoding.numeric_token_cap(
            batch.contexts, batch.horizon, system.settings.decimals
        )
        work.append((texts, batch.horizon, cap))
    replies = sum(len(texts) for texts, _, _ in work)
    lengths = [len(system._tokenizer(t)["input_ids"]) for texts, _, _ in work for t in texts]
    print(
        f"nproc {os.cpu_count()}, torch threads {torch.get_num_threads()}, batch size "
        f"{system.settings.batch_size}, {replies} replies, prompts of "
        f"{min(lengths)}-{max(lengths)} tokens, load {load()}",
        flush=True,
    )
    paths = {"before": before, "after": after}
    names = args.paths.split(",")
    seconds: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    outputs: dict[str, list[list[str]]] = {name: [] for name in names}
    for repeat in range(args.repeats):
        for name in names if repeat % 2 == 0 else names[::-1]:
            start_load = load()
            started, started_cpu = time.perf_counter(), time.process_time()
            out = [r for texts, h, cap in work for r in paths[name](system, texts, h, cap)]
            took, took_cpu = time.perf_counter() - started, time.process_time() - started_cpu
            seconds[name].append(took / replies)
            cpu[name].append(took_cpu / replies)
            outputs[name].append(out)
            print(
                f"repeat {repeat + 1} {name:6s}: {took:7.1f} s, {took / replies:5.2f} s/reply, "
                f"CPU {took_cpu / replies:5.2f} s/reply (load {start_load} -> {load()})",
                flush=True,
            )
    for name in names:
        print(
            f"median {name:6s}: {statistics.median(seconds[name]):.2f} s/reply, "
            f"CPU {statistics.median(cpu[name]):.2f} s/reply"
        )
        stable = all(o == outputs[name][0] for o in outputs[name])
        print(f"  {name} replies identical across repeats: {stable}")
    if len(names) == 2:
        a, b = (outputs[name][0] for name in names)
        differing = [k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        print(f"replies differing between {names[0]} and {names[1]}: {len(differing)}/{len(a)}")
        for k in differing:
            print(f"  reply {k}:\n    {a[k]!r}\n    {b[k]!r}")
        for label, values in (("wall", seconds), ("CPU", cpu)):
            ratio = statistics.median(values[names[0]]) / statistics.median(values[names[1]])
            print(f"{label}: median {names[0]} / median {names[1]}: {ratio:.2f}")
    print(f"first reply: {outputs[names[-1]][0][0]!r}")


if __name__ == "__main__":
    main()
