"""Usefulness labels for RAG pipelines: each retrieved document labelled by what the pipeline's generator answers
from that document alone, scored against reference answers (Salemi and Zamani, SIGIR 2024, "Evaluating Retrieval
Quality in Retrieval-Augmented Generation", the ``erag`` package), then the runs scored on those labels by the
core.

- :mod:`.metrics`: the answer metrics: SQuAD's exact match and F1, containment; each the best over the references;
- :mod:`.asker`: the asker of a chat generator (one short answer from one document), in the judges' protocol, and
  the generator of a pipeline YAML;
- :mod:`.settings`: the job's frozen settings (standard library only);
- :mod:`.scoring`: the measures of runs on the labels, through the core (graded labels: each measure that counts
  relevant documents averaged over relevance thresholds);
- :mod:`.endtoend`: each run's top N asked together, and the correlations of each measure with that score;
- :mod:`.labelling`: the job as plan, work, score (:func:`label_usefulness`, :class:`UsefulnessResult`);
- :mod:`.folder`: the output folder's writer;
- :mod:`.job`: ``irmetrics usefulness`` as one call, and the asker of a server;
- :mod:`.server`: a local OpenAI-compatible server answering by a known rule (trying it with no model, the tests).

The component is :class:`haystack_irmetrics.components.UsefulnessEvaluator`; the command ``irmetrics usefulness``.
Importing this package imports no Haystack.
"""

from .._lazy import lazy_names

_HOMES = {
    "AnswerAsker": ".asker",
    "UsefulnessResult": ".labelling",
    "UsefulnessSettings": ".settings",
    "label_usefulness": ".labelling",
    "answer_score": ".metrics",
}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = ["AnswerAsker", "UsefulnessResult", "UsefulnessSettings", "answer_score", "label_usefulness"]
