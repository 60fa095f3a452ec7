"""Numbers the report prints, each traceable to its mart row, and look-ups over the marts.

Every number is a ``<span class="num">`` carrying ``data-mart`` (``marts.<name>``),
``data-column``, ``data-where`` (JSON equality filters; a list means IN) and ``data-value``
(the full value); ``data-agg="avg"`` marks a plain mean over the matching rows. Flags are
``<em class="flag">`` elements whose text is a mart's text column (``data-text-*``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import pandas as pd

from tsrate.html.charts import colour_for, esc
from tsrate.html.page import table as _page_table
from tsrate.robustness.report.data import SHAKY_SHARE, ReportData


def tied_at(values: pd.Series, pick) -> list:  # noqa: ANN001 - max or min
    """The labels of ``values`` (no NaN) at its maximum or minimum (``pick``), within
    floating noise, sorted: a tie names every one, whatever order the mart's rows came in."""
    target = pick(values)
    return sorted(
        k for k, v in values.items() if math.isclose(v, target, rel_tol=1e-9, abs_tol=1e-12)
    )


def format_share(share: float | None) -> str:
    """A bootstrap share as whole percent, rounded DOWN (0.599 -> '59 %'), so that a share
    printed as 60 % or more is never a shaky one (see :func:`is_shaky`)."""
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return "–"
    return f"{math.floor(float(share) * 100 + 1e-9):.0f} %"


def is_shaky(share: float | None) -> bool:
    """A rating is shaky when under SHAKY_SHARE (60 %) of the bootstrap resamples give it its
    published level; an unknown share (no valid resample) is not called shaky."""
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return False
    return float(share) < SHAKY_SHARE


def format_number(value: float | None, integer: bool = False) -> str:
    """Readable fixed precision: >= 1000 no decimals, >= 1 two, below 1 three significant.

    ``integer``: print a whole number (counts, ratings) without decimals.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = float(value)
    if integer and value.is_integer():
        return f"{value:.0f}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.3g}"


def provenance(
    mart: str, column: str, where: Mapping[str, object], value: float, agg: str = ""
) -> dict:
    """``data-*`` attributes naming the mart row(s) a number comes from."""
    attrs = {
        "data-mart": f"marts.{mart}",
        "data-column": column,
        "data-where": json.dumps(dict(where), sort_keys=True),
        "data-value": repr(float(value)),
    }
    if agg:
        attrs["data-agg"] = agg
    return attrs


def num(
    value: float | None,
    mart: str,
    column: str,
    where: Mapping[str, object],
    agg: str = "",
    integer: bool = False,
    percent: bool = False,
) -> str:
    """A traceable number: ``<span class="num" data-mart=... data-value=...>text</span>``.

    ``percent``: a share printed by :func:`format_share` (marked ``data-format="percent"``).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<span class="num missing">–</span>'
    attrs = provenance(mart, column, where, value, agg)
    if percent:
        attrs["data-format"] = "percent"
    rendered = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
    text = format_share(value) if percent else format_number(value, integer)
    return f'<span class="num"{rendered}>{esc(text)}</span>'


def source_note(*marts: str, extra: str = "") -> str:
    names = ", ".join(f"<code>marts.{esc(m)}</code>" for m in marts)
    return f'<p class="source">Source: {names}{(" — " + extra) if extra else ""}.</p>'


#: (id of a frame, key columns) -> (the frame, {key values: first row position}); the
#: report looks up hundreds of cells in the same few marts (a boolean mask per cell cost
#: ~0.5 s of a 0.85 s report). Cleared by :func:`build_report`; the frame is kept beside
#: its index so an id is never reused while its entry lives.
FIRST_ROWS: dict[tuple[int, tuple[str, ...]], tuple[pd.DataFrame, dict[tuple, int]]] = {}


def first_row(frame: pd.DataFrame, where: Mapping[str, object]) -> int | None:
    """Position of the first row of ``frame`` whose columns equal ``where`` (None: no row).

    The same rows as ``frame[(frame[k] == v) & ...]``: text and integer keys are looked up
    in an index built once per frame and key columns; other keys (floats, dates) fall back
    to the mask."""
    keys = tuple(where)
    values = tuple(where.values())
    if not all(isinstance(v, str | int) for v in values) or any(
        isinstance(v, bool) for v in values
    ):
        mask = pd.Series(True, index=frame.index)
        for key, value in where.items():
            mask &= frame[key] == value
        hits = mask.to_numpy().nonzero()[0]
        return int(hits[0]) if len(hits) else None
    entry = FIRST_ROWS.get((id(frame), keys))
    if entry is None or entry[0] is not frame:
        if len(FIRST_ROWS) > 256:
            FIRST_ROWS.clear()
        index: dict[tuple, int] = {}
        for position, row in enumerate(zip(*(frame[k].tolist() for k in keys), strict=True)):
            index.setdefault(row, position)  # a null key never equals a text or int key
        entry = (frame, index)
        FIRST_ROWS[(id(frame), keys)] = entry
    return entry[1].get(values)


def float_value(frame: pd.DataFrame, column: str, **where: object) -> float | None:
    if frame.empty:
        return None
    position = first_row(frame, where)
    if position is None:
        return None
    value = frame[column].iat[position]
    if pd.isna(value):
        return None
    return float(value)


def row_groups(frame: pd.DataFrame, keys: Sequence[str]) -> dict[tuple, list]:
    """The rows of ``frame`` (``itertuples``, read once) grouped by the ``keys`` columns, in
    frame order. The tables visit every metric x perturbation (or metric) block: filtering
    the frame for each one cost most of the report's time."""
    groups: dict[tuple, list] = {}
    for row in frame.itertuples():
        groups.setdefault(tuple(getattr(row, key) for key in keys), []).append(row)
    return groups


def system_order(data: ReportData) -> list[str]:
    """Rated systems in seed order (unknown ones last, alphabetically)."""
    rated = set(data.ratings["system_id"]) if not data.ratings.empty else set()
    seed_order = list(data.systems["system_id"]) if not data.systems.empty else []
    ordered = [s for s in seed_order if s in rated]
    return ordered + sorted(rated - set(ordered))


def display_names(data: ReportData) -> dict[str, str]:
    """system_id -> display name, from the report's systems (empty when it has none): how
    the summary table and the reading's warnings name a system."""
    if not data.systems.empty and "display_name" in data.systems:
        return dict(zip(data.systems["system_id"], data.systems["display_name"], strict=False))
    return {}


def perturbation_order(data: ReportData) -> list[str]:
    if data.ratings.empty:
        return []
    return sorted(set(data.ratings["perturbation_id"]))


def system_colours(systems: Sequence[str]) -> dict[str, str]:
    return {system: colour_for(i) for i, system in enumerate(systems)}


def table_html(header: Sequence[str], rows: Sequence[Sequence[str]], css: str = "") -> str:
    return _page_table(header, rows, css=css)


def text_html(value) -> str | None:
    """A text cell of a mart row, or None (null, NaN, empty)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value).strip() or None


def flag_html(
    css: str, text: str, mart: str, column: str, where: Mapping[str, object], **attrs
) -> str:
    """A flag whose text is ``marts.<mart>.<column>`` at ``where`` (``data-text-*``; the
    integration test re-reads it) plus any ``data-*`` ``attrs`` (e.g. a boolean's provenance)."""
    attrs = {
        **attrs,
        "data-text-mart": f"marts.{mart}",
        "data-text-column": column,
        "data-where": json.dumps(dict(where), sort_keys=True),
    }
    rendered = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
    return f'<em class="flag {css}"{rendered}>{esc(text)}</em>'


def withdrawn_reason(withdrawal: dict | None) -> str:
    """Why an unrated system is not rated when it was withdrawn from the study (a row of
    ``published_runs.withdrawn``): ``withdrawn from this study (YYYY-MM-DD HH:MM: reason)``,
    the time and reason ``tsrate studies`` shows; empty when it was not withdrawn."""
    if not withdrawal:
        return ""
    when = str(withdrawal.get("withdrawn_at") or "")[:16]
    reason = " ".join(str(withdrawal.get("reason") or "").split())
    return esc(
        f"withdrawn from this study ({when}: {reason})"
        if reason
        else f"withdrawn from this study ({when})"
    )
