"""``RelevanceJudge``: a Haystack component that grades (query, document) pairs with a model, where no person
judged. Its logic lives in :mod:`haystack_irmetrics.judges`; this module path is public (pipeline YAMLs store
it), and :func:`~haystack_irmetrics.integration.loading.load_pipeline` trusts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.core.serialization import component_to_dict
from haystack.utils import deserialize_component_inplace

from ..judges.judge import ChatJudge, ScoreJudge, cut_points_json, make_judge

#: The meta field a judged Document carries its grade in (``None`` when the answer held no grade).
GRADE_FIELD = "relevance_grade"


@component
class RelevanceJudge:
    """
    Grade how relevant each document is to a query, 0 (not relevant) to ``max_grade``, with a model.

    Give exactly one of:

    - ``generator``: any Haystack chat generator, e.g. ``OpenAIChatGenerator(model=..., api_base_url=...)``
      for an OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, OpenAI). Each pair is one request
      with the default graded prompt (:mod:`haystack_irmetrics.judges.prompt`) or ``system_prompt`` and
      ``user_template`` (with ``{query}`` and ``{document}``), at ``temperature`` 0, the answer form
      ``{"grade": N}`` sent as ``response_format``. An answer outside that form is asked once more with a
      reminder (``reask``); one still outside it leaves the document unjudged (grade ``None``), never 0.
    - ``scorer``: a component that scores pairs (a ranker, or a document or text embedder: cosine of the two
      embeddings), its scores turned into grades by ``cut_points``, learned on human-labelled pairs with
      :meth:`fit`.

    Usage (a scorer standing in for a model: a ranker that counts shared words)::

        >>> from haystack_irmetrics.components import RelevanceJudge
        >>> from haystack import Document, component
        >>> @component
        ... class Overlap:
        ...     @component.output_types(documents=list[Document])
        ...     def run(self, query: str, documents: list[Document]):
        ...         words = set(query.split())
        ...         return {"documents": [Document(id=d.id, content=d.content,
        ...                 score=float(len(words & set(d.content.split())))) for d in documents]}
        >>> judge = RelevanceJudge(scorer=Overlap())
        >>> judge.fit([("red cat", "a red cat"), ("red cat", "a dog"), ("red cat", "red dog")], [3, 0, 1])
        [0.5, 1.5, 1.5]
        >>> out = judge.run(query="red cat", documents=[Document(content="the red cat sat"), Document(content="blue")])
        >>> out["grades"]
        [3, 0]
    """

    def __init__(
        self,
        generator: Any = None,
        scorer: Any = None,
        cut_points: Sequence[float] | None = None,
        max_grade: int = 3,
        system_prompt: str | None = None,
        user_template: str | None = None,
        temperature: float | None = 0.0,
        response_format: bool = True,
        reask: int = 1,
        lenient: bool = False,
    ) -> None:
        """
        :param generator: a Haystack chat generator (or ``scorer``, not both).
        :param scorer: a ranker or embedder whose scores become grades through ``cut_points``.
        :param cut_points: ``max_grade`` increasing scores: a score reaching ``k`` of them is grade ``k``.
        :param max_grade: the top grade (3: the default prompt's 0..3).
        :param system_prompt: replaces the default system prompt.
        :param user_template: replaces the default user message; holds ``{query}`` and ``{document}``.
        :param temperature: sent with each request (``None``: the generator's own).
        :param response_format: send the answer form as ``response_format`` (a JSON schema: ``{"grade": N}``) with
            each request; a server that answers 400 naming it is asked without it.
        :param reask: an answer not in the form asked for gets this many more requests (0 or 1), with a reminder.
        :param lenient: read free text with the lenient grammar (opt-in: it can misread; the default reads only
            the answer forms asked for).
        :raises JudgeError: both or neither of ``generator`` and ``scorer``, a template without its
            placeholders, cut points that do not fit ``max_grade``.
        """
        self.generator = generator
        self.scorer = scorer
        self.max_grade = max_grade
        self.system_prompt = system_prompt
        self.user_template = user_template
        self.temperature = temperature
        self.response_format = response_format
        self.reask = reask
        self.lenient = lenient
        self.judge: ChatJudge | ScoreJudge = make_judge(
            generator,
            scorer,
            cut_points=cut_points,
            max_grade=max_grade,
            system_prompt=system_prompt,
            user_template=user_template,
            temperature=temperature,
            response_format=response_format,
            reask=reask,
            lenient=lenient,
        )

    @property
    def cut_points(self) -> list[float] | None:
        """The score judge's cut points (``None`` for a chat judge, or before :meth:`fit`)."""
        return getattr(self.judge, "cut_points", None)

    def warm_up(self) -> None:
        """Warm the generator or scorer up (loads a local model)."""
        self.judge.warm_up()

    def fit(self, pairs: Sequence[tuple[str, str]], labels: Sequence[int]) -> list[float]:
        """Learn the cut points of a score judge from human-labelled ``(query, document text)`` pairs.

        :raises JudgeError: a chat judge (it needs none), or labels that cannot be learned from.
        """
        from ..errors import JudgeError

        if not isinstance(self.judge, ScoreJudge):
            raise JudgeError("only a judge with a scorer learns cut points; a chat judge asks its generator")
        return self.judge.fit(pairs, labels)

    def fingerprint(self) -> str:
        """The SHA-256 of the judge's settings (model, prompt, grades, cut points; never the API key)."""
        return self.judge.fingerprint()

    @component.output_types(documents=list[Document], grades=list[int | None], answers=list[str | None])
    def run(self, query: str, documents: list[Document]) -> dict[str, Any]:
        """
        Grade each document for ``query``.

        :returns: ``documents`` (copies, each with its grade in ``meta["relevance_grade"]``), ``grades`` (in
            input order; ``None`` where the answer held no grade) and ``answers`` (the model's raw answers, or
            the scores as text).
        """
        texts = [d.content or "" for d in documents]
        if isinstance(self.judge, ScoreJudge):
            verdicts = self.judge.judge_pairs([(query, t) for t in texts])
        else:
            verdicts = [self.judge.grade(query, t) for t in texts]
        graded = [replace(d, meta={**d.meta, GRADE_FIELD: v.label}) for d, v in zip(documents, verdicts, strict=True)]
        return {"documents": graded, "grades": [v.label for v in verdicts], "answers": [v.raw for v in verdicts]}

    def to_dict(self) -> dict[str, Any]:
        """Serialize, the generator or scorer with it."""
        return default_to_dict(
            self,
            generator=component_to_dict(self.generator, "generator") if self.generator is not None else None,
            scorer=component_to_dict(self.scorer, "scorer") if self.scorer is not None else None,
            cut_points=None if self.cut_points is None else cut_points_json(self.cut_points),
            max_grade=self.max_grade,
            system_prompt=self.system_prompt,
            user_template=self.user_template,
            temperature=self.temperature,
            response_format=self.response_format,
            reask=self.reask,
            lenient=self.lenient,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RelevanceJudge:
        """Deserialize (the generator's and scorer's modules must be trusted, as any component's)."""
        params = data.get("init_parameters") or {}
        for key in ("generator", "scorer"):
            if params.get(key) is not None:
                deserialize_component_inplace(params, key=key)
        return default_from_dict(cls, data)


def load_judge(path: str) -> ChatJudge | ScoreJudge:
    """The judge of the pipeline YAML ``path``, which holds one :class:`RelevanceJudge` (``irmetrics judge
    --judge``): an OpenAI generator with no client settings of its own has its time-out bound whole requests,
    and a scorer named by MiniLM's name reads the offline copy, as ``irmetrics beir`` does.

    :raises JudgeError: a YAML that cannot be loaded (one line, the component's own error), or that holds no
        RelevanceJudge or several.
    :raises MissingDependencyError: a component of an extra that is not installed (the dense extra's scorer).
    """
    from ..errors import JudgeError
    from ..judges.http import bound_requests
    from ..judges.job import load_yaml

    pipeline = load_yaml(path, "the judge")
    judges = [c for _, c in pipeline.walk() if isinstance(c, RelevanceJudge)]
    if len(judges) != 1:
        raise JudgeError(f"the judge YAML {path} must hold one RelevanceJudge component, it holds {len(judges)}")
    bound_requests(judges[0].generator)
    scorer = judges[0].scorer
    if isinstance(getattr(scorer, "model", None), str):  # MiniLM's name: the offline copy, as irmetrics beir does
        from ..beir.models import resolve_model

        scorer.model = resolve_model(scorer.model)
    return judges[0].judge


__all__ = ["GRADE_FIELD", "RelevanceJudge", "load_judge"]
