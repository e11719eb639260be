# transformer-theory: `make book` and `make test` do all set-up on a fresh machine.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := book

PROFILE ?= book
JOBS ?= 2
NOTEBOOKS ?=
LAB_ARGS ?=
yes = $(filter 1 yes true,$(1))
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

NAMES := $(notdir $(basename $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))))
## PROFILE must name one file params/<PROFILE>.yaml
PROFILES := $(notdir $(basename $(sort $(wildcard params/*.yaml))))
ifneq ($(words $(PROFILE)) $(PROFILE),1 $(filter $(PROFILES),$(PROFILE)))
$(error PROFILE=$(PROFILE) is not a profile. Valid profiles (params/*.yaml): $(PROFILES))
endif
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
# last chapter first: make -j and xdist start them in this order, and the training chapters (07-14) take longest
EXECUTED := $(call reverse,$(NAMES:%=build/executed/$(PROFILE)/%.ipynb))
SRC := $(shell find src -name '*.py' 2>/dev/null)
# more than one job: one OpenMP/BLAS thread per process, as each Dask worker has. Two 2-thread torch processes on two
# cores oversubscribe them: the smoke trainings of chapters 14 and 11 side by side took 25.3 s so, 9.6 s with one
# thread each (benchmarks/threads.py, 2026-12-07; under a third load 5 to 20 times slower)
THREADS := $(if $(filter 1,$(JOBS)),,OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1)
# the unit tests' pytest-xdist workers: one more than JOBS, since many tests wait on a subprocess or a kernel
# (4 min 12 s on three workers against 4 min 29 s on two, measured on this 2-core machine); work stealing, since the
# tests' durations range from milliseconds to half a minute: a worker that runs out takes queued tests from the others
TEST_JOBS := $(shell echo $$(( $(JOBS) + 1 )))

.PHONY: book test execute html lab reproduce accept benchmark clean

## set-up: the virtual environment with the pinned stack (a second call installs nothing)
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -e .
	touch $@

## execute every notebook under $(PROFILE) with papermill (parameters checked first)
build/executed/$(PROFILE)/%.ipynb: notebooks/%.ipynb params/$(PROFILE).yaml $(SRC) | $(STAMP)
	$(PY) -m transformer_theory run $* --profile $(PROFILE)

execute: $(STAMP)
	$(THREADS) $(MAKE) --no-print-directory -j$(JOBS) $(EXECUTED)

## render the executed notebooks (execution off) into book/_build/html
html: execute
	rm -rf book/notebooks && mkdir -p book/notebooks
	cp $(EXECUTED) book/notebooks/
	$(PY) -m transformer_theory report --profile $(PROFILE) --output book/reproducibility.md
	$(PY) -m transformer_theory claims --output book/claims.md
	$(VENV)/bin/jupyter-book build book -W -n --keep-going
	@echo "Book ($(PROFILE) profile): $(CURDIR)/book/_build/html/index.html"

book: html

## unit tests, smoke execution, nbval on the executed notebooks, the book build, the browser check;
## all but the book build on $(JOBS) processes (pytest-xdist, the unit tests on $(TEST_JOBS); a notebook's cells, and a
## page's checks, stay in one process)
test: $(STAMP)
	$(THREADS) $(PY) -m pytest tests --ignore=tests/book -n $(TEST_JOBS) --dist worksteal
	$(MAKE) --no-print-directory html PROFILE=smoke
	# nbval's kernels re-run the smoke notebooks: they read their profile (and run store) as the runner's kernels do
	$(THREADS) TRANSFORMER_THEORY_PROFILE=smoke $(PY) -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider \
		-n $(JOBS) --dist loadfile $(call reverse,$(NAMES:%=build/executed/smoke/%.ipynb))
	$(THREADS) $(PY) -m pytest tests/book -n $(JOBS) --dist loadgroup

## JupyterLab on the notebooks (as root with --allow-root); LAB_ARGS="--no-browser --port 8899": more options
lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

## recompute $(PROFILE) from scratch into build/reproduce/$(PROFILE)/ (notebooks, results JSONs and a fresh run
## store: results/ is only read) and print the recomputed key numbers and best NMSEs against the committed ones,
## with the time of each part. ACCEPT=1: then copy them into results/$(PROFILE)/. RESUME=1: keep what an
## interrupted reproduction finished (its trainings resume from their checkpoints). NOTEBOOKS="05_tikhonov ...":
## only these chapters. WORKERS=N: the Dask workers that train the training chapters' runs first (default one per core).
reproduce: $(STAMP)
	$(if $(call yes,$(RESUME)),,rm -rf build/reproduce/$(PROFILE))
	$(PY) -m transformer_theory reproduce --profile $(PROFILE) $(if $(call yes,$(ACCEPT)),--accept) $(if $(WORKERS),--workers $(WORKERS)) $(NOTEBOOKS)

## copy the last `make reproduce` of $(PROFILE) into results/$(PROFILE)/ without recomputing anything
accept: $(STAMP)
	$(PY) -m transformer_theory reproduce --profile $(PROFILE) --no-run --accept $(NOTEBOOKS)

benchmark: $(STAMP)
	for f in benchmarks/*.py; do $(PY) $$f; done

clean:
	rm -rf build book/_build book/notebooks book/reproducibility.md book/claims.md
