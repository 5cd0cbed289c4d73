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

.PHONY: env run test ui docs bench clean

$(STAMP): pyproject.toml requirements.lock
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e '.[test]'
	touch $(STAMP)

env: $(STAMP)

run: $(STAMP)
	$(PY) -m workbank_dagster.cli run

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) bench/run.py $(BENCH_ARGS)

ui: $(STAMP)
	$(PY) -m workbank_dagster.cli home
	$(VENV)/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p $${PORT:-3000}

clean:
	rm -rf data dbt_project/target dbt_project/logs
