# Two commands from a fresh clone: `make test` (install, lint, tests) and `make quick` (every
# figure at small scale). Each creates or reuses the virtual environment it needs.
#   make test                      the tested set on Linux x86-64 (envs/linux-cpu.lock, CPU)
#   make test LOCK=                any platform: the version ranges of pyproject.toml
#   make quick CORES=4             the quick configuration on 4 cores (default: all)
#   make check-install             the lock and pyproject.toml resolve with a clean pip setup
#   make check-core                `pip install .` alone (the library, no extra) in a fresh venv
#                                  (CORE_VENV) runs the README's library example
# PyTorch comes first, alone, from TORCH_INDEX (on Linux its CPU build: PyPI's Linux torch is
# the multi-GB CUDA build). The lock's `torch==X` has no local label, so the CPU index's
# X+cpu meets it. Short network limits: an unreachable index fails in seconds, and pip then
# takes torch from the user's own wheel folder (PIP_FIND_LINKS) if there is one.
PYTHON ?= python3
VENV ?= .venv
LOCK ?= envs/linux-cpu.lock
CORES ?= all
TORCH_INDEX ?= $(if $(filter Linux,$(shell uname -s)),https://download.pytorch.org/whl/cpu)
CORE_VENV ?= .venv-core
BIN := $(VENV)/bin
TORCH := $(if $(strip $(LOCK)),$(shell grep -m1 '^torch==' $(LOCK)),torch)

# $(call torch_first,BIN): torch alone into the venv of BIN, from TORCH_INDEX (nothing without one)
torch_first = $(if $(strip $(TORCH_INDEX)),$(1)/pip install --quiet --no-deps --timeout 15 \
	--retries 1 --index-url $(TORCH_INDEX) '$(TORCH)' || { echo "make: no $(TORCH) from \
	$(TORCH_INDEX) (behind a proxy set https_proxy; offline: PIP_FIND_LINKS=<wheel folder>, \
	or TORCH_INDEX=<your mirror>)" >&2; exit 1; })

.PHONY: install test lint quick calibration check-install check-core clean-venv

$(BIN)/whcore: pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(call torch_first,$(BIN))
ifneq ($(strip $(LOCK)),)
	$(BIN)/pip install --quiet -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
else
	$(BIN)/pip install --quiet -e '.[dev]'
endif
	touch $@

install: $(BIN)/whcore

lint: install
	$(BIN)/ruff check src tests benchmarks envs
	$(BIN)/ruff format --check src tests benchmarks envs
	$(BIN)/snakefmt --check Snakefile workflow
	$(BIN)/snakemake --lint --configfile .test/config.yaml -d "$$(mktemp -d)"

# The tests spread over every core (pytest-xdist); those that share the tiny Snakemake run go to
# one worker together (tests/conftest.py).
test: lint
	$(BIN)/python -m pytest -m "not calibration" -n auto

# The claims engine's calibration: every claim at its least-favourable null at each shipped
# configuration's design, and its power, and every claim with a refuting side at its refuting nulls
# (tests/calibration/test_calibration.py; WHCORE_CALIBRATION_REPS sets
# the replications of the null cases, default 400, WHCORE_CALIBRATION_REFUTE_REPS those of the
# refuting nulls, default 200); prints the tables of rates it writes. Spread over the cores
# (pytest-xdist): the tables are joined from the workers' rows (tests/conftest.py).
calibration: install
	$(BIN)/python -m pytest -m calibration -n auto; status=$$?; \
		cat benchmarks/results/calibration.md benchmarks/results/calibration_refuting.md \
		2>/dev/null; exit $$status

quick: install
	$(BIN)/snakemake --cores $(CORES) --configfile config/quick.yaml

check-install: install
	$(BIN)/python envs/check_install.py --lock '$(or $(strip $(LOCK)),envs/linux-cpu.lock)' \
		--torch-index '$(or $(strip $(TORCH_INDEX)),https://download.pytorch.org/whl/cpu)'

# The light install: the core's requirements only (the lock's versions where there is a lock),
# from a non-editable build; envs/check_core.py runs the README's example with no extra present.
check-core:
	rm -rf $(CORE_VENV)
	$(PYTHON) -m venv $(CORE_VENV)
	$(call torch_first,$(CORE_VENV)/bin)
	$(CORE_VENV)/bin/pip install --quiet $(if $(strip $(LOCK)),-c $(LOCK)) .
	$(CORE_VENV)/bin/python envs/check_core.py

clean-venv:
	rm -rf $(VENV) $(CORE_VENV)
