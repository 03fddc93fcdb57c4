# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Dependencies come from uv.lock (`make lock` writes it from pyproject.toml, and exports
# requirements.txt and requirements-dev.txt from it). uv installs them in seconds: the one on
# PATH if it is the pinned version (pyproject.toml, [tool.uv] required-version), else one pip
# puts into the venv first (about 2 s). Without uv, pip installs the exported requirements,
# resolving nothing (every package is pinned there). Bytecode is compiled at install: `make
# run` may not write bytecode itself (PYTHONDONTWRITEBYTECODE).
UV_VERSION := $(shell sed -n 's/^required-version = "==\(.*\)"$$/\1/p' pyproject.toml)
define find_uv
uv=$$(command -v uv); \
if [ -z "$$uv" ] || [ "$$($$uv --version 2>/dev/null | cut -d' ' -f2)" != "$(UV_VERSION)" ]; then \
  uv=$(BIN)/uv; \
  [ "$$($$uv --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] || \
    $(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION) \
      >/dev/null 2>&1 || uv=; \
fi
endef
# $(1): what `uv sync` adds (an extra); $(2): pip's fallback requirements file.
define install
	@$(find_uv); \
	if [ -n "$$uv" ] && UV_PROJECT_ENVIRONMENT=$(VENV) $$uv sync --quiet --frozen --inexact \
	    --compile-bytecode --python $(BIN)/python $(1); then :; \
	else $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r $(2); fi
endef
EXPORT := export --frozen --no-hashes --no-emit-project --no-header --quiet
HOW_TO_LOCK := \# To add or change a dependency: pin it in pyproject.toml with a comment why, then run\n\# `make lock`. tests/test_lock.py fails when this file and uv.lock disagree.
RUNTIME_HEADER := \# GENERATED from uv.lock by `make lock` (uv export): do not edit by hand. pip installs\n\# it for `make run` when uv is not to be had; uv installs uv.lock itself.\n$(HOW_TO_LOCK)
DEV_HEADER := \# GENERATED from uv.lock by `make lock` (uv export): do not edit by hand. pip installs\n\# it (the runtime and the dev extra) for `make test` and `make lint` when uv is not to be had.\n$(HOW_TO_LOCK)
# What a developer runs before each commit: everything but the slow, cluster, browser and
# Node tests, on FAST_WORKERS pytest-xdist workers. Those tests wait on timers and sockets a
# quarter of their time: on 2 cores, 2 workers left a fifth of the CPU idle (373 s) and 3 keep
# it busy (332 s).
FAST := not slow and not cluster and not browser and not node
FAST_WORKERS ?= 3
# The browser, Node and slow tests' workers: they keep 2 cores three-quarters busy on 2 workers
# (a third gained nothing on a slower machine, 456 s and 450 s, and left a latency bound no
# room).
TEST_WORKERS ?= 2
# The cluster tests' workers: they wait on their own scaled timers (outages, stale workers, the
# demo model's pace): on 2 quiet cores, 289 s on 2 workers, 208 to 218 s on 3 (a fifth of the
# CPU still idle), 204 s on 4 (the soak alone takes 164 s then); decision 0021.
CLUSTER_WORKERS ?= 3
# `make test` runs the fast tests on the workers first, then the browser, Node and slow tests
# (on the workers too, a module to a worker: a long conversation is set up once per module),
# then the cluster tests on CLUSTER_WORKERS workers, a test at a time to a worker, the longest
# first (tests/cluster/conftest.py); `make test` runs shorter soaks than `make soak`.
# Every phase runs; any failure fails `make test`.
HEAVY := not ($(FAST)) and not cluster
PORT ?= 5000
WORKERS ?= 1
DEMO_USER ?= demo

.PHONY: run test test-fast lint lock bench soak clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `make run` needs the runtime dependencies only; tests and linters add the dev extra.
$(VENV)/.installed: uv.lock | $(BIN)/python
	$(call install,,requirements.txt)
	touch $@

$(VENV)/.installed-dev: uv.lock $(VENV)/.installed
	$(call install,--extra dev,requirements-dev.txt)
	touch $@

# After a change to the dependencies in pyproject.toml: lock them (keeping every other pin)
# and export the requirements files from the lock.
lock: | $(BIN)/python
	@$(find_uv); [ -n "$$uv" ] || { echo "make lock needs uv $(UV_VERSION)"; exit 1; }; \
	$$uv lock --quiet && \
	{ printf '%b\n' '$(RUNTIME_HEADER)'; $$uv $(EXPORT); } > requirements.txt && \
	{ printf '%b\n' '$(DEV_HEADER)'; $$uv $(EXPORT) --extra dev; } > requirements-dev.txt

# One process (start.py): the port is checked before anything else (a second `make run` stops
# there), the database migrated, the demo user seeded only while they have no finance data,
# their token printed; then gunicorn serves the app that process built, and the last line
# printed, once it serves, is the link that opens the chat page signed in.
run: $(VENV)/.installed
	@$(BIN)/python -m start --port $(PORT) --workers $(WORKERS) --user $(DEMO_USER)

# The AI SDK tests drive the server with the real `ai` package pinned in tests/aisdk (ai 7)
# and in tests/aisdk/v6 (the previous major).
AISDK := tests/aisdk
$(AISDK)/node_modules/.package-lock.json $(AISDK)/v6/node_modules/.package-lock.json: \
		%/node_modules/.package-lock.json: %/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $* && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: the AI SDK tests will skip (unless REQUIRE_NODE is set)"; fi

# The browser tests drive Debian's Chromium (downloaded browser builds do not run here).
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q chromium chromium-driver \
	      || { apt-get update -q && apt-get install -y -q chromium chromium-driver; }; \
	  else \
	    echo "chromium/chromedriver missing and not root with apt-get: browser tests will skip"; \
	  fi; \
	fi

# The tests write bytecode to __pycache__ (pytest's rewritten test modules and the project's
# own), so every xdist worker, phase and subprocess (gunicorn, readers) after the first reuses
# it: with PYTHONDONTWRITEBYTECODE set, as some machines have it, each compiled everything
# again (collecting took 34 s of CPU per process instead of 13 s on a slow 2-core machine).
test test-fast: export PYTHONDONTWRITEBYTECODE :=

test: $(VENV)/.installed-dev $(AISDK)/node_modules/.package-lock.json \
		$(AISDK)/v6/node_modules/.package-lock.json browser
	@failed=0; \
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) -m "$(FAST)" || failed=1; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope -m "$(HEAVY)" || failed=1; \
	$(BIN)/python -m pytest -q -n $(CLUSTER_WORKERS) --maxschedchunk 1 -m cluster tests/cluster \
		|| failed=1; \
	exit $$failed

test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) -m "$(FAST)"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(VENV)/.installed
	$(BIN)/python -m bench.accumulator
	$(BIN)/python -m bench.pipeline
	$(BIN)/python -m bench.caching

soak: $(VENV)/.installed-dev
	CLUSTER_SOAK_SESSIONS=120 FAULTS_SOAK_TURNS=200 $(BIN)/python -m pytest -q -s \
		tests/faults/test_soak.py tests/cluster/test_soak.py

clean:
	rm -rf $(VENV) instance .pytest_cache .hypothesis .mypy_cache $(AISDK)/node_modules \
		$(AISDK)/v6/node_modules
