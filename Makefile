# Two commands set everything up: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# A tau2 data folder for the bundled recordings: the corpus beside the project when present.
TAU2_DATA_DIR ?= $(if $(wildcard ../shared/tau2-corpus/domains),../shared/tau2-corpus,)
export TAU2_DATA_DIR
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test venv dev bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

venv: $(VENV)/.installed
dev: $(VENV)/.installed-dev

run: $(VENV)/.installed
	$(VENV)/bin/tau-tui $(ARGS)

test: $(VENV)/.installed-dev
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks.run_all

clean:
	rm -rf $(VENV)
