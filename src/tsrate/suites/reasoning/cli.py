"""``tsrate suite reasoning run|report``: options and entry points (registered in
tsrate.suites)."""

from __future__ import annotations

import argparse

from tsrate import TsrateError
from tsrate.commands.flags import at_least
from tsrate.suites import get_suite
from tsrate.suites.commandline import (
    add_build_action,
    add_control_arguments,
    add_no_references,
    add_run_action,
)
from tsrate.suites.publishing import run_message
from tsrate.suites.reasoning.dataset import IMPORT_FILE
from tsrate.suites.reasoning.encoding import (
    DEFAULT_CHOICE_ENCODING,
    DEFAULT_FORECAST_ENCODING,
    ENCODINGS,
    TEXT_ENCODINGS,
)


def _fracast(text: str) -> bool | int:
    if text in ("all", "yes", "true"):
        return True
    try:
        value = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"--fracast takes 'all' or a number of items, got {text!r}"
        ) from exc
    if value < 0:
        raise argparse.ArgumentTypeError("--fracast needs a number >= 0")
    return value


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a temperature > 0, got {text!r}") from exc
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a temperature > 0, got {text} (one greedy reply: leave out "
            "--forecast-samples)"
        )
    return value


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--import",
        dest="import_path",
        metavar="PATH",
        help="a JSONL file in the public dataset's schema (default: the procedural dataset)",
    )
    parser.add_argument(
        "--llm",
        action="append",
        default=[],
        metavar="SPEC",
        help="a language model to rate: endpoint:ID (OpenAI-compatible server, "
        "TSRATE_<ID>_BASE_URL/_MODEL) or hf_local:ID (TSRATE_<ID>_MODEL_PATH); repeatable",
    )
    add_no_references(parser, "the offline references (random, naive, median, ARIMA, context rule)")
    parser.add_argument(
        "--fracast",
        type=_fracast,
        default=True,
        metavar="N|all",
        help="fracast's forecasts: at most N forecasting items, or all (default all: about "
        "6 s for the 12 default items on a CPU; 0 skips it)",
    )
    parser.add_argument(
        "--choice-encoding",
        choices=ENCODINGS,
        default=DEFAULT_CHOICE_ENCODING,
        metavar="ENCODING",
        help=f"how choice prompts show the series: {', '.join(ENCODINGS)} (default "
        f"{DEFAULT_CHOICE_ENCODING}: the reference's GPT QA settings, ratios kept; "
        "llmtime_gpt = offset scaling, digits spaced; plain = the values as they are; "
        "plot = line-plot image)",
    )
    parser.add_argument(
        "--forecast-encoding",
        choices=TEXT_ENCODINGS,
        default=DEFAULT_FORECAST_ENCODING,
        metavar="ENCODING",
        help=f"how forecasting prompts show the history: {', '.join(TEXT_ENCODINGS)} "
        f"(default {DEFAULT_FORECAST_ENCODING}: the paper's GPT-4 forecasting settings, "
        "basic scaling, ratios kept)",
    )
    parser.add_argument(
        "--forecast-samples",
        type=at_least(1),
        default=1,
        metavar="N",
        help="sampled replies per forecast prompt of a language model; the forecast is "
        "their median, CRPS is scored from them (default 1: one greedy reply; 20 is the "
        "paper's LLMTime setting)",
    )
    parser.add_argument(
        "--forecast-temperature",
        type=_temperature,
        default=None,
        metavar="T",
        help="sampling temperature with --forecast-samples > 1 (default: the LLMTime "
        "reference's for the encoding: 0.7 for llmtime_gpt and plain, 1.0 for llmtime_llama "
        "and llmtime_gpt4)",
    )
    parser.add_argument(
        "--scenarios",
        type=at_least(4, "an etiological item has 4 captions"),
        default=24,
        help="procedural scenarios, 4 or more (default 24)",
    )
    parser.add_argument(
        "--forecasts",
        type=at_least(0),
        default=12,
        help="procedural forecasting items, default 12 (0 skips the forecasting task)",
    )
    parser.add_argument(
        "--length",
        type=at_least(30),
        default=100,
        help="procedural series length, 30 or more (100)",
    )
    parser.add_argument("--seed", type=int, default=2024, help="procedural dataset seed (2024)")
    parser.add_argument(
        "--distractors",
        choices=("random", "contrastive"),
        default="random",
        help="procedural etiological distractors: random (default, the paper's: captions "
        "of other scenarios drawn at random, an equivalent one redrawn) or contrastive "
        "(captions that differ visibly and fit the series worse: easier)",
    )
    parser.add_argument(
        "--tasks",
        type=lambda text: [t.strip() for t in text.split(",") if t.strip()],
        metavar="T1,T2",
        help="only these tasks' items (etiological, qa_single, qa_two, qa_perturbed, "
        "forecast; default: all), e.g. for a slow local model",
    )
    add_control_arguments(parser, store_only="answer and store only")
    parser.set_defaults(input_files=("import_path",))  # a missing one: named before any work
    parser.set_defaults(input_file_about={"import_path": IMPORT_FILE})  # and what it must be
    parser.set_defaults(regular_input_files=("import_path",))  # the flow reads it: a file


def run_from_args(args: argparse.Namespace) -> int:
    from tsrate.platform.entrypoints import REASONING_FLOW, load_entrypoint
    from tsrate.platform.orchestration import run_flow
    from tsrate.suites.reasoning.suite import require_answerers

    if not args.llm and (args.forecast_samples != 1 or args.forecast_temperature is not None):
        raise TsrateError(
            "--forecast-samples and --forecast-temperature sample a language model's "
            "forecasts: add --llm (the offline references give one reply each)"
        )
    require_answerers(args.llm, not args.no_references)  # before Prefect and the lock
    suite_run_id = run_flow(
        load_entrypoint(REASONING_FLOW),
        import_path=args.import_path,
        llms=args.llm,
        references=not args.no_references,
        fracast=args.fracast,
        choice_encoding=args.choice_encoding,
        forecast_encoding=args.forecast_encoding,
        forecast_samples=args.forecast_samples,
        forecast_temperature=args.forecast_temperature,
        generator={
            "seed": args.seed,
            "scenarios": args.scenarios,
            "forecasts": args.forecasts,
            "length": args.length,
            "distractors": args.distractors,
        },
        build=not args.no_build,
        lock_timeout=args.lock_timeout,
        tasks=args.tasks,
    )
    print(
        run_message(
            "reasoning",
            suite_run_id,
            not args.no_build,
            "select * from marts.rsn_task_accuracy order by task, accuracy desc",
        )
    )
    return 0


def register_actions(subparsers) -> None:
    """Add ``run`` to ``tsrate suite reasoning`` (the kit adds ``report``: tsrate.suites.publishing)."""
    add_run_action(
        subparsers,
        "generate or import items, ask every system, build the marts (resumable)",
        add_run_arguments,
        run_from_args,
    )
    add_build_action(subparsers, get_suite("reasoning"))
