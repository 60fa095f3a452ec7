"""marts.paper_comparison on a real (small) run of the paper's tickers and period.

The mart's paper side is checked against the seed CSV read here, its tsrate side and its
differences against a pandas recomputation from robustness_scores / accuracy_scores (Table 2's
averages over perturbations and both confounders included).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.integration.builds import forecast_and_build
from tests.support.warehouses import read, small_study
from tsrate.config import project_dir
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.sources import read_price_file

PAPER_TICKERS = ["META", "GOOG", "PFE", "MRK", "WFC", "C"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, dbt_target):
    root = tmp_path_factory.mktemp("paper_comparison")
    warehouse = root / "tsrate.duckdb"
    days = pd.bdate_range("2023-03-28", "2024-04-22")
    rng = np.random.default_rng(7)
    frame = pd.concat(
        pd.DataFrame(
            {
                "ticker": t,
                "date": days.strftime("%Y-%m-%d"),
                "close": 50 + 10 * i + np.cumsum(rng.normal(0, 1, len(days))),
            }
        )
        for i, t in enumerate(PAPER_TICKERS)
    )
    frame.to_csv(root / "prices.csv", index=False)
    with connect(warehouse) as con:
        store_prices(con, read_price_file(root / "prices.csv"), "file")
    study = small_study(
        study_tickers=PAPER_TICKERS,
        study_start="2023-03-28",
        study_end="2024-04-22",
        context_length=40,
        horizon=10,
        stride=5,
        perturbations=["P0", "P1", "P2"],
        systems=["random", "biased", "naive"],
    )
    run_id = forecast_and_build(warehouse, study, dbt_target, select="+paper_comparison")
    return warehouse, run_id


def _expected(warehouse) -> pd.DataFrame:
    seed = pd.read_csv(project_dir() / "seeds" / "paper_values.csv", dtype={"paper_table": str})
    seed = seed[seed["system_id"].notna()]
    robustness = read(
        warehouse,
        "select system_id, perturbation_id, metric, raw_score as ours "
        "from marts.robustness_scores where is_default_outcome",
    )
    accuracy = read(
        warehouse,
        "select system_id, perturbation_id, metric, mean as ours from marts.accuracy_scores",
    )
    per = pd.concat([robustness, accuracy], ignore_index=True)
    family = per["metric"].str.replace(r"_(industry|company)$", "", regex=True)
    means = (
        per.assign(metric=family).groupby(["system_id", "metric"], as_index=False)["ours"].mean()
    )
    means["perturbation_id"] = "mean"
    ours = pd.concat([per, means], ignore_index=True)
    merged = seed.merge(ours, on=["system_id", "perturbation_id", "metric"], how="inner")
    merged["expected_difference"] = merged["ours"] - merged["value"]
    return merged


def test_differences_match_an_independent_join(built):
    warehouse, run_id = built
    mart = read(warehouse, "select * from marts.paper_comparison")
    expected = _expected(warehouse)
    assert len(mart) == len(expected) > 50
    assert set(mart["system_id"]) == {"random", "biased"}  # naive is not the paper's
    assert set(mart["run_id"]) == {run_id}
    keys = ["paper_table", "paper_label", "perturbation_id", "system_id"]
    joined = mart.merge(expected, on=keys, how="outer", indicator=True)
    assert (joined["_merge"] == "both").all()
    np.testing.assert_allclose(joined["paper_value"], joined["value"])
    np.testing.assert_allclose(joined["tsrate_value"], joined["ours"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        joined["difference"], joined["expected_difference"], rtol=1e-9, atol=1e-9
    )
    # relative to the paper's value (the reference), null where the paper prints 0
    paper = joined["value"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = joined["expected_difference"].to_numpy(dtype=float) / np.abs(paper)
    np.testing.assert_allclose(
        joined["relative_difference"].to_numpy(dtype=float),
        np.where(paper != 0, relative, np.nan),
        rtol=1e-9,
        atol=1e-9,
    )
    assert (np.abs(joined["tsrate_value"]) != np.abs(paper)).any()  # |ours| would differ
    assert mart["same_study"].all()
    table2 = mart[mart["perturbation_id"] == "mean"]
    assert set(table2["metric"]) == {"wrs", "ape", "pie", "smape", "mase", "sign_accuracy"}
    # WRS over 2 confounders x 3 perturbations; APE/PIE (no P0) over 2 x 2
    n = table2.set_index(["system_id", "metric"])["tsrate_n_averaged"]
    assert n[("random", "wrs")] == 6 and n[("random", "ape")] == 4
    # the unreachable WRS values carry the seed's note
    wrs = mart[mart["metric"].str.startswith("wrs_") & (mart["paper_printed"] == "6.9")]
    assert len(wrs) and wrs["paper_note"].str.startswith("unreachable").all()


def test_ratings_sit_beside_the_papers(built):
    warehouse, _ = built
    rated = read(
        warehouse,
        "select c.tsrate_rating, r.rating from marts.paper_comparison c join marts.ratings r "
        "using (run_id, system_id, perturbation_id, metric) "
        "where r.is_default_outcome and c.paper_table in ('5', '6')",
    )
    assert len(rated) > 20
    assert (rated["tsrate_rating"].fillna(-1) == rated["rating"].fillna(-1)).all()


def test_preset_paper_runs_from_a_price_file(tmp_path, monkeypatch, capsys):
    """`tsrate run --preset paper --file PRICES.csv`: the paper's tickers and period reach the
    run and the comparison mart (systems and perturbations narrowed to keep it quick)."""
    from tsrate import cli

    days = pd.bdate_range("2023-03-28", "2024-04-22")
    rng = np.random.default_rng(3)
    pd.concat(
        pd.DataFrame(
            {"ticker": t, "date": days.strftime("%Y-%m-%d"),
             "close": 80 + np.cumsum(rng.normal(0, 1, len(days)))}
        )
        for t in PAPER_TICKERS
    ).to_csv(tmp_path / "prices.csv", index=False)  # fmt: skip
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    status = cli.main(
        ["run", "--preset", "paper", "--file", str(tmp_path / "prices.csv"),
         "--systems", "random,biased", "--perturbations", "P0,P1", "--select", "+paper_comparison"]
    )  # fmt: skip
    assert status == 0, capsys.readouterr().err
    runs = read(warehouse, "select tickers, study_start, study_end, context_length from raw.runs")
    assert list(runs["tickers"][0]) == PAPER_TICKERS
    assert str(runs["study_start"][0])[:10] == "2023-03-28"
    assert str(runs["study_end"][0])[:10] == "2024-04-22"
    assert int(runs["context_length"][0]) == 80
    mart = read(warehouse, "select * from marts.paper_comparison")
    assert len(mart) and mart["same_study"].all()
    assert set(mart["system_id"]) == {"random", "biased"}
