"""``tsrate suite interpretability run|report``: options and entry points (registered in
tsrate.suites)."""

from __future__ import annotations

import argparse

from tsrate import TsrateError
from tsrate.commands.flags import at_least
from tsrate.suites import get_suite
from tsrate.suites.commandline import (
    add_build_action,
    add_control_arguments,
    add_run_action,
    add_size_arguments,
    str_list,
)
from tsrate.suites.publishing import run_message


def _numbers(what: str):  # noqa: ANN202 - an argparse type
    """An argparse type: a list of whole numbers, ``"2,4"`` or ``"2 4"`` (``what``: the
    numbers' name in the usage error)."""

    def int_list(text: str) -> list[int]:
        try:
            return [int(part) for part in text.replace(",", " ").split()]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"not a list of {what} numbers: {text!r}") from exc

    return int_list


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    add_size_arguments(
        parser,
        small="the small CPU configuration (default): short series, tiny models, few epochs",
        paper="the paper's configuration (20,000 steps, 2,000 test steps; cuda when present)",
    )
    parser.add_argument(
        "--datasets", type=_numbers("dataset"), help="dataset numbers, e.g. 2,4 (default 1-10)"
    )
    parser.add_argument(
        "--models",
        type=str_list,
        help="model ids: imv_full, imv_tensor, tcdf, darnn, seq2graph (default: all)",
    )
    parser.add_argument(
        "--seeds", type=_numbers("seed"), help="model seeds (default: the configuration's)"
    )
    parser.add_argument(
        "--no-sensitivity", action="store_true", help="skip the sensitivity grid (f, sigma, N)"
    )
    parser.add_argument(
        "--workers",
        type=at_least(1),
        help="training processes, 1 or more (default: CPU cores up to 4; 1 on a GPU)",
    )
    add_control_arguments(parser, store_only="train and store only")


def run_from_args(args: argparse.Namespace) -> int:
    from tsrate.platform.entrypoints import INTERPRETABILITY_FLOW, load_entrypoint
    from tsrate.platform.orchestration import run_flow
    from tsrate.suites.interpretability.models import MODEL_IDS
    from tsrate.suites.interpretability.suite import require_known

    if args.seeds is not None and not args.seeds:
        raise TsrateError(
            "--seeds names no seed: give some, e.g. --seeds 1,2, or leave it out for the "
            "configuration's"
        )
    # an empty list would mean all of them to the flow: refused, as --seeds is
    if args.datasets is not None and not args.datasets:
        raise TsrateError(
            "--datasets names no dataset: give some of 1-10, e.g. --datasets 2,4, or leave "
            "it out for all"
        )
    if args.models is not None and not args.models:
        raise TsrateError(
            f"--models names no model: give some of {', '.join(MODEL_IDS)}, or leave it out for all"
        )
    require_known(args.datasets, args.models)  # before Prefect and the lock
    suite_run_id = run_flow(
        load_entrypoint(INTERPRETABILITY_FLOW),
        config_name=args.config,
        datasets=args.datasets,
        models=args.models,
        seeds=args.seeds,
        sensitivity=not args.no_sensitivity,
        build=not args.no_build,
        lock_timeout=args.lock_timeout,
        workers=args.workers,
    )
    print(
        run_message(
            "interpretability",
            suite_run_id,
            not args.no_build,
            "select * from marts.interp_correctness order by variant_id, model_id, measure",
        )
    )
    return 0


def register_actions(subparsers) -> None:
    """Add ``run`` to ``tsrate suite interpretability`` (the kit adds ``report``: tsrate.suites.publishing)."""
    add_run_action(
        subparsers,
        "train and rate (resumable; --small or --paper)",
        add_run_arguments,
        run_from_args,
    )
    add_build_action(subparsers, get_suite("interpretability"))
