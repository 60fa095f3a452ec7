"""The understanding verdict compares systems only on ratings of one prompting style: each
style is rated on its own (rating_table groups by prompting), so a chain-of-thought rating
and a zero-shot one rank against different systems. The report labels chain-of-thought
systems ``<system> · cot`` and used to drop ``prompting`` before the verdict, which then took
(suite run, metric, feature) for the score: a chain-of-thought system at the top of its own
group tied with the zero-shot leader it was never rated against.

Hand-worked marts (one metric, one feature, 3 levels, higher is better): zero-shot
und_analyst 3, alpha 2, und_random 1; chain of thought llm 3, und_random 1. Zero-shot is the
larger group (3 systems), so the verdict compares those three; goodness 1, 0.5, 0:
und_analyst does best, und_random worst, 100 points apart; the chain-of-thought pair is
named as not compared.
"""

from __future__ import annotations

import re

import duckdb
import pandas as pd

from tsrate.suites.understanding.report import write_report

ROWS = [  # prompting, system, rating, rank
    ("zero_shot", "und_analyst", 3, 1), ("zero_shot", "alpha", 2, 2),
    ("zero_shot", "und_random", 1, 3), ("cot", "llm", 3, 1), ("cot", "und_random", 1, 2),
]  # fmt: skip


def _snapshot(path) -> None:
    ratings = pd.DataFrame(
        [
            dict(suite_run_id="u1", metric="retrieval_accuracy", prompting=p, feature="trend",
                 system_id=s, raw_score=float(r), rating=r, rating_levels=3,
                 higher_is_better=True, rank=k, rating_reason=None,
                 n_systems=3 if p == "zero_shot" else 2)
            for p, s, r, k in ROWS
        ]
    )  # fmt: skip
    stability = ratings[["suite_run_id", "prompting", "metric", "feature", "system_id"]].assign(
        share_at_rating=0.9, share_mc_se=0.02
    )
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema marts")
        con.register("r", ratings)
        con.register("s", stability)
        con.execute("create table marts.und_ratings as select * from r")
        con.execute("create table marts.und_rating_stability as select * from s")
    finally:
        con.close()


def _verdict(tmp_path) -> str:
    warehouse = tmp_path / "tsrate.duckdb"
    _snapshot(warehouse)
    html = write_report(warehouse, tmp_path / "understanding.html").read_text()
    section = html.split('<section id="verdict">', 1)[1].split("</section>", 1)[0]
    return re.sub(r"<[^>]+>", "", section)


def test_the_verdict_never_ties_a_chain_of_thought_rating_with_a_zero_shot_one(tmp_path):
    text = _verdict(tmp_path)
    assert "und_analyst does best" in text
    assert "tie for best" not in text
    assert "und_random worst (0 %), 100 points apart" in text
    assert "not compared: llm · cot and und_random · cot, rated on other scores" in text


def test_the_summary_ranks_only_the_compared_style(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    _snapshot(warehouse)
    html = write_report(warehouse, tmp_path / "understanding.html").read_text()
    table = html.split('<section id="overview">', 1)[1].split("</section>", 1)[0]
    ranks = dict(
        (system, rank)
        for rank, system in re.findall(r"<tr><td>([^<]*)</td><td><code>([^<]*)</code>", table)
    )
    assert ranks == {"und_analyst": "1", "alpha": "2", "und_random": "3",
                     "llm · cot": "–", "und_random · cot": "–"}  # fmt: skip
