# The two commands of the README. Both create ./.venv and install into it.
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: demo test test-install test-run test-pythons fuzz docs bench

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Set up and run the main job: a BM25 Haystack pipeline over the shipped BEIR-format sample.
demo: $(BIN)/python
	$(BIN)/pip install -q -e .
	$(BIN)/irmetrics beir

# Install the test extras and run the default suite (slow tests excluded).
test: test-install test-run

# The oracles (pytrec_eval, beir) are test extras; beir pulls torch, so the CPU wheel torch==2.13.0
# goes first (left to itself, pip resolves a multi-GB CUDA build).
# erag, the oracle of the usefulness labels' P and success, goes last without its pin pytrec_eval==0.5 (it
# imports pytrec_eval, which pytrec-eval-terrier of the test extra provides).
test-install: $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test]"
	$(BIN)/pip install -q --no-deps erag==0.0.1

# Two processes (pytest-xdist), each taking whole files: a file's tests share its fixtures (a browser, a
# page's background servers on their fixed ports) and never run beside each other.
TEST_WORKERS ?= 2
test-run:
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The compiled-vs-Python, oracle and component tests on every other supported CPython present here
# (3.10-3.13; each gets its own .venvs/pyX.Y).
test-pythons:
	SKIP_PYTHON=$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])') bash scripts/test_pythons.sh

# The readers' mutation fuzzer, longer and random (the default suite runs a short seeded pass).
FUZZ_EXAMPLES ?= 3000
fuzz:
	IRMETRICS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_fuzz.py

# The documentation site, into ./site.
docs: $(BIN)/python
	$(BIN)/pip install -q -e ".[docs]"
	$(BIN)/python -m mkdocs build --strict

bench: $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test,bench]"
	$(BIN)/python benchmarks/run.py
