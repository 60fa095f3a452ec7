"""``tsrate suite reasoning run|report``: options and entry points (registered in
tsrate.suites)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tsrate.suites.reasoning.encoding import ENCODINGS, TEXT_ENCODINGS


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
    parser.add_argument(
        "--no-references",
        action="store_true",
        help="skip the offline references (random, naive, median, ARIMA, context rule)",
    )
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
        default="llmtime_gpt",
        help="how choice prompts show the series (default llmtime_gpt, as in the paper; "
        "plain = the values as they are; plot = line-plot image)",
    )
    parser.add_argument(
        "--forecast-encoding",
        choices=TEXT_ENCODINGS,
        default="llmtime_gpt",
        help="how forecasting prompts show the history (default llmtime_gpt)",
    )
    parser.add_argument(
        "--scenarios", type=int, default=24, help="procedural scenarios (default 24)"
    )
    parser.add_argument(
        "--forecasts", type=int, default=12, help="procedural forecasting items (12)"
    )
    parser.add_argument("--length", type=int, default=100, help="procedural series length (100)")
    parser.add_argument("--seed", type=int, default=2024, help="procedural dataset seed (2024)")
    parser.add_argument("--no-build", action="store_true", help="answer and store only")
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=0.0,
        help="seconds to wait while another process writes the warehouse (default: fail at once)",
    )


def run_from_args(args: argparse.Namespace) -> int:
    from flows.reasoning import reasoning_flow

    suite_run_id = reasoning_flow(
        import_path=args.import_path,
        llms=args.llm,
        references=not args.no_references,
        fracast=args.fracast,
        choice_encoding=args.choice_encoding,
        forecast_encoding=args.forecast_encoding,
        generator={
            "seed": args.seed,
            "scenarios": args.scenarios,
            "forecasts": args.forecasts,
            "length": args.length,
        },
        build=not args.no_build,
        lock_timeout=args.lock_timeout,
    )
    print(
        f"suite run {suite_run_id} done. Try: tsrate query --live "
        '"select * from marts.rsn_task_accuracy order by task, accuracy desc"'
    )
    return 0


def report_from_args(args: argparse.Namespace) -> int:
    from tsrate.config import warehouse_path
    from tsrate.suites.reasoning.report import default_report_path, write_report

    warehouse = Path(args.warehouse) if args.warehouse else warehouse_path()
    output = Path(args.output) if args.output else default_report_path(warehouse)
    print(f"reasoning report written to {write_report(warehouse, output)}")
    return 0


def register_actions(subparsers) -> None:
    """Add ``run`` and ``report`` to ``tsrate suite reasoning``."""
    run = subparsers.add_parser(
        "run", help="generate or import items, ask every system, build the marts (resumable)"
    )
    add_run_arguments(run)
    run.set_defaults(func=run_from_args)
    report = subparsers.add_parser("report", help="write the HTML report section")
    report.add_argument("--warehouse", help="DuckDB file to read (default: the live warehouse)")
    report.add_argument("--output", help="HTML file (default: warehouse/reports/reasoning.html)")
    report.set_defaults(func=report_from_args)
