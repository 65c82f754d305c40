"""Generate the synthetic BEIR-format sample dataset shipped with haystack_irmetrics.

The dataset is a small, fictional "household knowledge base" covering eight
topics (bicycle maintenance, gardening, home networking, cooking, amateur
astronomy, personal finance, first aid and home repair).  All text was written
for this project; nothing is copied from an existing dataset, website or book.

Every topic has a handful of *facets*.  A facet is one concrete question
(the query) plus hand-written sentences that answer it (``ANSWER``) and
sentences that are on-topic but do not answer it (``PARTIAL``).  Documents are
composed from these sentences, from topic-wide sentence templates and from
small topic vocabularies, so that a document and its relevance label are
produced together:

* label 2 (highly relevant): three or four answer sentences of the facet;
* label 1 (partially relevant): exactly one answer sentence plus background;
* label 0 (judged, not relevant): background sentences about the same subject
  without any answer, and the documents from other facets that share the most
  words with the query.

Overview documents built only from topic-wide sentences are left unjudged and
act as distractors.  The generator is deterministic for a given ``--seed`` and
uses only the Python standard library.

Usage::

    python scripts/make_sample_dataset.py [--out DIR] [--seed N]
"""

import argparse
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

SEED = 1729
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "haystack_irmetrics" / "datasets" / "sample"

N_DEV = 6  # queries judged only in qrels/dev.tsv
N_UNJUDGED = 2  # queries that appear in no qrels file at all
N_OVERVIEW_PER_TOPIC = 8  # unjudged distractor documents per topic
N_HARD_NEGATIVES = 2  # word-overlap negatives judged 0 per query

OPENERS = [
    "This note is about {subject}.",
    "Readers write to us about {subject} more often than you might expect.",
    "Here is what we have learned about {subject} over the years.",
    "The following notes cover {subject}.",
    "Questions about {subject} come up regularly.",
]
ANSWER_TITLE_SUFFIXES = ["", "", "", ": a checklist", " (quick guide)"]
PARTIAL_TITLE_PREFIXES = [
    "Notes on",
    "A few words about",
    "Things to know about",
    "Tips on",
    "Some thoughts on",
]
BACKGROUND_TITLE_PREFIXES = [
    "Background:",
    "Understanding",
    "Facts about",
    "An introduction to",
    "Common questions about",
]
OVERVIEW_TITLE_SUFFIXES = [
    "reader questions",
    "a short checklist",
    "spring edition",
    "autumn edition",
    "more tips",
    "second helping",
]
# fmt: off
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "didn't", "do", "does", "for", "from",
    "how", "i", "if", "in", "is", "it", "its", "my", "not", "of", "on", "or", "should", "so", "that",
    "the", "this", "to", "what", "when", "where", "which", "why", "with", "you", "your",
})
# fmt: on

# Hand-written source text (scripts/sample_topics.txt; its header describes the format).
DATA_FILE = Path(__file__).with_name("sample_topics.txt")


@dataclass
class Facet:
    key: str
    query: str = ""
    subject: str = ""
    titles: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)


@dataclass
class Topic:
    name: str
    vocab: dict[str, list[str]] = field(default_factory=dict)
    titles: list[str] = field(default_factory=list)
    general: list[str] = field(default_factory=list)
    facets: list[Facet] = field(default_factory=list)


@dataclass
class Doc:
    title: str
    sentences: list[str]
    topic: str
    facet: str | None = None  # facet key for facet documents
    label: int | None = None  # relevance to its own facet's query
    doc_id: str = ""

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def logical_lines(raw: str) -> list[str]:
    lines: list[str] = []
    for line in raw.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("  ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line.rstrip())
    return lines


def parse(raw: str) -> list[Topic]:
    topics: list[Topic] = []
    topic: Topic | None = None
    facet: Facet | None = None
    items: list[str] | None = None
    for line in logical_lines(raw):
        if line.startswith("- "):
            if items is None:
                raise ValueError(f"item outside a list: {line!r}")
            items.append(line[2:].strip())
            continue
        keyword, _, rest = line.partition(" ")
        rest = rest.strip()
        if keyword == "TOPIC":
            topic = Topic(rest)
            topics.append(topic)
            facet, items = None, None
            continue
        if topic is None:
            raise ValueError(f"{keyword} before the first TOPIC")
        if keyword == "VOCAB":
            name, _, values = rest.partition(":")
            topic.vocab[name.strip()] = [v.strip() for v in values.split(";")]
        elif keyword == "TITLE":
            (facet.titles if facet else topic.titles).append(rest)
        elif keyword == "GENERAL":
            items = topic.general
        elif keyword == "FACET":
            facet = Facet(rest)
            topic.facets.append(facet)
            items = None
        elif facet is None:
            raise ValueError(f"{keyword} outside a FACET")
        elif keyword == "QUERY":
            facet.query = rest
        elif keyword == "SUBJECT":
            facet.subject = rest
        elif keyword == "ANSWER":
            items = facet.answer
        elif keyword == "PARTIAL":
            items = facet.partial
        else:
            raise ValueError(f"unknown keyword in line {line!r}")
    return topics


def fill(template: str, vocab: dict[str, list[str]], rng: random.Random) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: rng.choice(vocab[m.group(1)]), template)


def general_sentences(topic: Topic, k: int, rng: random.Random) -> list[str]:
    return [fill(t, topic.vocab, rng) for t in rng.sample(topic.general, k)]


def opener(facet: Facet, rng: random.Random) -> str:
    return rng.choice(OPENERS).format(subject=facet.subject)


def fit(lead: list[str], core: list[str], tail: list[str]) -> list[str]:
    """Join sentence groups, dropping tail sentences to stay at six or fewer."""
    room = max(0, 6 - len(lead) - len(core))
    return lead + core + tail[:room]


def answer_doc(topic: Topic, facet: Facet, rng: random.Random) -> Doc:
    n = rng.choice([3, 3, 4])
    core = [facet.answer[i] for i in sorted(rng.sample(range(len(facet.answer)), n))]
    lead = [opener(facet, rng)] if rng.random() < 0.4 else []
    if rng.random() < 0.4:
        lead.append(rng.choice(facet.partial))
    tail = general_sentences(topic, rng.randint(1, 2), rng)
    title = rng.choice(facet.titles) + rng.choice(ANSWER_TITLE_SUFFIXES)
    return Doc(title, fit(lead, core, tail), topic.name, facet.key, 2)


def partial_doc(topic: Topic, facet: Facet, answer: str, rng: random.Random) -> Doc:
    background = rng.sample(facet.partial, rng.randint(1, 2))
    background.insert(rng.randint(0, len(background)), answer)
    lead = [opener(facet, rng)] if rng.random() < 0.5 else []
    tail = general_sentences(topic, rng.randint(1, 2), rng)
    title = f"{rng.choice(PARTIAL_TITLE_PREFIXES)} {facet.subject}"
    return Doc(title, fit(lead, background, tail), topic.name, facet.key, 1)


def background_doc(topic: Topic, facet: Facet, rng: random.Random) -> Doc:
    core = rng.sample(facet.partial, rng.randint(2, 3))
    lead = [opener(facet, rng)] if rng.random() < 0.5 else []
    tail = general_sentences(topic, rng.randint(1, 2), rng)
    title = f"{rng.choice(BACKGROUND_TITLE_PREFIXES)} {facet.subject}"
    return Doc(title, fit(lead, core, tail), topic.name, facet.key, 0)


def overview_doc(topic: Topic, used_titles: set[str], rng: random.Random) -> Doc:
    sentences = general_sentences(topic, rng.randint(3, 5), rng)
    if rng.random() < 0.5:
        # An off-facet aside makes overview documents harder to rule out.
        aside = rng.choice(rng.choice(topic.facets).partial)
        sentences.insert(rng.randint(1, len(sentences)), aside)
    title = rng.choice(topic.titles)
    while title in used_titles:
        title = f"{rng.choice(topic.titles)}: {rng.choice(OVERVIEW_TITLE_SUFFIXES)}"
    used_titles.add(title)
    return Doc(title, sentences[:6], topic.name)


def unique(make: Callable[[], Doc], seen: set[str], attempts: int = 50) -> Doc:
    """Call ``make()`` until it returns a document whose text is new."""
    for _ in range(attempts):
        doc = make()
        if doc.text not in seen:
            seen.add(doc.text)
            return doc
    raise RuntimeError("could not generate a distinct document")


def build_corpus(topics: list[Topic], rng: random.Random) -> list[Doc]:
    docs: list[Doc] = []
    seen: set[str] = set()
    for topic in topics:
        for facet in topic.facets:
            for _ in range(rng.choice([2, 3])):
                docs.append(unique(partial(answer_doc, topic, facet, rng), seen))
            for answer in rng.sample(facet.answer, 2):
                make = partial(partial_doc, topic, facet, answer, rng)
                docs.append(unique(make, seen))
            for _ in range(rng.choice([1, 2])):
                docs.append(unique(partial(background_doc, topic, facet, rng), seen))
        used_titles: set[str] = set()
        for _ in range(N_OVERVIEW_PER_TOPIC):
            docs.append(unique(partial(overview_doc, topic, used_titles, rng), seen))
    rng.shuffle(docs)
    for number, doc in enumerate(docs, start=1):
        doc.doc_id = f"doc{number:04d}"
    return docs


def tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in STOPWORDS}


def judgments(facet: Facet, docs: list[Doc]) -> dict[str, int]:
    """Relevance labels for one facet's query."""
    labels = {d.doc_id: d.label for d in docs if d.facet == facet.key}
    query_terms = tokens(facet.query)
    candidates = [
        (len(query_terms & tokens(f"{d.title} {d.text}")), d.doc_id)
        for d in docs
        if d.facet is not None and d.facet != facet.key
    ]
    candidates.sort(key=lambda c: (-c[0], c[1]))
    for overlap, doc_id in candidates[:N_HARD_NEGATIVES]:
        if overlap > 0:
            labels[doc_id] = 0
    return {doc_id: label for doc_id, label in labels.items() if label is not None}


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    """BEIR's qrels layout, queries and documents sorted, through the package's one qrels writer."""
    from haystack_irmetrics.io.trec import write_qrels as write

    write(
        {qid: {doc_id: qrels[qid][doc_id] for doc_id in sorted(qrels[qid])} for qid in sorted(qrels)},
        path,
        layout="beir",
    )


def split_stats(qrels: dict[str, dict[str, int]]) -> dict[str, int]:
    labels = [label for judged in qrels.values() for label in judged.values()]
    return {
        "queries": len(qrels),
        "judgments": len(labels),
        **{f"label_{grade}": labels.count(grade) for grade in (2, 1, 0)},
    }


README = """\
# Sample BEIR-format dataset

A small, synthetic retrieval benchmark shipped with `haystack_irmetrics` so that
examples and tests can run offline. It follows the
[BEIR](https://github.com/beir-cellar/beir) folder layout and loads with
`beir.datasets.data_loader.GenericDataLoader`.

## Provenance and license

Written by the haystack_irmetrics project. The documents and queries are
original, fictional "household knowledge base" text about eight topics
({topics}). No text was copied from an existing dataset, website or book.
License: MIT, the same as the project.

## How it was generated

`python scripts/make_sample_dataset.py` (seed {seed}, Python standard library
only) rebuilds every file in this folder deterministically. Each topic has
hand-written facets: a natural-language question plus sentences that answer it
and sentences that are on-topic but do not. Documents of 3-6 sentences are
composed from those sentences, topic-wide sentence templates and small topic
vocabularies; a document's relevance label is decided together with its text:

- `2` highly relevant: three or four sentences that answer the question;
- `1` partially relevant: exactly one answering sentence plus background;
- `0` judged not relevant: background on the same subject without an answer,
  or documents about other questions that share the most words with the query.

Overview documents made of topic-wide sentences are unjudged distractors.

## Contents

| file | rows |
| --- | --- |
| `corpus.jsonl` (`_id`, `title`, `text`) | {n_docs} documents |
| `queries.jsonl` (`_id`, `text`) | {n_queries} queries |
| `qrels/test.tsv` | {test[judgments]} judgments for {test[queries]} queries \
({test[label_2]} x 2, {test[label_1]} x 1, {test[label_0]} x 0) |
| `qrels/dev.tsv` | {dev[judgments]} judgments for {dev[queries]} queries \
({dev[label_2]} x 2, {dev[label_1]} x 1, {dev[label_0]} x 0) |

Test and dev use disjoint queries, and {n_unjudged} queries appear in no qrels
file. `queries.jsonl` therefore holds {n_extra} queries that are not in the test
split, which `GenericDataLoader` drops when loading `split="test"`.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    topics = parse(DATA_FILE.read_text(encoding="utf-8"))
    facets = [facet for topic in topics for facet in topic.facets]
    docs = build_corpus(topics, rng)

    query_ids = {facet.key: f"q{n:02d}" for n, facet in enumerate(facets, start=1)}
    order = list(range(len(facets)))
    rng.shuffle(order)
    dev = {facets[i].key for i in order[:N_DEV]}
    unjudged = {facets[i].key for i in order[N_DEV : N_DEV + N_UNJUDGED]}
    qrels: dict[str, dict[str, dict[str, int]]] = {"test": {}, "dev": {}}
    for facet in facets:
        if facet.key not in unjudged:
            split = "dev" if facet.key in dev else "test"
            qrels[split][query_ids[facet.key]] = judgments(facet, docs)

    out: Path = args.out
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    write_jsonl(
        out / "corpus.jsonl",
        [{"_id": d.doc_id, "title": d.title, "text": d.text} for d in sorted(docs, key=lambda d: d.doc_id)],
    )
    write_jsonl(
        out / "queries.jsonl",
        [{"_id": query_ids[f.key], "text": f.query} for f in facets],
    )
    for split, split_qrels in qrels.items():
        write_qrels(out / "qrels" / f"{split}.tsv", split_qrels)

    stats = {split: split_stats(split_qrels) for split, split_qrels in qrels.items()}
    readme = README.format(
        topics=", ".join(topic.name for topic in topics),
        seed=args.seed,
        n_docs=len(docs),
        n_queries=len(facets),
        n_unjudged=N_UNJUDGED,
        n_extra=len(facets) - stats["test"]["queries"],
        **stats,
    )
    (out / "README.md").write_text(readme, encoding="utf-8", newline="\n")

    print(f"wrote {out}")
    print(f"  corpus:  {len(docs)} documents")
    print(f"  queries: {len(facets)} ({N_UNJUDGED} in no qrels file)")
    for split, split_stat in stats.items():
        print(f"  {split}: {split_stat}")


if __name__ == "__main__":
    main()
