from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "ci", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))

ROOT = Path(__file__).resolve().parent.parent


def shared_data() -> Path:
    """The shared data folder: $IRMETRICS_SHARED_DATA, default ../shared/data beside the project."""
    return Path(os.environ.get("IRMETRICS_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = shared_data()
    if not path.is_dir():
        pytest.skip(f"shared data folder {path} is absent (set IRMETRICS_SHARED_DATA)")
    return path


def _switch_scan(path: str) -> pytest.MonkeyPatch:
    """Point the dict-run scan at ``path``: "native" (the compiled ``core/_rank.c``) or "python"."""
    from haystack_irmetrics.core import inputs

    patch = pytest.MonkeyPatch()
    if path == "native":
        if inputs._native() is None:
            pytest.skip("the compiled scan is off: not built (no C compiler at install?) or IRMETRICS_PURE_PYTHON set")
    else:
        patch.setattr(inputs, "_NATIVE", None)
    return patch


@pytest.fixture
def pure_python():
    """The pure-Python dict scan, for tests of its own internals."""
    patch = _switch_scan("python")
    yield
    patch.undo()


@pytest.fixture(scope="module", params=["native", "python"])
def scan_path(request):
    """Run a module's tests on both dict scans (module scope: hypothesis allows it, one switch each)."""
    patch = _switch_scan(request.param)
    yield request.param
    patch.undo()
