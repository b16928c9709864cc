"""Lint rule: private modules stay in the library, private names in their module.

The convention of scikit-learn (CONTRIBUTING, "Private modules"): a module with a ``_``-prefixed
part in its dotted path is private to the *library*, so any ``judgerisk`` module may import it;
a name starting with ``_`` belongs to its *module*, and no other module imports it (shared
checks live in public functions instead). Code outside the package sees the public face only:
the chapters' code cells and the recipes (``recipes/``, the scripts that made the shipped data)
import public modules and the book's own folder ``judgerisk._book``. The tests and the
benchmarks are white-box: they may import private modules (what they test or time), and a test
file ``tests/test_x.py`` may import the private names of the module ``x`` (or ``_x``) it tests.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PY_FILES = sorted(
    p
    for d in ("judgerisk", "benchmarks", "tests", "recipes")
    for p in (ROOT / d).rglob("*.py")
    if "__pycache__" not in p.parts
)
CHAPTERS = sorted((ROOT / "notebooks").glob("*.md"))
_CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
#: A code cell's YAML option block (``---`` ... ``---`` at its top: figure captions, tags).
_OPTIONS = re.compile(r"\A---\n.*?\n---\n", re.S)


#: Who may import the library's private modules: the package itself, and the white-box tests
#: and benchmarks.
WHITE_BOX = ("judgerisk", "tests", "benchmarks")
#: Who may import the book's private folder ``judgerisk._book`` besides them: the chapters
#: (``notebooks``) and the recipes.
BOOK_SIDE = ("notebooks", "recipes")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _private_parts(dotted: str) -> list[int]:
    return [i for i, part in enumerate(dotted.split(".")) if part.startswith("_")]


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _inside(importer: str, homes: tuple[str, ...]) -> bool:
    return any(importer == home or importer.startswith(home + ".") for home in homes)


def violations(source: str, importer: str) -> list[str]:
    """Private names imported from another module, or private modules from outside the library."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods = [node.module]
            if node.module.startswith("judgerisk"):
                tested = node.module.rsplit(".", 1)[-1].lstrip("_")
                for alias in node.names:
                    if _is_module(f"{node.module}.{alias.name}"):
                        mods.append(f"{node.module}.{alias.name}")  # a submodule, not a name
                    elif (
                        alias.name.startswith("_")
                        and not alias.name.startswith("__")
                        and importer != f"tests.test_{tested}"
                    ):
                        out.append(f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            mods = [alias.name for alias in node.names]
        else:
            continue
        for mod in mods:
            if not mod.startswith("judgerisk.") or _inside(importer, WHITE_BOX):
                continue
            if mod.startswith("judgerisk._book") and _inside(importer, BOOK_SIDE):
                continue  # the book's own code serves the chapters and the recipes
            if any(part.startswith("_") for part in mod.split(".")):
                out.append(f"import of private module {mod}")
    return out


@pytest.mark.parametrize("path", PY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_import_across_modules(path):
    found = violations(path.read_text(encoding="utf-8"), _module_of(path))
    assert not found, f"{path.relative_to(ROOT)}: {found}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapters_use_public_names(path):
    cells = _CODE_CELL.findall(path.read_text(encoding="utf-8"))
    code = "\n".join(_OPTIONS.sub("", cell) for cell in cells)
    keep = [ln for ln in code.splitlines() if not re.match(r"\s*[%!]|:\w+:", ln)]
    code = "\n".join(keep)
    found = violations(code, "notebooks")
    assert not found, f"{path.name}: {found}"


def test_contributing_recipes_use_public_modules():
    """CONTRIBUTING's recipes are written as a plug-in would be: outside the package."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    assert "judgerisk" in code
    assert violations(code, "my_plugin") == []


def test_rule_catches_a_violation():
    name = "from judgerisk.selective.scope import _check_alpha\n"
    module = "import judgerisk.datasets._paths\n"
    assert violations(name, "judgerisk.engine.analysis") == [
        "from judgerisk.selective.scope import _check_alpha"
    ]
    # a private module is private to the library, not to its folder
    assert violations(module, "judgerisk.engine.analysis") == []
    assert violations(module, "benchmarks.lmm_fit") == violations(module, "tests.test_x") == []
    for outside in ("notebooks", "recipes.smollm2_llmbar", "my_plugin"):
        assert violations(module, outside) == ["import of private module judgerisk.datasets._paths"]
    submodule = "from judgerisk.cli import _score\n"
    assert violations(submodule, "tests.test_cli_edges") == []
    assert violations(submodule, "notebooks") == ["import of private module judgerisk.cli._score"]
    # a test file may import the private names of the module it tests, and only those
    solver = "from judgerisk.risk._lmm_solver import _newton\n"
    assert violations(solver, "tests.test_lmm_solver") == []
    assert violations(solver, "tests.test_lmm") == [
        "from judgerisk.risk._lmm_solver import _newton"
    ]
    book = "from judgerisk._book.studies.paired import verdict\n"
    assert violations(book, "notebooks") == violations(book, "judgerisk.cli._run") == []
    assert violations(book, "recipes.smollm2_llmbar") == []
    assert violations(book, "my_plugin") == [
        "import of private module judgerisk._book.studies.paired"
    ]
