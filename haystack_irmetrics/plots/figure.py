"""One place creates and writes figures: matplotlib's Agg canvas without pyplot's global state.

A figure is exactly ``figsize * dpi`` pixels (no tight bounding box); the file format follows the
path's suffix (:data:`FORMATS`: PNG, SVG or PDF) for every plot. matplotlib (the ``plots`` extra) is
imported on the first figure, so importing :mod:`haystack_irmetrics.plots` does not load it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from .._extras import require
from ..errors import InvalidArgumentError

DEFAULT_SIZE = (6.4, 4.0)
DEFAULT_DPI = 100
#: Image format of each path suffix.
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
MAX_PIXELS = 1 << 15  # a side; Agg refuses 2**16, and a larger image is rarely wanted


def image_format(path: str | os.PathLike[str]) -> str:
    """The format of ``path`` by its suffix; anything but .png, .svg or .pdf raises :class:`InvalidArgumentError`."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InvalidArgumentError(f"cannot tell the image format of {str(path)!r}: use a .png, .svg or .pdf path")
    return fmt


def check_size(figsize: tuple[float, float], dpi: int) -> None:
    """``figsize`` is positive finite inches and ``dpi`` a positive int, each side 1 to :data:`MAX_PIXELS` pixels."""
    try:
        w, h = (float(x) for x in figsize)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"figsize must be (width, height) in inches, got {figsize!r}") from None
    if isinstance(dpi, bool) or not isinstance(dpi, int | np.integer) or dpi <= 0:
        raise InvalidArgumentError(f"dpi must be a positive integer, got {dpi!r}")
    if not (0 < w < float("inf") and 0 < h < float("inf")):
        raise InvalidArgumentError(f"figsize must be positive finite inches, got {figsize!r}")
    if max(w, h) * dpi > MAX_PIXELS or min(w, h) * dpi < 1:
        raise InvalidArgumentError(
            f"a {w:g}x{h:g} inch figure at {dpi} dpi is {w * dpi:,.0f}x{h * dpi:,.0f} pixels; "
            f"each side must be 1 to {MAX_PIXELS:,}"
        )


def figure(path: str | os.PathLike[str], figsize: tuple[float, float] = DEFAULT_SIZE, dpi: int = DEFAULT_DPI) -> Any:
    """A new matplotlib ``Figure`` on the Agg canvas, for writing to ``path`` with :func:`save`.

    Checks ``path``'s suffix (:func:`image_format`) first, then matplotlib, then the size (:func:`check_size`).
    """
    image_format(path)
    require("matplotlib", purpose="plots")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    check_size(figsize, dpi)
    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def save(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` to ``path`` (its folders created) in the format of its suffix; returns the path."""
    fmt = image_format(path)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format=fmt, dpi=fig.dpi)  # no tight bounding box: the size is figsize * dpi
    return out


__all__ = ["DEFAULT_DPI", "DEFAULT_SIZE", "FORMATS", "MAX_PIXELS", "check_size", "figure", "image_format", "save"]
