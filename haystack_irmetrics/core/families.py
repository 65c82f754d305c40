"""The registry of measure families: each family's kernel, parameters, formula and reference tool, as data.

:mod:`.measures` builds :class:`~.measures.Measure` values and names on this table; the core reads a
family's entry instead of its name (a new family of an existing kernel kind is one entry here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from . import kernels, kernels_diversity, kernels_user
from .kernels import MIN_GEO_MEAN, BinaryValue
from .kernels_diversity import DiversityValue
from .kernels_user import LabelCheck, PositiveRule, UserValue

KernelKind = Literal["gain", "binary", "bpref", "iprec", "coverage", "count", "user", "diversity"]
BeirPath = Literal["pytrec", "custom"]
AtKind = Literal["required", "optional", "none", "level"]
Aggregate = Literal["mean", "geometric", "sum"]
HoleBounds = Literal["monotone", "scan"]
Unit = Literal["rate", "count", "gain"]

# trec_eval's iprec_at_recall / 11pt_avg levels, as the C literals (0.1 * 3 != 0.3).
STANDARD_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# The families BEIR's EvaluateRetrieval reports, in its order: the default measure set.
BEIR_FAMILIES = ("NDCG", "MAP", "Recall", "P", "MRR", "R_cap")


@dataclass(frozen=True)
class Family:
    """A metric family: one kernel, with the cutoff and the variants as parameters.

    ``at``: what follows ``@`` -- a cutoff k that must be given (``"required"``) or may be left out for
    the full ranking (``"optional"``), nothing (``"none"``), or a recall level (``"level"``).
    ``beir_path``: in the BEIR preset, ``"pytrec"`` families rank like pytrec_eval (float32, ties by
    doc id) and average the queries present in the run; ``"custom"`` ones follow
    ``beir/retrieval/custom_metrics.py`` (float64 stable order, ``> 0`` relevant, divide by
    ``len(qrels)``). ``params``: the variant parameters the family takes.

    ``uncut_names``: exact spellings (case matters) that name the measure on the whole ranking when
    written without a cutoff: trec_eval's ``map``, ``ndcg`` and ``recip_rank``. Any other bare name of
    such a family (``NDCG``, ``MAP``, ``MRR``) is crossed with ``k_values``, BEIR's way; a bare name of
    an ``"optional"`` family without ``uncut_names`` (``F``, ``GMAP``) is the whole ranking.
    ``unit``: ``"rate"`` (a value in [0, 1] per query) or ``"count"`` (trec_eval's ``num_*`` counts,
    summed over the queries rather than averaged: ``aggregate="sum"``).

    The rest is how the family computes, read by the core instead of its name (a new family of an
    existing kernel kind is one entry here). ``value`` (kinds ``"binary"`` and ``"count"``): the
    per-query value at a cutoff from the arrays binary families share (:class:`.kernels.BinaryRanking`);
    ``needs_counts``: it reads the relevant documents counted above each cutoff, which the families of
    one relevance rule share; ``needs_retrieved``: it reads each query's ranking length.
    ``averaged_levels`` (kind ``"iprec"``): fixed recall levels averaged into one value (``iP_avg``),
    ``None`` for the measure's own level. ``counts_unjudged`` (kind ``"coverage"``): the top-k share of
    documents judged for no query at all (``Hole``) instead of those judged for the query (``Judged``).
    ``beir_sums_unjudged``: on BEIR's custom path, results queries nobody judged add to the sum (BEIR's hole).

    Kind ``"user"`` (the user-model measures, :mod:`.kernels_user`): ``user`` computes the values from
    every judged retrieved document in rank order; ``positive`` says which labels make a query one with
    a relevant document; ``label_check`` rejects a judgment the family cannot score (ERR's grades above
    ``max_rel``). ``param_defaults``: the value each parameter has when not given (a parameter given at
    its default is left out of the name, as ir_measures prints ``RBP(p=0.8)`` as ``RBP``).
    ``unit="gain"``: a per-query value in [0, max(1, the query's largest label)] (graded RBP sums labels).
    ``ideal_is_one``: whether listing every judged document, best label first, scores 1 on a query with
    a relevant document (``None``: the property tests' own table, for the families before these fields).
    ``zero_without_relevant``: False where a query without a relevant document still has a value (the
    RBP residual: the weight no judgment fixes stays open whatever the labels).
    ``hole_bounds`` (read by :mod:`.bounds`): how the extremes of the value over every way of judging the
    holes of the top k (each 0 or one grade) are found. ``"monotone"``: judging a hole relevant never
    lowers the value, so the extremes are "no hole relevant" and "every hole relevant". ``"scan"``: the
    value's normaliser depends only on how many holes are relevant, and moving a relevant document up
    never lowers it, so for each count s the extremes are the s first and the s last holes (2h + 1
    labellings instead of 2^h). ``None``: no bounds (the family reads which documents are judged, or
    is not a per-query mean). The property tests check both claims against every subset.
    Kind ``"diversity"`` (:mod:`.kernels_diversity`): ``diversity`` scores one query from its ranked
    judged documents and its judgments per subtopic; such a family needs
    :class:`~.subtopics.SubtopicQrels` as the qrels.
    """

    name: str
    kernel: KernelKind
    beir_path: BeirPath
    formula: str
    aliases: tuple[str, ...] = ()
    at: AtKind = "required"
    params: frozenset[str] = frozenset()
    reference: str = ""
    higher_is_better: bool = True
    aggregate: Aggregate = "mean"
    # Value of a query the run does not answer (averaged as that under missing_queries="zero").
    missing_value: float = 0.0
    # Variants reachable by name only: alias -> fixed parameters (e.g. nDCG_exp -> gain="exp").
    variant_aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    uncut_names: tuple[str, ...] = ()
    unit: Unit = "rate"
    value: BinaryValue | None = None
    needs_counts: bool = False
    needs_retrieved: bool = False
    averaged_levels: tuple[float, ...] | None = None
    counts_unjudged: bool = False
    beir_sums_unjudged: bool = False
    user: UserValue | None = None
    positive: PositiveRule | None = None
    label_check: LabelCheck | None = None
    param_defaults: Mapping[str, float] = field(default_factory=dict)
    ideal_is_one: bool | None = None
    zero_without_relevant: bool = True
    diversity: DiversityValue | None = None
    hole_bounds: HoleBounds | None = None

    @property
    def needs_subtopics(self) -> bool:
        """Whether the family reads judgments per subtopic (:class:`~.subtopics.SubtopicQrels`)."""
        return self.kernel == "diversity"

    @property
    def crossed(self) -> bool:
        """Whether a bare name of this family is crossed with ``k_values`` (``NDCG`` -> ``NDCG@10``, ...)."""
        return self.at == "required" or bool(self.uncut_names)


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "NDCG",
            "gain",
            "pytrec",
            "DCG@k / IDCG@k, DCG = sum_{i<k} gain_i / log2(i+2); IDCG over all judged docs sorted, cut at k",
            ("ndcg", "ndcg_cut"),
            at="optional",
            params=frozenset({"gain", "discount"}),
            reference="pytrec_eval ndcg_cut.k; uncut: trec_eval ndcg (with gains: ndcg.g=v)",
            hole_bounds="scan",
            variant_aliases={
                "ndcg_exp": {"gain": "exp"},
                "ndcg_burges": {"gain": "exp"},
                "ndcg_jk": {"discount": "jk"},
                "ndcg_exp_jk": {"gain": "exp", "discount": "jk"},
            },
            uncut_names=("ndcg",),
        ),
        Family(
            "MAP",
            "binary",
            "pytrec",
            "sum_{i<k, rel} hits_i/(i+1) / R",
            ("map", "map_cut", "ap", "ap_cut"),
            at="optional",
            reference="pytrec_eval map_cut.k; uncut: trec_eval map",
            hole_bounds="scan",
            uncut_names=("map",),
            value=kernels.average_precision,
            needs_counts=True,
        ),
        Family("Recall", "binary", "pytrec", "hits@k / R", ("recall", "r"), reference="pytrec_eval recall.k",
               value=kernels.recall, needs_counts=True, hole_bounds="monotone"),
        Family("P", "binary", "pytrec", "hits@k / k", ("p", "precision", "prec"), reference="pytrec_eval P.k",
               value=kernels.precision, needs_counts=True, hole_bounds="monotone"),
        Family(
            "MRR",
            "binary",
            "custom",
            "1/(i+1) for the first relevant i < k",
            ("mrr", "rr", "recip_rank", "mrr_cut", "mrr@k"),
            at="optional",
            reference="beir custom_metrics.mrr; trec: recip_rank on the top k; uncut: trec_eval recip_rank",
            hole_bounds="monotone",
            uncut_names=("recip_rank",),
            value=kernels.reciprocal_rank,
        ),
        Family(
            "R_cap",
            "binary",
            "custom",
            "hits@k / min(R, k)",
            ("r_cap", "recall_cap", "rcap", "capped_recall"),
            reference="beir custom_metrics.recall_cap",
            hole_bounds="monotone",
            value=kernels.capped_recall,
            needs_counts=True,
        ),
        Family(
            "Success",
            "binary",
            "custom",
            "1 if a relevant document is in the top k, else 0",
            # Not "hits": ranx's hits@k is the number of relevant documents retrieved, not a rate.
            ("success", "hit", "hit_rate", "hitrate", "accuracy", "acc", "top_k_acc", "top_k_accuracy"),
            reference="pytrec_eval success.k (trec); beir custom_metrics.top_k_accuracy (beir)",
            hole_bounds="monotone",
            value=kernels.success,
            needs_counts=True,
        ),
        Family(
            "Rprec",
            "binary",
            "pytrec",
            "hits@R / R (precision at rank R = number of relevant documents)",
            ("rprec", "r_prec", "rprecision", "r_precision"),
            at="none",
            reference="pytrec_eval Rprec",
            hole_bounds="scan",
            value=kernels.r_precision,
        ),
        Family(
            "F",
            "binary",
            "pytrec",
            "(x+1) P R / (x P + R), x = beta^2, P = hits/min(k, retrieved), R = hits/R; 0 if no hit",
            ("f", "f1", "set_f", "f_measure", "fmeasure"),
            at="optional",
            params=frozenset({"beta"}),
            reference="pytrec_eval set_F.x (x = beta^2) on the run cut at k",
            hole_bounds="monotone",
            value=kernels.f_measure,
            needs_counts=True,
            needs_retrieved=True,
        ),
        Family(
            "GMAP",
            "binary",
            "pytrec",
            "exp(mean_q log(max(AP_q, 0.00001))); per query max(AP, 0.00001)",
            ("gmap", "gm_map", "gm_ap", "gmap_cut"),
            at="optional",
            reference="pytrec_eval gm_map (per query: log of this value)",
            aggregate="geometric",
            missing_value=MIN_GEO_MEAN,
            value=kernels.geometric_average_precision,
            needs_counts=True,
        ),
        Family(
            "bpref",
            "bpref",
            "pytrec",
            "sum_{rel retrieved} (1 - min(nonrel above, R) / min(N, R)) / R, N = judged nonrelevant",
            ("bpref",),
            at="none",
            reference="pytrec_eval bpref",
        ),
        Family(
            "iP",
            "iprec",
            "pytrec",
            "max precision at ranks at or below the c-th relevant doc, c = int(level * R + 0.9)",
            ("ip", "iprec", "iprec_at_recall", "interpolated_precision"),
            at="level",
            reference="pytrec_eval iprec_at_recall.level",
        ),
        Family(
            "iP_avg",
            "iprec",
            "pytrec",
            "mean of iP at the 11 standard recall levels 0.0, 0.1, ..., 1.0",
            ("ip_avg", "11pt_avg", "11pt", "iprec_avg"),
            at="none",
            reference="pytrec_eval 11pt_avg",
            averaged_levels=STANDARD_LEVELS,
        ),
        Family(
            "Judged",
            "coverage",
            "pytrec",
            "judged (any label) in the top k / k",
            ("judged", "judged_at"),
            reference="ir_measures Judged@k (= P@k with every judged doc relevant)",
        ),
        Family(
            "Hole",
            "coverage",
            "custom",
            "top-k docs judged for no query at all / k",
            ("hole", "holes"),
            reference="beir custom_metrics.hole",
            higher_is_better=False,
            counts_unjudged=True,
            beir_sums_unjudged=True,
        ),
        # trec_eval's counts, summed over the queries (its summary line), as it prints them first.
        Family("num_q", "count", "pytrec", "1 per evaluated query (summed: the number of queries)", ("numq",),
               at="none", reference="trec_eval num_q", aggregate="sum", unit="count", value=kernels.num_q),
        Family("num_ret", "count", "pytrec", "documents retrieved (summed over queries)", ("numret",),
               at="none", reference="trec_eval num_ret", aggregate="sum", unit="count", value=kernels.num_ret,
               needs_retrieved=True),
        Family("num_rel", "count", "pytrec", "relevant judged documents, R (summed over queries)", ("numrel",),
               at="none", reference="trec_eval num_rel", aggregate="sum", unit="count", value=kernels.num_rel),
        Family("num_rel_ret", "count", "pytrec", "relevant documents retrieved (summed over queries)",
               ("numrelret",), at="none", reference="trec_eval num_rel_ret", aggregate="sum", unit="count",
               value=kernels.num_rel_ret),
        # The user-model measures (kernels_user.py): every judged retrieved document in rank order.
        Family(
            "ERR",
            "user",
            "pytrec",
            "sum_{i<k} r_i/(i+1) prod_{j<i} (1 - r_j), r = (2^g - 1)/2^max_rel (g <= 0: r = 0)",
            ("err", "err_cut"),
            params=frozenset({"max_rel"}),
            reference="gdeval.pl (TREC Web 2010-14; ir_measures' gdeval provider) err@k; max_rel: its MAX_JUDGMENT",
            hole_bounds="monotone",
            user=kernels_user.err,
            positive=kernels_user.positive_label,
            label_check=kernels_user.check_max_rel,
            param_defaults={"max_rel": 4.0},
            ideal_is_one=False,
        ),
        Family(
            "nERR",
            "user",
            "pytrec",
            "ERR@k / ERR@k of the ideal ranking (every judged grade > 0, highest first)",
            ("nerr", "nerr_cut"),
            params=frozenset({"max_rel"}),
            reference="gdeval.pl's err@k of the run over its err@k of the ideal run",
            hole_bounds="scan",
            user=kernels_user.normalized_err,
            positive=kernels_user.positive_label,
            label_check=kernels_user.check_max_rel,
            param_defaults={"max_rel": 4.0},
            ideal_is_one=True,
        ),
        Family(
            "RBP",
            "user",
            "pytrec",
            "(1-p) sum_{i<k} p^i g_i; g = [label >= rel], or the label (> 0) when rel is not given",
            ("rbp",),
            at="optional",
            params=frozenset({"p", "rel"}),
            reference="cwl_eval RBPCWLMetric / rbp_eval (Moffat & Zobel 2008); ir_measures RBP(rel=r, p=x)",
            hole_bounds="monotone",
            user=kernels_user.rbp,
            positive=kernels_user.rbp_positive,
            param_defaults={"p": 0.8},
            unit="gain",
            ideal_is_one=False,
        ),
        Family(
            "RBP_residual",
            "user",
            "pytrec",
            "sum_{unjudged i<d} (1-p) p^i + p^d, d = min(k, ranked) = 1 - sum_{judged i<d} (1-p) p^i",
            ("rbp_residual", "rbp_res", "rbpres", "rbp_err"),
            at="optional",
            params=frozenset({"p", "rel"}),
            reference="rbp_eval's residual; cwl_eval -r: upper minus lower bound (unjudged = gain 1)",
            higher_is_better=False,
            missing_value=1.0,  # nothing ranked: every weight is still open
            zero_without_relevant=False,
            user=kernels_user.rbp_residual,
            positive=kernels_user.rbp_positive,
            param_defaults={"p": 0.8},
            ideal_is_one=False,
        ),
        Family(
            "infAP",
            "user",
            "pytrec",
            "sum_{rel j} (1/(j+1) + j/(j+1) * (above judged+pooled)/j * (rel above+e)/(rel+nonrel above+2e)) / R",
            ("infap", "inf_ap"),
            at="none",
            reference="pytrec_eval infAP (trec_eval 9 m_infAP.c; Yilmaz & Aslam 2006): negative label = pooled, not judged",
            user=kernels_user.infap,
            positive=kernels_user.infap_positive,
            ideal_is_one=False,
        ),
        Family(
            "Compat",
            "user",
            "pytrec",
            "RBO_p(run, ideal) / RBO_p(ideal, ideal) to depth max(ranked, ideal); ideal: label > 0, highest first",
            ("compat", "compatibility"),
            at="none",
            params=frozenset({"p"}),
            reference="ir_measures Compat(p=x) (Clarke, Vtyurina & Smucker 2020)",
            user=kernels_user.compat,
            positive=kernels_user.positive_label,
            param_defaults={"p": 0.95},
            ideal_is_one=True,
        ),
        # Diversity (kernels_diversity.py): judgments per subtopic, as ndeval reads TREC Web's diversity qrels.
        Family(
            "alpha_nDCG",
            "diversity",
            "pytrec",
            "sum_{i<k} G_i/log2(i+2) / the same for ndeval's greedy ideal; G_i = sum_{s} [d_i rel to s] (1-alpha)^{c_s(i)}",
            ("alpha_ndcg", "alpha-ndcg"),
            params=frozenset({"alpha", "rel"}),
            reference="pyndeval alpha-nDCG@k (ndeval, TREC Web 2009-14; Clarke et al. 2008); ir_measures alpha_nDCG",
            diversity=kernels_diversity.alpha_ndcg,
            positive=kernels_diversity.at_level,
            param_defaults={"alpha": 0.5, "rel": 1.0},
            ideal_is_one=True,
        ),
        Family(
            "ERR_IA",
            "diversity",
            "pytrec",
            "sum_{i<k} G_i/(i+1) / sum_{i<k} N (1-alpha)^i/(i+1), N = subtopics with a relevant document",
            ("err_ia", "err-ia"),
            params=frozenset({"alpha", "rel"}),
            reference="pyndeval ERR-IA@k (ndeval's ERR-IA; Chapelle et al. 2011); ir_measures ERR_IA",
            diversity=kernels_diversity.err_ia,
            positive=kernels_diversity.at_level,
            param_defaults={"alpha": 0.5, "rel": 1.0},
            ideal_is_one=False,
        ),
        Family(
            "NRBP",
            "diversity",
            "pytrec",
            "(1 - (1-alpha) beta)/N sum_i beta^i G_i over the whole ranking",
            ("nrbp",),
            at="none",
            params=frozenset({"alpha", "beta", "rel"}),
            reference="pyndeval NRBP (Clarke, Kolla & Vechtomova 2009); ir_measures NRBP",
            diversity=kernels_diversity.nrbp,
            positive=kernels_diversity.at_level,
            param_defaults={"alpha": 0.5, "beta": 0.5, "rel": 1.0},
            ideal_is_one=False,
        ),
        Family(
            "StRecall",
            "diversity",
            "pytrec",
            "subtopics with a relevant document in the top k / N",
            ("strecall", "strec", "s_recall", "subtopic_recall"),
            params=frozenset({"rel"}),
            reference="pyndeval strec@k (Zhai, Cohen & Lafferty 2003); ir_measures StRecall",
            diversity=kernels_diversity.subtopic_recall,
            positive=kernels_diversity.at_level,
            param_defaults={"rel": 1.0},
            ideal_is_one=True,
        ),
    )
}  # fmt: skip
