"""Lint rule: no private name is imported across modules (run by ``make test`` with pytest).

A name starting with ``_`` belongs to its module; a module whose name starts with ``_`` belongs
to its package. Shared checks live in :mod:`judgerisk.validation`'s public functions instead.
The rule covers the package, the benchmarks, the tests and the chapters' code cells; a test file
``tests/test_x.py`` may import private names of the module ``x`` it tests, and the tests may
import the package's private helpers ``judgerisk._util`` (white-box tests); the chapters, the
tests and the benchmarks may import the book's own code, ``judgerisk._book``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PY_FILES = sorted(
    p
    for d in ("judgerisk", "benchmarks", "tests")
    for p in (ROOT / d).rglob("*.py")
    if "__pycache__" not in p.parts
)
CHAPTERS = sorted((ROOT / "notebooks").glob("*.md"))
_CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
#: A code cell's YAML option block (``---`` ... ``---`` at its top: figure captions, tags).
_OPTIONS = re.compile(r"\A---\n.*?\n---\n", re.S)


#: Who may import the book's private folder ``judgerisk._book`` from outside the package: the
#: chapters (``notebooks``), the tests and the benchmarks.
BOOK_SIDE = ("notebooks", "tests.", "benchmarks.")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _private_parts(dotted: str) -> list[int]:
    return [i for i, part in enumerate(dotted.split(".")) if part.startswith("_")]


def violations(source: str, importer: str) -> list[str]:
    """Private names or private modules of ``judgerisk`` imported from outside their home."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods = [node.module]
            if node.module.startswith("judgerisk"):
                for alias in node.names:
                    tested = importer.startswith("tests.test_") and (
                        node.module.rsplit(".", 1)[-1] == importer.removeprefix("tests.test_")
                    )
                    if (
                        alias.name.startswith("_")
                        and not alias.name.startswith("__")
                        and not tested
                    ):
                        out.append(f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            mods = [alias.name for alias in node.names]
        else:
            continue
        for mod in mods:
            if not mod.startswith("judgerisk"):
                continue
            if importer.startswith("tests.") and mod.startswith("judgerisk._util"):
                continue  # white-box tests of the private helpers
            if importer.startswith(BOOK_SIDE) and mod.startswith("judgerisk._book"):
                continue  # the book's own code serves the chapters, their tests and benchmarks
            for i in _private_parts(mod):
                if i == 0 or mod.split(".")[i].startswith("__"):
                    continue
                home = ".".join(mod.split(".")[:i])  # the package the private module belongs to
                if not (importer == home or importer.startswith(home + ".")):
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


def test_rule_catches_a_violation():
    src = "from judgerisk.selective.scope import _check_alpha\nimport judgerisk.datasets._paths\n"
    assert len(violations(src, "judgerisk.engine.analysis")) == 2
    assert (
        violations("from judgerisk.datasets._paths import data_dir", "judgerisk.datasets.x") == []
    )
    book = "from judgerisk._book.studies.paired import verdict\n"
    assert violations(book, "notebooks") == violations(book, "judgerisk.cli.run") == []
    assert violations(book, "recipes.smollm2_llmbar") == [
        "import of private module judgerisk._book.studies.paired"
    ]
