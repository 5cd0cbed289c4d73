# Two commands on a fresh machine: `make run` (environment + whole pipeline), `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export DAGSTER_HOME ?= $(CURDIR)/data/dagster_home
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# pip installs without compiling bytecode (--no-compile: about 50 s of the 90 s install, most of it
# for modules never imported, torch's among them); Python then compiles what is imported, once, and
# must be allowed to keep it, whatever the calling shell says.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: env run test lint ui ui-team docs bench clean browser-deps

$(STAMP): pyproject.toml requirements.lock
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -c requirements.lock -e '.[test]'
	$(PY) -m workbank_dagster.labeling.onnx_model
	touch $(STAMP)

env: $(STAMP)

run: $(STAMP)
	$(PY) -m workbank_dagster.cli run

# Two pytest-xdist workers (PYTEST_WORKERS=0 runs in this process), each taking whole files, so the
# e2e tests (one file) share one worker and one full run; files are taken in the order conftest.py
# sets (slowest first), not by test count; the 25 slowest tests close the output.
PYTEST_WORKERS ?= 2
test: $(STAMP) browser-deps lint
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25 $(PYTEST_ARGS)

# ruff on the Python, sqlfluff on the dbt models and tests (both pinned in pyproject's test extra).
# The macros are Jinja that writes SQL, not SQL: sqlfluff reads them to render the models.
lint: $(STAMP)
	$(VENV)/bin/ruff check workbank_dagster tests bench tools dbt_project/sqlfluff_libs
	cd dbt_project && ../$(VENV)/bin/sqlfluff lint models tests

# The report's browser test drives Debian's Chromium through its ChromeDriver (never a downloaded browser).
browser-deps:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then exit 0; fi; \
	command -v apt-get >/dev/null || { echo "need Debian packages chromium and chromium-driver"; exit 1; }; \
	SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	$$SUDO apt-get install -y -q chromium chromium-driver >/dev/null || \
	{ $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q chromium chromium-driver >/dev/null; }

bench: $(STAMP)
	$(PY) bench/run.py $(BENCH_ARGS)

ui: $(STAMP)
	$(PY) -m workbank_dagster.cli home
	$(VENV)/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p $${PORT:-3000}

# The same UI on a team instance: PostgreSQL (a local cluster the project starts, as an unprivileged
# user, on 127.0.0.1), the queued run coordinator and the pools; Ctrl-C stops all of it.
ui-team: $(STAMP)
	$(PY) -m workbank_dagster.cli team ui --port $${PORT:-3000} --postgres-port $${PG_PORT:-5433}

# dbt's own docs site for the warehouse `make run` built, on http://127.0.0.1:8080 (PORT=…).
docs: $(STAMP)
	cd dbt_project && PROFILES="$$(../$(PY) -m workbank_dagster.cli dbt-profiles)" && ../$(VENV)/bin/dbt docs generate --profiles-dir "$$PROFILES" --target-path target/docs && \
	../$(VENV)/bin/dbt docs serve --profiles-dir "$$PROFILES" --target-path target/docs --host 127.0.0.1 --port $${PORT:-8080} --no-browser

clean:
	rm -rf data dbt_project/target dbt_project/logs
