# Two entry points: `make run` (agent on embedded defaults) and `make test` (whole suite).
# Both create .venv on first use and reinstall only when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench clean

run: $(VENV)/.installed
	$(BIN)/edge-cli run

test: $(VENV)/.installed-test lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# ruff (lint, import order) and mypy (types) over the whole tree; part of `make test`
lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3 -m venv failed; installing python3-venv (Debian)"; \
	  sh deploy/debian-packages.sh python3-venv && $(PYTHON) -m venv $(VENV); }

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	@touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml deploy/test-packages.txt
	sh deploy/debian-packages.sh $$(grep -v '^#' deploy/test-packages.txt)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@ $(VENV)/.installed

clean:
	rm -rf $(VENV) build *.egg-info
