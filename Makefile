# Two commands do all set-up on a fresh machine: `make lab` and `make test`.
# Everything lands in .venv; the stamp makes the second run a no-op until pyproject.toml changes.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The course's JupyterLab settings (no news pop-up over the lesson), where JupyterLab reads defaults.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
# Jupyter refuses to run as root unless told; CI and containers run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test release bench system-deps test-system-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,cluster]'
	touch $@

# pyproject.toml installs it as data-files, which pip's editable install leaves out (Binder's does not).
$(LAB_SETTINGS): lab-settings/overrides.json $(STAMP)
	install -D -m 644 $< $@

system-deps:
	@sh .ci/system-deps

test-system-deps:
	@sh .ci/system-deps --browser

lab: $(STAMP) $(LAB_SETTINGS) system-deps
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=course $(ROOT_FLAG)

test: $(STAMP) $(LAB_SETTINGS) test-system-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto --dist loadgroup

release: $(STAMP)
	$(BIN)/python -m autograder release

BENCHMARKS := lessons grading interactive cluster

# Every benchmark runs and prints its budgets, met or missed; only then does a missed one fail the target.
bench: $(STAMP) system-deps
	@failed=""; for name in $(BENCHMARKS); do \
		echo "== $$name"; $(BIN)/python tests/bench_$$name.py || failed="$$failed $$name"; \
	done; \
	if [ -n "$$failed" ]; then echo "budgets missed in:$$failed"; exit 1; fi

clean:
	rm -rf $(VENV) build solutions/release solutions/submitted solutions/autograded solutions/feedback solutions/gradebook.db
