"""The options of the commands that write the warehouse: ``run``, ``ingest``, ``import``,
``import-predictions``, ``withdraw``, ``export-inputs``, ``train``, ``show-input``, ``build`` (their
bodies: :mod:`tsrate.commands.pipeline`)."""

from __future__ import annotations

from tsrate.commands.flags import (
    add_companies_flag,
    add_lock_timeout,
    add_metadata_flag,
    add_study_flags,
    add_verbose_flag,
    at_least,
)
from tsrate.commands.pipeline import (
    check_build,
    check_build_before_lock,
    check_withdraw,
    cmd_build,
    cmd_export_inputs,
    cmd_import,
    cmd_ingest,
    cmd_run,
    cmd_show_input,
    cmd_train,
    cmd_withdraw,
)


def add_pipeline_commands(sub) -> None:  # noqa: ANN001 - argparse's subparsers action
    """Add the writing commands to ``tsrate``'s sub-commands, in the order ``--help`` lists."""
    run = sub.add_parser(
        "run", help="run the study end to end: ingest if needed, forecast, build, publish, report"
    )
    add_study_flags(run)
    run.add_argument(
        "--preset",
        choices=["paper"],
        help="a named study under the flags above: paper = the robustness paper's tickers, "
        "period, window, perturbations and systems (tsrate.robustness.presets)",
    )
    run.add_argument(
        "--source",
        default="auto",
        choices=["auto", "skfolio", "yahoo", "none"],
        help="price source; auto ingests the bundled sample when study tickers are missing",
    )
    run.add_argument("--file", help="ingest prices from this CSV/Parquet file first")
    add_companies_flag(run)
    run.add_argument("--force", action="store_true", help="recompute finished forecast partitions")
    run.add_argument(
        "--workers",
        type=at_least(1),
        help="forecast processes, 1 or more (default: CPU count)",
    )
    add_lock_timeout(run)
    run.add_argument("--select", help="dbt selection to build (default: every model)")
    run.add_argument(
        "--no-rate",
        action="store_true",
        help="forecast only, rate nothing (a nightly refresh: the next run reuses them)",
    )
    run.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="forecast on a Dask scheduler (tcp://host:8786; local[:N] for a local cluster); "
        "default: env TSRATE_DASK_ADDRESS or the dask_address var, else a local process pool",
    )
    add_verbose_flag(run)
    run.set_defaults(func=cmd_run)

    ingest = sub.add_parser("ingest", help="load prices into raw.prices")
    ingest.add_argument(
        "path", nargs="?", metavar="FILE", help="CSV or Parquet file with columns ticker,date,close"
    )
    ingest.add_argument("--source", default="skfolio", choices=["skfolio", "yahoo"])
    ingest.add_argument("--tickers", help="comma-separated tickers (default: all of the source)")
    ingest.add_argument("--start", help="first date (Yahoo)")
    ingest.add_argument("--end", help="last date, inclusive (Yahoo)")
    ingest.add_argument(
        "--replace",
        action="store_true",
        help="make the file the whole stored history of its tickers: changed closes are "
        "replaced and stored dates it lacks removed (default: add new dates only, refuse changes)",
    )
    add_companies_flag(ingest)
    add_lock_timeout(ingest)
    ingest.set_defaults(func=cmd_ingest, writes_warehouse=True)
    ingest.set_defaults(input_files=("path",))  # checked before the lock is waited for

    imported = sub.add_parser(
        "import", help="rate a model black-box from a file of its predictions (CSV/Parquet)"
    )
    imported.add_argument(
        "path",
        metavar="FILE",
        help="columns ticker,window_end_date,perturbation_id,horizon_step,forecast "
        "[, q0.1 ... q0.9: optional quantiles, all nine or none]",
    )
    imported.add_argument(
        "--system",
        required=True,
        help="its system_id (a row of seeds/systems.csv, or registered with --metadata)",
    )
    add_metadata_flag(imported)
    imported.add_argument(
        "--no-baselines",
        action="store_true",
        help="do not forecast the study's own systems into the same run",
    )
    imported.add_argument("--no-build", action="store_true", help="store only; build later")
    add_study_flags(imported)
    imported.add_argument(
        "--switch-study",
        action="store_true",
        help="rate and publish the flags' study though this warehouse holds another",
    )
    add_lock_timeout(imported)
    imported.set_defaults(func=cmd_import, writes_warehouse=True)
    imported.set_defaults(input_files=("path",))  # checked before the lock is waited for

    predictions = sub.add_parser(
        "import-predictions",
        help="import predictions made on `tsrate export-inputs` files, checked against its manifest",
    )
    predictions.add_argument(
        "path",
        metavar="FILE",
        help="columns ticker,window_end_date,perturbation_id,horizon_step,forecast "
        "[, q0.1 ... q0.9: optional quantiles, all nine or none]",
    )
    predictions.add_argument(
        "--system",
        required=True,
        help="its system_id (a row of seeds/systems.csv, or registered with --metadata)",
    )
    add_metadata_flag(predictions)
    predictions.add_argument(
        "--manifest", required=True, help="the export folder (or its manifest.json)"
    )
    predictions.add_argument(
        "--no-baselines",
        action="store_true",
        help="do not forecast the study's own systems into the same run",
    )
    predictions.add_argument("--no-build", action="store_true", help="store only; build later")
    predictions.add_argument(
        "--switch-study",
        action="store_true",
        help="rate and publish the manifest's study though this warehouse holds another",
    )
    add_lock_timeout(predictions)
    predictions.set_defaults(func=cmd_import, writes_warehouse=True)
    predictions.set_defaults(input_files=("path",))  # checked before the lock is waited for

    withdraw = sub.add_parser(
        "withdraw",
        help="take a system out of a study's marts (a mistaken import); nothing is deleted",
    )
    withdraw.add_argument("system", metavar="SYSTEM", help="its system_id (see `tsrate studies`)")
    withdraw.add_argument(
        "--study",
        help="the study (name or id, see `tsrate studies`; default: the study of the newest run)",
    )
    withdraw.add_argument("--reason", help="why, kept with the withdrawal (raw.study_withdrawals)")
    withdraw.add_argument("--no-build", action="store_true", help="record only; build later")
    add_lock_timeout(withdraw)
    withdraw.set_defaults(func=cmd_withdraw, writes_warehouse=True)
    withdraw.set_defaults(without_warehouse=check_withdraw)  # refused before the lock

    export_inputs = sub.add_parser(
        "export-inputs",
        help="write the study's exact model inputs (Parquet, optional PNGs) and a manifest",
    )
    export_inputs.add_argument("folder", metavar="DIR", help="a new (or empty) folder to write")
    export_inputs.add_argument(
        "--images",
        type=at_least(0, "0 writes none"),  # refused by the parser: before any output
        default=0,
        metavar="N",
        help="also write line-plot PNGs of the first N windows of each ticker x perturbation",
    )
    export_inputs.add_argument(
        "--study",
        help="a stored study (name or id, see `tsrate studies`); default without study "
        "flags: the study of the newest run",
    )
    add_study_flags(export_inputs)
    export_inputs.set_defaults(func=cmd_export_inputs)

    train = sub.add_parser(
        "train", help="train (or reuse) the ViT-num-spec checkpoints and register them"
    )
    train.add_argument(
        "--system",
        default="all",
        choices=["vit_num_spec_precovid", "vit_num_spec_covid", "all"],
        help="variant to train (default: all)",
    )
    train.add_argument("--force", action="store_true", help="retrain even if a checkpoint exists")
    add_lock_timeout(train)
    add_study_flags(train)
    train.set_defaults(func=cmd_train)  # the flow takes the writer lock to register

    show_input = sub.add_parser(
        "show-input",
        help="write the exact image a ViT-num-spec system received for one window (PNG)",
    )
    show_input.add_argument("--system", required=True, help="e.g. vit_num_spec_covid")
    show_input.add_argument("--ticker", required=True, help="a study ticker, e.g. MRK")
    show_input.add_argument("--date", required=True, help="the window's end date (YYYY-MM-DD)")
    show_input.add_argument("--perturbation", required=True, help="P0, P1, P2, P4, P5 or P6")
    show_input.add_argument(
        "--output", help="PNG to write (default: SYSTEM-TICKER-DATE-PERTURBATION.png here)"
    )
    add_study_flags(show_input)
    show_input.set_defaults(func=cmd_show_input)

    build = sub.add_parser(
        "build",
        help="rebuild the dbt marts and publish them (the snapshot, Parquet and report that "
        "readers and BI tools see), as tsrate run does",
    )
    build.add_argument(
        "--run-id", help="describe this run's own systems only (the single-run view)"
    )
    build.add_argument(
        "--no-publish",
        action="store_true",
        help="rebuild the live marts only (tsrate query --live); the published snapshot, "
        "Parquet and report stay as they are",
    )
    build.add_argument(
        "--study",
        help="study to describe (name or id, see `tsrate studies`; default: the study of "
        "the newest run): every system with complete forecasts for it",
    )
    add_verbose_flag(build)
    add_lock_timeout(build)
    build.set_defaults(func=cmd_build, writes_warehouse=True)
    build.set_defaults(without_warehouse=check_build)  # refused before the lock
    build.set_defaults(before_lock=check_build_before_lock)  # all withdrawn: read-only
