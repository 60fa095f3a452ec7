"""Interpretability runs refused from their arguments alone, before the warehouse writer
lock, in process (the real command in a child process:
tests/integration/test_s34_import_refusals.py):

* unknown datasets or models were refused by ``plan_variants`` / ``plan_units`` inside the
  flow, after the lock, leaving an empty ``<warehouse>.lock`` (and its folder) behind; the
  command and the flow now check them first (the planning checks stay as a backstop);
* an empty ``--datasets`` or ``--models`` meant "all of them" to the flow, silently: refused
  like an empty ``--seeds``, each with a hint.

The expected lines are written out by hand.
"""

from __future__ import annotations

import pytest

from flows.interpretability import interpretability_flow
from tsrate import TsrateError, cli
from tsrate.platform.locking import lock_path
from tsrate.suites.interpretability.suite import SMALL, plan_units, plan_variants

DATASET_99 = "unknown dataset(s) [99]: the benchmark has datasets 1-10"
MODEL_NOPE = "unknown model(s) ['nope']: choose from imv_full, imv_tensor, tcdf, darnn, seq2graph"


@pytest.mark.parametrize(
    ("narrowed", "line"),
    [({"datasets": [2, 99]}, DATASET_99), ({"models": ["tcdf", "nope"]}, MODEL_NOPE)],
)
@pytest.mark.parametrize("build", [True, False])
def test_the_flow_refuses_unknown_datasets_and_models_before_the_lock(
    tmp_path, narrowed, line, build
):
    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    with pytest.raises(TsrateError) as refused:
        interpretability_flow.fn(build=build, warehouse=str(warehouse), **narrowed)
    assert str(refused.value) == line
    assert not lock_path(warehouse).exists() and not warehouse.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--datasets", "99"], DATASET_99),
        (["--models", "nope"], MODEL_NOPE),
        (["--datasets", "2", "--models", "nope"], MODEL_NOPE),
        (
            ["--datasets", ""],
            "--datasets names no dataset: give some of 1-10, e.g. --datasets 2,4, or leave "
            "it out for all",
        ),
        (
            ["--models", ","],
            "--models names no model: give some of imv_full, imv_tensor, tcdf, darnn, "
            "seq2graph, or leave it out for all",
        ),
        (
            ["--seeds", ""],
            "--seeds names no seed: give some, e.g. --seeds 1,2, or leave it out for the "
            "configuration's",
        ),
    ],
)
def test_the_command_refuses_before_starting_the_flow(tmp_path, monkeypatch, capsys, options, line):
    monkeypatch.setenv("TSRATE_PREFECT", "bogus")  # read only when the flow is started
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "wh" / "tsrate.duckdb"))
    argv = ["suite", "interpretability", "run", "--no-build"]
    assert cli.main([*argv, *options]) == 2
    assert capsys.readouterr().err == f"tsrate: error: {line}\n"
    assert list(tmp_path.iterdir()) == []
    # known ones get as far as starting the flow
    assert cli.main([*argv, "--datasets", "2", "--models", "tcdf"]) == 2
    assert "TSRATE_PREFECT='bogus'" in capsys.readouterr().err


def test_the_planning_checks_remain():
    with pytest.raises(TsrateError) as refused:
        plan_variants(SMALL, [99])
    assert str(refused.value) == DATASET_99
    with pytest.raises(TsrateError) as refused:
        plan_units(SMALL, plan_variants(SMALL, [2], sensitivity=False), ["nope"])
    assert str(refused.value) == MODEL_NOPE
