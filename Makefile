# Two commands from a fresh clone: `make test` (install, lint, tests) and `make quick` (every
# figure at small scale). Each creates or reuses the virtual environment it needs.
#   make test                      the tested set on Linux x86-64 (envs/linux-cpu.lock, CPU)
#   make test LOCK=                any platform: the version ranges of pyproject.toml
#   make quick CORES=4             the quick configuration on 4 cores (default: all)
PYTHON ?= python3
VENV ?= .venv
LOCK ?= envs/linux-cpu.lock
CORES ?= all
BIN := $(VENV)/bin

.PHONY: install test lint quick clean-venv

$(BIN)/whcore: pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
ifneq ($(strip $(LOCK)),)
	$(BIN)/pip install --quiet -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
else
	$(BIN)/pip install --quiet -e '.[dev]'
endif
	touch $@

install: $(BIN)/whcore

lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/snakefmt --check Snakefile workflow
	$(BIN)/snakemake --lint --configfile tests/workflow/tiny.yaml -d "$$(mktemp -d)"

test: lint
	$(BIN)/python -m pytest

quick: install
	$(BIN)/snakemake --cores $(CORES) --configfile config/quick.yaml

clean-venv:
	rm -rf $(VENV)
