# `make run` and `make test` set everything up on a fresh machine: they create .venv at the
# repository root if it is missing and install the project with its dev and mpi extras into it
# (the mpi extra brings MPICH as a wheel, so CI runs the MPI driver's tests).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: .venv run test test-all bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mpi]'
	touch $(STAMP)

.venv: $(STAMP)

run: $(STAMP)
	$(BIN)/mpcsim run scenarios/quickstart.toml

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

test-all: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	@for script in benchmarks/*.py; do echo "# $$script" >&2; $(BIN)/python $$script || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
