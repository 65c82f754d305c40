from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Examples per property test without its own max_examples: the default suite's share of its time is about
# proportional to them (the property, oracle, ranking and columnar files: 68 s at 100, 170 s at 300 on one
# core), so the default run draws 100 and CI 300; HYPOTHESIS_PROFILE=thorough draws 1,000.
_QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much]
settings.register_profile("default", max_examples=100, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))

ROOT = Path(__file__).resolve().parent.parent
# The temporary $IRMETRICS_CACHE_DIR and $IRMETRICS_BEIR_DIR of every test are set by ../conftest.py (it covers
# the doctests of the package, README.md and docs/ too, which this folder's conftest does not reach).


def shared_data() -> Path:
    """The shared data folder: $IRMETRICS_SHARED_DATA, default ../shared/data beside the project."""
    return Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data"))


def cpu_variants() -> list[str]:
    """``NPY_DISABLE_CPU_FEATURES`` values to run a command under: none, then the machine's AVX-512 kernels of numpy
    off, then its AVX2 kernels too (numpy's names: ``X86_V4``/``X86_V3`` from 2.4, ``AVX512_SKX``/``AVX2``
    before); numpy's sorts differ between these kernels where values tie (tests/test_bm25s_ties.py)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    found = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    avx512 = [f for f in found if f.startswith("AVX512") or f == "X86_V4"]
    avx2 = [f for f in found if f in ("X86_V3", "AVX2", "FMA3", "F16C")]
    return list(dict.fromkeys(["", " ".join(avx512), " ".join(avx512 + avx2)]))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = shared_data()
    if not path.is_dir():
        pytest.skip(f"shared data folder {path} is absent (set IRMETRICS_SHARED_DATA)")
    return path


@contextmanager
def scan(path: str):
    """Within the block, the dict-run scan is ``path``: "native" (the compiled ``core/_rank.c``) or "python"."""
    from haystack_irmetrics.core import native

    if path == "native" and native.scan() is None:
        pytest.skip(
            "the compiled scan is off: not built (no C compiler at install?), a free-threaded build,"
            " or IRMETRICS_PURE_PYTHON set"
        )
    with pytest.MonkeyPatch.context() as patch:
        if path != "native":
            patch.setattr(native, "_SCAN", None)
        yield


@pytest.fixture
def pure_python():
    """The pure-Python dict scan, for tests of its own internals."""
    with scan("python"):
        yield


@pytest.fixture(scope="module", params=["native", "python"])
def scan_path(request):
    """Run a module's tests on both dict scans (module scope: hypothesis allows it, one switch each)."""
    with scan(request.param):
        yield request.param
