"""The reading's warning on systems rated from forecasts made on other prices.

In a study, a system the selected run did not forecast itself (an import, a system left out of
a later run) is rated from an earlier run's forecasts. When the prices changed in between, those
forecasts were made on another series than the one they are scored against;
``marts.run_provenance.source_inputs_reason`` says so per system, and the reading repeats it
where an analyst looks first."""

from __future__ import annotations

import pandas as pd

from tsrate.html.charts import esc
from tsrate.robustness.report.data import ReportData
from tsrate.robustness.report.numbers import display_names


def source_warnings(provenance: pd.DataFrame) -> pd.DataFrame:
    """The systems whose ``source_inputs_reason`` is set (none in snapshots from before the
    column), in system order: system_id, source_inputs_reason."""
    columns = ["system_id", "source_inputs_reason"]
    if provenance.empty or "source_inputs_reason" not in provenance:
        return pd.DataFrame(columns=columns)
    flagged = provenance[provenance["source_inputs_reason"].notna()]
    return flagged.sort_values("system_id")[columns].reset_index(drop=True)


def source_note(data: ReportData) -> str:
    """One paragraph naming each system rated from forecasts on other prices (empty when every
    system was forecast on the selected run's series)."""
    flagged = source_warnings(data.run_provenance)
    if flagged.empty:
        return ""
    names = display_names(data)
    sentences = [
        f"<b>{esc(names.get(row.system_id, row.system_id))}</b>: {esc(row.source_inputs_reason)}."
        for row in flagged.itertuples()
    ]
    return (
        '<p class="reading" id="sources">Not forecast on this run\'s prices: '
        + " ".join(sentences)
        + ' <span class="source">Source: <code>marts.run_provenance</code>.</span></p>'
    )
