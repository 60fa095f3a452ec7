"""`--lock-timeout` on every writing command, as a scheduler sets it: a negative wait was
taken silently as "do not wait" (the job failed at once on a busy warehouse, whatever it
asked for); it is a usage error that says what the option takes, like --workers 0."""

from __future__ import annotations

import pytest

from tsrate import cli

WRITERS = [
    ["run"],
    ["build"],
    ["ingest"],
    ["import", "predictions.csv", "--system", "mine"],
    ["import-predictions", "predictions.csv", "--system", "mine", "--manifest", "m.json"],
    ["train"],
    ["docs"],
    ["suite", "understanding", "run"],
    ["suite", "reasoning", "run"],
    ["suite", "interpretability", "run"],
]


@pytest.mark.parametrize("command", WRITERS, ids=lambda words: " ".join(words))
def test_a_negative_lock_wait_is_a_usage_error(command, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.build_parser().parse_args([*command, "--lock-timeout", "-1"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --lock-timeout: must be 0 or more seconds, got -1" in err


@pytest.mark.parametrize("command", WRITERS, ids=lambda words: " ".join(words))
def test_zero_and_fractions_of_a_second_are_waits(command):
    for text, seconds in (("0", 0.0), ("2.5", 2.5)):
        args = cli.build_parser().parse_args([*command, "--lock-timeout", text])
        assert args.lock_timeout == seconds


def test_run_logs_its_wait_for_the_lock_with_a_time_stamp(tmp_path, monkeypatch, capsys, caplog):
    """`tsrate run` printed "waiting up to Ns ..." bare on stdout, between its time-stamped
    log lines; it is a log line of the run (``tsrate.run``) like its other progress lines."""
    import fcntl
    import logging
    import os

    from tsrate.platform.locking import lock_path

    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    other = os.open(lock_path(warehouse), os.O_RDWR | os.O_CREAT, 0o644)  # another writer
    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        with caplog.at_level(logging.INFO):
            assert cli.main(["run", "--lock-timeout", "0.3"]) == 2
    finally:
        os.close(other)
    out, err = capsys.readouterr()
    assert "waiting up to" not in out
    waits = [r for r in caplog.records if r.getMessage().startswith("waiting up to")]
    assert [r.name for r in waits] == ["tsrate.run"]
    assert "is being written by another process; one writer at a time. Gave up after waiting" in err
