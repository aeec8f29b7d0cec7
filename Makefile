# Two entry points: `make run` (agent on embedded defaults) and `make test` (whole suite).
# Both create .venv on first use and reinstall only when pyproject.toml (or this file) changes.
# The editable install is a path entry (editable_mode=compat: a .pth naming the checkout), not
# setuptools' import hook, whose finder imports pathlib and 35 more modules before every command
# (about 10 ms on `python -c pass`; `make bench` times the one-shot turn from this venv too).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench docs clean

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

# the manual on http://127.0.0.1:8000, rebuilt on every save (`make test` builds it with --strict);
# docs/reference/ is written from the code by `python -m edge.docs`
docs: $(VENV)/.installed-test
	$(BIN)/mkdocs serve

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3 -m venv failed; installing python3-venv (Debian)"; \
	  sh deploy/debian-packages.sh python3-venv && $(PYTHON) -m venv $(VENV); }

EDITABLE := --config-settings editable_mode=compat

$(VENV)/.installed: $(BIN)/python pyproject.toml Makefile
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e . $(EDITABLE)
	@touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml deploy/test-packages.txt Makefile
	sh deploy/debian-packages.sh $$(grep -v '^#' deploy/test-packages.txt)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]' $(EDITABLE)
	@touch $@ $(VENV)/.installed

clean:
	rm -rf $(VENV) build *.egg-info
