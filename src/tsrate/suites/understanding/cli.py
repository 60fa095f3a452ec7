"""``tsrate suite understanding run|prompts|report`` (registered in tsrate.suites)."""

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
    add_size_arguments,
    str_list,
)
from tsrate.suites.publishing import run_message

#: ``--sample`` without N: questions (each asked zero-shot and, with ``--prompting both``,
#: with chain of thought) that gemma3_270m answers in about 10 minutes on 2 cores
DEFAULT_SAMPLE = 16

#: the query the run's closing line suggests: each prompting style's table in rank order
RATINGS_QUERY = "select * from marts.und_ratings order by prompting, metric, feature, rank"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    add_size_arguments(
        parser,
        small="small (default): 5 test series per feature set in 9 formats; position sets csv",
        paper="the paper's sizes: 5000/2000/200 series per dataset, 400 per position set",
    )
    parser.add_argument(
        "--llm",
        action="append",
        default=[],
        metavar="BACKEND:ID",
        help="a language model to ask (endpoint:ID or hf_local:ID; repeatable); "
        "configured as in `tsrate systems` (TSRATE_<ID>_BASE_URL / _MODEL / _MODEL_PATH)",
    )
    add_no_references(
        parser, "the statistical analyst and random answerer: ask only the --llm models"
    )
    parser.add_argument("--datasets", type=str_list, help="datasets to use (default: all)")
    parser.add_argument("--formats", type=str_list, help="formats for the feature datasets")
    parser.add_argument("--tasks", type=str_list, help="tasks to ask (default: all)")
    parser.add_argument(
        "--test-size", type=at_least(1), help="test series per feature dataset, 1 or more"
    )
    parser.add_argument(
        "--sample",
        type=at_least(1),
        nargs="?",
        const=DEFAULT_SAMPLE,
        metavar="N",
        help=f"ask a stratified sample of N questions (default N: {DEFAULT_SAMPLE}, about 10 "
        "minutes for gemma3_270m with --prompting both on 2 cores): every feature and task "
        "present, the same questions for every system and prompting style (default: every "
        "question)",
    )
    parser.add_argument(
        "--prompting",
        choices=("zero_shot", "cot", "both"),
        default="zero_shot",
        help="prompting style: zero_shot (default: the question alone), cot (chain of thought: "
        "reason step by step, end with a line 'Answer: ...'), or both",
    )
    parser.add_argument(
        "--cot-parser",
        metavar="BACKEND:ID",
        help="a language model (endpoint:ID or hf_local:ID) asked for the final answer of a "
        "chain-of-thought reply whose last 'Answer:' line does not parse (default: none, such "
        "a reply is unparseable); raw.und_responses.parsed_by says regex or llm",
    )
    add_control_arguments(parser, store_only="answer and store only")


def overrides_from_args(args: argparse.Namespace) -> dict:
    out: dict = {}
    if args.datasets:
        out["datasets"] = args.datasets
    if args.formats:
        out["formats"] = args.formats
    if args.tasks:
        out["tasks"] = args.tasks
    if args.test_size is not None:
        out["test"] = args.test_size
    if getattr(args, "sample", None):
        out["sample"] = args.sample
    prompting = getattr(args, "prompting", "zero_shot")
    if prompting != "zero_shot":
        out["promptings"] = ["zero_shot", "cot"] if prompting == "both" else [prompting]
    return out


def run_from_args(args: argparse.Namespace) -> int:
    from tsrate.platform.entrypoints import UNDERSTANDING_FLOW, load_entrypoint
    from tsrate.platform.orchestration import run_flow
    from tsrate.suites.understanding.suite import require_a_system

    if args.cot_parser and args.prompting == "zero_shot":
        raise TsrateError(
            "--cot-parser reads chain-of-thought replies: add --prompting cot or --prompting both"
        )
    require_a_system(args.llm, not args.no_references)  # before Prefect and the lock
    suite_run_id = run_flow(
        load_entrypoint(UNDERSTANDING_FLOW),
        config_name=args.config,
        llm=list(args.llm),
        references=not args.no_references,
        overrides=overrides_from_args(args),
        build=not args.no_build,
        lock_timeout=args.lock_timeout,
        cot_parser=args.cot_parser,
    )
    print(
        run_message(
            "understanding",
            suite_run_id,
            not args.no_build,
            RATINGS_QUERY,
        )
    )
    return 0


def prompts_text(task: str | None = None) -> str:
    """Every prompt template (id, version, text) — or one task's — as the CLI shows them,
    followed by the chain-of-thought instruction that ``--prompting cot`` appends."""
    from tsrate.suites.understanding.cot_parser import PARSER_TEMPLATE
    from tsrate.suites.understanding.tasks import COT_TEMPLATE, TEMPLATE_OF, load_template

    chosen = sorted(set(TEMPLATE_OF.values()))
    if task:
        if task not in TEMPLATE_OF:
            raise TsrateError(f"unknown task {task!r}: choose from {', '.join(TEMPLATE_OF)}")
        chosen = [TEMPLATE_OF[task]]
    parts = []
    for template_id in chosen:
        template = load_template(template_id)
        tasks = [t for t, tid in TEMPLATE_OF.items() if tid == template_id]
        parts.append(
            f"=== {template_id} (version {template.version}; tasks: {', '.join(tasks)}) ===\n"
            f"{template.text}"
        )
    cot = load_template(COT_TEMPLATE)
    parts.append(
        f"=== {COT_TEMPLATE} (version {cot.version}; appended to every template above "
        f"with --prompting cot or both) ===\n{cot.text}"
    )
    extractor = load_template(PARSER_TEMPLATE)
    parts.append(
        f"=== {PARSER_TEMPLATE} (version {extractor.version}; asked of the --cot-parser model "
        f"when a chain-of-thought reply has no parseable 'Answer:' line) ===\n{extractor.text}"
    )
    return "\n".join(parts)


def prompts_from_args(args: argparse.Namespace) -> int:
    print(prompts_text(args.task))
    return 0


def register_actions(subparsers) -> None:
    """Add ``run`` and ``prompts`` to ``tsrate suite understanding`` (the kit adds ``report``: tsrate.suites.publishing)."""
    add_run_action(
        subparsers,
        "generate, prompt, score and rate (resumable; --small or --paper)",
        add_run_arguments,
        run_from_args,
    )
    add_build_action(subparsers, get_suite("understanding"))
    prompts = subparsers.add_parser("prompts", help="show the versioned prompt templates")
    prompts.add_argument("--task", help="only the template of this task")
    prompts.set_defaults(func=prompts_from_args)
