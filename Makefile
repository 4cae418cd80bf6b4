# The two commands of a fresh machine: `make reproduce` and `make test`. Both create .venv when it is absent.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= full
# Keep BLAS to one thread: the simulator is vectorized and MPI ranks share 2 cores.
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg
# Import gclib from this checkout, whichever venv is used.
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: setup reproduce test bench lab clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[all]'
	touch $@

setup: $(VENV)/.installed

reproduce: setup
	$(PY) -m gclib reproduce --profile $(PROFILE)

test: setup
	$(PY) -m pytest -q

bench: setup
	$(PY) -m benchmarks

lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

clean:
	rm -rf build .pytest_cache
