"""Click models' EM says whether it converged, and converges on the shipped logs under its defaults (issue 39).

SQUAREM-accelerated EM (the default) reaches the maximum plain EM reaches (plain EM equals the per-session
oracle of tests/click_oracle.py step by step: tests/test_clicks_models.py); the log-likelihood that guards its
jumps is the clicks' log-likelihood (the package's own and the oracle's); ``model.json`` and the CLI say how EM
ended; the models without a per-document parameter give no qrels, by one rule.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from haystack_irmetrics.cli import build_parser, main
from haystack_irmetrics.clicks import ClickLog, fit_model, make_model
from haystack_irmetrics.clicks.evaluation import log_likelihood
from haystack_irmetrics.clicks.models import MAX_ITER, TOL
from haystack_irmetrics.errors import ClickModelError, ConvergenceWarning
from tests.click_oracle import _dbn_states
from tests.conftest import ROOT
from tests.test_clicks_models import random_log

EM_MODELS = ("pbm", "ubm", "dbn")
SHIPPED = ("click_log.csv", "interleaved_clicks.csv", "randomized_clicks.csv", "timed_clicks.csv")


def _quiet_fit(name, sessions, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return make_model(name, **options).fit(sessions)


@pytest.mark.parametrize("name", EM_MODELS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_squarem_reaches_the_maximum_of_plain_em_in_fewer_than_half_the_steps(name, seed):
    s, _ = random_log(seed)
    plain = _quiet_fit(name, s, accelerate=False, tol=1e-11, max_iter=500_000)
    fast = make_model(name, tol=1e-11, max_iter=500_000).fit(s)
    assert plain.converged and fast.converged
    assert fast.iterations * 2 < plain.iterations, (fast.iterations, plain.iterations)
    # the same maximum: as likely, and the same click probabilities (the parameters themselves are known only
    # up to the model's own ambiguities, e.g. PBM's scale)
    assert log_likelihood(fast, s) >= log_likelihood(plain, s) - 1e-9
    for a, b in zip(fast.probabilities(s), plain.probabilities(s), strict=True):
        assert np.abs(a - b).max() < 1e-4


@pytest.mark.parametrize("name", EM_MODELS)
def test_the_likelihood_that_guards_squarem_is_the_clicks_log_likelihood(name):
    s, plain = random_log(5)
    for k in (1, 4, 20):
        before = _quiet_fit(name, s, accelerate=False, tol=0, max_iter=k)
        after = _quiet_fit(name, s, accelerate=False, tol=0, max_iter=k + 1)
        # the EM's log-likelihood where step k + 1 started: that of the parameters after k steps
        assert after.em.log_likelihood == pytest.approx(log_likelihood(before, s) * s.n_sessions, rel=1e-10)
        if name == "dbn":  # and the oracle's, summing every hidden state of each session
            queries, docs = s.pair_names()
            alpha = {(q, d): a for q, d, a in zip(queries, docs, before.alpha.tolist(), strict=True)}
            sigma = {(q, d): x for q, d, x in zip(queries, docs, before.sigma.tolist(), strict=True)}
            oracle = 0.0
            for q, session_docs, session_clicks in plain:
                keys = [(q, d) for d in session_docs]
                _, states = _dbn_states(keys, session_clicks, alpha, sigma, before.gamma)
                oracle += math.log(sum(p for p, _, _ in states))
            assert after.em.log_likelihood == pytest.approx(oracle, rel=1e-10)


def test_em_converges_on_every_shipped_click_log_under_the_defaults():
    parser = build_parser()
    fit_args = parser.parse_args(["clicks", "fit", "LOG", "--model", "dbn", "-o", "OUT"])
    assert (fit_args.max_iter, fit_args.tol, fit_args.accelerate) == (MAX_ITER, TOL, True)
    for log in SHIPPED:
        s = ClickLog(str(ROOT / "examples" / "data" / log), columns={"timestamp": None}).sessions()
        for name in EM_MODELS:
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                model = make_model(name).fit(s)
            assert model.converged and model.em.change <= TOL and model.iterations <= MAX_ITER, (log, name)
            if log == "click_log.csv":  # its labels are where a much longer, tighter EM puts them
                tight = make_model(name, tol=1e-10, max_iter=100_000).fit(s)
                assert np.abs(model.labels() - tight.labels()).max() < 2e-3, name


def test_model_json_says_how_em_ended_and_the_cli_warns_once_when_it_stopped_at_max_iter(tmp_path, capsys):
    log = str(ROOT / "examples" / "data" / "click_log.csv")
    assert main(["clicks", "fit", log, "--model", "dbn", "-o", str(tmp_path / "done")]) == 0
    assert "warning" not in capsys.readouterr().err
    em = json.loads((tmp_path / "done" / "model.json").read_text())["em"]
    assert em["converged"] is True and 0 < em["iterations"] <= MAX_ITER and em["change"] <= TOL
    assert (em["tol"], em["max_iter"], em["accelerated"]) == (TOL, MAX_ITER, True)

    assert main(["clicks", "fit", log, "--model", "ubm", "--max-iter", "3", "-o", str(tmp_path / "cut")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("irmetrics: warning: ubm: EM stopped at max_iter=3 steps"), err
    em = json.loads((tmp_path / "cut" / "model.json").read_text())["em"]
    assert em["converged"] is False and em["iterations"] == 3 and em["change"] > TOL

    assert main(["clicks", "fit", log, "--model", "cascade", "-o", str(tmp_path / "closed")]) == 0
    em = json.loads((tmp_path / "closed" / "model.json").read_text())["em"]
    assert em == {"converged": True, "iterations": 0, "change": 0.0, "tol": None, "max_iter": None, "accelerated": None}


@pytest.mark.parametrize("name", ["gctr", "rctr"])
def test_a_model_without_a_per_document_parameter_gives_no_qrels_by_one_rule(name, tmp_path, capsys):
    log = str(ROOT / "examples" / "data" / "click_log.csv")
    out = tmp_path / "out"
    assert main(["clicks", "fit", log, "--model", name, "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"irmetrics: error: {make_model(name).name} has no per-document parameter to derive qrels from "
        "(it would give every (query, document) pair the same label); use ctr or a click model"
    ]
    assert not out.exists()  # refused before any work
    fit = fit_model(name, ClickLog(log).sessions())  # the fit itself (its likelihood) stays available
    assert not fit.model.per_document
    with pytest.raises(ClickModelError, match="no per-document parameter"):
        fit.qrels()
    with pytest.raises(ClickModelError, match="no per-document parameter"):
        fit.write(tmp_path / "py")
    assert all(make_model(m).per_document for m in ("ctr", "pbm", "ubm", "cascade", "dcm", "dbn", "sdbn"))
