# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# uv installs the pinned requirements in seconds: the one on PATH, else one pip puts into the
# venv first (about 2 s); if uv fails, pip alone, resolving nothing (every dependency is
# pinned). Bytecode is compiled at install: each command of `make run` imports the app and
# may not write bytecode itself (PYTHONDONTWRITEBYTECODE).
UV_VERSION := 0.13.9
define install
	@uv=$$(command -v uv || { $(BIN)/python -m pip install --quiet --disable-pip-version-check \
	    uv==$(UV_VERSION) >/dev/null 2>&1 && echo $(BIN)/uv; }); \
	if [ -n "$$uv" ] && $$uv pip install --quiet --compile-bytecode --python $(BIN)/python \
	    -r $(1); then :; \
	else $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r $(1); fi
endef
# What a developer runs before each commit: everything but the slow, cluster, browser and
# Node tests, on TEST_WORKERS pytest-xdist workers (the tests mostly wait on timers and
# sockets: 2 workers take 3 minutes on 2 cores where one takes 5 and a half).
FAST := not slow and not cluster and not browser and not node
TEST_WORKERS ?= 2
PORT ?= 5000
WORKERS ?= 1
DEMO_USER ?= demo

.PHONY: run test test-fast lint bench soak clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `make run` needs requirements.txt only; tests and linters add requirements-dev.txt.
$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(call install,requirements.txt)
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(call install,requirements-dev.txt)
	touch $@

# A restart never changes data: the port is checked before anything else (a second `make run`
# stops there), and the demo user is seeded only while they have no finance data.
run: $(VENV)/.installed
	@$(BIN)/flask --app app check-port $(PORT)
	$(BIN)/flask --app app db-upgrade
	$(BIN)/flask --app app seed-demo --if-empty $(DEMO_USER)
	@TOKEN=$$($(BIN)/flask --app app demo-token $(DEMO_USER)) && \
	echo "API token for user '$(DEMO_USER)' (send as 'Authorization: Bearer <token>'):" && \
	echo "$$TOKEN" && echo && \
	echo "Chat page, signed in as '$(DEMO_USER)' (open this link):" && \
	echo "  http://127.0.0.1:$(PORT)/#token=$$TOKEN" && echo && echo "Or try the API:" && \
	echo "  curl -N -H 'Authorization: Bearer $$TOKEN' -H 'Content-Type: application/json' \\" && \
	echo "       -d '{\"message\": \"What did I spend on groceries last month?\"}' \\" && \
	echo "       http://127.0.0.1:$(PORT)/api/chat/stream" && echo
	@echo "Serving on http://127.0.0.1:$(PORT)"
	$(BIN)/gunicorn -c gunicorn.conf.py --bind 127.0.0.1:$(PORT) --workers $(WORKERS) \
		'app:hosted()'

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

test: $(VENV)/.installed-dev $(AISDK)/node_modules/.package-lock.json \
		$(AISDK)/v6/node_modules/.package-lock.json browser
	$(BIN)/python -m pytest -q

test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m "$(FAST)"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(VENV)/.installed
	$(BIN)/python -m bench.accumulator
	$(BIN)/python -m bench.pipeline
	$(BIN)/python -m bench.caching

soak: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q -s tests/faults/test_soak.py tests/cluster/test_soak.py

clean:
	rm -rf $(VENV) instance .pytest_cache .hypothesis .mypy_cache $(AISDK)/node_modules \
		$(AISDK)/v6/node_modules
