"""Reading and checking a prediction file before anything is stored.

:func:`read_prediction_file` reads a CSV (values as text) or Parquet file;
:func:`validate_predictions` checks it against the study's grid (every window x step of each
(ticker, perturbation) the file covers) and the rules of
:mod:`tsrate.robustness.blackbox.predictions`, listing every problem in one
:class:`ImportValidationError` (forecasts in another unit than the prices: :mod:`.scale`).

Optional quantile forecasts: the nine columns :data:`QUANTILE_COLUMNS` (``q0.1`` … ``q0.9``,
fev's default levels), all or none per file; the file's columns decide whether it has them.
Rejected: a partial set, a column naming another level (``q0.05``, ``q10``, ``quantile_0.5``:
:data:`QUANTILE_LIKE`), a value that is not a finite number (or larger than
:data:`MAX_ABS_FORECAST`), and quantiles that cross (a level above the next by more than
:data:`QUANTILE_TOLERANCE` × max(1, |value|)). Quantiles within the tolerance are stored as
given, as the built-in systems' are (never re-sorted).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.robustness.blackbox.scale import scale_problems
from tsrate.robustness.forecast.plan import TickerSeries
from tsrate.robustness.sources import (
    MAX_CLOSE,
    bad_ticker,
    header_problems,
    mixed_zone_problem,
    parquet_type_problems,
    separator_hint,
    ticker_rule,
    unreadable_file,
)
from tsrate.systems.base import QUANTILE_LEVELS, QuantileForecasts

IMPORT_COLUMNS = ["ticker", "window_end_date", "perturbation_id", "horizon_step", "forecast"]
#: The optional quantile columns, level by level as :data:`tsrate.systems.base.QUANTILE_LEVELS`
#: (fev's default 0.1 … 0.9): ``q`` + the level, ``q0.1`` … ``q0.9``. All nine or none.
QUANTILE_COLUMNS = tuple(f"q{level:g}" for level in QUANTILE_LEVELS)
#: A column whose name says it holds a quantile (``q0.05``, ``q10``, ``quantile_0.5``, ``q50%``);
#: one that is not in :data:`QUANTILE_COLUMNS` is a level off the expected grid.
QUANTILE_LIKE = re.compile(r"^(q|quantile)[_-]?(\d+(\.\d*)?|\.\d+)%?$")
#: How far a quantile may lie above the next level's, relative to max(1, |value|): the
#: rounding of the file's writer, not a crossing.
QUANTILE_TOLERANCE = 1e-9
#: Rows quoted per problem in an error message.
MAX_EXAMPLES = 5

#: Largest forecast size accepted: ten times the largest plausible close
#: (:data:`tsrate.robustness.sources.MAX_CLOSE`); larger values are a unit or overflow error, and
#: would overflow the squared errors of the scores.
MAX_ABS_FORECAST = 10 * MAX_CLOSE


#: Problems of one kind (``alike``) quoted in an error's message; the others are counted.
MAX_ALIKE = 3


class ImportValidationError(TsrateError):
    """A prediction file that cannot be imported, with every problem found in ``problems``
    and ``hint``, what to do, where there is one. The message is one line (the CLI prints
    one line per error; Prefect logs repeat it): every problem, or, for problems all of one
    kind (``alike``, e.g. "incomplete grids"), the first :data:`MAX_ALIKE` and "and N more
    <alike>" (24 incomplete grids made a 6 KB line)."""

    def __init__(self, source: str, problems: list[str], hint: str | None = None, alike: str = ""):
        self.source = source
        self.problems = list(problems)
        self.hint = hint
        shown = self.problems[:MAX_ALIKE] if alike else self.problems
        rest = len(self.problems) - len(shown)
        more = f"; and {rest} more {alike}" if rest else ""
        super().__init__(f"{source}: rejected, nothing was stored: {'; '.join(shown)}{more}")


def read_prediction_file(path: Path) -> tuple[pd.DataFrame, str]:
    """The file as a frame (CSV values as text) with a 1-based ``_line`` column, and its sha256."""
    source = str(path)
    if not path.exists():
        raise ImportValidationError(source, ["file does not exist"])
    if path.stat().st_size == 0:
        raise ImportValidationError(source, ["file is empty"])
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".txt", ".parquet"}:
        raise ImportValidationError(
            source, [f"unknown file type {suffix!r}; use .csv (with a header) or .parquet"]
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
            first_line = 1  # row numbers
        else:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
            first_line = 2  # line 1 is the header
    except Exception as exc:  # noqa: BLE001 - any reader failure is a malformed file
        repeated = _safe_header_problems(path, suffix)
        problem = unreadable_file(exc, suffix, ",".join(IMPORT_COLUMNS))
        raise ImportValidationError(source, repeated or [problem]) from exc
    repeated = _safe_header_problems(path, suffix)
    if repeated:
        raise ImportValidationError(source, repeated)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    missing = [c for c in IMPORT_COLUMNS if c not in frame.columns]
    if missing:
        raise ImportValidationError(
            source,
            [
                f"missing column(s) {missing}; expected a header with {IMPORT_COLUMNS}, "
                f"found {list(frame.columns)}{separator_hint(list(frame.columns))}"
            ],
        )
    quantiles = quantile_columns(list(frame.columns), source)
    if frame.empty:
        raise ImportValidationError(source, ["no forecast rows (only a header)"])
    if suffix == ".parquet":
        wrong = parquet_type_problems(
            frame,
            ["horizon_step", "forecast", *quantiles],
            ["window_end_date"],
            ["ticker", "perturbation_id"],
        )
        if wrong:
            raise ImportValidationError(source, wrong)
    frame = frame[IMPORT_COLUMNS + quantiles].reset_index(drop=True)
    frame["_line"] = np.arange(first_line, first_line + len(frame))
    return frame, digest


def quantile_columns(columns: list[str], source: str) -> list[str]:
    """The file's quantile columns: all of :data:`QUANTILE_COLUMNS` or none; a partial set or
    a column at another level raises :class:`ImportValidationError`."""
    problems = []
    off_grid = [c for c in columns if QUANTILE_LIKE.match(c) and c not in QUANTILE_COLUMNS]
    expected = f"{', '.join(QUANTILE_COLUMNS)} (fev's default levels 0.1 to 0.9)"
    if off_grid:
        problems.append(
            f"quantile column(s) {off_grid} are not at the expected levels; name the quantile "
            f"columns {expected}, or leave quantiles out"
        )
    present = [c for c in QUANTILE_COLUMNS if c in columns]
    if present and len(present) < len(QUANTILE_COLUMNS):
        absent = [c for c in QUANTILE_COLUMNS if c not in columns]
        problems.append(
            f"partial set of quantile columns: {present} without {absent}; give all nine "
            f"({expected}) or none"
        )
    if problems:
        raise ImportValidationError(source, problems)
    return present


def _safe_header_problems(path: Path, suffix: str) -> list[str]:
    try:
        return header_problems(path, suffix)
    except Exception:  # noqa: BLE001 - an unreadable header is reported by the reader's error
        return []


def validate_predictions(
    frame: pd.DataFrame,
    source: str,
    study: Study,
    series: dict[str, TickerSeries],
    system_id: str,
    accepted: tuple[str, ...] = (),
) -> dict[tuple[str, str], np.ndarray | QuantileForecasts]:
    """Check every row against the study; return the (windows × horizon) grid per partition,
    as a :class:`QuantileForecasts` (windows × horizon × levels beside it) when the file
    has quantile columns.

    Raises :class:`ImportValidationError` listing every problem found.
    """
    what = "row" if source.lower().endswith(".parquet") else "line"
    parsed, problems = _parse(frame, what)
    if "_bad_key" not in parsed:  # the dates could not be read at all (mixed time zones)
        raise ImportValidationError(source, problems)
    keyed = parsed[~parsed["_bad_key"]]
    mismatch = study_mismatch(keyed, study, series)
    if mismatch:
        raise ImportValidationError(source, [mismatch], MISMATCH_HINT)
    problems += _check_against_study(keyed, what, study, series, system_id, accepted)
    problems += _check_duplicates(keyed, what)
    problems += scale_problems(keyed, series)  # forecasts in another unit than the prices
    if problems and parsed["_bad_key"].any():
        raise ImportValidationError(source, problems)  # unread keys: the grid is unknown
    gridded = parsed if not problems else _placeholders(keyed, study, series, accepted)
    grids, gaps = _grids(gridded, study, series)
    hint = (
        f"every (ticker, perturbation) in the file needs a forecast for horizon_step "
        f"1..{study.horizon} of every window of the study; `tsrate export-inputs` "
        "writes those windows and a manifest"
    )
    if problems:  # every kind found, one line each; the grids' gaps as one more
        if gaps:
            more = f"; and {len(gaps) - 1} more incomplete grids" if len(gaps) > 1 else ""
            problems.append(gaps[0] + more)
        raise ImportValidationError(source, problems, hint if gaps else None)
    if gaps:
        raise ImportValidationError(source, gaps, hint, "incomplete grids")
    return grids


def _placeholders(
    keyed: pd.DataFrame, study: Study, series: dict[str, TickerSeries], accepted: tuple[str, ...]
) -> pd.DataFrame:
    """The rows of a rejected file that name a cell of the study's grid, their values 0 (a
    value's problem is reported already): what its grid check needs to say which forecasts
    are missing beside the other problems. Rows are matched by their keys only."""
    ok = keyed["ticker"].isin(list(series)) & keyed["perturbation_id"].isin(
        list(accepted or study.perturbations)
    )
    ok &= keyed["perturbation_id"].isin(list(study.perturbations))
    ok &= keyed["horizon_step"].between(1, study.horizon)
    rows = keyed[ok].drop_duplicates(
        ["ticker", "window_end_date", "perturbation_id", "horizon_step"]
    )
    windows = {t: set(pd.to_datetime(s.window_end_dates)) for t, s in series.items()}
    inside = [
        date in windows[t] for t, date in zip(rows["ticker"], rows["window_end_date"], strict=True)
    ]
    rows = rows[np.asarray(inside, dtype=bool)].copy()  # a list of none would pick columns
    for column in ["forecast", *[c for c in QUANTILE_COLUMNS if c in rows.columns]]:
        rows[column] = 0.0
    return rows


#: The hint of a file made for another study than the one it is imported into.
MISMATCH_HINT = (
    "import it with the --manifest of the export it was made from (its manifest.json lists "
    "the study's windows), or with that study's flags for `tsrate import`; `tsrate studies` "
    "lists the stored studies"
)
#: A file is taken for another study's when at least this share of its rows' (ticker,
#: window end) are no window of the study, or of the study's windows (of the file's tickers)
#: have no forecast at all.
MISMATCH_SHARE = 0.25


def study_mismatch(keyed: pd.DataFrame, study: Study, series: dict[str, TickerSeries]) -> str:
    """Why the file's windows do not fit the study's (it was made for another study), or ''.

    Taken for another study's: at least :data:`MISMATCH_SHARE` of the file's (ticker, window
    end) pairs (of the study's tickers) are not windows of the study, or at least that share
    of the study's windows of those tickers has no row at all. A few missing windows or
    stray dates are the incomplete-grid and not-a-window problems instead."""
    known = keyed[keyed["ticker"].isin(list(series))]
    if known.empty:  # not one ticker of the study (if any rows): made for another study
        theirs = shortened(sorted(set(keyed["ticker"])))
        return theirs and (
            f"the file was made for another study: none of its tickers ({theirs}) is "
            f"in this study (its tickers: {shortened(list(study.tickers))})"
        )
    pairs = set(zip(known["ticker"], known["window_end_date"], strict=True))
    tickers = sorted({ticker for ticker, _ in pairs})
    study_pairs = {
        (ticker, date)
        for ticker in tickers
        for date in pd.to_datetime(series[ticker].window_end_dates)
    }
    outside = len(pairs - study_pairs)
    uncovered = len(study_pairs - pairs)
    if outside < MISMATCH_SHARE * len(pairs) and uncovered < MISMATCH_SHARE * len(study_pairs):
        return ""
    dates = sorted(date for _, date in pairs)
    ends = sorted(date for _, date in study_pairs)
    return (
        f"the file does not match this study: {outside} of its {len(pairs)} (ticker, "
        f"window_end_date) pairs are not windows of the study and {uncovered} of the study's "
        f"{len(study_pairs)} windows of its tickers have no forecast (the file's windows end "
        f"{dates[0].date()} to {dates[-1].date()}, the study's {ends[0].date()} to "
        f"{ends[-1].date()}; study tickers {list(study.tickers)}, context "
        f"{study.context_length}, horizon {study.horizon}, stride {study.stride})"
    )


def shortened(names: list[str], shown: int = 4) -> str:
    """'AAPL, AMZN, BAC, C and 16 more (20)': the first ``shown`` names and how many more."""
    rest = len(names) - shown
    more = f" and {rest} more ({len(names)})" if rest > 0 else ""
    return ", ".join(names[:shown]) + more


def check_ticker_coverage(
    grids: Mapping[tuple[str, str], object], series: Mapping[str, TickerSeries], source: str
) -> None:
    """Each perturbation of a valid file (``grids``' keys: (ticker, perturbation)) must hold
    every ticker of the study (``series``), else :class:`ImportValidationError`.

    The marts compare systems window by window and the causal estimates need every window
    of the study under each perturbation a system is rated on: a system with some tickers
    missing would fail the build of its study (and every later run of it), and its averages
    would cover other tickers than the baselines'. A file may leave out whole perturbations
    (its system is then rated on the ones it has)."""
    tickers = list(series)
    covered: dict[str, set[str]] = {}
    for ticker, perturbation in grids:
        covered.setdefault(perturbation, set()).add(ticker)
    problems = []
    for perturbation in sorted(covered):
        lacking = [t for t in tickers if t not in covered[perturbation]]
        if lacking:
            problems.append(f"perturbation {perturbation} lacks ticker(s) {lacking}")
    if problems:
        problems[-1] += (
            f": each perturbation in the file needs every ticker of the study ({tickers}), as "
            "the marts compare systems on the same windows; add their predictions, or import "
            "into a study of the tickers you have (--tickers)"
        )
        raise ImportValidationError(source, problems)


def _lines(frame: pd.DataFrame, mask: pd.Series, what: str) -> str:
    """'lines 3, 7 and 2 more' for the rows under ``mask``."""
    lines = frame.loc[mask, "_line"].tolist()
    shown = ", ".join(str(n) for n in lines[:MAX_EXAMPLES])
    more = f" and {len(lines) - MAX_EXAMPLES} more" if len(lines) > MAX_EXAMPLES else ""
    return f"{what}{'s' if len(lines) > 1 else ''} {shown}{more}"


def _first(frame: pd.DataFrame, mask: pd.Series, column: str) -> str:
    value = frame.loc[mask, column].iloc[0]
    null = value is None or value is pd.NA or value is pd.NaT
    if null or (isinstance(value, float) and np.isnan(value)):  # np.float64 is a float
        if not pd.api.types.is_numeric_dtype(frame[column]):
            return "null"  # a Parquet text column's null (pandas reads it as NaN)
    return _plain(value)


#: How a CSV spells a missing number (read as text); shown as written, like a number.
SPELLED_MISSING = ("nan", "+nan", "-nan", "na", "null")
#: Longest text quoted whole in a message; a longer one is cut, with an ellipsis.
MAX_SHOWN = 40


def _plain(value: object) -> str:
    """A cell as a message quotes it, the same from a CSV (text) and a Parquet file (typed):
    a number plainly (``inf``, ``nan``, ``1e+308``, not numpy's ``np.float64(inf)`` or the
    CSV text's ``'inf'``), an empty CSV cell as ``empty``, a Parquet null as ``null``, a
    date as ``2022-10-14 12:00:00``, other text quoted (a stray comma or letter shows)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if value is None or value is pd.NA or value is pd.NaT:
        return "null"
    if isinstance(value, dt.date):  # a Timestamp, datetime or date
        return str(value)
    text = str(value)
    if not text.strip():
        return "empty"
    if text.strip() == text and (_is_number(text) or text.lower() in SPELLED_MISSING):
        return text
    return repr(text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…")


def _is_number(text: str) -> bool:
    if "_" in text:  # Python's float() takes 1_000; no file reader does
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse(frame: pd.DataFrame, what: str) -> tuple[pd.DataFrame, list[str]]:
    problems = []
    out = pd.DataFrame({"_line": frame["_line"]})

    blank_ticker = pd.Series(False, index=frame.index)
    for column in ("ticker", "perturbation_id"):
        text = frame[column].astype("string").str.strip().str.upper()
        blank = text.isna() | (text == "")
        if blank.any():
            problems.append(f"{_lines(frame, blank, what)}: {column} is empty")
        out[column] = text.fillna("")
        blank_ticker |= blank
    malformed = (out["ticker"] != "") & out["ticker"].map(bad_ticker)
    if malformed.any():
        first = str(out.loc[malformed, "ticker"].iloc[0])
        problems.append(
            f"{_lines(frame, malformed, what)}: malformed ticker (first: "
            f"{(first if len(first) <= 40 else first[:40] + '...')!r}); {ticker_rule()}"
        )

    raw_dates = frame["window_end_date"]
    if pd.api.types.is_datetime64_any_dtype(raw_dates):
        dates = pd.to_datetime(raw_dates)
    else:
        try:
            dates = pd.to_datetime(
                raw_dates.astype("string").str.strip(), errors="coerce", format="ISO8601"
            )
        except (ValueError, TypeError) as exc:
            if "timezone" not in str(exc).lower() and "tz" not in str(exc).lower():
                raise
            first = int(frame["_line"].iloc[0])
            return out, [f"window_end_date: {mixed_zone_problem(raw_dates, what, first)}"]
    if dates.dt.tz is not None:
        dates = dates.dt.tz_localize(None)
    not_date = dates.isna() | (dates.notna() & (dates != dates.dt.normalize()))
    if not_date.any():
        problems.append(
            f"{_lines(frame, not_date, what)}: window_end_date is not a date like 2022-10-14 "
            f"(first: {_first(frame, not_date, 'window_end_date')})"
        )
    out["window_end_date"] = dates.dt.normalize()

    steps = pd.to_numeric(frame["horizon_step"], errors="coerce")
    not_int = steps.isna() | ~np.isfinite(steps) | (steps != np.round(steps))
    if not_int.any():
        problems.append(
            f"{_lines(frame, not_int, what)}: horizon_step is not a whole number "
            f"(first: {_first(frame, not_int, 'horizon_step')})"
        )
    out["horizon_step"] = steps.where(~not_int, 0).astype("int64")
    # rows whose (ticker, window, step) cannot be read: left out of the checks of the keys
    out["_bad_key"] = (blank_ticker | malformed | not_date | not_int).to_numpy()

    raw_forecasts = frame["forecast"]
    values = pd.to_numeric(raw_forecasts, errors="coerce").astype(float)
    if pd.api.types.is_numeric_dtype(raw_forecasts):
        unparseable = pd.Series(False, index=frame.index)
    else:
        text = raw_forecasts.astype("string").str.strip().str.lower()
        spelled_missing = text.isna() | text.isin(["", "nan", "+nan", "-nan", "na", "null"])
        unparseable = values.isna() & ~spelled_missing
    if unparseable.any():
        problems.append(
            f"{_lines(frame, unparseable, what)}: forecast is not a number "
            f"(first: {_first(frame, unparseable, 'forecast')}); every forecast must be a "
            "price written as a plain number, e.g. 138.2 ('.' for decimals, no thousands "
            "separator, currency or unit)"
        )
    non_finite = ~np.isfinite(values) & ~unparseable
    if non_finite.any():
        problems.append(
            f"{_lines(frame, non_finite, what)}: forecast is missing or not finite "
            f"(first: {_first(frame, non_finite, 'forecast')}); every forecast must be a finite number"
        )
    too_large = np.isfinite(values) & (np.abs(values) > MAX_ABS_FORECAST)
    if too_large.any():
        problems.append(
            f"{_lines(frame, too_large, what)}: forecast outside -{MAX_ABS_FORECAST:g} to "
            f"{MAX_ABS_FORECAST:g} (first: {_first(frame, too_large, 'forecast')}); a price "
            "forecast that large is a unit or overflow error"
        )
    out["forecast"] = values
    quantiles = [c for c in QUANTILE_COLUMNS if c in frame.columns]
    if quantiles:
        problems.extend(_parse_quantiles(frame, out, quantiles, what))
    return out, problems


def _parse_quantiles(
    frame: pd.DataFrame, out: pd.DataFrame, columns: list[str], what: str
) -> list[str]:
    """Parse the quantile columns into ``out``; the problems of all nine, one per kind."""
    unparseable = pd.DataFrame(False, index=frame.index, columns=columns)
    values = pd.DataFrame(index=frame.index, columns=columns, dtype=float)
    for column in columns:
        raw = frame[column]
        values[column] = pd.to_numeric(raw, errors="coerce").astype(float)
        if not pd.api.types.is_numeric_dtype(raw):
            text = raw.astype("string").str.strip().str.lower()
            spelled_missing = text.isna() | text.isin(["", "nan", "+nan", "-nan", "na", "null"])
            unparseable[column] = values[column].isna() & ~spelled_missing
    non_finite = ~np.isfinite(values.to_numpy()) & ~unparseable.to_numpy()
    too_large = np.isfinite(values.to_numpy()) & (np.abs(values.to_numpy()) > MAX_ABS_FORECAST)
    problems = []
    for mask, problem, hint in (
        (unparseable.to_numpy(), "quantile is not a number", "every quantile must be a number"),
        (
            non_finite,
            "quantile is missing or not finite",
            "give all nine quantiles on every row, or leave the quantile columns out",
        ),
        (
            too_large,
            f"quantile outside -{MAX_ABS_FORECAST:g} to {MAX_ABS_FORECAST:g}",
            "a quantile that large is a unit or overflow error",
        ),
    ):
        rows = pd.Series(mask.any(axis=1), index=frame.index)
        if rows.any():
            row, col = np.argwhere(mask)[0]
            first = f"{columns[col]} = {_plain(frame[columns[col]].iloc[row])}"
            problems.append(f"{_lines(frame, rows, what)}: {problem} (first: {first}); {hint}")
    q = values.to_numpy()
    lower, upper = q[:, :-1], q[:, 1:]
    allowed = QUANTILE_TOLERANCE * np.maximum(1.0, np.maximum(np.abs(lower), np.abs(upper)))
    with np.errstate(invalid="ignore"):
        crossed = (lower - upper) > allowed
    rows = pd.Series(crossed.any(axis=1), index=frame.index)
    if rows.any():
        row, col = np.argwhere(crossed)[0]
        problems.append(
            f"{_lines(frame, rows, what)}: quantiles cross (first: {columns[col]} = "
            f"{q[row, col]:g} > {columns[col + 1]} = {q[row, col + 1]:g}); each level's "
            f"quantile must be at most the next level's (tolerance {QUANTILE_TOLERANCE:g} "
            "relative)"
        )
    for column in columns:
        out[column] = values[column]
    return problems


def _check_against_study(
    parsed: pd.DataFrame,
    what: str,
    study: Study,
    series: dict[str, TickerSeries],
    system_id: str,
    accepted: tuple[str, ...],
) -> list[str]:
    problems = []
    unknown = ~parsed["ticker"].isin(list(study.tickers))
    if unknown.any():
        names = sorted(set(parsed.loc[unknown, "ticker"]))
        problems.append(
            f"{_lines(parsed, unknown, what)}: ticker(s) {names} are not in the study "
            f"(its tickers: {list(study.tickers)})"
        )
    outside = ~parsed["perturbation_id"].isin(list(study.perturbations))
    if outside.any():
        names = sorted(set(parsed.loc[outside, "perturbation_id"]))
        problems.append(
            f"{_lines(parsed, outside, what)}: perturbation(s) {names} are not in the study "
            f"(its perturbations: {list(study.perturbations)})"
        )
    if accepted:
        refused = ~outside & ~parsed["perturbation_id"].isin(list(accepted))
        if refused.any():
            names = sorted(set(parsed.loc[refused, "perturbation_id"]))
            problems.append(
                f"{_lines(parsed, refused, what)}: perturbation(s) {names} are not accepted by "
                f"system {system_id!r} (systems seed: {' '.join(accepted)})"
            )
    bad_step = (parsed["horizon_step"] < 1) | (parsed["horizon_step"] > study.horizon)
    if bad_step.any():
        problems.append(
            f"{_lines(parsed, bad_step, what)}: horizon_step outside 1..{study.horizon} "
            f"(first: {parsed.loc[bad_step, 'horizon_step'].iloc[0]}); the file must hold "
            f"steps 1..{study.horizon} of each window, the study's horizon (an export's "
            "manifest.json says it: horizon; step 1 is the trading day after window_end_date)"
        )
    windows = pd.concat(
        [
            pd.DataFrame({"ticker": ticker, "window_end_date": pd.to_datetime(s.window_end_dates)})
            for ticker, s in series.items()
        ],
        ignore_index=True,
    )
    windows["_is_window"] = True
    located = parsed[["ticker", "window_end_date"]].merge(
        windows, on=["ticker", "window_end_date"], how="left"
    )
    not_window = ~unknown & located["_is_window"].isna().to_numpy()
    if not_window.any():
        first = parsed.loc[not_window].iloc[0]
        s = series[first["ticker"]]
        problems.append(
            f"{_lines(parsed, not_window, what)}: window_end_date is not a window of the study "
            f"(first: {first['ticker']} {first['window_end_date'].date()}; {first['ticker']}'s "
            f"windows end on the trading days {s.window_end_dates[0]} to "
            f"{s.window_end_dates[-1]}, context {study.context_length}, horizon "
            f"{study.horizon}, stride {study.stride})"
        )
    return problems


def _check_duplicates(parsed: pd.DataFrame, what: str) -> list[str]:
    key = ["ticker", "window_end_date", "perturbation_id", "horizon_step"]
    repeated = parsed.duplicated(key, keep="first")
    if not repeated.any():
        return []
    first = parsed.loc[repeated].iloc[0]
    same = (parsed[key] == first[key]).all(axis=1)
    return [
        f"{_lines(parsed, repeated, what)}: duplicate (ticker, window_end_date, perturbation_id, "
        f"horizon_step); first: {first['ticker']} {first['window_end_date'].date()} "
        f"{first['perturbation_id']} step {first['horizon_step']} on "
        f"{_lines(parsed, same, what)}; the file must hold one row per ticker, "
        "window_end_date, perturbation_id and horizon_step: keep one of the repeated rows"
    ]


def _grids(
    parsed: pd.DataFrame, study: Study, series: dict[str, TickerSeries]
) -> tuple[dict[tuple[str, str], np.ndarray | QuantileForecasts], list[str]]:
    grids: dict[tuple[str, str], np.ndarray | QuantileForecasts] = {}
    #: gap (grid_gap) -> per pair: its name, forecasts missing and in all, windows with a
    #: gap and in all
    gaps: dict[str, list[tuple[str, int, int, int, int]]] = {}
    d = study.horizon
    quantile_columns = [c for c in QUANTILE_COLUMNS if c in parsed.columns]
    for (ticker, perturbation_id), rows in parsed.groupby(["ticker", "perturbation_id"]):
        ends = pd.to_datetime(series[ticker].window_end_dates)
        grid = np.full((len(ends), d), np.nan)
        window = ends.get_indexer(pd.DatetimeIndex(rows["window_end_date"]))
        steps = rows["horizon_step"].to_numpy() - 1
        grid[window, steps] = rows["forecast"].to_numpy()
        if quantile_columns:
            levels = np.full((len(ends), d, len(quantile_columns)), np.nan)
            levels[window, steps] = rows[quantile_columns].to_numpy(dtype=float)
            grids[(ticker, perturbation_id)] = QuantileForecasts(grid, levels)
        missing = np.isnan(grid)
        if missing.any():
            gaps.setdefault(grid_gap(missing, [end.date() for end in ends]), []).append(
                (
                    f"{ticker} {perturbation_id}",
                    int(missing.sum()),
                    grid.size,
                    int(missing.any(axis=1).sum()),
                    len(ends),
                )
            )
        if not quantile_columns:
            grids[(ticker, perturbation_id)] = grid
    n_pairs = parsed.groupby(["ticker", "perturbation_id"]).ngroups
    problems = []
    for gap, pairs in gaps.items():
        missing, size, gapped, windows = (sum(p[i] for p in pairs) for i in range(1, 5))
        problems.append(
            f"{_pairs([p[0] for p in pairs], n_pairs)}: incomplete grid, {missing} of {size} "
            f"forecasts (windows × steps 1..{d}) missing, in {gapped} of {windows} windows: {gap}"
        )
    return grids, problems


def grid_gap(missing: np.ndarray, ends: list) -> str:
    """Which forecasts a (windows × steps) grid lacks (``missing``; ``ends``: the windows'
    end dates), said once for windows alike: "steps 11..20 in each" (every window lacks
    them), "step 1 of 2022-10-05, 2022-10-06", "every step of 2022-10-06", else the first
    :data:`MAX_EXAMPLES` windows with their steps. Pairs with the same gap are named
    together (a file of short forecasts said each window's list of steps, for three of its
    24 pairs, in a line of 1,588 characters)."""
    rows = np.flatnonzero(missing.any(axis=1))
    patterns = {tuple(np.flatnonzero(missing[row]).tolist()) for row in rows}
    if len(patterns) == 1:
        which = _step_ranges(np.flatnonzero(missing[rows[0]]) + 1, missing.shape[1])
        if len(rows) == len(ends):
            return f"{which} in each"
        shown = ", ".join(str(ends[row]) for row in rows[:MAX_EXAMPLES])
        more = f" and {len(rows) - MAX_EXAMPLES} more" if len(rows) > MAX_EXAMPLES else ""
        return f"{which} of {shown}{more}"
    examples = [
        f"{ends[row]} ({_step_ranges(np.flatnonzero(missing[row]) + 1, missing.shape[1])})"
        for row in rows[:MAX_EXAMPLES]
    ]
    more = f", and {len(rows) - len(examples)} more" if len(rows) > len(examples) else ""
    return f"{'; '.join(examples)}{more}"


#: Runs of steps quoted for one window ("steps 1..3, 7, 9..10"); the others are an ellipsis.
MAX_STEP_RUNS = 4


def _step_ranges(steps: np.ndarray, horizon: int) -> str:
    """1-based steps as runs: "every step", "step 3", "steps 11..20", "steps 1, 3"."""
    if len(steps) == horizon:
        return "every step"
    runs: list[list[int]] = []
    for step in steps.tolist():
        if runs and step == runs[-1][1] + 1:
            runs[-1][1] = step
        else:
            runs.append([step, step])
    parts = [str(a) if a == b else f"{a}..{b}" for a, b in runs[:MAX_STEP_RUNS]]
    if len(runs) > MAX_STEP_RUNS:
        parts.append("…")
    return f"step{'s' if len(steps) > 1 else ''} {', '.join(parts)}"


def _pairs(names: list[str], n_pairs: int) -> str:
    """Who has one gap: "AAPL P0", "every (ticker, perturbation) pair of the file (24)",
    or the first :data:`MAX_ALIKE` pairs and how many more."""
    if len(names) == 1:
        return names[0]
    if len(names) == n_pairs:
        return f"every (ticker, perturbation) pair of the file ({n_pairs})"
    if len(names) <= MAX_ALIKE:
        return f"{', '.join(names[:-1])} and {names[-1]}"
    rest = len(names) - MAX_ALIKE
    return f"{', '.join(names[:MAX_ALIKE])} and {rest} more pair{'s' if rest > 1 else ''}"
