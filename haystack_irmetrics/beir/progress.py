"""Progress bars and the cost of each phase of a BEIR run (wall time, peak resident memory).

Bars are :func:`haystack_irmetrics.io.progress.bar` (re-exported here), the one bar of every command.

**Peak memory** of a phase is the highest resident set size (RSS) of the process during the phase,
in MB (2^20 bytes). On Linux the kernel's high-water mark (``VmHWM``) is reset when a phase starts
(``/proc/self/clear_refs``), so each phase reports its own peak; where that is not possible (other
systems, or a kernel that refuses), it is the process's peak so far (``ru_maxrss``), which never
goes down from one phase to the next. It counts what is resident: the Python objects, the document
store, the loaded models, and the shared libraries the process mapped. Resetting the mark also lowers
what a parent process reads at exit (``ru_maxrss`` of a child, ``/usr/bin/time``) when the peak came
in an earlier phase: the process's peak is the largest of the phases'.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ..io.progress import bar, enabled


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _peak_mb(exact: bool) -> float:
    if exact:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KB elsewhere


class Phases:
    """Wall time and peak RSS of named phases; a phase entered twice adds its times and keeps the higher peak."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.peak_rss_mb: dict[str, float] = {}
        self.exact = True

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        exact = _reset_peak()
        self.exact = self.exact and exact
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            self.peak_rss_mb[name] = max(self.peak_rss_mb.get(name, 0.0), _peak_mb(exact))

    def skip(self, name: str) -> None:
        """Record a phase that did not run (0 s, no memory)."""
        self.seconds.setdefault(name, 0.0)
        self.peak_rss_mb.setdefault(name, 0.0)


__all__ = ["Phases", "bar", "enabled"]
