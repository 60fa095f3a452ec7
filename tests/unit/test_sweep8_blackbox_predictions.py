"""The import of a prediction file as a run (tsrate.robustness.blackbox.predictions): the
summary's counts and time, which partitions a re-import reuses, the run id, the progress
messages, the partitions' zero model seconds, a registration's declared perturbations, and
the input key rebuilt byte by byte from its documented parts.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep8_blackbox.json): the import tests in test_import_*.py check whole
imports; these pin each counter on an import that computes some partitions and reuses
others, and the key against a hash written out by hand. Uses tests/unit/conftest.py's
``warehouse`` (AAPL, JPM prices) and ``good`` (the import study's full grid) fixtures;
every import here is without baselines, so no system is run.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np
import pandas as pd
import pytest

from tests.support.import_study import EXTERNAL_ROW, STUDY, write_csv
from tsrate.platform.warehouse import connect
from tsrate.robustness.blackbox.predictions import (
    ImportValidationError,
    import_forecasts,
    imported_input_key,
)
from tsrate.robustness.forecast.plan import TickerSeries
from tsrate.systems.base import QuantileForecasts
from tsrate.systems.registry import load_systems_seed


@pytest.fixture(scope="module")
def seed():
    return pd.concat([load_systems_seed(), pd.DataFrame([EXTERNAL_ROW])], ignore_index=True)


def partitions_of(con, run_id):
    return con.execute(
        "select p.ticker, p.perturbation_id, p.partition_key, p.seconds, r.reused "
        "from raw.run_partitions r join raw.forecast_partitions p using (partition_key) "
        "where r.run_id = ? order by p.ticker, p.perturbation_id",
        [run_id],
    ).fetchall()


def test_counts_seconds_run_id_and_reuse_across_imports(warehouse, seed, good, tmp_path):
    # P0 and P1 of both tickers (a file covers every ticker of each perturbation it holds)
    jpm = good[good["perturbation_id"].isin(["P0", "P1"])].copy()
    jpm["forecast"] += 0.125  # content of this test's own: new partitions
    said = []
    with connect(warehouse) as con:
        before = time.perf_counter()
        first = import_forecasts(
            con,
            write_csv(tmp_path, jpm, "first.csv"),
            "external_demo",
            STUDY,
            run_id="sweep8-first",
            baselines=False,
            systems_seed=seed,
            progress=said.append,
        )
        elapsed = time.perf_counter() - before
        assert first.run_id == "sweep8-first"
        assert (first.partitions, first.computed, first.reused) == (4, 4, 0)
        assert first.forecast_rows == len(jpm)
        assert first.baselines is None
        assert 0 <= first.seconds <= elapsed
        assert said and said[-1].startswith(
            f"run sweep8-first: imported external_demo from first.csv (sha256 {first.file_sha256[:16]}): "
            f"4 partitions (4 stored, 0 reused), {len(jpm)} rows"
        )
        stored = partitions_of(con, "sweep8-first")
        assert [(t, p, s, r) for t, p, _, s, r in stored] == [
            ("AAPL", "P0", 0.0, False),
            ("AAPL", "P1", 0.0, False),
            ("JPM", "P0", 0.0, False),
            ("JPM", "P1", 0.0, False),
        ]  # an imported partition took no model time here
        # again, with P1 changed and P2 added: P0 reused, P1 and P2 stored
        again = pd.concat([jpm, good[good["perturbation_id"] == "P2"]])
        again.loc[again["perturbation_id"] == "P1", "forecast"] += 1.0
        second = import_forecasts(
            con,
            write_csv(tmp_path, again, "second.csv"),
            "external_demo",
            STUDY,
            baselines=False,
            systems_seed=seed,
        )
        assert second.run_id != "sweep8-first"
        assert (second.partitions, second.computed, second.reused) == (6, 4, 2)
        assert second.forecast_rows == len(jpm)  # P1's and P2's rows (P0 reused)
        rows = partitions_of(con, second.run_id)
        assert [(t, p, r) for t, p, _, _, r in rows] == [
            ("AAPL", "P0", True),
            ("AAPL", "P1", False),
            ("AAPL", "P2", False),
            ("JPM", "P0", True),
            ("JPM", "P1", False),
            ("JPM", "P2", False),
        ]
        assert rows[0][2] == stored[0][2]  # the first import's P0 partitions themselves
        assert rows[3][2] == stored[2][2]
        assert rows[1][2] != stored[1][2]
        listed = con.execute("select systems from raw.runs where run_id = ?", [second.run_id])
        assert listed.fetchone()[0] == ["external_demo"]


def test_declared_perturbations_are_checked_before_registration(warehouse, good, tmp_path):
    jpm = good[good["perturbation_id"].isin(["P0", "P1"])]  # both tickers
    with connect(warehouse) as con:
        with pytest.raises(ImportValidationError) as caught:
            import_forecasts(
                con,
                write_csv(tmp_path, jpm),
                "sweep8_declared",
                STUDY,
                baselines=False,
                metadata={"accepted_perturbations": "P0"},
            )
        assert "perturbation(s) ['P1'] are not accepted by system 'sweep8_declared'" in str(
            caught.value
        )
        summary = import_forecasts(
            con,
            write_csv(tmp_path, jpm),
            "sweep8_declared",
            STUDY,
            baselines=False,
            metadata={"accepted_perturbations": ""},  # empty: the file's, P0 P1
        )
        assert summary.partitions == 4
        row = con.execute(
            "select accepted_perturbations from raw.imported_systems where system_id = ?",
            ["sweep8_declared"],
        ).fetchall()
    assert row == [("P0 P1",)]


# -- the input key --------------------------------------------------------------------------------

DATES = pd.bdate_range("2022-10-03", periods=6).values.astype("datetime64[D]")
SERIES = TickerSeries("JPM", DATES, np.array([10.0, 11.0, 12.5, 13.0, 12.0, 11.5]), np.array([3]))


def expected_key(points: np.ndarray, quantiles: np.ndarray | None = None) -> str:
    content = hashlib.sha256(np.ascontiguousarray(points, dtype=float).tobytes())
    if quantiles is not None:
        content.update(b";quantiles;")
        content.update(np.ascontiguousarray(quantiles, dtype=float).tobytes())
    fingerprint = f"imported;forecasts-sha256={content.hexdigest()}"
    parts = ["ext", fingerprint, "JPM", "P2", STUDY.context_length, STUDY.horizon, STUDY.stride]
    parts += [STUDY.perturbation_phase, "2022-10-03", "2022-10-10"]
    digest = hashlib.sha256("".join(f"{part}|" for part in parts).encode())
    digest.update(SERIES.clean.tobytes())  # exact at 10 decimals
    return digest.hexdigest()[:32]


def test_the_input_key_hashes_the_points_then_the_quantiles():
    points = np.array([[12.0, 12.5, 13.0, 13.5, 14.0]])
    quantiles = points[..., None] + np.linspace(-1.0, 1.0, 9)
    plain = imported_input_key("ext", STUDY, SERIES, "P2", points)
    assert plain == expected_key(points)
    with_q = imported_input_key("ext", STUDY, SERIES, "P2", QuantileForecasts(points, quantiles))
    assert with_q == expected_key(points, quantiles) != plain
    other_q = imported_input_key(
        "ext", STUDY, SERIES, "P2", QuantileForecasts(points, quantiles * 1.01)
    )
    assert other_q == expected_key(points, quantiles * 1.01) != with_q
