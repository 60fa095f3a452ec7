"""ViT-num-spec training data (sample minus the study's companies, leak-free periods) and the
training flow / `tsrate train`: checkpoint + metadata under the warehouse directory,
registered in raw.model_checkpoints, reused unless --force.

Real pieces: the bundled S&P sample, a tiny ViT trained here, a temporary DuckDB file and a
Prefect test API.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tsrate import TsrateError
from tsrate.config import Study, project_vars
from tsrate.platform.warehouse import connect

pytest.importorskip("torch")
vit = pytest.importorskip("tsrate.systems.vit_num_spec")

STUDY_TICKERS = ("AAPL", "MSFT", "PFE", "MRK", "JPM", "BAC")


def test_default_training_tickers_are_the_sample_without_the_study():
    tickers = vit.training_tickers(STUDY_TICKERS, [])
    assert set(tickers).isdisjoint(STUDY_TICKERS)
    assert set(tickers) | set(STUDY_TICKERS) == set(vit.sample_tickers())
    assert vit.training_tickers(STUDY_TICKERS, "ko, xom") == ("KO", "XOM")
    with pytest.raises(TsrateError, match=r"include study companies \['MRK'\]"):
        vit.training_tickers(STUDY_TICKERS, ["KO", "mrk"])


def test_default_periods_are_the_documented_ones_and_end_before_the_default_study():
    variables = project_vars()
    study = Study.from_vars()
    periods = {}
    for variant in vit.VARIANTS:
        settings = vit.settings_from_vars(
            variant,
            study.tickers,
            study.context_length,
            study.horizon,
            variables,
            study_period=(study.start, study.end),
        )
        periods[variant] = (settings.train_start, settings.train_end)
        assert settings.train_end < study.start
        assert set(settings.tickers).isdisjoint(study.tickers)
    assert periods["vit_num_spec_precovid"] == (dt.date(2000, 1, 3), dt.date(2014, 12, 31))
    assert periods["vit_num_spec_covid"] == (dt.date(2020, 3, 2), dt.date(2021, 12, 28))


def test_a_training_period_reaching_into_the_study_is_an_error():
    with pytest.raises(TsrateError, match="overlaps the study period 2021-12-29"):
        vit.settings_from_vars(
            "vit_num_spec_covid",
            ("AAPL",),
            80,
            20,
            {"vit_covid_end": "2021-12-31"},
            study_period=(dt.date(2021, 12, 29), dt.date(2022, 12, 28)),
        )


def test_unknown_variant_is_named():
    from flows.train_vit import variants_to_train

    assert variants_to_train("all") == ["vit_num_spec_covid", "vit_num_spec_precovid"]
    with pytest.raises(TsrateError, match="unknown ViT-num-spec system 'vit_x'"):
        variants_to_train("vit_x")


TINY = {
    "vit_size": "tiny",
    "vit_training_tickers": ["KO", "XOM"],
    "vit_max_training_windows": 120,
    "vit_max_epochs": 2,
}
STUDY = ["--tickers", "AAPL", "--context-length", "40", "--horizon", "10"]


@pytest.mark.slow
def test_train_command_trains_registers_reuses_and_forces(
    tmp_path, monkeypatch, capsys, prefect_harness
):
    from tsrate.cli import main

    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("TSRATE_MODEL_DIR", raising=False)
    monkeypatch.setenv("TSRATE_MULTIMODAL_VARS", json.dumps(TINY))
    monkeypatch.setenv("TSRATE_VIT_DEVICE", "cpu")

    assert main(["train", "--system", "vit_num_spec_covid", *STUDY]) == 0
    checkpoints = sorted((tmp_path / "wh" / "models" / "vit_num_spec").glob("*.pt"))
    assert [p.name.split("-")[0] for p in checkpoints] == ["vit_num_spec_covid"]
    metadata = json.loads(checkpoints[0].with_suffix(".pt.json").read_text())
    assert metadata["tickers"] == ["KO", "XOM"] and metadata["last_window_end"] <= "2021-12-28"
    assert metadata["git_revision"]  # a commit hash here, "unknown" outside a git checkout
    assert "registered in raw.model_checkpoints" in capsys.readouterr().out

    def registered():
        with connect(warehouse, read_only=True) as con:
            return con.execute(
                "select checkpoint_path, tickers, train_start, train_end, validation_loss, "
                "git_revision, registered_at, settings_json from raw.model_checkpoints"
            ).fetchall()

    rows = registered()
    assert len(rows) == 1
    path, tickers, start, end, loss, revision, first_registration, settings = rows[0]
    assert path == str(checkpoints[0]) and tickers == "KO,XOM"
    assert (start, end) == (dt.date(2020, 3, 2), dt.date(2021, 12, 28))
    assert (
        loss == pytest.approx(metadata["validation_loss"]) and revision == metadata["git_revision"]
    )
    assert json.loads(settings)["size"] == "tiny"

    stamp = checkpoints[0].stat().st_mtime_ns
    assert main(["train", "--system", "vit_num_spec_covid", *STUDY]) == 0  # reuses
    assert checkpoints[0].stat().st_mtime_ns == stamp and len(registered()) == 1

    assert main(["train", "--system", "vit_num_spec_covid", "--force", *STUDY]) == 0
    assert checkpoints[0].stat().st_mtime_ns > stamp  # retrained, same key, row replaced
    rows = registered()
    assert len(rows) == 1 and rows[0][6] > first_registration

    monkeypatch.setenv(
        "TSRATE_MULTIMODAL_VARS", json.dumps({**TINY, "vit_training_tickers": ["AAPL"]})
    )
    assert main(["train", "--system", "vit_num_spec_covid", *STUDY]) == 2
    assert "include study companies ['AAPL']" in capsys.readouterr().err
