"""Write examples/data/qa/: a small question-answering sample for usefulness labels (`irmetrics usefulness`,
docs/usefulness.md), written by the haystack_irmetrics project (the places, people and facts are invented; MIT, as
the project).

Twelve landmarks of an invented valley, each with four passages: its history (who made it and when), one passage
with the year alone, one with the person alone, and one with other facts (no answer). Two questions per landmark
(the year, the person), 24 in all, each with its reference answers. Two runs retrieve the top 10 passages of each
question: `lexical` ranks by the words a passage (title and text) shares with the question, `noisy` by the same
count plus seeded noise, so it often ranks the answering passages lower.

    python examples/make_qa_sample.py [FOLDER]     # default: examples/data/qa

Files: corpus.jsonl and queries.jsonl (BEIR's layout), answers.jsonl (`query_id`, `answers`), lexical.trec and
noisy.trec. The same seed gives the same bytes (tests/test_usefulness_data.py checks the committed files against a
fresh run).
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from haystack_irmetrics.io.answers import write_answers
from haystack_irmetrics.io.output import write_text
from haystack_irmetrics.io.tables import json_text
from haystack_irmetrics.io.trec import write_trec_run

ROOT = Path(__file__).resolve().parent.parent
DEPTH = 10
SEED = 48

# name, the verb of its year, the year, the person's part, the person, a fact with no answer
LANDMARKS = [
    (
        "the Corran Bridge",
        "opened",
        "1887",
        "designed by",
        "Hedda Marsh",
        "312 metres long and carries a road and a footpath over the Ivel River",
    ),
    (
        "the Tolvern Lighthouse",
        "first lit",
        "1902",
        "built by",
        "Osric Penhale",
        "41 metres tall and stands on Greyscar Point",
    ),
    (
        "the Amberlee Library",
        "opened",
        "1924",
        "founded by",
        "Clara Wendt",
        "home to some 80,000 volumes and a reading room under a glass roof",
    ),
    (
        "the Halden Observatory",
        "opened",
        "1931",
        "founded by",
        "Tomas Rieke",
        "on the summit of Mount Halden, with a telescope of 1.2 metres",
    ),
    (
        "the Saltmarsh Market",
        "first held",
        "1768",
        "started by",
        "Wilma Fenwick",
        "held every Thursday on the quay of Port Ivel",
    ),
    (
        "the Kessel Tramway",
        "opened",
        "1911",
        "engineered by",
        "Ada Brannock",
        "14 kilometres long, between Kessel and Dunmere",
    ),
    (
        "the Orvie Music Festival",
        "first held",
        "1968",
        "founded by",
        "Lena Sorvik",
        "held every August in the meadows outside Orvie",
    ),
    (
        "the Brackwater Canal",
        "completed",
        "1796",
        "engineered by",
        "Jonas Tiller",
        "climbs through 22 locks from Brackwater to the sea",
    ),
    ("Glenmoor Castle", "completed", "1340", "built for", "Edric Vane", "a round keep on the ridge above Glenmoor"),
    (
        "the Dunmere Museum of Clocks",
        "opened",
        "1956",
        "founded by",
        "Ivo Pellan",
        "home to 600 clocks, the oldest from the fifteenth century",
    ),
    (
        "the Redfern Dam",
        "completed",
        "1962",
        "engineered by",
        "Maud Ferrier",
        "95 metres high and holds back the Redfern River",
    ),
    (
        "the Wyndle Botanic Garden",
        "opened",
        "1879",
        "founded by",
        "Edwin Harrow",
        "home to 4,000 species of plants in six glasshouses",
    ),
]
STOP = frozenset(("a", "an", "the", "of", "in", "on", "to", "was", "who", "what", "which", "year", "by", "and", "is"))


def _title(name: str) -> str:
    return name[4:] if name.startswith("the ") else name


def _passages(name: str, verb: str, year: str, role: str, person: str, fact: str) -> list[dict[str, str]]:
    """The landmark's four passages: its history, the year alone, the person alone, other facts."""
    title = _title(name)
    surname = person.split()[-1]
    cap = name[0].upper() + name[1:]
    return [
        {"title": f"{title}: a short history", "text": f"{cap} was {role} {person} and {verb} in {year}."},
        {
            "title": f"{title} then and now",
            "text": f"{cap} was {verb} in {year}, after years of argument about the cost.",
        },
        {
            "title": f"The people behind {title}",
            "text": f"The story of {name} is the story of {person}. {surname} lived nearby for the rest of a long life.",
        },
        {
            "title": f"Facts about {title}",
            "text": f"{cap} is {fact}. It is one of the best known sights of the valley.",
        },
    ]


def _questions(name: str, verb: str, year: str, role: str, person: str) -> list[tuple[str, list[str]]]:
    """The landmark's two questions and their reference answers."""
    surname = person.split()[-1]
    return [
        (f"In what year was {name} {verb}?", [year]),
        (f"Who was {name} built for?" if role == "built for" else f"Who {role.split()[0]} {name}?", [person, surname]),
    ]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


def make(seed: int = SEED) -> tuple[dict, dict, dict, dict[str, dict[str, dict[str, float]]]]:
    """The corpus, queries, answers and the two runs (``{name: {qid: {doc: score}}}``)."""
    corpus, queries, answers = {}, {}, {}
    for i, landmark in enumerate(LANDMARKS):
        for j, passage in enumerate(_passages(*landmark)):
            corpus[f"p{4 * i + j + 1:03d}"] = passage
        for j, (question, given) in enumerate(_questions(*landmark[:5])):
            queries[f"qa{2 * i + j + 1:02d}"] = question
            answers[f"qa{2 * i + j + 1:02d}"] = given
    rng = random.Random(seed)
    runs: dict[str, dict[str, dict[str, float]]] = {"lexical": {}, "noisy": {}}
    for qid, question in queries.items():
        asked = _words(question)
        shared = {d: float(len(asked & _words(p["title"] + " " + p["text"]))) for d, p in corpus.items()}
        noisy = {d: round(s + rng.uniform(0, 5), 4) for d, s in shared.items()}
        for name, scores in (("lexical", shared), ("noisy", noisy)):
            top = sorted(scores, key=lambda d: (-scores[d], d))[:DEPTH]
            runs[name][qid] = {d: scores[d] for d in top}
    return corpus, queries, answers, runs


def main(folder: Path) -> list[Path]:
    """Write the sample into FOLDER; the paths written."""
    corpus, queries, answers, runs = make()
    folder.mkdir(parents=True, exist_ok=True)
    docs = "".join(json_text({"_id": d, **p}) + "\n" for d, p in corpus.items())
    asked = "".join(json_text({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    written = [write_text(folder / "corpus.jsonl", docs), write_text(folder / "queries.jsonl", asked)]
    written.append(write_answers(answers, folder / "answers.jsonl"))
    written += [write_trec_run(run, folder / f"{name}.trec", name) for name, run in runs.items()]
    return written


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples" / "data" / "qa")
