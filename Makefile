# make test   set everything up (venv, pinned deps, build) and run the whole pytest suite
# make demo   set everything up and run the demo (myops vs torch, parity + speed, a detector,
#             then a detector exported and run from C++: benchmarks/demo.py --no-deploy skips it)
# make bench  set everything up and run every benchmark family on every device present
# make docs   the docs site (docs/ -> build/docs/html), warnings as errors, every example run
# make format  lay out the sources: ruff format for Python, clang-format for C++ / CUDA
#              (tools/cpp_format.py); the suite checks both (tests/test_package.py)
# make speed-guard  instruction counts (callgrind) of every elementwise op and every family
#                   against torch's, checked against tools/speed_guard.json (tools/speed_guard.py)
# make deploy-check  every detector exported, compiled and run from C++ (slow; CI runs one)
#                    and the multiclass_nms_static example
# make package-check  sdist -> wheel (CUDA when it can be built; FORCE_CPU=1: CPU), repaired and
#                     checked -> fresh venv -> smoke test + C++ test (.ci/check_package)
# make wheel  the release files in dist/: the sdist and the default variant's wheel (CUDA 13.0
#             kernels, version 0.1.0, manylinux_2_28), repaired and checked (.ci/build_wheel).
#             GPU code for RELEASE_CUDA_ARCHS unless TORCH_CUDA_ARCH_LIST says otherwise;
#             FORCE_CPU=1 make wheel: the 0.1.0+cpu wheel
# make release-check  for each Python of pyproject.toml's classifiers: the wheel built with it,
#                     installed in a fresh venv, smoke + C++ test + a slice of the suite
#                     (.ci/release_check; too slow for CI, which runs Python 3.11)
# make recipe-check  docs/contributing.md's add-an-op recipe applied to a copy of the tree,
#                    built and tested (tests/recipe_check.py; too slow for CI)
# make stress-check  the drop-in under threads for minutes (tests/dropin_stress.py: every routed
#                    op from 8 threads, scopes in every thread, in one, nested, beside enable();
#                    STRESS_SECONDS per form, default 60; CI runs each form for 2 s)
#
# PYTHON=python3 make test   use an existing interpreter that already has torch (no venv,
#                            nothing downloaded): e.g. on a GPU machine.
# FORCE_CPU=1 make build     CPU kernels only (fast local iteration).
# FORCE_CUDA=1 make build    CUDA kernels or an error that says why they cannot be built.
# make gpu-prebuilt          myops built here for the GPU machine's stack (Python 3.12, torch 2.11.0
#                            + CUDA 13.0 from the package index in .venv-gpu, sm_90) into the
#                            archive the GPU session carries: gpu-build/ (benchmarks/README.md, "GPU")
# make sanitize              the CPU kernels built with AddressSanitizer + UBSan into
#                            build/sanitize (the normal build is untouched), then the whole
#                            test suite run against that build. make sanitize-ci: CI's slice,
#                            the kernels' tests; make test-plain: the rest, on the plain build

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

.PHONY: test test-plain demo bench docs build deps clean package-check sanitize sanitize-build sanitize-ci deploy-check wheel gpu-prebuilt speed-guard \
	release-check recipe-check stress-check

test: $(STAMP)
	$(PY) -m pytest tests -q

demo: $(STAMP)
	$(PY) benchmarks/demo.py

bench: $(STAMP)
	$(PY) benchmarks/runner.py --out benchmarks/results

build: $(STAMP)

# Sphinx (docs/conf.py): -W makes a warning an error (an op without an entry in the op reference,
# a failing example, a link to a missing file), --keep-going reports them all; -E rereads every
# page, so every example runs
docs: $(STAMP)
	$(PY) -m sphinx -W --keep-going -E -q -b html docs build/docs/html
	@echo "docs: build/docs/html/index.html"

# the layout the suite checks (tests/test_package.py): ruff's for Python, clang-format's for the
# C++ / CUDA files tools/cpp_format.py lists, both pinned in requirements-dev.txt
format: $(DEPS)
	$(PY) -m ruff format .
	$(PY) tools/cpp_format.py

# the add-an-op recipe of docs/contributing.md run on a copy of the tree, built and tested
# (tests/recipe_check.py; 10-20 minutes: not in CI. tests/test_docs.py checks it still applies)
recipe-check: $(STAMP)
	$(PY) -m pytest -q -s -p no:cacheprovider tests/recipe_check.py

STRESS_SECONDS ?= 60
stress-check: $(STAMP)
	$(PY) tests/dropin_stress.py --seconds $(STRESS_SECONDS) --threads 8

# the speed-regression guard: torch / myops instruction counts per call under callgrind (not
# time: it holds still on a loaded machine), each within 15 % of its committed baseline
speed-guard: $(STAMP)
	$(PY) tools/speed_guard.py

# every torchvision detector through every deployment path (eager parity, export, compile,
# AOTInductor from C++): too slow for CI, which runs fasterrcnn_resnet50_fpn only; and the
# multiclass_nms_static example detector through AOTInductor from C++
deploy-check: $(STAMP)
	MYOPS_SLOW=1 $(PY) -m pytest tests/test_detection.py tests/test_multiclass_nms.py tests/test_onnx.py -q

package-check: $(DEPS)
	.ci/check_package $(PY)

# The release's GPU code: sm_90 (the H100, the GPU myops is tested and tuned on) and its PTX,
# which the driver compiles for newer GPUs (sm_100, sm_120). Not the older ones torch also
# covers (sm_75 to sm_86): add them here once they are tested (each one adds a full device
# compile of every .cu file).
RELEASE_CUDA_ARCHS ?= 9.0+PTX

wheel: $(DEPS)
	FORCE_CUDA=$${FORCE_CUDA:-1} TORCH_CUDA_ARCH_LIST="$${TORCH_CUDA_ARCH_LIST:-$(RELEASE_CUDA_ARCHS)}" \
	  .ci/build_wheel $(PY) dist

release-check:
	.ci/release_check $(RELEASE_PYTHONS)

deps: $(DEPS)

$(VENV)/.deps-installed: requirements-dev.txt
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r requirements-dev.txt
	touch $@

# The build's whole log goes to build/build.log (the compilers' warnings included: ptxas reports
# spills there), and tools/check_spills.py fails on a spill docs/design.md does not list.
$(STAMP): $(DEPS) $(SOURCES)
	mkdir -p build
	$(PY) -m pip install -v --no-build-isolation --no-deps -e . > build/build.log 2>&1 \
	  || { tail -n 60 build/build.log; echo "build failed: the whole log is build/build.log"; exit 1; }
	$(PY) tools/check_spills.py build/build.log
	$(PY) -c "import myops; myops.show_config()"
	touch $@

# ---- the GPU session's build, made ahead ------------------------------------------------------
# The stack of the device tool's GPU machines (KINDS.md of the device tool: Python 3.12, torch
# 2.11.0+cu130, an H100 / H200, sm_90). The venv is this build's own; the archive's manifest
# records the stack and the sources' hash, and gpu/gpu_session.sh uses the archive only
# when both match what it finds there (else it builds on the device and returns a new archive).
GPU_VENV ?= .venv-gpu
GPU_TORCH ?= torch==2.11.0
GPU_ARCHS ?= 9.0
GPU_BASE_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python) $(shell command -v python3.12))
GPU_BUILD_DIR := build/gpu-prebuilt

$(GPU_VENV)/.deps-installed:
	test -x $(GPU_VENV)/bin/python || $(GPU_BASE_PYTHON) -m venv $(GPU_VENV)
	$(GPU_VENV)/bin/python -m pip install -q "$(GPU_TORCH)" setuptools ninja numpy
	touch $@

gpu-prebuilt: $(GPU_VENV)/.deps-installed
	mkdir -p $(GPU_BUILD_DIR)
	rm -rf $(GPU_BUILD_DIR)/lib
	FORCE_CUDA=1 TORCH_CUDA_ARCH_LIST="$(GPU_ARCHS)" $(GPU_VENV)/bin/python setup.py build_ext \
	  --build-lib $(GPU_BUILD_DIR)/lib --build-temp $(GPU_BUILD_DIR)/temp > $(GPU_BUILD_DIR)/build.log 2>&1 \
	  || { tail -n 60 $(GPU_BUILD_DIR)/build.log; echo "build failed: $(GPU_BUILD_DIR)/build.log"; exit 1; }
	$(GPU_VENV)/bin/python tools/check_spills.py $(GPU_BUILD_DIR)/build.log
	$(GPU_VENV)/bin/python gpu/gpu_build.py pack $(GPU_BUILD_DIR)/lib gpu-build

clean:
	rm -rf build dist python/myops/*.so python/myops/lib python/myops/include python/myops/share \
	  python/myops/_build_config.py *.egg-info python/*.egg-info

# ---- sanitizers -------------------------------------------------------------------------------
# GCC 12 stops with an internal compiler error on the AVX files at -O0 with
# -fsanitize=address,undefined; the extension's own -O3 (which comes after CFLAGS) builds
# them. vptr is left out: torch's classes trip it across shared-library boundaries.
# signed-integer-overflow is left out: integer add / mul wrap like torch's (the extension is
# built with -fwrapv); the first sanitized run flagged int64 mul_scalar overflow in
# elementwise_functors.h (Mul). Computing the integer functors in unsigned would let it back in.
# tests/test_cpp.py is left out: it checks how libmyops links (an instrumented build needs
# libasan) and runs CMake, which the preloaded libasan breaks; it runs in `make test`. So is
# tests/test_detection.py: it builds the same C++ program with CMake and compiles whole models
# with Inductor (minutes); the kernels it calls are the ones the other files run sanitized.
# Python itself is not instrumented, so libasan is preloaded and leak detection is off
# (the interpreter never frees everything). The CUDA emulation (tests/test_cuda_emulation.py)
# is built with the same flags: an out-of-bounds access by a CUDA kernel is caught on the CPU.
SAN_DIR ?= build/sanitize
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize=vptr,signed-integer-overflow -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g
SAN_ENV := LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_odr_violation=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# CI runs every test once (.ci/run): the files of PLAIN_TESTS on the plain build (`make
# test-plain`), every other file on the sanitizer build (`make sanitize-ci`), so the kernels'
# tests run sanitized and nothing runs twice. PLAIN_TESTS: SAN_NEVER, and the files that call no
# kernel of their own (packaging, docs, the GPU session's scripts, the deploy benchmark), whole
# models (test_dropin_models) and the hypothesis properties, whose kernels the family files run
# sanitized. `make test` runs the whole suite on the plain build, `make sanitize` the whole suite
# less SAN_NEVER on the sanitizer build: run it before calling a kernel change done.
SAN_NEVER := test_cpp test_detection
PLAIN_TESTS := $(SAN_NEVER) test_package test_docs test_doctests test_gpu_session test_bench_deploy test_sass \
	test_onnx \
	test_check_spills test_dropin_models test_properties

test-plain: $(STAMP)
	$(PY) -m pytest -q $(foreach t,$(PLAIN_TESTS),tests/$(t).py)

sanitize-ci:
	$(MAKE) sanitize SAN_PYTEST_ARGS="$(foreach t,$(PLAIN_TESTS),--ignore=tests/$(t).py)"

# the sanitizer build alone (CI starts it beside the plain build: .ci/run); rebuilt when a source
# changes, as the plain build is. Its own _build_config.py (CPU-only) is written into $(SAN_DIR).
SAN_STAMP := $(SAN_DIR)/.myops-built

sanitize-build: $(SAN_STAMP)

$(SAN_STAMP): $(DEPS) $(SOURCES)
	mkdir -p $(SAN_DIR)
	FORCE_CPU=1 CFLAGS="$(SAN_FLAGS)" CXXFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
	  $(PY) setup.py build_ext --build-lib $(SAN_DIR) --build-temp $(SAN_DIR)/temp
	touch $@

sanitize: $(SAN_STAMP)
	for f in python/myops/*.py; do [ "$${f##*/}" = _build_config.py ] || cp "$$f" $(SAN_DIR)/myops/; done
	$(SAN_ENV) MYOPS_EMU_CFLAGS="$(SAN_FLAGS)" MYOPS_EMU_BUILD_DIR=$(SAN_DIR)/cuda_emulation \
	  PYTHONPATH=$(SAN_DIR) $(PY) -m pytest tests -q -p no:cacheprovider \
	  $(foreach t,$(SAN_NEVER),--ignore=tests/$(t).py) $(SAN_PYTEST_ARGS)
