"""What the study check reads before a run: the seeds, the stored warehouse and the prices.

:func:`tsrate.robustness.study.check_study` asks here what the run will have: the trading
days per ticker in the warehouse (:func:`stored_state`, with the systems registered by
import and the registered language models, in one read-only open), in the bundled skfolio
sample (:func:`skfolio_trading_days`) or in a price file (:func:`file_trading_days`), merged
per price source by :func:`available_days`; and each ticker's company row
(:func:`company_rows`: seed, warehouse, price file, ``--companies`` file). Only the csv
module, gzip and duckdb are imported up front; pandas only for a file.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tsrate import TsrateError
from tsrate.robustness.sample import skfolio_sample_path
from tsrate.systems.registered import registrations


def skfolio_trading_days(start: dt.date | None, end: dt.date | None) -> dict[str, int] | None:
    """Trading days with a close in [start, end] per ticker of the bundled sample.

    With no valid period every ticker maps to -1 (present, days unknown); None when
    skfolio's file cannot be found.
    """
    path = skfolio_sample_path()
    if path is None:
        return None
    with gzip.open(path, "rt", newline="") as handle:
        rows = csv.reader(handle)
        tickers = next(rows)[1:]
        if start is None or end is None:
            return {t: -1 for t in tickers}
        first, last = start.isoformat(), end.isoformat()
        counts = dict.fromkeys(tickers, 0)
        for row in rows:
            if first <= row[0][:10] <= last:  # ISO dates compare as text
                for ticker, close in zip(tickers, row[1:], strict=False):
                    if close.strip():
                        counts[ticker] += 1
        return counts


def read_seed(path: Path) -> list[dict[str, str]]:
    """A seed CSV as a list of rows (text values; empty cells are '')."""
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def file_trading_days(*args: Any, **kwargs: Any) -> dict[str, int]:
    """:func:`tsrate.robustness.sources.file_trading_days` (pandas is imported on use)."""
    from tsrate.robustness.sources import file_trading_days as trading_days

    return trading_days(*args, **kwargs)


def stored_state(warehouse: Path, start: dt.date | None, end: dt.date | None) -> tuple:
    """(trading days per stored ticker in [start, end], systems registered by import, the
    language models of ``tsrate register-llm``), read in one read-only open of the file.

    An absent warehouse stores nothing; one held by a writer (DuckDB's lock) cannot be read:
    None (no days, no registrations: the checks that need them wait for the run's lock).
    """
    if not Path(warehouse).exists():
        return {}, set(), []
    import duckdb

    try:
        con = duckdb.connect(str(warehouse), read_only=True)
    except duckdb.Error:
        return None, set(), None
    try:
        tables = {
            f"{schema}.{name}"
            for schema, name in con.execute(
                "select schema_name, table_name from duckdb_tables()"
            ).fetchall()
        }
        days: dict[str, int] = {}
        if "raw.prices" in tables:
            if start is None or end is None:
                rows = con.execute("select distinct ticker, -1 from raw.prices").fetchall()
            else:
                rows = con.execute(
                    "select ticker, count(*) filter (where price_date between ? and ?) "
                    "from raw.prices group by ticker",
                    [start, end],
                ).fetchall()
            days = {str(t): int(n) for t, n in rows}
        registered: set[str] = set()
        if "raw.imported_systems" in tables:
            registered = {
                str(r[0])
                for r in con.execute(
                    "select distinct system_id from raw.imported_systems"
                ).fetchall()
            }
        return days, registered, registrations(con)
    finally:
        con.close()


def company_rows(
    seed: dict[str, dict[str, str]],
    warehouse: Path,
    price_file: str | Path | None,
    companies_path: str | Path | None,
    problems: list[str],
) -> dict[str, dict[str, str]]:
    """Company rows per ticker: the seed, then stored, price-file and --companies values
    (later sources win per non-empty value). pandas is imported only for a file."""
    rows = {ticker: dict(row) for ticker, row in seed.items()}

    def merge(ticker: str, values: Mapping[str, Any]) -> None:
        into = rows.setdefault(ticker, {"ticker": ticker})
        for key in ("company_name", "industry", "biased_offset"):
            value = values.get(key)
            if value is not None and str(value).strip() and str(value) != "nan":
                into[key] = str(value)

    if Path(warehouse).exists():
        import duckdb

        try:
            con = duckdb.connect(str(warehouse), read_only=True)
        except duckdb.Error:
            con = None
        if con is not None:
            try:
                from tsrate.robustness.studies import stored_company_rows

                for row in stored_company_rows(con):
                    merge(row["ticker"], row)
            finally:
                con.close()
    for label, reader, file in (
        ("--file", "companies_in_price_file", price_file),
        ("--companies", "read_companies_file", companies_path),
    ):
        if not file or (label == "--file" and not Path(file).is_file()):
            continue  # a missing price file: file_trading_days reports it, once
        from tsrate.robustness import companies  # pandas: only for a file

        try:
            frame = getattr(companies, reader)(file)
        except (TsrateError, OSError, ValueError) as exc:
            problems.append(str(exc) if str(exc).startswith(label) else f"{label} {exc}")
            continue
        for row in [] if frame is None else frame.to_dict("records"):
            merge(row["ticker"], row)
    return rows


def available_days(
    source: str,
    path: str | Path | None,
    stored: dict[str, int] | None,
    start: dt.date | None,
    end: dt.date | None,
    problems: list[str],
    warehouse: Path | None = None,
) -> tuple[dict[str, int] | None, str]:
    """Trading days per ticker the run will have, and where they come from (for messages).

    None when it cannot be known before the run (Yahoo; the warehouse locked by a writer).
    """
    if source == "yahoo":
        return None, "Yahoo Finance"
    if source == "file":
        if not path:
            return None, "the price file"
        from_file = file_trading_days(path, start, end, problems, warehouse if stored else None)
        if stored is None:
            return None, "the price file"
        return {**stored, **from_file}, f"the warehouse or {path}"
    if stored is None:
        return None, "the warehouse"
    if source == "none":
        return stored, "the warehouse (--source none ingests nothing)"
    sample = skfolio_trading_days(start, end) or {}
    if source == "skfolio":
        return sample, "the bundled skfolio S&P 500 sample (--source skfolio)"
    return {**sample, **stored}, "the warehouse or the bundled skfolio S&P 500 sample"
