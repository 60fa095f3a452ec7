"""Check a whole study before anything runs: one line per problem, in about a second.

``tsrate run`` calls :func:`require_valid_study` before it imports Prefect, dbt or any model,
so a typo (``--systems arma``) costs a second, not a server start and minutes of ARIMA. The
check collects every problem it finds instead of stopping at the first:

- dates: ``study_start`` / ``study_end`` are dates and start < end;
- the window shape: ``context_length`` >= 3, ``horizon`` and ``stride`` >= 1,
  ``perturbation_phase`` in [0, context_length);
- perturbations: each is a row of ``seeds/perturbations.csv``; ``P0`` (the control) is there;
- systems: a row of ``seeds/systems.csv`` with an ``implementation`` or a ``tsrate
  register-llm`` model (an import's system is named: ``tsrate run`` cannot make its
  forecasts); availability (weights, endpoints) is left to the forecast step;
- tickers: no duplicates; each has a ``seeds/companies.csv`` row, a non-empty
  ``biased_offset`` when ``biased`` is a system, and prices: stored in ``raw.prices`` or in the
  source the run will ingest (``auto``: stored or the bundled skfolio sample; ``skfolio``: the
  sample; ``file``: the file added to the stored prices, each day once; ``none``:
  stored only; ``yahoo`` is not checked offline);
- trading days: each ticker has at least ``context_length + horizon`` trading days inside
  [start, end] (one window), counted in the prices the run would use.
- confounder distributions: var ``confounder_distributions`` is ``derived`` or ``seed``; a
  ``seed`` override passes :func:`tsrate.methods.causal.distributions.distribution_problems`
  (columns, unique ids, known confounders, positive weights, both kinds of distribution).

A near miss (``arma``, ``APPL``, ``P7``) gets a did-you-mean from :mod:`difflib`. Only yaml
and duckdb are imported (pandas only for a price file or a ``seed`` distribution; no Prefect,
dbt or torch); the seeds and skfolio's bundled CSV are read with the csv module
(:mod:`tsrate.robustness.study_inputs` reads them, the warehouse and the price file).
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from tsrate import TsrateError
from tsrate.config import Study, project_dir, project_vars, warehouse_path
from tsrate.robustness.empty_arms import empty_arm_warning
from tsrate.robustness.study_inputs import available_days, company_rows, read_seed, stored_state
from tsrate.systems.registered import SYSTEM_ID

#: the CLI flag that sets each study var (for the hints)
FLAGS = {
    "study_tickers": "--tickers",
    "study_start": "--start",
    "study_end": "--end",
    "systems": "--systems",
    "perturbations": "--perturbations",
    "context_length": "--context-length",
    "horizon": "--horizon",
    "stride": "--stride",
    "perturbation_phase": "--phase",
    "random_seed": "--seed",
}
SOURCES = ("auto", "skfolio", "file", "yahoo", "none")


class StudyCheckError(TsrateError):
    """The study has problems; ``problems`` holds one line each (the problem and its hint):
    one problem is one line, as every error is; several, a header line and one line each."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        each = "\n  - " if len(problems) > 1 else " "
        super().__init__(
            f"the study has {count}; nothing was run:" + "".join(each + p for p in problems)
        )


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest candidate (difflib ratio >= 0.6), else ``""``.

    Case is ignored when comparing; the suggestion keeps the candidate's spelling.
    """
    by_key = {str(c).lower(): str(c) for c in candidates}
    close = difflib.get_close_matches(str(word).lower(), list(by_key), n=1, cutoff=0.6)
    return f" (did you mean {by_key[close[0]]!r}?)" if close else ""


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in value.replace(",", " ").split() if part]
    return [str(part).strip() for part in value]


def _flag(name: str) -> str:
    return f" ({FLAGS[name]})" if name in FLAGS else ""


def _date(values: Mapping[str, Any], name: str, problems: list[str]) -> dt.date | None:
    value = values.get(name)
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        problems.append(f"{name}{_flag(name)}: {value!r} is not a date like 2022-12-28")
        return None


def _int(values: Mapping[str, Any], name: str, default: int, problems: list[str]) -> int | None:
    value = values.get(name, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        problems.append(f"{name}{_flag(name)}: {value!r} is not a whole number")
        return None


# ----------------------------------------------------------------------------- the check


def system_problems(
    systems: Iterable[str], seed: dict[str, dict], registered: set[str], readable: list | None
) -> list[str]:
    """A line per system ``tsrate run`` cannot forecast (``registered``: imported ids;
    ``readable``: registered language models, None while another process writes the
    warehouse: a well-formed id is then left to the run's check under its lock)."""
    llms = [r.system_id for r in readable or []]
    problems: list[str] = []
    for system_id in dict.fromkeys(systems):
        if system_id in seed or system_id in llms:
            if system_id not in seed:
                continue
            if not (seed[system_id].get("implementation") or "").strip():
                problems.append(
                    f"system {system_id!r} cannot run in this version: "
                    f"{seed[system_id].get('description', '')} "
                    "(see `tsrate systems`)"
                )
        elif system_id in registered:
            problems.append(
                f"system {system_id!r} was registered by `tsrate import`: its forecasts come "
                "from a predictions file, so `tsrate run` cannot make them; import them with "
                "`tsrate import FILE --system " + system_id + "`"
            )
        elif readable is None and SYSTEM_ID.match(system_id):
            continue  # maybe registered: the run checks it again once it holds the warehouse
        else:
            problems.append(
                f"unknown system {system_id!r}"
                f"{did_you_mean(system_id, [*seed, *registered, *llms])}; "
                "see `tsrate systems` (--systems, seeds/systems.csv)"
            )
    return problems


def check_study(
    overrides: Mapping[str, Any] | None = None,
    source: str = "auto",
    path: str | Path | None = None,
    warehouse: Path | None = None,
    project: Path | None = None,
    warnings: list[str] | None = None,
    companies_path: str | Path | None = None,
) -> list[str]:
    """Every problem of the study (``dbt_project.yml`` vars, then ``overrides``), one line each.

    Company metadata: the companies seed, then rows stored in the warehouse
    (``raw.company_metadata``), then the price file's ``company_name`` / ``industry`` /
    ``biased_offset`` columns (``source`` file), then ``companies_path`` (``--companies``).

    ``source`` / ``path``: where ``tsrate run`` will take missing prices from (see the module
    docstring); ``warehouse``: the live file (default: :func:`tsrate.config.warehouse_path`).
    An empty list means the study can run. ``warnings`` (when given) receives lines that do
    not stop the run (:func:`~tsrate.robustness.empty_arms.empty_arm_warning`).
    """
    project = Path(project) if project else project_dir()
    values = project_vars()
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    problems: list[str] = []

    start = _date(values, "study_start", problems)
    end = _date(values, "study_end", problems)
    if start and end and start >= end:
        problems.append(f"study start {start} is not before its end {end} (--start, --end)")
        start = end = None
    context = _int(values, "context_length", 80, problems)
    horizon = _int(values, "horizon", 20, problems)
    stride = _int(values, "stride", 1, problems)
    phase = _int(values, "perturbation_phase", 0, problems)
    _int(values, "random_seed", 42, problems)
    for name, value, least in (
        ("context_length", context, 3),
        ("horizon", horizon, 1),
        ("stride", stride, 1),
    ):
        if value is not None and value < least:
            problems.append(f"{name}{_flag(name)} must be at least {least}, got {value}")
    if context is not None and phase is not None and context >= 3 and not 0 <= phase < context:
        problems.append(
            f"perturbation_phase (--phase) must lie in [0, {context}) (context_length), got {phase}"
        )

    # perturbations
    perturbations = _as_list(values.get("perturbations", ["P0", "P1", "P2", "P3"]))
    known_perturbations = [
        row["perturbation_id"] for row in read_seed(project / "seeds" / "perturbations.csv")
    ]
    _duplicates("perturbations", "--perturbations", perturbations, problems)
    for perturbation in dict.fromkeys(perturbations):
        if perturbation not in known_perturbations:
            problems.append(
                f"unknown perturbation {perturbation!r}{did_you_mean(perturbation, known_perturbations)}; "
                f"known: {', '.join(known_perturbations)} (--perturbations, seeds/perturbations.csv)"
            )
    if "P0" not in perturbations:
        problems.append("the perturbations must include the control P0 (--perturbations)")

    # systems
    systems = _as_list(
        values.get("systems", ["naive", "seasonal_naive", "arima", "random", "biased"])
    )
    seed = {row["system_id"]: row for row in read_seed(project / "seeds" / "systems.csv")}
    _duplicates("systems", "--systems", systems, problems)
    if not systems:
        problems.append("the study names no systems (--systems)")

    # prices: stored, and the source the run ingests from
    warehouse = Path(warehouse) if warehouse else warehouse_path()
    stored, registered, llms = stored_state(warehouse, start, end)
    problems += system_problems(systems, seed, registered, llms)
    tickers = [t.upper() for t in _as_list(values.get("study_tickers"))]
    if not tickers:
        problems.append("the study names no tickers (--tickers)")
    _duplicates("tickers", "--tickers", tickers, problems)
    seed_companies = {
        row["ticker"].strip().upper(): row for row in read_seed(project / "seeds" / "companies.csv")
    }
    companies = company_rows(
        seed_companies, warehouse, path if source == "file" else None, companies_path, problems
    )

    if source not in SOURCES:
        problems.append(f"unknown price source {source!r}; use one of {', '.join(SOURCES)}")
    if source == "file" and not path:
        problems.append("source 'file' needs a price file (--file PATH)")
    available, label = available_days(source, path, stored, start, end, problems, warehouse)

    needed = None if context is None or horizon is None else context + horizon
    for ticker in dict.fromkeys(tickers):
        if not (companies.get(ticker, {}).get("industry") or "").strip():
            known = [c for c, row in companies.items() if c != ticker and row.get("industry")]
            mean = did_you_mean(ticker, known)  # a typo of a known company?
            where = f"the price file {path}" if source == "file" and path else "the price file"
            problems.append(
                f"ticker {ticker!r} has no row in seeds/companies.csv{mean} and no industry: "
                f"add company_name,industry columns to {where} (--file), or pass --companies "
                "FILE with columns ticker,company_name,industry (seeds/companies.csv covers "
                "only the bundled sample)"
            )
        elif "biased" in systems and not (companies[ticker].get("biased_offset") or "").strip():
            problems.append(
                f"ticker {ticker!r} has no biased_offset (seeds/companies.csv, the --companies "
                "file or the price file's biased_offset column), which the 'biased' system adds "
                "to the actual future; fill it in or drop biased (--systems)"
            )
        if available is None:  # prices cannot be checked (yahoo, or the warehouse is locked)
            continue
        if ticker not in available:
            problems.append(
                f"no prices for ticker {ticker!r} in {label}"
                f"{did_you_mean(ticker, available)}; ingest them first (`tsrate ingest FILE`, "
                "or `tsrate run --file FILE`)"
            )
        elif needed is not None and 0 <= available[ticker] < needed:
            problems.append(
                f"ticker {ticker!r} has {available[ticker]} trading days in {start}..{end}, "
                f"fewer than context_length + horizon = {needed} for one window: widen the "
                "period (--start, --end) or shorten the window (--context-length, --horizon)"
            )
    problems.extend(_distribution_problems(values, project, tickers, companies))
    if warnings is not None and not problems and available and needed and stride:
        windows = {
            t: (available[t] - needed) // stride + 1
            for t in dict.fromkeys(tickers)
            if available.get(t, -1) >= needed
        }
        industry_of = {t: (companies[t].get("industry") or "").strip() for t in windows}
        treatments = len([p for p in dict.fromkeys(perturbations) if p != "P0"])
        line = empty_arm_warning(
            windows,
            industry_of,
            treatments,
            _int(values, "treatment_draws", 16, []) or 1,
            _int(values, "max_company_distributions", 24, []) or 0,
        )
        if windows and line:
            warnings.append(line)
    return problems


#: values of var confounder_distributions (tsrate.methods.causal.distributions.study_distributions ``source``)
DISTRIBUTION_SOURCES = ("derived", "seed")


def _distribution_problems(
    values: Mapping[str, Any],
    project: Path,
    tickers: list[str],
    companies: Mapping[str, Mapping[str, str]],
) -> list[str]:
    """Problems of var ``confounder_distributions``: an unknown value, or (``seed``) an
    override that :func:`tsrate.methods.causal.distributions.distribution_problems` rejects for the study's
    companies (the tickers with a companies row; the others are reported above).

    ``derived`` needs nothing and imports nothing; only ``seed`` imports pandas and
    :mod:`tsrate.methods.causal.distributions` (the default check stays light).
    """
    source = str(values.get("confounder_distributions", "derived") or "derived").strip()
    if source not in DISTRIBUTION_SOURCES:
        return [
            f"unknown confounder_distributions {source!r}"
            f"{did_you_mean(source, DISTRIBUTION_SOURCES)}; use 'derived' (from the study) "
            "or 'seed' (seeds/confounder_distributions.csv) in dbt_project.yml vars"
        ]
    if source == "derived":
        return []
    import pandas as pd

    from tsrate.methods.causal.distributions import distribution_problems

    seed_path = project / "seeds" / "confounder_distributions.csv"
    if not seed_path.exists():
        return [
            "confounder_distributions: seed needs seeds/confounder_distributions.csv, which "
            "is missing (hint: var confounder_distributions: derived)"
        ]
    rows = read_seed(seed_path)
    with open(seed_path, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle), [])
    distributions = pd.DataFrame(rows, columns=header)
    study = pd.DataFrame(
        [
            {"ticker": ticker, "industry": (companies[ticker].get("industry") or "").strip()}
            for ticker in dict.fromkeys(tickers)
            if ticker in companies
        ],
        columns=["ticker", "industry"],
    )
    if study.empty:
        return []  # no study company to check against (reported as ticker problems)
    # name the file to edit: "confounder_distributions DI1: ..." -> "seeds/confounder_...csv DI1: ..."
    return [
        "seeds/confounder_distributions.csv" + problem.removeprefix("confounder_distributions")
        for problem in distribution_problems(distributions, study)
    ]


def _duplicates(name: str, flag: str, items: list[str], problems: list[str]) -> None:
    twice = sorted({item for item in items if items.count(item) > 1})
    if twice:
        problems.append(f"the study names {name} twice: {', '.join(twice)} ({flag})")


def require_valid_study(
    overrides: Mapping[str, Any] | None = None,
    source: str = "auto",
    path: str | Path | None = None,
    warehouse: Path | None = None,
    warn: Callable[[str], None] | None = None,
    companies_path: str | Path | None = None,
) -> Study:
    """The study, or :class:`StudyCheckError` listing every problem of :func:`check_study`.

    ``warn`` receives one line per warning
    (:func:`~tsrate.robustness.empty_arms.empty_arm_warning`: a study too small for its
    treatment draws); warnings never stop the run.
    """
    warnings: list[str] = []
    problems = check_study(
        overrides, source, path, warehouse, warnings=warnings, companies_path=companies_path
    )
    if problems:
        raise StudyCheckError(problems)
    for line in warnings:
        if warn is not None:
            warn(f"warning: {line}")
    return Study.from_vars(dict(overrides or {}))


def flow_study(
    study: Study | Mapping[str, Any] | None, overrides: Mapping[str, Any] | None
) -> Study:
    """The one typed study a flow works on, made once at the flow's edge: ``study`` as given
    (``tsrate run`` checked it with :func:`require_valid_study`; a deployment or API run
    may hand its fields as a mapping, as :meth:`Study.to_json` writes them), else
    ``dbt_project.yml`` vars + ``overrides`` (a scheduled run reads the config when it
    starts). Both at once is an error: which one wins would be a guess."""
    if study is not None and overrides:
        raise TsrateError(
            "a flow got both a study and study overrides: pass one (the study, already checked)"
        )
    if isinstance(study, Study):
        return study
    if study is not None:
        import json

        return Study.from_json(json.dumps(dict(study), default=str))
    return Study.from_vars(dict(overrides or {}))
