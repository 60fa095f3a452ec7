"""Reading marts into numpy inside dbt Python models: shared by the rating models.

``read_columns`` pulls only the needed columns of a DuckDB relation with text as
categoricals; ``Units`` numbers the (ticker, window) units of a run; ``outcome_grid`` turns
one system's window_errors into a (units x perturbations) matrix.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

UNIT = ["ticker", "window_end_date"]


class Units:
    """The windows of one run, sorted by (ticker, window_end_date) -- the order in which
    treatment_assignments lists them -- and lookups from (ticker, date) to a unit number."""

    def __init__(self, frame: pd.DataFrame):
        units = frame[["ticker", "industry", "window_end_date"]].drop_duplicates(UNIT)
        units = units.assign(
            ticker=units["ticker"].astype(str),
            industry=units["industry"].astype(str),
            window_end_date=pd.to_datetime(units["window_end_date"]).to_numpy("datetime64[D]"),
        )
        units = units.sort_values(UNIT, kind="mergesort").reset_index(drop=True)
        #: the units (ticker, industry, window_end_date) in unit order
        self.frame = units
        self.size = len(units)
        self.tickers = np.asarray(sorted(units["ticker"].unique()), dtype=object)
        self.ticker_code = {t: i for i, t in enumerate(self.tickers)}
        self.days = np.unique(units["window_end_date"].to_numpy().astype("datetime64[D]"))
        t_code = units["ticker"].map(self.ticker_code).to_numpy(dtype=np.int64)
        d_code = np.searchsorted(self.days, units["window_end_date"].to_numpy("datetime64[D]"))
        # day -> position in self.days through a dense table over the calendar span
        day_numbers = self.days.astype(np.int64)
        self.first_day = int(day_numbers[0]) if day_numbers.size else 0
        span = int(day_numbers[-1]) - self.first_day + 1 if day_numbers.size else 0
        self.day_code = np.full(span, -1, dtype=np.int64)
        self.day_code[day_numbers - self.first_day] = np.arange(day_numbers.size)
        self.lookup = np.full((self.tickers.size, self.days.size), -1, dtype=np.int64)
        self.lookup[t_code, d_code] = np.arange(self.size)
        #: position in ``days`` of every unit's window_end_date (for date resampling)
        self.day_of_unit = np.asarray(d_code, dtype=np.int64)
        #: confounder column -> stratum code of every unit (values sorted)
        self.strata = {
            column: pd.factorize(units[column], sort=True)[0].astype(np.int64)
            for column in ("ticker", "industry")
        }

    def index(self, ticker_codes: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """Unit numbers of (ticker code, days since the first window) pairs; -1 if unknown."""
        if self.days.size == 0:
            return np.full(len(offset), -1, dtype=np.int64)
        inside = (offset >= 0) & (offset < self.day_code.size)
        d_code = self.day_code[np.where(inside, offset, 0)]
        known = (ticker_codes >= 0) & inside & (d_code >= 0)
        return np.where(known, self.lookup[np.maximum(ticker_codes, 0), d_code], -1)

    def ticker_codes(self, tickers: pd.Series) -> np.ndarray:
        """Ticker codes of a (categorical) Series; -1 for tickers of no unit."""
        values = tickers.astype("category")
        mapping = np.array(
            [self.ticker_code.get(str(v), -1) for v in values.cat.categories], dtype=np.int64
        )
        codes = values.cat.codes.to_numpy()
        return np.where(codes >= 0, mapping[codes], -1)


def read_columns(relation, columns: list[str]) -> pd.DataFrame:
    """Only ``columns`` of a DuckDB relation, text as categoricals with sorted categories.

    DuckDB casts each text column to an ENUM of its (sorted) distinct values, so Arrow
    carries small integer codes instead of millions of strings and pandas gets categoricals
    (groupby order = value order); dates arrive as datetime64.
    """
    types = dict(zip(relation.columns, map(str, relation.types), strict=True))
    select = []
    for name in columns:
        values = []
        if types[name] == "VARCHAR":
            values = sorted(
                v for (v,) in relation.select(name).distinct().fetchall() if v is not None
            )
        if values:
            literal = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
            select.append(f"cast({name} as ENUM({literal})) as {name}")
        else:
            select.append(name)
    return relation.select(", ".join(select)).to_arrow_table().to_pandas(date_as_object=False)


def outcome_grid(
    errors: pd.DataFrame, units: Units, labels: list[str], outcome: str, system_id: str
) -> np.ndarray:
    """(units x labels) outcomes of one system (NaN where it has no row)."""
    grid = np.full((units.size, len(labels)), np.nan)
    rows = errors.loc[errors["perturbation_id"].isin(labels)]
    days = pd.to_datetime(rows["window_end_date"]).to_numpy("datetime64[D]").astype(np.int64)
    u = units.index(units.ticker_codes(rows["ticker"]), days - units.first_day)
    if (u < 0).any():
        raise ValueError(f"system {system_id!r}: window_errors has windows of no unit")
    pert = rows["perturbation_id"].astype("category")
    pert_code = {v: i for i, v in enumerate(labels)}
    mapping = np.array([pert_code.get(str(v), -1) for v in pert.cat.categories], dtype=np.int64)
    p = mapping[pert.cat.codes.to_numpy()]
    cell = u * len(labels) + p
    if cell.size and np.bincount(cell, minlength=grid.size).max() > 1:
        raise ValueError(f"system {system_id!r}: window_errors has duplicate windows")
    grid[u, p] = rows[outcome].to_numpy(dtype=float)
    return grid
