"""The report's radars in the shape of Figures 5-6: robustness and accuracy ranked per
perturbation and averaged over them (:func:`.figures.radar_for`)."""

from __future__ import annotations

from tsrate.html.charts import chart_name, esc
from tsrate.robustness.report.coverage import fewer_marks
from tsrate.robustness.report.data import ACCURACY_METRICS, ROBUSTNESS_METRICS, ReportData
from tsrate.robustness.report.figures import chart_figure, metric_directions, radar_for
from tsrate.robustness.report.numbers import (
    float_value,
    perturbation_order,
    provenance,
    source_note,
    system_colours,
    system_order,
)


def radar_section(data: ReportData, charts: dict[str, dict]) -> str:
    """Figures 5-6: robustness and accuracy radars per perturbation and averaged."""
    directions = metric_directions(data)
    systems = system_order(data)
    colours = system_colours(systems)
    ratings, summary = data.ratings, data.system_summary
    fewer = fewer_marks(data)
    # a system rated on fewer perturbations: its mark after its name in every legend; it
    # averages over its own perturbations, said under each average (the tooltip's sentence)
    marks = {system: mark for system, (mark, _) in fewer.items()}
    fewer_note = "".join(f" {esc(tip)}" for _, tip in fewer.values())
    parts = [
        '<section id="radars"><h2>Robustness and accuracy by rank, in the shape of Figures 5–6</h2>'
    ]
    parts.append(
        "<p>The paper's radar plots, unrolled: one column per metric ranks the systems in the "
        "chart, the best raw score at the top, the worst at the bottom, the others evenly "
        "between them by rank, equal scores together (↓ lower raw score is better, ↑ higher is "
        "better), so a line that stays high is better. A rank scale, not a min-max one, so that "
        "an outlier such as the Biased baseline cannot push every other system to the top; the "
        "distances are in the tables and tooltips. Hover a point for its raw score and mart "
        "row; click a legend entry to highlight a system.</p>"
    )
    for family, metrics, paper_figure in (
        ("Robustness", ROBUSTNESS_METRICS, "Figure 5"),
        ("Accuracy", ACCURACY_METRICS, "Figure 6"),
    ):
        parts.append(f'<h3>{family} ({paper_figure})</h3><div class="grid">')
        for perturbation in perturbation_order(data):

            def value_of(system: str, metric: str, perturbation=perturbation):
                value = float_value(
                    ratings,
                    "raw_score",
                    system_id=system,
                    metric=metric,
                    perturbation_id=perturbation,
                )
                where = {
                    "run_id": data.run_id,
                    "metric": metric,
                    "perturbation_id": perturbation,
                    "system_id": system,
                }
                return value, (
                    provenance("ratings", "raw_score", where, value) if value is not None else {}
                )

            title = f"{family} · {perturbation}"
            spec = radar_for(title, metrics, systems, colours, value_of, directions, marks)
            if spec:
                parts.append(
                    chart_figure(
                        chart_name(f"radar {family} {perturbation}"),
                        spec,
                        charts,
                        f"{esc(title)}. Source: <code>marts.ratings</code> (raw_score).",
                    )
                )

        def average_of(system: str, metric: str):
            value = float_value(summary, "avg_raw_score", system_id=system, metric=metric)
            where = {"run_id": data.run_id, "metric": metric, "system_id": system}
            return value, (
                provenance("system_summary", "avg_raw_score", where, value)
                if value is not None
                else {}
            )

        title = f"{family} · average over perturbations"
        spec = radar_for(title, metrics, systems, colours, average_of, directions, marks)
        if spec:
            parts.append(
                chart_figure(
                    chart_name(f"radar {family} average"),
                    spec,
                    charts,
                    f"{esc(title)}. Source: <code>marts.system_summary</code> (avg_raw_score)."
                    + fewer_note,
                )
            )
        parts.append("</div>")
    parts.append(
        '<p class="note">P0 is the control: APE and PIE measure the other perturbations '
        "against it, so P0 has only its WRS (see the rating tables) and no robustness radar.</p>"
    )
    parts.append(source_note("ratings", "system_summary"))
    parts.append("</section>")
    return "".join(parts)
