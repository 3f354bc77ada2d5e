# Quick start: `make demo` and `make test`. Each creates .venv and installs what it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean oclgrind

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/activate pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(BIN)/activate pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/python examples/block_sum.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check clpy sim tests benchmarks examples
	$(BIN)/ruff format --check clpy sim
	@# sim/ is the package clpy_sim (pyproject.toml package-dir): mypy sees it by that name
	@mkdir -p build/typecheck && ln -sfn ../../sim build/typecheck/clpy_sim
	MYPYPATH=build/typecheck $(BIN)/mypy clpy build/typecheck/clpy_sim

# Oclgrind, as .ci/run installs it: without it tests/test_oclgrind.py skips (fails with CI=true).
# Quick when already installed; uses sudo -n when not root and sudo needs no password.
oclgrind:
	@bash scripts/install_oclgrind.sh

# The suite on TEST_WORKERS processes (pytest-xdist): nearly all of its time is single-threaded
# (PoCL's compiler, the simulator), so CI's 2 cores share it. --dist loadfile keeps each file in
# one process, in order (module fixtures and kernel caches shared as in a serial run); files are
# handed out as workers free up, in collection order (--no-loadscope-reorder: xdist's default
# order, most tests first, left slow files with few tests such as test_imports.py for the end).
# TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 2

test: $(VENV)/.installed-test lint oclgrind
	$(BIN)/python -m pytest tests -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

bench: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) build *.egg-info
