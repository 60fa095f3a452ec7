# The front door. `make run` and `make test` set everything up on first use.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
TORCH_VERSION ?= 2.13.0

.PHONY: setup run test lint format build docs report benchmark clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# CPU torch first (a local wheel here); with a GPU, install your CUDA build of torch instead
	$(BIN)/pip install --quiet "torch==$(TORCH_VERSION)"
	$(BIN)/pip install --quiet -e ".[dev,fracast,chronos,llm,images,dask]"
	touch $@

run: setup            ## the main job on the default study (bundled S&P sample -> marts)
	$(BIN)/tsrate run

test: setup           ## lint, then the whole test suite (unit, dbt integration, flows)
	$(BIN)/ruff check src flows tests benchmarks python_models
	$(BIN)/pytest

lint: setup
	$(BIN)/ruff check src flows tests benchmarks python_models

format: setup
	$(BIN)/ruff format src flows tests benchmarks python_models

build: setup          ## rebuild the dbt marts for the latest run
	$(BIN)/tsrate build

docs: setup           ## the dbt docs site (warehouse/docs/static_index.html)
	$(BIN)/tsrate docs

report: setup         ## rewrite warehouse/published/report.html from the published snapshot
	$(BIN)/tsrate report

benchmark: setup      ## time the default `tsrate run` (see BENCHMARKS.md)
	$(BIN)/python benchmarks/bench_default_run.py

clean:
	rm -rf target logs warehouse
