# Canon: `make run` (dashboard with demo data on SQLite), `make test` (everything) and `make serve`
# (the production server).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# `make serve`: worker processes (empty: two per core, see config/serve.py) and the main process's pid file.
WORKERS ?=
PIDFILE ?= var/serve.pid

.PHONY: install chromium run serve demo test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

install: $(STAMP)

# Browser tests drive Debian's Chromium through Playwright (Playwright's own download is not used).
chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "chromium is missing: run 'sudo apt-get install -y chromium' (needed by tests/browser)"; exit 1; \
	fi

# `make run` is a development server: debug pages and the built-in development secret key, unless the
# environment says otherwise. Everything else runs with DEBUG off and needs DJANGO_SECRET_KEY.
demo run: export DJANGO_DEBUG ?= true

demo: install
	$(BIN)/python manage.py migrate --verbosity 0
	$(BIN)/python manage.py demo --url http://$(HOST):$(PORT)/

# The worker runs the queued exports (docs/mirror.md); it stops when the server does, Ctrl-C included.
run: demo
	@$(BIN)/python manage.py db_worker --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker' EXIT INT TERM; \
	$(BIN)/python -m uvicorn config.asgi:application --reload --reload-dir config --reload-dir ledger \
		--reload-dir review --host $(HOST) --port $(PORT)

# The production server (README "Production server"): DEBUG off, so DJANGO_SECRET_KEY must be set; the
# first step stops with the settings' message otherwise. Granian's workers serve config.asgi (dashboard,
# API, static files, /mcp/) on HOST:PORT; `kill -HUP $$(cat $(PIDFILE))` restarts every worker without
# dropping a request. The export worker runs beside it and stops with it.
serve: install
	@$(BIN)/python -m config.serve --check
	$(BIN)/python manage.py migrate --verbosity 0
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@$(BIN)/python manage.py db_worker --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker' EXIT INT TERM; \
	$(BIN)/python -m config.serve --host $(HOST) --port $(PORT)$(if $(WORKERS), --workers $(WORKERS)) --pid $(PIDFILE)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

pytest: install chromium
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck pytest

bench: install
	$(BIN)/python bench/api.py
	$(BIN)/python bench/compile.py
	$(BIN)/python bench/mirror.py
	$(BIN)/python bench/dashboard.py
	$(BIN)/python bench/http.py
	$(BIN)/python bench/search.py

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .mypy_cache .ruff_cache
