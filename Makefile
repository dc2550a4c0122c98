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

.PHONY: install chromium squad-tools mcp-clients run serve demo test lint typecheck pytest bench clean

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

# `make squad-tools` and `make mcp-clients` install the npm packages that a lock file pins, with the Node they
# need, once per lock file into a folder outside the checkout, which later runs and fresh clones on the same
# machine reuse. `npm install --no-save` installs exactly the lock's versions (`npm ls` checks the tree against
# it); `npm ci` refuses the interop lock, which holds the optional platform packages of Linux only.
# $(call npm_tools,FOLDER,SOURCE,NODE,WHAT): SOURCE holds the package.json and package-lock.json; the Node
# installed with them must be NODE (major.minor.patch) or later.
define npm_tools
	@if [ ! -f "$(1)/.installed" ]; then \
		echo "installing $(4) into $(1)"; \
		rm -rf "$(1)"; \
		partial="$(1).partial-$$$$"; \
		mkdir -p "$$partial" \
		&& cp $(2)/package.json $(2)/package-lock.json "$$partial/" \
		&& (cd "$$partial" && npm install --no-save --no-audit --no-fund --loglevel=error && npm ls --all >/dev/null) \
		&& "$$partial/node_modules/.bin/node" -e 'const [have, need] = [process.versions.node, "$(3)"].map((v) => v.split(".").map(Number)); const i = have.findIndex((part, k) => part !== need[k]); process.exit(i < 0 || have[i] > need[i] ? 0 : 1)' \
		&& touch "$$partial/.installed" \
		&& { mv -T "$$partial" "$(1)" 2>/dev/null || rm -rf "$$partial"; } \
		|| { rm -rf "$$partial"; echo "could not install $(4) into $(1)"; exit 1; }; \
	fi
endef

# The interop tests (tests/interop/) run the published Squad program: its CLI and SDK, with the Node 22 they
# need, pinned by tests/interop/package-lock.json. The tests find it through SQUAD_TOOLS (tests/interop/squad.py
# computes the same default).
SQUAD_TOOLS ?= $(HOME)/.cache/canon/squad-$(shell cksum tests/interop/package-lock.json | cut -d' ' -f1)
export SQUAD_TOOLS

squad-tools:
	$(call npm_tools,$(SQUAD_TOOLS),tests/interop,22.5.0,Squad for the interop tests)

# The MCP client tests (tests/mcp_clients/) drive Canon's MCP server with the clients people use: the MCP
# Inspector's CLI and the TypeScript SDK's client, with the Node 22 the Inspector needs, pinned by
# tests/mcp_clients/package-lock.json. The tests find them through MCP_CLIENTS (tests/mcp_clients/clients.py
# computes the same default).
MCP_CLIENTS ?= $(HOME)/.cache/canon/mcp-clients-$(shell cksum tests/mcp_clients/package-lock.json | cut -d' ' -f1)
export MCP_CLIENTS

mcp-clients:
	$(call npm_tools,$(MCP_CLIENTS),tests/mcp_clients,22.7.5,the MCP clients for their tests)

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

# The production server (docs/configuration.md "Production server"): DEBUG off, so DJANGO_SECRET_KEY must be set; the
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

pytest: install chromium squad-tools mcp-clients
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck pytest

bench: install
	$(BIN)/python bench/api.py
	$(BIN)/python bench/compile.py
	$(BIN)/python bench/mirror.py
	$(BIN)/python bench/dashboard.py
	$(BIN)/python bench/http.py
	$(BIN)/python bench/search.py
	$(BIN)/python bench/relevance.py
	$(BIN)/python bench/adoption.py

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .mypy_cache .ruff_cache
