# make test : create .venv if missing, build and install asmr with its test extras, run the suite
# make demo : the same set-up, then the main job: build, revise and inspect a memory of the example handbook
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
NATIVE := $(shell find csrc asmr_kernels -name '*.cpp' -o -name '*.cu' -o -name '*.h' -o -name '*.cuh' -o -name '*.pyx' -o -name '*.pxd') \
          CMakeLists.txt setup.py pyproject.toml

.PHONY: test demo bench install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Build tools go into the venv so that rebuilds reuse CMake's build folder
# (pip's isolated builds would reconfigure from scratch each time).
$(VENV)/.build-tools: $(PY) pyproject.toml
	$(PY) -m pip install --quiet "setuptools>=68" wheel "cmake>=3.21" ninja "Cython>=3.0"
	touch $@

# torch first, pinned to the CPU build that lies on local disk: left to resolve
# sentence-transformers' dependency itself, pip would fetch a multi-GB CUDA build.
$(VENV)/.torch: $(PY)
	$(PY) -m pip install --quiet "torch==2.13.0"
	touch $@

# Reinstalled only when native sources or build files change; the Python
# packages are installed in editable mode and need no reinstall.
$(VENV)/.installed: $(VENV)/.build-tools $(VENV)/.torch $(NATIVE)
	$(PY) -m pip install --no-build-isolation -e ".[test,bench]"
	touch $@

install: $(VENV)/.installed

test: install
	$(PY) -m pytest

demo: install
	$(PY) examples/demo.py

bench: install
	$(PY) bench/kernels.py
	$(PY) bench/ingest.py

clean:
	rm -rf build *.egg-info asmr_kernels/*.so .pytest_cache
