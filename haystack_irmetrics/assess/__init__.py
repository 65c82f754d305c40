"""People judging (query, document) pairs on a page served on 127.0.0.1 (``irmetrics assess``; docs/assess.md).

- :mod:`.store`: the SQLite store of a judging folder, every key one committed transaction (:class:`AssessStore`,
  :func:`judging_folder`, the folder's lock around it);
- :mod:`.session`: what a key does and what the page is told, an adaptive pooling strategy asked live
  (:class:`JudgingSession`);
- :mod:`.scale`: the grade scale, read from the model judge's prompt; the query's words found in a document;
- :mod:`.page`: the page, inline style and script, every text drawn as text;
- :mod:`.server`: the Starlette app and uvicorn (:func:`create_app`, :func:`serve`; the ``assess`` extra);
- :mod:`.export`: the qrels and judgments out, labels judged elsewhere in, the agreement between assessors and
  with a model (:func:`export`, :func:`import_labels`, :func:`agreement`);
- :mod:`.job`: ``irmetrics assess PAIRS`` as one call, its inputs read and checked and the strategy built before
  anything is made (:class:`AssessSettings`, :func:`run_assess`, :class:`AssessResult`).

Importing this package imports neither Starlette nor uvicorn: :func:`create_app` and :func:`serve` do.
"""

from .export import agreement, agreement_table, export, import_labels, read_prelabels
from .job import AssessResult, AssessSettings, run_assess
from .scale import default_definitions, grade_definitions, highlight
from .server import create_app, serve
from .session import JudgingSession
from .store import AssessStore, Judgment, judging_folder

__all__ = [
    "AssessResult",
    "AssessSettings",
    "AssessStore",
    "JudgingSession",
    "Judgment",
    "agreement",
    "agreement_table",
    "create_app",
    "default_definitions",
    "export",
    "grade_definitions",
    "highlight",
    "import_labels",
    "judging_folder",
    "read_prelabels",
    "run_assess",
    "serve",
]
