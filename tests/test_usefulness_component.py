"""The ``UsefulnessEvaluator`` component inside Haystack pipelines: after a BM25 retriever over the shipped QA sample
(whole passages, and chunks), its generator Haystack's ``OpenAIChatGenerator`` reaching the stand-in server on
127.0.0.1 that answers by a rule this test knows; its scores against pytrec_eval, its output in Haystack's
``EvaluationRunResult``, its YAML round trip and its refusals."""

from __future__ import annotations

import pytest
import pytrec_eval

pytest.importorskip("haystack")

from haystack import Document, Pipeline
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.utils import Secret

from haystack_irmetrics.components import UsefulnessEvaluator, load_pipeline
from haystack_irmetrics.errors import UnknownMeasureError, UsefulnessError
from haystack_irmetrics.usefulness.server import AnswerServer, rule_answer

from .test_usefulness import ORACLES, metric_max_over_ground_truths
from .test_usefulness_cli import ANSWERS, QUESTIONS, REFERENCES, TEXTS


@pytest.fixture(scope="module")
def server():
    with AnswerServer(REFERENCES) as s:
        yield s


@pytest.fixture
def generator(server, monkeypatch):
    monkeypatch.setenv("STAND_IN_KEY", "no-key")
    return OpenAIChatGenerator(api_key=Secret.from_env_var("STAND_IN_KEY"), model="stand-in", api_base_url=server.url)


def _store(documents):
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore()
    store.write_documents(documents)
    return store


def _sample_documents():
    return [Document(id=d, content=text) for d, text in TEXTS.items()]


def _retrieved(store, top_k=5):
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

    retriever = InMemoryBM25Retriever(store, top_k=top_k)
    return {q: retriever.run(query=text)["documents"] for q, text in QUESTIONS.items()}


def test_after_a_retriever_the_labels_are_the_rules_and_the_scores_pytrec_evals(generator, server):
    retrieved = _retrieved(_store(_sample_documents()))
    qids = list(QUESTIONS)
    evaluator = UsefulnessEvaluator(generator, k=5)
    before = len(server.requests)
    out = evaluator.run(
        questions=[QUESTIONS[q] for q in qids],
        retrieved_documents=[retrieved[q] for q in qids],
        ground_truth_answers=[ANSWERS[q] for q in qids],
    )
    assert len(server.requests) - before == sum(len(retrieved[q]) for q in qids)  # one request per document
    for i, q in enumerate(qids):
        said = [rule_answer(QUESTIONS[q], d.content, ANSWERS[q]) for d in retrieved[q]]
        assert out["generations"][i] == said
        assert out["labels"][i] == [metric_max_over_ground_truths(ORACLES["exact_match"], a, ANSWERS[q]) for a in said]
    labels = {q: {str(j): out["labels"][i][j] for j in range(len(retrieved[q]))} for i, q in enumerate(qids)}
    run = {q: {str(j): float(10 - j) for j in range(len(retrieved[q]))} for q in qids}
    oracle = pytrec_eval.RelevanceEvaluator(labels, {"ndcg_cut_5", "P_5", "success_5", "recip_rank"}).evaluate(run)
    for measure, theirs in (
        ("NDCG@5", "ndcg_cut_5"),
        ("P@5", "P_5"),
        ("Success@5", "success_5"),
        ("MRR@5", "recip_rank"),
    ):
        assert out["individual_scores"][measure] == pytest.approx([oracle[q][theirs] for q in qids], abs=1e-12)
        assert out["scores"][measure] == pytest.approx(sum(oracle[q][theirs] for q in qids) / len(qids), abs=1e-12)
    assert out["score"] == out["scores"]["NDCG@5"]
    report = UsefulnessEvaluator.evaluation_run_result(out, "bm25", [QUESTIONS[q] for q in qids])
    assert report.aggregated_report() == {
        "metrics": ["NDCG@5", "P@5", "MRR@5", "Success@5"],
        "score": [out["scores"][m] for m in ("NDCG@5", "P@5", "MRR@5", "Success@5")],
    }


def test_inside_a_pipeline_after_a_retriever_and_an_output_adapter(generator):
    from haystack.components.converters import OutputAdapter
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(_store(_sample_documents()), top_k=3))
    pipe.add_component(
        "batch", OutputAdapter(template="{{ [documents] }}", output_type=list[list[Document]], unsafe=True)
    )
    pipe.add_component(
        "usefulness", UsefulnessEvaluator(generator, measures=["Success@3", "P@3"], k=3, answer_metric="f1")
    )
    pipe.connect("retriever.documents", "batch.documents")
    pipe.connect("batch.output", "usefulness.retrieved_documents")
    q = "qa02"
    out = pipe.run(
        {
            "retriever": {"query": QUESTIONS[q]},
            "usefulness": {"questions": [QUESTIONS[q]], "ground_truth_answers": [ANSWERS[q]]},
        },
        include_outputs_from={"retriever"},
    )
    docs = out["retriever"]["documents"]
    labels = [
        metric_max_over_ground_truths(ORACLES["f1"], rule_answer(QUESTIONS[q], d.content, ANSWERS[q]), ANSWERS[q])
        for d in docs
    ]
    assert out["usefulness"]["labels"] == [pytest.approx(labels)]
    assert out["usefulness"]["scores"] == pytest.approx({"Success@3": max(labels), "P@3": sum(labels) / 3})


def test_behind_a_chunking_indexer_each_chunk_is_labelled(generator):
    from haystack.components.preprocessors import DocumentSplitter

    splitter = DocumentSplitter(split_by="word", split_length=8, split_overlap=0)
    chunks = splitter.run(documents=_sample_documents())["documents"]
    retrieved = _retrieved(_store(chunks), top_k=4)
    qids = ["qa03", "qa09", "qa13", "qa20"]  # the answer in the first chunk retrieved, or in none of them
    out = UsefulnessEvaluator(generator, k=4, answer_metric="contains").run(
        [QUESTIONS[q] for q in qids], [retrieved[q] for q in qids], [ANSWERS[q] for q in qids]
    )
    for i, q in enumerate(qids):
        said = [rule_answer(QUESTIONS[q], d.content, ANSWERS[q]) for d in retrieved[q]]
        assert out["labels"][i] == [metric_max_over_ground_truths(ORACLES["contains"], a, ANSWERS[q]) for a in said]
    assert any(any(row) for row in out["labels"]) and not all(all(row) for row in out["labels"])


def test_a_document_without_text_is_label_0_not_asked_and_a_question_without_documents_scores_0(generator, server):
    before = len(server.requests)
    out = UsefulnessEvaluator(generator, measures=["P@2", "MRR@2"], k=2).run(
        questions=[QUESTIONS["qa01"], QUESTIONS["qa02"]],
        retrieved_documents=[[Document(content=None), Document(content=TEXTS["p001"])], []],
        ground_truth_answers=[ANSWERS["qa01"], ANSWERS["qa02"]],
    )
    assert len(server.requests) - before == 1
    label = metric_max_over_ground_truths(
        ORACLES["exact_match"], rule_answer(QUESTIONS["qa01"], TEXTS["p001"], ["1887"]), ["1887"]
    )
    assert out["generations"] == [[None, rule_answer(QUESTIONS["qa01"], TEXTS["p001"], ["1887"])], []]
    assert out["labels"] == [[0, label], []]
    assert out["individual_scores"]["P@2"] == [label / 2, 0.0]
    assert out["individual_scores"]["MRR@2"] == [label / 2, 0.0]


def test_it_serializes_its_generator_as_haystack_does_and_a_yaml_loads_and_runs(generator, server):
    evaluator = UsefulnessEvaluator(generator, measures=["P@3"], answer_metric="contains", k=3, max_chars=500)
    data = evaluator.to_dict()
    assert data["type"] == "haystack_irmetrics.components.usefulness.UsefulnessEvaluator"
    params = data["init_parameters"]
    assert params["chat_generator"]["type"] == "haystack.components.generators.chat.openai.OpenAIChatGenerator"
    assert params["chat_generator"]["init_parameters"]["api_key"] == {
        "type": "env_var",
        "env_vars": ["STAND_IN_KEY"],
        "strict": True,
    }
    assert {k: v for k, v in params.items() if k != "chat_generator"} == {
        "measures": ["P@3"],
        "answer_metric": "contains",
        "prompt": None,
        "max_chars": 500,
        "k": 3,
        "concurrency": 8,
        "retries": 4,
    }
    assert UsefulnessEvaluator.from_dict(data).to_dict() == data
    pipe = Pipeline()
    pipe.add_component("usefulness", evaluator)
    loaded = load_pipeline(pipe.dumps())
    assert loaded.to_dict() == pipe.to_dict()
    out = loaded.run(
        {
            "usefulness": {
                "questions": [QUESTIONS["qa01"]],
                "retrieved_documents": [[Document(content=TEXTS["p002"])]],
                "ground_truth_answers": [["1887"]],
            }
        }
    )
    assert out["usefulness"]["labels"] == [[1]] and out["usefulness"]["scores"] == {"P@3": pytest.approx(1 / 3)}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k": 0}, UsefulnessError, "^k must be a whole number >= 1, got 0$"),
        (
            {"answer_metric": "bleu"},
            UsefulnessError,
            "^answer_metric must be one of exact_match, f1, contains, got 'bleu'$",
        ),
        ({"measures": ["P@20"]}, UsefulnessError, r"^P@20 reads each ranking's top 20, but only the top 10 .*\(k 10\)"),
        ({"measures": ["Nope@3"]}, UnknownMeasureError, "Nope"),
        (
            {"prompt": "Answer {question}"},
            UsefulnessError,
            "the prompt must be a text holding {question} and {document}",
        ),
        ({"concurrency": 0}, UsefulnessError, "^concurrency must be a whole number >= 1, got 0$"),
        ({"measures": []}, UsefulnessError, r"^measures must be a list of one or more measure names, got \[\]$"),
    ],
)
def test_bad_init_parameters_are_refused_naming_them(generator, kwargs, error, message):
    with pytest.raises(error, match=message):
        UsefulnessEvaluator(generator, **kwargs)


def test_a_generator_that_is_no_chat_generator_is_refused():
    with pytest.raises(UsefulnessError, match=r"^the generator must be a Haystack chat generator, got str$"):
        UsefulnessEvaluator("gpt-4o-mini")


@pytest.mark.parametrize(
    ("questions", "documents", "answers", "message"),
    [
        (
            ["q"],
            [[], []],
            [["x"]],
            "questions, retrieved_documents and ground_truth_answers must be as many: 1, 2 and 1",
        ),
        (["q", "r"], [[], []], [["x"], []], "question 1 has no reference answers"),
        (["q"], [[]], [["x", "An"]], "question 0: reference answer 'An' is empty once normalized"),
    ],
)
def test_bad_run_input_is_refused_before_any_request(generator, server, questions, documents, answers, message):
    before = len(server.requests)
    with pytest.raises(UsefulnessError, match=message):
        UsefulnessEvaluator(generator).run(questions, documents, answers)
    assert len(server.requests) == before
