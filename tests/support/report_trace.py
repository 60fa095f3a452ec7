"""Re-read every traced number of a report page from the frames of the marts it cites.

A printed number is ``<span class="num" data-mart=... data-column=... data-where=...
data-value=...>`` and a plotted one a chart row with ``mart``/``column``/``where``/``value``
(:func:`tsrate.html.charts.chart_rows`). :func:`trace_problems` looks every one up in
``marts`` (mart name -> DataFrame of that mart) by its ``where`` and compares the value.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from tsrate.html.charts import chart_rows

_SPAN = re.compile(r'<span class="num"((?: data-[a-z-]+="[^"]*")+)>')
_ATTR = re.compile(r'(data-[a-z-]+)="([^"]*)"')


def printed_numbers(page: str) -> list[dict[str, object]]:
    """Every traced ``<span class="num">`` of ``page`` as mart, column, where, value."""
    out = []
    for attrs in _SPAN.findall(page):
        fields = {k: html.unescape(v) for k, v in _ATTR.findall(attrs)}
        if "data-mart" in fields:
            out.append(
                {
                    "mart": fields["data-mart"],
                    "column": fields["data-column"],
                    "where": fields["data-where"],
                    "value": float(fields["data-value"]),
                }
            )
    return out


def trace_problems(page: str, marts: Mapping[str, pd.DataFrame]) -> list[str]:
    """One line per traced number of ``page`` that its mart does not hold (by ``where``)."""
    problems = []
    for kind, rows in (("printed", printed_numbers(page)), ("plotted", chart_rows(page))):
        for row in rows:
            mart = str(row["mart"]).removeprefix("marts.")
            if mart not in marts:
                continue
            frame = marts[mart]
            where = json.loads(row["where"]) if isinstance(row["where"], str) else row["where"]
            hit = np.ones(len(frame), dtype=bool)
            for key, value in where.items():
                column = frame[key]
                if pd.api.types.is_numeric_dtype(column):
                    hit &= np.isclose(column.astype(float), float(value))
                else:
                    hit &= (column.astype(str) == str(value)).to_numpy()
            if hit.sum() != 1:
                problems.append(f"{kind} {mart} {where}: {hit.sum()} rows match")
                continue
            got = float(frame.loc[hit, row["column"]].iloc[0])
            if not np.isclose(got, float(row["value"]), rtol=1e-12, atol=0):
                problems.append(f"{kind} {mart}.{row['column']} {where}: {row['value']} != {got}")
    return problems
