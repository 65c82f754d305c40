"""``UsefulnessEvaluator``: a Haystack component that labels each retrieved document by what the RAG pipeline's
generator answers from it alone, and scores the rankings on those labels (eRAG: Salemi and Zamani, SIGIR 2024). Its
logic lives in :mod:`haystack_irmetrics.usefulness`; this module path is public (pipeline YAMLs store it), and
:func:`~haystack_irmetrics.integration.loading.load_pipeline` trusts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.core.serialization import component_to_dict
from haystack.utils import deserialize_component_inplace

from ..checks import choice, whole
from ..errors import UsefulnessError
from ..usefulness.asker import AnswerAsker
from ..usefulness.metrics import ANSWER_METRICS, GRADED, answer_score, check_references
from ..usefulness.scoring import check_measures, score_run
from ..usefulness.settings import default_measures


@component
class UsefulnessEvaluator:
    """
    Label each retrieved document by whether the generator, given that document alone, answers the question, and
    score each question's ranking on the labels (NDCG, P, MRR, Success, ... of the core).

    For each question and each of its first ``k`` documents the chat generator is asked once (``prompt``, a short
    answer from the document), and the answer is scored against the question's reference answers by
    ``answer_metric``: ``exact_match`` or ``f1`` (SQuAD's, after its normalization: lowercase, no punctuation, no
    articles) or ``contains``, the best over the references. ``exact_match`` and ``contains`` give labels 0 or 1,
    with which every measure equals pytrec_eval's; ``f1`` gives graded labels in [0, 1]: NDCG takes them as gains,
    and a measure that counts relevant documents is its mean over a relevance threshold in (0, 1] (P@k: the top k's
    mean label, Success@k: their best, as eRAG defines them). A document without text gets 0 and no request; a
    question with no document scores 0. The labels measure what the generator can do with a document, not
    topical relevance; they cost ``k`` requests per question.

    Requests run ``concurrency`` at a time, each failed one (429, 5xx, time-out, a refused connection, a reply
    with no choices) retried ``retries`` times with backoff; an empty answer is an answer (label 0).

    Usage (a chat generator standing in for a model: it answers with the passage's last word)::

        >>> from haystack import Document, component
        >>> from haystack.dataclasses import ChatMessage
        >>> @component
        ... class LastWord:
        ...     @component.output_types(replies=list[ChatMessage])
        ...     def run(self, messages: list[ChatMessage]):
        ...         passage = messages[-1].text.split("Passage: ")[1].split("\\n")[0]
        ...         return {"replies": [ChatMessage.from_assistant(passage.rstrip(".").split()[-1])]}
        >>> evaluator = UsefulnessEvaluator(LastWord(), measures=["P@2", "MRR@2"], k=2)
        >>> out = evaluator.run(
        ...     questions=["When did the bridge open?"],
        ...     retrieved_documents=[[Document(content="It is long."), Document(content="It opened in 1887.")]],
        ...     ground_truth_answers=[["1887"]],
        ... )
        >>> out["labels"], out["generations"], out["scores"]
        ([[0, 1]], [['long', '1887']], {'P@2': 0.5, 'MRR@2': 0.5})
    """

    def __init__(
        self,
        chat_generator: Any,
        measures: Sequence[str] | None = None,
        answer_metric: str = "exact_match",
        prompt: str | None = None,
        max_chars: int | None = None,
        k: int = 10,
        concurrency: int = 8,
        retries: int = 4,
    ) -> None:
        """
        :param chat_generator: the RAG pipeline's chat generator (any Haystack ChatGenerator), as it answers there.
        :param measures: the measures of each ranking (default ``NDCG@k``, ``P@k``, ``MRR@k``, ``Success@k``); the
            first is ``score``. A cutoff above ``k`` is refused: those documents have no label.
        :param answer_metric: ``exact_match``, ``f1`` or ``contains``.
        :param prompt: the user message, with ``{question}`` and ``{document}`` (default: a short answer from the
            passage, or ``unknown``).
        :param max_chars: send at most this many characters of a document.
        :param k: the documents labelled per question (each one request).
        :param concurrency: requests in flight; ``retries``: further attempts of a failed request.
        :raises UsefulnessError: a value out of range, an unknown answer metric, a prompt without its placeholders.
        :raises UnknownMeasureError: an unknown measure.
        """
        self.k = whole(k, "k", least=1, error=UsefulnessError)
        self.answer_metric = choice(answer_metric, "answer_metric", ANSWER_METRICS, error=UsefulnessError)
        self.concurrency = whole(concurrency, "concurrency", least=1, error=UsefulnessError)
        self.retries = whole(retries, "retries", least=0, error=UsefulnessError)
        self.measures = None if measures is None else list(measures)
        self._measures = check_measures(default_measures(k) if measures is None else measures, k, "k")
        self.chat_generator = chat_generator
        self.prompt = prompt
        self.max_chars = max_chars
        self.asker = AnswerAsker(chat_generator, prompt=prompt, max_chars=max_chars)

    def warm_up(self) -> None:
        """Warm the generator up (a local model loads here)."""
        self.asker.warm_up()

    @component.output_types(
        score=float,
        scores=dict[str, float],
        individual_scores=dict[str, list[float]],
        labels=list[list[float]],
        generations=list[list[str | None]],
    )
    def run(
        self, questions: list[str], retrieved_documents: list[list[Document]], ground_truth_answers: list[list[str]]
    ) -> dict[str, Any]:
        """
        Label the first ``k`` documents of each question and score each ranking.

        :returns: ``score`` (the first measure's mean), ``scores`` (``{measure: mean over the questions}``),
            ``individual_scores`` (``{measure: [one value per question]}``), ``labels`` (per question, per labelled
            document) and ``generations`` (the generator's answer per labelled document; ``None`` for a document
            without text, which is not sent).
        :raises UsefulnessError: lists of different lengths, a question without reference answers; the generator
            failing for good (its retries spent).
        """
        references = self._check(questions, retrieved_documents, ground_truth_answers)
        pairs, texts = [], []
        for i, docs in enumerate(retrieved_documents):
            for j, doc in enumerate(docs[: self.k]):
                if doc.content:
                    pairs.append((str(i), str(j)))
                    texts.append((questions[i], doc.content))
        answered = dict(zip(pairs, self._answers(texts, pairs)))
        generations = [
            [answered.get((str(i), str(j))) for j in range(min(self.k, len(d)))]
            for i, d in enumerate(retrieved_documents)
        ]
        labels = [
            [0 if a is None else answer_score(self.answer_metric, a, references[i]) for a in row]
            for i, row in enumerate(generations)
        ]
        return {**self._scores(labels), "labels": labels, "generations": generations}

    def _check(self, questions: Any, documents: Any, answers: Any) -> list[list[str]]:
        """Three lists of one length, each question with reference answers (its ones, checked)."""
        if not (len(questions) == len(documents) == len(answers)):
            raise UsefulnessError(
                f"questions, retrieved_documents and ground_truth_answers must be as many: {len(questions)}, "
                f"{len(documents)} and {len(answers)}"
            )
        return [check_references(given, f"question {i}") for i, given in enumerate(answers)]

    def _answers(self, texts: list[tuple[str, str]], names: list[tuple[str, str]]) -> list[str]:
        """The generator's answer to each pair (named by the question's and the document's positions in messages; no
        cache: each run asks)."""
        from ..judges.cache import JudgmentCache
        from ..usefulness.labelling import ask_answers

        asking = {"concurrency": self.concurrency, "retries": self.retries, "progress": False}
        return ask_answers(self.asker, texts, names, JudgmentCache(enabled=False), **asking)[0]

    def _scores(self, labels: list[list[float]]) -> dict[str, Any]:
        """``score``, ``scores`` and ``individual_scores`` of the rankings (positions as document ids)."""
        qids = [str(i) for i in range(len(labels))]
        qrels = {q: {str(j): label for j, label in enumerate(row)} for q, row in zip(qids, labels) if row}
        ranked = {q: [str(j) for j in range(len(row))] for q, row in zip(qids, labels) if row}
        scores = score_run(qrels, ranked, self._measures, self.answer_metric in GRADED, qids)
        individual = {m: [scores.per_query[m][q] for q in qids] for m in scores.per_query}
        first = self._measures[0].name
        return {"score": scores.means[first], "scores": scores.means, "individual_scores": individual}

    @staticmethod
    def evaluation_run_result(output: dict[str, Any], run_name: str, questions: Sequence[str]) -> Any:
        """The output of :meth:`run` as Haystack's ``EvaluationRunResult``: one result per measure (its mean and
        per-question values), the questions as the input column, so that ``aggregated_report()`` and
        ``comparative_detailed_report()`` work as with Haystack's own evaluators."""
        from .evaluators import to_evaluation_run_result

        scored = {
            "query_ids": list(questions),
            "raw_means": output["scores"],
            "individual_scores": output["individual_scores"],
        }
        return to_evaluation_run_result(scored, run_name, {"question": list(questions)})

    def to_dict(self) -> dict[str, Any]:
        """Serialize, the chat generator as Haystack serializes components."""
        return default_to_dict(
            self,
            chat_generator=component_to_dict(self.chat_generator, "chat_generator"),
            measures=self.measures,
            answer_metric=self.answer_metric,
            prompt=self.prompt,
            max_chars=self.max_chars,
            k=self.k,
            concurrency=self.concurrency,
            retries=self.retries,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UsefulnessEvaluator:
        """Deserialize (the chat generator's module must be trusted, as any component's); ``data`` is left as it is."""
        params = dict(data.get("init_parameters") or {})
        deserialize_component_inplace(params, key="chat_generator")
        return default_from_dict(cls, {**data, "init_parameters": params})


__all__ = ["UsefulnessEvaluator"]
