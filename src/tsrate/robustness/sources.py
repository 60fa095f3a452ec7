"""Price sources: the offline S&P 500 sample, CSV/Parquet files and Yahoo Finance.

Every source returns a validated long frame ``ticker, price_date, close`` (one row per
ticker and trading day, close > 0) or raises :class:`PriceValidationError` naming the
source, the ticker and the problem. Validation happens before anything touches the
warehouse, so a rejected file changes nothing.

The rules shared with imported predictions (:mod:`tsrate.robustness.blackbox.predictions`):

* tickers match :data:`TICKER_PATTERN` (after trimming and upper-casing): 1 to 20 of
  ``A-Z 0-9 . - _ =``, optionally after one ``^`` (``BRK.B``, ``BF-B``, ``^GSPC``,
  ``EURUSD=X``); no spaces, control characters or path separators, so a ticker is safe as
  a file name;
* closes lie in ``[MIN_CLOSE, MAX_CLOSE]`` (1e-6 to 1e8: finite, positive, and short of
  values no listed price reaches);
* dates lie from :data:`EARLIEST_DATE` (1900-01-01) to one year after today; a date column
  mixing time zones is refused (give plain dates, or one zone);
* column names are unique (case-insensitive) and Parquet columns have the right type:
  ``close`` numeric (not boolean), ``date`` a date, timestamp or text, ``ticker`` text.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.robustness.sample import skfolio_sample_path

PRICE_COLUMNS = ["ticker", "price_date", "close"]
#: What a ticker may look like (after trimming and upper-casing).
TICKER_PATTERN = re.compile(r"^\^?[A-Z0-9][A-Z0-9._=-]{0,19}$")
#: Plausibility bounds of a close (and, in :mod:`tsrate.robustness.blackbox.predictions`, of a forecast's size).
MIN_CLOSE = 1e-6
MAX_CLOSE = 1e8
#: The earliest date a price (or a window) may have; the latest is one year after today.
EARLIEST_DATE = dt.date(1900, 1, 1)
#: Markets never close this long; a longer hole between two rows of one ticker is a gap.
DEFAULT_MAX_GAP_DAYS = 10


class PriceValidationError(TsrateError):
    """Prices that cannot be stored, with every problem found listed in the message."""

    def __init__(self, source: str, problems: Sequence[str]):
        self.source = source
        self.problems = list(problems)
        # one line (the CLI prints one line per error; Prefect logs repeat it)
        super().__init__(f"{source}: rejected, nothing was stored: {'; '.join(self.problems)}")


def _skfolio_sp500_wide() -> pd.DataFrame:
    """skfolio's S&P 500 sample as ``load_sp500_dataset`` returns it (dates x tickers).

    Read straight from the file in the installed package when it is where skfolio keeps it:
    ``import skfolio`` imports scikit-learn and SciPy (1.2 s, the most of an ingest); else
    through skfolio's own loader."""
    import gzip

    path = skfolio_sample_path()
    if path is None:
        from skfolio.datasets import load_sp500_dataset

        return load_sp500_dataset()
    with gzip.open(path, mode="rt", encoding="utf-8") as handle:
        wide = pd.read_csv(handle, sep=",", index_col=0)
    wide.index = pd.to_datetime(wide.index, format="%Y-%m-%d")
    return wide


def load_skfolio_sp500(tickers: Sequence[str] | None = None) -> pd.DataFrame:
    """Daily adjusted closes of 20 S&P 500 stocks (1990-01-02 to 2022-12-28) shipped by skfolio."""
    wide = _skfolio_sp500_wide()
    if tickers:
        unknown = sorted(set(tickers) - set(wide.columns))
        if unknown:
            raise TsrateError(
                f"skfolio S&P 500 sample: unknown tickers {unknown}; "
                f"it holds {sorted(wide.columns)}"
            )
        wide = wide[list(tickers)]
    long = (
        wide.rename_axis("price_date")
        .reset_index()
        .melt(id_vars="price_date", var_name="ticker", value_name="close")
    )
    long = long.dropna(subset=["close"])
    return validate_prices(long[PRICE_COLUMNS], source="skfolio S&P 500 sample")


def read_price_file(path: str | Path, max_gap_days: int = DEFAULT_MAX_GAP_DAYS) -> pd.DataFrame:
    """Read a CSV or Parquet file with columns ``ticker, date, close`` (header required)."""
    path = Path(path)
    source = str(path)
    if not path.exists():
        raise PriceValidationError(source, ["file does not exist"])
    if path.stat().st_size == 0:
        raise PriceValidationError(source, ["file is empty"])
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
        elif suffix in {".csv", ".txt"}:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            raise PriceValidationError(
                source, [f"unknown file type {suffix!r}; use .csv or .parquet"]
            )
    except PriceValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure is a malformed file
        repeated = _safe_header_problems(path, suffix)
        raise PriceValidationError(
            source, repeated or [unreadable_file(exc, suffix, "ticker,date,close")]
        ) from exc
    repeated = _safe_header_problems(path, suffix)
    if repeated:
        raise PriceValidationError(source, repeated)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    as_written = list(frame.columns)  # the file's names, for the message below
    if "date" in frame.columns and "price_date" not in frame.columns:
        frame = frame.rename(columns={"date": "price_date"})
    missing = [c for c in PRICE_COLUMNS if c not in frame.columns]
    if missing:
        wanted = ["ticker", "date", "close"]
        raise PriceValidationError(
            source,
            [
                f"missing column(s) {[c.replace('price_date', 'date') for c in missing]}; "
                f"expected {wanted}, found {as_written}{separator_hint(frame.columns)}"
            ],
        )
    if suffix == ".parquet":
        wrong = parquet_type_problems(frame, ["close"], ["price_date"], ["ticker"])
        if wrong:
            raise PriceValidationError(source, [w.replace("'price_date'", "'date'") for w in wrong])
    return validate_prices(frame[PRICE_COLUMNS], source=source, max_gap_days=max_gap_days)


def file_trading_days(
    path: str | Path,
    start: dt.date | None,
    end: dt.date | None,
    problems: list[str],
    warehouse: str | Path | None = None,
) -> dict[str, int]:
    """Trading days per ticker of a price file (read and validated as ``tsrate ingest``
    does) in [start, end] (-1 each without a period; the file's problems appended to
    ``problems``). With ``warehouse``: the ticker's stored days counted too, each day once,
    as a run adds the file to the stored history (``tsrate run --file``)."""
    try:
        prices = read_price_file(path)
    except PriceValidationError as exc:
        problems.extend(f"--file {exc.source}: {problem}" for problem in exc.problems)
        return {}
    if start is None or end is None:
        return {str(t): -1 for t in prices["ticker"].unique()}
    stored_dates = (stored_price_dates(warehouse, start, end) if warehouse else None) or {}
    dates = pd.to_datetime(prices["price_date"])
    inside = prices[(dates >= pd.Timestamp(start)) & (dates <= pd.Timestamp(end))]
    counts = {str(t): len(stored_dates.get(str(t), ())) for t in prices["ticker"].unique()}
    for ticker, rows in inside.groupby("ticker"):
        days = set(pd.to_datetime(rows["price_date"]).dt.date)
        counts[str(ticker)] = len(days | stored_dates.get(str(ticker), set()))
    return counts


def stored_price_dates(
    warehouse: str | Path, start: dt.date, end: dt.date
) -> dict[str, set[dt.date]] | None:
    """The stored dates in [start, end] per ticker of ``raw.prices``: None when the warehouse
    is held by a writer (DuckDB's lock), empty when nothing is stored."""
    if not Path(warehouse).exists():
        return {}
    import duckdb

    try:
        con = duckdb.connect(str(warehouse), read_only=True)
    except duckdb.Error:
        return None
    try:
        exists = con.execute(
            "select count(*) from duckdb_tables() where schema_name = 'raw' "
            "and table_name = 'prices'"
        ).fetchone()[0]
        if not exists:
            return {}
        dates: dict[str, set[dt.date]] = {}
        for ticker, day in con.execute(
            "select ticker, price_date from raw.prices where price_date between ? and ?",
            [start, end],
        ).fetchall():
            dates.setdefault(str(ticker), set()).add(day)
        return dates
    finally:
        con.close()


def _safe_header_problems(path: Path, suffix: str) -> list[str]:
    try:
        return header_problems(path, suffix)
    except Exception:  # noqa: BLE001 - an unreadable header is reported by the reader's error
        return []


def load_yfinance(
    tickers: Sequence[str],
    start: dt.date | str,
    end: dt.date | str,
    download: Callable[..., pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Daily adjusted closes from Yahoo Finance (``pip install 'tsrate[yahoo]'``).

    ``download`` defaults to ``yfinance.download``; tests pass a function returning frames
    shaped like yfinance's (columns ``(field, ticker)`` or flat fields for one ticker).
    ``end`` is inclusive here (yfinance's own ``end`` is exclusive).
    """
    if download is None:
        try:
            import yfinance
        except ImportError as exc:
            raise TsrateError(
                "Yahoo Finance needs the optional extra: pip install 'tsrate[yahoo]'"
            ) from exc
        download = yfinance.download
    end_exclusive = pd.Timestamp(end) + pd.Timedelta(days=1)
    raw = download(
        list(tickers),
        start=str(pd.Timestamp(start).date()),
        end=str(end_exclusive.date()),
        auto_adjust=True,
        progress=False,
        group_by="column",
    )
    source = f"Yahoo Finance {list(tickers)}"
    if raw is None or len(raw) == 0:
        raise PriceValidationError(source, ["the download returned no rows"])
    if isinstance(raw.columns, pd.MultiIndex):
        fields = raw.columns.get_level_values(0)
        field = "Close" if "Close" in fields else "Adj Close" if "Adj Close" in fields else None
        if field is None:
            raise PriceValidationError(source, [f"no Close column in {sorted(set(fields))}"])
        wide = raw[field]
    else:
        field = "Close" if "Close" in raw.columns else "Adj Close"
        if field not in raw.columns or len(tickers) != 1:
            raise PriceValidationError(source, [f"unexpected columns {list(raw.columns)}"])
        wide = raw[[field]].rename(columns={field: tickers[0]})
    absent = [t for t in tickers if t not in wide.columns or wide[t].isna().all()]
    if absent:
        raise PriceValidationError(source, [f"no prices returned for {absent} (unknown ticker?)"])
    long = (
        wide.rename_axis("price_date")
        .reset_index()
        .melt(id_vars="price_date", var_name="ticker", value_name="close")
    )
    # yfinance pads every ticker to the union of dates: drop leading/trailing holes only.
    long = long.dropna(subset=["close"])
    return validate_prices(long[PRICE_COLUMNS], source=source)


def validate_prices(
    frame: pd.DataFrame, source: str, max_gap_days: int = DEFAULT_MAX_GAP_DAYS
) -> pd.DataFrame:
    """Check and normalise a ``ticker, price_date, close`` frame; raise listing every problem.

    Rejected: no rows; blank tickers; unparseable dates; non-numeric, missing, zero or
    negative closes; duplicate (ticker, date) rows; and gaps — a ticker lacking a date that
    other tickers of the same file have inside its own date range, or two consecutive rows
    more than ``max_gap_days`` calendar days apart.
    """
    problems: list[str] = []
    if len(frame) == 0:
        raise PriceValidationError(source, ["no price rows"])
    original = frame.reset_index(drop=True)
    data = original.copy()
    data["ticker"] = data["ticker"].astype(str).str.strip().str.upper()
    blank = data["ticker"].isin(["", "NAN", "NONE"])
    if blank.any():
        problems.append(
            f"{int(blank.sum())} row(s) without a ticker (first at row {_row(data, blank)})"
        )
    # each distinct ticker checked once (a price file repeats each on every row)
    malformed_tickers = [t for t in data["ticker"].unique() if bad_ticker(t)]
    malformed = ~blank & data["ticker"].isin(malformed_tickers)
    if malformed.any():
        problems.append(
            f"{int(malformed.sum())} malformed ticker(s), e.g. {_examples(original, malformed)}: "
            f"{ticker_rule()}"
        )
    try:
        dates = pd.to_datetime(data["price_date"], errors="coerce", format="mixed")
    except (ValueError, TypeError) as exc:
        if "timezone" not in str(exc).lower() and "tz" not in str(exc).lower():
            raise
        raise PriceValidationError(
            source, [mixed_zone_problem(data["price_date"], "row", 2)]
        ) from None
    if dates.dt.tz is not None:
        dates = dates.dt.tz_localize(None)
    numeric_dates = _numeric_day_month(data["price_date"])
    if numeric_dates is not None:  # d/m/yyyy or m/d/yyyy: one order for the whole file
        shaped, parsed, order_problem = numeric_dates
        if order_problem:
            problems.append(f"{order_problem}, e.g. {_examples(original, shaped)}")
        else:
            dates = dates.where(~shaped, parsed)
    bad_dates = dates.isna()
    if bad_dates.any():
        problems.append(
            f"{int(bad_dates.sum())} unparseable date(s), e.g. {_examples(original, bad_dates)}"
        )
    out_of_range = ~bad_dates & (
        (dates < pd.Timestamp(EARLIEST_DATE)) | (dates > pd.Timestamp(latest_date()))
    )
    if out_of_range.any():
        problems.append(
            f"{int(out_of_range.sum())} date(s) outside {EARLIEST_DATE} to {latest_date()}: "
            f"{_examples(original, out_of_range)}"
        )
    data["price_date"] = dates
    close = pd.to_numeric(data["close"], errors="coerce")
    missing = _blank(data["close"])
    non_numeric = close.isna() & ~missing
    if non_numeric.any():
        problems.append(
            f"{int(non_numeric.sum())} non-numeric close value(s): {_examples(original, non_numeric)}"
        )
    if missing.any():
        problems.append(
            f"{int(missing.sum())} missing close value(s): {_examples(original, missing)}"
        )
    non_finite = close.notna() & ~np.isfinite(close)
    if non_finite.any():
        problems.append(
            f"{int(non_finite.sum())} infinite close value(s): {_examples(original, non_finite)}"
        )
    non_positive = close.notna() & (close <= 0)
    if non_positive.any():
        problems.append(
            f"{int(non_positive.sum())} non-positive close value(s) (prices must be > 0): "
            f"{_examples(original, non_positive)}"
        )
    implausible = (
        close.notna()
        & np.isfinite(close)
        & (close > 0)
        & ((close < MIN_CLOSE) | (close > MAX_CLOSE))
    )
    if implausible.any():
        problems.append(
            f"{int(implausible.sum())} implausible close value(s) (outside {MIN_CLOSE:g} to "
            f"{MAX_CLOSE:g}): {_examples(original, implausible)}"
        )
    data["close"] = close
    if problems:
        raise PriceValidationError(source, problems)

    data["price_date"] = data["price_date"].dt.normalize()
    dupes = data.duplicated(subset=["ticker", "price_date"], keep=False)
    if dupes.any():
        first = data.loc[dupes].sort_values(["ticker", "price_date"]).iloc[0]
        problems.append(
            f"{int(dupes.sum())} duplicate (ticker, date) row(s), e.g. {first['ticker']} "
            f"{first['price_date'].date()}"
        )
    data = data.sort_values(["ticker", "price_date"]).reset_index(drop=True)
    all_dates = np.sort(data["price_date"].unique())
    for ticker, rows in data.groupby("ticker", sort=True):
        own = rows["price_date"].drop_duplicates()
        inside = all_dates[(all_dates >= own.iloc[0]) & (all_dates <= own.iloc[-1])]
        lacking = np.setdiff1d(inside, own.to_numpy())
        if len(lacking):
            shown = ", ".join(str(pd.Timestamp(d).date()) for d in lacking[:3])
            problems.append(
                f"{ticker}: gap — {len(lacking)} trading day(s) present for other tickers are "
                f"missing ({shown}{', …' if len(lacking) > 3 else ''})"
            )
        steps = own.diff().dt.days
        long_gaps = steps > max_gap_days
        if long_gaps.any():
            where = own[long_gaps.to_numpy()].iloc[0]
            problems.append(
                f"{ticker}: gap — {int(steps[long_gaps].iloc[0])} calendar days without a price "
                f"before {where.date()} (more than {max_gap_days})"
            )
    if problems:
        raise PriceValidationError(source, problems)
    data["price_date"] = data["price_date"].dt.date
    return data[PRICE_COLUMNS]


def _blank(values: pd.Series) -> pd.Series:
    """Missing values, and text that means missing (blank, nan, null, None)."""
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
        values.dtype
    ):  # a number's text is never blank nor one of those words: only NaN is missing
        return values.isna()
    return values.isna() | values.astype(str).str.strip().isin(
        ["", "nan", "NaN", "null", "NULL", "None"]
    )


def _row(frame: pd.DataFrame, mask: pd.Series) -> int:
    return int(np.flatnonzero(mask.to_numpy())[0]) + 2  # +1 header, +1 one-based


def _shown(value: object, limit: int = 40) -> str:
    """``value`` as text for a message: control characters escaped, long values cut."""
    text = str(value)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: a date written with its day and month as numbers and the year last: 01/02/2023, 1.2.2023
_DAY_MONTH = re.compile(r"^\s*(\d{1,2})([/.-])(\d{1,2})\2(\d{4})\s*$")


def _numeric_day_month(values: pd.Series) -> tuple[pd.Series, pd.Series, str | None] | None:
    """Dates written ``nn/nn/yyyy`` (or with ``.`` / ``-``) are read in ONE order for the
    whole file: day first where some first number is above 12, month first where some second
    one is; a file where neither is (every value could be either, e.g. 01/02/2023) or both
    are is refused rather than guessed. Returns (which rows have that shape, their dates,
    the problem or None), or None when no value has it. (pandas' ``format="mixed"`` reads each
    value alone, month first unless that is impossible, so 01/02/2023 and 13/02/2023 in one
    file became 2 January and 13 February.)"""
    if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
        return None
    parts = values.astype("string").str.extract(_DAY_MONTH)
    shaped = parts[0].notna().fillna(False).astype(bool)
    if not shaped.any():
        return None
    first = parts.loc[shaped, 0].astype(int)
    second = parts.loc[shaped, 2].astype(int)
    day_first, month_first = bool((first > 12).any()), bool((second > 12).any())
    if day_first and month_first:
        return shaped, values, "dates written both day/month/year and month/day/year"
    if not (day_first or month_first) and bool((first != second).any()):
        return (
            shaped,
            values,
            (
                "dates like 01/02/2023 whose order the file does not tell (day/month or "
                "month/day): write them as YYYY-MM-DD"
            ),
        )
    day, month = (first, second) if day_first else (second, first)
    iso = parts.loc[shaped, 3] + "-" + month.astype(str).str.zfill(2) + "-"
    iso = iso + day.astype(str).str.zfill(2)
    parsed = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
    parsed[shaped] = pd.to_datetime(iso, format="%Y-%m-%d", errors="coerce")
    return shaped, parsed, None


def _examples(original: pd.DataFrame, mask: pd.Series, limit: int = 3) -> str:
    """Up to ``limit`` offending rows as they appear in the input (row 2 = first data row)."""
    positions = np.flatnonzero(mask.to_numpy())[:limit]
    shown = [
        f"row {pos + 2} (ticker={_shown(original['ticker'].iloc[pos])}, "
        f"date={_shown(original['price_date'].iloc[pos])}, close={_close(original, pos)})"
        for pos in positions
    ]
    return "; ".join(shown) + (" …" if int(mask.sum()) > limit else "")


def _close(original: pd.DataFrame, pos: int) -> str:
    """A close as the file had it: text quoted (``'abc'``), a number plain (``1.5``, not
    numpy's ``np.float64(1.5)``)."""
    value = original["close"].iloc[pos]
    return repr(value.item() if isinstance(value, np.generic) else value)


def latest_date() -> dt.date:
    """The latest date a price may have: one year after today (clock skew, synthetic studies)."""
    return dt.date.today() + dt.timedelta(days=366)


def bad_ticker(value: object) -> bool:
    """True when ``value`` (already trimmed and upper-cased) does not match :data:`TICKER_PATTERN`."""
    return not (isinstance(value, str) and TICKER_PATTERN.match(value))


def ticker_rule() -> str:
    return (
        "a ticker is 1 to 20 of A-Z 0-9 . - _ = (optionally after one ^), e.g. BRK.B or ^GSPC; "
        "no spaces, control characters or path separators"
    )


def separator_hint(columns: Sequence[object]) -> str:
    """A hint when a CSV header read as one column holds another separator (a spreadsheet's
    ';' or a tab): the missing-columns message alone showed the whole header as one name."""
    if len(columns) != 1:
        return ""
    for separator, name in ((";", "';'"), ("\t", "a tab"), ("|", "'|'")):
        if separator in str(columns[0]):
            return f" (the header is separated by {name}: write the file comma-separated)"
    return ""


def unreadable_file(exc: BaseException, suffix: str, header: str) -> str:
    """The problem of a file its reader refused, on one line, with what to write instead.

    The reader's own words (pandas' "Error tokenizing data. C error: ...", pyarrow's footer
    message) name where it stopped but not what the file should be; some end in a newline.
    """
    detail = " ".join(str(exc).split()) or type(exc).__name__
    if suffix == ".parquet":
        return (
            f"cannot be read as Parquet ({detail}); write a Parquet file with columns "
            f"{header} (e.g. pandas' DataFrame.to_parquet), or a CSV file ending in .csv"
        )
    return (
        f"cannot be read as CSV ({detail}); write comma-separated text with the header "
        f"line {header} (UTF-8), or a Parquet file ending in .parquet"
    )


def header_problems(path: Path, suffix: str) -> list[str]:
    """Duplicated column names (case-insensitive, trimmed) in a CSV header or Parquet schema."""
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        names = list(pq.read_schema(path).names)
    else:
        with open(path, newline="", encoding="utf-8") as handle:
            names = next(csv.reader(handle), [])
    normal = [str(name).strip().lower() for name in names]
    repeated = sorted({n for n in normal if normal.count(n) > 1})
    if repeated:
        return [
            f"duplicated column name(s) {repeated} (found {names}); each column must appear once"
        ]
    return []


def mixed_zone_problem(values: pd.Series, what: str, first_line: int) -> str:
    """Name the rows of a date column whose UTC offsets differ (for the error message)."""
    offsets = values.astype("string").str.strip().str.extract(r"(Z|[+-]\d\d:?\d\d)$", expand=False)
    offsets = offsets.fillna("none")
    seen: dict[str, int] = {}
    for position, offset in enumerate(offsets):
        seen.setdefault(str(offset), position + first_line)
        if len(seen) >= 3:
            break
    shown = ", ".join(f"{offset} on {what} {line}" for offset, line in seen.items())
    return (
        f"the dates mix time zones ({shown}); give plain dates (2022-01-03) or every "
        "timestamp in one zone"
    )


def parquet_type_problems(
    frame: pd.DataFrame, numeric: Sequence[str], dates: Sequence[str], texts: Sequence[str]
) -> list[str]:
    """Columns of a Parquet file whose type cannot hold what they should."""
    problems = []
    for column in numeric:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values) or (
            values.dtype == object and values.map(lambda v: isinstance(v, bool)).any()
        ):
            problems.append(f"column {column!r} is boolean; it must hold numbers")
    for column in dates:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
            problems.append(
                f"column {column!r} holds {values.dtype} values; it must hold dates "
                "(a date or timestamp column, or text like 2022-01-03)"
            )
    for column in texts:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
            problems.append(f"column {column!r} holds {values.dtype} values; it must hold text")
    return problems
