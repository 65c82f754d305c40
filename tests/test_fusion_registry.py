"""The fusion registry (``haystack_irmetrics.fusion.registry``) is what everything else reads: docs/fusion.md's
tables are its entries, ``irmetrics fuse``'s choices and help are its names and ranges, ``joiner_parameters``
maps exactly the methods it gives a join mode, ``optimize_fusion``'s grids are its parameters' grids; and
``irmetrics fuse`` is ``run_fusion``: settings in, a frozen result out, the same bytes written."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from haystack_irmetrics.cli.app import build_parser, main
from haystack_irmetrics.errors import FusionError
from haystack_irmetrics.fusion import (
    METHODS,
    NORMALIZATIONS,
    TRAINED,
    WEIGHTED,
    FusionResult,
    FusionSettings,
    fuse,
    joiner_parameters,
    run_fusion,
)
from haystack_irmetrics.fusion.optimize import default_grid, search_grid
from haystack_irmetrics.fusion.registry import JOIN_MODES, Method, Parameter

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "fusion.md").read_text(encoding="utf-8")
DATA = ROOT / "examples" / "data"


def _parameter(p: Parameter) -> str:
    return f"`{p.name}` {p.range} ({'required' if p.default is None else f'default {p.default:g}'})"


def _grid(method: Method) -> str:
    if method.weighted:
        return "weights 0 to 1 by `step` (0.1), summing to 1"
    if method.tuned is None:
        return ""
    first, last, step = method.tuned.grid
    return f"`{method.tuned.name}` {first:g} to {last:g} by {step:g}"


def _joiner(method: Method) -> str:
    if method.joiner is None:
        return ""
    j = method.joiner
    conditions = [f"{k} = {v:g}" for k, v in j.fixed.items()] + (["norm none"] if j.raw_scores else [])
    return f"`{j.join_mode}`" + (f" ({'; '.join(conditions)})" if conditions else "")


def methods_table() -> list[str]:
    """docs/fusion.md's table of methods, made from the registry."""
    rows = [
        "| method | fused score per document (ranx's) | parameters | reads | ranx's tuning grid | learns from qrels | DocumentJoiner |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in METHODS.values():
        params = (["`weights` one per run, finite, not all 0 (default equal)"] if m.weighted else []) + [
            _parameter(p) for p in m.params
        ]
        learns = m.training.learns if m.training else ""
        reads = "scores" if m.reads_scores else "ranks"
        cells = [f"`{m.name}`", m.summary, "; ".join(params), reads, _grid(m), learns, _joiner(m)]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def norms_table() -> list[str]:
    """docs/fusion.md's table of normalisations, made from the registry."""
    rows = ["| normalisation | per run and query | also spelled |", "|---|---|---|"]
    for n in NORMALIZATIONS.values():
        rows.append(f"| `{n.name}` | {n.summary} | {', '.join(f'`{a}`' for a in n.aliases)} |")
    return rows


def _page_table(header: str) -> list[str]:
    lines = PAGE.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def test_the_pages_table_of_methods_is_the_registry():
    assert _page_table("| method |") == methods_table()


def test_the_pages_table_of_normalisations_is_the_registry():
    assert _page_table("| normalisation |") == norms_table()


def test_the_pages_joiner_table_names_the_methods_the_registry_maps_to_each_mode():
    table = _page_table("| join mode |")[2:]
    assert [re.match(r"\| `(\w+)`", row).group(1) for row in table] == list(JOIN_MODES)
    for row in table:
        mode = re.match(r"\| `(\w+)`", row).group(1)
        reproduces = row.split(" | ")[2]
        mapped = {name for name, m in METHODS.items() if m.joiner and m.joiner.join_mode == mode}
        assert set(re.findall(r"`(\w+)`", reproduces)) & set(METHODS) == mapped, row


def test_the_derived_lists_are_the_registrys_flags():
    assert set(WEIGHTED) == {n for n, m in METHODS.items() if m.weighted}
    assert tuple(n for n, m in METHODS.items() if m.training) == TRAINED
    assert len(METHODS) == 25 and len(NORMALIZATIONS) == 7  # ranx 0.3.21's


@pytest.mark.parametrize("name", list(METHODS))
def test_every_parameter_has_a_default_in_its_range_and_a_grid_inside_it(name):
    method = METHODS[name]
    assert len(method.params) <= 1  # the one a grid tunes
    for p in method.params:
        assert p.default is None or p.inside(p.default)
    grid = default_grid(name, 2)
    inside = search_grid(name, 2, params={p.name: grid[0][p.name] for p in method.params if p.default is None})
    assert 1 <= len(inside) <= len(grid)
    if method.tuned is not None:
        assert all(method.tuned.inside(c[method.tuned.name]) for c in inside)
        assert {c[method.tuned.name] for c in grid} - {c[method.tuned.name] for c in inside} <= {1.0}  # rbc's phi


@pytest.mark.parametrize("name", list(METHODS))
def test_the_joiner_maps_exactly_the_methods_the_registry_gives_a_join_mode(name):
    method = METHODS[name]
    params = {p.name: (60 if p.argument else 1) for p in method.params}
    if method.joiner is None:
        with pytest.raises(FusionError, match="no DocumentJoiner join mode reproduces"):
            joiner_parameters(name, norm=None, params=params)
    else:
        assert joiner_parameters(name, norm=None, params=params)["join_mode"] == method.joiner.join_mode


def test_irmetrics_fuse_offers_the_registrys_choices_and_ranges():
    fuse_parser = build_parser()._subparsers._group_actions[0].choices["fuse"]
    actions = {a.dest: a for a in fuse_parser._actions}
    assert actions["method"].choices == list(METHODS)
    assert list(actions["norm"].choices) == [*NORMALIZATIONS, "none"]
    text = " ".join(fuse_parser.format_help().split())
    for m in METHODS.values():
        for p in m.params:
            assert p.range in text and (p.argument or f"{p.name} ({m.name}: {p.range})" in text)


def _cli_bytes(tmp_path: Path, capsys, args: list[str]) -> tuple[str, str, bytes, bytes]:
    out = tmp_path / "cli"
    out.mkdir()
    assert main(["fuse", *args, "-o", str(out / "f.trec"), "--joiner-yaml", str(out / "j.yaml")]) == 0
    printed = capsys.readouterr()
    return printed.out, printed.err, (out / "f.trec").read_bytes(), (out / "j.yaml").read_bytes()


def test_run_fusion_is_irmetrics_fuse_settings_in_a_frozen_result_out(tmp_path, capsys):
    runs = (str(DATA / "good.trec"), str(DATA / "poor.trec"))
    qrels = str(DATA / "half_qrels.tsv")
    args = [*runs, "--method", "wsum", "--norm", "none", "--optimize", "--qrels", qrels, "--folds", "3", "--json"]
    printed, err, run_bytes, yaml_bytes = _cli_bytes(tmp_path, capsys, args)
    settings = FusionSettings(
        runs,
        method="wsum",
        norm="none",
        qrels=qrels,
        optimize=True,
        folds=3,
        output=str(tmp_path / "f.trec"),
        joiner_yaml=str(tmp_path / "j.yaml"),
    )
    result = run_fusion(settings)
    assert isinstance(result, FusionResult) and capsys.readouterr().out == ""  # the CLI prints, not the job
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.written = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.method = "rrf"  # type: ignore[misc]
    assert (tmp_path / "f.trec").read_bytes() == run_bytes and (tmp_path / "j.yaml").read_bytes() == yaml_bytes
    assert result.written == 12 and result.joiner["join_mode"] == "merge" and result.joiner_refused is None
    assert '"weights": [\n      1.0,\n      0.0\n    ]' in printed and result.tuning.params == {"weights": [1.0, 0.0]}
    assert "wrote" in err


def test_a_fusion_no_join_mode_reproduces_is_reported_after_the_fused_run_is_written(tmp_path, capsys):
    runs = [str(DATA / "good.trec"), str(DATA / "poor.trec")]
    result = run_fusion(
        FusionSettings(tuple(runs), method="mnz", output=str(tmp_path / "f.trec"), joiner_yaml=str(tmp_path / "j.yaml"))
    )
    assert result.written == 12 and result.joiner is None and not (tmp_path / "j.yaml").exists()
    assert "no DocumentJoiner join mode reproduces mnz" in str(result.joiner_refused)
    assert (tmp_path / "f.trec").read_bytes().startswith(b"q01 Q0 ")
    assert fuse(runs, "mnz").data.keys() == {f"q{i:02d}" for i in range(1, 13)}


def test_the_job_names_pythons_keywords_and_the_command_its_flags(tmp_path, capsys):
    runs = (str(DATA / "good.trec"), str(DATA / "poor.trec"))
    with pytest.raises(FusionError, match=r"^nothing to do: give output=, optimize=True or joiner_yaml=$"):
        run_fusion(FusionSettings(runs))
    with pytest.raises(FusionError, match=r"^optimize=True tunes on judgments: give qrels$"):
        run_fusion(FusionSettings(runs, optimize=True))
    with pytest.raises(FusionError, match=r"^rrf_k is RRF's constant; wsum does not take it$"):
        run_fusion(FusionSettings(runs, method="wsum", rrf_k=3, output=str(tmp_path / "x")))
    assert main(["fuse", *runs, "--method", "wsum", "--rrf-k", "3", "-o", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == "irmetrics: error: --rrf-k is RRF's constant; wsum does not take it\n"


def _functions(path: Path) -> list[ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_no_function_of_fusion_takes_more_than_ten_parameters():
    wide = []
    for path in sorted((ROOT / "haystack_irmetrics" / "fusion").glob("*.py")):
        for f in _functions(path):
            a = f.args
            count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
            if count > 10:
                wide.append(f"{path.name}:{f.lineno} {f.name} ({count})")
    assert wide == []


def test_the_fuse_command_parses_calls_the_job_and_prints():
    """No function of cli/fuse.py but its argument declarations (``add_subcommand``) runs over 60 lines."""
    path = ROOT / "haystack_irmetrics" / "cli" / "fuse.py"
    long = [
        f"{f.name} ({f.end_lineno - f.body[0].lineno + 1} lines)"
        for f in _functions(path)
        if f.name != "add_subcommand" and f.end_lineno - f.body[0].lineno + 1 > 60
    ]
    assert long == []
    assert "run_fusion" in path.read_text(encoding="utf-8")
