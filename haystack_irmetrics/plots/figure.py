"""One place creates and writes figures: matplotlib's Agg canvas without pyplot's global state.

A figure is exactly ``figsize * dpi`` pixels (no tight bounding box); the file format follows the
path's suffix (:data:`FORMATS`: PNG, SVG or PDF) for every plot, and the file is written whole or not at
all (:func:`~haystack_irmetrics.io.output.replacing_file`). matplotlib (the ``plots`` extra) is imported on
the first figure, so importing :mod:`haystack_irmetrics.plots` does not load it.

Every text a figure shows from its input (system names, metric names, the baseline's name) goes through
:func:`label`, so it is drawn as typed: matplotlib would read ``$...$`` as math (``$\\foo$`` fails to
draw) and hides a legend entry whose label starts with ``_``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._extras import require
from ..checks import whole
from ..errors import InvalidArgumentError
from ..io.output import printable, replacing_file

DEFAULT_SIZE = (6.4, 4.0)
DEFAULT_DPI = 100
#: Image format of each path suffix.
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
MAX_PIXELS = 1 << 15  # a side; Agg refuses 2**16, and a larger image is rarely wanted


#: Put before a label starting with ``_``: matplotlib leaves such labels out of legends; a zero-width
#: space keeps the text as typed on screen.
ZERO_WIDTH_SPACE = "\u200b"


def label(text: object) -> str:
    r"""``text`` as matplotlib draws it verbatim: every ``$`` escaped (``\$``: no math text), a leading
    ``_`` after a zero-width space (:data:`ZERO_WIDTH_SPACE`: no hidden legend entry), a lone surrogate
    as its backslash escape (:func:`~haystack_irmetrics.io.output.printable`).

        >>> label("$\\alpha$ run"), label("_private")
        ('\\$\\alpha\\$ run', '\u200b_private')
    """
    out = printable(str(text)).replace("$", "\\$")
    return ZERO_WIDTH_SPACE + out if out.startswith("_") else out


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
    whole(dpi, "dpi", least=1)
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
    """Write ``fig`` to ``path`` (its folders created) in the format of its suffix, whole or not at all
    (:func:`~haystack_irmetrics.io.output.replacing_file`: an ``OSError`` raises
    :class:`~haystack_irmetrics.errors.OutputError` naming the path); returns the path."""
    fmt = image_format(path)
    # no tight bounding box: the size is figsize * dpi
    with replacing_file(path) as f:
        fig.savefig(f, format=fmt, dpi=fig.dpi)
    return Path(path)


__all__ = [
    "DEFAULT_DPI",
    "DEFAULT_SIZE",
    "FORMATS",
    "MAX_PIXELS",
    "ZERO_WIDTH_SPACE",
    "check_size",
    "figure",
    "image_format",
    "label",
    "save",
]
