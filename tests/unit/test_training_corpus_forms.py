"""A training_corpus may start with the systems seed's prefixes, 'none: ' (trains on nothing)
and 'exact: ' (a checkpoint tsrate trained), which the marts read (window_leakage matches
'none:%'); a text that starts like one but is not one exactly would be read as a plain
statement. An import's ``--metadata training_corpus`` and a seed row are read by the same
rule: each malformed form is refused in one line naming the allowed forms, an import storing
nothing. How the marts then judge an import's 'none:': tests/integration/
test_import_training_leakage.py."""

from __future__ import annotations

import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.config import project_dir
from tsrate.robustness.blackbox.registry import system_metadata
from tsrate.systems.registry import load_systems_seed

#: well-formed statements: each prefix as the seed writes it, and plain statements
GOOD = [
    "none: fitted on each window's own context only",
    "exact: the registered checkpoint's training tickers and period",
    "public datasets named in the paper",
    "None of the study's tickers: web text up to 2023",  # a sentence, not a prefix
    "nonexistent in public data",
]
#: texts that start like a prefix but are not one exactly
MALFORMED = ["None: no training", "NONE: x", "none:no space", "none - fitted", "none", "exact:",
             "Exact: checkpoint", "none; fitted", "none—fitted"]  # fmt: skip
ALLOWED = (
    "write 'none: <why it trains on nothing>', 'exact: <the checkpoint tsrate trained>', or "
    "a statement of the corpus that starts with neither word"
)


def _seed_file(tmp_path, corpus: str):
    """The project's systems seed with naive's training_corpus set to ``corpus``."""
    seed = pd.read_csv(
        project_dir() / "seeds" / "systems.csv",
        dtype=str,
        keep_default_na=False,
    )
    seed.loc[seed["system_id"] == "naive", "training_corpus"] = corpus
    path = tmp_path / "systems.csv"
    seed.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("corpus", GOOD)
def test_the_allowed_forms_are_kept_by_an_import_and_read_from_the_seed(tmp_path, corpus):
    seed = load_systems_seed(_seed_file(tmp_path, corpus)).set_index("system_id")
    assert seed.loc["naive", "training_corpus"] == corpus
    if corpus.startswith("exact: "):  # a seed system's checkpoint: refused on an import
        return
    row = system_metadata("mine", {"training_corpus": corpus}, ["P0"], "preds.csv")
    assert row["training_corpus"] == corpus


def test_an_import_cannot_claim_a_checkpoint_tsrate_trained():
    with pytest.raises(TsrateError) as imported:
        system_metadata("mine", {"training_corpus": GOOD[1]}, ["P0"], "preds.csv")
    message = str(imported.value)
    assert "\n" not in message and message.startswith("metadata of system 'mine' rejected")
    assert "'exact: ...' means a checkpoint tsrate trained" in message
    assert "'none: <why>'" in message


@pytest.mark.parametrize("corpus", MALFORMED)
def test_a_malformed_prefix_is_refused_in_one_line_naming_the_allowed_forms(tmp_path, corpus):
    with pytest.raises(TsrateError) as imported:
        system_metadata("mine", {"training_corpus": corpus}, ["P0"], "preds.csv")
    message = str(imported.value)
    assert "\n" not in message and message.startswith("metadata of system 'mine' rejected")
    assert f"training_corpus {corpus[:40]!r} has a malformed prefix: {ALLOWED}" in message

    path = _seed_file(tmp_path, corpus)
    with pytest.raises(TsrateError) as seeded:
        load_systems_seed(path)
    assert str(seeded.value) == (
        f"{path}: system 'naive': training_corpus {corpus[:40]!r} has a malformed prefix: {ALLOWED}"
    )


def test_the_shipped_seed_reads_as_it_is():
    seed = load_systems_seed().set_index("system_id")
    assert seed.loc["naive", "training_corpus"].startswith("none: ")
