"""`tsrate register-llm` in-process (tsrate.cli.main, no child process): its checks that
need no warehouse come before the writer lock whatever is there (a bad URL is named while
another process writes, and nothing of a refused call reaches the lock file), and a
re-registration says whether the next run forecasts the model anew or reuses its stored
forecasts (only the endpoint, model and prompt are in their key). The checks themselves:
tests/unit/test_registered_llm.py; a run of a registered model:
tests/integration/test_registered_llm.py."""

from __future__ import annotations

import duckdb
import pytest

from tests.support.locks import another_writer
from tsrate import cli
from tsrate.commands.register import reregistered
from tsrate.config import project_dir
from tsrate.platform.locking import lock_path
from tsrate.systems.registered import Registration

URL = "http://localhost:8000/v1"
KEY = "sk-pasted-key-0123456789"


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "wh" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    return path


def register(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["register-llm", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_while_another_process_writes_a_bad_url_is_named_not_the_busy_warehouse(warehouse, capsys):
    assert register(capsys, "my_llm", "--base-url", URL, "--model", "m")[0] == 0
    lock = lock_path(warehouse)
    with another_writer(warehouse):
        before = lock.read_bytes()
        status, _, err = register(
            capsys, "my_llm", "--base-url", URL[:-3], "--model", "m", "--api-key-env", KEY
        )
        held = lock.read_bytes()
    assert status == 2
    assert "must be http(s)://HOST[:PORT]/.../v1" in err and "not the NAME" in err, err
    assert "being written" not in err and KEY not in err
    assert held == before and KEY.encode() not in held  # nothing of the refused call


def test_with_a_warehouse_a_pasted_key_is_refused_before_the_lock_is_taken(warehouse, capsys):
    assert register(capsys, "my_llm", "--base-url", URL, "--model", "m")[0] == 0
    lock = lock_path(warehouse)
    lock.unlink()  # a lock taken for the refused call would leave the file behind
    status, _, err = register(capsys, "other", "--base-url", URL, "--model", "m",
                              "--api-key-env", KEY)  # fmt: skip
    assert status == 2 and "not the NAME of an environment variable" in err, err
    assert not lock.exists()


def test_a_new_display_name_or_key_variable_reuses_forecasts_a_new_model_does_not(
    warehouse, capsys
):
    base = ["my_llm", "--base-url", URL, "--model", "m"]
    assert register(capsys, *base)[0] == 0
    status, out, _ = register(capsys, *base, "--display-name", "Mine", "--api-key-env", "K")
    assert status == 0
    assert "display name 'my_llm' -> 'Mine'" in out and "key variable no key -> K" in out
    assert "reused" in out and "anew" not in out
    status, out, _ = register(capsys, *base[:-1], "m2", "--display-name", "Mine",
                              "--api-key-env", "K")  # fmt: skip
    assert status == 0 and "was model m at " in out and "forecasts it anew" in out, out
    assert "reused" not in out


@pytest.mark.parametrize(
    ("change", "anew"),
    [
        ({"display_name": "Other"}, False),
        ({"api_key_env": "OTHER_KEY"}, False),
        ({"base_url": "http://other:8000/v1"}, True),
        ({"model": "m2"}, True),
        ({"modality": "numeric+image"}, True),
    ],
)
def test_only_the_forecasts_key_makes_a_re_registration_forecast_anew(change, anew):
    before = Registration("x", "X", URL, "m", "KEY", "numeric")
    after = Registration(**{**before.__dict__, **change})
    said = reregistered(before, after, "what")
    assert ("forecasts it anew" in said) == anew
    assert ("stored forecasts are reused" in said) == (not anew)
    if not anew:
        assert str(next(iter(change.values()))) in said


def test_an_id_sharing_a_registered_or_seed_ids_settings_is_refused_and_nothing_written(
    warehouse, capsys
):
    status, _, err = register(capsys, "phi3-numeric", "--base-url", URL, "--model", "m")
    assert status == 2 and "the seed system 'phi3_numeric'" in err, err
    assert not warehouse.parent.exists()  # refused before the lock: no file made
    assert register(capsys, "my.llm", "--base-url", URL, "--model", "m")[0] == 0
    status, _, err = register(capsys, "my-llm", "--base-url", URL, "--model", "m")
    assert status == 2 and "the registered system 'my.llm'" in err, err
    assert register(capsys, "my.llm", "--base-url", URL, "--model", "m2")[0] == 0  # itself
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        ids = con.execute("select system_id from raw.registered_llms").fetchall()
    finally:
        con.close()
    assert sorted(ids) == [("my.llm",), ("my.llm",)]


def test_the_docs_point_another_endpoint_model_to_register_llm():
    text = (project_dir() / "docs" / "systems.md").read_text()
    start = text.index("To rate another model")
    said = text[start : text.index("\n\n", start)]
    assert "tsrate register-llm" in said and "seed row with" not in said
