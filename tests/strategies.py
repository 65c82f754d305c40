"""Hypothesis strategies: small, tie-heavy, adversarial qrels and runs."""

from __future__ import annotations

from hypothesis import strategies as st

# Ids collide across queries and with query ids; '9' vs '10' exercises byte order.
QIDS = ["q1", "q2", "q3", "10", "9", "d1"]
DOCS = ["d1", "d2", "d3", "d10", "d9", "D1", "10", "9", "q1", "q2", "é", "a b"]
# Exact ties, float32 near-ties (1 and 1 + 1e-9 are one float32), negatives, zeros, and scores
# beyond float32's range (+-inf there, so they tie in trec order).
SCORES = [0.0, -0.0, 1.0, 1.0 + 1e-9, 1.0 - 1e-9, 0.5, 0.25, 2.0, -1.0, 3.3e38, 1e-40, 7.0, 1e300, -1e300]
INT_LABELS = [-1, 0, 0, 1, 1, 2, 3]


DEFAULT_SCORES = st.sampled_from(SCORES) | st.floats(-5, 5, allow_nan=False)
DEFAULT_LABELS = st.sampled_from(INT_LABELS)


def runs(scores=DEFAULT_SCORES):
    return st.dictionaries(
        st.sampled_from(QIDS), st.dictionaries(st.sampled_from(DOCS), scores, max_size=10), max_size=5
    )


def qrels(labels=DEFAULT_LABELS):
    return st.dictionaries(
        st.sampled_from(QIDS), st.dictionaries(st.sampled_from(DOCS), labels, max_size=8), max_size=5
    )


def float_qrels():
    return qrels(st.sampled_from([-0.5, 0.0, 0.1, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0]))


k_values = st.lists(st.integers(1, 12), min_size=1, max_size=4, unique=True)


@st.composite
def beir_safe(draw, labels=DEFAULT_LABELS):
    """Inputs BEIR itself does not crash on: every results query is judged with a positive label.

    Qrels may still hold queries with no results (they count 0 in BEIR's MRR and R_cap).
    """
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=5, unique=True))
    qrels = {}
    for q in qids:
        judged = draw(st.dictionaries(st.sampled_from(DOCS), labels, max_size=7))
        judged[draw(st.sampled_from(DOCS))] = draw(st.sampled_from([1, 2, 3]))
        qrels[q] = judged
    answered = draw(st.lists(st.sampled_from(qids), min_size=1, max_size=len(qids), unique=True))
    results = {q: draw(st.dictionaries(st.sampled_from(DOCS), DEFAULT_SCORES, max_size=10)) for q in answered}
    return qrels, results
