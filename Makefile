# The two commands of a fresh machine: `make reproduce` and `make test`. Both create .venv when it is absent and
# install the exact versions of requirements.lock into it (`pip install .` elsewhere uses pyproject.toml's ranges).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= full
# The full profile writes the committed figures/; any other profile writes beside the build, never over them.
FIGURES ?= $(if $(filter full,$(PROFILE)),figures,build/figures/$(PROFILE))
# Keep BLAS to one thread: the simulator is vectorized and MPI ranks share 2 cores.
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg
# Import gclib from this checkout, whichever venv is used.
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: setup compile reproduce test bench lab docs lock clean

$(VENV)/.installed: pyproject.toml requirements.lock
	@test -x $(PY) || { echo "setup: creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "setup: installing the $$(grep -c '==' requirements.lock) pinned packages of requirements.lock into $(VENV) (minutes on a first run)"
	$(PY) -m pip install --quiet -r requirements.lock
	@echo "setup: installing gclib from this checkout (editable)"
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $@
	@echo "setup: done"

setup: $(VENV)/.installed

# gclib's modules compiled ahead, once: the hundreds of processes a run or the suite starts (MPI ranks, kernels,
# command lines) then read them instead of each compiling them again, as each would where PYTHONDONTWRITEBYTECODE is
# set (a checkout that cannot be written only loses the saving).
compile: setup
	@$(PY) -m compileall -q gclib >/dev/null || echo "compile: gclib's modules were not all compiled ahead"

# Two notebooks at a time on two cores; those that start MPI jobs run alone (notebooks/profiles.toml's [alone]).
JOBS ?= 2
reproduce: compile
	$(PY) -m gclib reproduce --profile $(PROFILE) --figures-dir $(FIGURES) --jobs $(JOBS)

# Two pytest-xdist workers; the MPI tests stay together on one of them, one job at a time (tests/conftest.py), and
# the session ends with one line saying where its time went (python tools/durations.py keeps a full run's).
TEST_WORKERS ?= 2
test: compile
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

bench: setup
	$(PY) -m benchmarks

# `make lab` serves the repository (notebooks/ and the figures/ their links point to) and opens on the index,
# notebooks/00_index.ipynb; on a machine without a display it does not try to open a browser.
# Options: LAB_PORT=8888 LAB_IP=127.0.0.1 LAB_TOKEN=secret (default: Jupyter makes one and prints the URL),
# LAB_ARGS='...' (any other `jupyter lab` option). As root, --allow-root is added. MPLBACKEND is unset for the
# server so that the kernels draw figures inline.
LAB_PORT ?= 8888
LAB_IP ?= 127.0.0.1
LAB_TOKEN ?=
LAB_ARGS ?=
LAB_INDEX ?= notebooks/00_index.ipynb
lab: setup
	env -u MPLBACKEND $(VENV)/bin/jupyter lab --ServerApp.root_dir=$(CURDIR) \
		--LabApp.default_url=/lab/tree/$(LAB_INDEX) --ip=$(LAB_IP) --port=$(LAB_PORT) \
		$(if $(LAB_TOKEN),--IdentityProvider.token=$(LAB_TOKEN)) \
		$(if $(DISPLAY)$(WAYLAND_DISPLAY),,--no-browser) \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# The documentation site in build/docs (open build/docs/index.html): the guide (docs/*.md), the notebooks as the last
# `make reproduce` executed them (never run here) and the API reference from the docstrings; warnings are errors,
# and docs/check_site.py fails the build on a broken link, a file loaded from another host or a formula left as LaTeX.
docs: setup
	@echo "docs: staging the guide, the executed notebooks and the API pages into build/docs-src"
	$(PY) docs/stage.py build/docs-src
	@echo "docs: building the site with Sphinx (its progress below; every warning is an error)"
	rm -rf build/docs
	$(PY) -m sphinx -W --keep-going -E -c docs -b html build/docs-src build/docs
	@echo "docs: checking the site: every link resolves, nothing loads from another host, every formula is MathML"
	$(PY) docs/check_site.py build/docs
	@echo "docs: open build/docs/index.html"

# Refresh requirements.lock to the newest versions pyproject.toml allows (then run `make test` before committing).
lock: setup
	$(PY) tools/lock.py

clean:
	rm -rf build .pytest_cache
