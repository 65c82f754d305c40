"""``irmetrics fuse``: the written run is ``fusion.fuse``'s (itself checked against ranx in test_fusion.py),
the tuning reports ranx's grid choice and the paired test, the joiner YAML loads into Haystack, and bad
requests exit 2 with one line saying what."""

from __future__ import annotations

import json

import pytest

from haystack_irmetrics.cli.app import main
from haystack_irmetrics.fusion import FusionSearch, fuse, optimize_fusion
from haystack_irmetrics.fusion.optimize import default_grid, weight_grid
from haystack_irmetrics.io.trec import read_run, write_trec_run

A = {f"q{i}": {"good": 1.0 + i, "bad": 2.0 + i, "other": 0.5, f"x{i}": 0.25} for i in range(8)}
B = {f"q{i}": {"good": 3.0, "bad": 0.0, "other": 1.0} for i in range(8)}
QRELS = {f"q{i}": {"good": 1, "other": int(i % 3 == 0)} for i in range(8)}


@pytest.fixture
def files(tmp_path):
    write_trec_run(A, tmp_path / "a.trec")
    write_trec_run(B, tmp_path / "b.trec")
    with (tmp_path / "qrels.txt").open("w") as f:
        for q, docs in QRELS.items():
            for d, label in docs.items():
                f.write(f"{q} 0 {d} {label}\n")
    return tmp_path


def test_the_written_run_is_fuse_of_the_files(files, capsys):
    out = files / "fused.trec"
    code = main(
        [
            "fuse",
            str(files / "a.trec"),
            str(files / "b.trec"),
            "--method",
            "wsum",
            "--weights",
            "0.3,0.7",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    expected = fuse([files / "a.trec", files / "b.trec"], "wsum", weights=[0.3, 0.7]).data
    got = read_run(out).data
    assert got.keys() == expected.keys()
    for q in expected:
        assert got[q] == pytest.approx(expected[q], abs=1e-12)
    assert "wrote" in capsys.readouterr().err


def test_parameters_reach_the_method(files):
    out = files / "fused.trec"
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "-o", str(out), "--norm", "none"]
    assert main([*args, "--method", "gmnz", "--param", "gamma=0.5"]) == 0
    expected = fuse([A, B], "gmnz", norm=None, params={"gamma": 0.5}).data
    assert read_run(out).data["q1"] == pytest.approx(expected["q1"])
    assert main([*args, "--method", "rrf", "--rrf-k", "10", "--depth", "2"]) == 0
    assert read_run(out).data["q1"] == pytest.approx(fuse([A, B], "rrf", rrf_k=10, depth=2).data["q1"])


def test_a_trained_method_learns_from_the_qrels(files):
    out = files / "fused.trec"
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "-o", str(out), "--method", "posfuse"]
    assert main([*args, "--qrels", str(files / "qrels.txt")]) == 0
    assert read_run(out).data["q2"] == pytest.approx(fuse([A, B], "posfuse", qrels=QRELS).data["q2"])


def test_optimize_prints_the_choice_held_out_score_and_tests_as_json(files, capsys):
    code = main(
        [
            "fuse",
            str(files / "a.trec"),
            str(files / "b.trec"),
            "--method",
            "wsum",
            "--optimize",
            "--qrels",
            str(files / "qrels.txt"),
            "--metric",
            "P@1",
            "--folds",
            "4",
            "--json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    tuned = optimize_fusion(
        [A, B], QRELS, FusionSearch(metric="P@1", folds=4), method="wsum", names=["a.trec", "b.trec"]
    )
    assert report["params"] == tuned.params == {"weights": [0.6, 0.4]}
    assert report["held_out"] == tuned.held_out
    assert report["inputs"] == {"a": 0.0, "b": 1.0}  # a file less its extension (docs/cli.md)
    assert set(report["comparisons"]) == {"a", "b"}
    assert report["comparisons"]["a"]["delta"] == pytest.approx(tuned.held_out - 0.0)
    assert report["configurations"] == len(weight_grid(2)) == 11


def test_optimize_writes_the_tuned_run_and_its_joiner(files, capsys):
    pytest.importorskip("haystack")
    from haystack.components.joiners import DocumentJoiner

    out, yaml_path = files / "fused.trec", files / "joiner.yaml"
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "--method", "wsum", "--norm", "none"]
    tune = ["--optimize", "--qrels", str(files / "qrels.txt"), "--metric", "P@1", "--folds", "2"]
    assert main([*args, *tune, "-o", str(out), "--joiner-yaml", str(yaml_path)]) == 0
    assert "held-out" in capsys.readouterr().out
    import yaml

    component = yaml.safe_load(yaml_path.read_text())
    joiner = DocumentJoiner.from_dict(component)
    tuned = optimize_fusion([A, B], QRELS, FusionSearch(metric="P@1", folds=2), method="wsum", norm=None)
    total = sum(tuned.params["weights"])
    assert joiner.weights == pytest.approx([w / total for w in tuned.params["weights"]])
    assert component["init_parameters"] == tuned.joiner_parameters()
    assert read_run(out).data["q0"] == pytest.approx(
        fuse([A, B], "wsum", norm=None, weights=tuned.params["weights"]).data["q0"]
    )


def test_a_grid_on_the_command_line_is_the_parameters_values(files, capsys):
    args = ["fuse", str(files / "a.trec"), str(files / "b.trec"), "--method", "rrf", "--optimize"]
    assert main([*args, "--qrels", str(files / "qrels.txt"), "--grid", "20,60", "--folds", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["configurations"] == 2
    assert report["params"]["k"] in (20, 60)


def test_ranx_grids_are_the_defaults():
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    for n in (2, 3, 4):
        for step in (0.1, 0.05, 0.2):
            assert weight_grid(n, step) == get_trial_configs(get_possible_weights(step), n)
    assert [c["k"] for c in default_grid("rrf", 2)] == list(range(10, 101, 10))
    assert len(default_grid("rbc", 2)) == 100 and default_grid("rbc", 2)[-1] == {"phi": 1.0}
    assert [c["w"] for c in default_grid("slidefuse", 2)] == list(range(1, 101))


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["-o", "X", "--method", "posfuse"], "pass qrels"),
        (["-o", "X", "--method", "wsum", "--weights", "1,2,3"], "3 weights for 2 runs"),
        (["--optimize", "-o", "X"], "give --qrels"),
        ([], "nothing to do"),
        (["-o", "X", "--method", "wsum", "--rrf-k", "5"], "rrf-k"),
        (["--joiner-yaml", "J", "--method", "rrf", "--rrf-k", "5"], "fixes RRF's k at 60"),
        (["--joiner-yaml", "J", "--method", "wsum"], "raw scores"),
    ],
)
def test_bad_requests_exit_2_saying_what(files, capsys, extra, says):
    extra = [str(files / e) if e in ("X", "J") else e for e in extra]
    assert main(["fuse", str(files / "a.trec"), str(files / "b.trec"), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("irmetrics: error:") and says in err


def test_one_run_is_refused(files, capsys):
    assert main(["fuse", str(files / "a.trec"), "-o", str(files / "x")]) == 2
    assert "two runs" in capsys.readouterr().err


def test_the_held_out_score_is_each_folds_queries_scored_by_the_choice_made_without_them():
    """The cross-validation redone by brute force: per fold, every configuration fused and scored on the
    other folds' queries, the best (a tie: the later) scoring the fold's queries."""
    import numpy as np

    from haystack_irmetrics import evaluate

    tuned = optimize_fusion([A, B], QRELS, FusionSearch(metric="P@1", folds=4, seed=3), method="wsum")
    queries = sorted(QRELS)
    parts = np.array_split(np.random.default_rng(3).permutation(len(queries)), 4)
    per_config = []
    for weights in weight_grid(2):
        values = evaluate(QRELS, fuse([A, B], "wsum", weights=weights).data, None, measures=["P@1"]).per_query["P@1"]
        per_config.append((list(weights), values))
    held = {}
    for part in parts:
        test = {queries[i] for i in part}
        means = [np.mean([v[q] for q in queries if q not in test]) for _, v in per_config]
        best = max(i for i, m in enumerate(means) if m == max(means))
        held.update({q: per_config[best][1][q] for q in test})
    assert tuned.held_out == pytest.approx(np.mean(list(held.values())), abs=1e-12)
    assert tuned.per_query["fused"] == pytest.approx(held)


@pytest.mark.parametrize(
    ("method", "metric", "ranx_metric"), [("rrf", "P@10", "precision@10"), ("wsum", "NDCG@10", "ndcg@10")]
)
def test_the_choice_on_all_queries_is_ranx_optimize_fusions_on_real_runs(method, metric, ranx_metric):
    """ranx scores each configuration with its own measures (its tie order inside the fused run differs
    from trec_eval's, so means can differ in the 3rd decimal); the configuration chosen is the same."""
    import warnings

    import ranx

    from .test_fusion import _real_runs

    runs, qrels = _real_runs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ranx.optimize_fusion(
            ranx.Qrels(qrels),
            [ranx.Run(r) for r in runs],
            norm="min-max",
            method=method,
            metric=ranx_metric,
            show_progress=False,
        )
    tuned = optimize_fusion(runs, qrels, FusionSearch(metric=metric, folds=2, preset="trec"), method=method)
    if method == "wsum":
        assert tuned.params["weights"] == [float(w) for w in expected["weights"]]
    else:
        assert tuned.params == expected
