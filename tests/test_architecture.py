"""The layout docs/architecture.md describes, checked against the page itself: every package import goes down
the picture under "The layers" (read from the page, not copied), the page names every module by its path, and
each row of "Where a change goes" names files that exist and a test; no import cycle between the package's
modules (at module level or inside functions), no module over 700 lines, a core that imports numpy and the
standard library only, an interface layer (``cli``) that nothing else imports, every exception in errors.py, no
measure family, fusion method or click model compared by name outside its registry, small signatures and a thin
CLI."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "haystack_irmetrics"
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _compiled(name: str) -> bool:
    """A compiled extension module of the package (its C source beside it), e.g. ``core._rank``."""
    folder = PACKAGE.parent.joinpath(*name.split(".")[:-1])
    return (folder / f"{name.rpartition('.')[2]}.c").is_file()


def _imports(name: str) -> list[tuple[str, int]]:
    """``(module imported, line)`` for every import statement of the module, anywhere in it. ``from P
    import x`` imports ``P.x`` where that is a module of the package, else ``P`` itself."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    base = name if _is_package(name) else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                target = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in MODULES or _compiled(sub) else target, node.lineno))
    return found


def _graph() -> dict[str, set[str]]:
    return {m: {t for t, _ in _imports(m) if t in MODULES and t != m} for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:  # kept raised, it let later tests recurse 10,000 deep (a 5,000-level YAML took 10 s to refuse)
        sys.setrecursionlimit(limit)
    return out


def test_no_import_cycle_between_the_packages_modules():
    graph = _graph()
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    # the checker itself: a cycle two modules deep is one component, an acyclic chain none
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    source = "def f():\n    from .b import x\n"
    tree = ast.parse(source)
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))  # ast.walk reaches function bodies


ROOT = PACKAGE.parent
PYTHON_FILES = sorted(
    p.relative_to(ROOT).as_posix()
    for folder in ("haystack_irmetrics", "tests", "benchmarks", "scripts", "examples")
    for p in (ROOT / folder).rglob("*.py")
)


@pytest.mark.parametrize("path", PYTHON_FILES)
def test_no_python_module_of_the_project_is_over_700_lines(path):
    lines = (ROOT / path).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{path} has {lines} lines"


CORE_ALLOWED = {"numpy", "haystack_irmetrics.errors", "haystack_irmetrics.checks"}


def test_the_core_imports_numpy_and_the_standard_library_only():
    stdlib = sys.stdlib_module_names
    for name in MODULES:
        if not name.startswith("haystack_irmetrics.core"):
            continue
        for target, line in _imports(name):
            top = target.split(".")[0]
            ok = (
                target.startswith("haystack_irmetrics.core")
                or target in CORE_ALLOWED
                or top in CORE_ALLOWED
                or top in stdlib
                or target == "__future__"
            )
            assert ok, f"{name} line {line} imports {target}"


def test_nothing_but_the_interface_layer_imports_it():
    for name in MODULES:
        if name == "haystack_irmetrics.cli" or name.startswith("haystack_irmetrics.cli."):
            continue
        for target, line in _imports(name):
            interface = target == "haystack_irmetrics.cli" or target.startswith("haystack_irmetrics.cli.")
            assert not interface, f"{name} line {line} imports {target}"


def test_plots_and_stats_stay_below_the_integrations():
    # drawing and statistics take arrays and results: no Haystack, BEIR runner, feedback or CLI code
    below = ("haystack_irmetrics.plots", "haystack_irmetrics.stats", "haystack_irmetrics.io")
    above = ("haystack_irmetrics.components", "haystack_irmetrics.beir", "haystack_irmetrics.feedback")
    for name in MODULES:
        if name.startswith(below):
            for target, line in _imports(name):
                bad = target.startswith(above) or target.split(".")[0] == "haystack"
                assert not bad, f"{name} line {line} imports {target}"


def _exception_base(base: ast.expr) -> bool:
    """Whether a class base names an exception or warning class: a built-in one (``Exception``,
    ``RuntimeError``, ...) or any name ending in Error, Warning or Exception (``errors.JudgeError``)."""
    import builtins

    name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
    found = getattr(builtins, name, None)
    return name.endswith(("Error", "Warning", "Exception")) or (
        isinstance(found, type) and issubclass(found, BaseException)
    )


def test_every_exception_and_warning_class_of_the_package_is_defined_in_errors_py():
    """Every error a user can catch, every warning class and every internal signal (a bare ``Exception``
    subclass a module raises and catches itself: ``errors.py`` says which those are)."""
    elsewhere = []
    for name, path in MODULES.items():
        if name == "haystack_irmetrics.errors":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(_exception_base(b) for b in node.bases):
                elsewhere.append(f"{name}:{node.lineno} {node.name}")
    assert elsewhere == []
    # the checker itself: a private signal subclassing Exception is found, a plain class is not
    tree = ast.parse("class _Failed(Exception): pass\nclass Plain: pass\nclass S(errors.JudgeError): pass\n")
    found = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and any(map(_exception_base, n.bases))]
    assert found == ["_Failed", "S"]


# ---- names picked through one registry (issue 41.1) -------------------------------------------------------


def _names_in(node: ast.AST, names: set[str]) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & names
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_names_in(e, names) for e in node.elts))
    return set()


def dispatches_by_name(
    tree: ast.AST, names: set[str], compared_only: set[str] = frozenset()
) -> list[tuple[int, list[str]]]:
    """``(line, names)`` of every comparison (``x == "rrf"``, ``x in ("a", "b")``), collection (``("ctr", "pbm")``),
    dict key (``{"dbn": ...}``) or subscript (``PARAMETERS["gmnz"]``) naming one of ``names``; ``compared_only``
    are names of another vocabulary too (the core's kernel kind ``bpref``, keyed in its table of kinds), found in
    comparisons alone. A name as a plain value or a default (``method="rrf"``, a class's ``name = "pbm"``) chooses
    one, and is no dispatch."""
    found = []
    everything = names | compared_only
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            hit = set().union(*(_names_in(x, everything) for x in (node.left, *node.comparators)))
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            hit = _names_in(node, names)
        elif isinstance(node, ast.Dict):
            hit = set().union(*(_names_in(k, names) for k in node.keys if k is not None))
        elif isinstance(node, ast.Subscript):
            hit = _names_in(node.slice, names)
        else:
            continue
        if hit:
            found.append((node.lineno, sorted(hit)))
    return found


def _measure_families() -> tuple[set[str], set[str]]:
    """The core's family names; those that are a kernel kind's name too (``bpref``) are checked in comparisons."""
    from haystack_irmetrics.core.families import FAMILIES

    kinds = {f.kernel for f in FAMILIES.values()}
    return set(FAMILIES) - kinds, set(FAMILIES) & kinds


def _fusion_names() -> tuple[set[str], set[str]]:
    from haystack_irmetrics.fusion.registry import METHODS, NO_NORMALIZATION, NORMALIZATIONS

    aliases = {a for n in NORMALIZATIONS.values() for a in n.aliases}
    return {*METHODS, *NORMALIZATIONS, *aliases, NO_NORMALIZATION}, set()


def _pooling_strategies() -> tuple[set[str], set[str]]:
    from haystack_irmetrics.pooling.registry import STRATEGIES

    return set(STRATEGIES), set()


def _click_models() -> tuple[set[str], set[str]]:
    from haystack_irmetrics.clicks.registry import MODELS

    return set(MODELS), set()


#: ``(package, its registry, the names read from it, the command lines that pick them too)``: what a measure
#: family, a fusion method or normalisation, or a click model is (its kernel, score function, parameters, fit,
#: statistics) is its registry entry, and no other module of the package or of its commands compares its name.
REGISTRIES = [
    ("core", "core.families", _measure_families, ()),
    ("fusion", "fusion.registry", _fusion_names, ("cli.fuse",)),
    ("clicks", "clicks.registry", _click_models, ("cli.clicks", "cli.interleave")),
    ("pooling", "pooling.registry", _pooling_strategies, ("cli.pool",)),
]


@pytest.mark.parametrize(("package", "registry", "names", "commands"), REGISTRIES, ids=[r[0] for r in REGISTRIES])
def test_a_package_dispatches_through_its_registry_not_names(package, registry, names, commands):
    checked, compared = names()
    ours = [f"haystack_irmetrics.{m}" for m in commands]
    found = [
        f"{name}:{line} {hit}"
        for name, path in MODULES.items()
        if (name.startswith(f"haystack_irmetrics.{package}") or name in ours)
        and name != f"haystack_irmetrics.{registry}"
        for line, hit in dispatches_by_name(ast.parse(path.read_text(encoding="utf-8")), checked, compared)
    ]
    assert checked and found == []


def test_the_dispatch_check_finds_a_comparison_a_collection_a_dict_key_and_a_subscript():
    source = (
        'if model == "ubm": pass\nx = ("gctr", "rctr")\ny = {"dbn": 1}\nz = table["sdbn"]\nname = "pbm"\n'
        'def f(method="pbm"): pass\nkinds = {"bpref": 1}\nif kind in ("bpref",): pass\n'
    )
    found = dispatches_by_name(ast.parse(source), {"ubm", "gctr", "rctr", "dbn", "sdbn", "pbm"}, {"bpref"})
    assert found == [(1, ["ubm"]), (2, ["gctr", "rctr"]), (3, ["dbn"]), (4, ["sdbn"]), (8, ["bpref"])]


def _paragraphs(page: str) -> dict[str, str]:
    """``{package: its paragraph}`` of "The packages", each opening with its name in bold (**`judges/`**)."""
    section = page.split("\n## The packages\n", 1)[1].split("\n## ", 1)[0]
    found = (re.match(r"\*\*`([\w.]+?)/?`\*\*", block) for block in re.split(r"\n\s*\n", section.strip()))
    return {m.group(1): m.string for m in found if m}


def _docstring(package: str) -> str:
    path = PACKAGE / package / "__init__.py"
    return (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "") if path.is_file() else ""


def _unnamed(page: str, paths: list[str], docstring=_docstring) -> list[str]:
    """The modules (paths in the package: ``judges/grades.py``) the page does not name by their path: the path
    anywhere (```judges/grades.py```), or the file's name (```grades.py```) in its own package's paragraph or in
    the ``__init__`` docstring that paragraph links (``api.md#haystack_irmetrics.judges``), where no other
    module of that package has the name. A name in another package's paragraph is another module's."""
    spans = set(re.findall(r"`([^`\n]+)`", page))
    paragraphs = _paragraphs(page)
    unnamed = []
    for path in paths:
        package, _, name = path.partition("/")
        name = name.rpartition("/")[2]
        if path in spans or not name:  # a module of the package's top (errors.py) is named by its path alone
            unnamed += [] if path in spans else [path]
            continue
        texts = [paragraphs.get(package, "")]
        if f"(api.md#haystack_irmetrics.{package})" in texts[0]:
            texts.append(docstring(package))
        alone = [p for p in paths if p.partition("/")[0] == package and p.rpartition("/")[2] == name] == [path]
        if not (alone and any(f"`{name}`" in text for text in texts)):
            unnamed.append(path)
    return unnamed


def test_the_architecture_page_names_every_module_of_the_package_by_its_path():
    paths = [p.relative_to(PACKAGE).as_posix() for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__init__.py"]
    assert _unnamed(PAGE.read_text(encoding="utf-8"), paths) == [], "docs/architecture.md does not say what they do"


def test_a_module_is_named_by_its_path_or_in_its_own_packages_paragraph():
    page = (
        "# P\n\n## The packages\n\n**`judges/`** grades (`grades.py`), the job (`runs.py`), the server (`server.py`);"
        " [its docstring](api.md#haystack_irmetrics.judges).\n\n**`assess/`** the store (`store.py`) of `cache.py`"
        " and `io/logs.py`.\n\n**`beir/`** the runs (`runs.py`).\n\n**`errors.py`** every error.\n"
    )
    paths = ["judges/grades.py", "judges/runs.py", "judges/server.py", "assess/server.py", "judges/cache.py"]
    paths += ["assess/store.py", "assess/cache.py", "io/logs.py", "errors.py", "_extras.py", "assess/x/runs.py"]
    paths += ["beir/stores/runs.py", "beir/runs.py", "judges/pool.py"]
    docstrings = {"judges": ":mod:`.pool` and ``pool.py``: pairs"}
    # assess/server.py: named in judges' paragraph only; judges/cache.py: in assess's; beir/stores/runs.py and
    # beir/runs.py: one name for two modules of beir/; judges/pool.py: named in the docstring the paragraph links
    assert _unnamed(page, paths, docstrings.get) == [
        "assess/server.py",
        "judges/cache.py",
        "_extras.py",
        "assess/x/runs.py",
        "beir/stores/runs.py",
        "beir/runs.py",
    ]


PAGE = ROOT / "docs" / "architecture.md"


def _picture(page: str) -> list[tuple[str, ...]]:
    """What each line of the picture under "The layers" draws, top to bottom: its packages (``beir/ ·
    feedback/``, ``errors.py``, ``haystack_irmetrics/__init__.py``) after its layer's name, if it has one, and
    before its words, each two spaces or more apart. A line that begins with words continues the one above."""
    block = page.split("\n## The layers\n", 1)[1].split("```text\n", 1)[1].split("\n```", 1)[0]
    lines = []
    for line in block.splitlines():
        fields = re.split(r"\s{2,}", line.strip())
        if len(fields) > 1 and re.fullmatch(r"[a-z]+", fields[0]):
            fields = fields[1:]  # the layer's name: interface, integrations, services, core, base
        drawn = [token.strip() for token in fields[0].split("·")]
        if all(re.fullmatch(r"[\w/]+(/|\.py)", token) for token in drawn):
            lines.append(tuple(drawn))
    return lines


def _drawn_path(token: str) -> Path:
    return ROOT / token if token.startswith("haystack_irmetrics/") else PACKAGE / token


def _drawn_part(token: str) -> str:
    """The part of the package a token of the picture draws: ``beir/`` beir, ``errors.py`` errors,
    ``haystack_irmetrics/__init__.py`` __init__ (the names ``import haystack_irmetrics`` gives)."""
    return Path(token).stem if token.endswith(".py") else token.rstrip("/")


#: docs/architecture.md's picture, read (not copied), bottom to top: a package imports only packages of earlier
#: groups, and the packages of one group (one line of the picture) do not import each other.
PICTURE = _picture(PAGE.read_text(encoding="utf-8"))
LAYERS = [tuple(map(_drawn_part, line)) for line in reversed(PICTURE)]
RANK = {name: rank for rank, group in enumerate(LAYERS) for name in group}


def test_the_picture_is_read_line_by_line_with_the_peers_of_a_line_together():
    page = (
        "# Page\n\n## The layers\n\n```text\n top   cli/   irmetrics evaluate · beir\n       beir/ · feedback/   runs · logs\n"
        "             words that continue it\n core  core/  inputs → prepare   (numpy only)\n"
        "       haystack_irmetrics/__init__.py   evaluate\n base  _extras.py (an aside) · errors.py\n```\n"
    )
    assert _picture(page) == [("cli/",), ("beir/", "feedback/"), ("core/",), ("haystack_irmetrics/__init__.py",)]
    assert [_drawn_part(t) for t in ("beir/", "errors.py", "haystack_irmetrics/__init__.py")] == [
        "beir",
        "errors",
        "__init__",
    ]


def test_the_picture_draws_each_part_of_the_package_once_and_nothing_else():
    drawn = [token for line in PICTURE for token in line]
    assert [t for t in drawn if not _drawn_path(t).exists()] == [], "drawn on the page, not in the package"
    assert len(drawn) == len(set(drawn)), "a part drawn twice"


def _package_edges() -> set[tuple[str, str, str]]:
    """``(importing package, imported package, where)`` across the package's top-level parts."""
    out = set()
    for name in MODULES:
        own = name.split(".")[1] if name.count(".") else "__init__"
        for target, line in _imports(name):
            if target.startswith("haystack_irmetrics"):
                other = target.split(".")[1] if target.count(".") else "__init__"
                if other != own:
                    out.add((own, other, f"{name} line {line}"))
    return out


def test_every_part_of_the_package_has_its_place_in_the_layers():
    parts = {n.split(".")[1] if n.count(".") else "__init__" for n in MODULES}
    assert sorted(parts - set(RANK)) == [], "not drawn in docs/architecture.md's picture"
    assert sorted(set(RANK) - parts) == [], "drawn in the picture, no module of the package"


def test_no_import_cycle_between_the_packages():
    graph: dict[str, set[str]] = {}
    for own, other, _ in _package_edges():
        graph.setdefault(own, set()).add(other)
        graph.setdefault(other, set())
    assert _cycles(graph) == []


def test_every_package_import_goes_down_the_layers_of_the_architecture_page():
    """Down the picture only: an import of a package drawn above, or on the same line (peers), is refused."""
    edges = _package_edges()
    assert sorted({p for own, other, _ in edges for p in (own, other)} - set(RANK)) == [], "not drawn in the picture"
    up = sorted(f"{where} imports {other}" for own, other, where in edges if RANK[other] >= RANK[own])
    assert up == []


# ---- "Where a change goes" ---------------------------------------------------------------------------------

#: Folders of the project a path in the table may begin with; any other path is in the package.
PROJECT_FOLDERS = ("tests", "docs", "benchmarks", "examples", "scripts")


def _change_rows(page: str) -> list[list[str]]:
    """The rows of the table under "Where a change goes": ``[the change, where, and]``."""
    section = page.split("\n## Where a change goes\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in section.splitlines()]
    return [r for r in rows if len(r) > 1 and not set(r[0]) <= set("-")][1:]  # the header and its rule left out


def _resolve(span: str, folders: list[Path]) -> list[Path]:
    """What a path of the table names: ``tests/test_judge*.py`` and ``cli/<subcommand>.py`` are patterns, a bare
    ``loading.py`` is in a folder the row names (or at the package's top)."""
    pattern = re.sub(r"<[^>]+>", "*", span).rstrip("/")
    first = pattern.split("/")[0]
    bases = [ROOT] if first in PROJECT_FOLDERS else [PACKAGE] if "/" in pattern else [*folders, PACKAGE]
    for base in bases:
        found = sorted(base.glob(pattern)) if "*" in pattern else [base / pattern] * (base / pattern).exists()
        if found:
            return found
    return []


def _defines(path: Path, name: str) -> bool:
    """Whether the module (a folder: one of its modules) defines ``name`` at its top or in a class's body
    (``Class.member``: in that class's body)."""
    owner, _, member = name.rpartition(".")
    for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
        bodies = [("", ast.parse(file.read_text(encoding="utf-8")).body)]
        while bodies:
            cls, body = bodies.pop()
            for node in body:
                if isinstance(node, ast.ClassDef):
                    bodies.append((node.name, node.body))
                targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
                named = {getattr(node, "name", None), *(getattr(t, "id", None) for t in targets)}
                if member in named and cls == (owner or cls):
                    return True
    return False


def _change_row_problems(row: list[str]) -> list[str]:
    """What a row of the table names that is not so: a path (module, folder, test file, docs page) that does not
    exist, a name that its module (```X.py`'s `Name```, ```X.py` (`Name```) or the row's packages do not
    define, and an ``and`` cell that names no test file."""
    text = " | ".join(row)
    spans = re.findall(r"`([^`]+)`", text)
    paths = [s for s in spans if re.fullmatch(r"[\w<>*.-]+(/[\w<>*.-]+)*/?", s) and ("/" in s or s.endswith(".py"))]
    folders = []
    for span in paths:  # the folders of the package the row names, for its bare file names
        if "/" in span and span.split("/")[0] not in PROJECT_FOLDERS:
            folders += [f if f.is_dir() else f.parent for f in _resolve(span, [])]
    problems = [f"no {span}" for span in paths if not _resolve(span, folders)]
    problems += [f"no {page}" for page in re.findall(r"\bdocs/[\w-]+\.md", text) if not (ROOT / page).is_file()]
    attached = dict((name, module) for module, name in re.findall(r"`([^`]+\.py)`(?:'s| \(|:) *`([\w.]+)`", text))
    packages = {PACKAGE / f.relative_to(PACKAGE).parts[0] for f in folders} or {PACKAGE}
    for name in (s for s in spans if s not in paths and re.fullmatch(r"[A-Za-z_]\w*(\.\w+)?", s)):
        where = _resolve(attached[name], folders) if name in attached else sorted(packages)
        if not any(_defines(w, name) for w in where):
            problems.append(f"{name} is not defined in {attached.get(name) or [w.name for w in where]}")
    if not any(s.startswith("tests/") for s in re.findall(r"`([^`]+)`", row[-1])):
        problems.append("no test file in its last column")
    return problems


def test_each_row_of_where_a_change_goes_names_what_exists():
    rows = _change_rows(PAGE.read_text(encoding="utf-8"))
    assert len(rows) > 20 and all(len(r) == 3 for r in rows)
    assert {r[0]: _change_row_problems(r) for r in rows if _change_row_problems(r)} == {}


def test_the_table_checker_finds_a_missing_path_a_misplaced_name_and_no_test():
    ok = ["a measure", "an entry in `core/families.py`'s `FAMILIES`", "`tests/test_measures*.py`, docs/measures.md"]
    assert _change_row_problems(ok) == []
    loose = ["a policy", "`core/` (`Preset`), `presets.py`", "`tests/test_properties.py`"]
    assert _change_row_problems(loose) == []  # a bare file name in a folder the row names; a name in its package
    bad = ["a measure", "`core/measures.py`'s `Family` table, `kernel.py`", "docs/nowhere.md"]
    assert _change_row_problems(bad) == [
        "no kernel.py",
        "no docs/nowhere.md",
        "Family is not defined in core/measures.py",
        "no test file in its last column",
    ]
    assert _change_row_problems(["x", "`cli/<subcommand>.py` (`add_subcommand`, `run`)", "`tests/test_cli.py`"]) == []


# ---- a thin CLI and small signatures (issue 41.5, 41.6) ------------------------------------------------------

#: The longest body a function of ``cli/`` may have: the CLI parses, builds the settings, calls the package's
#: entry point and prints; the work is below it.
MAX_CLI_BODY = 60
#: Functions of ``cli/`` that only declare arguments (argparse's declarations are long, and are not work).
ARGUMENT_DECLARATIONS = {"add_subcommand"}
#: The longest body a function of the library (the package less ``cli/``) may have: an orchestrator plans, calls
#: its steps and writes what they give; each step is a function a reader holds at once (issue 50.5).
MAX_BODY = 80
#: The library's functions allowed a longer body, and why; one "pending:" is being split in another change (the
#: test then accepts it either way: remove it with that change).
LONG_FUNCTIONS: dict[str, str] = {}
#: The most parameters a function of the package takes (``self`` and ``*``-separated keywords counted, ``*args`` and
#: ``**options`` one each): more travel as one frozen settings value (``BeirSettings``, ``JudgeSettings``, ...).
MAX_PARAMETERS = 10
#: The functions allowed more, and why.
MANY_PARAMETERS = {
    "haystack_irmetrics.components.evaluators:IRMetricsEvaluator.__init__": (
        "a Haystack component's init parameters are its serialized configuration (to_dict/from_dict, pipeline "
        "YAML): they stay flat JSON keywords, one per option, so a stored pipeline names each"
    ),
    "haystack_irmetrics.components.feedback:FeedbackToGoldDocuments.__init__": (
        "a Haystack component's init parameters are its serialized configuration (to_dict/from_dict, pipeline YAML)"
    ),
    "haystack_irmetrics.components.judge:RelevanceJudge.__init__": (
        "a Haystack component's init parameters are its serialized configuration (to_dict/from_dict, pipeline YAML)"
    ),
}


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """``(qualified name, node)`` of every function of ``tree``, methods and nested functions included."""
    out = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((f"{prefix}{node.name}", node))
            out += _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            out += _functions(node, f"{prefix}{node.name}.")
        else:
            out += _functions(node, prefix)
    return out


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines of a function's body, its docstring included, from its first statement to its last line."""
    return node.end_lineno - node.body[0].lineno + 1


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    return len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)


def test_no_function_of_the_cli_has_a_body_over_60_lines():
    long = [
        f"{name}:{qualified} {_body_lines(node)} lines"
        for name, path in MODULES.items()
        if name == "haystack_irmetrics.cli" or name.startswith("haystack_irmetrics.cli.")
        for qualified, node in _functions(ast.parse(path.read_text(encoding="utf-8")))
        if qualified.rpartition(".")[2] not in ARGUMENT_DECLARATIONS and _body_lines(node) > MAX_CLI_BODY
    ]
    assert long == []


def test_no_function_of_the_library_has_a_body_over_80_lines():
    long = {
        f"{name}:{qualified}": _body_lines(node)
        for name, path in MODULES.items()
        if name != "haystack_irmetrics.cli" and not name.startswith("haystack_irmetrics.cli.")
        for qualified, node in _functions(ast.parse(path.read_text(encoding="utf-8")))
        if _body_lines(node) > MAX_BODY
    }
    assert {f: n for f, n in long.items() if f not in LONG_FUNCTIONS} == {}
    stale = [f for f, why in LONG_FUNCTIONS.items() if f not in long and not why.startswith("pending:")]
    assert stale == [], "an exception no longer needed: remove it from the list"


def test_no_function_of_the_package_takes_more_than_10_parameters():
    many = {
        f"{name}:{qualified}": _parameters(node)
        for name, path in MODULES.items()
        for qualified, node in _functions(ast.parse(path.read_text(encoding="utf-8")))
        if _parameters(node) > MAX_PARAMETERS
    }
    assert sorted(set(many) - set(MANY_PARAMETERS)) == []
    assert sorted(set(MANY_PARAMETERS) - set(many)) == [], "an exception no longer needed: remove it from the list"


def test_the_measures_of_functions_count_what_they_say():
    tree = ast.parse(
        "class C:\n"
        "    def m(self, a, /, b, *args, c, **kw):\n"
        "        '''doc'''\n"
        "        def inner(x):\n"
        "            return x\n"
        "        return inner\n"
    )
    found = dict(_functions(tree))
    assert sorted(found) == ["C.m", "C.m.inner"]
    assert _parameters(found["C.m"]) == 6 and _parameters(found["C.m.inner"]) == 1
    assert _body_lines(found["C.m"]) == 4 and _body_lines(found["C.m.inner"]) == 1


#: Imports of one ``cli`` module by another besides ``args`` and ``app``, and why each is still there.
CLI_IMPORTS_PENDING: dict[tuple[str, str], str] = {}


def test_a_cli_module_imports_no_other_cli_module_but_args_and_app():
    """Each subcommand's module stands alone: what two commands share is in ``cli/args.py`` (argument types and
    declarations) or in the package below; ``app.py`` gathers the subcommands."""
    shared = {"haystack_irmetrics.cli", "haystack_irmetrics.cli.args", "haystack_irmetrics.cli.app"}
    found = set()
    for name in MODULES:
        if not name.startswith("haystack_irmetrics.cli.") or name in shared:
            continue
        for target, _ in _imports(name):
            if target.startswith("haystack_irmetrics.cli.") and target not in shared and target != name:
                found.add((name, target))
    assert sorted(found - set(CLI_IMPORTS_PENDING)) == []
    assert sorted(set(CLI_IMPORTS_PENDING) - found) == [], "an import no longer there: remove it from the list"


def test_a_lazy_package_gives_every_name_it_lists_and_no_name_is_a_submodule_shadowing_it():
    """``_lazy.lazy_names``: each name of a lazy package's ``_HOMES`` reads as the object its module defines,
    after any of its submodules is imported; a name that is also a submodule's would then read as the module."""
    import importlib
    import pkgutil

    for package in ("integration", "fusion", "pooling", "clicks"):
        module = importlib.import_module(f"haystack_irmetrics.{package}")
        submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
        assert not set(module._HOMES) & submodules, package
        for info in sorted(submodules):
            importlib.import_module(f"haystack_irmetrics.{package}.{info}")
        for name, home in module._HOMES.items():
            assert getattr(module, name) is getattr(importlib.import_module(home, module.__name__), name), name
        assert set(module.__all__) <= set(dir(module)), package
        with pytest.raises(AttributeError):
            module.no_such_name  # noqa: B018
