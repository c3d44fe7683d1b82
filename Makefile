# Two commands do all set-up on a fresh machine: `make lab` and `make test`.
# Everything lands in .venv; the stamp makes the second run a no-op until pyproject.toml changes.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The course's JupyterLab settings (no news pop-up over the lesson), where JupyterLab reads defaults.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
# A student's JupyterLab, without nbgrader's instructor tools: lab-settings/for-students installs it into
# .venv (and Binder's environment, from binder/postBuild); this is the last file it writes.
STUDENT_LAB := $(VENV)/etc/jupyter/jupyter_server_config.d/nbgrader_for_students.json
# Debian 12's kernel, which the confinement test on that kernel boots under QEMU (tests/debian_vm.py).
DEBIAN_12_KERNEL := build/debian-12-kernel.deb
# Jupyter refuses to run as root unless told; CI and containers run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab lab-instructor test release bench system-deps test-system-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,cluster]'
	touch $@

# pyproject.toml installs it as data-files, which pip's editable install leaves out (Binder's does not).
$(LAB_SETTINGS): lab-settings/overrides.json $(STAMP)
	install -D -m 644 $< $@

$(STUDENT_LAB): lab-settings/for-students lab-settings/page_config.json lab-settings/nbgrader_for_students.json $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH sh lab-settings/for-students

system-deps:
	@sh .ci/system-deps

test-system-deps:
	@sh .ci/system-deps --tests

$(DEBIAN_12_KERNEL):
	sh .ci/debian-12-kernel $@

lab: $(STAMP) $(LAB_SETTINGS) $(STUDENT_LAB) system-deps
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=course $(ROOT_FLAG)

# The instructor's JupyterLab, on the nbgrader course directory: lab-settings/instructor brings back the
# formgrader, create assignment, course list and assignment list that a student's JupyterLab leaves out.
lab-instructor: $(STAMP) $(LAB_SETTINGS) system-deps
	cd solutions && JUPYTER_CONFIG_PATH=$(CURDIR)/lab-settings/instructor \
		$(abspath $(BIN))/jupyter lab --ServerApp.ip=127.0.0.1 $(ROOT_FLAG)

test: $(STAMP) $(LAB_SETTINGS) $(STUDENT_LAB) test-system-deps $(DEBIAN_12_KERNEL)
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
