"""A study of new tickers runs end to end without editing any tracked file: the company
metadata comes from the price file's columns or from --companies, and is stored with the
study (raw.studies), not in seeds/companies.csv."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import duckdb
import numpy as np
import pandas as pd
import pytest

from tsrate.config import project_dir

pytestmark = pytest.mark.slow

#: ticker -> (company name, industry)
COMPANIES = {"ZZA": ("Zeta A Corp", "Widgets"), "ZZB": ("Zeta B Inc", "Widgets"),
             "ZZC": ("Zeta C plc", "Gadgets")}  # fmt: skip
STUDY = ["--tickers", "ZZA,ZZB,ZZC", "--start", "2022-01-03", "--end", "2022-10-14",
         "--context-length", "30", "--horizon", "5", "--stride", "3",
         "--systems", "naive,random"]  # fmt: skip


def prices(with_companies: bool) -> pd.DataFrame:
    dates = pd.bdate_range("2022-01-03", periods=200).strftime("%Y-%m-%d")
    frames = []
    for i, (ticker, (name, industry)) in enumerate(COMPANIES.items()):
        steps = np.random.default_rng(i).normal(0, 0.01, len(dates))
        frame = pd.DataFrame({"ticker": ticker, "date": dates,
                              "close": 40.0 * (i + 1) * np.exp(np.cumsum(steps))})  # fmt: skip
        if with_companies:
            frame = frame.assign(company_name=name, industry=industry)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def tsrate(warehouse, *args):
    return subprocess.run(
        [sys.executable, "-m", "tsrate.cli", *args],
        env=dict(os.environ, TSRATE_WAREHOUSE=str(warehouse)), cwd=project_dir(),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def tracked_state() -> str:
    """A fingerprint of every tracked file as it is on disk (edits included)."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=project_dir(), capture_output=True, check=True
    ).stdout.split(b"\0")
    digest = hashlib.sha256()
    for name in filter(None, files):
        path = project_dir() / name.decode()
        digest.update(name + (path.read_bytes() if path.is_file() else b""))
    return digest.hexdigest()


def test_a_new_ticker_study_runs_from_the_price_files_columns(tmp_path):
    before = tracked_state()
    warehouse = tmp_path / "tsrate.duckdb"
    bare = tmp_path / "bare.csv"
    prices(False).to_csv(bare, index=False)
    refused = tsrate(warehouse, "run", "--file", str(bare), *STUDY)
    assert refused.returncode == 2
    lines = [x for x in refused.stderr.splitlines() if "'ZZC'" in x]
    assert len(lines) == 1 and str(bare) in lines[0] and "industry" in lines[0]
    assert "--companies FILE" in lines[0] and "did you mean" not in lines[0]

    priced = tmp_path / "prices.csv"
    prices(True).to_csv(priced, index=False)
    result = tsrate(warehouse, "run", "--file", str(priced), *STUDY)
    assert result.returncode == 0, result.stderr[-3000:]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        labelled = con.execute(
            "select distinct ticker, company_name, industry from marts.window_errors order by 1"
        ).fetchall()
        stored = con.execute(
            "select s.companies from raw.studies s join raw.runs r using (study_id)"
        ).fetchall()
        ratings = con.execute("select count(*) from marts.ratings").fetchone()[0]
    finally:
        con.close()
    assert labelled == [(t, n, i) for t, (n, i) in COMPANIES.items()]
    assert [(c["ticker"], c["industry"]) for c in json.loads(stored[0][0])] == [
        (t, i) for t, (_, i) in COMPANIES.items()
    ]
    assert ratings > 0
    assert tracked_state() == before  # no tracked file was edited


def test_companies_file_defines_the_metadata_and_an_impossible_metric_has_a_reason(tmp_path):
    warehouse = tmp_path / "tsrate.duckdb"
    bare = tmp_path / "bare.csv"
    prices(False).to_csv(bare, index=False)
    companies = tmp_path / "companies.csv"
    # one company per industry: wrs_company (companies inside one industry) cannot exist
    industries = {"ZZA": "Widgets", "ZZB": "Tools", "ZZC": "Gadgets"}
    pd.DataFrame(
        [{"ticker": t, "company_name": n, "industry": industries[t]}
         for t, (n, _) in COMPANIES.items()]
    ).to_csv(companies, index=False)  # fmt: skip
    stored = tsrate(warehouse, "ingest", str(bare), "--companies", str(companies))
    assert stored.returncode == 0, stored.stderr
    assert "company metadata of 3 ticker(s)" in stored.stdout

    from tsrate.robustness.study import check_study

    assert check_study(dict(_flags()), "none", warehouse=warehouse) == []
    assert check_study(dict(_flags()), "none", warehouse=tmp_path / "other.duckdb") != []

    # the marts read below and their upstream (the first test builds every mart)
    marts = "+robustness_scores +window_errors"
    result = tsrate(warehouse, "run", "--source", "none", *STUDY, "--select", marts)
    assert result.returncode == 0, result.stderr[-3000:]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = con.execute(
            "select metric, count(*), count(raw_score), any_value(score_reason) "
            "from marts.robustness_scores where measure = 'wrs' group by 1 order by 1"
        ).fetchall()
        labelled = con.execute(
            "select distinct ticker, industry from marts.window_errors order by 1"
        ).fetchall()
    finally:
        con.close()
    assert labelled == sorted(industries.items())
    (company, n_company, scored_company, reason), (industry, n_industry, scored, none) = rows
    assert (company, industry) == ("wrs_company", "wrs_industry")
    # every system x perturbation x outcome of wrs_industry has a wrs_company row, unscored
    assert n_company == n_industry == scored and scored_company == 0 and none is None
    assert "no industry of the study has two companies" in reason


def _flags() -> dict:
    keys = {"--tickers": "study_tickers", "--start": "study_start", "--end": "study_end",
            "--context-length": "context_length", "--horizon": "horizon",
            "--stride": "stride", "--systems": "systems"}  # fmt: skip
    return {keys[STUDY[i]]: STUDY[i + 1] for i in range(0, len(STUDY), 2)}
