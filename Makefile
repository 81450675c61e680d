# The two commands a newcomer needs:  make demo  and  make test.
# Both build their own virtual environment from pyproject.toml.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin

.PHONY: demo test check lint typecheck imports schema bench soak chaos screenshots browser clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,bench]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/tracker up --demo

# Chromium for the browser tests comes from Debian (never `playwright install`).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Chromium is missing: sudo apt-get install chromium" >&2; exit 1; fi; }

test: $(VENV)/.installed browser
	$(PY) -m pytest -q

lint: $(VENV)/.installed
	$(BIN)/ruff format --check tracker tests $(wildcard bench tools)
	$(BIN)/ruff check tracker tests $(wildcard bench tools)
	$(PY) -m tracker.schema --check docs/schema

# regenerate the published JSON Schemas (docs/schema) after changing a message or an event
schema: $(VENV)/.installed
	$(PY) -m tracker.schema docs/schema

typecheck: $(VENV)/.installed
	$(BIN)/mypy

imports: $(VENV)/.installed
	$(BIN)/lint-imports

check: lint typecheck imports test

bench: $(VENV)/.installed
	$(PY) -m bench

soak: $(VENV)/.installed
	$(PY) -m pytest -q -m soak -p no:cacheprovider

# randomized fault rounds per deployment (TRACKER_CHAOS_ROUNDS, default 200; TRACKER_CHAOS_SEED): tests/chaos
chaos: $(VENV)/.installed
	$(PY) -m pytest -q -m chaos -p no:cacheprovider tests/chaos

screenshots: $(VENV)/.installed browser
	TRACKER_SCREENSHOTS=docs/img $(PY) -m pytest -q -p no:cacheprovider tests/web/test_browser.py tests/web/test_stakes_pages.py -k 'screenshots or stakes or cue'

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
