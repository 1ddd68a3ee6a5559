# Two commands set everything up: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Extras installed for the test suite; CI adds the optional ones (.ci/run: EXTRAS=dev,tau2,banking,inspect,export,
# ray,serve,browser-test,llm-local,docs; docs builds the site for tests/test_docs.py).
EXTRAS ?= dev
comma := ,
STAMP_TEST := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
# A tau2 data folder for the bundled recordings: the corpus beside the project when present.
TAU2_DATA_DIR ?= $(if $(wildcard ../shared/tau2-corpus/domains),../shared/tau2-corpus,)
export TAU2_DATA_DIR
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test test-fast test-llm bench bench-wire tau2-101 clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(VENV)/.installed $@

run: $(VENV)/.installed
	$(VENV)/bin/tau-tui $(ARGS)

# Format, lint, types (mypy strict over the whole package and the tests) and the layer contracts first (pyproject.toml
# [tool.ruff], [tool.mypy], [tool.importlinter]; docs/architecture.md), then the suite.
CHECKED := tau_tui domains tests benchmarks scripts
test: $(STAMP_TEST)
	$(VENV)/bin/ruff format --check $(CHECKED)
	$(VENV)/bin/ruff check $(CHECKED)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The suite runs on every core (pytest-xdist) with half as many workers again: many tests wait on a child
# process, a server or the terminal, so one more worker per two cores keeps the cores busy (tests/tui and
# tests/commands on 2 cores: 266 s with 2 workers, 178 s with 3, 175 s with 4). TEST_WORKERS=N sets the
# number; TEST_WORKERS=0 runs the suite in this process (a debugger, -x, -s).
TEST_WORKERS ?= $(shell $(PYTHON) -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1; print(n + (n + 1) // 2)")

# The inner loop, under a minute: the suite without the tests marked slow (tau2 1.0.1 itself, Ray clusters,
# whole-corpus passes, real Inspect runs: tests/conftest.py SLOW), no lint. make test runs them all.
test-fast: $(STAMP_TEST)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal -m "not slow and not tau2_101 and not real_model" $(PYTEST_ARGS)

# The real-model tests (tests/rollout/test_real_model.py, marker real_model; about a minute once built): SmolLM2-135M
# served by llama-cpp-python on 127.0.0.1. They need the llm-local extra, which builds llama-cpp-python from
# source (cmake, a C++ compiler, about 7 minutes on 2 cores): make test-llm EXTRAS=dev,llm-local
test-llm: $(STAMP_TEST)
	$(PY) -m pytest -m real_model $(PYTEST_ARGS)

# tau2 1.0.1 itself, beside the project (.tau2-101; Python 3.12 or 3.13, pyenv's where found): the tests marked
# tau2_101 run its prompts, runner and evaluator against ours (tests/helpers.py finds it there, or at
# $$TAU2_101_PYTHON). Built from the published source in ../shared/tau2-1.0.1, with its knowledge extra (banking).
TAU2_101 ?= .tau2-101
TAU2_101_SRC ?= ../shared/tau2-1.0.1/tau2-1.0.1-src.tar.gz
TAU2_101_BASE ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python $(HOME)/.pyenv/versions/3.13*/bin/python) $(shell command -v python3.12 python3.13 2>/dev/null))
tau2-101: $(TAU2_101)/.installed
$(TAU2_101)/.installed: $(TAU2_101_SRC)
	@test -n "$(TAU2_101_BASE)" || { echo "tau2 1.0.1 needs Python 3.12 or 3.13 (set TAU2_101_BASE)"; exit 2; }
	$(TAU2_101_BASE) -m venv $(TAU2_101)
	$(TAU2_101)/bin/python -m pip install --quiet --upgrade pip
	$(TAU2_101)/bin/python -m pip install --quiet "tau2[knowledge] @ file://$(abspath $(TAU2_101_SRC))"
	touch $@

# Wire-level equivalence with tau2 1.0.1 on every domain (benchmarks/wire_tau2.py; about 10 minutes).
bench-wire: $(STAMP_TEST) tau2-101
	$(PY) -m benchmarks.wire_tau2 --tau2-python $(TAU2_101)/bin/python $(ARGS)

bench: $(STAMP_TEST)
	$(PY) -m benchmarks.replay_corpus

clean:
	rm -rf $(VENV)
