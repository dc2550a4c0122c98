# Canon: `make run` (dashboard with demo data on SQLite) and `make test` (everything).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=

.PHONY: install chromium run demo test lint typecheck pytest bench clean

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
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

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

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .mypy_cache .ruff_cache
