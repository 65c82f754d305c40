"""The ``irmetrics`` command line (the console script ``irmetrics = haystack_irmetrics.cli:main``).

- :mod:`.app`: the parser of every subcommand, ``--version``, and :func:`main`: each command's declared paths
  checked before it runs, the package's warnings and errors printed as one line each (exit 2 on bad input);
- :mod:`.args`: the argument types, declarations and help rules the subcommands share (one list syntax, one
  ``--seed``, the click-log and bootstrap options);
- :mod:`.__main__`: ``python -m haystack_irmetrics.cli``, the same command.

One module per subcommand, each with ``add_subcommand`` and ``run``: a run parses, builds the job's settings,
calls its entry point in the package and prints the result (an evaluation's tables come from
:mod:`haystack_irmetrics.io.tables`, whose names this package re-exports); each imports its work when it runs:

- :mod:`.evaluate`: ``irmetrics evaluate``, a TREC run file scored against TREC or BEIR qrels;
- :mod:`.beir`: ``irmetrics beir``, a Haystack retrieval pipeline over BEIR datasets, BEIR's numbers;
- :mod:`.cache`: ``irmetrics cache list|clear``, the embeddings and bm25s indexes cached by BEIR runs;
- :mod:`.compare`: ``irmetrics compare``, runs side by side against a baseline, or two suites;
- :mod:`.power`: ``irmetrics power``, how many queries a comparison needs;
- :mod:`.report`: ``irmetrics report``, one HTML page comparing runs, and its exports;
- :mod:`.plot`: ``irmetrics plot``, runs drawn against qrels;
- :mod:`.feedback`: ``irmetrics feedback``, a feedback log scored, with runs or pipelines against it;
- :mod:`.judge`: ``irmetrics judge``, the holes of runs' top k filled with a model's labels;
- :mod:`.usefulness`: ``irmetrics usefulness``, runs' top k labelled by what a RAG generator answers from each
  document, and the runs scored on those labels;
- :mod:`.assess`: ``irmetrics assess``, the judging page for people, and ``assess export|agreement|import``;
- :mod:`.pool`: ``irmetrics pool``, which pairs to judge for a budget, ``pool simulate`` and ``pool estimate``;
- :mod:`.fuse`: ``irmetrics fuse``, runs fused into one, tuned by cross-validation, as a ``DocumentJoiner``;
- :mod:`.clicks`: ``irmetrics clicks fit|compare|estimate|measure|windows``, click logs;
- :mod:`.interleave`: ``irmetrics interleave``, which of two interleaved rankers users prefer.

Nothing else in the package imports this one.
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
