# Developer shortcuts; CI (.ci/run) runs the same scripts in a fresh venv.
PYTHON ?= .venv/bin/python

.PHONY: check test test-fast test-e2e

# ruff check, ruff format --check, mypy, import-linter (all of them, then one verdict)
check:
	PYTHON=$(PYTHON) bash .ci/check

# the default test run: unit and end-to-end tests (the README's command)
test:
	$(PYTHON) -m pytest -q

# unit tests only: seconds, not minutes
test-fast:
	$(PYTHON) -m pytest -q -m "not e2e and not optional and not cluster"

test-e2e:
	$(PYTHON) -m pytest -q -m "e2e and not optional and not cluster"
