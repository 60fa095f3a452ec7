"""The forecasting systems' shared machinery and the MOMENT bridge's in-process parts against
the small errors a mutation sweep plants in them (round 9; survivors:
tests/planted/sweep9_systems.json).

What the older tests left open, pinned here against values worked out independently (the
modules' documented defaults and rules, numpy on the same inputs, hand-worked numbers, the
csv module's reading of the seed):

* moment_model: the documented defaults (batch 16, timeout 3600 s, the model id), ``create``
  with no project vars, the timeout's minimum of 1 s, and the reasons given without a
  process (no interpreter set, one that does not exist). The worker's arguments, the probe
  and the error messages need a process: tests/integration/test_sweep9_systems.py.
* base: a batch counts windows (not context steps); the nine decile levels; the first
  non-finite forecast and the first window with some but not all quantiles named by date;
  the naive baselines' change quantiles against a pair-by-pair loop, at lags up to and past
  the context's width, with every row gapped or none.
* failures and _settings: the raw-text cut at exactly 4000 characters, failures outside the
  batch at both ends, the environment / dbt var / default order (an empty value counts as
  unset; a project of the test's own via TSRATE_PROJECT_DIR), and the minimums at their
  exact values (the sweep found these caught already; the messages are pinned word for word).
* registry: the seed read as text with empty cells empty (naive has no paper symbol), a
  duplicate id refused, and a seed row without an implementation, or whose ``create``
  raises, listed as unavailable with its reason (no such row in today's seed).

Each failure of the product code here would change a forecast, a stored failure, a setting
or what a user is told.
"""

from __future__ import annotations

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.systems import _settings, moment_model
from tsrate.systems.base import (
    QUANTILE_LEVELS,
    Availability,
    ForecastBatch,
    ForecastOutputError,
    check_forecasts,
    check_quantiles,
    empirical_change_quantiles,
)
from tsrate.systems.failures import PartialForecasts, WindowFailure, check_partial_forecasts
from tsrate.systems.moment_model import MomentSystem
from tsrate.systems.registry import load_systems_seed, resolve_systems, system_infos


def no_project():
    raise TsrateError("no dbt project here")


# -- moment_model -------------------------------------------------------------------------------


MOMENT_ENV = ("PYTHON", "MODEL", "BATCH_SIZE", "TIMEOUT_S", "DEVICE")


def test_moment_defaults_are_the_documented_ones():
    system = MomentSystem("python")
    assert (system.model, system.batch_size, system.timeout_s, system.device) == (
        "AutonLab/MOMENT-1-large",
        16,
        3600.0,
        "auto",
    )
    assert system.backend == "momentfm"
    assert system.fingerprint() == (
        "moment-bridge;backend=momentfm;model=AutonLab/MOMENT-1-large;point=reconstruction"
    )


def test_moment_create_without_project_vars_takes_the_documented_defaults(monkeypatch):
    monkeypatch.setattr(_settings, "project_vars", no_project)
    for name in MOMENT_ENV:
        monkeypatch.delenv(f"TSRATE_MOMENT_{name}", raising=False)
    system = moment_model.create(None, None)
    assert (system.python, system.model, system.batch_size, system.timeout_s, system.device) == (
        "",
        "AutonLab/MOMENT-1-large",
        16,
        3600.0,
        "auto",
    )


def test_moment_create_reads_every_setting_and_accepts_a_timeout_of_one_second(monkeypatch):
    monkeypatch.setattr(_settings, "project_vars", no_project)
    settings = {"PYTHON": "/opt/m/python", "MODEL": "/w/m", "BATCH_SIZE": "3", "DEVICE": "cpu"}
    for name, value in settings.items():
        monkeypatch.setenv(f"TSRATE_MOMENT_{name}", value)
    monkeypatch.setenv("TSRATE_MOMENT_TIMEOUT_S", "1")
    system = moment_model.create(None, None)
    assert (system.python, system.model, system.batch_size, system.timeout_s, system.device) == (
        "/opt/m/python",
        "/w/m",
        3,
        1.0,
        "cpu",
    )
    monkeypatch.setenv("TSRATE_MOMENT_TIMEOUT_S", "0.99")
    with pytest.raises(TsrateError, match="must be at least 1.0, got 0.99"):
        moment_model.create(None, None)


def test_moment_without_an_interpreter_or_with_a_missing_one_is_unavailable(tmp_path):
    none = MomentSystem("").availability()
    assert not none.available
    assert none.reason == f"no MOMENT environment configured; {moment_model.SETUP_HINT}"
    missing = tmp_path / "no-such-python"
    gone = MomentSystem(str(missing)).availability()
    assert not gone.available
    assert gone.reason == (
        f"TSRATE_MOMENT_PYTHON={missing} does not exist; {moment_model.SETUP_HINT}"
    )


def test_moment_worker_output_with_every_value_bad_names_the_first_window(tmp_path):
    path = tmp_path / "forecasts.npy"
    np.save(path, np.array([[1.0, 2.0], [np.inf, np.nan]]))
    with pytest.raises(moment_model.MomentBridgeError, match="holds 2 non-finite value.*window 1"):
        moment_model.read_forecasts(path, 2, 2)
    np.save(path, np.full((2, 2), np.nan))
    with pytest.raises(moment_model.MomentBridgeError, match="holds 4 non-finite value.*window 0"):
        moment_model.read_forecasts(path, 2, 2)


# -- base: the output checks and the naive baselines' change quantiles ---------------------------


DATES = np.array(["2022-01-03", "2022-01-04", "2022-01-05"], dtype="datetime64[D]")


def three_windows(horizon: int = 4, width: int = 5) -> ForecastBatch:
    contexts = np.arange(3 * width, dtype=float).reshape(3, width)
    return ForecastBatch("MSFT", "P2", DATES, contexts, horizon, np.zeros((3, horizon)), (0.0, 1.0))


def test_a_batch_counts_its_windows_not_its_context_steps():
    assert three_windows(width=5).n_windows == 3
    assert three_windows(width=1).n_windows == 3


def test_the_quantile_levels_are_fevs_nine_deciles():
    np.testing.assert_array_equal(QUANTILE_LEVELS, np.arange(1, 10) / 10)


def test_a_non_finite_forecast_names_the_first_bad_window_by_its_date():
    batch = three_windows(horizon=4)
    output = np.ones((3, 4))
    output[1, 0] = np.nan  # first bad value: window 1 (2022-01-04), step 0
    output[2, 3] = np.inf
    with pytest.raises(ForecastOutputError) as caught:
        check_forecasts("s", batch, output)
    assert str(caught.value) == (
        "system 's', ticker MSFT, perturbation P2: 2 non-finite forecast value(s), "
        "first in the window ending 2022-01-04"
    )
    np.testing.assert_array_equal(check_forecasts("s", batch, np.ones((3, 4))), np.ones((3, 4)))
    with pytest.raises(ForecastOutputError, match=r"output shape \(3, 3\), expected \(3, 4\)"):
        check_forecasts("s", batch, np.ones((3, 3)))


def test_quantiles_all_or_none_per_window_and_the_mixed_one_named():
    batch = three_windows(horizon=2)
    levels = len(QUANTILE_LEVELS)
    quantiles = np.ones((3, 2, levels))
    quantiles[0] = np.nan  # a window with none: fine
    np.testing.assert_array_equal(check_quantiles("s", batch, quantiles), quantiles)
    quantiles[2, 1, 8] = np.nan  # only the last level of the last step missing
    with pytest.raises(ForecastOutputError) as caught:
        check_quantiles("s", batch, quantiles)
    assert str(caught.value) == (
        "system 's', ticker MSFT, perturbation P2: the window ending 2022-01-05 has some but "
        "not all quantiles finite (a window has all its quantiles or none)"
    )
    # a step wholly missing in one window while its other step is finite: mixed too
    quantiles = np.ones((3, 2, levels))
    quantiles[1, 0, :] = np.nan
    with pytest.raises(ForecastOutputError, match="ending 2022-01-04 has some but not all"):
        check_quantiles("s", batch, quantiles)
    # one level missing at every step of every window: mixed in each, the first named
    quantiles = np.ones((3, 2, levels))
    quantiles[:, :, 4] = np.nan
    with pytest.raises(ForecastOutputError, match="ending 2022-01-03 has some but not all"):
        check_quantiles("s", batch, quantiles)
    with pytest.raises(ForecastOutputError, match=r"quantile shape \(3, 2, 8\), expected"):
        check_quantiles("s", batch, np.ones((3, 2, levels - 1)))


def change_quantiles_by_hand(contexts: np.ndarray, lags) -> np.ndarray:
    """The documented rule, pair by pair: at level q, np.quantile of every observed
    x[t] - x[t - lag] in the context (NaN where there is no such pair)."""
    out = np.full((len(contexts), len(lags), len(QUANTILE_LEVELS)), np.nan)
    for row, context in enumerate(contexts):
        for step, lag in enumerate(lags):
            changes = [
                context[t] - context[t - lag]
                for t in range(lag, len(context))
                if not (np.isnan(context[t]) or np.isnan(context[t - lag]))
            ]
            if changes:
                out[row, step] = [np.quantile(changes, q) for q in QUANTILE_LEVELS]
    return out


@pytest.mark.parametrize("missing", [False, True])
def test_change_quantiles_at_lags_up_to_and_past_the_context_width(missing):
    """Four windows of width 6 (not the window count): lag 5 has one pair, lag 6 (the width)
    and 7 none."""
    rng = np.random.default_rng(3)
    contexts = 50 + np.cumsum(rng.normal(0, 2, size=(4, 6)), axis=1)
    if missing:
        contexts[0, 2] = np.nan
        contexts[3, :] = np.nan
    lags = [1, 2, 5, 6, 7, 3]
    out = empirical_change_quantiles(contexts, np.array(lags))
    np.testing.assert_allclose(out, change_quantiles_by_hand(contexts, lags), rtol=1e-12)
    assert np.isnan(out[:, 3:5]).all()
    assert np.isfinite(out[:3, 2]).all()


def test_change_quantiles_when_every_row_has_a_gap_or_none_has():
    contexts = np.array([[1.0, 3.0, np.nan, 10.0, 4.0], [2.0, np.nan, 5.0, 6.0, 0.0]])
    lags = [1, 2]
    np.testing.assert_allclose(
        empirical_change_quantiles(contexts, np.array(lags)),
        change_quantiles_by_hand(contexts, lags),
        rtol=1e-12,
    )
    # hand-worked: row 0's lag-1 changes are 3 - 1 = 2 and 4 - 10 = -6; the median is -2
    assert empirical_change_quantiles(contexts, np.array([1]))[0, 0, 4] == -2.0
    full = np.array([[1.0, 2.0, 4.0, 8.0], [0.0, -1.0, 1.0, 0.0], [5.0, 5.0, 5.0, 5.0]])
    np.testing.assert_allclose(
        empirical_change_quantiles(full, np.array([1, 3])),
        change_quantiles_by_hand(full, [1, 3]),
        rtol=1e-12,
    )


# -- failures: window failures kept and checked ------------------------------------------------


def test_raw_output_is_kept_up_to_4000_characters_then_cut_and_marked():
    exact = "ab" * 2000
    assert WindowFailure(0, "r", exact).raw_text == exact
    longer = "c" * 3999 + "d" + "e"
    assert WindowFailure(0, "r", longer).raw_text == "c" * 3999 + "d… [4001 characters]"


def partial(values, *rows) -> PartialForecasts:
    return PartialForecasts(
        np.asarray(values, dtype=float), tuple(WindowFailure(r, "bad", "?") for r in rows)
    )


def test_partial_forecasts_refuse_a_window_failed_twice_or_outside_the_batch():
    batch = three_windows(horizon=2)
    where = "system 's', ticker MSFT, perturbation P2: "
    nan = np.full((3, 2), np.nan)
    with pytest.raises(ForecastOutputError) as caught:
        check_partial_forecasts("s", batch, partial(nan, 1, 1))
    assert str(caught.value) == where + "a window is reported as failed twice"
    for rows in ((3,), (-1,), (0, 3), (2, -1)):
        with pytest.raises(ForecastOutputError) as caught:
            check_partial_forecasts("s", batch, partial(nan, *rows))
        assert str(caught.value) == where + "a failure names a window outside the batch"
    # the first and the last window are inside; all three may fail
    out = check_partial_forecasts("s", batch, partial(nan, 2, 0, 1))
    assert [f.row for f in out.failures] == [0, 1, 2]
    assert np.isnan(out.values).all()


def test_partial_forecasts_check_the_good_windows_and_blank_the_failed_ones():
    batch = three_windows(horizon=2)
    values = np.array([[1.0, 2.0], [5.0, 6.0], [3.0, 4.0]])  # row 1 failed but holds numbers
    out = check_partial_forecasts("s", batch, partial(values, 1))
    np.testing.assert_array_equal(out.values, [[1.0, 2.0], [np.nan, np.nan], [3.0, 4.0]])
    assert out.values is not values and values[1, 0] == 5.0  # the input is not changed
    bad = values.copy()
    bad[2, 1] = np.inf
    with pytest.raises(ForecastOutputError, match="1 non-finite forecast value.*ending 2022-01-05"):
        check_partial_forecasts("s", batch, partial(bad, 1))
    with pytest.raises(ForecastOutputError) as caught:
        check_partial_forecasts("s", batch, partial(np.ones((3, 3)), 1))
    assert str(caught.value).endswith("output shape (3, 3), expected (3, 2)")
    with pytest.raises(ForecastOutputError, match=r"output shape \(2, 2\), expected \(3, 2\)"):
        check_partial_forecasts("s", batch, partial(np.ones((2, 2)), 1))


# -- _settings: environment, else dbt var, else default -----------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A dbt project folder of our own whose vars the test writes (TSRATE_PROJECT_DIR)."""
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path))
    monkeypatch.delenv("TSRATE_SWEEP9_SETTING", raising=False)

    def write(**values):
        lines = ["name: sweep9", "vars:"] + [f"  {k}: {v}" for k, v in values.items()]
        (tmp_path / "dbt_project.yml").write_text("\n".join(lines) + "\n")

    write()
    return write


def test_a_setting_is_the_environment_else_the_var_else_the_default(project, monkeypatch):
    env = "TSRATE_SWEEP9_SETTING"
    project(sweep9_var="from-var", empty_var='""', null_var="null")
    assert _settings.setting(env, "sweep9_var", "dflt") == "from-var"
    assert _settings.setting(env, "empty_var", "dflt") == "dflt"
    assert _settings.setting(env, "null_var", "dflt") == "dflt"
    assert _settings.setting(env, "absent_var", "dflt") == "dflt"
    monkeypatch.setenv(env, "")  # set but empty: as if unset
    assert _settings.setting(env, "sweep9_var", "dflt") == "from-var"
    monkeypatch.setenv(env, "from-env")
    assert _settings.setting(env, "sweep9_var", "dflt") == "from-env"
    assert _settings.setting(env, "absent_var", "dflt") == "from-env"


def test_a_setting_without_a_project_is_the_environment_else_the_default(
    project, monkeypatch, tmp_path
):
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(tmp_path / "no-project"))
    assert _settings.setting("TSRATE_SWEEP9_SETTING", "sweep9_var", 7) == 7
    monkeypatch.setenv("TSRATE_SWEEP9_SETTING", "8")
    assert _settings.setting("TSRATE_SWEEP9_SETTING", "sweep9_var", 7) == "8"


def test_whole_number_settings_and_their_minimum(project, monkeypatch):
    env = "TSRATE_SWEEP9_SETTING"
    project(sweep9_var=1)
    assert _settings.int_setting(env, "sweep9_var", 5) == 1  # the default minimum is 1
    assert _settings.int_setting(env, "absent_var", 5) == 5
    monkeypatch.setenv(env, "0")
    with pytest.raises(TsrateError) as caught:
        _settings.int_setting(env, "sweep9_var", 5)
    assert str(caught.value) == f"{env} / var sweep9_var must be at least 1, got 0"
    assert _settings.int_setting(env, "sweep9_var", 5, minimum=0) == 0
    monkeypatch.setenv(env, "3")
    assert _settings.int_setting(env, "sweep9_var", 5, minimum=3) == 3
    with pytest.raises(TsrateError, match="must be at least 4, got 3"):
        _settings.int_setting(env, "sweep9_var", 5, minimum=4)
    monkeypatch.setenv(env, "2.5")
    with pytest.raises(TsrateError) as caught:
        _settings.int_setting(env, "sweep9_var", 5)
    assert (
        str(caught.value)
        == f"'2.5' is not a whole number (environment {env} or dbt var sweep9_var)"
    )


def test_number_settings_and_their_minimum(project, monkeypatch):
    env = "TSRATE_SWEEP9_SETTING"
    project(sweep9_var=0.25)
    assert _settings.float_setting(env, "sweep9_var", 9.0) == 0.25  # the default minimum is 0
    assert _settings.float_setting(env, "absent_var", 9.0) == 9.0
    monkeypatch.setenv(env, "0")
    assert _settings.float_setting(env, "sweep9_var", 9.0) == 0.0
    monkeypatch.setenv(env, "-0.5")
    with pytest.raises(TsrateError) as caught:
        _settings.float_setting(env, "sweep9_var", 9.0)
    assert str(caught.value) == f"{env} / var sweep9_var must be at least 0.0, got -0.5"
    monkeypatch.setenv(env, "nan")  # not at least anything
    with pytest.raises(TsrateError, match="must be at least 0.0, got nan"):
        _settings.float_setting(env, "sweep9_var", 9.0)
    monkeypatch.setenv(env, "2")
    assert _settings.float_setting(env, "sweep9_var", 9.0, minimum=2.0) == 2.0
    monkeypatch.setenv(env, "many")
    with pytest.raises(TsrateError) as caught:
        _settings.float_setting(env, "sweep9_var", 9.0)
    assert str(caught.value) == f"'many' is not a number (environment {env} or dbt var sweep9_var)"


# -- registry: the systems seed and what it says about each row ---------------------------------


SEED_COLUMNS = "system_id,display_name,accepted_perturbations,implementation,description\n"


def seeded_project(folder, rows: str):
    """A project folder whose seeds/systems.csv holds ``rows`` (TSRATE_PROJECT_DIR points here)."""
    (folder / "seeds").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text("name: sweep9\nvars: {}\n")
    (folder / "seeds" / "systems.csv").write_text(SEED_COLUMNS + rows)
    return folder


def test_the_seed_is_read_as_text_with_empty_cells_empty():
    """Compared with the csv module's reading of the same file: every cell a string, an
    empty cell the empty string (naive has no paper symbol)."""
    import csv

    from tsrate.config import project_dir

    path = project_dir() / "seeds" / "systems.csv"
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    frame = load_systems_seed()
    assert frame.to_dict("records") == rows
    assert frame.set_index("system_id").loc["naive", "paper_symbol"] == ""


def test_a_duplicate_system_id_is_refused(tmp_path):
    path = seeded_project(tmp_path, "a,A,P0,tsrate.systems.naive,x\nb,B,P0,,y\na,A2,P0,,z\n")
    with pytest.raises(TsrateError) as caught:
        load_systems_seed(path / "seeds" / "systems.csv")
    assert str(caught.value) == f"{path / 'seeds' / 'systems.csv'}: duplicate system_id values"
    fine = seeded_project(tmp_path / "fine", "a,A,P0,tsrate.systems.naive,x\nb,B,P0,,y\n")
    assert load_systems_seed(fine / "seeds" / "systems.csv")["system_id"].tolist() == ["a", "b"]


def test_a_row_without_an_implementation_is_listed_unavailable_and_refused(tmp_path, monkeypatch):
    from tsrate.config import Study, load_companies

    companies = load_companies()
    every, future, naive = (
        Study.from_vars({"systems": names}) for names in (["naive"], ["future"], ["naive"])
    )
    rows = (
        "naive,Naive,P0 P3,tsrate.systems.naive,repeats\n"
        "future,Future model,P0,,the paper's S_f; no weights in this version\n"
        "broken,Broken,P1,tsrate.systems.fracast_model,fracast with a bad setting\n"
    )
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(seeded_project(tmp_path, rows)))
    monkeypatch.setenv("TSRATE_FRACAST_BATCH_SIZE", "many")  # create() raises a TsrateError
    infos = {info.system_id: info for info in system_infos(every, companies)}
    assert infos["naive"].availability.available
    assert infos["naive"].accepted_perturbations == ("P0", "P3")
    assert infos["future"].availability == Availability(
        False, "not runnable in this version: the paper's S_f; no weights in this version"
    )
    assert infos["future"].implementation == ""
    assert infos["broken"].availability == Availability(
        False, "TSRATE_FRACAST_BATCH_SIZE='many' is not a whole number"
    )
    with pytest.raises(TsrateError) as caught:
        resolve_systems(future, companies)
    assert str(caught.value) == (
        "system 'future' cannot run here: the paper's S_f; no weights in this version"
    )
    resolved = resolve_systems(naive, companies)
    assert list(resolved) == ["naive"] and resolved["naive"][1] == ("P0", "P3")
