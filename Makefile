# make test   set everything up (venv, pinned deps, build) and run the whole pytest suite
# make demo   set everything up and run the demo (myops vs torch, parity + speed, a detector)
# make bench  set everything up and run every benchmark family on every device present
#
# PYTHON=python3 make test   use an existing interpreter that already has torch (no venv,
#                            nothing downloaded): e.g. on a GPU machine.
# FORCE_CPU=1 make build     CPU kernels only (fast local iteration).

SHELL := /bin/bash
VENV ?= .venv
ifeq ($(origin PYTHON), undefined)
  PY := $(VENV)/bin/python
  DEPS := $(VENV)/.deps-installed
else
  PY := $(PYTHON)
  DEPS :=
endif

# Compile (and link) the CUDA kernels whenever a CUDA toolkit is present, even with no GPU
# (CI): one architecture keeps the build short. On a machine with a GPU setup.py targets the
# GPU it sees unless TORCH_CUDA_ARCH_LIST says otherwise.
export FORCE_CUDA ?= 1
export MAX_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

SOURCES := setup.py $(shell find csrc -type f 2>/dev/null)
STAMP := build/.myops-built

.PHONY: test demo bench build deps clean

test: $(STAMP)
	$(PY) -m pytest tests -q

demo: $(STAMP)
	$(PY) benchmarks/demo.py

bench: $(STAMP)
	$(PY) benchmarks/runner.py --out benchmarks/results

build: $(STAMP)

deps: $(DEPS)

$(VENV)/.deps-installed: requirements-dev.txt
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r requirements-dev.txt
	touch $@

$(STAMP): $(DEPS) $(SOURCES)
	$(PY) -m pip install --no-build-isolation --no-deps -e .
	$(PY) -c "import myops; myops.show_config()"
	mkdir -p build && touch $@

clean:
	rm -rf build python/myops/*.so python/myops/_build_config.py *.egg-info python/*.egg-info
