"""Progress bars, one kind for every long job of the package (BEIR indexing and retrieval, judging,
embedding, grid searches): tqdm's (a Haystack dependency, imported on the first bar), with rate and ETA, on
stderr, and only when asked for or, by default, when stderr is a terminal: tests and piped runs print nothing.
A command's ``--no-progress`` passes ``progress=False``.
"""

from __future__ import annotations

import sys
from typing import Any


def enabled(progress: bool | None) -> bool:
    """Whether to show bars: ``progress``, or when stderr is a terminal if it is ``None``."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return progress


def bar(total: int | None, desc: str, unit: str, progress: bool | None, **kwargs: Any):
    """A tqdm bar on stderr (rate and ETA), disabled unless :func:`enabled`."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled(progress), dynamic_ncols=True, **kwargs)


__all__ = ["bar", "enabled"]
