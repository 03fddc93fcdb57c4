# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 5000
THREADS ?= 256
DEMO_USER ?= demo

.PHONY: run test lint bench soak clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

run: $(VENV)/.installed
	$(BIN)/flask --app app db-upgrade
	$(BIN)/flask --app app seed-demo $(DEMO_USER)
	@TOKEN=$$($(BIN)/flask --app app create-user $(DEMO_USER) --if-missing) && \
	echo "API token for user '$(DEMO_USER)' (send as 'Authorization: Bearer <token>'):" && \
	echo "$$TOKEN" && echo && echo "Try:" && \
	echo "  curl -N -H 'Authorization: Bearer $$TOKEN' -H 'Content-Type: application/json' \\" && \
	echo "       -d '{\"message\": \"What did I spend on groceries last month?\"}' \\" && \
	echo "       http://127.0.0.1:$(PORT)/api/chat/stream" && echo
	@echo "Serving on http://127.0.0.1:$(PORT)"
	$(BIN)/gunicorn --bind 127.0.0.1:$(PORT) --worker-class gthread --workers 1 \
		--threads $(THREADS) --timeout 0 --graceful-timeout 10 'app:create_app()'

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.installed
	$(BIN)/python -m bench.accumulator
	$(BIN)/python -m bench.pipeline

soak: $(VENV)/.installed
	$(BIN)/python -m pytest -q -s tests/faults/test_soak.py

clean:
	rm -rf $(VENV) instance .pytest_cache .hypothesis
