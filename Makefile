# The two commands a newcomer needs:  make demo  and  make test.
# Both build their own virtual environment from pyproject.toml.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin

CHECKOV_VENV ?= .venv-checkov

.PHONY: demo test check lint typecheck imports schema i18n bench soak chaos screenshots browser engine clean checkov cluster wheel

# the compiled modules (setup.py, [tool.tracker] compiled: the projection's search, the per-result core): an edit to one rebuilds the extensions
COMPILED := $(shell sed -n '/^compiled = \[/,/^]/s/^ *"\(.*\)",$$/\1/p' pyproject.toml)

$(VENV)/.installed: pyproject.toml setup.py $(COMPILED)
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

# Stockfish for the follow --engine tests comes from Debian too (/usr/games/stockfish).
engine:
	@command -v stockfish >/dev/null 2>&1 || [ -x /usr/games/stockfish ] || { \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stockfish >/dev/null; \
	  else echo "Stockfish is missing: sudo apt-get install stockfish" >&2; exit 1; fi; }

# the suite on TEST_WORKERS pytest-xdist workers (0: one process): most tests wait on real processes (servers,
# brokers, Chromium), so more workers than the 2 cores (the 2-core machine, b144974, idle: six 384 s with 1.96
# cores busy, four 405 s with 1.85; the README has the busy figures); a module sharing a module-scoped fixture
# stays on one worker (--dist loadgroup, the groups are set in tests/conftest.py)
# The suite starts some 600 Python processes (servers, workers, the CLI); each imports tracker from bytecode compiled
# once, here, never from source: where PYTHONDONTWRITEBYTECODE is set (this machine sets it) every start compiled
# about 120 modules again, 0.4 s of CPU of a 0.7 s start.  The suite's run writes bytecode for the same reason
# (pytest's rewritten test modules, on each worker).
TEST_WORKERS ?= 6
test: $(VENV)/.installed browser engine
	$(PY) -m compileall -q tracker
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=25

lint: $(VENV)/.installed
	$(BIN)/ruff format --check tracker tests $(wildcard bench tools)
	$(BIN)/ruff check tracker tests $(wildcard bench tools)
	$(PY) -m tracker.schema --check docs/schema

# regenerate the published JSON Schemas (docs/schema) after changing a message or an event
schema: $(VENV)/.installed
	$(PY) -m tracker.schema docs/schema

# extract every message of the code into tracker/i18n/locale/tracker.pot and merge it into each language's PO
# file (then translate what it reports untranslated; the tests fail until every language has every key)
i18n: $(VENV)/.installed
	$(PY) -m tracker.i18n.extract

typecheck: $(VENV)/.installed
	$(BIN)/mypy

imports: $(VENV)/.installed
	$(BIN)/lint-imports

check: lint typecheck imports test

bench: $(VENV)/.installed
	$(PY) -m compileall -q tracker bench
	$(PY) -m bench

soak: $(VENV)/.installed
	$(PY) -m pytest -q -m soak -p no:cacheprovider

# randomized fault rounds per deployment (TRACKER_CHAOS_ROUNDS, default 200; TRACKER_CHAOS_SEED): tests/chaos
chaos: $(VENV)/.installed
	$(PY) -m pytest -q -m chaos -p no:cacheprovider tests/chaos

screenshots: $(VENV)/.installed browser
	TRACKER_SCREENSHOTS=docs/img $(PY) -m pytest -q -p no:cacheprovider tests/web/test_browser.py tests/web/test_stakes_pages.py tests/web/test_live_pages.py tests/web/test_i18n_pages.py tests/web/test_team_pages.py -k 'screenshots or stakes or cue or live or progress or team_table'

# checkov in a virtual environment of its own: it pins packaging<24, which pytest (packaging>=24) cannot share
$(CHECKOV_VENV)/.installed: deploy/checkov-requirements.txt
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install -q --upgrade pip
	$(CHECKOV_VENV)/bin/python -m pip install -q -r deploy/checkov-requirements.txt
	touch $@

# the Dockerfile and the Kubernetes manifests against checkov's policies (each skip is justified in its manifest);
# the report is kept in build/ and printed again while no file of deploy/ changed, so the suite's checkov test
# after .ci/run's `make checkov` reads the scan of the same files instead of repeating a minute of it
CHECKOV_REPORT := build/checkov.txt
$(CHECKOV_REPORT): $(CHECKOV_VENV)/.installed $(shell find deploy -type f)
	mkdir -p build
	$(CHECKOV_VENV)/bin/checkov -d deploy --skip-download --compact --quiet > $@.part || { cat $@.part; rm -f $@.part; exit 1; }
	mv $@.part $@

checkov: $(CHECKOV_REPORT)
	@cat $(CHECKOV_REPORT)

# the distributed deployment on this machine without Docker: the test broker, one worker, two gateways (Ctrl-C stops all)
cluster: $(VENV)/.installed
	$(BIN)/tracker cluster

# the wheel, installed in a fresh virtual environment of its own, runs: what `pip install koya-tracker` gets
wheel: $(VENV)/.installed
	rm -rf dist build/wheel-venv
	$(PY) -m pip wheel -q --no-deps --wheel-dir dist .
	$(PYTHON) -m venv build/wheel-venv
	build/wheel-venv/bin/python -m pip install -q dist/koya_tracker-*.whl
	cd build && wheel-venv/bin/tracker --version
	cd build && wheel-venv/bin/tracker standings "$$(wheel-venv/bin/python -c 'from importlib.resources import files; print(files("tracker.data") / "sinquefield-cup-2021.trf")')" --after-round 3

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) .pytest_cache .mypy_cache .ruff_cache build dist
	find tracker -name '*.so' -delete; rm -f koya_tracker__mypyc*.so  # the editable install's extensions
