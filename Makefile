# autodiff_tutor: every target sets up its own virtual environment in .venv.
#
#   make lab     the course in JupyterLab (notebooks/: the lessons with their solutions)
#   make release the course for a class (nbgrader): students' version and autograder in course/
#   make test    lint, unit/oracle tests, doctests, notebooks, book pages, a graded round trip
#   make test-browser  the course and the book in headless Chromium (Playwright)
#   make book    build the documentation book (pages are executed)
#   make bench   run the benchmarks
#   make fuzz    differential fuzzing: N random programs (make fuzz N=100000), reproducers in fuzz-failures/
#   make format  format and auto-fix lint
#   make clean   remove build outputs and caches (keeps .venv)
#
# The only prerequisite is python3 with venv and pip; packages come from pip's
# configured index. Re-installation happens only when pyproject.toml changes.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.autodiff_tutor-installed
LAB_STAMP := $(VENV)/.autodiff_tutor-lab-installed
GRADING_STAMP := $(VENV)/.autodiff_tutor-grading-installed
BROWSER_STAMP := $(VENV)/.autodiff_tutor-browser-installed
# -qq: errors only (pip warns about every unreachable extra index otherwise).
PIP_FLAGS ?= -qq --progress-bar off
# `make lab` shows pip's progress: a student sees the course being installed.
LAB_PIP_FLAGS ?=

# Everything pytest checks: tests, package doctests, course notebooks, book pages.
TEST_PATHS := tests autodiff_tutor grading notebooks book
NBVAL_FLAGS := --nbval-lax --nbval-current-env --ignore=book/_build
# The tests run on every core (pytest-xdist); each file (a notebook's cells too) stays
# on one worker. `make test PARALLEL=` runs them in one process.
PARALLEL ?= -n auto --dist loadfile
# Extra pytest options, e.g. `make test PYTEST_FLAGS="-x -k fuzz"`.
PYTEST_FLAGS ?=
# Browser tests (tests/browser, marker `browser`) are left out of `make test`.
BROWSER_TESTS := tests/browser

# The long fuzz campaign: how many programs, from which seed, and extra options
# (e.g. FUZZ_FLAGS="--modes compiler,tracing --exclude cast_int"). The programs run
# in FUZZ_WORKERS worker processes, each replaced after 1000 programs.
N ?= 100000
FUZZ_START ?= 0
FUZZ_WORKERS ?= 1
FUZZ_FLAGS ?=

# JupyterLab refuses to start as root without --allow-root (containers, cloud VMs,
# course server images), and on a Linux machine with no display there is no browser
# to open. LAB_ARGS adds options of your own, e.g. `make lab LAB_ARGS="--port=9999"`.
USER_ID ?= $(shell id -u)
HAS_DISPLAY ?= $(if $(or $(DISPLAY),$(WAYLAND_DISPLAY),$(filter-out Linux,$(shell uname -s))),yes)
LAB_FLAGS := $(if $(filter 0,$(USER_ID)),--allow-root) $(if $(HAS_DISPLAY),,--no-browser)
LAB_ARGS ?=
# The folder `make lab` opens: notebooks/ (each exercise with its solution), or the
# students' version that `make release` writes (`make lab LAB_DIR=course/release`).
LAB_DIR ?= notebooks/
# Where `make release` writes nbgrader's course directory (`make release COURSE=/srv/course`).
COURSE ?= course

.PHONY: help env lab release test test-browser book bench fuzz format clean distclean execute

help:
	@sed -n '3,11p' Makefile | sed 's/^# *//'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Install (editable) when the venv is new or pyproject.toml changed since last time.
# The tests' environment has the course's packages and the grading tool too.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[lab,dev,grading]'
	@touch $(STAMP) $(LAB_STAMP) $(GRADING_STAMP)

# The course alone (the lab extra, without the test and book tools).
$(LAB_STAMP): pyproject.toml | $(BIN)/python
	@echo "Installing the course's packages (JupyterLab, numpy, sympy, matplotlib, Dask):"
	@echo "a few minutes the first time, seconds after that."
	$(BIN)/python -m pip install $(LAB_PIP_FLAGS) -e '.[lab]'
	@touch $(LAB_STAMP)

# The course and nbgrader (the `grading` extra): what an instructor's hub image has.
$(GRADING_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[lab,grading]'
	@touch $(GRADING_STAMP) $(LAB_STAMP)

# Playwright only for the browser tests (the `browser` extra).
$(BROWSER_STAMP): $(STAMP)
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[lab,dev,browser]'
	@touch $(BROWSER_STAMP)

env: $(STAMP)

lab: $(LAB_STAMP)
	$(BIN)/jupyter lab $(LAB_FLAGS) $(LAB_ARGS) $(LAB_DIR)

# nbgrader's course directory in $(COURSE): source/ (a copy of notebooks/), release/ (the
# students' version: no solutions, no hidden tests, no outputs), gradebook.db (the
# autograder). Then nbgrader's commands, run in $(COURSE), release, collect and grade.
release: $(GRADING_STAMP)
	$(BIN)/python -m grading.release --course $(COURSE)

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest $(TEST_PATHS) $(NBVAL_FLAGS) --ignore=$(BROWSER_TESTS) $(PARALLEL) $(PYTEST_FLAGS)

# Builds the book, then drives JupyterLab and the book in Chromium (/usr/bin/chromium,
# Debian's `chromium`: .ci/run installs it; the tests are skipped, saying why, where it
# is missing). Screenshots go to build/screenshots.
test-browser: book $(BROWSER_STAMP)
	$(BIN)/python -m pytest $(BROWSER_TESTS) -m browser -rs $(PYTEST_FLAGS)

book: $(STAMP)
	$(BIN)/jupyter-book build book/

bench: $(STAMP)
	@if [ -f benchmarks/__main__.py ]; then \
		$(BIN)/python -m benchmarks; \
	else \
		echo "make bench: no benchmarks yet (benchmarks/__main__.py is missing)."; \
	fi

# Writes minimized reproducers, summary.txt and failures.json to fuzz-failures/;
# exits non-zero when any program was wrong or crashed.
fuzz: $(STAMP)
	cd tests && ../$(BIN)/python -m fuzz -n $(N) --start $(FUZZ_START) -j $(FUZZ_WORKERS) \
		--out ../fuzz-failures $(FUZZ_FLAGS)

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Re-run the committed notebooks and book pages in place (outputs saved, no timings).
execute: $(STAMP)
	@for nb in notebooks/*.ipynb $$(find book -name '*.ipynb' -not -path 'book/_build/*'); do \
		echo "executing $$nb"; \
		$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
			--ExecutePreprocessor.kernel_name=python3 \
			--ExecutePreprocessor.record_timing=False "$$nb" || exit 1; \
	done

clean:
	rm -rf book/_build build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o \
		\( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
