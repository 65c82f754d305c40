"""The ``irmetrics`` command line (the console script ``irmetrics = haystack_irmetrics.cli:main``).

One module per subcommand (:mod:`.evaluate`, :mod:`.beir`, :mod:`.compare`, :mod:`.feedback`,
:mod:`.plot`), each with ``add_subcommand`` and ``run``; :mod:`.args` holds the argument types they
share, :mod:`.format` how an evaluation is printed, :mod:`.app` the parser and :func:`main`. Nothing
else in the package imports this one.
"""

from ..io.tables import TABLE_DIGITS, format_result, markdown_table, per_query_table, table_digits
from .app import build_parser, main, package_version

__all__ = [
    "TABLE_DIGITS",
    "build_parser",
    "format_result",
    "main",
    "markdown_table",
    "package_version",
    "per_query_table",
    "table_digits",
]
