"""What `tsrate systems` no longer recomputes (issue 29: the listing in < 2 s): the parsed
`vars:` of dbt_project.yml and a ViT variant's checkpoint key. Each cache must give what a
fresh computation gives, and must notice when its input changes."""

from __future__ import annotations

import dataclasses

import pytest

from tsrate.config import Study, project_vars
from tsrate.inputs.images import rendering_fingerprint
from tsrate.inputs.sentiment import multimodal_vars, settings_key
from tsrate.systems import vit_training
from tsrate.systems.vit_num_spec import VitNumSpecSystem
from tsrate.systems.vit_training import (
    prices_fingerprint,
    remembered_key,
    settings_from_vars,
    training_prices,
)


def test_project_vars_follow_the_file_and_copies_are_independent(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: t\nvars:\n  horizon: 20\n  tickers: [A]\n")
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(project))
    first = project_vars()
    assert first == {"horizon": 20, "tickers": ["A"]}
    first["tickers"].append("B")  # a caller's change must not reach the next caller
    assert project_vars()["tickers"] == ["A"]
    (project / "dbt_project.yml").write_text("name: t\nvars:\n  horizon: 30\n  tickers: [A, C]\n")
    assert project_vars() == {"horizon": 30, "tickers": ["A", "C"]}


def variant_settings(variant: str):
    study = Study.from_vars()
    return settings_from_vars(
        variant,
        study.tickers,
        study.context_length,
        study.horizon,
        multimodal_vars(),
        study_period=(study.start, study.end),
    )


def settings():
    return variant_settings("vit_num_spec_covid")


def test_remembered_key_is_computed_once_per_sample_stamp(tmp_path, monkeypatch):
    sample = tmp_path / "sample.csv.gz"
    sample.write_bytes(b"one")
    monkeypatch.setattr("tsrate.robustness.sample.skfolio_sample_path", lambda: sample)
    calls = []

    def compute() -> str:
        calls.append(1)
        return f"{len(calls):016x}"

    first = remembered_key(settings(), tmp_path, compute)
    assert first == f"{1:016x}" and len(calls) == 1
    assert remembered_key(settings(), tmp_path, compute) == first and len(calls) == 1
    other = dataclasses.replace(settings(), max_epochs=settings().max_epochs + 1)
    assert remembered_key(other, tmp_path, compute) == f"{2:016x}"  # other settings
    sample.write_bytes(b"a new sample file")  # another size and mtime: hashed again
    assert remembered_key(settings(), tmp_path, compute) == f"{3:016x}"
    for path in (tmp_path / "vit_num_spec" / "keys").iterdir():
        path.write_text("not a key")  # a damaged entry is recomputed, not trusted
    assert remembered_key(settings(), tmp_path, compute) == f"{4:016x}"


def test_the_system_key_equals_the_hash_of_its_training_prices(tmp_path):
    expected = settings_key(
        dataclasses.asdict(settings()),
        prices_fingerprint(training_prices(settings())),
        rendering_fingerprint(),
    )
    assert VitNumSpecSystem(settings(), cache_dir=tmp_path).key == expected  # computed
    assert VitNumSpecSystem(settings(), cache_dir=tmp_path).key == expected  # remembered
    # prices given by the caller are hashed, never looked up
    given = training_prices(settings()).iloc[:-1]
    own = VitNumSpecSystem(settings(), prices=given, cache_dir=tmp_path).key
    assert own == settings_key(
        dataclasses.asdict(settings()), prices_fingerprint(given), rendering_fingerprint()
    )
    assert own != expected


def test_no_sample_file_means_no_cache(tmp_path, monkeypatch):
    monkeypatch.setattr("tsrate.robustness.sample.skfolio_sample_path", lambda: None)
    calls = []
    for _ in range(2):
        remembered_key(settings(), tmp_path, lambda: calls.append(1) or "0" * 16)
    assert len(calls) == 2
    assert not (tmp_path / "vit_num_spec").exists()
    assert vit_training.remembered_key is remembered_key


@pytest.mark.parametrize("variant", ["vit_num_spec_precovid", "vit_num_spec_covid"])
def test_listing_reads_no_prices_once_keys_are_known(tmp_path, monkeypatch, variant):
    system = VitNumSpecSystem(variant_settings(variant), cache_dir=tmp_path)
    assert system.availability().available
    monkeypatch.setattr(
        "tsrate.systems.vit_num_spec.training_prices",
        lambda s: pytest.fail("the listing read the training prices again"),
    )
    again = VitNumSpecSystem(variant_settings(variant), cache_dir=tmp_path)
    assert again.availability().available and again.key == system.key


def test_a_changed_colormap_or_layout_names_another_cached_model(tmp_path, monkeypatch):
    """The cached ViT and line-plot models learnt the images the drawing constants make:
    change the colormap's table (one colour level) or the line colour and both keys move,
    so a stale model is not reused; the key is otherwise stable."""
    from tsrate.inputs import images
    from tsrate.inputs.sentiment import LinePlotSettings

    def keys():
        vit = VitNumSpecSystem(settings(), prices=training_prices(settings()), cache_dir=tmp_path)
        return vit.key, LinePlotSettings().key

    before = keys()
    assert keys() == before
    changed = images.COLORMAP.copy()
    changed[128] = changed[128] + 1
    monkeypatch.setattr(images, "COLORMAP", changed)
    after_colormap = keys()
    assert after_colormap[0] != before[0] and after_colormap[1] != before[1]
    monkeypatch.setattr(images, "LINE_COLOUR", images.LINE_COLOUR[::-1].copy())
    after_colour = keys()
    assert after_colour[0] != after_colormap[0] and after_colour[1] != after_colormap[1]
