"""The click models are one registry (``clicks/registry.py``), as the measures are ``core/families.py``: every
part that picks a model reads it, the docs' table is it, and each entry agrees with its class (parameters,
counts, simulation); that no other module compares a model's name is tests/test_architecture.py's check, shared
with the core's families and fusion's methods. clicks/ imports nothing of feedback/, and each click command
calls one job of clicks/jobs.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from haystack_irmetrics.cli import build_parser
from haystack_irmetrics.clicks import ClickLog
from haystack_irmetrics.clicks.registry import ENTRIES, MODELS, entry, find, models_table
from haystack_irmetrics.clicks.simulate import log_rows, model_with, sessions_from_rankings, simulate
from haystack_irmetrics.errors import ClickModelError
from tests.test_architecture import MODULES, _imports
from tests.test_clicks_models import simulated

ROOT = Path(__file__).resolve().parent.parent
#: The modules that pick click models: the package and its command lines.
CLICK_MODULES = {
    name: path
    for name, path in MODULES.items()
    if name.startswith("haystack_irmetrics.clicks")
    or name in ("haystack_irmetrics.cli.clicks", "haystack_irmetrics.cli.interleave")
}


def test_no_attribute_is_set_on_a_model_from_outside_it():
    """The models are rebuilt through public constructors (``from_counts``, ``from_parameters``): no
    ``type: ignore[attr-defined]`` is left in the click modules (there were 11, in statistics.py and simulate.py)."""
    hits = [
        f"{name}:{i}"
        for name, path in CLICK_MODULES.items()
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "attr-defined" in line
    ]
    assert hits == []


def docs_models_table() -> str:
    page = (ROOT / "docs" / "clicks.md").read_text(encoding="utf-8")
    section = page.split("## Click models", 1)[1]
    return "\n".join(re.findall(r"^\|.*\|$", section.split("\n\n", 2)[1], re.M))


def test_the_docs_table_of_models_is_the_registry():
    assert docs_models_table() == models_table()
    assert [e.name for e in ENTRIES] == ["gctr", "rctr", "ctr", "pbm", "ubm", "cascade", "dcm", "sdbn", "dbn"]


def test_the_command_lines_choices_and_help_are_the_registrys(capsys):
    parser = build_parser()
    clicks = parser._subparsers._group_actions[0].choices["clicks"]
    verbs = clicks._subparsers._group_actions[0].choices
    model = next(a for a in verbs["fit"]._actions if a.dest == "model")
    assert tuple(model.choices) == MODELS
    assert "ctr is dctr" in model.help and "gctr and rctr have no per-document parameter" in model.help
    assert "the attractiveness, or for sdbn/dbn attractiveness x satisfaction, or for ctr" in verbs["fit"].description
    models = next(a for a in verbs["compare"]._actions if a.dest == "models")
    assert models.help == "comma-separated: " + ",".join(MODELS)
    propensities = next(a for a in verbs["measure"]._actions if a.dest == "propensities")
    assert tuple(propensities.choices) == ("pbm", "log") and propensities.default == "pbm"


def test_names_resolve_in_any_case_and_through_aliases():
    assert entry("DCTR") is entry("ctr") is find("Ctr")
    assert find("pyclick") is None and find(3) is None
    with pytest.raises(ClickModelError, match=r"unknown click model 'pyclick'; known: gctr, rctr, ctr, dctr, pbm"):
        entry("pyclick")


def shown(n: int = 400):
    return sessions_from_rankings([("q1", ["d1", "d2", "d3"]), ("q2", ["d3", "d1"])] * n)


TRUTH = {
    "gctr": {"click_probability": 0.3},
    "rctr": {"click_probability": [0.6, 0.3, 0.2]},
    "pbm": {"examination": [1.0, 0.6, 0.3]},
    "ubm": {"examination": np.tril(np.full((3, 3), 0.7))},
    "dcm": {"continuation": [0.5, 0.4, 0.3]},
    "sdbn": {"satisfaction": 0.3},
    "dbn": {"continuation": 0.8, "satisfaction": 0.3},
}


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.name)
def test_each_entry_agrees_with_its_class(e):
    """Its parameters are the ones the model holds and prints; counting then fitting is the fit; every model can
    be simulated from known parameters and refitted on what it drew."""
    s = shown()
    truth = e.with_parameters(s, attractiveness=0.4 if e.per_document else None, **TRUTH.get(e.name, {}))
    assert [p.name for p in e.parameters] == list(e.model.ATTRIBUTES)
    drawn = simulate(truth, s, seed=5)
    assert drawn.clicks.any() and not (drawn.clicks & ~drawn.shown).any()
    fitted = e.make().fit(drawn)
    assert set(fitted.params()) == {p.name for p in e.parameters}
    again = e.model.from_counts(drawn, e.model.counts(drawn))
    assert again.params() == fitted.params()  # the fit reads only its counts
    for p in e.parameters:
        value = np.asarray(fitted.parameter(p.name))
        assert value.ndim == {"pair": 1, "rank": 1, "rank, previous click": 2, "one": 0}[p.over]
        assert ((value >= p.low) & (value <= p.high)).all()


def test_known_parameters_are_checked_by_the_registry():
    s = shown(2)
    with pytest.raises(ClickModelError, match="pbm needs examination probabilities"):
        model_with("pbm", s)
    with pytest.raises(ClickModelError, match=r"pbm has no parameter satisfaction"):
        model_with("pbm", s, examination=[1.0, 0.5, 0.2], satisfaction=0.5)
    with pytest.raises(ClickModelError, match=r"every examination must be in \[0, 1\]"):
        model_with("pbm", s, examination=[1.0, 1.5, 0.2])
    with pytest.raises(ClickModelError, match=r"continuation is one value per one"):
        model_with("dbn", s, continuation=[0.5, 0.5])
    with pytest.raises(ClickModelError, match="dcm needs continuation probabilities"):
        model_with("dcm", s)
    dbn = model_with("dbn", s)  # attractiveness and satisfaction 0.5, gamma 1 when not given
    assert dbn.parameter("continuation") == 1.0 and set(dbn.parameter("satisfaction")) == {0.5}
    with pytest.raises(ClickModelError, match="has no parameter 'examination'"):
        dbn.parameter("examination")


def test_a_statistics_table_of_one_partition_rebuilds_every_model_through_its_public_constructor():
    import pyarrow as pa

    from haystack_irmetrics.clicks.statistics import fit_statistics, session_statistics

    rows = log_rows(simulated("dbn", 300))
    table = pa.Table.from_pylist(rows)
    for e in ENTRIES:
        merged = fit_statistics(e.name, list(session_statistics(table.to_batches(), model=e.name)))
        local = e.make().fit(ClickLog(rows).sessions())
        assert type(merged) is e.model and merged.params().keys() == local.params().keys()


# -- the layering of clicks/ -------------------------------------------------------------------------


def test_clicks_imports_nothing_of_feedback():
    """A click log is read by io/'s one log reader given the click roles; feedback/ reads click-derived qrels
    (``feedback.JudgedLog``), never the other way round (at module level or inside a function)."""
    found = [
        f"{name} line {line} imports {target}"
        for name in CLICK_MODULES
        if name.startswith("haystack_irmetrics.clicks")
        for target, line in _imports(name)
        if target.startswith("haystack_irmetrics.feedback")
    ]
    assert found == []


JOBS = {"fit_log", "compare_log", "estimate_log", "measure_log", "windows_log", "interleave_log"}


@pytest.mark.parametrize("module", ["haystack_irmetrics.cli.clicks", "haystack_irmetrics.cli.interleave"])
def test_each_click_command_calls_one_job(module):
    """Every verb of ``cli/clicks.py`` and ``cli/interleave.py`` calls one job of ``clicks/jobs.py`` (the bodies'
    length and the parameters' count are tests/test_architecture.py's, for every command and function)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    runs = [
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and (n.name == "run" or n.name.startswith("run_"))
    ]
    assert runs
    for f in runs:
        called = {n.func.id for n in ast.walk(f) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert len(called & JOBS) == 1, f.name


def test_statistics_merge_to_the_same_parameters_on_every_run():
    """The merged sums are taken in the order the keys first come, not in a hash order of the day."""
    import pyarrow as pa

    from haystack_irmetrics.clicks.statistics import fit_statistics, session_statistics

    rows = log_rows(simulated("dbn", 600))
    for name in ("pbm", "ubm", "dbn"):
        stats = list(session_statistics(pa.Table.from_pylist(rows).to_batches(), model=name))
        fits = [fit_statistics(name, stats, max_iter=30).params() for _ in range(4)]
        assert all(f == fits[0] for f in fits[1:]), name
