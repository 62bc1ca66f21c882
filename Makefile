# `make run` and `make test` set everything up on a fresh machine. They install uv (pinned, into
# .uv/) and let it build .venv at the repository root from uv.lock: exactly the versions the
# suite passed with, checked against the lock's hashes, with every extra (dev, mpi, datasets;
# the mpi extra brings MPICH as a wheel, so CI runs the MPI driver's tests).
# `make test-latest` resolves the newest releases into .venv-latest and runs the suite there,
# `make test-lowest` the lowest versions pyproject.toml admits into .venv-lowest;
# `make lock-upgrade` moves uv.lock itself to them (then `make test`, and commit uv.lock).
PYTHON ?= python3
UV_VERSION := 0.13.9
UV_DIR := .uv
UV := $(UV_DIR)/bin/uv
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
LATEST := .venv-latest
LOWEST := .venv-lowest
PEERS := .venv-peers
PEERS_STAMP := $(PEERS)/.installed-stamp

# uv builds environments on this machine's Python only (it never downloads an interpreter), and
# keeps the project's environment at .venv.
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)

# The suite runs on every core, one pytest worker each (pytest-xdist; `make test WORKERS=0`
# runs it in one process; the tests of one `xdist_group` share a worker), and one BLAS/OpenMP
# thread per process, so that a test's numpy calls do not oversubscribe them (benchmarks pin
# their own threads with threadpoolctl).
SINGLE_THREADED := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
WORKERS ?= auto

# Floating point alike on every x86-64 processor with AVX2: OpenBLAS's Haswell kernels and numpy's
# loops up to X86_V3, whatever wider units the processor has (AVX-512 kernels sum in another
# order, so a seed replayed on another machine gave other last bits). The recorded replays
# (tests/sim/replays) hold under these two settings on any such machine.
export OPENBLAS_CORETYPE := Haswell
export NPY_DISABLE_CPU_FEATURES := X86_V4 AVX512_ICL AVX512_SPR

.PHONY: .venv run test test-all test-latest test-lowest lock lock-upgrade bench peers lint clean

$(UV):
	test -x $(UV_DIR)/bin/python || $(PYTHON) -m venv $(UV_DIR)
	$(UV_DIR)/bin/python -m pip install --quiet 'uv==$(UV_VERSION)'

# --locked: if pyproject.toml was changed without `make lock`, this stops and says so, rather than
# installing versions the lock does not name. Bytecode is compiled at install, as pip does and uv
# does not by default, for the dependencies and the library: a process that may not write
# __pycache__ (PYTHONDONTWRITEBYTECODE, a read-only tree) otherwise compiles numba, scipy and the
# library from source on every start — an MPI rank's imports took 4.6 s instead of 1.7 here.
$(STAMP): pyproject.toml uv.lock | $(UV)
	$(UV) sync --locked --all-extras --compile-bytecode --python $(PYTHON) --quiet
	$(BIN)/python -m compileall -q -j 0 protocols parties sim algorithms
	touch $(STAMP)

.venv: $(STAMP)

run: $(STAMP)
	$(BIN)/mpcsim run scenarios/quickstart.toml

test: $(STAMP)
	$(SINGLE_THREADED) $(BIN)/python -m pytest -q -m "not slow" -n $(WORKERS) --dist loadgroup

test-all: $(STAMP)
	$(SINGLE_THREADED) $(BIN)/python -m pytest -q -n $(WORKERS) --dist loadgroup

# The newest release of every dependency that pyproject.toml admits, in a fresh .venv-latest; the
# versions that differ from the lock are printed before the suite runs. uv.lock is not touched.
test-latest: | $(UV)
	$(UV) venv --clear --quiet --python $(PYTHON) $(LATEST)
	$(UV) pip install --quiet --compile-bytecode --python $(LATEST)/bin/python --upgrade \
		-e '.[dev,mpi,datasets]'
	@$(UV) export --frozen --all-extras --no-hashes --no-emit-project --no-header --quiet \
		| grep -v '^ *#' | sed 's/ *;.*//' | sort > $(LATEST)/locked.txt
	@$(UV) pip freeze --python $(LATEST)/bin/python --exclude-editable | sort > $(LATEST)/latest.txt
	@echo "# newer than uv.lock:"; comm -13 $(LATEST)/locked.txt $(LATEST)/latest.txt
	$(SINGLE_THREADED) $(LATEST)/bin/python -m pytest -q -m "not slow" -n $(WORKERS) --dist loadgroup -p no:cacheprovider

# The lower bounds of pyproject.toml, kept honest: every direct dependency at the lowest version
# it admits (their own dependencies as uv resolves them), in .venv-lowest, and the suite there.
test-lowest: | $(UV)
	$(UV) venv --clear --quiet --python $(PYTHON) $(LOWEST)
	$(UV) pip install --quiet --compile-bytecode --python $(LOWEST)/bin/python \
		--resolution lowest-direct -e '.[dev,mpi,datasets]'
	$(SINGLE_THREADED) $(LOWEST)/bin/python -m pytest -q -m "not slow" -n $(WORKERS) --dist loadgroup -p no:cacheprovider

# After editing the dependencies in pyproject.toml: re-resolve uv.lock, keeping every other pin.
lock: | $(UV)
	$(UV) lock --python $(PYTHON)

# Move every pin to the newest release pyproject.toml admits; run `make test` before committing.
lock-upgrade: | $(UV)
	$(UV) lock --upgrade --python $(PYTHON)

bench: $(STAMP)
	@for script in benchmarks/*.py; do echo "# $$script" >&2; $(BIN)/python $$script || exit 1; done

# The side-by-side comparisons with MPyC, SPU, CrypTen and Flower (benchmarks/peers/): the peers
# go into their own environment, .venv-peers, from benchmarks/peers/requirements.txt (pinned, with
# hashes; re-resolve it with the command at the top of benchmarks/peers/requirements.in), never
# into .venv — `make test` does not install them. Each script runs mpcsim's arm in .venv and
# the peers' arms in .venv-peers, interleaved, and prints JSON lines with the ratios.
# CrypTen's metadata names the retired `sklearn` shim, whose sdist refuses to build unless told.
$(PEERS_STAMP): benchmarks/peers/requirements.txt | $(UV)
	$(UV) venv --clear --quiet --python $(PYTHON) $(PEERS)
	SKLEARN_ALLOW_DEPRECATED_SKLEARN_PACKAGE_INSTALL=True \
		$(UV) pip install --quiet --python $(PEERS)/bin/python --require-hashes \
		-r benchmarks/peers/requirements.txt
	touch $(PEERS_STAMP)

peers: $(STAMP) $(PEERS_STAMP)
	@for script in $(filter-out %/harness.py,$(wildcard benchmarks/peers/*.py)); do echo "# $$script" >&2; \
		$(SINGLE_THREADED) $(BIN)/python $$script || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) $(LATEST) $(LOWEST) $(PEERS) $(UV_DIR) build *.egg-info .pytest_cache
