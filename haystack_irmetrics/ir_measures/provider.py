"""The ``irmetrics`` provider of ir_measures: :class:`IRMetricsProvider` and its :class:`IRMetricsEvaluator`.

An evaluator reads the qrels once (:mod:`.frames`), and each run once: every measure asked is computed by one
:class:`~haystack_irmetrics.core.Evaluation` per ranking order (trec_eval's, or the order its reference
provider ranks in) and relevance threshold, which share the prepared run. It yields exactly the metrics the
reference provider yields: the value of every query the run answers and the qrels judge, and the measure's
default (0) for every other qrels query the reference counts. ``calc_aggregate`` feeds the same values to the
measures' own aggregators, without a ``Metric`` per value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import repeat
from typing import Any, Literal

import numpy as np
from ir_measures import Metric
from ir_measures.providers.base import Evaluator, Provider

from ..checks import choice
from ..core import Evaluation
from ..core.curves import gain_curves
from ..core.inputs import Qrels, RankedRun
from ..core.presets import Preset, resolve_preset
from ..errors import InvalidPolicyError, UnknownMeasureError
from .frames import Judgments, judged_only, ranked_lists, read_qrels, read_run
from .plans import Plan, plan

Ties = Literal["reference", "trec", "stable"]
TIES = ("reference", "trec", "stable")
_EMPTY = np.zeros(0)


@dataclass(frozen=True)
class Policy:
    """The provider's policy. ``ties``: ``"reference"`` ranks each measure as its reference provider does
    (trec_eval's order for pytrec_eval's measures); ``"trec"``: trec_eval's order (float32 scores, ties by doc
    id descending) for every measure; ``"stable"``: BEIR's (float64 scores, ties in the run's order).
    ``ignore_identical_ids``: a document whose id is the query's id is removed first (BEIR's rule)."""

    ties: Ties = "reference"
    ignore_identical_ids: bool = False

    def __post_init__(self) -> None:
        choice(self.ties, "ties", TIES, error=InvalidPolicyError)
        if not isinstance(self.ignore_identical_ids, bool):
            raise InvalidPolicyError(f"ignore_identical_ids must be True or False, got {self.ignore_identical_ids!r}")

    def settle(self, p: Plan) -> Plan:
        """The plan under this policy: its order replaced unless the policy keeps the reference's."""
        return p if self.ties == "reference" else replace(p, order=self.ties)


class IRMetricsEvaluator(Evaluator):
    """Scores runs against one set of qrels for the measures given (made by :meth:`IRMetricsProvider.evaluator`)."""

    def __init__(self, measures: Iterable[Any], qrels: Any, policy: Policy) -> None:
        measures = list(measures)
        plans = {m: plan(m) for m in measures}
        unsupported = [str(m) for m, p in plans.items() if p is None]
        if unsupported:
            raise UnknownMeasureError(
                f"the irmetrics provider does not compute {unsupported} as ir_measures' reference provider does; "
                "ask ir_measures (ir_measures.calc_aggregate), which falls through to the provider that does"
            )
        self.plans: dict[Any, Plan] = {m: policy.settle(p) for m, p in plans.items()}  # type: ignore[arg-type]
        self.judgments: Judgments = read_qrels(qrels)
        self._judged = set(self.judgments.judged)
        self._qrels = Qrels.from_dict(self.judgments.data) if self._judged else None
        self._preset = resolve_preset("trec", ignore_identical_ids=policy.ignore_identical_ids)
        super().__init__(measures, set(self.judgments.all_qids))

    def values(self, run: Any) -> dict[Any, tuple[list[str], np.ndarray]]:
        """``{measure: (query ids, values)}``: the queries the run answers and the qrels judge, in run order."""
        data = read_run(run)
        if self._qrels is None or self._judged.isdisjoint(data):
            return {m: ([], _EMPTY) for m in self.measures}
        groups: dict[tuple, list[Any]] = {}
        for m, p in self.plans.items():
            groups.setdefault((p.judged_only, p.order, p.threshold), []).append(m)
        runs: dict[tuple[bool, str], Evaluation] = {}
        out: dict[Any, tuple[list[str], np.ndarray]] = {}
        for (only, order, threshold), ms in groups.items():
            if (only, order) not in runs:
                runs[only, order] = self._evaluation(data, only, order)
            ev = runs[only, order].with_preset(relevance_threshold=threshold)
            out.update(self._read(ev, ms, data))
        return out

    def _evaluation(self, data: dict, only: bool, order: str) -> Evaluation:
        preset: Preset = self._preset
        if order == "stable":
            preset = resolve_preset(preset, ties="stable")
        if only:
            data = judged_only(data, self.judgments.data)
        if order in ("id_asc", "id_desc"):
            Evaluation(self._qrels, data, preset)  # the run checked as the core checks it (typed errors)
            qids, ids, lengths = ranked_lists(data, ascending_ids=order == "id_asc")
            return Evaluation(self._qrels, RankedRun(qids, ids, lengths), preset)
        return Evaluation(self._qrels, data, preset)

    def _read(self, ev: Evaluation, measures: list[Any], data: dict) -> dict[Any, tuple[list[str], np.ndarray]]:
        wanted = list(dict.fromkeys(c for m in measures for c in self.plans[m].needs if c is not None))
        parts = ev.result(wanted, None).per_query.parts if wanted else {}
        out = {}
        for m in measures:
            p = self.plans[m]
            if p.derived is None:
                names, values, _, _ = parts[p.core.name]  # type: ignore[union-attr]
                out[m] = (names, values)
            elif p.derived == "NCG":
                out[m] = _ncg(ev, p.cutoff)  # type: ignore[arg-type]
            else:
                names = parts[p.needs[0].name][0]
                out[m] = (names, _derived(p, [parts[c.name][1] for c in p.needs]))
        return out

    def _missing(self, measure: Any, answered: list[str]) -> list[str]:
        """The qrels queries the reference counts at the default value: those with no value of ours."""
        pool = self.judgments.all_qids if self.plans[measure].all_keys else self.judgments.judged
        seen = set(answered)
        return sorted(q for q in pool if q not in seen)

    def iter_calc(self, run: Any) -> Iterator[Metric]:
        """Per-query metrics, as the reference provider yields them (its default for the rest of the qrels)."""
        values = self.values(run)
        for m in self.measures:
            names, vals = values[m]
            yield from map(Metric, names, repeat(m), vals.tolist())
            yield from (Metric(q, m, m.DEFAULT) for q in self._missing(m, names))

    def _iter_calc(self, run: Any) -> Iterator[Metric]:
        return self.iter_calc(run)

    def calc_aggregate(self, run: Any) -> dict[Any, float]:
        """Each measure's aggregate from its own aggregator (``MeanAgg``, ``SumAgg``), as ir_measures makes it."""
        values, out = self.values(run), {}
        for m in self.measures:
            names, vals = values[m]
            agg = m.aggregator()
            for v in vals.tolist():
                agg.add(v)
            for _ in self._missing(m, names):
                agg.add(m.DEFAULT)
            out[m] = agg.result()
        return out


def _derived(p: Plan, columns: list[np.ndarray]) -> np.ndarray:
    """trec_eval's set measures from the core's counts (``m_set_P.c``, ``m_set_recall.c``, ...), and judged's
    Judged@k from the core's: the same double divisions, 0 where trec_eval leaves the value at 0."""
    if p.derived == "Judged":
        share, retrieved = columns
        k = p.cutoff or (2**31 - 1)
        count = np.rint(share * k)
        depth = np.minimum(retrieved, float(k))
        return np.divide(count, depth, out=np.zeros_like(count), where=depth > 0)
    ret, rel_ret, rel = columns
    out = np.zeros_like(ret)
    if p.derived == "SetP":
        np.divide(rel_ret, ret, out=out, where=ret > 0)
    elif p.derived == "SetRelP":
        low = np.minimum(ret, rel)
        np.divide(rel_ret, low, out=out, where=low > 0)
    elif p.derived == "SetR":
        np.divide(rel_ret, rel, out=out, where=rel > 0)
    else:  # SetAP: num_rel_ret^2 / (num_ret * num_rel)
        both = (ret > 0) & (rel > 0)
        np.divide(rel_ret * rel_ret, ret * rel, out=out, where=both)
    return out


def _ncg(ev: Evaluation, k: int) -> tuple[list[str], np.ndarray]:
    """NCG@k: the cumulative gain of the top k over the ideal's (0 where the ideal gains nothing)."""
    curves = gain_curves(ev.qrels, ev.run, depth=k, preset=ev.preset)
    cg, icg = curves.cg[:, k - 1], curves.icg[:, k - 1]
    return curves.qids, np.divide(cg, icg, out=np.zeros_like(cg), where=icg > 0)


class IRMetricsProvider(Provider):
    """haystack_irmetrics' core as an ir_measures provider, named ``irmetrics``.

    It computes, per query and aggregated, what ir_measures' reference provider of each measure gives (to
    1e-12; gdeval's to its five printed decimals) and declines every measure or parameter where it would not,
    so ir_measures asks the next provider. ``ties`` and ``ignore_identical_ids``: see :class:`Policy`; a
    provider made with other values than the defaults is not registered (``IRMetricsProvider(ties="stable")``
    is called directly: ``.calc_aggregate(measures, qrels, run)``).
    """

    NAME = "irmetrics"

    def __init__(self, ties: Ties = "reference", ignore_identical_ids: bool = False) -> None:
        super().__init__()
        self.policy = Policy(ties, ignore_identical_ids)

    def supports(self, measure: Any) -> bool:
        """Whether the core gives this measure, with these parameters, as its reference provider does."""
        return plan(measure) is not None

    def _evaluator(self, measures: Iterable[Any], qrels: Any) -> IRMetricsEvaluator:
        return IRMetricsEvaluator(measures, qrels, self.policy)

    def install_instructions(self) -> str:
        return "pip install 'haystack-irmetrics[ir-measures]'"

    def __repr__(self) -> str:
        return f"IRMetricsProvider(ties={self.policy.ties!r}, ignore_identical_ids={self.policy.ignore_identical_ids})"
