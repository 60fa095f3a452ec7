"""Company metadata of a study without editing tracked files.

A study's companies (ticker, company name, industry, ``biased_offset``) come, later sources
winning per value:

1. ``seeds/companies.csv``: the default, for the bundled sample;
2. ``raw.company_metadata``: rows stored from a price file's optional ``company_name`` /
   ``industry`` / ``biased_offset`` columns (``tsrate ingest FILE``, ``tsrate run --file
   FILE``) or from ``--companies FILE`` (a CSV or Parquet file with ``ticker`` and those
   columns); the newest row of a ticker wins, and an empty value keeps the earlier one.

:func:`study_companies` resolves them for a run; the run stores the result with its study
(``raw.studies.companies``, :mod:`tsrate.robustness.studies`), and the marts read it from
there (``int_companies_selected``), so a study keeps the metadata it was defined with.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb
import pandas as pd

from tsrate import TsrateError
from tsrate.config import load_companies
from tsrate.platform.raw_schema import COMPANIES_DDL

COMPANY_COLUMNS = ("company_name", "industry", "biased_offset")


def _read_table(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        frame = pd.read_parquet(path)
    elif suffix in {".csv", ".txt"}:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    else:
        raise TsrateError(f"{path}: unknown file type {suffix!r}; use .csv or .parquet")
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    return frame


def _normalise(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """ticker + the company columns present, one row per ticker; a one-line error on a
    ticker given two different values of one column, or a non-numeric biased_offset."""
    columns = [c for c in COMPANY_COLUMNS if c in frame.columns]
    out = frame[["ticker", *columns]].copy()
    out["ticker"] = out["ticker"].astype(str).str.strip().str.upper()
    for column in columns:
        values = out[column].astype("string").str.strip()
        out[column] = values.where(values != "", None)
    if "biased_offset" in columns:
        numbers = pd.to_numeric(out["biased_offset"], errors="coerce")
        bad = out.loc[out["biased_offset"].notna() & numbers.isna(), "ticker"]
        if len(bad):
            raise TsrateError(f"{source}: biased_offset of {sorted(set(bad))[:5]} is not a number")
        out["biased_offset"] = numbers
    for column in columns:
        counts = out.dropna(subset=[column]).groupby("ticker")[column].nunique()
        twice = sorted(counts[counts > 1].index)
        if twice:
            raise TsrateError(
                f"{source}: column {column} gives ticker(s) {twice[:5]} more than one value; "
                "give each ticker one value"
            )
    for column in COMPANY_COLUMNS:
        if column not in out.columns:
            out[column] = None
    return (
        out.groupby("ticker", as_index=False)
        .agg({c: "first" for c in COMPANY_COLUMNS})
        .reindex(columns=["ticker", *COMPANY_COLUMNS])
    )


def read_companies_file(path: str | Path) -> pd.DataFrame:
    """A ``--companies`` file: ``ticker`` and at least one of company_name, industry,
    biased_offset (one row per ticker)."""
    path = Path(path)
    if not path.exists():
        raise TsrateError(f"--companies {path}: file does not exist")
    frame = _read_table(path)
    if "ticker" not in frame.columns or not set(COMPANY_COLUMNS) & set(frame.columns):
        raise TsrateError(
            f"--companies {path}: expected columns ticker,company_name,industry"
            f"[,biased_offset], found {list(frame.columns)}"
        )
    return _normalise(frame, f"--companies {path}")


def companies_in_price_file(path: str | Path) -> pd.DataFrame | None:
    """The company columns of a price file (None when it has none)."""
    path = Path(path)
    frame = _read_table(path)
    if "ticker" not in frame.columns or not set(COMPANY_COLUMNS) & set(frame.columns):
        return None
    return _normalise(frame, str(path))


def store_companies(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame, source: str) -> int:
    """Append ``frame``'s rows to ``raw.company_metadata``; the number of tickers."""
    con.execute(COMPANIES_DDL)
    rows = frame.reindex(columns=["ticker", *COMPANY_COLUMNS]).copy()
    rows["source"] = source
    rows["loaded_at"] = pd.Timestamp.now(tz="UTC").tz_localize(None)
    con.register("incoming_companies", rows)
    try:
        con.execute(
            "insert into raw.company_metadata select ticker, company_name, industry, "
            "cast(biased_offset as double), source, loaded_at from incoming_companies"
        )
    finally:
        con.unregister("incoming_companies")
    return len(rows)


def stored_companies(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per ticker of ``raw.company_metadata``: the newest non-empty value of each column."""
    exists = con.execute(
        "select count(*) from duckdb_tables() where schema_name = 'raw' "
        "and table_name = 'company_metadata'"
    ).fetchone()[0]
    if not exists:
        return pd.DataFrame(columns=["ticker", *COMPANY_COLUMNS])
    from tsrate.robustness.studies import stored_company_rows

    return pd.DataFrame(stored_company_rows(con), columns=["ticker", *COMPANY_COLUMNS])


def merge_companies(*frames: pd.DataFrame | None) -> pd.DataFrame:
    """Company frames merged per ticker and value, later frames winning (empty values lose)."""
    merged: dict[str, dict] = {}
    for frame in frames:
        if frame is None:
            continue
        for row in frame.to_dict("records"):
            ticker = str(row["ticker"]).strip().upper()
            into = merged.setdefault(ticker, {"ticker": ticker, **dict.fromkeys(COMPANY_COLUMNS)})
            for column in COMPANY_COLUMNS:
                value = row.get(column)
                if value is not None and not (isinstance(value, float) and pd.isna(value)):
                    if not (isinstance(value, str) and not value.strip()):
                        into[column] = value
    return pd.DataFrame(list(merged.values()), columns=["ticker", *COMPANY_COLUMNS])


def study_companies(
    con: duckdb.DuckDBPyConnection | None, tickers: Iterable[str] | None = None
) -> pd.DataFrame:
    """The companies seed overridden by ``raw.company_metadata`` (``con`` None: the seed),
    restricted to ``tickers`` when given (seed rows of other tickers are kept otherwise)."""
    merged = merge_companies(load_companies(), stored_companies(con) if con else None)
    if tickers is not None:
        wanted = {t.upper() for t in tickers}
        merged = merged[merged["ticker"].isin(wanted)].reset_index(drop=True)
    return merged


def store_file_companies(
    con: duckdb.DuckDBPyConnection,
    price_file: str | Path | None = None,
    companies_file: str | Path | None = None,
) -> list[str]:
    """Store the company columns of ``price_file`` and the rows of ``companies_file``
    (``--companies``) in ``raw.company_metadata``; one line per file stored."""
    lines = []
    if price_file:
        frame = companies_in_price_file(price_file)
        if frame is not None:
            n = store_companies(con, frame, str(price_file))
            lines.append(f"stored company metadata of {n} ticker(s) from {price_file}")
    if companies_file:
        n = store_companies(con, read_companies_file(companies_file), str(companies_file))
        lines.append(f"stored company metadata of {n} ticker(s) from {companies_file}")
    return lines
