"""Model judges for the holes: relevance labels from a model where no person judged.

- :mod:`.prompt`: the default graded prompt (0..3), its texts marked as data;
- :mod:`.grades`: the answer form a judge is asked for (``response_format``) and the reader of that contract;
  :mod:`.lenient`: the opt-in free-text reader;
- :mod:`.judge`: the chat judge and the score judge (cut points learned on human labels), their fingerprints;
- :mod:`.cache`: the judgment cache, keyed by the judge's fingerprint and the exact texts;
- :mod:`.pool`: the unjudged pairs of runs' top k, pooled, and the share of a top k a judge fills;
- :mod:`.batch`: judging many pairs (concurrency, bounded retries, the cache) and writing the output folder;
- :mod:`.agreement`: the judge against people: kappa, weighted kappa, Krippendorff's alpha, system rankings.

The component is :class:`haystack_irmetrics.components.RelevanceJudge`; the command ``irmetrics judge``.
Importing this package imports no Haystack.
"""
