# Arena: `make run` starts Arena's main job, `make test` runs every check. Both set up .venv first.
PYTHON ?= python3
# pytest workers in `make test` (pytest-xdist, each given whole files: the README's blocks run in
# order); 0 runs the suite in this one process.
PYTEST_WORKERS ?= 2
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run cluster test test-slow lint typecheck imports pytest bench screenshots format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

## run: set up .venv and start the Arena server on SQLite (arena.db), house bots ready.
run: $(STAMP)
	$(BIN)/arena serve

## cluster: Arena scaled out as local processes (docs/SCALING.md): 2 servers, 2 workers and a
## proxy on :8000, on PostgreSQL and Redis (ARENA_DATABASE_URL, ARENA_REDIS_URL must be set).
CLUSTER_SERVERS ?= 2
CLUSTER_WORKERS ?= 2
cluster: $(STAMP)
	$(BIN)/arena cluster --servers $(CLUSTER_SERVERS) --workers $(CLUSTER_WORKERS)

## test: set up .venv with the dev extras and run ruff, mypy, import-linter and pytest.
test: lint typecheck imports pytest

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

imports: $(DEV_STAMP)
	$(BIN)/lint-imports

pytest: $(DEV_STAMP)
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile

## test-slow: only the tests marked slow (deep perft, whole data files).
test-slow: $(DEV_STAMP)
	$(BIN)/pytest -m slow

## bench: run the benchmarks that compare Arena with its peers.
bench: $(DEV_STAMP)
	$(BIN)/python bench/perft.py
	$(BIN)/python bench/search.py
	$(BIN)/python bench/protocol.py
	$(BIN)/python bench/connect4.py
	$(BIN)/python bench/server.py
	$(BIN)/python bench/web.py
	$(BIN)/python bench/grading.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/endings.py

## screenshots: redraw the pages' pictures in docs/img (docs/WEB.md) from a seeded server.
screenshots: $(DEV_STAMP)
	$(BIN)/python docs/screenshots.py

format: $(DEV_STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis build *.egg-info
