"""In-process flows (no Prefect API): every step runs as a plain function, tasks included; the
flows' steps stay free of Prefect until orchestrated, and the API check needs no Prefect."""

from __future__ import annotations

from tsrate.platform.orchestration import call


def test_call_runs_plain_functions_and_task_functions_outside_a_flow():
    from prefect import task

    @task
    def doubled(x: int) -> int:
        return 2 * x

    assert call(lambda x: x + 1, 1) == 2
    assert call(doubled, 21) == 42


# --- the flows' steps without Prefect (tsrate.platform.orchestration.Step) -------------------


def _step(kind, fn, **options):
    from tsrate.platform.orchestration import Step

    return Step(kind, fn, options)


def test_a_step_is_its_plain_function_outside_a_flow_run_with_its_retries():
    """Outside a flow run `call` runs the step's own function, retried as its options say:
    a retryable failure is tried again, one the condition refuses is raised at once."""
    attempts = []

    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) < 3:
            raise OSError("hiccup")
        return 2 * x

    def only_os_errors(task, task_run, state) -> bool:  # noqa: ANN001 - Prefect's signature
        try:
            state.result()
        except OSError:
            return True
        return False

    step = _step(
        "task", flaky, retries=2, retry_delay_seconds=[0, 0], retry_condition_fn=only_os_errors
    )
    assert step.fn is flaky and step.__name__ == "flaky" and step.__doc__ == flaky.__doc__
    assert call(step, 21) == 42 and attempts == [21, 21, 21]

    def refused(x: int) -> int:
        attempts.append(x)
        raise ValueError("a bug: never retried")

    attempts.clear()
    strict = _step("task", refused, retries=3, retry_condition_fn=only_os_errors)
    try:
        call(strict, 1)
    except ValueError:
        pass
    assert attempts == [1]


def test_a_step_becomes_prefects_own_object_with_the_same_options_when_orchestrated():
    """Reading an orchestration attribute (or calling the step) builds Prefect's task or flow
    from the same function and options, once; NO_CACHE becomes Prefect's NO_CACHE."""
    import prefect
    from prefect.cache_policies import NO_CACHE as PREFECT_NO_CACHE

    from tsrate.platform.orchestration import NO_CACHE

    def work(x: int) -> int:
        return x

    step = _step("task", work, name="work-step", retries=2, cache_policy=NO_CACHE)
    real = step.prefect
    assert isinstance(real, prefect.Task) and real.fn is work
    assert real.name == "work-step" and real.retries == 2
    assert real.cache_policy is PREFECT_NO_CACHE
    assert step.prefect is real  # built once
    assert step.submit == real.submit  # orchestration attributes are Prefect's

    def body() -> int:
        return 1

    as_flow = _step("flow", body, name="a-flow")
    assert isinstance(as_flow.prefect, prefect.Flow) and as_flow.prefect.name == "a-flow"
    assert as_flow.with_options(name="other").name == "other"


def test_the_decorators_give_prefects_objects_once_prefect_is_loaded():
    """Where Prefect is imported (its entrypoint loader, `tsrate serve`, a deployment's flow
    run) the flows' decorators return Prefect's own flows and tasks, which its loaders need."""
    import prefect

    from tsrate.platform.orchestration import flow, task

    @flow(name="loaded-flow")
    def body() -> int:
        return 1

    @task(name="loaded-task")
    def step() -> int:
        return 1

    assert isinstance(body, prefect.Flow) and body.name == "loaded-flow"
    assert isinstance(step, prefect.Task) and step.name == "loaded-task"


# --- whether a Prefect API is configured, known without importing Prefect -------------------

_API = "http://127.0.0.1:4999/api"


def _scenario(tmp_path, monkeypatch, name: str) -> None:
    """A working folder and a Prefect home with nothing in them, then what ``name`` adds."""
    import os

    for variable in list(os.environ):
        if variable.startswith("PREFECT_") and variable != "PREFECT_SERVER_ANALYTICS_ENABLED":
            monkeypatch.delenv(variable)
    home = tmp_path / "home"
    home.mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv("PREFECT_HOME", str(home))
    monkeypatch.chdir(work)
    quiet = '[profiles.quiet]\nPREFECT_LOGGING_LEVEL = "WARNING"\n'
    match name:
        case "nothing":
            pass
        case "profile without an API":
            (home / "profiles.toml").write_text('active = "quiet"\n' + quiet)
        case "pyproject without prefect":
            (work / "pyproject.toml").write_text('[project]\nname = "x"\n')
        case "active profile names an API":
            (home / "profiles.toml").write_text(
                f'active = "remote"\n{quiet}[profiles.remote]\nPREFECT_API_URL = "{_API}"\n'
            )
        case "environment":
            monkeypatch.setenv("PREFECT_API_URL", _API)
        case "PREFECT_PROFILE picks a profile naming an API":
            (home / "profiles.toml").write_text(
                f'active = "quiet"\n{quiet}[profiles.remote]\nPREFECT_API_URL = "{_API}"\n'
            )
            monkeypatch.setenv("PREFECT_PROFILE", "remote")
        case ".env":
            (work / ".env").write_text(f"PREFECT_API_URL={_API}\n")
        case "prefect.toml":
            (work / "prefect.toml").write_text(f'[api]\nurl = "{_API}"\n')
        case "pyproject.toml":
            (work / "pyproject.toml").write_text(f'[tool.prefect.api]\nurl = "{_API}"\n')
        case "profiles path":
            elsewhere = tmp_path / "elsewhere.toml"
            elsewhere.write_text(
                f'active = "remote"\n[profiles.remote]\nPREFECT_API_URL = "{_API}"\n'
            )
            monkeypatch.setenv("PREFECT_PROFILES_PATH", str(elsewhere))
        case _:
            raise AssertionError(name)


def _prefects_own_answer():
    """What Prefect's settings, read afresh from the environment and files, say."""
    from prefect.settings import Settings

    url = Settings().api.url
    return str(url) if url else None


NO_API = ["nothing", "profile without an API", "pyproject without prefect"]
AN_API = [
    "active profile names an API",
    "environment",
    "PREFECT_PROFILE picks a profile naming an API",
    ".env",
    "prefect.toml",
    "pyproject.toml",
    "profiles path",
]


def test_no_prefect_api_is_known_without_prefect_where_prefect_finds_none(tmp_path, monkeypatch):
    """Where nothing names an API, the check answers without loading Prefect's settings,
    and Prefect's own settings agree that there is none."""
    from tsrate.platform.orchestration import _settings_may_name_an_api, prefect_api_configured

    for name in NO_API:
        _scenario(tmp_path / name.replace(" ", "_"), monkeypatch, name)
        assert _settings_may_name_an_api() is False, name
        assert prefect_api_configured() is False, name
        assert _prefects_own_answer() is None, name


def test_every_place_prefect_reads_an_api_from_sends_the_check_to_prefect(tmp_path, monkeypatch):
    """Each place Prefect can read ``PREFECT_API_URL`` from (and does, in this Prefect) makes
    the quick check defer to Prefect's settings: the quick check never says "no API" where
    Prefect would orchestrate."""
    from tsrate.platform.orchestration import _settings_may_name_an_api

    for name in AN_API:
        _scenario(tmp_path / name.replace(" ", "_").replace(".", "_"), monkeypatch, name)
        assert _prefects_own_answer() == _API, name  # Prefect reads an API from there
        assert _settings_may_name_an_api() is True, name
