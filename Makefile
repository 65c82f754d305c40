# The two commands of the README. Both create ./.venv and install into it.
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: demo test bench venv

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Set up and run the main job: a BM25 Haystack pipeline over the shipped BEIR-format sample.
demo: $(BIN)/python
	$(BIN)/pip install -q -e .
	$(BIN)/irmetrics beir

# Install the test extras (the oracles pytrec_eval and beir; beir pulls torch, so the local
# CPU wheel torch==2.13.0 goes first) and run the default suite (slow tests excluded).
test: $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test]"
	$(BIN)/python -m pytest -q

bench: $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[test,bench]"
	$(BIN)/python benchmarks/run.py
