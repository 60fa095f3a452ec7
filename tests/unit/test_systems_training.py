"""What each system was trained on: the systems seed's training_corpus, training_cutoff and
training_reason, and how run_provenance carries them.

A null always has its reason, a statement is never invented: the statistical baselines state
'none:', the ViTs defer to their checkpoint ('exact:'), fracast's statement names exactly
the datasets its installed package's README lists, and a cutoff is a real date.
"""

from __future__ import annotations

import importlib.metadata
import re
from html import escape
from pathlib import Path

import pandas as pd
import pytest

from tsrate.robustness.marts.provenance import UNKNOWN_TRAINING, run_provenance
from tsrate.systems.registry import load_systems_seed

NO_TRAINING = {"naive", "seasonal_naive", "arima", "random", "biased"}


@pytest.fixture(scope="module")
def seed() -> pd.DataFrame:
    return load_systems_seed().set_index("system_id")


def test_every_empty_training_column_has_its_reason_and_no_other_does(seed):
    for system, row in seed.iterrows():
        missing = not row.training_corpus or not row.training_cutoff
        assert bool(row.training_reason) == missing, system
        if row.training_cutoff:
            assert pd.Timestamp(row.training_cutoff).strftime("%Y-%m-%d") == row.training_cutoff


def test_baselines_train_on_nothing_and_only_they_say_so(seed):
    none = {s for s, row in seed.iterrows() if row.training_corpus.startswith("none:")}
    assert none == NO_TRAINING
    assert (seed.loc[sorted(NO_TRAINING), "training_cutoff"] == "").all()
    exact = {s for s, row in seed.iterrows() if row.training_corpus.startswith("exact:")}
    assert exact == {"vit_num_spec_precovid", "vit_num_spec_covid"}


def test_endpoint_llms_state_nothing_they_cannot_know(seed):
    """Gemini and Phi-3 serve whatever model the endpoint runs: no corpus, no cutoff."""
    for system in ("gemini_numeric", "gemini_numeric_image", "phi3_numeric",
                   "phi3_numeric_image"):  # fmt: skip
        assert (
            seed.loc[system, "training_corpus"] == "" and seed.loc[system, "training_cutoff"] == ""
        )
        assert seed.loc[system, "training_reason"]


def test_fracasts_statement_names_the_datasets_of_its_package_readme(seed):
    """Read independently from the installed wheel's metadata: every Hugging Face dataset its
    README lists for pretraining is in the seed's statement, and no other."""
    try:
        # the wheel's METADATA file as text (its body is the README): the parsed message's
        # payload came back empty after other tests in one session
        readme = importlib.metadata.distribution("fracast").read_text("METADATA") or ""
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("fracast is not installed")
    section = readme.split("## Public pretraining data", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([\w.-]+/[\w.-]+)`", section))
    statement = seed.loc["fracast", "training_corpus"]
    stated = set(re.findall(r"\b([A-Z][\w.-]*/[\w.-]+|[a-z][\w.-]*/[\w.-]+)", statement))
    assert listed and listed == stated
    assert "TinyCast" in statement and "TinyCast" in readme


@pytest.fixture(autouse=True)
def no_git(monkeypatch):
    """run_provenance asks git for the checkout's revision: a process, which unit tests do
    not start; the training columns under test do not depend on it."""
    from tsrate.robustness.marts import provenance

    monkeypatch.setattr(provenance, "git_revision", lambda project: (None, "not a checkout"))


def provenance_of(systems: pd.DataFrame | None) -> pd.DataFrame:
    runs = pd.DataFrame(
        [dict(run_id="r1", tickers=["AAA"], study_start="2022-01-03", study_end="2022-01-05",
              study_hash="h")]
    )  # fmt: skip
    prices = pd.DataFrame(
        dict(ticker="AAA", price_date=pd.to_datetime(["2022-01-03", "2022-01-04"]),
             close=[1.0, 2.0])
    )  # fmt: skip
    partitions = pd.DataFrame(
        dict(run_id="r1", system_id=["arima", "gemma", "mystery", "quiet"], input_key="k")
    )
    return run_provenance(runs, prices, partitions, {}, Path("/nonexistent"), systems)


def test_run_provenance_carries_the_seed_columns_and_gives_every_null_a_reason():
    systems = pd.DataFrame(
        [
            dict(system_id="arima", training_corpus="none: fitted on the context",
                 training_cutoff=None, training_reason="no training: nothing to cut off"),
            dict(system_id="gemma", training_corpus="web text",
                 training_cutoff=pd.Timestamp("2024-08-31"), training_reason=None),
            dict(system_id="quiet", training_corpus=None, training_cutoff=None,
                 training_reason=None),
        ]
    )  # fmt: skip
    out = provenance_of(systems).set_index("system_id")
    assert out.loc["arima", "training_data"] == "none: fitted on the context"
    assert pd.isna(out.loc["arima", "training_cutoff"])
    assert out.loc["arima", "training_data_reason"] == "no training: nothing to cut off"
    assert out.loc["gemma", "training_cutoff"] == pd.Timestamp("2024-08-31")
    assert pd.isna(out.loc["gemma", "training_data_reason"])
    # outside the systems' rows (imported) or a row without a reason: unknown, said so
    for system in ("mystery", "quiet"):
        assert pd.isna(out.loc[system, "training_data"])
        assert out.loc[system, "training_data_reason"] == UNKNOWN_TRAINING
    assert str(out["training_cutoff"].dtype).startswith("datetime64")


def test_without_system_rows_every_system_is_unknown():
    out = provenance_of(None)
    assert out["training_data"].isna().all()
    assert (out["training_data_reason"] == UNKNOWN_TRAINING).all()


def test_the_report_shows_the_cutoff_beside_the_statement():
    from tsrate.robustness.report.probabilistic import provenance_section

    provenance = provenance_of(
        pd.DataFrame(
            [
                dict(
                    system_id="gemma",
                    training_corpus="web text",
                    training_cutoff=pd.Timestamp("2024-08-31"),
                    training_reason=None,
                )
            ]
        )  # fmt: skip
    )
    html = provenance_section(provenance)
    assert "web text; data up to 2024-08-31" in html
    assert escape(f"unknown: {UNKNOWN_TRAINING}") in html  # the systems without a row
    older = provenance.drop(columns="training_cutoff")  # a snapshot from before the column
    assert "web text</td>" in provenance_section(older)
