# make test   set everything up (venv, pinned deps, build) and run the whole pytest suite
# make demo   set everything up and run the demo (myops vs torch, parity + speed, a detector)
# make bench  set everything up and run every benchmark family on every device present
# make package-check  sdist -> CPU wheel -> fresh venv -> smoke test + C++ test (.ci/check_package)
#
# PYTHON=python3 make test   use an existing interpreter that already has torch (no venv,
#                            nothing downloaded): e.g. on a GPU machine.
# FORCE_CPU=1 make build     CPU kernels only (fast local iteration).
# FORCE_CUDA=1 make build    CUDA kernels or an error that says why they cannot be built.

SHELL := /bin/bash
VENV ?= .venv
ifeq ($(origin PYTHON), undefined)
  PY := $(VENV)/bin/python
  DEPS := $(VENV)/.deps-installed
else
  PY := $(PYTHON)
  DEPS :=
endif

# setup.py compiles (and links) the CUDA kernels whenever torch has CUDA and a matching CUDA
# toolkit is present, even with no GPU (then for sm_90 only, unless TORCH_CUDA_ARCH_LIST says
# otherwise); with a GPU it targets the GPUs it sees. FORCE_CUDA=1 makes a missing toolkit an
# error (CI), FORCE_CPU=1 skips the CUDA kernels.
export MAX_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

SOURCES := setup.py $(shell find csrc cmake -type f 2>/dev/null)
STAMP := build/.myops-built

.PHONY: test demo bench build deps clean package-check

test: $(STAMP)
	$(PY) -m pytest tests -q

demo: $(STAMP)
	$(PY) benchmarks/demo.py

bench: $(STAMP)
	$(PY) benchmarks/runner.py --out benchmarks/results

build: $(STAMP)

package-check: $(DEPS)
	.ci/check_package $(PY)

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
	rm -rf build dist python/myops/*.so python/myops/lib python/myops/include python/myops/share \
	  python/myops/_build_config.py *.egg-info python/*.egg-info
