"""The understanding report's ratings table: each mean rating says over how many features
it is taken. A MAPE feature of a lone system away from 0 has no rating (null, with its
reason): the mean of the others must not be read as a mean over every feature.

The warehouse is a real DuckDB file holding the two marts the table reads; the expected
counts are counted by hand from the rows below."""

from __future__ import annotations

import html
import re

import duckdb

from tsrate.suites.understanding import report as rep

RATINGS = [
    # metric, feature, rating, reason
    ("retrieval_mape", "trend", 2, None),
    ("retrieval_mape", "seasonality", None, "lone system away from the ideal: no worst value"),
    ("retrieval_mape", "anomaly", None, "lone system away from the ideal: no worst value"),
    ("retrieval_accuracy", "trend", 3, None),
    ("retrieval_accuracy", "seasonality", 1, None),
]


def ratings_rows(tmp_path) -> dict[str, list[str]]:
    warehouse = tmp_path / "und.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.und_ratings (suite_run_id varchar, prompting varchar, "
            "metric varchar, feature varchar, system_id varchar, raw_score double, "
            "rating integer, rating_levels integer, higher_is_better boolean, rank integer, "
            "rating_reason varchar, n_systems integer)"
        )
        con.execute(
            "create table marts.und_rating_stability (suite_run_id varchar, prompting "
            "varchar, metric varchar, feature varchar, system_id varchar, raw_score double, "
            "rating integer, rating_levels integer, rating_reason varchar, "
            "share_at_rating double)"
        )
        for metric, feature, rating, reason in RATINGS:
            higher = metric.endswith("accuracy")
            con.execute(
                "insert into marts.und_ratings values ('r', 'zero_shot', ?, ?, 'llm', 0.5, ?, "
                "3, ?, 1, ?, 1)",
                [metric, feature, rating, higher, reason],
            )
            con.execute(
                "insert into marts.und_rating_stability values ('r', 'zero_shot', ?, ?, "
                "'llm', 0.5, ?, 3, ?, ?)",
                [metric, feature, rating, reason, None if rating is None else 1.0],
            )
    text = rep.write_report(warehouse, tmp_path / "report.html").read_text(encoding="utf-8")
    section = text.split("<h2>Ratings (mean rating over features, with stability)</h2>")[1]
    table = section.split("</table>")[0]
    header = [html.unescape(h).lower() for h in re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", table)]
    rows = {}
    for body in re.findall(r"<tr>(.*?)</tr>", table)[1:]:
        cells = [html.unescape(c) for c in re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", body)]
        rows[cells[header.index("metric")]] = dict(zip(header, cells, strict=True))
    return rows


def test_the_mean_rating_names_how_many_features_it_averages(tmp_path):
    """retrieval_mape: 1 of its 3 features rated (rating 2): mean 2 over 1 rated feature, 2
    not rated;
    retrieval_accuracy: both features rated, mean (3 + 1) / 2 = 2 over 2."""
    rows = ratings_rows(tmp_path)
    mape, accuracy = rows["retrieval_mape"], rows["retrieval_accuracy"]
    assert float(mape["mean rating"]) == 2.0
    assert mape["n not rated"] == "2" and mape["n rated"] == "1"
    assert float(accuracy["mean rating"]) == 2.0
    assert accuracy["n not rated"] == "0" and accuracy["n rated"] == "2"
