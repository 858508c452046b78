# Developer shortcuts; CI (.ci/run) runs the same scripts in a fresh venv.
PYTHON ?= .venv/bin/python

.PHONY: check test test-fast test-e2e test-slow

# ruff check, ruff format --check, mypy, import-linter, mkdocs build --strict (all of them, then one verdict)
check:
	PYTHON=$(PYTHON) bash .ci/check

# the default test run: unit and end-to-end tests minus the `slow` ones (the README's command)
test:
	$(PYTHON) -m pytest -q

# unit tests only: seconds, not minutes
test-fast:
	$(PYTHON) -m pytest -q -m "not e2e and not optional and not cluster"

test-e2e:
	$(PYTHON) -m pytest -q -m "e2e and not slow and not optional and not cluster"

# the heaviest end-to-end tests, a step of their own in .ci/run
test-slow:
	$(PYTHON) -m pytest -q -m "slow and not optional and not cluster"
