"""Language models registered under their own id (tsrate.systems.registered): the checks of
a registration, its storage (append-only, the latest wins), and how a registration reaches
the systems registry and the LLM settings (the same code as the seed's endpoint systems).
The end-to-end run is tests/integration/test_registered_llm.py."""

from __future__ import annotations

import dataclasses
import os

import duckdb
import pytest

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.systems import llm, registered
from tsrate.systems.registered import Registration, check_registration
from tsrate.systems.registry import create_system, load_systems_seed, resolve_systems

URL = "http://localhost:8000/v1"
SEED = ("naive", "phi3_numeric")


def refusal(**given) -> str:
    args = {"system_id": "my_llm", "base_url": URL, "model": "m", "seed_ids": SEED}
    args.update(given)
    with pytest.raises(TsrateError) as caught:
        check_registration(**args)
    message = str(caught.value)
    assert "\n" not in message and "nothing was stored" in message
    return message


def test_a_good_registration_is_normalised():
    got = check_registration("my_llm", URL + "/", " m ", None, False, None, SEED)
    assert got == Registration("my_llm", "my_llm", URL, "m", "", "numeric")
    image = check_registration("a.b-c_9", "https://h/x/v1", "m", "MY_KEY", True, "Mine", SEED)
    assert (image.modality, image.api_key_env, image.display_name) == (
        "numeric+image", "MY_KEY", "Mine"
    )  # fmt: skip
    assert image.implementation == "tsrate.systems.llm:a.b-c_9"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"system_id": "naive"}, "'naive' is a system of seeds/systems.csv"),
        ({"system_id": "ext", "imported_ids": ["ext"]}, "'ext' is an imported system"),
        ({"system_id": "My_LLM"}, "use 1 to 64 lower-case letters"),
        ({"system_id": "my llm"}, "use 1 to 64 lower-case letters"),
        ({"system_id": "-llm"}, "use 1 to 64 lower-case letters"),
        ({"system_id": "x" * 65}, "use 1 to 64 lower-case letters"),
        ({"base_url": "http://localhost:8000"}, "must be http(s)://HOST[:PORT]/.../v1"),
        ({"base_url": "http://localhost:8000/v1beta"}, "must be http(s)://HOST[:PORT]/.../v1"),
        ({"base_url": "ftp://localhost/v1"}, "must be http(s)://HOST[:PORT]/.../v1"),
        ({"base_url": "localhost:8000/v1"}, "must be http(s)://HOST[:PORT]/.../v1"),
        ({"model": "  "}, "--model is empty"),
        ({"api_key_env": "MY-KEY"}, "not the NAME of an environment variable"),
        ({"display_name": "a\nb"}, "--display-name 'a\\nb' holds control characters"),
    ],
)
def test_refusals_name_the_problem_and_a_hint(given, said):
    assert said in refusal(**given)


def test_a_key_given_instead_of_its_variable_is_never_repeated():
    message = refusal(api_key_env="sk-abcdef123456")
    assert "sk-a" not in message and "abcdef" not in message


def test_every_problem_is_named_at_once():
    message = refusal(system_id="Bad!", base_url="http://h/v2", model="")
    assert "lower-case" in message and "/v1" in message and "--model is empty" in message


def test_registrations_are_append_only_and_the_latest_wins():
    con = duckdb.connect()
    assert registered.registrations(con) == []  # no table yet: none
    first = check_registration("my_llm", URL, "m1", seed_ids=SEED)
    assert registered.register(con, first) is None
    assert registered.register(con, first) == first  # the same again: nothing written
    assert con.execute("select count(*) from raw.registered_llms").fetchone()[0] == 1
    moved = check_registration("my_llm", "http://other:9000/v1", "m2", seed_ids=SEED)
    assert registered.register(con, moved) == first
    other = check_registration("zz", URL, "z", seed_ids=SEED)
    registered.register(con, other)
    assert registered.registrations(con) == [moved, other]
    assert con.execute("select count(*) from raw.registered_llms").fetchone()[0] == 3


def test_imported_ids_come_from_both_import_tables():
    con = duckdb.connect()
    assert registered.imported_ids(con) == set()
    con.execute("create schema raw")
    con.execute("create table raw.imported_systems (system_id varchar)")
    con.execute("create table raw.study_imports (system_id varchar)")
    con.execute("insert into raw.imported_systems values ('a')")
    con.execute("insert into raw.study_imports values ('b')")
    assert registered.imported_ids(con) == {"a", "b"}


def test_an_exported_registration_joins_the_seed_and_runs_through_the_llm_code(monkeypatch):
    for key in ("BASE_URL", "MODEL", "API_KEY_ENV"):
        monkeypatch.delenv(f"TSRATE_MY_LLM_{key}", raising=False)
    monkeypatch.delenv(registered.ENV, raising=False)
    mine = Registration("my_llm", "My LLM", URL, "tiny", "", "numeric+image")
    shadow = Registration("naive", "Not naive", URL, "x", "", "numeric")
    assert "my_llm" not in set(load_systems_seed()["system_id"])
    with registered.exported([mine, shadow]):
        seed = load_systems_seed().set_index("system_id")
        assert seed.loc["my_llm", "implementation"] == "tsrate.systems.llm:my_llm"
        assert seed.loc["my_llm", "accepted_perturbations"] == "P0 P1 P2 P3 P4 P5 P6"
        assert seed.loc["naive", "display_name"] == "Naive last value"  # the seed wins
        assert not seed.index.duplicated().any()
        study = Study.from_vars()
        system = create_system(seed.loc["my_llm", "implementation"], study, None)
        assert isinstance(system, llm.LlmSystem) and system.settings.with_image
        assert (system.settings.base_url, system.settings.model) == (URL, "tiny")
        assert f"url={URL};model=tiny;" in system.fingerprint()  # in the partitions' key
        monkeypatch.setenv("TSRATE_MY_LLM_MODEL", "override")  # the environment still wins
        assert llm.load_settings("my_llm").model == "override"
    assert registered.ENV not in os.environ  # restored after the block
    with pytest.raises(TsrateError, match="unknown system 'my_llm'"):
        resolve_systems(dataclasses.replace(Study.from_vars(), systems=("my_llm",)), None)


def test_a_bad_environment_value_is_one_line_with_a_hint(monkeypatch):
    monkeypatch.setenv(registered.ENV, "not json")
    with pytest.raises(TsrateError, match=f"{registered.ENV} is not a list.*unset it"):
        registered.from_environment()


@pytest.mark.parametrize("metadata", [None, {"display_name": "Imported"}])
def test_an_import_under_a_registered_id_is_refused_before_the_file_is_read(tmp_path, metadata):
    from tsrate.platform.raw_schema import create_raw_tables
    from tsrate.robustness.blackbox.predictions import import_forecasts

    con = duckdb.connect()
    create_raw_tables(con)
    registered.register(con, check_registration("my_llm", URL, "m", seed_ids=SEED))
    study = dataclasses.replace(Study.from_vars(), systems=("naive",))
    with pytest.raises(TsrateError, match="'my_llm' is a system tsrate forecasts itself"):
        import_forecasts(con, tmp_path / "absent.csv", "my_llm", study, metadata=metadata)
    assert con.execute("select count(*) from raw.runs").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"system_id": "phi3-numeric"}, "the settings of the seed system 'phi3_numeric'"),
        ({"system_id": "phi3.numeric"}, "TSRATE_PHI3_NUMERIC_BASE_URL and friends"),
        ({"system_id": "my-llm", "registered_ids": ["my.llm"]}, "registered system 'my.llm'"),
        ({"system_id": "my_llm", "registered_ids": ["a", "my-llm"]}, "register 'my-llm' again"),
    ],
)
def test_an_id_sharing_the_settings_of_another_is_refused(given, said):
    message = refusal(**given)
    assert said in message and "differing only in '.', '-' or '_'" in message


def test_the_same_id_registered_again_shares_its_own_settings_only():
    got = check_registration("my.llm", URL, "m", seed_ids=SEED, registered_ids=["my.llm", "x"])
    assert got.system_id == "my.llm"
    assert llm.env_prefix("my.llm") == registered.env_prefix("my_llm") == "TSRATE_MY_LLM_"
