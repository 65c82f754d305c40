"""Every package's ``__init__`` docstring is the map of the package: it names each of its modules and
subpackages as ``:mod:`.name``` (with what it does), and names none that is not there, so the map a reader opens
first cannot drift from the files (issue 50.6: judges/ named a reader that was gone and left six modules out)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "haystack_irmetrics"
PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)


def _dotted(package: Path) -> str:
    return ".".join(package.relative_to(PACKAGE.parent).parts)


def _parts(package: Path) -> list[str]:
    """The package's modules and subpackages, by name (``__main__`` too; not ``__init__``)."""
    modules = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    return sorted(modules + [p.parent.name for p in package.glob("*/__init__.py")])


def _references(docstring: str, dotted: str) -> set[str]:
    """The names of the package's own parts its docstring refers to: ``:mod:`.name```, ``:mod:`~.name``` or
    ``:mod:`haystack_irmetrics.pkg.name``` (a deeper path, ``.stores.common``, names its first part)."""
    found = set()
    for target in re.findall(r":mod:`~?([\w.]+)`", docstring):
        if target.startswith(f"{dotted}."):
            target = target[len(dotted) :]
        if target.startswith(".") and not target.startswith(".."):
            found.add(target[1:].split(".")[0])
    return found


def _docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""


def unnamed(docstring: str, parts: list[str], dotted: str) -> list[str]:
    """The parts the docstring does not name."""
    return [part for part in parts if part not in _references(docstring, dotted)]


def stale(docstring: str, parts: list[str], dotted: str) -> list[str]:
    """What the docstring names as a part of the package that is not one."""
    return sorted(_references(docstring, dotted) - set(parts))


@pytest.mark.parametrize("package", PACKAGES, ids=_dotted)
def test_a_packages_docstring_names_each_of_its_modules_and_subpackages(package):
    missing = unnamed(_docstring(package), _parts(package), _dotted(package))
    where = (package / "__init__.py").relative_to(PACKAGE.parent)
    assert missing == [], f"add a line '- :mod:`.name`: what it does' for each to the docstring of {where}"


@pytest.mark.parametrize("package", PACKAGES, ids=_dotted)
def test_a_packages_docstring_names_no_module_it_does_not_have(package):
    gone = stale(_docstring(package), _parts(package), _dotted(package))
    assert gone == [], f"the docstring of {_dotted(package)} names modules it does not have"


def test_the_checker_reads_each_way_of_naming_a_part_and_nothing_else():
    docstring = (
        "- :mod:`.store`: the store; :mod:`~.page` the page;\n"
        "- :mod:`haystack_irmetrics.assess.server` and :mod:`.stores.common` (a subpackage's module);\n"
        "- the session (session.py, ``session``, :mod:`haystack_irmetrics.judges.export`, :mod:`..export`);\n"
        "- :mod:`.format`: gone.\n"
    )
    parts = ["export", "page", "server", "session", "store", "stores"]
    assert unnamed(docstring, parts, "haystack_irmetrics.assess") == ["export", "session"]
    assert stale(docstring, parts, "haystack_irmetrics.assess") == ["format"]
    assert _parts(PACKAGE / "cli")[0] == "__main__"
    assert "stores" in _parts(PACKAGE / "integration") and "__init__" not in _parts(PACKAGE / "integration")
