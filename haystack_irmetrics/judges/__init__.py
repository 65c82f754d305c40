"""Model judges for the holes: relevance labels from a model where no person judged.

- :mod:`.prompt`: the default graded prompt (0..3), its texts marked as data;
- :mod:`.grades`: the answer form a judge is asked for (``response_format``) and the reader of that contract;
  :mod:`.lenient`: the opt-in free-text reader;
- :mod:`.judge`: the chat judge and the score judge (cut points learned on human labels), their fingerprints;
- :mod:`.cache`: the judgment cache, keyed by the judge's fingerprint and the exact texts;
- :mod:`.http`: a deadline on a whole request, last byte included, under the OpenAI generator's client;
- :mod:`.texts`: the one check that every pair has its texts, and the texts a judge is sent;
- :mod:`.batch`: judging many pairs: concurrency, bounded retries, one re-ask, the cache;
- :mod:`.judging`: the job of ``irmetrics judge`` as plan, work, write (:func:`judge_runs`, :class:`JudgeResult`);
- :mod:`.folder`: the output folder's one writer and one reader (:class:`JudgedFolder`, each file opened once);
- :mod:`.ppi`: prediction-powered intervals on per-query values, PPI's labelled queries and which measures get an
  interval;
- :mod:`.agreement`: the judge against people: kappa, weighted kappa, Krippendorff's alpha, system rankings;
- :mod:`.settings` and :mod:`.job`: the job's frozen settings, and the command as one call;
- :mod:`.server`: a local OpenAI-compatible server answering from known labels (trying a judge with no model, the
  tests).

The component is :class:`haystack_irmetrics.components.RelevanceJudge`; the command ``irmetrics judge``.
Importing this package imports no Haystack.
"""

from .._lazy import lazy_names

_HOMES = {"judge_runs": ".judging", "JudgeResult": ".judging", "JudgedFolder": ".folder"}
__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = ["JudgeResult", "JudgedFolder", "judge_runs"]
